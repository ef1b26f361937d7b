#include "api/request_validation.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace compatd::api {
namespace {

constexpr absl::string_view kSubdomainGrammar =
    "a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', starting "
    "and ending with a letter or digit, at most 253 bytes";
constexpr absl::string_view kDns1035Grammar =
    "a DNS-1035 label: lowercase letters, digits and '-', starting with a "
    "letter and ending with a letter or digit, at most 63 bytes";

bool IsLowerAlnum(char c) {
  return absl::ascii_islower(c) || absl::ascii_isdigit(c);
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])? without the length bound.
bool IsLabelBody(absl::string_view value) {
  if (value.empty() || !IsLowerAlnum(value.front()) ||
      !IsLowerAlnum(value.back())) {
    return false;
  }
  for (char c : value) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// The value as it may appear in a message: C-escaped, so that control bytes
// and invalid UTF-8 cannot garble logs or the grpc-message header.
std::string Quoted(absl::string_view value) {
  return absl::StrCat("\"", absl::CHexEscape(value), "\"");
}

absl::Status TooLong(absl::string_view field, size_t size, size_t limit,
                     absl::string_view accepted) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %d bytes, over the limit of %d bytes; expected %s",
                      field, size, limit, accepted));
}

absl::Status CheckLength(absl::string_view field, absl::string_view value,
                         size_t limit, absl::string_view accepted) {
  if (value.size() > limit) {
    return TooLong(field, value.size(), limit, accepted);
  }
  return absl::OkStatus();
}

absl::Status CheckCount(absl::string_view field, int count) {
  if (count > kMaxRepeatedEntries) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d entries, over the limit of %d", field, count,
                        kMaxRepeatedEntries));
  }
  return absl::OkStatus();
}

// A name that must match `grammar` when not empty (emptiness, where it
// matters, is the handler's "required" check).
absl::Status CheckName(absl::string_view field, absl::string_view value,
                       bool (*matches)(absl::string_view),
                       absl::string_view grammar, absl::string_view example) {
  // Every request passes here: the message text is built only on error.
  if (value.size() > kMaxNameBytes) {
    return TooLong(field, value.size(), kMaxNameBytes,
                   absl::StrCat(grammar, " (e.g. ", example, ")"));
  }
  if (value.empty() || matches(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, " ", Quoted(value), ": not ", grammar, " (e.g. ", example, ")"));
}

absl::Status CheckGroup(absl::string_view field, absl::string_view value) {
  return CheckName(field, value, &IsDns1123Subdomain, kSubdomainGrammar,
                   "\"apps\", \"networking.k8s.io\"; \"\" is the core group");
}

absl::Status CheckResource(absl::string_view field, absl::string_view value) {
  return CheckName(
      field, value, &IsDns1035Label, kDns1035Grammar,
      "\"deployments\"; resources are lowercase plurals, not kinds");
}

absl::Status CheckComponent(absl::string_view field, absl::string_view value) {
  return CheckName(field, value, &IsComponentName,
                   "a component name: lowercase letters, digits, '-', '.' "
                   "and '/', starting and ending with a letter or digit",
                   "\"kubelet\", \"kube-apiserver\", \"component-base/logs\"");
}

absl::Status CheckApiVersion(absl::string_view field, absl::string_view value) {
  return CheckName(field, value, &IsApiVersion,
                   "an apiVersion: a DNS-1035 label version with an optional "
                   "DNS-1123 subdomain group and '/'",
                   "\"apps/v1\", \"v1\"");
}

absl::Status CheckVersion(absl::string_view field, absl::string_view value) {
  return CheckLength(field, value, kMaxVersionBytes,
                     "a version like \"1.36\" or \"v1.36.2\"");
}

std::string Child(absl::string_view parent, absl::string_view child) {
  return absl::StrCat(parent, ".", child);
}

std::string Index(absl::string_view field, int i) {
  return absl::StrCat(field, "[", i, "]");
}

