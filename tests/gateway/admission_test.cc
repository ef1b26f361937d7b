// POST /admission/v1/validate (gateway/admission.h) through
// gateway::Gateway::Handle over the embedded Kubernetes 1.36 catalog:
// AdmissionReview v1 in, AdmissionReview v1 out with response.uid echoed.

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gateway/json.h"
#include "gateway/ondemand.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/gateway/gateway_fixture.h"

namespace compatd::gateway {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kUid[] = "705ab4f5-6393-11e8-b7cc-42010a800002";
constexpr char kValidate[] = "/admission/v1/validate";

std::string Gvk(absl::string_view group, absl::string_view version,
                absl::string_view kind) {
  return absl::StrCat(R"({"group":")", group, R"(","version":")", version,
                      R"(","kind":")", kind, R"("})");
}

std::string Object(absl::string_view api_version, absl::string_view kind,
                   absl::string_view rest = "") {
  return absl::StrCat(R"({"apiVersion":")", api_version, R"(","kind":")", kind,
                      R"(","metadata":{"name":"x","namespace":"default",)",
                      R"("labels":{"app":"x"}},"spec":{"replicas":1})", rest,
                      "}");
}

struct Review {
  std::string uid = kUid;
  std::string operation = "CREATE";
  std::string kind;          // request.kind JSON, or empty
  std::string request_kind;  // request.requestKind JSON, or empty
  std::string object = "null";
  std::string old_object = "null";
  bool dry_run = false;

  std::string Json() const {
    std::string request = absl::StrCat(R"({"uid":")", uid, R"(")");
    if (!kind.empty()) absl::StrAppend(&request, R"(,"kind":)", kind);
    absl::StrAppend(
        &request, R"(,"resource":{"group":"","version":"v1","resource":"x"})");
    if (!request_kind.empty()) {
      absl::StrAppend(&request, R"(,"requestKind":)", request_kind);
    }
    absl::StrAppend(
        &request, R"(,"name":"x","namespace":"default","operation":")",
        operation,
        R"(","userInfo":{"username":"admin","groups":["system:masters"]})",
        R"(,"object":)", object, R"(,"oldObject":)", old_object,
        R"(,"dryRun":)", dry_run ? "true" : "false",
        R"(,"options":{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}})");
    return absl::StrCat(
        R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)",
        R"("request":)", request, "}");
  }
};

// A review of `object` whose request.kind is the object's own.
Review Of(absl::string_view group, absl::string_view version,
          absl::string_view kind) {
  Review review;
  review.kind = Gvk(group, version, kind);
  review.object = Object(
      group.empty() ? std::string(version) : absl::StrCat(group, "/", version),
      kind);
  return review;
}

class AdmissionTest : public GatewayTest {
 protected:
  // Validates `review` (with `query`); expects a 200 AdmissionReview that
  // echoes the uid, and returns it.
  google::protobuf::Value Admit(const Review& review,
                                absl::string_view query = "") {
    const http::Response response =
        Call("POST",
             query.empty() ? std::string(kValidate)
                           : absl::StrCat(kValidate, "?", query),
             review.Json());
    EXPECT_EQ(response.status, 200) << response.body;
    EXPECT_EQ(response.content_type, "application/json");
    google::protobuf::Value answer = ParseJson(response.body);
    EXPECT_EQ(At(answer, "apiVersion").string_value(), "admission.k8s.io/v1");
    EXPECT_EQ(At(answer, "kind").string_value(), "AdmissionReview");
    EXPECT_EQ(At(answer, "response.uid").string_value(), review.uid);
    EXPECT_FALSE(Has(answer, "request"));
    return answer;
  }

  // Expects HTTP 400 with a google.rpc.Status INVALID_ARGUMENT body; returns
  // its message.
  std::string Refused(absl::string_view body, absl::string_view query = "") {
    const http::Response response =
        Call("POST",
             query.empty() ? std::string(kValidate)
                           : absl::StrCat(kValidate, "?", query),
             body);
    EXPECT_EQ(response.status, 400) << body << "\n" << response.body;
    const google::protobuf::Value status = ParseJson(response.body);
    EXPECT_EQ(At(status, "code").number_value(), 3) << response.body;
    EXPECT_FALSE(Has(status, "response")) << response.body;
    return At(status, "message").string_value();
  }

  static bool Allowed(const google::protobuf::Value& answer) {
    return At(answer, "response.allowed").bool_value();
  }
  static std::vector<std::string> Warnings(
      const google::protobuf::Value& answer) {
    std::vector<std::string> out;
    const google::protobuf::Value warnings = At(answer, "response.warnings");
    for (const auto& w : warnings.list_value().values()) {
      out.push_back(w.string_value());
    }
    return out;
  }
};

TEST_F(AdmissionTest, ServedApiIsAllowedSilently) {
  const google::protobuf::Value answer = Admit(Of("apps", "v1", "Deployment"));
  EXPECT_TRUE(Allowed(answer));
  EXPECT_FALSE(Has(answer, "response.warnings"));
  EXPECT_FALSE(Has(answer, "response.status"));
  // In enforce mode too, and for the core group.
  EXPECT_TRUE(Allowed(Admit(Of("", "v1", "Pod"), "mode=enforce")));
  EXPECT_TRUE(Allowed(Admit(Of("", "v1", "ConfigMap"), "mode=enforce")));
}

// kube-apiserver sent the review, so it served the API: a catalog that says
// the cluster does not serve it is wrong about the cluster. A warning
// saying so, never a denial (enforce mode included).
TEST_F(AdmissionTest, RemovedApiIsACatalogMismatchNeverADenial) {
  for (absl::string_view query : {"", "mode=warn", "mode=enforce"}) {
    const google::protobuf::Value answer =
        Admit(Of("batch", "v1beta1", "CronJob"), query);
    EXPECT_TRUE(Allowed(answer)) << query;
    EXPECT_FALSE(Has(answer, "response.status"));
    ASSERT_EQ(Warnings(answer).size(), 1u);
    // batch/v1beta1 CronJob: removed in Kubernetes 1.25.
    EXPECT_EQ(Warnings(answer)[0],
              "compatd: catalog mismatch: the cluster served batch/v1beta1 "
              "CronJob, which the catalog says is removed there (emulation "
              "1.36); check the catalog's cluster section (versions, "
              "runtimeConfig)");
  }
}

