// manifest::ReadManifests: documents, lists, CRD fields, JSON, and bad input
// with its line, the rest still read.

#include "manifest/manifest_reader.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::manifest {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::SizeIs;

auto Object(const std::string& api_version, const std::string& kind, int line) {
  return AllOf(Field(&ManifestObject::api_version, api_version),
               Field(&ManifestObject::kind, kind),
               Field(&ManifestObject::line, line));
}

auto Problem(int line, const std::string& message) {
  return AllOf(Field(&ManifestProblem::line, line),
               Field(&ManifestProblem::message, HasSubstr(message)));
}

TEST(ManifestReaderTest, DocumentsWithMetadataAndLines) {
  const ManifestContents c = ReadManifests(
      "# Source: chart/templates/deployment.yaml\n"
      "apiVersion: extensions/v1beta1\n"
      "kind: Deployment\n"
      "metadata:\n"
      "  name: web\n"
      "  namespace: shop\n"
      "  labels: {app: web}\n"
      "spec:\n"
      "  template:\n"
      "    spec:\n"
      "      containers: [{name: web, image: nginx}]\n"
      "---\n"
      "kind: Service\n"
      "metadata: {name: web}\n"
      "apiVersion: v1\n");
  EXPECT_THAT(c.problems, IsEmpty());
  EXPECT_EQ(c.documents, 2);
  ASSERT_THAT(c.objects,
              ElementsAre(Object("extensions/v1beta1", "Deployment", 2),
                          Object("v1", "Service", 13)));
  EXPECT_EQ(c.objects[0].name, "web");
  EXPECT_EQ(c.objects[0].namespace_, "shop");
  EXPECT_EQ(c.objects[1].name, "web");
  EXPECT_EQ(c.objects[1].namespace_, "");
  EXPECT_FALSE(c.objects[0].crd.has_value());
}

TEST(ManifestReaderTest, EmptyDocumentsAreSkippedSilently) {
  // What `helm template` prints for a template that rendered nothing.
  const ManifestContents c = ReadManifests(
      "---\n# Source: chart/templates/empty.yaml\n---\n---\n"
      "apiVersion: v1\nkind: ConfigMap\n...\n");
  EXPECT_THAT(c.problems, IsEmpty());
  EXPECT_THAT(c.objects, ElementsAre(Object("v1", "ConfigMap", 5)));
}

TEST(ManifestReaderTest, ListItemsAreObjectsNestedListsToo) {
  const ManifestContents c = ReadManifests(
      "apiVersion: v1\n"
      "kind: List\n"
      "items:\n"
      "- apiVersion: batch/v1beta1\n"
      "  kind: CronJob\n"
      "  metadata: {name: nightly}\n"
      "- apiVersion: v1\n"
      "  kind: DeploymentList\n"
      "  items:\n"
      "  - {apiVersion: apps/v1, kind: Deployment, metadata: {name: a}}\n"
      "- 42\n");
  ASSERT_THAT(c.objects, ElementsAre(Object("batch/v1beta1", "CronJob", 4),
                                     Object("apps/v1", "Deployment", 10)));
  EXPECT_EQ(c.objects[0].name, "nightly");
  EXPECT_THAT(c.problems, ElementsAre(Problem(11, "a list item is a scalar")));
}

TEST(ManifestReaderTest, ItemsBeforeKindStillMakeAList) {
  const ManifestContents c = ReadManifests(
      R"({"items": [{"kind": "Pod", "apiVersion": "v1"}], "kind": "List",
          "apiVersion": "v1"})");
  EXPECT_THAT(c.objects, ElementsAre(Object("v1", "Pod", 1)));
}

TEST(ManifestReaderTest, JsonAsKubectlPrintsIt) {
  const ManifestContents c = ReadManifests(
      "{\n"
      "    \"apiVersion\": \"policy/v1beta1\",\n"
      "    \"kind\": \"PodSecurityPolicy\",\n"
      "    \"metadata\": {\n"
      "        \"name\": \"restricted\"\n"
      "    },\n"
      "    \"spec\": {\"privileged\": false}\n"
      "}\n");
  EXPECT_THAT(c.problems, IsEmpty());
  ASSERT_THAT(c.objects,
              ElementsAre(Object("policy/v1beta1", "PodSecurityPolicy", 1)));
  EXPECT_EQ(c.objects[0].name, "restricted");
}

