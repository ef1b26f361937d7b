#include "gateway/capi_extension.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "cluster/profile.h"
#include "engine/api_names.h"
#include "engine/catalog.h"
#include "engine/version.h"
#include "gateway/json.h"
#include "gateway/ondemand.h"
#include "simdjson.h"

namespace compatd::gateway {
namespace {

namespace dom = simdjson::dom;

// Debian's abseil has its own string_view; simdjson speaks std's.
absl::string_view A(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
std::string_view S(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

constexpr absl::string_view kSettingsAccepted =
    "featureGates, runtimeConfig, featureGatesVariable, "
    "runtimeConfigVariable, kubeadmControlPlane, checks.flags, "
    "checks.clients, checks.apis, checks.storage, blockWith, "
    "retryAfterSeconds, storageMigrations, each optionally prefixed with a "
    "handler's name and a dot "
    "(\"before-control-plane-upgrade.checks.clients\")";

constexpr absl::string_view kKnownSettings[] = {
    "featureGates",         "runtimeConfig",
    "featureGatesVariable", "runtimeConfigVariable",
    "kubeadmControlPlane",  "checks.flags",
    "checks.clients",       "checks.apis",
    "checks.storage",       "blockWith",
    "retryAfterSeconds",    "storageMigrations"};

// At most this many blockers (or warnings) are named in a message; the rest
// are counted. Cluster API shows the message in the Cluster's conditions.
constexpr size_t kNamedItems = 3;

const CapiHandler* FindHandler(absl::string_view path) {
  for (const CapiHandler& handler : kCapiHandlers) {
    if (handler.path == path) return &handler;
  }
  return nullptr;
}

// What one call answers.
struct Answer {
  bool success = true;
  // The metrics' verdict: "success", "retry", "blocked", "invalid".
  std::string verdict = "success";
  std::string message;
  int retry_after_seconds = 0;
  std::vector<std::string> control_plane_upgrades;
  std::vector<std::string> workers_upgrades;
};

Answer Invalid(std::string message) {
  Answer answer;
  answer.success = false;
  answer.verdict = "invalid";
  answer.message = std::move(message);
  return answer;
}

// The request, as far as compatd reads it.
struct HookRequest {
  std::map<std::string, std::string> settings;
  bool has_cluster = false;
  std::string cluster_name;
  std::string cluster_namespace;
  std::map<std::string, std::string> annotations;
  // spec.topology.variables: name -> the value (a DOM element of `doc`).
  std::map<std::string, dom::element> variables;
  // The version fields by their JSON names.
  std::map<std::string, std::string> versions;
  std::vector<std::string> control_plane_upgrades;
  std::vector<std::string> workers_upgrades;
};

std::string TypeName(dom::element_type type) {
  switch (type) {
    case dom::element_type::ARRAY:
      return "an array";
    case dom::element_type::OBJECT:
      return "an object";
    case dom::element_type::STRING:
      return "a string";
    case dom::element_type::BOOL:
      return "a boolean";
    case dom::element_type::NULL_VALUE:
      return "null";
    default:
      return "a number";
  }
}

absl::Status WrongType(absl::string_view field, dom::element value,
                       absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": expected ", expected, ", got ", TypeName(value.type())));
}

// [{"version":"v1.35.4"}, ...] (UpgradeStepInfo).
absl::Status ReadSteps(absl::string_view field, dom::element value,
                       std::vector<std::string>* out) {
  if (value.is_null()) return absl::OkStatus();
  dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    return WrongType(field, value, "an array of {\"version\": ...}");
  }
  size_t i = 0;
  for (dom::element step : array) {
    const std::string where = absl::StrCat(field, "[", i++, "]");
    dom::object object;
    if (step.get_object().get(object) != simdjson::SUCCESS) {
      return WrongType(where, step, "an object {\"version\": ...}");
    }
    std::string_view version;
    if (object["version"].get_string().get(version) != simdjson::SUCCESS ||
        version.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".version: required, a Kubernetes version"));
    }
    out->emplace_back(version);
  }
  return absl::OkStatus();
}

absl::Status ReadStringMap(absl::string_view field, dom::element value,
                           std::map<std::string, std::string>* out) {
  if (value.is_null()) return absl::OkStatus();
  dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return WrongType(field, value, "an object of strings");
  }
  for (dom::key_value_pair pair : object) {
    std::string_view text;
    if (pair.value.get_string().get(text) != simdjson::SUCCESS) {
      return WrongType(absl::StrCat(field, ".", A(pair.key)), pair.value,
                       "a string");
    }
    (*out)[std::string(pair.key)] = std::string(text);
  }
  return absl::OkStatus();
}

// The Cluster (cluster.x-k8s.io/v1beta2 Cluster, as cleanupCluster sends
// it): metadata.name (required), namespace, annotations and
// spec.topology.variables; the rest is not read.
absl::Status ReadCluster(dom::element value, HookRequest* request) {
  dom::object cluster;
  if (value.get_object().get(cluster) != simdjson::SUCCESS) {
    return WrongType("cluster", value, "a Cluster object");
  }
  request->has_cluster = true;
  dom::object metadata;
  if (cluster["metadata"].get_object().get(metadata) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        "cluster.metadata: required, the Cluster's metadata (name, "
        "namespace)");
  }
  std::string_view text;
  if (metadata["name"].get_string().get(text) != simdjson::SUCCESS ||
      text.empty()) {
    return absl::InvalidArgumentError(
        "cluster.metadata.name: required, the Cluster's name");
  }
  request->cluster_name = std::string(text);
  if (metadata["namespace"].get_string().get(text) == simdjson::SUCCESS) {
    request->cluster_namespace = std::string(text);
  }
  dom::element annotations;
  if (metadata["annotations"].get(annotations) == simdjson::SUCCESS) {
    COMPATD_RETURN_IF_ERROR(ReadStringMap("cluster.metadata.annotations",
                                          annotations, &request->annotations));
  }
  dom::array variables;
  if (cluster.at_pointer("/spec/topology/variables")
          .get_array()
          .get(variables) == simdjson::SUCCESS) {
    size_t i = 0;
    for (dom::element variable : variables) {
      std::string_view name;
      if (variable["name"].get_string().get(name) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cluster.spec.topology.variables[", i, "].name: required"));
      }
      dom::element v;
      if (variable["value"].get(v) == simdjson::SUCCESS) {
        request->variables[std::string(name)] = v;
      }
      ++i;
    }
  }
  return absl::OkStatus();
}