TEST_F(AdmissionTest, ApiOffByDefaultIsACatalogMismatch) {
  // A beta API that is not removed yet: off unless --runtime-config, which
  // the catalog's cluster section does not set.
  const Review review = Of("networking.k8s.io", "v1beta1", "ServiceCIDR");
  for (absl::string_view query : {"", "mode=enforce"}) {
    const google::protobuf::Value warned = Admit(review, query);
    EXPECT_TRUE(Allowed(warned));
    ASSERT_EQ(Warnings(warned).size(), 1u);
    EXPECT_THAT(Warnings(warned)[0],
                HasSubstr("the cluster served networking.k8s.io/v1beta1 "
                          "ServiceCIDR, which the catalog says is not enabled "
                          "there (emulation 1.36)"));
  }
}

TEST_F(AdmissionTest, DeprecatedApiIsAllowedWithAWarning) {
  // Served once --runtime-config turns it on; deprecated since 1.34.
  const Review review = Of("networking.k8s.io", "v1beta1", "ServiceCIDR");
  for (absl::string_view mode : {"warn", "enforce"}) {
    const google::protobuf::Value answer = Admit(
        review, absl::StrCat("runtimeConfig=networking.k8s.io%2Fv1beta1%3Dtrue"
                             "&mode=",
                             mode));
    EXPECT_TRUE(Allowed(answer)) << mode;
    ASSERT_EQ(Warnings(answer).size(), 1u) << mode;
    EXPECT_EQ(Warnings(answer)[0],
              "compatd: networking.k8s.io/v1beta1 ServiceCIDR is deprecated "
              "since Kubernetes 1.34, removed in 1.37");
  }
}

TEST_F(AdmissionTest, CustomResourceIsAllowedSilently) {
  for (absl::string_view query : {"", "mode=enforce"}) {
    const google::protobuf::Value answer =
        Admit(Of("example.com", "v1", "Widget"), query);
    EXPECT_TRUE(Allowed(answer));
    EXPECT_FALSE(Has(answer, "response.warnings"));
    EXPECT_FALSE(Has(answer, "response.status"));
  }
  // A kind the catalog does not know in a built-in group-version too.
  EXPECT_TRUE(Allowed(Admit(Of("apps", "v1", "Gadget"), "mode=enforce")));
}

TEST_F(AdmissionTest, RequestKindIsPreferredOverKind) {
  // kube-apiserver converted an apps/v1beta1 request to apps/v1 for a
  // webhook that matches apps/v1 (matchPolicy: Equivalent): the client used
  // apps/v1beta1.
  Review review;
  review.kind = Gvk("apps", "v1", "Deployment");
  review.request_kind = Gvk("apps", "v1beta1", "Deployment");
  review.object = Object("apps/v1", "Deployment");
  const google::protobuf::Value answer = Admit(review, "mode=enforce");
  EXPECT_TRUE(Allowed(answer));
  ASSERT_EQ(Warnings(answer).size(), 1u);
  EXPECT_THAT(Warnings(answer)[0],
              HasSubstr("served apps/v1beta1 Deployment, which the catalog "
                        "says is removed there"));

  // And the other way round: what the client sent is served.
  review.kind = Gvk("extensions", "v1beta1", "Deployment");
  review.request_kind = Gvk("apps", "v1", "Deployment");
  const google::protobuf::Value served = Admit(review, "mode=enforce");
  EXPECT_TRUE(Allowed(served));
  EXPECT_FALSE(Has(served, "response.warnings"));
}

TEST_F(AdmissionTest, KindThenTheObjectsOwnApiVersionAreUsed) {
  Review review;
  review.kind = Gvk("policy", "v1beta1", "PodDisruptionBudget");
  review.object = Object("policy/v1", "PodDisruptionBudget");
  EXPECT_THAT(Warnings(Admit(review)),
              ::testing::ElementsAre(HasSubstr("policy/v1beta1")));
  review.kind.clear();
  review.object = Object("policy/v1beta1", "PodDisruptionBudget");
  EXPECT_THAT(Warnings(Admit(review)),
              ::testing::ElementsAre(HasSubstr("policy/v1beta1")));
  review.object = Object("policy/v1", "PodDisruptionBudget");
  EXPECT_TRUE(Warnings(Admit(review)).empty());
}

TEST_F(AdmissionTest, DeleteAndConnectAreAllowed) {
  for (const char* operation : {"DELETE", "CONNECT"}) {
    Review review = Of("batch", "v1beta1", "CronJob");
    review.operation = operation;
    review.old_object = review.object;
    review.object = "null";
    const google::protobuf::Value answer = Admit(review, "mode=enforce");
    EXPECT_TRUE(Allowed(answer)) << operation;
    EXPECT_FALSE(Has(answer, "response.warnings")) << operation;
  }
}

TEST_F(AdmissionTest, UpdateIsCheckedLikeCreate) {
  Review review = Of("batch", "v1beta1", "CronJob");
  review.operation = "UPDATE";
  review.old_object = review.object;
  EXPECT_THAT(Warnings(Admit(review, "mode=enforce")),
              ::testing::ElementsAre(HasSubstr("batch/v1beta1 CronJob")));
}

// CustomResourceDefinitions: the old object's status.storedVersions.
std::string Crd(std::initializer_list<std::pair<const char*, bool>> versions,
                std::initializer_list<const char*> stored = {}) {
  std::string list;
  for (const auto& [name, served] : versions) {
    if (!list.empty()) list += ",";
    absl::StrAppend(
        &list, R"({"name":")", name, R"(","served":)",
        served ? "true" : "false",
        R"(,"storage":false,"schema":{"openAPIV3Schema":)",
        R"({"type":"object","x-kubernetes-preserve-unknown-fields":true}}})");
  }
  std::string stored_list;
  for (const char* name : stored) {
    if (!stored_list.empty()) stored_list += ",";
    absl::StrAppend(&stored_list, "\"", name, "\"");
  }
  return absl::StrCat(
      R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",)",
      R"("metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com",)",
      R"("names":{"plural":"widgets","kind":"Widget"},"scope":"Namespaced",)",
      R"("versions":[)", list,
      R"(]},"status":{"acceptedNames":{"plural":"widgets"},)",
      R"("storedVersions":[)", stored_list, "]}}");
}

Review CrdUpdate(std::string object, std::string old_object) {
  Review review;
  review.operation = "UPDATE";
  review.kind = Gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
  review.object = std::move(object);
  review.old_object = std::move(old_object);
  return review;
}

