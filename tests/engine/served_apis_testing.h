#pragma once

// Catalog builders and a ListServedAPIs wrapper shared by the tests of the API
// availability pipeline (api_availability_test, resource_config_test,
// deleted_kinds_test, runtime_config_test).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "engine/api_availability.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/query.h"
#include "engine/version.h"

namespace compatd::engine::served_apis_testing {

inline Version V(absl::string_view text) {
  return Version::Parse(text).value();
}

// A resource; introduced/removed "" = absent.
inline APIResource Res(std::string name, absl::string_view introduced = "",
                       absl::string_view removed = "") {
  APIResource r;
  r.kind = name;
  r.kind[0] = static_cast<char>(r.kind[0] - 'a' + 'A');
  r.resource = std::move(name);
  if (!introduced.empty()) r.introduced = V(introduced);
  if (!removed.empty()) r.removed = V(removed);
  return r;
}

inline APIGroupVersion GV(
    std::string group, std::string version, std::vector<APIResource> resources,
    std::optional<bool> enabled_by_default = std::nullopt) {
  APIGroupVersion gv;
  gv.group = std::move(group);
  gv.version = std::move(version);
  gv.resources = std::move(resources);
  gv.enabled_by_default = enabled_by_default;
  return gv;
}

inline Catalog MakeCatalog(absl::string_view binary,
                           std::vector<APIGroupVersion> apis) {
  Catalog catalog;
  catalog.binary_version = V(binary);
  catalog.apis = std::move(apis);
  return catalog;
}

inline EffectiveVersions EV(absl::string_view binary,
                            absl::string_view emulation) {
  EffectiveVersions v;
  v.binary = V(binary);
  v.emulation = V(emulation).ToMajorMinor();
  v.min_compatibility = v.emulation.SubtractMinor(1);
  return v;
}

struct Flags {
  Flags() = default;
  Flags(std::string runtime_config_in,
        std::optional<bool> efc_in = std::nullopt,
        std::optional<bool> rcfc_in = std::nullopt)
      : runtime_config(std::move(runtime_config_in)),
        efc(efc_in),
        rcfc(rcfc_in) {}

  std::string runtime_config;
  std::optional<bool> efc;
  std::optional<bool> rcfc;
};

inline absl::StatusOr<std::vector<ServedGroupVersion>> List(
    const Catalog& catalog, const EffectiveVersions& versions,
    const Flags& flags) {
  VersionQuery query;
  query.runtime_config = flags.runtime_config;
  query.emulation_forward_compatible = flags.efc;
  query.runtime_config_emulation_forward_compatible = flags.rcfc;
  return ListServedAPIs(catalog, versions, query);
}

// "group/version=r1,r2" per served group-version, in output order.
inline std::vector<std::string> Flatten(
    const std::vector<ServedGroupVersion>& in) {
  std::vector<std::string> out;
  for (const ServedGroupVersion& gv : in) {
    out.push_back(absl::StrCat(gv.group, "/", gv.version, "=",
                               absl::StrJoin(gv.resources, ",")));
  }
  return out;
}

// The core group, apps and extensions/v1beta1 (enabled by default), as in
// apiserver resourceconfig/helpers_test.go TestParseRuntimeConfig.
inline Catalog CoreAndApps() {
  return MakeCatalog("1.33",
                     {GV("", "v1", {Res("pods")}),
                      GV("apps", "v1", {Res("deployments"), Res("other")}),
                      GV("extensions", "v1beta1", {Res("ingresses")}, true)});
}

}  // namespace compatd::engine::served_apis_testing
