#pragma once

// How group/version/resource names are written, in one place.
//
//   GroupVersionString("apps", "v1")            "apps/v1"  (apiVersion form)
//   GroupVersionString("", "v1")                "v1"
//   GroupResourceString("apps", "deployments")  "deployments.apps"
//   GroupResourceString("", "pods")             "pods"     (kube-apiserver's
//                                               schema.GroupResource.String())
//   CatalogGroupResource("", "pods")            "core/pods" (the catalog's
//                                               storage override keys)

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace compatd::engine {

inline std::string GroupVersionString(absl::string_view group,
                                      absl::string_view version) {
  return group.empty() ? std::string(version)
                       : absl::StrCat(group, "/", version);
}

inline std::string GroupResourceString(absl::string_view group,
                                       absl::string_view resource) {
  return group.empty() ? std::string(resource)
                       : absl::StrCat(resource, ".", group);
}

inline std::string CatalogGroupResource(absl::string_view group,
                                        absl::string_view resource) {
  return absl::StrCat(group.empty() ? absl::string_view("core") : group, "/",
                      resource);
}

}  // namespace compatd::engine