TEST_F(AdmissionTest, CrdUpdateDroppingAStoredVersionIsDenied) {
  const Review review =
      CrdUpdate(Crd({{"v2", true}}, {"v1", "v2"}),
                Crd({{"v1", true}, {"v2", true}}, {"v1", "v2"}));
  // Denied whatever the mode: kube-apiserver would refuse it anyway.
  for (absl::string_view query : {"", "mode=enforce"}) {
    const google::protobuf::Value answer = Admit(review, query);
    EXPECT_FALSE(Allowed(answer));
    EXPECT_EQ(At(answer, "response.status.code").number_value(), 403);
    // kube-apiserver's own words (apiextensions-apiserver
    // ValidateCustomResourceDefinitionStoredVersions), with the index.
    EXPECT_EQ(At(answer, "response.status.message").string_value(),
              "compatd: status.storedVersions[0]: Invalid value: \"v1\": "
              "missing from spec.versions; v1 was previously a storage "
              "version, and must remain in spec.versions until a storage "
              "migration ensures no data remains persisted in v1 and removes "
              "v1 from status.storedVersions");
  }
  // The index is the version's place in storedVersions.
  const google::protobuf::Value second =
      Admit(CrdUpdate(Crd({{"v1", true}}, {"v1", "v2"}),
                      Crd({{"v1", true}, {"v2", true}}, {"v1", "v2"})));
  EXPECT_THAT(At(second, "response.status.message").string_value(),
              HasSubstr("status.storedVersions[1]: Invalid value: \"v2\""));
}

// A repeated spec.versions or status.storedVersions key: the last list is the
// one Go's decoder keeps (encoding/json resets a slice before decoding into
// it), and null empties it.
TEST_F(AdmissionTest, CrdListsGivenTwiceAreReadAsGoReadsThem) {
  const std::string both = Crd({{"v1", true}, {"v2", true}}, {"v1", "v2"});
  std::string dropping_v1 = Crd({{"v2", true}}, {"v1", "v2"});
  // spec.versions once more, before the list that drops v1: still denied.
  dropping_v1.insert(dropping_v1.find(R"("versions":[)"),
                     R"("versions":[{"name":"v1","served":true}],)");
  EXPECT_FALSE(Allowed(Admit(CrdUpdate(dropping_v1, both))));
  // The other way round: the later list has v1 back, so nothing is dropped.
  std::string restored = Crd({{"v2", true}}, {"v1", "v2"});
  restored.insert(
      restored.find("]},\"status\"") + 1,
      R"(,"versions":[{"name":"v1","served":true},{"name":"v2","served":true}])");
  EXPECT_TRUE(Allowed(Admit(CrdUpdate(restored, both)))) << restored;
  // status.storedVersions is the old object's (kube-apiserver keeps the old
  // status on an update of the CRD itself): given twice there, only the later
  // ["v2"] is stored, so dropping v1 from spec.versions is allowed.
  const std::string dropping = Crd({{"v2", true}}, {"v1", "v2"});
  std::string stored_twice = both;
  stored_twice.insert(stored_twice.find("]}}") + 1,
                      R"(,"storedVersions":["v2"])");
  EXPECT_TRUE(Allowed(Admit(CrdUpdate(dropping, stored_twice))))
      << stored_twice;
  // null empties it.
  std::string stored_null = both;
  stored_null.insert(stored_null.find("]}}") + 1, R"(,"storedVersions":null)");
  EXPECT_TRUE(Allowed(Admit(CrdUpdate(dropping, stored_null)))) << stored_null;
  // And the other order still keeps v1 stored.
  std::string stored_again = Crd({{"v1", true}, {"v2", true}}, {"v2"});
  stored_again.insert(stored_again.find("]}}") + 1,
                      R"(,"storedVersions":["v1","v2"])");
  EXPECT_FALSE(Allowed(Admit(CrdUpdate(dropping, stored_again))))
      << stored_again;
}

TEST_F(AdmissionTest, CrdUpdateKeepingStoredVersionsIsAllowed) {
  // Unserving a stored version, or dropping one never stored, is allowed
  // (a CRD the catalog has no plan for).
  for (const Review& review :
       {CrdUpdate(Crd({{"v1", false}, {"v2", true}}, {"v1", "v2"}),
                  Crd({{"v1", true}, {"v2", true}}, {"v1", "v2"})),
        CrdUpdate(Crd({{"v2", true}}, {"v2"}),
                  Crd({{"v1", true}, {"v2", true}}, {"v2"}))}) {
    const google::protobuf::Value answer = Admit(review, "mode=enforce");
    EXPECT_TRUE(Allowed(answer)) << review.Json();
    EXPECT_FALSE(Has(answer, "response.warnings"));
  }
  // A CREATE has no old object to compare with.
  Review create;
  create.kind = Gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
  create.object = Crd({{"v1", true}});
  EXPECT_TRUE(Allowed(Admit(create, "mode=enforce")));
}

TEST_F(AdmissionTest, OnlyCrdsAreHeldToTheStoredVersionsRule) {
  // A custom resource with fields named like a CRD's: its status is its own.
  const std::string widget =
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":)"
      R"({"name":"w"},"spec":{"versions":[]},"status":{"storedVersions":)"
      R"(["v1"]}})";
  Review review;
  review.operation = "UPDATE";
  review.kind = Gvk("example.com", "v1", "Widget");
  review.object =
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":)"
      R"({"name":"w"},"spec":{}})";
  review.old_object = widget;
  const google::protobuf::Value answer = Admit(review, "mode=enforce");
  EXPECT_TRUE(Allowed(answer));
  EXPECT_FALSE(Has(answer, "response.status"));
}

TEST_F(AdmissionTest, CrdShapedFieldsOfOtherShapesAreAllowed) {
  // spec.versions and status.storedVersions of any shape in other objects.
  for (const char* rest :
       {R"(,"status":{"storedVersions":{"a":1}})",
        R"(,"status":{"storedVersions":[1,{"x":null},"v1"]})",
        R"(,"status":{"storedVersions":"v1"})", R"(,"status":"Ready")",
        R"(,"status":null)"}) {
    Review review = Of("example.com", "v1", "Widget");
    review.object = Object("example.com/v1", "Widget", rest);
    EXPECT_TRUE(Allowed(Admit(review, "mode=enforce"))) << rest;
  }
  for (const char* spec :
       {R"("versions":"1.2")", R"("versions":{"v1":true})",
        R"("versions":["v1","v2"])",
        R"("versions":[{"name":1,"served":"yes"},{"name":"v1"}])"}) {
    Review review = Of("example.com", "v1", "Widget");
    review.object = absl::StrCat(
        R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":)"
        R"({"name":"w"},"spec":{)",
        spec, "}}");
    EXPECT_TRUE(Allowed(Admit(review, "mode=enforce"))) << spec;
  }
}