TEST(ManifestReaderTest, CustomResourceDefinitionVersions) {
  const ManifestContents c = ReadManifests(
      "apiVersion: apiextensions.k8s.io/v1\n"
      "kind: CustomResourceDefinition\n"
      "metadata: {name: clusters.cluster.x-k8s.io}\n"
      "spec:\n"
      "  group: cluster.x-k8s.io\n"
      "  names: {kind: Cluster, plural: clusters}\n"
      "  versions:\n"
      "  - name: v1beta1\n"
      "    served: false\n"
      "    storage: false\n"
      "    deprecated: true\n"
      "    schema: {openAPIV3Schema: {type: object}}\n"
      "  - {name: v1beta2, served: true, storage: true}\n"
      "status:\n"
      "  storedVersions: [v1beta1, v1beta2]\n");
  ASSERT_THAT(c.objects, SizeIs(1));
  ASSERT_TRUE(c.objects[0].crd.has_value());
  const CrdSpec& crd = *c.objects[0].crd;
  EXPECT_EQ(crd.group, "cluster.x-k8s.io");
  EXPECT_EQ(crd.kind, "Cluster");
  EXPECT_EQ(crd.plural, "clusters");
  ASSERT_THAT(crd.versions, SizeIs(2));
  EXPECT_EQ(crd.versions[0].name, "v1beta1");
  EXPECT_FALSE(crd.versions[0].served);
  EXPECT_TRUE(crd.versions[0].deprecated);
  EXPECT_TRUE(crd.versions[1].served);
  EXPECT_TRUE(crd.versions[1].storage);
  EXPECT_THAT(crd.stored_versions, ElementsAre("v1beta1", "v1beta2"));
}

TEST(ManifestReaderTest, LegacyCrdSingleVersion) {
  const ManifestContents c = ReadManifests(
      "apiVersion: apiextensions.k8s.io/v1beta1\n"
      "kind: CustomResourceDefinition\n"
      "metadata: {name: crontabs.stable.example.com}\n"
      "spec: {group: stable.example.com, version: v1, names: {kind: "
      "CronTab}}\n");
  ASSERT_THAT(c.objects, SizeIs(1));
  ASSERT_TRUE(c.objects[0].crd.has_value());
  ASSERT_THAT(c.objects[0].crd->versions, SizeIs(1));
  EXPECT_EQ(c.objects[0].crd->versions[0].name, "v1");
  EXPECT_TRUE(c.objects[0].crd->versions[0].storage);
}

// A document without a kind is not a Kubernetes object (a Helm values.yaml
// or Chart.yaml, a CI workflow): not a problem, but listed apart for the scan
// to skip and count (issue 35). A kind without an apiVersion is a problem.
TEST(ManifestReaderTest, ObjectsWithoutApiVersionOrKindAreProblems) {
  const ManifestContents c = ReadManifests(
      "kind: Deployment\nmetadata: {name: a}\n"
      "---\n"
      "apiVersion: v1\n"
      "---\n"
      "metadata: {name: c}\n"
      "---\n"
      "- just\n- a list\n"
      "---\n"
      "apiVersion: {group: apps}\nkind: Deployment\n"
      "---\n"
      "apiVersion: v1\nkind: ConfigMap\n");
  EXPECT_THAT(c.objects, ElementsAre(Object("v1", "ConfigMap", 14)));
  EXPECT_THAT(c.problems,
              ElementsAre(Problem(1, "(kind Deployment) has no apiVersion"),
                          Problem(8, "the document is a sequence"),
                          Problem(11, "apiVersion is a mapping"),
                          Problem(11, "has no apiVersion")));
  EXPECT_THAT(c.not_objects,
              ElementsAre(Problem(4, "(apiVersion v1) has no kind"),
                          Problem(6, "has neither apiVersion nor kind")));
}

