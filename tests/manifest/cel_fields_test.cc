#include "manifest/cel_fields.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::manifest {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// "kind name path@line:column=expression" per field.
std::vector<std::string> Fields(absl::string_view text) {
  std::vector<std::string> out;
  for (const CelObject& o : ReadCelFields(text).objects) {
    for (const CelField& f : o.fields) {
      out.push_back(absl::StrCat(o.kind, " ", o.name, " ", f.path, "@", f.line,
                                 ":", f.column, f.lines_map ? "" : "~", "=",
                                 f.expression));
    }
  }
  return out;
}

TEST(CelFieldsTest, ValidatingAdmissionPolicyFields) {
  EXPECT_THAT(
      Fields(R"(apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConditions:
  - name: m
    expression: "a"
  variables:
  - name: v
    expression: b
  validations:
  - expression: 'c'
    messageExpression: d
    message: not CEL
  auditAnnotations:
  - key: k
    valueExpression: e
)"),
      ElementsAre(
          "ValidatingAdmissionPolicy p "
          "spec.matchConditions[0].expression@7:18=a",
          "ValidatingAdmissionPolicy p spec.variables[0].expression@10:17=b",
          "ValidatingAdmissionPolicy p spec.validations[0].expression@12:18=c",
          "ValidatingAdmissionPolicy p "
          "spec.validations[0].messageExpression@13:24=d",
          "ValidatingAdmissionPolicy p "
          "spec.auditAnnotations[0].valueExpression@17:22=e"));
}

TEST(CelFieldsTest, KindComesAfterSpecAndBlockScalars) {
  EXPECT_THAT(Fields(R"(spec:
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: |
        Object{spec: Object.spec{x: 1}}
  - jsonPatch:
      expression: >
        [JSONPatch{op: "add"}]
metadata: {name: m}
kind: MutatingAdmissionPolicy
apiVersion: admissionregistration.k8s.io/v1beta1
)"),
              ElementsAre("MutatingAdmissionPolicy m "
                          "spec.mutations[0].applyConfiguration.expression@6:0="
                          "Object{spec: Object.spec{x: 1}}\n",
                          "MutatingAdmissionPolicy m "
                          "spec.mutations[1].jsonPatch.expression@9:0="
                          "[JSONPatch{op: \"add\"}]\n"));
}

TEST(CelFieldsTest, WebhookMatchConditionsAndListItems) {
  EXPECT_THAT(Fields(R"(apiVersion: v1
kind: List
items:
- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingWebhookConfiguration
  metadata: {name: w}
  webhooks:
  - name: a.example.io
    matchConditions:
    - name: c
      expression: "x"
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: cm}
  data:
    expression: not CEL
)"),
              ElementsAre("ValidatingWebhookConfiguration w "
                          "webhooks[0].matchConditions[0].expression@11:20=x"));
}

TEST(CelFieldsTest, CrdRulesAtAnyDepthOfEveryVersion) {
  EXPECT_THAT(
      Fields(R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ws.example.io}
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        x-kubernetes-validations:
        - {rule: "r0", messageExpression: "m0"}
        properties:
          a:
            items:
              x-kubernetes-validations:
              - rule: r1
  - name: v2
    schema:
      openAPIV3Schema:
        properties:
          rule: {type: string}
)"),
      ElementsAre(
          "CustomResourceDefinition ws.example.io "
          "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0]."
          "rule@10:19=r0",
          "CustomResourceDefinition ws.example.io "
          "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0]."
          "messageExpression@10:44=m0",
          "CustomResourceDefinition ws.example.io "
          "spec.versions[0].schema.openAPIV3Schema.properties.a.items."
          "x-kubernetes-validations[0].rule@15:23=r1"));
}

TEST(CelFieldsTest, OtherKindsAndBadInputHaveNone) {
  EXPECT_THAT(Fields("kind: ConfigMap\ndata: {expression: x, rule: y}\n"),
              IsEmpty());
  EXPECT_THAT(Fields("[[[[ not yaml"), IsEmpty());
  EXPECT_THAT(Fields(""), IsEmpty());
  EXPECT_THAT(Fields(std::string(5000, '[')), IsEmpty());
}

// A surrogate pair in a JSON manifest (encoding/json reads it; libyaml would
// refuse the document) keeps the expression and the columns after it.
TEST(CelFieldsTest, JsonSurrogatePairsKeepTheExpressionAndItsColumn) {
  const CelFields fields = ReadCelFields(
      "{\"apiVersion\": \"admissionregistration.k8s.io/v1\",\n"
      " \"kind\": \"ValidatingAdmissionPolicy\",\n"
      " \"metadata\": {\"name\": \"\\ud83d\\ude00\"},\n"
      " \"spec\": {\"validations\": [{\"message\": \"\\ud83d\\ude00\", "
      "\"expression\": \"object.x == '\\ud83d\\ude00'\"}]}}\n");
  ASSERT_THAT(fields.objects, SizeIs(1));
  EXPECT_EQ(fields.objects[0].name, "\xF0\x9F\x98\x80");
  ASSERT_THAT(fields.objects[0].fields, SizeIs(1));
  const CelField& field = fields.objects[0].fields[0];
  EXPECT_EQ(field.expression, "object.x == '\xF0\x9F\x98\x80'");
  EXPECT_EQ(field.line, 4);
  // The expression's first character, 1-based, right after the opening quote
  // that ends this prefix of its line (as the source has it, escapes and all).
  const std::string line4 =
      " \"spec\": {\"validations\": [{\"message\": \"\\ud83d\\ude00\", "
      "\"expression\": \"";
  EXPECT_EQ(field.column, static_cast<int>(line4.size()) + 1);
}

}  // namespace
}  // namespace compatd::manifest