TEST_F(AdmissionTest, DryRunIsAnsweredTheSameWay) {
  for (Review review :
       {Of("batch", "v1beta1", "CronJob"), Of("apps", "v1", "Deployment"),
        CrdUpdate(Crd({{"v2", true}}, {"v1"}), Crd({{"v1", true}}, {"v1"}))}) {
    for (absl::string_view query : {"", "mode=enforce"}) {
      review.dry_run = false;
      const std::string wet =
          Call("POST", absl::StrCat(kValidate, "?", query), review.Json()).body;
      review.dry_run = true;
      const std::string dry =
          Call("POST", absl::StrCat(kValidate, "?", query), review.Json()).body;
      EXPECT_EQ(wet, dry);
    }
  }
}

TEST_F(AdmissionTest, EmulationVersionParameterChangesTheAnswer) {
  // admissionregistration.k8s.io/v1 MutatingAdmissionPolicy is new in 1.36.
  const Review review =
      Of("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicy");
  EXPECT_TRUE(Warnings(Admit(review, "mode=enforce")).empty());
  EXPECT_TRUE(
      Warnings(Admit(review, "mode=enforce&emulationVersion=1.36")).empty());
  const google::protobuf::Value at_135 =
      Admit(review, "mode=enforce&emulationVersion=1.35");
  EXPECT_TRUE(Allowed(at_135));
  // Not "--runtime-config enables it": 1.35 had no such API.
  EXPECT_THAT(Warnings(at_135),
              ::testing::ElementsAre(
                  "compatd: catalog mismatch: the cluster served "
                  "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy, "
                  "which the catalog says is not yet introduced there "
                  "(emulation 1.35); check the catalog's cluster section "
                  "(versions, runtimeConfig)"));

  // Removed in 1.34: a deprecation warning at 1.33, a denial at 1.34.
  const Review vap = Of("admissionregistration.k8s.io", "v1beta1",
                        "ValidatingAdmissionPolicy");
  const std::string on =
      "runtimeConfig=admissionregistration.k8s.io%2Fv1beta1%3Dtrue&mode="
      "enforce";
  const google::protobuf::Value at_133 =
      Admit(vap, absl::StrCat(on, "&emulationVersion=1.33"));
  EXPECT_TRUE(Allowed(at_133));
  ASSERT_EQ(Warnings(at_133).size(), 1u);
  EXPECT_THAT(Warnings(at_133)[0],
              HasSubstr("deprecated since Kubernetes 1.31"));
  const google::protobuf::Value at_134 =
      Admit(vap, absl::StrCat(on, "&emulationVersion=1.34"));
  EXPECT_TRUE(Allowed(at_134));
  EXPECT_THAT(Warnings(at_134),
              ::testing::ElementsAre(HasSubstr("is removed there")));
}

TEST_F(AdmissionTest, BadVersionParametersAre400) {
  const Review review = Of("apps", "v1", "Deployment");
  EXPECT_THAT(Refused(review.Json(), "emulationVersion=banana"),
              HasSubstr("banana"));
  // Out of the binary's emulation range (1.33..1.36).
  EXPECT_THAT(Refused(review.Json(), "emulationVersion=1.20"),
              HasSubstr("1.20"));
}

TEST_F(AdmissionTest, KubeApiserversTimeoutParameterIsAccepted) {
  // kube-apiserver calls https://<service><path>?timeout=2s (client-go adds
  // the webhook's timeoutSeconds); a 400 would fail every call.
  const Review review = Of("batch", "v1beta1", "CronJob");
  const google::protobuf::Value answer = Admit(review, "timeout=2s");
  EXPECT_TRUE(Allowed(answer));
  EXPECT_EQ(Warnings(answer).size(), 1u);
  EXPECT_EQ(Warnings(Admit(review, "mode=enforce&timeout=10s")).size(), 1u);
}

TEST_F(AdmissionTest, UnknownOrBadQueryParameterIs400) {
  const std::string body = Of("apps", "v1", "Deployment").Json();
  EXPECT_THAT(Refused(body, "emulation=1.35"),
              HasSubstr("unknown query parameter \"emulation\""));
  EXPECT_THAT(Refused(body, "mode=strict"),
              HasSubstr("expected warn (the default) or enforce"));
  EXPECT_THAT(Refused(body, "mode=%zz"), HasSubstr("bad percent-escape"));
}

TEST_F(AdmissionTest, MalformedReviewsAre400NeverAllowed) {
  Review good = Of("apps", "v1", "Deployment");
  const std::string json = good.Json();

  EXPECT_THAT(Refused(""), HasSubstr("not valid JSON"));
  EXPECT_THAT(Refused("garbage"), HasSubstr("not valid JSON"));
  EXPECT_THAT(Refused("[]"), HasSubstr("not valid JSON"));
  EXPECT_THAT(Refused("{}"),
              HasSubstr("expected apiVersion admission.k8s.io/v1"));
  EXPECT_THAT(Refused(json.substr(0, json.size() / 2)),
              HasSubstr("not valid JSON"));

  std::string other = json;
  other.replace(other.find("admission.k8s.io/v1"), 19,
                "admission.k8s.io/v1beta1");
  EXPECT_THAT(Refused(other), HasSubstr("admissionReviewVersions: [v1]"));

  std::string wrong_kind = json;
  wrong_kind.replace(wrong_kind.find("AdmissionReview"), 15,
                     "AdmissionRequest");
  EXPECT_THAT(Refused(wrong_kind), HasSubstr("\"AdmissionRequest\""));

  Review no_uid = good;
  no_uid.uid = "";
  EXPECT_THAT(Refused(no_uid.Json()), HasSubstr("no request.uid"));
  EXPECT_THAT(
      Refused(
          R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})"),
      HasSubstr("no request.uid"));
  EXPECT_THAT(Refused(R"({"apiVersion":"admission.k8s.io/v1",)"
                      R"("kind":"AdmissionReview","request":{"uid":7}})"),
              HasSubstr("request.uid"));
  EXPECT_THAT(Refused(R"({"apiVersion":"admission.k8s.io/v1",)"
                      R"("kind":"AdmissionReview","request":"x"})"),
              HasSubstr("request"));
  EXPECT_THAT(
      Refused(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
              R"("request":{"uid":"u","object":[1]}})"),
      HasSubstr("request.object"));
}

