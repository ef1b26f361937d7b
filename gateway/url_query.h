#pragma once

// The version parameters a webhook URL or a Gatekeeper key may carry.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"
#include "engine/query.h"

namespace compatd::gateway {

struct UrlVersions {
  std::string binary_version;
  std::string emulation_version;
  std::string min_compatibility_version;
  std::string runtime_config;
  std::string feature_gates;
  std::string mode = "warn";
  bool mode_set = false;  // mode given (not the default)
  // Feature gates named in the path form (lowercase, as a DNS-1123 segment
  // must be): {name, enabled}. Resolved against the catalog's gate names by
  // ResolvePathGates into feature_gates.
  std::vector<std::pair<std::string, bool>> path_gates;

  // Views into this object: keep it alive while the query is used.
  engine::VersionQuery Query() const;
};

// emulationVersion, binaryVersion, minCompatibilityVersion, runtimeConfig,
// featureGates and mode (warn|enforce); timeout (which kube-apiserver adds
// to every webhook call) is ignored. INVALID_ARGUMENT naming an unknown
// parameter or a bad mode.
absl::Status ParseUrlVersions(absl::string_view query, UrlVersions* out);

// The admission webhook's options as path segments after
// /admission/v1/validate, for kube-apiserver, which refuses a query in
// clientConfig.url and wants every segment of clientConfig.service.path to
// be a DNS-1123 subdomain (apiserver pkg/util/webhook/validation.go):
//
//   warn | enforce                     mode
//   emulation-MAJOR.MINOR              emulationVersion
//   min-compatibility-MAJOR.MINOR      minCompatibilityVersion
//   binary-MAJOR.MINOR[.PATCH]         binaryVersion
//   enable-api.VERSION[.GROUP]         runtimeConfig GROUP/VERSION=true
//   disable-api.VERSION[.GROUP]        runtimeConfig GROUP/VERSION=false
//   enable-gate.NAME                   featureGates Name=true (NAME in
//   disable-gate.NAME                  lowercase; matched without case)
//
// e.g. /admission/v1/validate/enforce/emulation-1.35. `segments` is the
// path after the prefix ("enforce/emulation-1.35"; a trailing slash is
// allowed, as kube-apiserver allows it). An option given twice, here or in
// the query too, is INVALID_ARGUMENT; so is an unknown segment, naming the
// grammar.
absl::Status ParseUrlPath(absl::string_view segments, UrlVersions* out);

// Options of the path form and of the query together: the path's first;
// an option set in both is INVALID_ARGUMENT.
absl::Status MergeUrlVersions(const UrlVersions& query, UrlVersions* path);

// Turns path_gates into feature_gates ("Name=true,...") with the catalog's
// spelling of each name; INVALID_ARGUMENT for a gate the catalog does not
// know.
absl::Status ResolvePathGates(const engine::Catalog& catalog, UrlVersions* out);

}  // namespace compatd::gateway