absl::Status CheckRequestVersions(const v1::VersionContext& versions) {
  return ValidateVersionContext(versions);
}

}  // namespace

bool IsDns1123Label(absl::string_view value) {
  return value.size() <= 63 && IsLabelBody(value);
}

bool IsDns1123Subdomain(absl::string_view value) {
  if (value.empty() || value.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = value.find('.', start);
    if (!IsLabelBody(value.substr(start, dot - start))) return false;
    if (dot == absl::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsDns1035Label(absl::string_view value) {
  return value.size() <= 63 && IsLabelBody(value) &&
         absl::ascii_islower(value.front());
}

bool IsApiVersion(absl::string_view value) {
  const size_t slash = value.find('/');
  if (slash == absl::string_view::npos) return IsDns1035Label(value);
  return IsDns1123Subdomain(value.substr(0, slash)) &&
         IsDns1035Label(value.substr(slash + 1));
}

bool IsFeatureGateName(absl::string_view value) {
  if (value.empty() || !absl::ascii_isalpha(value.front())) return false;
  for (char c : value) {
    if (!absl::ascii_isalnum(c)) return false;
  }
  return true;
}

bool IsComponentName(absl::string_view value) {
  if (value.empty() || !IsLowerAlnum(value.front()) ||
      !IsLowerAlnum(value.back())) {
    return false;
  }
  for (char c : value) {
    if (!IsLowerAlnum(c) && c != '-' && c != '.' && c != '/') return false;
  }
  return true;
}

absl::Status ValidateVersionContext(const v1::VersionContext& versions,
                                    absl::string_view field) {
  // Every request passes here: compare the lengths first, and build the
  // field paths of the messages below only when one is over its limit.
  if (versions.binary_version().size() <= kMaxVersionBytes &&
      versions.emulation_version().size() <= kMaxVersionBytes &&
      versions.min_compatibility_version().size() <= kMaxVersionBytes &&
      versions.feature_gates().size() <= kMaxFlagStringBytes &&
      versions.runtime_config().size() <= kMaxFlagStringBytes) {
    return absl::OkStatus();
  }
  COMPATD_RETURN_IF_ERROR(
      CheckVersion(Child(field, "binary_version"), versions.binary_version()));
  COMPATD_RETURN_IF_ERROR(CheckVersion(Child(field, "emulation_version"),
                                       versions.emulation_version()));
  COMPATD_RETURN_IF_ERROR(
      CheckVersion(Child(field, "min_compatibility_version"),
                   versions.min_compatibility_version()));
  COMPATD_RETURN_IF_ERROR(CheckLength(
      Child(field, "feature_gates"), versions.feature_gates(),
      kMaxFlagStringBytes, "--feature-gates syntax, e.g. \"A=true,B=false\""));
  return CheckLength(Child(field, "runtime_config"), versions.runtime_config(),
                     kMaxFlagStringBytes,
                     "--runtime-config syntax, e.g. \"api/beta=true\"");
}

absl::Status ValidateRequest(const v1::GetFeatureRequest& request) {
  COMPATD_RETURN_IF_ERROR(CheckRequestVersions(request.versions()));
  return CheckName("name", request.name(), &IsFeatureGateName,
                   "a feature gate name: an ASCII letter followed by letters "
                   "and digits",
                   "\"WatchList\"");
}

absl::Status ValidateRequest(const v1::ListFeaturesRequest& request) {
  COMPATD_RETURN_IF_ERROR(CheckRequestVersions(request.versions()));
  return CheckComponent("component", request.component());
}

absl::Status ValidateRequest(const v1::GetStorageVersionRequest& request) {
  COMPATD_RETURN_IF_ERROR(CheckRequestVersions(request.versions()));
  COMPATD_RETURN_IF_ERROR(CheckGroup("group", request.group()));
  return CheckResource("resource", request.resource());
}

absl::Status ValidateRequest(const v1::ListAPIVersionsRequest& request) {
  return CheckRequestVersions(request.versions());
}

absl::Status ValidateRequest(const v1::CheckSkewRequest& request) {
  COMPATD_RETURN_IF_ERROR(CheckRequestVersions(request.versions()));
  COMPATD_RETURN_IF_ERROR(CheckComponent("component", request.component()));
  return CheckVersion("client_version", request.client_version());
}

absl::Status ValidateRequest(const v1::ResolveVersionsRequest& request) {
  return CheckRequestVersions(request.versions());
}

absl::Status ValidateRequest(
    const v1::ComputeStorageVersionAgreementRequest& request) {
  COMPATD_RETURN_IF_ERROR(CheckRequestVersions(request.versions()));
  COMPATD_RETURN_IF_ERROR(CheckGroup("group", request.group()));
  COMPATD_RETURN_IF_ERROR(CheckResource("resource", request.resource()));
  COMPATD_RETURN_IF_ERROR(
      CheckCount("storage_versions", request.storage_versions_size()));
  for (int i = 0; i < request.storage_versions_size(); ++i) {
    const v1::ServerStorageVersion& s = request.storage_versions(i);
    const std::string at = Index("storage_versions", i);
    COMPATD_RETURN_IF_ERROR(CheckName(
        Child(at, "apiserver_id"), s.apiserver_id(), &IsDns1123Subdomain,
        kSubdomainGrammar, "\"kube-apiserver-7f9c\""));
    COMPATD_RETURN_IF_ERROR(
        CheckApiVersion(Child(at, "encoding_version"), s.encoding_version()));
    COMPATD_RETURN_IF_ERROR(CheckCount(Child(at, "decodable_versions"),
                                       s.decodable_versions_size()));
    for (int j = 0; j < s.decodable_versions_size(); ++j) {
      COMPATD_RETURN_IF_ERROR(CheckApiVersion(
          Index(Child(at, "decodable_versions"), j), s.decodable_versions(j)));
    }
    COMPATD_RETURN_IF_ERROR(
        CheckCount(Child(at, "served_versions"), s.served_versions_size()));
    for (int j = 0; j < s.served_versions_size(); ++j) {
      COMPATD_RETURN_IF_ERROR(CheckApiVersion(
          Index(Child(at, "served_versions"), j), s.served_versions(j)));
    }
  }
  COMPATD_RETURN_IF_ERROR(
      CheckCount("participants", request.participants_size()));
  for (int i = 0; i < request.participants_size(); ++i) {
    COMPATD_RETURN_IF_ERROR(CheckName(
        Index("participants", i), request.participants(i), &IsDns1123Subdomain,
        kSubdomainGrammar, "\"kube-apiserver-7f9c\""));
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::PlanVersionRemovalRequest& request) {
  COMPATD_RETURN_IF_ERROR(CheckRequestVersions(request.versions()));
  constexpr absl::string_view kCrdExample = "\"clusters.cluster.x-k8s.io\"";
  constexpr absl::string_view kCrdVersionExample = "\"v1beta1\"";
  COMPATD_RETURN_IF_ERROR(CheckName("crd", request.crd(), &IsDns1123Subdomain,
                                    kSubdomainGrammar, kCrdExample));
  COMPATD_RETURN_IF_ERROR(CheckName("version", request.version(),
                                    &IsDns1035Label, kDns1035Grammar,
                                    kCrdVersionExample));
  if (!request.has_history()) return absl::OkStatus();
  const v1::CRDVersionHistory& history = request.history();
  COMPATD_RETURN_IF_ERROR(CheckName("history.name", history.name(),
                                    &IsDns1123Subdomain, kSubdomainGrammar,
                                    kCrdExample));
  COMPATD_RETURN_IF_ERROR(
      CheckCount("history.releases", history.releases_size()));
  for (int i = 0; i < history.releases_size(); ++i) {
    const v1::CRDReleaseVersions& release = history.releases(i);
    const std::string at = Index("history.releases", i);
    COMPATD_RETURN_IF_ERROR(
        CheckVersion(Child(at, "release"), release.release()));
    COMPATD_RETURN_IF_ERROR(
        CheckCount(Child(at, "versions"), release.versions_size()));
    for (int j = 0; j < release.versions_size(); ++j) {
      COMPATD_RETURN_IF_ERROR(
          CheckName(Child(Index(Child(at, "versions"), j), "name"),
                    release.versions(j).name(), &IsDns1035Label,
                    kDns1035Grammar, kCrdVersionExample));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::PlanUpgradeRequest& request) {
  COMPATD_RETURN_IF_ERROR(CheckRequestVersions(request.versions()));
  COMPATD_RETURN_IF_ERROR(ValidateVersionContext(request.from(), "from"));
  COMPATD_RETURN_IF_ERROR(ValidateVersionContext(request.to(), "to"));
  COMPATD_RETURN_IF_ERROR(CheckCount("clients", request.clients_size()));
  for (int i = 0; i < request.clients_size(); ++i) {
    const std::string at = Index("clients", i);
    const v1::PlanClient& client = request.clients(i);
    if (client.component().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ".component: required, e.g. \"kubelet\""));
    }
    COMPATD_RETURN_IF_ERROR(
        CheckComponent(Child(at, "component"), client.component()));
    if (client.version().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ".version: required, e.g. \"1.33\" or \"v1.33.2\""));
    }
    COMPATD_RETURN_IF_ERROR(
        CheckVersion(Child(at, "version"), client.version()));
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::ScanObjectsRequest& request) {
  COMPATD_RETURN_IF_ERROR(CheckRequestVersions(request.versions()));
  COMPATD_RETURN_IF_ERROR(CheckVersion("target", request.target()));
  COMPATD_RETURN_IF_ERROR(CheckCount("sources", request.sources_size()));
  for (int i = 0; i < request.sources_size(); ++i) {
    COMPATD_RETURN_IF_ERROR(CheckLength(
        Child(Index("sources", i), "name"), request.sources(i).name(),
        kMaxPathBytes, "a file name, e.g. \"chart/templates/deploy.yaml\""));
  }
  if (request.objects().empty() && request.sources_size() == 0) {
    return absl::InvalidArgumentError(
        "objects and sources are both empty: give the manifests to scan as "
        "YAML or JSON text in objects (e.g. \"apiVersion: apps/v1\\nkind: "
        "Deployment\\n...\") or as named sources[]");
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::GetCatalogRequest&) {
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::ListClientsRequest& request) {
  // The client tracker's own component grammar (engine/user_agent.h): what a
  // User-Agent or x-kubernetes-component can put there.
  return CheckName(
      "component", request.component(),
      [](absl::string_view value) {
        for (char c : value) {
          if (!absl::ascii_isalnum(c) &&
              absl::string_view("._+@:~-").find(c) == absl::string_view::npos) {
            return false;
          }
        }
        return true;
      },
      "a client component: ASCII letters, digits and ._+@:~-",
      "\"kubectl\", \"kube-controller-manager\"");
}

absl::Status ValidateRequest(const v1::ListApiUsageRequest& request) {
  v1::ListClientsRequest same;
  same.set_component(request.component());
  return ValidateRequest(same);
}

absl::Status ValidateRequest(const v1::EvaluateRequest& request,
                             const RequestLimits& limits) {
  if (request.items_size() > limits.max_evaluate_items) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "items: %d items, over the limit of %d per Evaluate call "
        "(--max-evaluate-items); split the batch",
        request.items_size(), limits.max_evaluate_items));
  }
  return CheckRequestVersions(request.versions());
}

absl::Status ValidateRequest(const v1::CheckCelExpressionRequest& request) {
  COMPATD_RETURN_IF_ERROR(CheckRequestVersions(request.versions()));
  if (request.expression().empty()) {
    return absl::InvalidArgumentError(
        "expression: required, e.g. \"isSemver(object.spec.version)\"");
  }
  return CheckLength("expression", request.expression(), kMaxCelExpressionBytes,
                     "one CEL expression, e.g. \"object.spec.replicas <= 5\"");
}

}  // namespace compatd::api