TEST(ManifestReaderTest, RbacRulesOfRolesAreRead) {
  const ManifestContents c = ReadManifests(
      "apiVersion: rbac.authorization.k8s.io/v1\n"
      "kind: ClusterRole\n"
      "metadata: {name: r}\n"
      "rules:\n"
      "  - apiGroups: [\"\", extensions]\n"
      "    resources: [pods, ingresses/status]\n"
      "    verbs: [get]\n"
      "  - nonResourceURLs: [/healthz]\n"
      "---\n"
      "apiVersion: v1\nkind: ConfigMap\nrules: [{apiGroups: [x]}]\n");
  ASSERT_EQ(c.objects.size(), 2u);
  ASSERT_EQ(c.objects[0].rules.size(), 2u);
  EXPECT_THAT(c.objects[0].rules[0].api_groups, ElementsAre("", "extensions"));
  EXPECT_THAT(c.objects[0].rules[0].resources,
              ElementsAre("pods", "ingresses/status"));
  EXPECT_EQ(c.objects[0].rules[0].line, 5);
  EXPECT_TRUE(c.objects[0].rules[1].resources.empty());
  // Only roles keep their rules.
  EXPECT_TRUE(c.objects[1].rules.empty());
}

TEST(ManifestReaderTest, ASyntaxErrorCostsOnlyItsDocument) {
  const ManifestContents c = ReadManifests(
      "apiVersion: v1\nkind: ConfigMap\n"
      "---\n"
      "apiVersion: apps/v1\n"
      "kind: Deployment\n"
      "metadata: {name: [broken\n"
      "---\n"
      "apiVersion: v1\n"
      "kind: Secret\n"
      "---\n"
      "\tnot: yaml: at all\n"
      "---\n"
      "apiVersion: v1\nkind: Service\n");
  EXPECT_THAT(c.objects, ElementsAre(Object("v1", "ConfigMap", 1),
                                     Object("v1", "Secret", 8),
                                     Object("v1", "Service", 13)));
  ASSERT_THAT(c.problems, SizeIs(2));
  EXPECT_THAT(c.problems[0].message, HasSubstr("not YAML"));
  EXPECT_GE(c.problems[0].line, 6);
  EXPECT_LE(c.problems[0].line, 7);
  EXPECT_THAT(c.problems[1], Problem(11, "not YAML"));
}

TEST(ManifestReaderTest, NotYamlAtAll) {
  const ManifestContents c = ReadManifests("\x89PNG\r\n\x1a\n\xff\xfe");
  EXPECT_THAT(c.objects, IsEmpty());
  ASSERT_THAT(c.problems, SizeIs(1));
  EXPECT_THAT(c.problems[0].message, HasSubstr("not YAML"));
}

TEST(ManifestReaderTest, DeepNestingIsSkippedUpToTheBound) {
  std::string deep = "apiVersion: v1\nkind: ConfigMap\ndata: ";
  deep += std::string(kMaxYamlDepth - 1, '[') +
          std::string(kMaxYamlDepth - 1, ']') + "\n";
  const ManifestContents c = ReadManifests(deep);
  EXPECT_THAT(c.problems, IsEmpty());
  EXPECT_THAT(c.objects, ElementsAre(Object("v1", "ConfigMap", 1)));
}

TEST(ManifestReaderTest, NestingPastTheBoundCostsOnlyItsDocument) {
  // A million levels: libyaml's cost grows with the square of the depth, so
  // reading all of it would take hours; the reader stops at the bound.
  std::string text = "apiVersion: v1\nkind: ConfigMap\ndata: ";
  text += std::string(1000000, '[') + std::string(1000000, ']') + "\n";
  text += "---\napiVersion: v1\nkind: Secret\n";
  const ManifestContents c = ReadManifests(text);
  EXPECT_THAT(c.objects, ElementsAre(Object("v1", "Secret", 5)));
  EXPECT_THAT(c.problems,
              ElementsAre(Problem(3,
                                  "nests more than 1000 sequences and "
                                  "mappings")));
}

TEST(ManifestReaderTest, ListsNestedTooDeepAreProblems) {
  std::string text;
  for (int i = 0; i <= kMaxListNesting; ++i) {
    text += std::string(static_cast<size_t>(2 * i), ' ') +
            "- apiVersion: v1\n" +
            std::string(static_cast<size_t>(2 * i), ' ') + "  kind: List\n" +
            std::string(static_cast<size_t>(2 * i), ' ') + "  items:\n";
  }
  text = "apiVersion: v1\nkind: List\nitems:\n" + text;
  const ManifestContents c = ReadManifests(text);
  EXPECT_THAT(c.objects, IsEmpty());
  ASSERT_THAT(c.problems, SizeIs(1));
  EXPECT_THAT(c.problems[0].message, HasSubstr("nested more than 8 deep"));
}