TEST_F(AdmissionTest, RepeatedKeysAre400) {
  const std::string json = Of("apps", "v1", "Deployment").Json();
  // At the top, in the request, in the object, in request.kind.
  std::string top = json;
  top.insert(1, R"("kind":"AdmissionReview",)");
  EXPECT_THAT(Refused(top), HasSubstr("AdmissionReview.kind appears twice"));

  std::string uid = json;
  uid.insert(uid.find(R"("uid")"), R"("uid":"other",)");
  EXPECT_THAT(Refused(uid), HasSubstr("request.uid appears twice"));

  std::string object = json;
  object.insert(object.find(R"({"apiVersion":"apps/v1")") + 1,
                R"("apiVersion":"batch/v1beta1",)");
  EXPECT_THAT(Refused(object),
              HasSubstr("request.object.apiVersion appears twice"));

  std::string kind = json;
  kind.insert(kind.find(R"({"group":"apps")") + 1, R"("kind":"CronJob",)");
  EXPECT_THAT(Refused(kind), HasSubstr("request.kind.kind appears twice"));
}

TEST_F(AdmissionTest, TrailingBytesAfterTheDocumentAre400) {
  const std::string json = Of("batch", "v1beta1", "CronJob").Json();
  Refused(json + R"({"apiVersion":"admission.k8s.io/v1"})", "mode=enforce");
  Refused(json + "garbage", "mode=enforce");
  Refused(json + "}", "mode=enforce");
}

TEST_F(AdmissionTest, MalformedJsonInsideTheObjectIs400) {
  // Parts of the object the check never reads must still be JSON.
  Review review = Of("apps", "v1", "Deployment");
  review.object = Object("apps/v1", "Deployment", R"(,"status":{"a":})");
  Refused(review.Json());
  review.object = Object("apps/v1", "Deployment", R"(,"status":[1,,2])");
  Refused(review.Json());
  review.object = Object("apps/v1", "Deployment", R"(,"data":{"k":tru})");
  Refused(review.Json());
  review.object = Object("apps/v1", "Deployment", R"(,"n":01)");
  Refused(review.Json());
  review.object = Object("apps/v1", "Deployment", R"(,"s":"\x")");
  Refused(review.Json());
  // In the metadata, the request and the review as well.
  review = Of("apps", "v1", "Deployment");
  std::string json = review.Json();
  json.insert(json.find(R"("name":"x")"), R"("annotations":{"a":[}]},)");
  Refused(json);
  json = review.Json();
  json.insert(json.find(R"("operation")"), R"("userInfo2":{"x":-},)");
  Refused(json);
  json = review.Json();
  json.insert(1, R"("extra":[1 2],)");
  Refused(json);
  // Numbers beyond 64 bits are JSON (Kubernetes reads them as floats).
  review.object = Object("apps/v1", "Deployment",
                         R"(,"n":18446744073709551616,"m":-1.5e300)");
  EXPECT_TRUE(Allowed(Admit(review)));
}

// Strings the check never reads are passed over without unescaping when they
// hold no backslash; they must still be what Go's encoding/json accepts
// (decode.go: a control character below 0x20 in a string literal, invalid
// escapes and a \u not followed by four hex digits are syntax errors).
TEST_F(AdmissionTest, SkippedStringsAreStillJsonStrings) {
  const std::string bad_strings[] = {
      "\"a\x01"
      "b\"",            // a raw control character
      "\"tab\there\"",  // a raw tab
      R"("\q")",        // an escape JSON does not have
      R"("\u12")",      // \u without four hex digits
      R"("\u12G4")",    // a \u with a letter that is not hex
      "\"\xff\xfe\"",   // not UTF-8
      "\"\xc3\"",       // a UTF-8 sequence cut short
  };
  for (const std::string& bad : bad_strings) {
    Review review = Of("apps", "v1", "Deployment");
    review.object = Object("apps/v1", "Deployment",
                           absl::StrCat(R"(,"status":{"s":)", bad, "}"));
    EXPECT_THAT(Refused(review.Json()), HasSubstr("not valid JSON")) << bad;
    review = Of("apps", "v1", "Deployment");
    review.object =
        Object("apps/v1", "Deployment",
               absl::StrCat(R"(,"status":{"list":["ok",)", bad, "]}"));
    EXPECT_THAT(Refused(review.Json()), HasSubstr("not valid JSON")) << bad;
  }
  Review review = Of("apps", "v1", "Deployment");
  review.object =
      Object("apps/v1", "Deployment",
             absl::StrCat(
                 R"(,"status":{"a":"plain","b":"\"quoted\" \\ \/ \b\f\n\r\t",)",
                 R"("c":"\u00e9\ud83d\ude00","d":"caf\u00e9 \u2603","e":"",)",
                 "\"f\":\"caf\xc3\xa9 \xe2\x98\x83\"}"));
  EXPECT_TRUE(Allowed(Admit(review)));
}

// A malformed atom where the object or oldObject goes: simdjson's is_null()
// answers an error, not false, which the reader once took as a bool; the
// exception ended compatd. Found by the admission_review fuzz target
// (fuzz/regressions/admission_review/).
TEST_F(AdmissionTest, MalformedAtomInPlaceOfTheObjectIs400) {
  for (const char* atom : {"n", "nul", "nulll", "t", "f", "-"}) {
    Review review = Of("apps", "v1", "Deployment");
    review.old_object = atom;
    EXPECT_THAT(Refused(review.Json()), HasSubstr("request.oldObject")) << atom;
    review = Of("apps", "v1", "Deployment");
    review.object = atom;
    EXPECT_THAT(Refused(review.Json()), HasSubstr("request.object")) << atom;
  }
}

// Nesting around the bound: SkipValue stops at kMaxSkipDepth levels below
// the object, and the parser must hold every level it opens on the way
// (simdjson's development checks, on in the Debug/ASan build, assert when a
// parser's own bound is one short).
TEST_F(AdmissionTest, NestingAtTheBoundIsAnsweredAndBeyondIs400) {
  const size_t bound = static_cast<size_t>(kMaxSkipDepth);
  for (const size_t depth : {bound - 8, bound - 3, bound - 2, bound - 1, bound,
                             bound + 1, bound + 2, bound + 50}) {
    Review review = Of("apps", "v1", "Deployment");
    review.object =
        absl::StrCat(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":)",
                     std::string(depth, '['), std::string(depth, ']'), "}");
    const http::Response response = Call("POST", kValidate, review.Json());
    if (depth <= bound - 8) {
      EXPECT_EQ(response.status, 200) << depth << ": " << response.body;
    } else if (depth > bound) {
      EXPECT_EQ(response.status, 400) << depth << ": " << response.body;
      EXPECT_THAT(response.body, HasSubstr("too deep")) << depth;
    } else {
      // Where exactly the review's own levels tip it over is simdjson's
      // counting; either answer is a well-formed one.
      EXPECT_THAT(response.status, ::testing::AnyOf(200, 400)) << depth;
    }
  }
}

