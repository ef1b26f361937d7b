// Request bounds and Kubernetes name grammars (api/request_validation.h).

#include "api/request_validation.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::api {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Tables from kubernetes/apimachinery pkg/util/validation/validation_test.go,
// TestIsDNS1123Label / TestIsDNS1123Subdomain / TestIsDNS1035Label.
const std::vector<std::string>& LabelGood() {
  static const auto* values = new std::vector<std::string>{
      "a",  "ab",  "abc", "a1",  "a-1",        "a--1--2--b",        "0",
      "01", "012", "1a",  "1-a", "1--a--b--2", std::string(63, 'a')};
  return *values;
}
const std::vector<std::string>& LabelBad() {
  static const auto* values =
      new std::vector<std::string>{"",    "A",
                                   "ABC", "aBc",
                                   "A1",  "A-1",
                                   "1-A", "-",
                                   "a-",  "-a",
                                   "1-",  "-1",
                                   "_",   "a_",
                                   "_a",  "a_b",
                                   "1_",  "_1",
                                   "1_2", ".",
                                   "a.",  ".a",
                                   "a.b", "1.",
                                   ".1",  "1.2",
                                   " ",   "a ",
                                   " a",  "a b",
                                   "1 ",  " 1",
                                   "1 2", std::string(64, 'a')};
  return *values;
}

TEST(Dns1123LabelTest, AcceptsKubernetesGoodValues) {
  for (const std::string& v : LabelGood()) {
    EXPECT_TRUE(IsDns1123Label(v)) << v;
  }
}

TEST(Dns1123LabelTest, RejectsKubernetesBadValues) {
  for (const std::string& v : LabelBad()) {
    EXPECT_FALSE(IsDns1123Label(v)) << v;
  }
}

TEST(Dns1123SubdomainTest, AcceptsKubernetesGoodValues) {
  const std::vector<std::string> good = {
      "a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a",
      "1-a", "1--a--b--2", "a.a", "ab.a", "abc.a", "a1.a", "a-1.a",
      "a--1--2--b.a", "a.1", "ab.1", "abc.1", "a1.1", "a-1.1", "a--1--2--b.1",
      "0.a", "01.a", "012.a", "1a.a", "1-a.a", "0.1", "01.1", "012.1", "1a.1",
      "1-a.1", "1--a--b--2.1", "a.b.c.d.e", "aa.bb.cc.dd.ee", "1.2.3.4.5",
      "11.22.33.44.55", std::string(253, 'a'),
      // Kubernetes allows labels over 63 bytes inside a subdomain "for
      // backwards compat".
      std::string(64, 'a')};
  for (const std::string& v : good) {
    EXPECT_TRUE(IsDns1123Subdomain(v)) << v;
  }
}

TEST(Dns1123SubdomainTest, RejectsKubernetesBadValues) {
  const std::vector<std::string> bad = {"",
                                        "A",
                                        "ABC",
                                        "aBc",
                                        "A1",
                                        "A-1",
                                        "1-A",
                                        "-",
                                        "a-",
                                        "-a",
                                        "1-",
                                        "-1",
                                        "_",
                                        "a_",
                                        "_a",
                                        "a_b",
                                        "1_",
                                        "_1",
                                        "1_2",
                                        ".",
                                        "a.",
                                        ".a",
                                        "a..b",
                                        "1.",
                                        ".1",
                                        "1..2",
                                        " ",
                                        "a ",
                                        " a",
                                        "a b",
                                        "1 ",
                                        " 1",
                                        "1 2",
                                        "A.a",
                                        "aB.a",
                                        "ab.A",
                                        "A1.a",
                                        "a1.A",
                                        "A.1",
                                        "aB.1",
                                        "A1.1",
                                        "1A.1",
                                        "0.A",
                                        "01.A",
                                        "012.A",
                                        "1A.a",
                                        "1a.A",
                                        "A.B.C.D.E",
                                        "AA.BB.CC.DD.EE",
                                        "a.B.c.d.e",
                                        "aa.bB.cc.dd.ee",
                                        "a@b",
                                        "a,b",
                                        "a_b",
                                        "a;b",
                                        "a:b",
                                        "a%b",
                                        "a?b",
                                        "a$b",
                                        std::string(254, 'a')};
  for (const std::string& v : bad) {
    EXPECT_FALSE(IsDns1123Subdomain(v)) << v;
  }
}

TEST(Dns1035LabelTest, AcceptsKubernetesGoodValues) {
  for (const std::string& v :
       {std::string("a"), std::string("ab"), std::string("abc"),
        std::string("a1"), std::string("a-1"), std::string("a--1--2--b"),
        std::string(63, 'a')}) {
    EXPECT_TRUE(IsDns1035Label(v)) << v;
  }
}