// The hook's version fields: required ones, then optional ones.
struct VersionFields {
  std::vector<absl::string_view> required;
  std::vector<absl::string_view> optional;
  bool steps = false;  // controlPlaneUpgrades and workersUpgrades
};

VersionFields FieldsOf(absl::string_view hook) {
  if (hook == "GenerateUpgradePlan") {
    return {{"fromControlPlaneKubernetesVersion", "toKubernetesVersion"},
            {"fromWorkersKubernetesVersion"},
            false};
  }
  if (absl::StartsWith(hook, "Before")) {
    return {{"fromKubernetesVersion", "toKubernetesVersion"}, {}, true};
  }
  if (hook == "AfterClusterUpgrade") return {{"kubernetesVersion"}, {}, false};
  return {{"kubernetesVersion"}, {}, true};
}

// Reads `body` as the request of `hook` ("Discovery" or a handler's hook).
// `parser` owns what `request` points into.
absl::Status ReadRequest(dom::parser& parser, const std::string& body,
                         absl::string_view hook, HookRequest* request) {
  dom::element root;
  if (const auto error = parser.parse(body).get(root); error) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the request is not JSON: ", simdjson::error_message(error)));
  }
  dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return WrongType("the request", root, absl::StrCat("a ", hook, "Request"));
  }
  std::string_view api_version;
  std::string_view kind;
  // Absent or not strings: empty, refused below.
  if (object["apiVersion"].get_string().get(api_version) != simdjson::SUCCESS) {
    api_version = {};
  }
  if (object["kind"].get_string().get(kind) != simdjson::SUCCESS) kind = {};
  const std::string expected_kind = absl::StrCat(hook, "Request");
  if (A(api_version) != kCapiHooksApiVersion || A(kind) != expected_kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected apiVersion ", kCapiHooksApiVersion, " and kind ",
        expected_kind, " on this path, got apiVersion ",
        JsonQuote(A(api_version)), " and kind ", JsonQuote(A(kind))));
  }
  if (hook == "Discovery") return absl::OkStatus();
  dom::element value;
  if (object["settings"].get(value) == simdjson::SUCCESS) {
    COMPATD_RETURN_IF_ERROR(
        ReadStringMap("settings", value, &request->settings));
  }
  if (object["cluster"].get(value) != simdjson::SUCCESS || value.is_null()) {
    return absl::InvalidArgumentError(
        "cluster: required, the Cluster the hook is called for");
  }
  COMPATD_RETURN_IF_ERROR(ReadCluster(value, request));
  const VersionFields fields = FieldsOf(hook);
  for (const bool required : {true, false}) {
    for (absl::string_view field :
         required ? fields.required : fields.optional) {
      std::string_view text;
      if (object[S(field)].get(value) != simdjson::SUCCESS || value.is_null()) {
        if (required) {
          return absl::InvalidArgumentError(absl::StrCat(
              field, ": required, a Kubernetes version (e.g. v1.35.4)"));
        }
        continue;
      }
      if (value.get_string().get(text) != simdjson::SUCCESS) {
        return WrongType(field, value, "a string");
      }
      if (text.empty() && required) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": required, a Kubernetes version (e.g. v1.35.4)"));
      }
      request->versions[std::string(field)] = std::string(text);
    }
  }
  if (fields.steps) {
    if (object["controlPlaneUpgrades"].get(value) == simdjson::SUCCESS) {
      COMPATD_RETURN_IF_ERROR(ReadSteps("controlPlaneUpgrades", value,
                                        &request->control_plane_upgrades));
    }
    if (object["workersUpgrades"].get(value) == simdjson::SUCCESS) {
      COMPATD_RETURN_IF_ERROR(
          ReadSteps("workersUpgrades", value, &request->workers_upgrades));
    }
  }
  return absl::OkStatus();
}

// A Cluster API version: semver ("v1.35.4", the "v" optional).
absl::StatusOr<engine::Version> ParseCapiVersion(absl::string_view field,
                                                 absl::string_view text) {
  absl::StatusOr<engine::Version> version =
      engine::Version::ParseSemantic(text);
  if (!version.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " ", JsonQuote(text),
                     " is not a semantic version: expected vMAJOR.MINOR.PATCH "
                     "as Cluster API writes it, e.g. v1.35.4"));
  }
  return version;
}

std::string WithV(const engine::Version& version) {
  return absl::StrCat("v", version.ToString());
}

// The handler's settings: "<handler>.<key>" over "<key>".
class Settings {
 public:
  Settings(const std::map<std::string, std::string>& all,
           absl::string_view handler)
      : all_(all), handler_(handler) {}

  // Unknown keys (with or without a handler's prefix).
  absl::Status Check() const {
    for (const auto& [key, value] : all_) {
      absl::string_view bare = key;
      for (const CapiHandler& handler : kCapiHandlers) {
        if (absl::ConsumePrefix(&bare, absl::StrCat(handler.name, "."))) break;
      }
      if (std::find(std::begin(kKnownSettings), std::end(kKnownSettings),
                    bare) == std::end(kKnownSettings)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "settings[", JsonQuote(key),
            "] is not a setting compatd knows; accepted: ", kSettingsAccepted));
      }
    }
    return absl::OkStatus();
  }

  // The value and the key it came from, or nullopt.
  std::optional<std::pair<std::string, std::string>> Get(
      absl::string_view key) const {
    const std::string own = absl::StrCat(handler_, ".", key);
    if (auto it = all_.find(own); it != all_.end()) {
      return std::make_pair(own, it->second);
    }
    if (auto it = all_.find(std::string(key)); it != all_.end()) {
      return std::make_pair(std::string(key), it->second);
    }
    return std::nullopt;
  }

  // One of `accepted` (the first is the default).
  absl::StatusOr<std::string> Choice(
      absl::string_view key, std::vector<absl::string_view> accepted) const {
    auto value = Get(key);
    if (!value.has_value()) return std::string(accepted.front());
    for (absl::string_view a : accepted) {
      if (value->second == a) return value->second;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "settings[", JsonQuote(value->first), "] is ", JsonQuote(value->second),
        "; accepted: ", absl::StrJoin(accepted, ", ")));
  }

  absl::StatusOr<int> Seconds(absl::string_view key, int fallback) const {
    auto value = Get(key);
    if (!value.has_value()) return fallback;
    int seconds = 0;
    if (!absl::SimpleAtoi(value->second, &seconds) || seconds < 1 ||
        seconds > 86400) {
      return absl::InvalidArgumentError(absl::StrCat(
          "settings[", JsonQuote(value->first), "] is ",
          JsonQuote(value->second), "; accepted: seconds, 1 to 86400"));
    }
    return seconds;
  }

 private:
  const std::map<std::string, std::string>& all_;
  absl::string_view handler_;
};