TEST_F(AdmissionTest, UidIsEchoedEscaped) {
  Review review = Of("apps", "v1", "Deployment");
  review.uid = R"(a\"b\\c\u00e9)";
  const http::Response response = Call("POST", kValidate, review.Json());
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(At(ParseJson(response.body), "response.uid").string_value(),
            "a\"b\\c\xc3\xa9");
}

TEST_F(AdmissionTest, LargeObjectIsAnsweredQuickly) {
  // A 1 MiB ConfigMap: the check reads apiVersion and kind only.
  Review review = Of("", "v1", "ConfigMap");
  review.object = absl::StrCat(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},)",
      R"("data":{"blob":")", std::string(1 << 20, 'x'), R"("}})");
  const auto start = std::chrono::steady_clock::now();
  const google::protobuf::Value answer = Admit(review, "mode=enforce");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_TRUE(Allowed(answer));
}

TEST_F(AdmissionTest, NoCatalogYetIs503) {
  const http::Response response =
      CallUnloaded("POST", kValidate, Of("apps", "v1", "Deployment").Json());
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(At(ParseJson(response.body), "code").number_value(), 14);
  EXPECT_THAT(response.body, HasSubstr("failurePolicy"));
}

TEST_F(AdmissionTest, OnlyPostIsAllowed) {
  for (const char* method : {"GET", "PUT", "DELETE", "HEAD"}) {
    const http::Response response = Call(method, kValidate);
    EXPECT_EQ(response.status, 405) << method;
    ASSERT_EQ(response.headers.size(), 1u);
    EXPECT_EQ(response.headers[0].first, "Allow");
    EXPECT_EQ(response.headers[0].second, "POST");
  }
}

// A catalog with cluster.upgradeTarget: objects served now but not at the
// target get a warning, and are denied in enforce mode.
// CEL a rollback could not read back (issue: CEL across versions). cel-go's
// ext.Lists library (distinct, flatten, reverse, slice, sort, sortBy,
// lists.range) entered kube-apiserver's CEL environment in 1.34
// (kubernetes/apiserver v0.34.0 pkg/cel/environment/base.go:
// ext.Lists(ext.ListsVersion(3)) at IntroducedVersion 1.34); a 1.33 binary's
// StoredExpressions has none of them (its own kubernetes.Lists has isSorted,
// sum, min, max, indexOf, lastIndexOf). A cluster on the 1.36 binary at
// --min-compatibility-version=1.33 may be rolled back to 1.33.
Review PolicyReview(absl::string_view expression) {
  Review review;
  review.kind =
      Gvk("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy");
  review.object = absl::StrCat(
      R"({"apiVersion":"admissionregistration.k8s.io/v1",)",
      R"("kind":"ValidatingAdmissionPolicy","metadata":{"name":"versions"},)",
      R"("spec":{"validations":[{"expression":)", JsonQuote(expression),
      "}]}}");
  return review;
}

TEST_F(AdmissionTest, CelARollbackCannotReadIsWarnedOrDenied) {
  const Review review = PolicyReview(
      "object.spec.ports.distinct().size() == object.spec.ports.size()");
  const std::string warning =
      "compatd: ValidatingAdmissionPolicy versions "
      "spec.validations[0].expression uses distinct (ext.Lists v3, Kubernetes "
      "1.34): kube-apiserver 1.33 cannot read it back after a rollback";
  const google::protobuf::Value warned =
      Admit(review, "minCompatibilityVersion=1.33");
  EXPECT_TRUE(Allowed(warned));
  EXPECT_THAT(Warnings(warned), ::testing::ElementsAre(warning));
  const http::Response denied =
      Call("POST", absl::StrCat(kValidate, "/enforce/min-compatibility-1.33"),
           review.Json());
  ASSERT_EQ(denied.status, 200) << denied.body;
  const google::protobuf::Value answer = ParseJson(denied.body);
  EXPECT_FALSE(Allowed(answer));
  EXPECT_EQ(At(answer, "response.status.message").string_value(), warning);
  // At the 1.36 binary's default min-compatibility (1.35), every release a
  // rollback reaches has ext.Lists.
  EXPECT_FALSE(Has(Admit(review, "mode=enforce"), "response.warnings"));
  // Base CEL only: nothing to say.
  EXPECT_FALSE(Has(Admit(PolicyReview("object.spec.replicas < 5"),
                         "mode=enforce&minCompatibilityVersion=1.33"),
                   "response.warnings"));
}

TEST_F(AdmissionTest, CelAnUpdateIsHeldOnlyToItsNewExpressions) {
  Review review =
      PolicyReview("object.spec.ports.reverse() == object.spec.ports");
  review.operation = "UPDATE";
  review.old_object = review.object;  // already stored: not new
  EXPECT_TRUE(
      Allowed(Admit(review, "mode=enforce&minCompatibilityVersion=1.33")));
  review.old_object = PolicyReview("object.metadata.name != ''").object;
  EXPECT_FALSE(
      Allowed(Admit(review, "mode=enforce&minCompatibilityVersion=1.33")));
  // DELETE writes nothing.
  review.operation = "DELETE";
  EXPECT_TRUE(
      Allowed(Admit(review, "mode=enforce&minCompatibilityVersion=1.33")));
}

TEST_F(AdmissionTest, CelRulesOfACrdSchemaAreCheckedAtAnyDepth) {
  Review review;
  review.kind = Gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
  review.object = R"json({"apiVersion":"apiextensions.k8s.io/v1",
    "kind":"CustomResourceDefinition","metadata":{"name":"w.example.com"},
    "spec":{"group":"example.com","versions":[{"name":"v1","served":true,
    "storage":true,"schema":{"openAPIV3Schema":{"type":"object",
    "properties":{"spec":{"type":"object","x-kubernetes-validations":
    [{"rule":"self.items.sort() == self.items"}]}}}}}]}})json";
  const google::protobuf::Value answer =
      Admit(review, "minCompatibilityVersion=1.33");
  ASSERT_EQ(Warnings(answer).size(), 1u) << answer.DebugString();
  EXPECT_THAT(Warnings(answer)[0],
              HasSubstr("uses sort (ext.Lists v3, Kubernetes 1.34): "
                        "kube-apiserver 1.33 cannot read it back"));
}

class AdmissionUpgradeTargetTest : public AdmissionTest {
 protected:
  virtual const char* CatalogFile() const { return "upgrade_target.yaml"; }
  void SetUp() override {
    const std::string path =
        absl::StrCat(COMPATD_TESTDATA_DIR, "/catalogs/good/", CatalogFile());
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    std::stringstream bytes;
    bytes << in.rdbuf();
    absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
        catalog::ParseCatalog(bytes.str(), path);
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    pipeline_->Publish(*std::move(catalog), /*initial=*/true);
  }
};