// kubectl reads manifests with sigs.k8s.io/yaml, that is go-yaml v2: an alias
// is its anchor's node again; a merge key applies its mapping in document
// order (a later key wins over a merged one, a merged one over an earlier
// key), the first mapping of a list winning over the ones after it.
TEST(ManifestReaderTest, AliasesAreResolved) {
  const ManifestContents c = ReadManifests(
      "apiVersion: &v batch/v1beta1\n"
      "kind: CronJob\n"
      "metadata: {name: a}\n"
      "---\n"
      "x-versions: {old: &old extensions/v1beta1}\n"
      "apiVersion: *old\n"
      "kind: &k Ingress\n"
      "metadata: &m {name: b, namespace: shop}\n"
      "spec: {}\n"
      "---\n"
      "apiVersion: v1\n"
      "kind: List\n"
      "items:\n"
      "- &pod {apiVersion: v1, kind: Pod, metadata: {name: p}}\n"
      "- *pod\n");
  EXPECT_THAT(c.problems, IsEmpty());
  EXPECT_THAT(c.objects,
              ElementsAre(Object("batch/v1beta1", "CronJob", 1),
                          Object("extensions/v1beta1", "Ingress", 5),
                          Object("v1", "Pod", 14), Object("v1", "Pod", 15)));
  EXPECT_EQ(c.objects[1].name, "b");
  EXPECT_EQ(c.objects[1].namespace_, "shop");
}

TEST(ManifestReaderTest, MergeKeysAreResolvedAsGoYamlV2Does) {
  const ManifestContents c = ReadManifests(
      "base: &base\n"
      "  apiVersion: policy/v1beta1\n"
      "  kind: PodDisruptionBudget\n"
      "<<: *base\n"
      "metadata: {name: a}\n"
      "---\n"
      "a: &a {apiVersion: apps/v1beta1, kind: Deployment}\n"
      "b: &b {apiVersion: apps/v1, kind: StatefulSet}\n"
      "<<: [*a, *b]\n"
      "metadata: {name: first-wins}\n"
      "---\n"
      "x: &x {apiVersion: apps/v1beta2}\n"
      "apiVersion: apps/v1\n"
      "<<: *x\n"
      "kind: DaemonSet\n"
      "metadata: {name: merge-after-key}\n"
      "---\n"
      "y: &y {apiVersion: apps/v1beta2, kind: ReplicaSet}\n"
      "<<: *y\n"
      "apiVersion: apps/v1\n"
      "metadata: {name: key-after-merge}\n"
      "---\n"
      "<<: {apiVersion: batch/v2alpha1, kind: CronJob}\n"
      "metadata: {name: inline}\n");
  EXPECT_THAT(c.problems, IsEmpty());
  EXPECT_THAT(c.warnings, IsEmpty());
  EXPECT_THAT(c.objects,
              ElementsAre(Object("policy/v1beta1", "PodDisruptionBudget", 1),
                          Object("apps/v1beta1", "Deployment", 7),
                          Object("apps/v1beta2", "DaemonSet", 12),
                          Object("apps/v1", "ReplicaSet", 18),
                          Object("batch/v2alpha1", "CronJob", 23)));
}

TEST(ManifestReaderTest, UnresolvableAliasesAreProblemsOfTheirDocument) {
  const ManifestContents c = ReadManifests(
      "apiVersion: *nowhere\n"
      "kind: Pod\n"
      "---\n"
      "<<: 3\n"
      "apiVersion: v1\n"
      "kind: Pod\n"
      "---\n"
      "apiVersion: v1\n"
      "kind: ConfigMap\n");
  EXPECT_THAT(c.problems,
              ElementsAre(Problem(1, "alias *nowhere names no anchor"),
                          Problem(4, "the merge key << takes a mapping")));
  EXPECT_THAT(c.objects, ElementsAre(Object("v1", "ConfigMap", 8)));
}