TEST(Dns1035LabelTest, RejectsKubernetesBadValuesAndLeadingDigits) {
  std::vector<std::string> bad = LabelBad();
  for (const char* v : {"0", "01", "012", "1a", "1-a", "1--a--b--2"}) {
    bad.push_back(v);
  }
  for (const std::string& v : bad) {
    EXPECT_FALSE(IsDns1035Label(v)) << v;
  }
}

// isValidAPIVersion in kubernetes/kubernetes
// pkg/apis/apiserverinternal/validation/validation.go.
TEST(ApiVersionTest, AcceptsVersionWithOptionalGroup) {
  for (const char* v : {"v1", "apps/v1", "networking.k8s.io/v1beta1",
                        "resource.k8s.io/v1alpha3"}) {
    EXPECT_TRUE(IsApiVersion(v)) << v;
  }
}

TEST(ApiVersionTest, RejectsEmptyPartsExtraSlashesAndBadGrammar) {
  for (const char* v : {"", "/v1", "apps/", "a/b/c", "Apps/v1", "apps/V1",
                        "apps/1", "apps v1"}) {
    EXPECT_FALSE(IsApiVersion(v)) << v;
  }
}

TEST(FeatureGateNameTest, AcceptsEveryKubernetesStyleName) {
  for (const char* v :
       {"WatchList", "AllAlpha", "AllBeta", "CSIMigrationvSphere",
        "APIResponseCompression", "HPAScaleToZero", "a"}) {
    EXPECT_TRUE(IsFeatureGateName(v)) << v;
  }
}

TEST(FeatureGateNameTest, RejectsWhatTheFeatureGatesFlagCannotCarry) {
  for (const char* v : {"", "1Feature", "Watch List", "A=true", "A,B",
                        "Watch-List", "Watch.List", " WatchList"}) {
    EXPECT_FALSE(IsFeatureGateName(v)) << v;
  }
}

TEST(ComponentNameTest, AcceptsKubernetesAndCatalogComponents) {
  for (const char* v : {"kubelet", "kube-apiserver", "kube-controller-manager",
                        "client-go", "component-base/logs", "k8s.io/foo"}) {
    EXPECT_TRUE(IsComponentName(v)) << v;
  }
}

TEST(ComponentNameTest, RejectsUppercaseSpacesAndEdges) {
  for (const char* v :
       {"", "Kubelet", "kube apiserver", "-kubelet", "kubelet/", "kube_let"}) {
    EXPECT_FALSE(IsComponentName(v)) << v;
  }
}

TEST(ValidateRequestTest, AcceptsOrdinaryRequests) {
  v1::GetFeatureRequest feature;
  feature.set_name("WatchList");
  feature.mutable_versions()->set_emulation_version("1.35");
  feature.mutable_versions()->set_feature_gates("WatchList=false");
  EXPECT_OK(ValidateRequest(feature));
  v1::GetStorageVersionRequest storage;
  storage.set_resource("pods");  // group "" is the core group
  EXPECT_OK(ValidateRequest(storage));
  v1::CheckSkewRequest skew;
  skew.set_component("kubelet");
  skew.set_client_version("v1.34.2");
  EXPECT_OK(ValidateRequest(skew));
}

TEST(ValidateRequestTest, EmptyRequiredFieldsAreLeftToTheHandlers) {
  // "name: required, e.g. ..." is the handler's message; validation only
  // bounds and checks what is there.
  EXPECT_OK(ValidateRequest(v1::GetFeatureRequest()));
  EXPECT_OK(ValidateRequest(v1::GetStorageVersionRequest()));
  EXPECT_OK(ValidateRequest(v1::CheckSkewRequest()));
}

TEST(ValidateRequestTest, LongNameNamesFieldLimitAndGrammar) {
  v1::GetFeatureRequest request;
  request.set_name(std::string(kMaxNameBytes + 1, 'A'));
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("name: 257 bytes"),
                             HasSubstr("limit of 256 bytes"),
                             HasSubstr("feature gate name"))));
}

TEST(ValidateRequestTest, FeatureNameWithSeparatorsIsRejected) {
  v1::GetFeatureRequest request;
  request.set_name("WatchList=true");
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("name \"WatchList=true\""),
                             HasSubstr("\"WatchList\""))));
}

TEST(ValidateRequestTest, GroupMustBeDnsSubdomain) {
  v1::GetStorageVersionRequest request;
  request.set_group("Apps");
  request.set_resource("deployments");
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("group \"Apps\""),
                             HasSubstr("DNS-1123 subdomain"),
                             HasSubstr("core group"))));
}

TEST(ValidateRequestTest, KindInsteadOfResourceIsRejectedWithAHint) {
  v1::GetStorageVersionRequest request;
  request.set_group("apps");
  request.set_resource("Deployment");
  EXPECT_THAT(
      ValidateRequest(request),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("resource \"Deployment\""),
                     HasSubstr("DNS-1035 label"), HasSubstr("not kinds"))));
}