TEST_F(AdmissionUpgradeTargetTest, ApiNotServedAtTheTargetIsWarnedOrDenied) {
  const Review review = Of("widgets.example.com", "v1beta1", "Widget");
  const std::string at_target =
      "compatd: use widgets.example.com/v1 Widget, not "
      "widgets.example.com/v1beta1 Widget: not served at the cluster's "
      "upgrade target (emulation 1.36): removed in Kubernetes 1.35";
  const std::string deprecated =
      "compatd: use widgets.example.com/v1 Widget, not "
      "widgets.example.com/v1beta1 Widget: deprecated since Kubernetes 1.31, "
      "removed in 1.35";
  for (absl::string_view path :
       {"", "?mode=warn", "/warn", "/warn/emulation-1.33"}) {
    const http::Response response =
        Call("POST", absl::StrCat(kValidate, path), review.Json());
    ASSERT_EQ(response.status, 200) << path << ": " << response.body;
    const google::protobuf::Value answer = ParseJson(response.body);
    EXPECT_TRUE(Allowed(answer)) << path;
    EXPECT_THAT(Warnings(answer), ::testing::ElementsAre(deprecated, at_target))
        << path;
  }
  for (absl::string_view path : {"?mode=enforce", "/enforce"}) {
    const http::Response response =
        Call("POST", absl::StrCat(kValidate, path), review.Json());
    ASSERT_EQ(response.status, 200) << path << ": " << response.body;
    const google::protobuf::Value answer = ParseJson(response.body);
    EXPECT_FALSE(Allowed(answer)) << path;
    EXPECT_EQ(At(answer, "response.status.code").number_value(), 403);
    EXPECT_EQ(At(answer, "response.status.message").string_value(), at_target);
    EXPECT_THAT(Warnings(answer), ::testing::ElementsAre(deprecated));
  }
  // Served at the target too: nothing to say.
  const google::protobuf::Value v1 =
      Admit(Of("widgets.example.com", "v1", "Widget"), "mode=enforce");
  EXPECT_TRUE(Allowed(v1));
  EXPECT_FALSE(Has(v1, "response.warnings"));
}

// tests/testdata/catalogs/good/admission_cluster.yaml: a cluster at emulation
// 1.34 going to 1.35, with Kubernetes' own lifecycles.
class AdmissionClusterTest : public AdmissionUpgradeTargetTest {
 protected:
  const char* CatalogFile() const override { return "admission_cluster.yaml"; }
};

TEST_F(AdmissionClusterTest, DeprecationNamesTheReplacementKind) {
  // v1 Endpoints: deprecated in 1.33, replaced by discovery.k8s.io/v1
  // EndpointSlice (another kind, not v1 Endpoints of another group).
  const google::protobuf::Value answer =
      Admit(Of("", "v1", "Endpoints"), "mode=enforce");
  EXPECT_TRUE(Allowed(answer));
  EXPECT_THAT(Warnings(answer),
              ::testing::ElementsAre(
                  "compatd: use discovery.k8s.io/v1 EndpointSlice, not v1 "
                  "Endpoints: deprecated since Kubernetes 1.33"));
}

TEST_F(AdmissionClusterTest, EnforceDeniesWhatTheTargetWillNotServe) {
  // storage.k8s.io/v1alpha1 VolumeAttributesClass: on at 1.34 through
  // --runtime-config, removed in 1.35 (the target).
  const Review review =
      Of("storage.k8s.io", "v1alpha1", "VolumeAttributesClass");
  const std::string denial =
      "compatd: use storage.k8s.io/v1 VolumeAttributesClass, not "
      "storage.k8s.io/v1alpha1 VolumeAttributesClass: not served at the "
      "cluster's upgrade target (emulation 1.35): removed in Kubernetes 1.35";
  const google::protobuf::Value denied =
      Admit(review, "mode=enforce&timeout=2s");
  EXPECT_FALSE(Allowed(denied));
  EXPECT_EQ(At(denied, "response.status.message").string_value(), denial);
  const google::protobuf::Value warned = Admit(review);
  EXPECT_TRUE(Allowed(warned));
  EXPECT_THAT(Warnings(warned), ::testing::Contains(denial));
  // Served at the target: nothing to deny.
  EXPECT_TRUE(Allowed(Admit(Of("storage.k8s.io", "v1", "VolumeAttributesClass"),
                            "mode=enforce")));
}

TEST_F(AdmissionClusterTest, EveryWarningFitsKubeApiserversBound) {
  // kube-apiserver cuts warnings past 256 characters (once all of them pass
  // 4096): a long kind name is cut by compatd, at a character boundary,
  // and the replacement comes first.
  const std::string kind = absl::StrCat("Very", std::string(300, 'L'), "ng");
  for (const Review& review :
       {Of("", "v1", "Endpoints"),
        Of("storage.k8s.io", "v1alpha1", "VolumeAttributesClass"),
        Of("apps", "v1beta1", "Deployment"), Of("apps", "v1beta1", kind)}) {
    for (const std::string& w : Warnings(Admit(review))) {
      EXPECT_LE(w.size(), 256u) << w;
    }
  }
}

TEST_F(AdmissionClusterTest, SubresourceIsJudgedByItsResource) {
  // kubectl scale deployment/x through apps/v1beta1 (served by an old
  // cluster): request.kind is the Scale subresource's kind, requestResource
  // the deployments of apps/v1beta1 (removed in 1.16, which the catalog's
  // cluster at 1.34 does not serve: a mismatch).
  const std::string review = absl::StrCat(
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)",
      R"("request":{"uid":"s-1",)",
      R"("kind":{"group":"autoscaling","version":"v1","kind":"Scale"},)",
      R"("resource":{"group":"apps","version":"v1","resource":"deployments"},)",
      R"("subResource":"scale",)",
      R"("requestKind":{"group":"apps","version":"v1beta1","kind":"Scale"},)",
      R"("requestResource":{"group":"apps","version":"v1beta1",)",
      R"("resource":"deployments"},"requestSubResource":"scale",)",
      R"("name":"x","namespace":"default","operation":"UPDATE",)",
      R"("userInfo":{"username":"admin"},)",
      R"("object":{"kind":"Scale","apiVersion":"autoscaling/v1",)",
      R"("metadata":{"name":"x","namespace":"default"},"spec":{"replicas":3},)",
      R"("status":{"replicas":1,"selector":"app=x"}},)",
      R"("oldObject":{"kind":"Scale","apiVersion":"autoscaling/v1",)",
      R"("metadata":{"name":"x","namespace":"default"},"spec":{"replicas":1},)",
      R"("status":{"replicas":1,"selector":"app=x"}},)",
      R"("dryRun":false,"options":{"kind":"UpdateOptions",)",
      R"("apiVersion":"meta.k8s.io/v1"}}})");
  const http::Response response = Call("POST", kValidate, review);
  ASSERT_EQ(response.status, 200) << response.body;
  const google::protobuf::Value answer = ParseJson(response.body);
  EXPECT_TRUE(Allowed(answer));
  // Not the Scale kind: the deployments of apps/v1beta1, at the cluster
  // (a mismatch) and at the target (removed in 1.16).
  EXPECT_THAT(Warnings(answer),
              ::testing::ElementsAre(
                  HasSubstr("the cluster served apps/v1beta1 Deployment, "
                            "which the catalog says is removed there "
                            "(emulation 1.34)"),
                  HasSubstr("use apps/v1 Deployment, not apps/v1beta1 "
                            "Deployment: not served at the cluster's upgrade "
                            "target")));
}