TEST(ManifestReaderTest, AliasExpansionIsBounded) {
  // A "billion laughs": each level holds ten aliases of the one before.
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    absl::StrAppend(&text, "a", i, ": &a", i, " [");
    for (int j = 0; j < 10; ++j) {
      absl::StrAppend(&text, j == 0 ? "" : ", ", "*a", i - 1);
    }
    absl::StrAppend(&text, "]\n");
  }
  absl::StrAppend(&text, "apiVersion: v1\nkind: Pod\n---\napiVersion: v1\n",
                  "kind: Secret\n");
  const ManifestContents c = ReadManifests(text);
  // a4's tenth of a million nodes is where the bound is passed.
  EXPECT_THAT(c.problems,
              ElementsAre(Problem(5, "expand this document to more than")));
  EXPECT_THAT(c.objects, ElementsAre(Object("v1", "Secret", 14)));
}

TEST(ManifestReaderTest, RepeatedKeyIsAWarningAndTheLastCounts) {
  const ManifestContents c = ReadManifests(
      "apiVersion: extensions/v1beta1\n"
      "kind: Ingress\n"
      "apiVersion: networking.k8s.io/v1\n"
      "metadata:\n"
      "  name: a\n"
      "  name: b\n");
  EXPECT_THAT(c.problems, IsEmpty());
  EXPECT_THAT(c.objects,
              ElementsAre(Object("networking.k8s.io/v1", "Ingress", 1)));
  EXPECT_EQ(c.objects[0].name, "b");
  EXPECT_THAT(c.warnings,
              ElementsAre(Problem(3,
                                  "key \"apiVersion\" appears twice in one "
                                  "mapping (lines 1 and 3); the last one "
                                  "counts"),
                          Problem(6, "(lines 5 and 6)")));
}

// Go's encoding/json (kubectl's decoder for a JSON stream) and go-yaml v2
// (for YAML) keep the last value of a key given twice: the whole value, so a
// second `items` replaces the first list and a second `metadata` the first
// mapping (issue 36: both lists were counted).
TEST(ManifestReaderTest, ARepeatedKeyReplacesTheWholeFirstValue) {
  const ManifestContents c = ReadManifests(
      "{\"apiVersion\": \"v1\", \"kind\": \"List\",\n"
      " \"items\": [{\"apiVersion\": \"extensions/v1beta1\", \"kind\": "
      "\"Ingress\"}],\n"
      " \"items\": [{\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\",\n"
      "   \"metadata\": {\"name\": \"a\", \"namespace\": \"n\"},\n"
      "   \"metadata\": {\"name\": \"b\"}}]}\n");
  EXPECT_THAT(c.problems, IsEmpty());
  ASSERT_THAT(c.objects, ElementsAre(Object("apps/v1", "Deployment", 3)));
  EXPECT_EQ(c.objects[0].name, "b");
  EXPECT_EQ(c.objects[0].namespace_, "");
  EXPECT_THAT(c.warnings, ElementsAre(Problem(3, "key \"items\" appears twice"),
                                      Problem(5, "key \"metadata\"")));
}

TEST(ManifestReaderTest, ARepeatedCrdVersionsListOrRuleListCountsOnce) {
  const ManifestContents c = ReadManifests(
      "apiVersion: apiextensions.k8s.io/v1\n"
      "kind: CustomResourceDefinition\n"
      "spec:\n"
      "  group: old.example.com\n"
      "  versions: [{name: v1alpha1, served: true, storage: true}]\n"
      "spec:\n"
      "  group: example.com\n"
      "  versions: [{name: v1, served: true, storage: true}]\n"
      "status: {storedVersions: [v1alpha1]}\n"
      "status: {storedVersions: [v1]}\n"
      "---\n"
      "apiVersion: rbac.authorization.k8s.io/v1\n"
      "kind: Role\n"
      "rules: [{apiGroups: [extensions], resources: [ingresses]}]\n"
      "rules: [{apiGroups: [apps], resources: [deployments, deployments]}]\n");
  EXPECT_THAT(c.problems, IsEmpty());
  ASSERT_THAT(c.objects, SizeIs(2));
  ASSERT_TRUE(c.objects[0].crd.has_value());
  EXPECT_EQ(c.objects[0].crd->group, "example.com");
  ASSERT_THAT(c.objects[0].crd->versions, SizeIs(1));
  EXPECT_EQ(c.objects[0].crd->versions[0].name, "v1");
  EXPECT_THAT(c.objects[0].crd->stored_versions, ElementsAre("v1"));
  ASSERT_THAT(c.objects[1].rules, SizeIs(1));
  EXPECT_THAT(c.objects[1].rules[0].api_groups, ElementsAre("apps"));
}