// The cluster's kube-apiserver flags as the settings give them.
struct ClusterFlags {
  std::vector<std::string> feature_gates;
  std::vector<std::string> runtime_config;
  std::vector<std::string> sources;  // "settings.kubeadmControlPlane", ...
};

// A topology variable's value as a flag: a string as it is, an object of
// booleans or strings as "key=value" pairs.
absl::StatusOr<std::string> VariableFlag(absl::string_view variable,
                                         dom::element value) {
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) {
    return std::string(text);
  }
  dom::object object;
  if (value.get_object().get(object) == simdjson::SUCCESS) {
    std::vector<std::string> pairs;
    for (dom::key_value_pair pair : object) {
      bool flag = false;
      if (pair.value.get_bool().get(flag) == simdjson::SUCCESS) {
        pairs.push_back(
            absl::StrCat(A(pair.key), "=", flag ? "true" : "false"));
      } else if (pair.value.get_string().get(text) == simdjson::SUCCESS) {
        pairs.push_back(absl::StrCat(A(pair.key), "=", A(text)));
      } else {
        return WrongType(
            absl::StrCat("topology variable ", variable, ".", A(pair.key)),
            pair.value, "a boolean or a string");
      }
    }
    return absl::StrJoin(pairs, ",");
  }
  return WrongType(absl::StrCat("topology variable ", variable), value,
                   "a string in kube-apiserver's flag syntax or an object "
                   "of booleans");
}

absl::StatusOr<ClusterFlags> ReadClusterFlags(const Settings& settings,
                                              const HookRequest& request) {
  ClusterFlags flags;
  if (auto kcp = settings.Get("kubeadmControlPlane"); kcp.has_value()) {
    absl::StatusOr<cluster::ClusterProfile> profile =
        cluster::ReadClusterProfile(kcp->second,
                                    absl::StrCat("settings.", kcp->first));
    if (!profile.ok()) return profile.status();
    if (profile->input_kind != "Cluster API KubeadmControlPlane") {
      return absl::InvalidArgumentError(absl::StrCat(
          "settings[", JsonQuote(kcp->first), "] is a ", profile->input_kind,
          "; expected a KubeadmControlPlane (controlplane.cluster.x-k8s.io)"));
    }
    if (profile->current.feature_gates.given()) {
      flags.feature_gates.push_back(profile->current.feature_gates.value);
    }
    if (profile->current.runtime_config.given()) {
      flags.runtime_config.push_back(profile->current.runtime_config.value);
    }
    flags.sources.push_back(absl::StrCat("the KubeadmControlPlane in settings[",
                                         JsonQuote(kcp->first), "]"));
  }
  for (const auto& [setting, out] :
       {std::make_pair("featureGatesVariable", &flags.feature_gates),
        std::make_pair("runtimeConfigVariable", &flags.runtime_config)}) {
    auto name = settings.Get(setting);
    if (!name.has_value()) continue;
    auto it = request.variables.find(name->second);
    if (it == request.variables.end()) continue;  // not set on this Cluster
    absl::StatusOr<std::string> value = VariableFlag(name->second, it->second);
    if (!value.ok()) return value.status();
    out->push_back(*std::move(value));
    flags.sources.push_back(
        absl::StrCat("the Cluster's topology variable ", name->second));
  }
  for (const auto& [setting, out] :
       {std::make_pair("featureGates", &flags.feature_gates),
        std::make_pair("runtimeConfig", &flags.runtime_config)}) {
    auto value = settings.Get(setting);
    if (!value.has_value()) continue;
    out->push_back(value->second);
    flags.sources.push_back(
        absl::StrCat("settings[", JsonQuote(value->first), "]"));
  }
  return flags;
}

// The exactness clause of the lines a path goes through: "" when all are
// EXACT, else "; 1.37 data is PROVISIONAL (reason)".
std::string ExactnessNote(const engine::CatalogSet& lines, uint64_t major,
                          uint64_t from_minor, uint64_t to_minor) {
  std::vector<std::string> notes;
  for (uint64_t minor = from_minor; minor <= to_minor; ++minor) {
    const engine::Catalog* catalog =
        lines.Find(engine::Version::MajorMinor(major, minor));
    if (catalog != nullptr &&
        catalog->exactness == engine::Exactness::kProvisional) {
      notes.push_back(absl::StrCat(catalog->binary_version.MajorMinorString(),
                                   " data is PROVISIONAL (",
                                   catalog->exactness_reason, ")"));
    }
  }
  return notes.empty() ? "" : absl::StrCat("; ", absl::StrJoin(notes, "; "));
}

// The lines between `from` and `to` (both included) compatd has no catalog
// of, as a Failure message; empty when it has them all.
std::string MissingLines(const engine::CatalogSet& lines,
                         const engine::Version& from,
                         const engine::Version& to) {
  std::vector<std::string> missing;
  for (uint64_t minor = from.minor(); minor <= to.minor(); ++minor) {
    if (lines.Find(engine::Version::MajorMinor(from.major(), minor)) ==
        nullptr) {
      missing.push_back(absl::StrCat(from.major(), ".", minor));
    }
  }
  if (missing.empty()) return "";
  return absl::StrCat(
      "compatd has no facts of Kubernetes ", absl::StrJoin(missing, ", "),
      " (it has ", lines.line_names(), "), so it cannot vouch for a path from ",
      WithV(from), " to ", WithV(to),
      ": give compatd a catalog of that line (--catalog) or plan this "
      "upgrade without it");
}