TEST_F(AdmissionTest, NullsGoDecodesAreAbsent) {
  // Go's decoder takes null as the field's zero value: requestKind,
  // resource, subResource, metadata, spec, status, oldObject.
  const std::string review =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
      R"("request":{"uid":"n-1",)"
      R"("kind":{"group":"batch","version":"v1","kind":"CronJob"},)"
      R"("resource":null,"subResource":null,"requestKind":null,)"
      R"("requestResource":null,"requestSubResource":null,"name":null,)"
      R"("namespace":null,"operation":"CREATE","userInfo":null,)"
      R"("object":{"apiVersion":"batch/v1","kind":"CronJob",)"
      R"("metadata":null,"spec":null,"status":null},)"
      R"("oldObject":null,"dryRun":null,"options":null}})";
  const http::Response response = Call("POST", kValidate, review);
  ASSERT_EQ(response.status, 200) << response.body;
  const google::protobuf::Value answer = ParseJson(response.body);
  EXPECT_TRUE(Allowed(answer));
  EXPECT_EQ(At(answer, "response.uid").string_value(), "n-1");
  EXPECT_FALSE(Has(answer, "response.warnings"));
  // A null request is no request: nothing to answer.
  EXPECT_THAT(Refused(R"({"apiVersion":"admission.k8s.io/v1",)"
                      R"("kind":"AdmissionReview","request":null})"),
              HasSubstr("no request.uid"));
  // A null uid is an empty one.
  EXPECT_THAT(Refused(R"({"apiVersion":"admission.k8s.io/v1",)"
                      R"("kind":"AdmissionReview","request":{"uid":null}})"),
              HasSubstr("no request.uid"));
}

TEST_F(AdmissionTest, OptionsAsPathSegments) {
  // What kube-apiserver can call: every segment a DNS-1123 subdomain.
  const Review mutating =
      Of("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicy");
  auto warnings = [&](absl::string_view path) {
    const http::Response response =
        Call("POST", absl::StrCat(kValidate, path), mutating.Json());
    EXPECT_EQ(response.status, 200) << path << ": " << response.body;
    return Warnings(ParseJson(response.body));
  };
  EXPECT_TRUE(warnings("/enforce").empty());
  EXPECT_TRUE(warnings("/enforce/").empty());
  // MutatingAdmissionPolicy v1 is new in 1.36.
  EXPECT_THAT(warnings("/warn/emulation-1.35"),
              ::testing::ElementsAre(HasSubstr("not yet introduced there "
                                               "(emulation 1.35)")));
  EXPECT_THAT(warnings("/emulation-1.35/min-compatibility-1.35/binary-1.36"),
              ::testing::SizeIs(1));
  // --runtime-config as enable-api.VERSION.GROUP.
  const Review cidr = Of("networking.k8s.io", "v1beta1", "ServiceCIDR");
  const http::Response on = Call(
      "POST",
      absl::StrCat(kValidate, "/warn/enable-api.v1beta1.networking.k8s.io"),
      cidr.Json());
  ASSERT_EQ(on.status, 200) << on.body;
  EXPECT_THAT(Warnings(ParseJson(on.body)),
              ::testing::ElementsAre(HasSubstr("deprecated since Kubernetes "
                                               "1.34")));
  // Feature gates in lowercase, matched to the catalog's names: the engine
  // gets "WatchList" (accepted, or refused by name as a locked gate).
  const http::Response gate =
      Call("POST", absl::StrCat(kValidate, "/disable-gate.watchlist"),
           mutating.Json());
  if (gate.status != 200) {
    EXPECT_EQ(gate.status, 400);
    EXPECT_THAT(gate.body, HasSubstr("WatchList"));
  }
}

TEST_F(AdmissionTest, BadPathSegmentsAre400) {
  const std::string body = Of("apps", "v1", "Deployment").Json();
  auto refused = [&](absl::string_view path) {
    const http::Response response =
        Call("POST", absl::StrCat(kValidate, path), body);
    EXPECT_EQ(response.status, 400) << path << ": " << response.body;
    return At(ParseJson(response.body), "message").string_value();
  };
  EXPECT_THAT(refused("/strict"), HasSubstr("expected warn, enforce"));
  EXPECT_THAT(refused("/emulation-banana"), HasSubstr("a version like 1.35"));
  EXPECT_THAT(refused("/enforce/warn"), HasSubstr("twice"));
  EXPECT_THAT(refused("/enforce?mode=warn"), HasSubstr("twice"));
  EXPECT_THAT(refused("/emulation-1.35?emulationVersion=1.34"),
              HasSubstr("twice"));
  EXPECT_THAT(refused("/warn//enforce"), HasSubstr("empty segment"));
  EXPECT_THAT(refused("/enable-gate.nosuchgate"),
              HasSubstr("no feature gate of that name"));
  // Not under the webhook's path: 404, not an option.
  EXPECT_EQ(Call("POST", "/admission/v1/validatex", body).status, 404);
}

TEST_F(AdmissionUpgradeTargetTest, GetCatalogShowsTheTarget) {
  const http::Response response = Call("POST", "/v1/GetCatalog", "{}");
  ASSERT_EQ(response.status, 200) << response.body;
  const google::protobuf::Value answer = ParseJson(response.body);
  EXPECT_EQ(At(answer, "upgradeTarget.emulationVersion").string_value(),
            "1.36");
  EXPECT_EQ(At(answer, "upgradeTarget.minCompatibilityVersion").string_value(),
            "1.35");
}

}  // namespace
}  // namespace compatd::gateway
