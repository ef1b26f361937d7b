#pragma once

// The default catalog compiled into compatd: Kubernetes 1.36
// (catalog/kubernetes-1.36.yaml, generated from catalog/data/ by
// catalog/generate.py).

#include <vector>

#include "absl/strings/string_view.h"

namespace compatd::catalog {

// The YAML text of the embedded catalog.
absl::string_view EmbeddedCatalogYaml();

// The source name GetCatalog reports for it: "embedded:kubernetes-1.36".
absl::string_view EmbeddedCatalogSource();

// One embedded catalog: its source name ("embedded:kubernetes-1.36") and
// YAML text.
struct EmbeddedCatalog {
  absl::string_view name;
  absl::string_view yaml;
};

// Every embedded catalog, one per kube-apiserver release line, oldest first.
std::vector<EmbeddedCatalog> EmbeddedCatalogs();

}  // namespace compatd::catalog