// encoding/json's unquote (decode.go) joins a UTF-16 surrogate pair into one
// code point and reads any other surrogate escape as U+FFFD; libyaml refuses
// them all, so a JSON manifest kubectl reads was a bad document (issue 36).
TEST(ManifestReaderTest, JsonSurrogatePairsReadAsGoReadsThem) {
  const ManifestContents c = ReadManifests(
      "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n"
      " {\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n"
      "  \"metadata\": {\"name\": \"smile-\\ud83d\\ude00\"}},\n"
      " {\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n"
      "  \"metadata\": {\"name\": \"lone-\\ud83d-\\uDE00-\\ud83d\\u0041\"}},\n"
      " {\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n"
      "  \"metadata\": {\"name\": \"escaped-\\\\ud83d\"}}]}\n");
  EXPECT_THAT(c.problems, IsEmpty());
  ASSERT_THAT(c.objects, SizeIs(3));
  EXPECT_EQ(c.objects[0].name, "smile-\xF0\x9F\x98\x80");  // U+1F600
  EXPECT_EQ(c.objects[0].line, 2);
  // A high surrogate alone, a low one alone, a high one before a non-surrogate.
  EXPECT_EQ(c.objects[1].name,
            "lone-\xEF\xBF\xBD-\xEF\xBF\xBD-\xEF\xBF\xBD"
            "A");
  EXPECT_EQ(c.objects[1].line, 4);
  EXPECT_EQ(c.objects[2].name, "escaped-\\ud83d");
}

// YAML is not JSON: go-yaml v2 refuses a surrogate escape as libyaml does
// (scannerc.go: "found invalid Unicode character escape code").
TEST(ManifestReaderTest, SurrogateEscapesInYamlStayBad) {
  const ManifestContents c = ReadManifests(
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "
      "\"\\ud83d\\ude00\"\n");
  EXPECT_THAT(c.objects, IsEmpty());
  EXPECT_THAT(c.problems, ElementsAre(Problem(4, "escape")));
}

TEST(ManifestReaderTest, ListKindsWithEmptyOrNullItemsAreEmptyLists) {
  const ManifestContents c = ReadManifests(
      "apiVersion: v1\nkind: ConfigMapList\nitems: []\n"
      "---\n"
      "apiVersion: v1\nkind: ConfigMapList\nitems:\n"
      "---\n"
      "apiVersion: v1\nkind: List\nitems: null\n"
      "---\n"
      "apiVersion: apps/v1\nkind: DeploymentList\nmetadata: {}\nitems: ~\n");
  EXPECT_THAT(c.problems, IsEmpty());
  EXPECT_THAT(c.objects, IsEmpty());
  EXPECT_EQ(c.documents, 4);
}

TEST(ManifestReaderTest, OldKustomizationIsSkippedWithAWarning) {
  const ManifestContents c = ReadManifests(
      "resources:\n- deployment.yaml\nnamePrefix: dev-\n"
      "commonLabels: {app: x}\n");
  EXPECT_THAT(c.problems, IsEmpty());
  EXPECT_THAT(c.objects, IsEmpty());
  EXPECT_THAT(c.warnings,
              ElementsAre(Problem(1, "a kustomization without apiVersion")));
  // An object without apiVersion that is no kustomization is still bad.
  EXPECT_THAT(ReadManifests("kind: Pod\nspec: {}\n").problems, SizeIs(1));
}

TEST(ManifestReaderTest, ByteOrderMarkAtALaterDocumentIsDropped) {
  const ManifestContents c = ReadManifests(
      "\xEF\xBB\xBF"
      "apiVersion: v1\nkind: Pod\n---\n"
      "\xEF\xBB\xBF"
      "apiVersion: batch/v1beta1\nkind: CronJob\n"
      "\xEF\xBB\xBF"
      "---\napiVersion: v1\nkind: Secret\n");
  EXPECT_THAT(c.problems, IsEmpty());
  EXPECT_THAT(c.objects, ElementsAre(Object("v1", "Pod", 1),
                                     Object("batch/v1beta1", "CronJob", 4),
                                     Object("v1", "Secret", 7)));
}

}  // namespace
}  // namespace compatd::manifest
