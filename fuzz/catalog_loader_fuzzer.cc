// Fuzzes the catalog loader (YAML/JSON text -> strict schema walk -> semantic
// validation -> indexed engine::Catalog, catalog/catalog_loader.h), the input a
// user or a ConfigMap controls, and then every decision over a catalog it
// accepted: a catalog that loads must answer every question without crashing.
//
// Beyond "no crash, no sanitizer report, no hang":
//   - a rejection is INVALID_ARGUMENT with at least one error, every error has
//     a message and a line inside the file, sorted by line;
//   - an accepted catalog has a sha256 digest, features sorted by name and
//     findable, versions that resolve without a query, and for each emulation
//     version kube-apiserver accepts: ListFeatures, ListAPIVersions and the
//     storage version of every resource (FAILED_PRECONDITION only for
//     persisted: false), CheckSkew, every CRD version's removal plan, and lint.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "catalog/catalog_loader.h"
#include "catalog/yaml_to_proto.h"
#include "engine/api_availability.h"
#include "engine/catalog.h"
#include "engine/catalog_lint.h"
#include "engine/crd_removal.h"
#include "engine/effective_version.h"
#include "engine/features.h"
#include "engine/query.h"
#include "engine/skew.h"
#include "engine/storage_version.h"
#include "fuzz/fuzz_check.h"

namespace {

namespace engine = compatd::engine;
namespace catalog = compatd::catalog;

void CheckRejection(const absl::Status& status,
                    const catalog::CatalogErrors& errors,
                    absl::string_view input) {
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument,
             "a catalog rejected with a code other than INVALID_ARGUMENT");
  FUZZ_CHECK(!errors.errors.empty(), "a rejection without errors");
  FUZZ_CHECK(errors.errors.size() <= catalog::kMaxReportedErrors,
             "more errors listed than the bound");
  // YAML's line breaks (CR and NEL too), as libyaml numbers lines.
  const int lines = std::max(catalog::YamlLineCount(input), 1);
  int previous = 0;
  for (const catalog::CatalogError& error : errors.errors) {
    FUZZ_CHECK(!error.message.empty(), "an error without message");
    FUZZ_CHECK(error.line >= 0 && error.line <= lines,
               "an error line outside the file");
    FUZZ_CHECK(error.line >= previous, "errors not sorted by line");
    previous = error.line;
  }
}

void CheckStatus(const absl::Status& status) {
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument ||
                 status.code() == absl::StatusCode::kFailedPrecondition ||
                 status.code() == absl::StatusCode::kNotFound,
             "a decision failed with an unexpected code");
  FUZZ_CHECK(!status.message().empty(), "an error without message");
}

void AskEverything(const engine::Catalog& catalog,
                   const engine::VersionQuery& query) {
  const absl::StatusOr<engine::EffectiveVersions> versions =
      engine::ResolveEffectiveVersions(catalog, query);
  if (!versions.ok()) {
    CheckStatus(versions.status());
    return;
  }
  const auto features = engine::DecideFeatures(catalog, *versions, query, "");
  if (!features.ok()) {
    CheckStatus(features.status());
  } else {
    // Each decision writes its reason on demand from what it points at.
    for (const engine::FeatureDecision& d : *features) {
      FUZZ_CHECK(!d.Reason().empty(), "a feature decision without a reason");
    }
  }
  const auto served = engine::ListServedAPIs(catalog, *versions, query);
  if (!served.ok()) CheckStatus(served.status());
  for (const engine::APIGroupVersion& gv : catalog.apis) {
    for (const engine::APIResource& resource : gv.resources) {
      const auto storage = engine::DecideStorageVersion(
          catalog, *versions, gv.group, resource.resource);
      if (storage.ok()) continue;
      FUZZ_CHECK(
          storage.status().code() == absl::StatusCode::kFailedPrecondition &&
              !resource.persisted,
          "a catalog resource without a storage version");
    }
  }
  for (absl::string_view client : {"v1.36.0", "1.30", "v1.40.1", "x"}) {
    const auto skew = engine::CheckSkew(catalog, *versions, "kubelet", client);
    if (!skew.ok()) {
      CheckStatus(skew.status());
    } else {
      FUZZ_CHECK(absl::StartsWith(skew->Reason(), "kubelet "),
                 "a skew reason that does not name the component");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  catalog::CatalogErrors errors;
  absl::StatusOr<std::unique_ptr<engine::Catalog>> parsed =
      catalog::ParseCatalog(input, "fuzz.yaml", &errors);
  if (!parsed.ok()) {
    CheckRejection(parsed.status(), errors, input);
    return 0;
  }
  const engine::Catalog& catalog = **parsed;
  FUZZ_CHECK(absl::StartsWith(catalog.digest, "sha256:") &&
                 catalog.digest.size() == 7 + 64,
             "an accepted catalog without a sha256 digest");
  for (size_t i = 0; i < catalog.features.size(); ++i) {
    FUZZ_CHECK(
        catalog.FindFeature(catalog.features[i].name) == &catalog.features[i],
        "a feature the index does not find");
    if (i > 0) {
      FUZZ_CHECK(catalog.features[i - 1].name < catalog.features[i].name,
                 "features not sorted by name, or a name twice");
    }
  }
  const absl::StatusOr<engine::EffectiveVersions> defaults =
      engine::ResolveEffectiveVersions(catalog, engine::VersionQuery());
  FUZZ_CHECK(defaults.ok(),
             "an accepted catalog whose versions do not resolve");

  // The catalog's own versions, then each emulation version a few releases
  // back (kube-apiserver refuses those below its floor: INVALID_ARGUMENT).
  AskEverything(catalog, engine::VersionQuery());
  for (uint64_t back = 1; back <= 4; ++back) {
    const std::string emulation =
        catalog.binary_version.SubtractMinor(back).MajorMinorString();
    engine::VersionQuery query;
    query.emulation_version = emulation;
    AskEverything(catalog, query);
  }

  for (const engine::CRDHistory& crd : catalog.crds) {
    for (const engine::CRDRelease& release : crd.releases) {
      for (const engine::CRDVersion& version : release.versions) {
        const auto plan = engine::PlanCRDVersionRemoval(crd, version.name);
        if (!plan.ok()) CheckStatus(plan.status());
      }
    }
  }

  const engine::LintReport report = engine::LintCatalog(catalog);
  FUZZ_CHECK(report.errors + report.warnings + report.exceptions ==
                 static_cast<int>(report.findings.size()),
             "lint counts do not add up to its findings");
  return 0;
}