// from -> to must go forward within one major.
absl::Status CheckForward(absl::string_view from_field,
                          const engine::Version& from,
                          absl::string_view to_field,
                          const engine::Version& to) {
  if (from.major() != to.major()) {
    return absl::InvalidArgumentError(
        absl::StrCat(from_field, " ", WithV(from), " and ", to_field, " ",
                     WithV(to), " are of different major versions"));
  }
  if (to.Compare(from) < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(to_field, " ", WithV(to), " is older than ", from_field,
                     " ", WithV(from),
                     ": an upgrade goes forward (Kubernetes does not "
                     "support downgrades of the control plane)"));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsCapiPath(absl::string_view path) {
  return absl::StartsWith(path, kCapiPathPrefix);
}

absl::string_view CapiRoute(absl::string_view path) {
  if (path == kCapiDiscoveryPath) return kCapiDiscoveryPath;
  if (const CapiHandler* handler = FindHandler(path); handler != nullptr) {
    return handler->path;
  }
  return kCapiPathPrefix;
}

CapiExtension::CapiExtension(const api::PolicyHandlers* handlers,
                             const runtime::ServiceMetrics* metrics,
                             runtime::CapiVerdicts* verdicts)
    : handlers_(handlers), metrics_(metrics), verdicts_(verdicts) {}

namespace {

// The plan's blocking items of each section, sorted by the settings into
// blockers and warnings.
struct Findings {
  std::vector<std::string> blockers;
  std::vector<std::string> warnings;
};

absl::string_view CheckOf(absl::string_view section) {
  if (section == "flags" || section == "feature_gates") return "checks.flags";
  if (section == "clients") return "checks.clients";
  if (section == "apis") return "checks.apis";
  return "checks.storage";
}

// "v1.35.4 -> v1.36.0: --feature-gates StructuredAuthorizationConfiguration=
// true (...): remove it ...".
std::string DescribeItem(const v1::UpgradeItem& item) {
  std::string action = item.action();
  absl::StripTrailingAsciiWhitespace(&action);
  return absl::StrCat("at ", item.release(), ": ", item.subject(), " [",
                      item.rule(), "]", action.empty() ? "" : ": ", action);
}

std::string NameSome(const std::vector<std::string>& items) {
  std::vector<std::string> named;
  for (size_t i = 0; i < items.size() && i < kNamedItems; ++i) {
    named.push_back(absl::StrCat("- ", items[i]));
  }
  std::string text = absl::StrJoin(named, "\n");
  if (items.size() > kNamedItems) {
    absl::StrAppend(&text, "\n- and ", items.size() - kNamedItems,
                    " more (compatd plan shows every one)");
  }
  return text;
}

// A VersionContext of a binary at Kubernetes' defaults: emulation the
// binary's release, min-compatibility one less (KEP-4330's default), as
// Cluster API runs kube-apiserver unless its flags say otherwise. Explicit,
// so that the cluster profile's versions (of the cluster's own line) do not
// leak into the ends of a plan between other lines.
void AtDefaults(const engine::Version& binary, v1::VersionContext* context) {
  context->set_binary_version(binary.ToString());
  context->set_emulation_version(binary.MajorMinorString());
  if (binary.minor() > 0) {
    context->set_min_compatibility_version(
        binary.SubtractMinor(1).MajorMinorString());
  }
}

// CheckSkew of a kubelet at `kubelet` against kube-apiserver `apiserver`.
absl::StatusOr<v1::CheckSkewResponse> KubeletSkew(
    const api::PolicyHandlers& handlers,
    const runtime::ServingSnapshot& snapshot, const engine::Version& kubelet,
    const engine::Version& apiserver) {
  v1::CheckSkewRequest request;
  request.set_component("kubelet");
  request.set_client_version(kubelet.ToString());
  AtDefaults(apiserver, request.mutable_versions());
  v1::CheckSkewResponse response;
  COMPATD_RETURN_IF_ERROR(handlers.CheckSkew(snapshot, request, &response));
  return response;
}

// The workers' steps of a plan whose control plane goes through `cp`: a
// step only where a kubelet at the workers' version would be out of skew
// with the control plane's next version. Returns the message's part on them.
absl::StatusOr<std::string> WorkerSteps(
    const api::PolicyHandlers& handlers,
    const runtime::ServingSnapshot& snapshot, const std::string& from_text,
    const engine::Version& from, const std::string& to_text,
    const engine::Version& to, const std::optional<engine::Version>& workers,
    const std::vector<engine::Version>& cp, Answer* answer) {
  std::string workers_note = "workers: upgraded once, at the end";
  if (workers.has_value() && workers->Compare(to) != 0) {
    engine::Version kubelet = *workers;
    std::string previous = from_text;
    engine::Version previous_version = from;
    std::vector<std::string> reasons;
    for (size_t i = 0; i < cp.size(); ++i) {
      if (cp[i].minor() <= kubelet.minor()) {
        previous = answer->control_plane_upgrades[i];
        previous_version = cp[i];
        continue;
      }
      absl::StatusOr<v1::CheckSkewResponse> skew =
          KubeletSkew(handlers, snapshot, kubelet, cp[i]);
      if (!skew.ok()) return skew.status();
      if (!skew->allowed()) {
        answer->workers_upgrades.push_back(previous);
        reasons.push_back(absl::StrCat(
            previous, " before the control plane goes to ",
            answer->control_plane_upgrades[i], " (", skew->reason(), ")"));
        kubelet = previous_version;
      }
      previous = answer->control_plane_upgrades[i];
      previous_version = cp[i];
    }
    if (!answer->workers_upgrades.empty()) {
      answer->workers_upgrades.push_back(to_text);
      workers_note = absl::StrCat("workers: ", absl::StrJoin(reasons, "; "),
                                  ", then ", to_text);
    } else {
      workers_note = absl::StrCat(
          "workers: from ", WithV(*workers), " once, at the end (a kubelet ",
          WithV(*workers), " stays within the skew of every step)");
    }
  }
  return workers_note;
}

// The request's `from_field` and toKubernetesVersion, read as Cluster API
// writes them and checked to go forward.
absl::StatusOr<std::pair<engine::Version, engine::Version>> ForwardEnds(
    const HookRequest& request, absl::string_view from_field) {
  COMPATD_ASSIGN_OR_RETURN(
      engine::Version from,
      ParseCapiVersion(from_field,
                       request.versions.at(std::string(from_field))));
  COMPATD_ASSIGN_OR_RETURN(
      engine::Version to,
      ParseCapiVersion("toKubernetesVersion",
                       request.versions.at("toKubernetesVersion")));
  COMPATD_RETURN_IF_ERROR(
      CheckForward(from_field, from, "toKubernetesVersion", to));
  return std::make_pair(std::move(from), std::move(to));
}

// The request's fromWorkersKubernetesVersion (absent or empty: none),
// checked to go forward to `to`.
absl::StatusOr<std::optional<engine::Version>> WorkersFrom(
    const HookRequest& request, const engine::Version& to) {
  auto it = request.versions.find("fromWorkersKubernetesVersion");
  if (it == request.versions.end() || it->second.empty()) {
    return std::optional<engine::Version>();
  }
  COMPATD_ASSIGN_OR_RETURN(
      engine::Version parsed,
      ParseCapiVersion("fromWorkersKubernetesVersion", it->second));
  COMPATD_RETURN_IF_ERROR(CheckForward("fromWorkersKubernetesVersion", parsed,
                                       "toKubernetesVersion", to));
  return std::optional<engine::Version>(parsed);
}

Answer GenerateUpgradePlan(const api::PolicyHandlers& handlers,
                           const runtime::ServingSnapshot& snapshot,
                           const HookRequest& request) {
  const std::string& from_text =
      request.versions.at("fromControlPlaneKubernetesVersion");
  const std::string& to_text = request.versions.at("toKubernetesVersion");
  absl::StatusOr<std::pair<engine::Version, engine::Version>> ends =
      ForwardEnds(request, "fromControlPlaneKubernetesVersion");
  if (!ends.ok()) return Invalid(std::string(ends.status().message()));
  const engine::Version* from = &ends->first;
  const engine::Version* to = &ends->second;
  absl::StatusOr<std::optional<engine::Version>> workers =
      WorkersFrom(request, *to);
  if (!workers.ok()) return Invalid(std::string(workers.status().message()));
  const engine::CatalogSet& lines = *snapshot.catalogs;
  if (std::string missing = MissingLines(lines, *from, *to); !missing.empty()) {
    return Invalid(std::move(missing));
  }
  Answer answer;
  const bool same = from->Compare(*to) == 0 &&
                    from->pre_release() == to->pre_release() &&
                    from->build_metadata() == to->build_metadata();
  // The control plane: one version per minor, the last the target as given.
  std::vector<engine::Version> cp;
  if (!same) {
    for (uint64_t minor = from->minor() + 1; minor < to->minor(); ++minor) {
      const engine::Catalog* catalog =
          lines.Find(engine::Version::MajorMinor(from->major(), minor));
      // A catalog of a line without a patch ("1.36") describes X.Y.0 by
      // Kubernetes' comparison (a missing component counts as zero).
      const engine::Version release =
          catalog->binary_version.semver()
              ? catalog->binary_version
              : catalog->binary_version.ToMajorMinor().WithPatch(0);
      if (!release.pre_release().empty()) {
        return Invalid(absl::StrCat(
            "compatd's catalog of ", release.MajorMinorString(),
            " describes kube-apiserver ", release.ToString(),
            ", not a patch release, so compatd names no ",
            release.MajorMinorString(),
            " release to stop at: give it a catalog of a released ",
            release.MajorMinorString(), " patch (--catalog)"));
      }
      cp.push_back(release);
      answer.control_plane_upgrades.push_back(WithV(release));
    }
    cp.push_back(*to);
    answer.control_plane_upgrades.push_back(to_text);
  }
  absl::StatusOr<std::string> workers_note =
      WorkerSteps(handlers, snapshot, from_text, *from, to_text, *to, *workers,
                  cp, &answer);
  if (!workers_note.ok()) {
    return Invalid(std::string(workers_note.status().message()));
  }
  if (same) {
    answer.message = absl::StrCat("the control plane is at ", to_text,
                                  " already; ", *workers_note);
  } else {
    answer.message = absl::StrCat(
        "control plane: ", from_text, " -> ",
        absl::StrJoin(answer.control_plane_upgrades, " -> "),
        " (one minor at a time; each intermediate version is the patch "
        "release compatd has facts of); ",
        *workers_note,
        ExactnessNote(lines, from->major(), from->minor(), to->minor()));
  }
  return answer;
}

// The checks' modes: block, warn or off.
struct Modes {
  std::map<std::string, std::string> by_check;
  bool retry = false;
  int retry_after_seconds = 60;
};

absl::StatusOr<Modes> ReadModes(const Settings& settings) {
  Modes modes;
  for (absl::string_view check :
       {"checks.flags", "checks.clients", "checks.apis", "checks.storage"}) {
    COMPATD_ASSIGN_OR_RETURN(std::string mode,
                             settings.Choice(check, {"block", "warn", "off"}));
    modes.by_check[std::string(check)] = mode;
  }
  COMPATD_ASSIGN_OR_RETURN(std::string with,
                           settings.Choice("blockWith", {"failure", "retry"}));
  modes.retry = with == "retry";
  COMPATD_ASSIGN_OR_RETURN(modes.retry_after_seconds,
                           settings.Seconds("retryAfterSeconds", 60));
  return modes;
}

// The answer of a before-hook from its findings.
Answer Verdict(absl::string_view what, const Findings& findings,
               const Modes& modes, const std::string& checked) {
  Answer answer;
  if (findings.blockers.empty()) {
    answer.message =
        absl::StrCat("compatd: nothing blocks ", what, " (", checked, ")");
    if (!findings.warnings.empty()) {
      absl::StrAppend(&answer.message, "; warnings:\n",
                      NameSome(findings.warnings));
    }
    return answer;
  }
  answer.message =
      absl::StrCat("compatd blocks ", what, ": ", findings.blockers.size(),
                   findings.blockers.size() == 1 ? " blocker" : " blockers",
                   " (", checked, "):\n", NameSome(findings.blockers));
  if (modes.retry) {
    answer.verdict = "retry";
    answer.retry_after_seconds = modes.retry_after_seconds;
  } else {
    answer.success = false;
    answer.verdict = "blocked";
  }
  return answer;
}

// BeforeWorkersUpgrade: the kubelets at toKubernetesVersion against every
// control-plane version they meet until the workers' next step.
Answer WorkersCheck(const api::PolicyHandlers& handlers,
                    const runtime::ServingSnapshot& snapshot,
                    const HookRequest& request, const engine::Version& to,
                    const Modes& modes) {
  const std::string& to_text = request.versions.at("toKubernetesVersion");
  std::optional<engine::Version> next_workers;
  for (const std::string& text : request.workers_upgrades) {
    absl::StatusOr<engine::Version> v =
        ParseCapiVersion("workersUpgrades", text);
    if (!v.ok()) return Invalid(std::string(v.status().message()));
    if (v->Compare(to) > 0) {
      next_workers = *v;
      break;
    }
  }
  std::vector<std::pair<std::string, engine::Version>> control_plane = {
      {to_text, to}};
  for (const std::string& text : request.control_plane_upgrades) {
    absl::StatusOr<engine::Version> v =
        ParseCapiVersion("controlPlaneUpgrades", text);
    if (!v.ok()) return Invalid(std::string(v.status().message()));
    if (next_workers.has_value() && v->Compare(*next_workers) > 0) break;
    if (v->Compare(to) > 0) control_plane.emplace_back(text, *v);
  }
  const std::string mode = modes.by_check.at("checks.clients");
  Findings findings;
  for (const auto& [text, apiserver] : control_plane) {
    if (std::string missing =
            MissingLines(*snapshot.catalogs, apiserver, apiserver);
        !missing.empty()) {
      return Invalid(std::move(missing));
    }
    if (mode == "off") continue;
    absl::StatusOr<v1::CheckSkewResponse> skew =
        KubeletSkew(handlers, snapshot, to, apiserver);
    if (!skew.ok()) return Invalid(std::string(skew.status().message()));
    if (skew->allowed()) continue;
    (mode == "block" ? findings.blockers : findings.warnings)
        .push_back(absl::StrCat(
            "kubelet ", to_text, " [client-too-old] with kube-apiserver ", text,
            ": ", skew->reason(), ": add a workers step of at least ",
            skew->min_version(), " before the control plane goes to ", text,
            " (GenerateUpgradePlan's workersUpgrades)"));
  }
  return Verdict(
      absl::StrCat("the workers' upgrade to ", to_text), findings, modes,
      absl::StrCat("kubelet ", to_text, " against kube-apiserver ",
                   absl::StrJoin(control_plane, ", ",
                                 [](std::string* out, const auto& cp) {
                                   out->append(cp.first);
                                 })));
}

Answer BeforeUpgrade(const api::PolicyHandlers& handlers,
                     const runtime::ServingSnapshot& snapshot,
                     const CapiHandler& handler, const Settings& settings,
                     const HookRequest& request) {
  const std::string& from_text = request.versions.at("fromKubernetesVersion");
  const std::string& to_text = request.versions.at("toKubernetesVersion");
  absl::StatusOr<std::pair<engine::Version, engine::Version>> ends =
      ForwardEnds(request, "fromKubernetesVersion");
  if (!ends.ok()) return Invalid(std::string(ends.status().message()));
  const engine::Version* from = &ends->first;
  const engine::Version* to = &ends->second;
  absl::StatusOr<Modes> modes = ReadModes(settings);
  if (!modes.ok()) return Invalid(std::string(modes.status().message()));
  if (handler.hook == "BeforeWorkersUpgrade") {
    return WorkersCheck(handlers, snapshot, request, *to, *modes);
  }
  if (std::string missing = MissingLines(*snapshot.catalogs, *from, *to);
      !missing.empty()) {
    return Invalid(std::move(missing));
  }
  absl::StatusOr<ClusterFlags> flags = ReadClusterFlags(settings, request);
  if (!flags.ok()) return Invalid(std::string(flags.status().message()));
  v1::PlanUpgradeRequest plan_request;
  AtDefaults(*from, plan_request.mutable_from());
  AtDefaults(*to, plan_request.mutable_to());
  plan_request.mutable_from()->set_feature_gates(
      absl::StrJoin(flags->feature_gates, ","));
  plan_request.mutable_from()->set_runtime_config(
      absl::StrJoin(flags->runtime_config, ","));
  v1::PlanUpgradeResponse plan;
  if (absl::Status s = handlers.PlanUpgrade(snapshot, plan_request, &plan);
      !s.ok()) {
    return Invalid(absl::StrCat("compatd cannot plan ", from_text, " -> ",
                                to_text, ": ", s.message()));
  }
  Findings findings;
  const std::pair<absl::string_view,
                  const google::protobuf::RepeatedPtrField<v1::UpgradeItem>*>
      sections[] = {{"flags", &plan.flags()},
                    {"feature_gates", &plan.feature_gates()},
                    {"apis", &plan.apis()},
                    {"storage", &plan.storage()},
                    {"clients", &plan.clients()},
                    {"cel", &plan.cel()}};
  // An API that stops being served blocks only when something still calls
  // it (the audit events' rows the plan names); otherwise it is a warning.
  std::set<std::string> called;
  for (const v1::ApiUsage& usage : plan.api_usage()) {
    called.insert(engine::GroupVersionString(usage.group(), usage.version()));
  }
  for (const auto& [section, items] : sections) {
    const std::string& mode = modes->by_check.at(std::string(CheckOf(section)));
    if (mode == "off") continue;
    for (const v1::UpgradeItem& item : *items) {
      if (!item.blocking()) continue;
      const bool blocks = mode == "block" &&
                          (section != "apis" || called.count(item.subject()));
      (blocks ? findings.blockers : findings.warnings)
          .push_back(DescribeItem(item));
    }
  }
  const std::string checked = absl::StrCat(
      plan.steps_size(), " plan steps; flags from ",
      flags->sources.empty() ? std::string("compatd's cluster profile")
                             : absl::StrJoin(flags->sources, ", "),
      "; clients: ", plan.clients_checked(),
      ExactnessNote(*snapshot.catalogs, from->major(), from->minor(),
                    to->minor()));
  return Verdict(absl::StrCat(from_text, " -> ", to_text), findings, *modes,
                 checked);
}

// The plan of one control-plane step, `previous` -> `version`, from the
// cluster's flags (settings, the KubeadmControlPlane or the profile).
absl::StatusOr<v1::PlanUpgradeResponse> PlanStep(
    const api::PolicyHandlers& handlers,
    const runtime::ServingSnapshot& snapshot, const Settings& settings,
    const HookRequest& request, const engine::Version& previous,
    const engine::Version& version, const std::string& text) {
  if (std::string missing = MissingLines(*snapshot.catalogs, previous, version);
      !missing.empty()) {
    return absl::InvalidArgumentError(missing);
  }
  absl::StatusOr<ClusterFlags> flags = ReadClusterFlags(settings, request);
  if (!flags.ok()) return flags.status();
  v1::PlanUpgradeRequest plan_request;
  AtDefaults(previous, plan_request.mutable_from());
  AtDefaults(version, plan_request.mutable_to());
  plan_request.mutable_from()->set_feature_gates(
      absl::StrJoin(flags->feature_gates, ","));
  plan_request.mutable_from()->set_runtime_config(
      absl::StrJoin(flags->runtime_config, ","));
  v1::PlanUpgradeResponse plan;
  if (absl::Status s = handlers.PlanUpgrade(snapshot, plan_request, &plan);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("compatd cannot plan ", previous.MajorMinorString(),
                     " -> ", text, ": ", s.message()));
  }
  return plan;
}

Answer AfterControlPlaneUpgrade(const api::PolicyHandlers& handlers,
                                const runtime::ServingSnapshot& snapshot,
                                const Settings& settings,
                                const HookRequest& request) {
  const std::string& text = request.versions.at("kubernetesVersion");
  absl::StatusOr<engine::Version> version =
      ParseCapiVersion("kubernetesVersion", text);
  if (!version.ok()) return Invalid(std::string(version.status().message()));
  absl::StatusOr<std::string> mode =
      settings.Choice("storageMigrations", {"wait", "report"});
  if (!mode.ok()) return Invalid(std::string(mode.status().message()));
  absl::StatusOr<int> retry = settings.Seconds("retryAfterSeconds", 60);
  if (!retry.ok()) return Invalid(std::string(retry.status().message()));
  if (version->minor() == 0) {
    return Invalid(absl::StrCat("kubernetesVersion ", text,
                                ": compatd plans from a previous minor"));
  }
  const engine::Version previous =
      engine::Version::MajorMinor(version->major(), version->minor() - 1);
  absl::StatusOr<v1::PlanUpgradeResponse> plan =
      PlanStep(handlers, snapshot, settings, request, previous, *version, text);
  if (!plan.ok()) return Invalid(std::string(plan.status().message()));
  const std::string mm = version->MajorMinorString();
  Answer answer;
  if (plan->storage_migrations_size() == 0) {
    answer.message =
        absl::StrCat("compatd: no storage version changes from ",
                     previous.MajorMinorString(), " to ", mm,
                     ": no StorageVersionMigration needed",
                     ExactnessNote(*snapshot.catalogs, version->major(),
                                   previous.minor(), version->minor()));
    return answer;
  }
  std::vector<std::string> named;
  for (const v1::StorageMigration& m : plan->storage_migrations()) {
    named.push_back(absl::StrCat(
        m.api_version(), " StorageVersionMigration ", m.name(), ": ",
        m.resource(), m.group().empty() ? "" : ".", m.group(), " ",
        m.from_version(), " -> ", m.to_version(),
        m.needs().empty() ? "" : absl::StrCat(" (needs ", m.needs(), ")")));
  }
  const std::string cluster = absl::StrCat("-n ",
                                           request.cluster_namespace.empty()
                                               ? std::string("default")
                                               : request.cluster_namespace,
                                           " ", request.cluster_name);
  if (auto it = request.annotations.find(std::string(kMigratedAnnotation));
      it != request.annotations.end()) {
    absl::StatusOr<engine::Version> done = engine::Version::Parse(it->second);
    if (done.ok() && done->CompareMajorMinor(*version) == 0) {
      answer.message = absl::StrCat(
          "compatd: the ", plan->storage_migrations_size(),
          " storage migration(s) of ", mm, " are recorded done (annotation ",
          kMigratedAnnotation, "=", it->second, ")");
      return answer;
    }
  }
  answer.message = absl::StrCat(
      "compatd: the control plane is at ", text, "; ",
      plan->storage_migrations_size(),
      " StorageVersionMigration(s) rewrite objects still stored in older "
      "versions:\n",
      NameSome(named),
      "\nApply them in the workload cluster (compatd plan --from=",
      previous.MajorMinorString(), " --to=", mm,
      " -o migrations | kubectl apply -f -); once they are done: kubectl "
      "annotate cluster ",
      cluster, " ", kMigratedAnnotation, "=", text);
  if (*mode == "wait") {
    answer.verdict = "retry";
    answer.retry_after_seconds = *retry;
  }
  return answer;
}

Answer AfterUpgrade(const runtime::ServingSnapshot& snapshot,
                    const CapiHandler& handler, const HookRequest& request) {
  const std::string& text = request.versions.at("kubernetesVersion");
  absl::StatusOr<engine::Version> version =
      ParseCapiVersion("kubernetesVersion", text);
  if (!version.ok()) return Invalid(std::string(version.status().message()));
  Answer answer;
  const engine::Catalog* catalog = snapshot.catalogs->Find(*version);
  const std::string facts =
      catalog == nullptr
          ? absl::StrCat("compatd has no facts of ",
                         version->MajorMinorString())
          : absl::StrCat("compatd's facts of ", version->MajorMinorString(),
                         ": kube-apiserver ",
                         catalog->binary_version.ToString(), ", ",
                         engine::ExactnessName(catalog->exactness));
  if (handler.hook == "AfterWorkersUpgrade") {
    answer.message = absl::StrCat(
        "compatd: workers at ", text, "; remaining control plane steps: ",
        request.control_plane_upgrades.empty()
            ? std::string("none")
            : absl::StrJoin(request.control_plane_upgrades, ", "),
        "; workers steps: ",
        request.workers_upgrades.empty()
            ? std::string("none")
            : absl::StrJoin(request.workers_upgrades, ", "),
        " (", facts, ")");
  } else {
    answer.message =
        absl::StrCat("compatd: the cluster is at ", text, " (", facts, ")");
  }
  return answer;
}

Answer Decide(const api::PolicyHandlers& handlers,
              const runtime::ServingSnapshot& snapshot,
              const CapiHandler& handler, const Settings& settings,
              const HookRequest& request) {
  if (handler.hook == "GenerateUpgradePlan") {
    return GenerateUpgradePlan(handlers, snapshot, request);
  }
  if (absl::StartsWith(handler.hook, "Before")) {
    return BeforeUpgrade(handlers, snapshot, handler, settings, request);
  }
  if (handler.hook == "AfterControlPlaneUpgrade") {
    return AfterControlPlaneUpgrade(handlers, snapshot, settings, request);
  }
  return AfterUpgrade(snapshot, handler, request);
}

// The hook's response, in the field order of the Go types
// (api/runtime/hooks/v1alpha1).
std::string ResponseJson(absl::string_view hook, const Answer& answer,
                         bool discovery, const CapiHandler* handler) {
  std::string body = absl::StrCat(
      "{\"apiVersion\":", JsonQuote(kCapiHooksApiVersion), ",\"kind\":\"", hook,
      "Response\",\"status\":\"", answer.success ? "Success" : "Failure", "\"");
  if (!answer.message.empty()) {
    absl::StrAppend(&body, ",\"message\":", JsonQuote(answer.message));
  }
  if (discovery && answer.success) {
    absl::StrAppend(&body, ",\"handlers\":[");
    bool first = true;
    for (const CapiHandler& h : kCapiHandlers) {
      absl::StrAppend(&body, first ? "" : ",", "{\"name\":\"", h.name,
                      "\",\"requestHook\":{\"apiVersion\":\"",
                      kCapiHooksApiVersion, "\",\"hook\":\"", h.hook,
                      "\"},\"timeoutSeconds\":", h.timeout_seconds,
                      ",\"failurePolicy\":\"", h.failure_policy, "\"}");
      first = false;
    }
    absl::StrAppend(&body, "]");
  }
  if (handler != nullptr && handler->retry_response) {
    absl::StrAppend(&body,
                    ",\"retryAfterSeconds\":", answer.retry_after_seconds);
  }
  auto steps = [&body](absl::string_view field,
                       const std::vector<std::string>& versions) {
    if (versions.empty()) return;
    absl::StrAppend(&body, ",\"", field, "\":[");
    for (size_t i = 0; i < versions.size(); ++i) {
      absl::StrAppend(&body, i == 0 ? "" : ",",
                      "{\"version\":", JsonQuote(versions[i]), "}");
    }
    absl::StrAppend(&body, "]");
  };
  steps("controlPlaneUpgrades", answer.control_plane_upgrades);
  steps("workersUpgrades", answer.workers_upgrades);
  absl::StrAppend(&body, "}");
  return body;
}

// The hook's verdict in the metrics, the page's table of the last verdict
// per cluster, and (a Failure or a retry) the log.
void RecordVerdict(const runtime::ServiceMetrics* metrics,
                   runtime::CapiVerdicts* verdicts,
                   const HookRequest& hook_request, absl::string_view hook,
                   const Answer& answer) {
  const std::string cluster =
      hook_request.cluster_name.empty()
          ? std::string()
          : absl::StrCat(hook_request.cluster_namespace, "/",
                         hook_request.cluster_name);
  if (metrics != nullptr) metrics->RecordCapiHook(hook, answer.verdict);
  const auto version_of = [&](absl::string_view a, absl::string_view b) {
    auto it = hook_request.versions.find(std::string(a));
    if (it == hook_request.versions.end()) {
      it = hook_request.versions.find(std::string(b));
    }
    return it == hook_request.versions.end() ? std::string() : it->second;
  };
  const std::string from =
      version_of("fromKubernetesVersion", "fromControlPlaneKubernetesVersion");
  const std::string to = version_of("toKubernetesVersion", "kubernetesVersion");
  if (verdicts != nullptr && !cluster.empty()) {
    verdicts->Record(runtime::CapiVerdict{
        cluster, std::string(hook), answer.success ? "Success" : "Failure",
        answer.retry_after_seconds, from, to, answer.message, absl::Now()});
  }
  if (!answer.success || answer.retry_after_seconds > 0) {
    base::LogLimited(
        base::LogLevel::kWarning, absl::StrCat("capi-", hook),
        absl::StrCat(
            "Cluster API ", hook, " for cluster ",
            cluster.empty() ? "(unknown)" : cluster,
            answer.success ? ": Success, retry in " : ": Failure",
            answer.success ? absl::StrCat(answer.retry_after_seconds, "s") : "",
            " (", answer.verdict, "): ", answer.message));
  }
}

// An unknown path (404), a method other than POST (405) or no catalog yet
// (503): answered here, true. False: the call is the handler's.
bool RejectCall(const http::Request& request, bool discovery,
                const CapiHandler* handler,
                const runtime::ServingSnapshot* snapshot,
                http::Response* response) {
  if (!discovery && handler == nullptr) {
    std::vector<absl::string_view> paths = {kCapiDiscoveryPath};
    for (const CapiHandler& h : kCapiHandlers) paths.push_back(h.path);
    response->status = 404;
    response->body = StatusJson(absl::NotFoundError(absl::StrCat(
        request.path, ": no such Runtime Extension handler; compatd serves ",
        absl::StrJoin(paths, ", "))));
    base::LogLimited(base::LogLevel::kWarning, "capi-unknown-path",
                     absl::StrCat("Cluster API: ", request.method, " ",
                                  request.path, ": no such handler (404)"));
    return true;
  }
  if (request.method != "POST") {
    response->status = 405;
    response->headers.emplace_back("Allow", "POST");
    response->body = StatusJson(absl::InvalidArgumentError(
        absl::StrCat(request.path, " takes POST (Cluster API's Runtime SDK)")));
    return true;
  }
  if (snapshot == nullptr) {
    response->status = 503;
    response->body = StatusJson(absl::UnavailableError(
        "no catalog is loaded yet; Cluster API retries the call"));
    return true;
  }
  return false;
}

}  // namespace

void CapiExtension::Serve(const runtime::ServingSnapshot* snapshot,
                          const http::Request& request,
                          http::Response* response) const {
  const bool discovery = request.path == kCapiDiscoveryPath;
  const CapiHandler* handler = discovery ? nullptr : FindHandler(request.path);
  if (RejectCall(request, discovery, handler, snapshot, response)) return;
  const absl::string_view hook = discovery ? "Discovery" : handler->hook;
  thread_local dom::parser parser;
  const ParserLease lease(parser);
  HookRequest hook_request;
  absl::Status read = ReadRequest(parser, request.body, hook, &hook_request);
  Answer answer;
  if (!read.ok()) {
    answer = Invalid(std::string(read.message()));
  } else if (!discovery) {
    answer = Answer();
    const Settings settings(hook_request.settings, handler->name);
    if (absl::Status s = settings.Check(); !s.ok()) {
      answer = Invalid(std::string(s.message()));
    } else {
      answer = Decide(*handlers_, *snapshot, *handler, settings, hook_request);
    }
  }

  response->body = ResponseJson(hook, answer, discovery, handler);

  RecordVerdict(metrics_, verdicts_, hook_request, hook, answer);
}

}  // namespace compatd::gateway
