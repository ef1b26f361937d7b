#include "soak/requests.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/sha256.h"

namespace compatd::soak {
namespace {

using ::google::protobuf::Message;

// ---------------------------------------------------------------------------
// Random pieces

// Printable ASCII and a few multi-byte UTF-8 characters: always valid UTF-8,
// as proto3 strings must be (a client cannot send anything else through a
// generated stub; invalid UTF-8 is the garbage class's business).
std::string RandomText(Rng& rng, size_t max_length) {
  static constexpr std::array<absl::string_view, 6> kWide = {
      "\xc3\xa9",         "\xc3\x9f",    "\xe6\x97\xa5", "\xef\xbc\x91",
      "\xf0\x9f\x99\x82", "\xe2\x80\x8b"};  // é ß 日 １ 🙂 zero-width
                                            // space
  const size_t length = Below(rng, max_length + 1);
  std::string text;
  while (text.size() < length) {
    if (OneIn(rng, 12)) {
      absl::StrAppend(&text, Pick(rng, kWide));
    } else {
      text.push_back(static_cast<char>(' ' + Below(rng, 95)));
    }
  }
  return text;
}

// Letters and digits, starting with a letter: looks like a name.
std::string RandomIdentifier(Rng& rng, size_t max_length, bool lower) {
  static constexpr absl::string_view kUpper =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static constexpr absl::string_view kLower =
      "abcdefghijklmnopqrstuvwxyz0123456789-.";
  const absl::string_view alphabet = lower ? kLower : kUpper;
  const size_t length = 1 + Below(rng, max_length);
  std::string text(1, static_cast<char>('a' + Below(rng, 26)));
  while (text.size() < length)
    text.push_back(alphabet[Below(rng, alphabet.size())]);
  return text;
}

// Header-safe text (visible ASCII, no spaces at the ends).
std::string RandomHeaderText(Rng& rng, size_t max_length) {
  const size_t length = 1 + Below(rng, max_length);
  std::string text;
  for (size_t i = 0; i < length; ++i) {
    text.push_back(static_cast<char>('!' + Below(rng, 94)));
  }
  return text;
}

std::string RandomVersion(Rng& rng) {
  static constexpr std::array<absl::string_view, 30> kPool = {
      "",
      "1.36",
      "v1.36.2",
      "1.33",
      "1.32",
      "1.31",
      "1.37",
      "1.35.0-alpha.1",
      "2.0",
      "0.0",
      "1",
      "v1",
      "1.",
      ".36",
      "1.36.x",
      "-1.36",
      "1.-36",
      "01.36",
      "1.036",
      "v1.36.0+build.7",
      "99999999999999999999.1",
      "1.99999999999999999999",
      "1.36.0-",
      "\xef\xbc\x91.\xef\xbc\x93\xef\xbc\x96",  // fullwidth 1.36
      "1.36 ",
      " 1.36",
      "1,36",
      "latest",
      "v1.34.0",
      "1.34"};
  switch (Below(rng, 8)) {
    case 0:
      return RandomText(rng, 70);  // may pass the 64-byte limit
    case 1:
      return absl::StrCat(Below(rng, 4), ".", Below(rng, 60), ".",
                          Below(rng, 20));
    default:
      return std::string(Pick(rng, kPool));
  }
}

std::string RandomGateName(Rng& rng) {
  static constexpr std::array<absl::string_view, 14> kPool = {
      "WatchList",         "AllAlpha",
      "AllBeta",           "APIServingWithRoutine",
      "StorageVersionAPI", "CBORServingAndStorage",
      "watchlist",         "Watch List",
      "WatchList,AllBeta", "WatchList=true",
      "NoSuchGate",        "",
      "SidecarContainers", "InPlacePodVerticalScaling"};
  switch (Below(rng, 8)) {
    case 0:
      return RandomIdentifier(rng, 40, /*lower=*/false);
    case 1:
      return RandomText(rng, 40);
    case 2:
      return OneIn(rng, 4) ? std::string(300, 'A') : RandomText(rng, 300);
    default:
      return std::string(Pick(rng, kPool));
  }
}

std::string RandomFlagValue(Rng& rng) {
  static constexpr std::array<absl::string_view, 13> kPool = {
      "true", "false", "TRUE", "False", "1",     "0",    "t",
      "f",    "yes",   "",     "maybe", "true ", "=true"};
  return OneIn(rng, 6) ? RandomText(rng, 10) : std::string(Pick(rng, kPool));
}

std::string RandomFeatureGates(Rng& rng) {
  if (OneIn(rng, 20)) return std::string(4097 + Below(rng, 2000), 'A');
  if (OneIn(rng, 10)) return RandomText(rng, 200);
  std::vector<std::string> entries;
  const size_t n = Below(rng, 7);
  for (size_t i = 0; i < n; ++i) {
    std::string entry = RandomGateName(rng);
    if (!OneIn(rng, 8)) absl::StrAppend(&entry, "=", RandomFlagValue(rng));
    entries.push_back(std::move(entry));
  }
  return absl::StrJoin(entries, OneIn(rng, 10) ? ",," : ",");
}

std::string RandomRuntimeConfig(Rng& rng) {
  static constexpr std::array<absl::string_view, 14> kKeys = {
      "api/all",
      "api/beta",
      "api/alpha",
      "api/ga",
      "apps/v1",
      "batch/v1beta1",
      "v1",
      "apps",
      "flowcontrol.apiserver.k8s.io/v1beta3",
      "resource.k8s.io/v1alpha3",
      "apps/v1/deployments",
      "no.such/v9",
      "/v1",
      "apps/"};
  if (OneIn(rng, 20)) return std::string(4097 + Below(rng, 2000), 'a');
  if (OneIn(rng, 10)) return RandomText(rng, 200);
  std::vector<std::string> entries;
  const size_t n = Below(rng, 6);
  for (size_t i = 0; i < n; ++i) {
    std::string entry =
        OneIn(rng, 5) ? RandomText(rng, 20) : std::string(Pick(rng, kKeys));
    if (!OneIn(rng, 8)) absl::StrAppend(&entry, "=", RandomFlagValue(rng));
    entries.push_back(std::move(entry));
  }
  return absl::StrJoin(entries, ",");
}

void FillRandomVersions(Rng& rng, v1::VersionContext* versions) {
  if (OneIn(rng, 2)) versions->set_binary_version(RandomVersion(rng));
  if (OneIn(rng, 2)) versions->set_emulation_version(RandomVersion(rng));
  if (OneIn(rng, 3)) {
    versions->set_min_compatibility_version(RandomVersion(rng));
  }
  if (OneIn(rng, 2)) versions->set_feature_gates(RandomFeatureGates(rng));
  if (OneIn(rng, 3)) versions->set_runtime_config(RandomRuntimeConfig(rng));
  if (OneIn(rng, 4)) versions->set_emulation_forward_compatible(OneIn(rng, 2));
  if (OneIn(rng, 4)) {
    versions->set_runtime_config_emulation_forward_compatible(OneIn(rng, 2));
  }
}

std::string RandomComponent(Rng& rng) {
  static constexpr std::array<absl::string_view, 12> kPool = {
      "kubelet",
      "kube-proxy",
      "kubectl",
      "kube-scheduler",
      "kube-controller-manager",
      "cloud-controller-manager",
      "kube-apiserver",
      "Kubelet",
      "kube let",
      "",
      "component-base/logs",
      "client-go"};
  switch (Below(rng, 6)) {
    case 0:
      return RandomIdentifier(rng, 30, /*lower=*/true);
    case 1:
      return RandomText(rng, 30);
    default:
      return std::string(Pick(rng, kPool));
  }
}

std::string RandomGroup(Rng& rng) {
  static constexpr std::array<absl::string_view, 9> kPool = {
      "",     "apps",  "batch",         "coordination.k8s.io",
      "Apps", "apps.", "no.such.group", "x.k8s.io",
      "-apps"};
  return OneIn(rng, 5) ? RandomText(rng, 40) : std::string(Pick(rng, kPool));
}

std::string RandomResource(Rng& rng) {
  static constexpr std::array<absl::string_view, 8> kPool = {
      "deployments", "pods",        "leasecandidates", "Deployment", "",
      "nosuch",      "pods/status", "cronjobs"};
  return OneIn(rng, 5) ? RandomText(rng, 40) : std::string(Pick(rng, kPool));
}

std::string RandomApiVersion(Rng& rng) {
  static constexpr std::array<absl::string_view, 9> kPool = {
      "apps/v1", "apps/v1beta1", "v1",       "apps//v2", "apps/v1/x",
      "",        "apps/V1",      "batch/v1", "-/v1"};
  return OneIn(rng, 5) ? RandomText(rng, 30) : std::string(Pick(rng, kPool));
}

std::string RandomServerId(Rng& rng) {
  static constexpr std::array<absl::string_view, 6> kPool = {
      "a", "b", "kube-apiserver-abc", "API_SERVER", "", "apiserver-1.example"};
  return OneIn(rng, 5) ? RandomText(rng, 30) : std::string(Pick(rng, kPool));
}

int32_t RandomCount(Rng& rng) {
  static constexpr std::array<int32_t, 9> kPool = {
      -1,
      0,
      1,
      2,
      3,
      10,
      1000,
      std::numeric_limits<int32_t>::max(),
      std::numeric_limits<int32_t>::min()};
  return Pick(rng, kPool);
}

// Bigger than some limit now and then: repeated fields over 1000 entries.
size_t RandomRepeatCount(Rng& rng, size_t usual) {
  return OneIn(rng, 100) ? 1001 + Below(rng, 20) : Below(rng, usual + 1);
}

void FillRandomAgreement(Rng& rng,
                         v1::ComputeStorageVersionAgreementRequest* request) {
  const size_t n = RandomRepeatCount(rng, 6);
  for (size_t i = 0; i < n; ++i) {
    v1::ServerStorageVersion* report = request->add_storage_versions();
    report->set_apiserver_id(RandomServerId(rng));
    report->set_encoding_version(RandomApiVersion(rng));
    for (size_t j = Below(rng, 4); j > 0; --j) {
      report->add_decodable_versions(RandomApiVersion(rng));
    }
    for (size_t j = Below(rng, 3); j > 0; --j) {
      report->add_served_versions(RandomApiVersion(rng));
    }
  }
  for (size_t j = Below(rng, 4); j > 0; --j) {
    request->add_participants(RandomServerId(rng));
  }
  if (OneIn(rng, 2)) request->set_group(RandomGroup(rng));
  if (OneIn(rng, 2)) request->set_resource(RandomResource(rng));
}

std::string RandomCrdVersion(Rng& rng) {
  static constexpr std::array<absl::string_view, 7> kPool = {
      "v1beta1", "v1", "V1Beta1", "", "v1alpha1", "v2", "1v"};
  return OneIn(rng, 5) ? RandomText(rng, 20) : std::string(Pick(rng, kPool));
}

void FillRandomPlan(Rng& rng, v1::PlanVersionRemovalRequest* request) {
  static constexpr std::array<absl::string_view, 5> kCrds = {
      "clusters.cluster.x-k8s.io", "widgets.example.io", "Clusters", "",
      "machines.cluster.x-k8s.io"};
  request->set_crd(OneIn(rng, 5) ? RandomText(rng, 40)
                                 : std::string(Pick(rng, kCrds)));
  request->set_version(RandomCrdVersion(rng));
  if (OneIn(rng, 3)) return;
  v1::CRDVersionHistory* history = request->mutable_history();
  history->set_name(OneIn(rng, 2) ? request->crd() : RandomText(rng, 30));
  if (OneIn(rng, 2)) history->set_upgrade_span(RandomCount(rng));
  if (OneIn(rng, 2)) history->set_deprecation_releases(RandomCount(rng));
  if (OneIn(rng, 3)) history->set_revert_buffer_releases(RandomCount(rng));
  const size_t releases = RandomRepeatCount(rng, 8);
  size_t minor = Below(rng, 3);
  for (size_t i = 0; i < releases; ++i) {
    v1::CRDReleaseVersions* release = history->add_releases();
    // Mostly increasing releases, so that some histories get far.
    minor += OneIn(rng, 8) ? 0 : 1;
    release->set_release(OneIn(rng, 8) ? RandomVersion(rng)
                                       : absl::StrCat("v1.", minor));
    for (size_t j = Below(rng, 4); j > 0; --j) {
      v1::CRDVersionState* state = release->add_versions();
      state->set_name(RandomCrdVersion(rng));
      state->set_served(OneIn(rng, 2));
      state->set_storage(OneIn(rng, 2));
      state->set_deprecated(OneIn(rng, 3));
    }
    release->set_storage_version_migration(OneIn(rng, 3));
    release->set_managed_fields_cleanup(OneIn(rng, 3));
  }
}

void FillWrong(Rng& rng, Rpc rpc, Message* message);

// One wrong Evaluate item of a random kind (now and then none set).
void FillWrongItem(Rng& rng, v1::EvaluateItem* item) {
  switch (Below(rng, 9)) {
    case 0:
      FillWrong(rng, Rpc::kGetFeature, item->mutable_get_feature());
      break;
    case 1:
      FillWrong(rng, Rpc::kListFeatures, item->mutable_list_features());
      break;
    case 2:
      FillWrong(rng, Rpc::kGetStorageVersion,
                item->mutable_get_storage_version());
      break;
    case 3:
      FillWrong(rng, Rpc::kListAPIVersions, item->mutable_list_api_versions());
      break;
    case 4:
      FillWrong(rng, Rpc::kCheckSkew, item->mutable_check_skew());
      break;
    case 5:
      FillWrong(rng, Rpc::kResolveVersions, item->mutable_resolve_versions());
      break;
    case 6:
      FillWrong(rng, Rpc::kComputeStorageVersionAgreement,
                item->mutable_compute_storage_version_agreement());
      break;
    case 7:
      FillWrong(rng, Rpc::kPlanVersionRemoval,
                item->mutable_plan_version_removal());
      break;
    default:
      break;  // an item with no request set
  }
}

// Fills one wrong request of `rpc` (an Evaluate item kind or a unary RPC with
// arguments). Strings stay small: huge ones are added by the caller.
// FillWrong of the RPCs that ask about version contexts: GetFeature,
// ListFeatures, GetStorageVersion, ListAPIVersions, CheckSkew,
// ResolveVersions, PlanUpgrade.
void FillWrongQuery(Rng& rng, Rpc rpc, Message* message) {
  auto versions = [&](auto* request) {
    if (!OneIn(rng, 4)) FillRandomVersions(rng, request->mutable_versions());
  };
  switch (rpc) {
    case Rpc::kGetFeature: {
      auto* r = static_cast<v1::GetFeatureRequest*>(message);
      versions(r);
      r->set_name(RandomGateName(rng));
      return;
    }
    case Rpc::kListFeatures: {
      auto* r = static_cast<v1::ListFeaturesRequest*>(message);
      versions(r);
      if (OneIn(rng, 2)) r->set_component(RandomComponent(rng));
      return;
    }
    case Rpc::kGetStorageVersion: {
      auto* r = static_cast<v1::GetStorageVersionRequest*>(message);
      versions(r);
      r->set_group(RandomGroup(rng));
      r->set_resource(RandomResource(rng));
      return;
    }
    case Rpc::kListAPIVersions:
      versions(static_cast<v1::ListAPIVersionsRequest*>(message));
      return;
    case Rpc::kCheckSkew: {
      auto* r = static_cast<v1::CheckSkewRequest*>(message);
      versions(r);
      r->set_component(RandomComponent(rng));
      r->set_client_version(RandomVersion(rng));
      return;
    }
    case Rpc::kResolveVersions:
      versions(static_cast<v1::ResolveVersionsRequest*>(message));
      return;
    case Rpc::kPlanUpgrade: {
      auto* r = static_cast<v1::PlanUpgradeRequest*>(message);
      versions(r);
      if (!OneIn(rng, 3)) FillRandomVersions(rng, r->mutable_from());
      if (!OneIn(rng, 3)) FillRandomVersions(rng, r->mutable_to());
      if (OneIn(rng, 3)) {
        v1::PlanClient* client = r->add_clients();
        client->set_component(RandomComponent(rng));
        client->set_version(OneIn(rng, 2) ? "1.31" : "x.y");
      }
      return;
    }
    default:
      return;
  }
}

void FillWrong(Rng& rng, Rpc rpc, Message* message) {
  auto versions = [&](auto* request) {
    if (!OneIn(rng, 4)) FillRandomVersions(rng, request->mutable_versions());
  };
  switch (rpc) {
    case Rpc::kComputeStorageVersionAgreement: {
      auto* r =
          static_cast<v1::ComputeStorageVersionAgreementRequest*>(message);
      versions(r);
      FillRandomAgreement(rng, r);
      return;
    }
    case Rpc::kPlanVersionRemoval: {
      auto* r = static_cast<v1::PlanVersionRemovalRequest*>(message);
      versions(r);
      FillRandomPlan(rng, r);
      return;
    }
    case Rpc::kScanObjects: {
      // Garbage manifests: bad documents are problems in an OK answer; a bad
      // target or nothing to scan is INVALID_ARGUMENT.
      auto* r = static_cast<v1::ScanObjectsRequest*>(message);
      versions(r);
      if (!OneIn(rng, 3)) r->set_target(RandomVersion(rng));
      if (!OneIn(rng, 5)) {
        r->set_objects(absl::StrCat("apiVersion: ", RandomGroup(rng), "/v1\n",
                                    "kind: ", RandomGateName(rng), "\n---\n",
                                    RandomText(rng, 64)));
      }
      return;
    }
    case Rpc::kEvaluate: {
      auto* r = static_cast<v1::EvaluateRequest*>(message);
      versions(r);
      const size_t n = OneIn(rng, 50) ? 1001 + Below(rng, 50) : Below(rng, 21);
      for (size_t i = 0; i < n; ++i) {
        FillWrongItem(rng, r->add_items());
      }
      return;
    }
    case Rpc::kListClients:
      if (OneIn(rng, 2)) {
        static_cast<v1::ListClientsRequest*>(message)->set_component(
            RandomComponent(rng));
      }
      return;
    case Rpc::kListApiUsage:
      if (OneIn(rng, 2)) {
        static_cast<v1::ListApiUsageRequest*>(message)->set_component(
            RandomComponent(rng));
      }
      return;
    case Rpc::kCheckCelExpression: {
      auto* r = static_cast<v1::CheckCelExpressionRequest*>(message);
      versions(r);
      static constexpr std::array<absl::string_view, 4> kExpressions = {
          "isSemver(object.spec.version)", "m.all(k, v, v > 0)", "(((", ""};
      r->set_expression(OneIn(rng, 4) ? RandomText(rng, 200)
                                      : std::string(Pick(rng, kExpressions)));
      return;
    }
    case Rpc::kLintCatalog:
    case Rpc::kGetCatalog:
    case Rpc::kWatchCatalog:  // not sent by the workers
      return;                 // no fields
    default:
      FillWrongQuery(rng, rpc, message);
      return;
  }
}

// An Evaluate answer to wrong items: one result per item, and every item
// error a code a bad item may get.
std::string CheckWrongEvaluate(const v1::EvaluateRequest& request,
                               const v1::EvaluateResponse& response) {
  if (response.results_size() != request.items_size()) {
    return absl::StrCat(request.items_size(), " items but ",
                        response.results_size(), " results");
  }
  for (int i = 0; i < response.results_size(); ++i) {
    const v1::EvaluateResult& result = response.results(i);
    if (result.has_error() && !IsAcceptedItemCode(result.error().code())) {
      return absl::StrCat("item ", i, " failed with code ",
                          result.error().code(), ": ",
                          result.error().message());
    }
  }
  return "";
}

// ---------------------------------------------------------------------------
// Valid cases

template <typename Request, typename Response>
ValidCase Valid(Rpc rpc, int weight, std::string label,
                const std::function<void(Request*)>& fill,
                std::function<std::string(const Response&)> check,
                const CatalogFacts& facts) {
  ValidCase c;
  c.weight = weight;
  c.request.rpc = rpc;
  auto message = std::make_unique<Request>();
  fill(message.get());
  c.request.message = std::move(message);
  c.request.label = std::move(label);
  c.request.check = CheckedAnswer<Response>(std::move(check), facts);
  return c;
}

std::string Expect(bool ok, absl::string_view what) {
  return ok ? "" : std::string(what);
}

// The gate answers of both variants: WatchList is on at 1.36 (BETA, default
// on since 1.34) and off at 1.33 (BETA, default off in 1.33); the switched
// gate is on exactly in variant B.
std::string CheckSwitchedGate(const std::string& digest, bool enabled,
                              const CatalogFacts& facts) {
  const bool want = digest == facts.digest_b;
  if (enabled == want) return "";
  return absl::StrCat(CatalogFacts::kSwitchedGate, " enabled=", enabled,
                      " but the answering catalog (", digest, ") is variant ",
                      want ? "B (on)" : "A (off)");
}

v1::CRDVersionHistory WidgetHistory() {
  v1::CRDVersionHistory history;
  history.set_name("widgets.example.io");
  v1::CRDReleaseVersions* first = history.add_releases();
  first->set_release("v1.0");
  v1::CRDVersionState* beta = first->add_versions();
  beta->set_name("v1beta1");
  beta->set_served(true);
  beta->set_storage(true);
  v1::CRDReleaseVersions* second = history.add_releases();
  second->set_release("v1.1");
  beta = second->add_versions();
  beta->set_name("v1beta1");
  beta->set_served(true);
  beta->set_deprecated(true);
  v1::CRDVersionState* ga = second->add_versions();
  ga->set_name("v1");
  ga->set_served(true);
  ga->set_storage(true);
  return history;
}

void AddReport(v1::ComputeStorageVersionAgreementRequest* request,
               absl::string_view id, absl::string_view encoding) {
  v1::ServerStorageVersion* report = request->add_storage_versions();
  report->set_apiserver_id(std::string(id));
  report->set_encoding_version(std::string(encoding));
  report->add_decodable_versions("apps/v1");
  report->add_decodable_versions("apps/v1beta2");
}

}  // namespace

std::string MethodPath(Rpc rpc) {
  return absl::StrCat("/", service::kPolicyServiceName, "/", RpcName(rpc));
}

std::unique_ptr<Message> NewRequest(Rpc rpc) {
  switch (rpc) {
    case Rpc::kGetFeature:
      return std::make_unique<v1::GetFeatureRequest>();
    case Rpc::kListFeatures:
      return std::make_unique<v1::ListFeaturesRequest>();
    case Rpc::kGetStorageVersion:
      return std::make_unique<v1::GetStorageVersionRequest>();
    case Rpc::kListAPIVersions:
      return std::make_unique<v1::ListAPIVersionsRequest>();
    case Rpc::kCheckSkew:
      return std::make_unique<v1::CheckSkewRequest>();
    case Rpc::kResolveVersions:
      return std::make_unique<v1::ResolveVersionsRequest>();
    case Rpc::kComputeStorageVersionAgreement:
      return std::make_unique<v1::ComputeStorageVersionAgreementRequest>();
    case Rpc::kPlanVersionRemoval:
      return std::make_unique<v1::PlanVersionRemovalRequest>();
    case Rpc::kPlanUpgrade:
      return std::make_unique<v1::PlanUpgradeRequest>();
    case Rpc::kLintCatalog:
      return std::make_unique<v1::LintCatalogRequest>();
    case Rpc::kScanObjects:
      return std::make_unique<v1::ScanObjectsRequest>();
    case Rpc::kEvaluate:
      return std::make_unique<v1::EvaluateRequest>();
    case Rpc::kGetCatalog:
      return std::make_unique<v1::GetCatalogRequest>();
    case Rpc::kListClients:
      return std::make_unique<v1::ListClientsRequest>();
    case Rpc::kListApiUsage:
      return std::make_unique<v1::ListApiUsageRequest>();
    case Rpc::kCheckCelExpression:
      return std::make_unique<v1::CheckCelExpressionRequest>();
    case Rpc::kWatchCatalog:
      return nullptr;
  }
  return nullptr;
}

std::unique_ptr<Message> NewResponse(Rpc rpc) {
  switch (rpc) {
    case Rpc::kGetFeature:
      return std::make_unique<v1::GetFeatureResponse>();
    case Rpc::kListFeatures:
      return std::make_unique<v1::ListFeaturesResponse>();
    case Rpc::kGetStorageVersion:
      return std::make_unique<v1::GetStorageVersionResponse>();
    case Rpc::kListAPIVersions:
      return std::make_unique<v1::ListAPIVersionsResponse>();
    case Rpc::kCheckSkew:
      return std::make_unique<v1::CheckSkewResponse>();
    case Rpc::kResolveVersions:
      return std::make_unique<v1::ResolveVersionsResponse>();
    case Rpc::kComputeStorageVersionAgreement:
      return std::make_unique<v1::ComputeStorageVersionAgreementResponse>();
    case Rpc::kPlanVersionRemoval:
      return std::make_unique<v1::PlanVersionRemovalResponse>();
    case Rpc::kPlanUpgrade:
      return std::make_unique<v1::PlanUpgradeResponse>();
    case Rpc::kLintCatalog:
      return std::make_unique<v1::LintCatalogResponse>();
    case Rpc::kScanObjects:
      return std::make_unique<v1::ScanObjectsResponse>();
    case Rpc::kEvaluate:
      return std::make_unique<v1::EvaluateResponse>();
    case Rpc::kGetCatalog:
      return std::make_unique<v1::GetCatalogResponse>();
    case Rpc::kListClients:
      return std::make_unique<v1::ListClientsResponse>();
    case Rpc::kListApiUsage:
      return std::make_unique<v1::ListApiUsageResponse>();
    case Rpc::kCheckCelExpression:
      return std::make_unique<v1::CheckCelExpressionResponse>();
    case Rpc::kWatchCatalog:
      return nullptr;
  }
  return nullptr;
}

grpc::Status CallStub(v1::CompatibilityPolicy::Stub& stub,
                      grpc::ClientContext* context, Rpc rpc,
                      const Message& request, Message* response) {
#define COMPATD_SOAK_CALL(Method)                                      \
  return stub.Method(context,                                          \
                     static_cast<const v1::Method##Request&>(request), \
                     static_cast<v1::Method##Response*>(response))
  switch (rpc) {
    case Rpc::kGetFeature:
      COMPATD_SOAK_CALL(GetFeature);
    case Rpc::kListFeatures:
      COMPATD_SOAK_CALL(ListFeatures);
    case Rpc::kGetStorageVersion:
      COMPATD_SOAK_CALL(GetStorageVersion);
    case Rpc::kListAPIVersions:
      COMPATD_SOAK_CALL(ListAPIVersions);
    case Rpc::kCheckSkew:
      COMPATD_SOAK_CALL(CheckSkew);
    case Rpc::kResolveVersions:
      COMPATD_SOAK_CALL(ResolveVersions);
    case Rpc::kComputeStorageVersionAgreement:
      COMPATD_SOAK_CALL(ComputeStorageVersionAgreement);
    case Rpc::kPlanVersionRemoval:
      COMPATD_SOAK_CALL(PlanVersionRemoval);
    case Rpc::kPlanUpgrade:
      COMPATD_SOAK_CALL(PlanUpgrade);
    case Rpc::kLintCatalog:
      COMPATD_SOAK_CALL(LintCatalog);
    case Rpc::kScanObjects:
      COMPATD_SOAK_CALL(ScanObjects);
    case Rpc::kEvaluate:
      COMPATD_SOAK_CALL(Evaluate);
    case Rpc::kGetCatalog:
      COMPATD_SOAK_CALL(GetCatalog);
    case Rpc::kListClients:
      COMPATD_SOAK_CALL(ListClients);
    case Rpc::kListApiUsage:
      COMPATD_SOAK_CALL(ListApiUsage);
    case Rpc::kCheckCelExpression:
      COMPATD_SOAK_CALL(CheckCelExpression);
    case Rpc::kWatchCatalog:
      break;  // a stream: not through this call
  }
#undef COMPATD_SOAK_CALL
  return grpc::Status(grpc::StatusCode::INTERNAL, "compatd-soak: unknown RPC");
}

bool IsAcceptedForWrongRequest(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return true;
    default:
      return false;
  }
}

bool IsAcceptedItemCode(int32_t code) {
  // An item is checked like a request of its own; its size is the batch's.
  return code != static_cast<int32_t>(grpc::StatusCode::OK) &&
         code != static_cast<int32_t>(grpc::StatusCode::RESOURCE_EXHAUSTED) &&
         IsAcceptedForWrongRequest(static_cast<grpc::StatusCode>(code));
}

namespace {

// GetFeature.
void AddFeatureCases(const CatalogFacts& facts, std::vector<ValidCase>* out) {
  using v1::GetFeatureRequest;
  using v1::GetFeatureResponse;
  const std::string gate(CatalogFacts::kSwitchedGate);
  std::vector<ValidCase>& cases = *out;
  cases.push_back(Valid<GetFeatureRequest, GetFeatureResponse>(
      Rpc::kGetFeature, 120, "WatchList at the catalog's versions",
      [](auto* r) { r->set_name("WatchList"); },
      [](const auto& r) {
        return Expect(
            r.enabled() && r.stage() == v1::STAGE_BETA && r.since() == "1.34",
            "WatchList is BETA since 1.34 and on at 1.36");
      },
      facts));
  cases.push_back(Valid<GetFeatureRequest, GetFeatureResponse>(
      Rpc::kGetFeature, 60, "WatchList at emulation 1.36",
      [](auto* r) {
        r->set_name("WatchList");
        r->mutable_versions()->set_emulation_version("1.36");
      },
      [](const auto& r) {
        return Expect(r.enabled() && r.versions().emulation_version() == "1.36",
                      "WatchList is on at emulation 1.36");
      },
      facts));
  cases.push_back(Valid<GetFeatureRequest, GetFeatureResponse>(
      Rpc::kGetFeature, 40, "WatchList at emulation 1.33",
      [](auto* r) {
        r->set_name("WatchList");
        r->mutable_versions()->set_emulation_version("1.33");
      },
      [](const auto& r) {
        return Expect(
            !r.enabled() && r.stage() == v1::STAGE_BETA && r.since() == "1.33",
            "WatchList is BETA default off at emulation 1.33");
      },
      facts));
  cases.push_back(Valid<GetFeatureRequest, GetFeatureResponse>(
      Rpc::kGetFeature, 40, "WatchList=false",
      [](auto* r) {
        r->set_name("WatchList");
        r->mutable_versions()->set_feature_gates("WatchList=false");
      },
      [](const auto& r) {
        return Expect(!r.enabled() && r.overridden() && r.default_enabled(),
                      "WatchList=false turns the gate off");
      },
      facts));
  cases.push_back(Valid<GetFeatureRequest, GetFeatureResponse>(
      Rpc::kGetFeature, 80, gate + " (on in variant B only)",
      [gate](auto* r) { r->set_name(gate); },
      [facts](const auto& r) {
        return CheckSwitchedGate(r.catalog_digest(), r.enabled(), facts);
      },
      facts));
  cases.push_back(Valid<GetFeatureRequest, GetFeatureResponse>(
      Rpc::kGetFeature, 20, gate + "=false overrides the cluster section",
      [gate](auto* r) {
        r->set_name(gate);
        r->mutable_versions()->set_feature_gates(gate + "=false");
      },
      [](const auto& r) {
        return Expect(!r.enabled() && r.overridden(),
                      "the request's gate wins over the cluster section");
      },
      facts));
}

// ListFeatures.
void AddListFeaturesCases(const CatalogFacts& facts,
                          std::vector<ValidCase>* out) {
  const std::string gate(CatalogFacts::kSwitchedGate);
  std::vector<ValidCase>& cases = *out;
  cases.push_back(Valid<v1::ListFeaturesRequest, v1::ListFeaturesResponse>(
      Rpc::kListFeatures, 20, "every gate", [](auto*) {},
      [facts](const auto& r) -> std::string {
        if (static_cast<uint32_t>(r.features_size()) != facts.features) {
          return absl::StrCat(r.features_size(), " gates, want ",
                              facts.features);
        }
        for (const v1::FeatureDecision& f : r.features()) {
          if (f.name() == CatalogFacts::kSwitchedGate) {
            return CheckSwitchedGate(r.catalog_digest(), f.enabled(), facts);
          }
        }
        return absl::StrCat(CatalogFacts::kSwitchedGate, " is not listed");
      },
      facts));
  cases.push_back(Valid<v1::ListFeaturesRequest, v1::ListFeaturesResponse>(
      Rpc::kListFeatures, 20, "kube-apiserver's gates",
      [](auto* r) { r->set_component("kube-apiserver"); },
      [](const auto& r) -> std::string {
        bool watch_list = false;
        for (const v1::FeatureDecision& f : r.features()) {
          if (f.component() != "kube-apiserver") {
            return absl::StrCat(f.name(), " of component ", f.component(),
                                " listed for kube-apiserver");
          }
          if (f.name() == "WatchList") watch_list = f.enabled();
        }
        return Expect(watch_list, "WatchList is listed and on");
      },
      facts));
}

// GetStorageVersion.
void AddStorageVersionCases(const CatalogFacts& facts,
                            std::vector<ValidCase>* out) {
  std::vector<ValidCase>& cases = *out;
  struct StorageCase {
    const char* group;
    const char* resource;
    const char* version;
    bool overridden;
    int weight;
  };
  for (const StorageCase& s :
       {StorageCase{"apps", "deployments", "v1", false, 80},
        StorageCase{"", "pods", "v1", false, 40},
        StorageCase{"coordination.k8s.io", "leasecandidates", "v1beta1", true,
                    20}}) {
    cases.push_back(
        Valid<v1::GetStorageVersionRequest, v1::GetStorageVersionResponse>(
            Rpc::kGetStorageVersion, s.weight,
            absl::StrCat(s.group, "/", s.resource),
            [s](auto* r) {
              r->set_group(s.group);
              r->set_resource(s.resource);
            },
            [s](const auto& r) {
              return Expect(
                  r.version() == s.version && r.overridden() == s.overridden,
                  absl::StrCat("stored as ", s.version,
                               s.overridden ? " (override)" : ""));
            },
            facts));
  }
}

// ListAPIVersions.
void AddApiVersionsCases(const CatalogFacts& facts,
                         std::vector<ValidCase>* out) {
  std::vector<ValidCase>& cases = *out;
  auto serves_deployments = [](const v1::ListAPIVersionsResponse& r) {
    for (const v1::APIGroupVersion& gv : r.group_versions()) {
      if (gv.group() != "apps" || gv.version() != "v1") continue;
      return std::find(gv.resources().begin(), gv.resources().end(),
                       "deployments") != gv.resources().end();
    }
    return false;
  };
  cases.push_back(
      Valid<v1::ListAPIVersionsRequest, v1::ListAPIVersionsResponse>(
          Rpc::kListAPIVersions, 40, "served group-versions", [](auto*) {},
          [serves_deployments](const auto& r) {
            return Expect(serves_deployments(r), "apps/v1 serves deployments");
          },
          facts));
  cases.push_back(
      Valid<v1::ListAPIVersionsRequest, v1::ListAPIVersionsResponse>(
          Rpc::kListAPIVersions, 20, "apps/v1=false",
          [](auto* r) {
            r->mutable_versions()->set_runtime_config("apps/v1=false");
          },
          [serves_deployments](const auto& r) {
            return Expect(!serves_deployments(r) && r.group_versions_size() > 0,
                          "apps/v1=false stops serving apps/v1");
          },
          facts));
}

// CheckSkew: the KEP-4330 table at binary 1.36, min-compatibility 1.35.
void AddSkewCases(const CatalogFacts& facts, std::vector<ValidCase>* out) {
  using v1::CheckSkewRequest;
  using v1::CheckSkewResponse;
  std::vector<ValidCase>& cases = *out;
  struct SkewCase {
    const char* component;
    const char* version;
    v1::SkewVerdict verdict;
    int weight;
  };
  for (const SkewCase& s :
       {SkewCase{"kubelet", "1.33", v1::SKEW_VERDICT_ALLOWED, 60},
        SkewCase{"kubelet", "1.30", v1::SKEW_VERDICT_TOO_OLD, 20},
        SkewCase{"kubelet", "1.37", v1::SKEW_VERDICT_TOO_NEW, 20},
        SkewCase{"kube-proxy", "v1.33.4", v1::SKEW_VERDICT_ALLOWED, 20},
        SkewCase{"kubectl", "1.37", v1::SKEW_VERDICT_ALLOWED, 20},
        SkewCase{"kube-controller-manager", "1.34", v1::SKEW_VERDICT_TOO_OLD,
                 20}}) {
    cases.push_back(Valid<CheckSkewRequest, CheckSkewResponse>(
        Rpc::kCheckSkew, s.weight, absl::StrCat(s.component, " ", s.version),
        [s](auto* r) {
          r->set_component(s.component);
          r->set_client_version(s.version);
        },
        [s](const auto& r) {
          return Expect(
              r.verdict() == s.verdict &&
                  r.allowed() == (s.verdict == v1::SKEW_VERDICT_ALLOWED),
              absl::StrCat("verdict ", v1::SkewVerdict_Name(s.verdict)));
        },
        facts));
  }
}

// ResolveVersions.
void AddResolveVersionsCases(const CatalogFacts& facts,
                             std::vector<ValidCase>* out) {
  std::vector<ValidCase>& cases = *out;
  cases.push_back(
      Valid<v1::ResolveVersionsRequest, v1::ResolveVersionsResponse>(
          Rpc::kResolveVersions, 40, "the catalog's versions", [](auto*) {},
          [](const auto& r) {
            return Expect(r.major() == "1" && r.minor() == "36" &&
                              r.emulation_minor() == "36" &&
                              r.min_compatibility_minor() == "35",
                          "binary 1.36, emulation 1.36, min-compatibility "
                          "1.35");
          },
          facts));
  cases.push_back(
      Valid<v1::ResolveVersionsRequest, v1::ResolveVersionsResponse>(
          Rpc::kResolveVersions, 20, "emulation 1.34",
          [](auto* r) { r->mutable_versions()->set_emulation_version("1.34"); },
          [](const auto& r) {
            return Expect(r.emulation_minor() == "34" &&
                              r.min_compatibility_minor() == "33",
                          "emulation 1.34, min-compatibility 1.33");
          },
          facts));
}

// ComputeStorageVersionAgreement.
void AddAgreementCases(const CatalogFacts& facts, std::vector<ValidCase>* out) {
  std::vector<ValidCase>& cases = *out;
  using AgreementRequest = v1::ComputeStorageVersionAgreementRequest;
  using AgreementResponse = v1::ComputeStorageVersionAgreementResponse;
  cases.push_back(Valid<AgreementRequest, AgreementResponse>(
      Rpc::kComputeStorageVersionAgreement, 20, "two servers agree",
      [](auto* r) {
        r->set_group("apps");
        r->set_resource("deployments");
        AddReport(r, "a", "apps/v1");
        AddReport(r, "b", "apps/v1");
      },
      [](const auto& r) {
        return Expect(r.common_encoding_version() == "apps/v1" &&
                          r.condition().status() == "True" &&
                          r.object_name() == "apps.deployments",
                      "common encoding version apps/v1");
      },
      facts));
  cases.push_back(Valid<AgreementRequest, AgreementResponse>(
      Rpc::kComputeStorageVersionAgreement, 10, "two servers disagree",
      [](auto* r) {
        AddReport(r, "a", "apps/v1");
        AddReport(r, "b", "apps/v1beta2");
      },
      [](const auto& r) {
        return Expect(r.common_encoding_version().empty() &&
                          r.condition().status() == "False",
                      "no common encoding version");
      },
      facts));
  cases.push_back(Valid<AgreementRequest, AgreementResponse>(
      Rpc::kComputeStorageVersionAgreement, 10, "a server left",
      [](auto* r) {
        AddReport(r, "a", "apps/v1");
        AddReport(r, "b", "apps/v1beta2");
        r->add_participants("a");
      },
      [](const auto& r) {
        return Expect(r.common_encoding_version() == "apps/v1" &&
                          r.ignored_apiserver_ids_size() == 1 &&
                          r.ignored_apiserver_ids(0) == "b",
                      "b is ignored, a's apps/v1 is common");
      },
      facts));
}

// PlanVersionRemoval with an inline history (the catalogs have no CRDs).
void AddVersionRemovalCases(const CatalogFacts& facts,
                            std::vector<ValidCase>* out) {
  std::vector<ValidCase>& cases = *out;
  cases.push_back(
      Valid<v1::PlanVersionRemovalRequest, v1::PlanVersionRemovalResponse>(
          Rpc::kPlanVersionRemoval, 20, "widgets v1beta1, inline history",
          [](auto* r) {
            r->set_crd("widgets.example.io");
            r->set_version("v1beta1");
            *r->mutable_history() = WidgetHistory();
          },
          [](const auto& r) {
            return Expect(r.earliest_unserve_release() == "v1.2" &&
                              r.earliest_removal_release() == "v1.5" &&
                              r.replacement() == "v1",
                          "unserve from v1.2, remove from v1.5, replaced by "
                          "v1");
          },
          facts));
}

// Evaluate: one of each kind.
void AddEvaluateKindsCases(const CatalogFacts& facts,
                           std::vector<ValidCase>* out) {
  using v1::CheckSkewRequest;
  const std::string gate(CatalogFacts::kSwitchedGate);
  std::vector<ValidCase>& cases = *out;
  cases.push_back(Valid<v1::EvaluateRequest, v1::EvaluateResponse>(
      Rpc::kEvaluate, 40, "one item of each kind",
      [gate](auto* r) {
        r->add_items()->mutable_get_feature()->set_name("WatchList");
        r->add_items()->mutable_get_feature()->set_name(gate);
        v1::CheckSkewRequest* skew = r->add_items()->mutable_check_skew();
        skew->set_component("kubelet");
        skew->set_client_version("1.33");
        v1::GetStorageVersionRequest* storage =
            r->add_items()->mutable_get_storage_version();
        storage->set_group("apps");
        storage->set_resource("deployments");
        r->add_items()->mutable_resolve_versions();
        r->add_items()->mutable_list_api_versions();
        v1::PlanVersionRemovalRequest* plan =
            r->add_items()->mutable_plan_version_removal();
        plan->set_crd("widgets.example.io");
        plan->set_version("v1beta1");
        *plan->mutable_history() = WidgetHistory();
        v1::ComputeStorageVersionAgreementRequest* agreement =
            r->add_items()->mutable_compute_storage_version_agreement();
        AddReport(agreement, "a", "apps/v1");
      },
      [facts](const auto& r) -> std::string {
        if (r.results_size() != 8) {
          return absl::StrCat(r.results_size(), " results for 8 items");
        }
        for (const v1::EvaluateResult& result : r.results()) {
          if (result.has_error()) {
            return absl::StrCat("item failed: ", result.error().message());
          }
        }
        if (!r.results(0).get_feature().enabled()) return "WatchList is off";
        std::string problem = CheckSwitchedGate(
            r.catalog_digest(), r.results(1).get_feature().enabled(), facts);
        if (!problem.empty()) return problem;
        if (r.results(2).check_skew().verdict() != v1::SKEW_VERDICT_ALLOWED) {
          return "kubelet 1.33 is not allowed";
        }
        if (r.results(3).get_storage_version().version() != "v1") {
          return "apps/deployments is not stored as v1";
        }
        if (r.results(4).resolve_versions().minor() != "36") {
          return "binary minor is not 36";
        }
        if (r.results(5).list_api_versions().group_versions_size() == 0) {
          return "no group-versions served";
        }
        if (r.results(6).plan_version_removal().earliest_removal_release() !=
            "v1.5") {
          return "widgets v1beta1 is not removable from v1.5";
        }
        if (r.results(7)
                .compute_storage_version_agreement()
                .common_encoding_version() != "apps/v1") {
          return "one server's apps/v1 is not common";
        }
        return "";
      },
      facts));
}

// Evaluate: a batch of 250 gate questions.
void AddEvaluateBatchCases(const CatalogFacts& facts,
                           std::vector<ValidCase>* out) {
  const std::string gate(CatalogFacts::kSwitchedGate);
  std::vector<ValidCase>& cases = *out;
  cases.push_back(Valid<v1::EvaluateRequest, v1::EvaluateResponse>(
      Rpc::kEvaluate, 5, "250 gate questions",
      [gate](auto* r) {
        for (int i = 0; i < 250; ++i) {
          r->add_items()->mutable_get_feature()->set_name(
              i % 2 == 0 ? "WatchList" : gate);
        }
      },
      [facts](const auto& r) -> std::string {
        if (r.results_size() != 250) {
          return absl::StrCat(r.results_size(), " results for 250 items");
        }
        for (int i = 0; i < 250; i += 2) {
          if (!r.results(i).get_feature().enabled()) return "WatchList is off";
          std::string problem = CheckSwitchedGate(
              r.catalog_digest(), r.results(i + 1).get_feature().enabled(),
              facts);
          if (!problem.empty()) return problem;
        }
        return "";
      },
      facts));
}

// GetCatalog, ListClients, LintCatalog (rarely: it checks the whole
// catalog).
void AddCatalogAndClientsCases(const CatalogFacts& facts,
                               std::vector<ValidCase>* out) {
  std::vector<ValidCase>& cases = *out;
  cases.push_back(Valid<v1::GetCatalogRequest, v1::GetCatalogResponse>(
      Rpc::kGetCatalog, 40, "the serving catalog", [](auto*) {},
      [facts](const auto& r) {
        return Expect(r.generation() >= 1 && r.digest() == r.catalog_digest() &&
                          r.counts().features() == facts.features &&
                          r.binary_version() == "1.36",
                      absl::StrCat("generation >= 1, ", facts.features,
                                   " gates, binary version 1.36"));
      },
      facts));
  cases.push_back(Valid<v1::ListClientsRequest, v1::ListClientsResponse>(
      Rpc::kListClients, 20, "every client", [](auto*) {},
      [facts](const auto& r) {
        return Expect(
            r.clients_size() <= facts.max_client_series,
            absl::StrCat("at most --max-client-series (",
                         facts.max_client_series, ") clients tracked"));
      },
      facts));
  // The audit-hostile class fills the rows (soak/audit_sender.h).
  cases.push_back(Valid<v1::ListApiUsageRequest, v1::ListApiUsageResponse>(
      Rpc::kListApiUsage, 5, "API use at risk", [](auto*) {},
      [facts](const auto& r) {
        return Expect(r.usage_size() <= facts.max_api_usage_rows + 1,
                      absl::StrCat("at most --max-api-usage-rows (",
                                   facts.max_api_usage_rows,
                                   ") rows and the one row \"other\""));
      },
      facts));
  cases.push_back(Valid<v1::LintCatalogRequest, v1::LintCatalogResponse>(
      Rpc::kLintCatalog, 1, "lint the serving catalog", [](auto*) {},
      [](const auto& r) {
        return Expect(
            r.findings_size() ==
                static_cast<int>(r.errors() + r.warnings() + r.exceptions()),
            "findings add up to errors + warnings + exceptions");
      },
      facts));
}

}  // namespace

std::vector<ValidCase> MakeValidCases(const CatalogFacts& facts) {
  std::vector<ValidCase> cases;
  AddFeatureCases(facts, &cases);
  AddListFeaturesCases(facts, &cases);
  AddStorageVersionCases(facts, &cases);
  AddApiVersionsCases(facts, &cases);
  AddSkewCases(facts, &cases);
  AddResolveVersionsCases(facts, &cases);
  AddAgreementCases(facts, &cases);
  AddVersionRemovalCases(facts, &cases);
  AddEvaluateKindsCases(facts, &cases);
  AddEvaluateBatchCases(facts, &cases);
  AddCatalogAndClientsCases(facts, &cases);
  return cases;
}

SoakRequest RandomWrongRequest(Rng& rng, int max_recv_message_bytes,
                               int max_evaluate_items) {
  // Every RPC with arguments (GetCatalog and LintCatalog have none).
  static constexpr std::array<Rpc, 11> kRpcs = {
      Rpc::kGetFeature,
      Rpc::kListFeatures,
      Rpc::kGetStorageVersion,
      Rpc::kListAPIVersions,
      Rpc::kCheckSkew,
      Rpc::kResolveVersions,
      Rpc::kComputeStorageVersionAgreement,
      Rpc::kPlanVersionRemoval,
      Rpc::kPlanUpgrade,
      Rpc::kEvaluate,
      Rpc::kListClients};
  SoakRequest request;
  request.rpc = Pick(rng, kRpcs);
  request.message = NewRequest(request.rpc);
  FillWrong(rng, request.rpc, request.message.get());
  request.label = "random";
  if (OneIn(rng, 4000)) {
    // A string over compatd's message limit (rarely: each is megabytes).
    auto* huge = new v1::GetFeatureRequest();
    huge->set_name(std::string(
        static_cast<size_t>(max_recv_message_bytes) + 1 + Below(rng, 1 << 20),
        'A'));
    request.rpc = Rpc::kGetFeature;
    request.message.reset(huge);
    request.label = "name over the message size limit";
  }
  const size_t size = request.message->ByteSizeLong();
  if (size > static_cast<size_t>(max_recv_message_bytes)) {
    request.exact_code = grpc::StatusCode::RESOURCE_EXHAUSTED;
  } else if (request.rpc == Rpc::kEvaluate) {
    const auto& evaluate =
        static_cast<const v1::EvaluateRequest&>(*request.message);
    if (evaluate.items_size() > max_evaluate_items) {
      request.exact_code = grpc::StatusCode::INVALID_ARGUMENT;
      request.label = absl::StrCat(evaluate.items_size(), " Evaluate items");
    } else {
      // Checks need the request: keep a copy (the message is sent as is).
      request.check = [copy = evaluate](const Message& response) {
        return CheckWrongEvaluate(
            copy, static_cast<const v1::EvaluateResponse&>(response));
      };
    }
  }
  return request;
}

std::string RandomGarbageMessage(Rng& rng, Rpc rpc) {
  switch (Below(rng, 5)) {
    case 0: {  // random bytes
      std::string bytes(Below(rng, 257), '\0');
      for (char& c : bytes) c = static_cast<char>(Below(rng, 256));
      return bytes;
    }
    case 1:
    case 2: {  // a request of this RPC, damaged
      std::unique_ptr<Message> message = NewRequest(rpc);
      FillWrong(rng, rpc, message.get());
      std::string bytes = message->SerializeAsString();
      const size_t edits = 1 + Below(rng, 4);
      for (size_t i = 0; i < edits; ++i) {
        const size_t at = bytes.empty() ? 0 : Below(rng, bytes.size());
        switch (Below(rng, 3)) {
          case 0:
            if (!bytes.empty()) {
              bytes[at] = static_cast<char>(bytes[at] ^ (1 << Below(rng, 8)));
            }
            break;
          case 1:
            bytes.insert(at, 1, static_cast<char>(Below(rng, 256)));
            break;
          default:
            bytes.resize(at);
            break;
        }
      }
      return bytes;
    }
    case 3: {  // another RPC's request
      const Rpc other = kUnaryRpcs[Below(rng, kRpcCount)];
      std::unique_ptr<Message> message = NewRequest(other);
      FillWrong(rng, other, message.get());
      return message->SerializeAsString();
    }
    default:
      return "";  // an empty message: every field at its default
  }
}

bool Decodes(Rpc rpc, const std::string& bytes) {
  return NewRequest(rpc)->ParseFromString(bytes);
}

std::string RandomUnknownMethod(Rng& rng) {
  while (true) {
    std::string path;
    switch (Below(rng, 5)) {
      case 0:
        path = absl::StrCat("/compatd.v1.CompatibilityPolicy/",
                            RandomIdentifier(rng, 30, /*lower=*/false));
        break;
      case 1:
        path = "/compatd.v1.CompatibilityPolicy/getfeature";
        break;
      case 2:
        path = "/compatd.v1.NoSuchService/GetFeature";
        break;
      case 3:
        path = "/grpc.health.v1.Health/NoSuchMethod";
        break;
      default:
        path = absl::StrCat("/", RandomIdentifier(rng, 20, /*lower=*/true), "/",
                            RandomIdentifier(rng, 20, /*lower=*/false));
        break;
    }
    bool served = false;
    for (Rpc rpc : kUnaryRpcs) served = served || path == MethodPath(rpc);
    if (!served) return path;
  }
}

std::string RandomUserAgent(Rng& rng) {
  static constexpr std::array<absl::string_view, 7> kPool = {
      "kube-apiserver/v1.36.0 (linux/amd64) kubernetes/abc1234",
      "kubelet/v1.33.2 (linux/amd64) kubernetes/0123456",
      "kubectl/v1.37.0 (darwin/arm64) kubernetes/fedcba9",
      "kube-controller-manager/v1.34.1 (linux/amd64) kubernetes/1111111",
      "kube-proxy/v1.30.0 (linux/amd64) kubernetes/2222222",
      "curl/8.0.1",
      ""};
  return OneIn(rng, 5) ? RandomHeaderText(rng, 60)
                       : std::string(Pick(rng, kPool));
}

void AddRandomIdentity(Rng& rng, grpc::ClientContext* context) {
  static constexpr std::array<std::pair<const char*, const char*>, 6> kPool = {
      {{"kubelet", "v1.33.1"},
       {"kubelet", "1.30"},
       {"kube-controller-manager", "v1.36.0"},
       {"kubectl", "v1.30.0"},
       {"kube-scheduler", "v1.35.2"},
       {"kube-proxy", "v1.37.0"}}};
  switch (Below(rng, 10)) {
    case 0:
    case 1:
    case 2: {
      const auto& [component, version] = Pick(rng, kPool);
      context->AddMetadata("x-kubernetes-component", component);
      context->AddMetadata("x-kubernetes-version", version);
      return;
    }
    case 3:  // garbage a hostile caller could send
      context->AddMetadata("x-kubernetes-component", RandomHeaderText(rng, 40));
      context->AddMetadata("x-kubernetes-version", RandomHeaderText(rng, 20));
      return;
    case 4:
      context->AddMetadata("x-kubernetes-version", RandomHeaderText(rng, 20));
      return;
    default:
      return;  // the channel's User-Agent identifies the caller
  }
}

std::string VariantA(const std::string& base) { return base; }

std::string VariantB(const std::string& base) {
  return absl::StrCat(base,
                      "\n# compatd-soak variant B: the same catalog with one "
                      "cluster flag set.\ncluster:\n  featureGates: {",
                      CatalogFacts::kSwitchedGate, ": true}\n");
}

std::string BadVariant(Rng& rng, const std::string& base, uint64_t serial,
                       std::string* kind) {
  const std::string mark = absl::StrCat("compatd-soak bad catalog ", serial);
  switch (OneIn(rng, 60) ? 7 : Below(rng, 7)) {
    case 0: {
      *kind = "truncated YAML";
      const size_t cut = base.size() / 4 + Below(rng, base.size() / 2);
      return absl::StrCat(base.substr(0, cut), "\n  - {name: [unterminated  # ",
                          mark, "\n");
    }
    case 1:
      *kind = "unknown key";
      return absl::StrCat(base, "\nsoakUnknownKey: ", serial, "\n");
    case 2: {
      *kind = "random bytes";
      std::string bytes = absl::StrCat("[\"", mark, "\", ");
      for (size_t n = 1 + Below(rng, 4096); n > 0; --n) {
        bytes.push_back(static_cast<char>(Below(rng, 256)));
      }
      return bytes;
    }
    case 3:
      *kind = "empty file";
      return "";
    case 4: {
      *kind = "bad binaryVersion";
      const size_t at = base.find("\nbinaryVersion:");
      if (at == std::string::npos) break;
      const size_t end = base.find('\n', at + 1);
      return absl::StrCat(base.substr(0, at + 1), "binaryVersion: \"banana-",
                          serial, "\"",
                          end == std::string::npos ? "" : base.substr(end));
    }
    case 5:
      *kind = "duplicate key";
      return absl::StrCat(base, "\nbinaryVersion: \"1.36\"  # ", mark, "\n");
    case 6:
      *kind = "refused cluster section";
      return absl::StrCat(base, "\ncluster:\n  emulationVersion: \"1.20\"  # ",
                          mark, "\n");
    default:
      break;
  }
  // Over catalog::kMaxCatalogBytes (16 MiB): refused before parsing.
  *kind = "over 16 MiB";
  std::string big = absl::StrCat("# ", mark, "\n");
  while (big.size() <= (size_t{16} << 20)) big.append(base);
  return big;
}

std::string CatalogDigest(absl::string_view bytes) {
  const std::array<uint8_t, 32> digest = engine::Sha256(bytes);
  return absl::StrCat(
      "sha256:",
      absl::BytesToHexString(absl::string_view(
          reinterpret_cast<const char*>(digest.data()), digest.size())));
}

}  // namespace compatd::soak