TEST(ValidateRequestTest, ControlBytesAreEscapedInTheMessage) {
  v1::CheckSkewRequest request;
  request.set_component(std::string("kube\nlet\x01", 9));
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("component \"kube\\nlet\\x01\"")));
}

TEST(ValidateRequestTest, FeatureGatesOverFourKibibytesAreRejected) {
  v1::ListFeaturesRequest request;
  request.mutable_versions()->set_feature_gates(
      std::string(kMaxFlagStringBytes + 1, 'A'));
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("versions.feature_gates: 4097 bytes"),
                             HasSubstr("limit of 4096 bytes"))));
}

TEST(ValidateRequestTest, FeatureGatesOfExactlyTheLimitAreAccepted) {
  v1::ListFeaturesRequest request;
  request.mutable_versions()->set_runtime_config(
      std::string(kMaxFlagStringBytes, 'a'));
  EXPECT_OK(ValidateRequest(request));
}

TEST(ValidateRequestTest, LongVersionIsRejected) {
  v1::ResolveVersionsRequest request;
  request.mutable_versions()->set_emulation_version(
      std::string(kMaxVersionBytes + 1, '1'));
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("versions.emulation_version: 65 bytes")));
}

TEST(ValidateRequestTest, StorageAgreementChecksEveryReport) {
  v1::ComputeStorageVersionAgreementRequest request;
  v1::ServerStorageVersion* ok = request.add_storage_versions();
  ok->set_apiserver_id("kube-apiserver-1");
  ok->set_encoding_version("apps/v1");
  ok->add_decodable_versions("apps/v1");
  v1::ServerStorageVersion* bad = request.add_storage_versions();
  bad->set_apiserver_id("kube-apiserver-2");
  bad->set_encoding_version("apps/v1");
  bad->add_decodable_versions("apps/v1");
  bad->add_decodable_versions("apps//v2");
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("storage_versions[1].decodable_versions[1] "
                                 "\"apps//v2\": not an apiVersion")));
}

TEST(ValidateRequestTest, StorageAgreementApiserverIdIsDnsSubdomain) {
  v1::ComputeStorageVersionAgreementRequest request;
  request.add_storage_versions()->set_apiserver_id("Server_1");
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("storage_versions[0].apiserver_id")));
}

TEST(ValidateRequestTest, TooManyRepeatedEntriesAreRejected) {
  v1::ComputeStorageVersionAgreementRequest request;
  for (int i = 0; i <= kMaxRepeatedEntries; ++i) {
    request.add_participants("a");
  }
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("participants: 1001 entries, over the limit "
                                 "of 1000")));
}

TEST(ValidateRequestTest, PlanVersionRemovalChecksInlineHistory) {
  v1::PlanVersionRemovalRequest request;
  request.set_crd("clusters.cluster.x-k8s.io");
  request.set_version("v1beta1");
  v1::CRDReleaseVersions* release = request.mutable_history()->add_releases();
  release->set_release("1.5");
  release->add_versions()->set_name("V1");
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("history.releases[0].versions[0].name "
                                 "\"V1\": not a DNS-1035 label")));
}

TEST(ValidateRequestTest, PlanUpgradeChecksBothEndsAndTheClients) {
  v1::PlanUpgradeRequest request;
  request.mutable_from()->set_emulation_version("1.33");
  EXPECT_OK(ValidateRequest(request));
  request.mutable_to()->set_runtime_config(std::string(4097, 'a'));
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("to.runtime_config: 4097 bytes")));
  request.mutable_to()->clear_runtime_config();
  request.mutable_from()->set_binary_version(std::string(65, '1'));
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("from.binary_version")));
  request.mutable_from()->clear_binary_version();
  v1::PlanClient* client = request.add_clients();
  client->set_component("Kubelet");
  client->set_version("1.31");
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("clients[0].component \"Kubelet\"")));
  client->set_component("kubelet");
  client->clear_version();
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("clients[0].version: required")));
  client->set_version("1.31");
  EXPECT_OK(ValidateRequest(request));
}

TEST(ValidateRequestTest, ListClientsComponentFollowsTheTrackersGrammar) {
  v1::ListClientsRequest request;
  request.set_component("Go-http-client");
  EXPECT_OK(ValidateRequest(request));
  request.set_component("kube let");
  EXPECT_THAT(ValidateRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("component \"kube let\"")));
}

TEST(ValidateRequestTest, EvaluateBatchOverTheLimitIsRejected) {
  v1::EvaluateRequest request;
  for (int i = 0; i < 3; ++i) request.add_items()->mutable_resolve_versions();
  RequestLimits limits;
  limits.max_evaluate_items = 2;
  EXPECT_THAT(ValidateRequest(request, limits),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("items: 3 items, over the limit of 2"),
                             HasSubstr("--max-evaluate-items"))));
  limits.max_evaluate_items = 3;
  EXPECT_OK(ValidateRequest(request, limits));
}

}  // namespace
}  // namespace compatd::api
