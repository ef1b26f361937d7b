// Fuzzes the two flag syntaxes a request may carry, --feature-gates and
// --runtime-config: their parsers (engine/feature_gate_flags.h,
// engine/runtime_config.h) and then the decisions that validate them against
// the embedded Kubernetes 1.36 catalog (DecideFeatures, ListServedAPIs), which
// is what GetFeature/ListFeatures/ListAPIVersions run for a request's
// feature_gates and runtime_config fields.
//
// The whole input is used as both flags. Beyond "no crash, no sanitizer
// report":
//   - the two parsers' booleans (feature gates' error form and runtime config's
//     optional) agree: both are base::ParseGoBool;
//   - parsed gates are sorted by name, each name once, pointing into the input;
//   - after the legacy rewrite no "v1", "api/v1" or "api/legacy" key is left;
//   - TrimGoSpace returns a part of its input;
//   - a decision either succeeds or fails with INVALID_ARGUMENT and a message.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "base/go_strings.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/api_availability.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/feature_gate_flags.h"
#include "engine/features.h"
#include "engine/query.h"
#include "engine/runtime_config.h"
#include "fuzz/fuzz_check.h"

namespace {

namespace engine = compatd::engine;
namespace catalog = compatd::catalog;

const engine::Catalog& EmbeddedCatalog() {
  static const engine::Catalog* const catalog = [] {
    absl::StatusOr<std::unique_ptr<engine::Catalog>> parsed =
        catalog::ParseCatalog(compatd::catalog::EmbeddedCatalogYaml(),
                              compatd::catalog::EmbeddedCatalogSource());
    FUZZ_CHECK(parsed.ok(), "the embedded catalog does not load");
    return parsed->release();
  }();
  return *catalog;
}

bool Within(absl::string_view part, absl::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() &&
          part.data() + part.size() <= whole.data() + whole.size());
}

void CheckRejection(const absl::Status& status) {
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument,
             "a flag value failed with a code other than INVALID_ARGUMENT");
  FUZZ_CHECK(!status.message().empty(), "an error without message");
}

void CheckParsers(absl::string_view input) {
  const absl::StatusOr<bool> go_bool = engine::ParseGoBool(input);
  const std::optional<bool> rc_bool = engine::ParseRuntimeConfigBool(input);
  FUZZ_CHECK(go_bool.ok() == rc_bool.has_value(),
             "the two strconv.ParseBool ports disagree on acceptance");
  if (go_bool.ok()) {
    FUZZ_CHECK(*go_bool == *rc_bool, "the two ParseBool ports disagree");
  }

  FUZZ_CHECK(Within(compatd::base::TrimGoSpace(input), input),
             "TrimGoSpace returned text outside its input");

  const absl::StatusOr<std::vector<engine::FeatureGateFlag>> gates =
      engine::ParseFeatureGates(input);
  if (gates.ok()) {
    for (size_t i = 0; i < gates->size(); ++i) {
      FUZZ_CHECK(Within((*gates)[i].name, input), "a gate name not in input");
      if (i > 0) {
        FUZZ_CHECK((*gates)[i - 1].name < (*gates)[i].name,
                   "gates not sorted by name, or a name twice");
      }
    }
  } else {
    CheckRejection(gates.status());
  }

  engine::RuntimeConfigMap config = engine::ParseRuntimeConfigFlag(input);
  engine::NormalizeLegacyRuntimeConfigKeys(&config);
  for (const auto& [key, value] : config) {
    FUZZ_CHECK(key != "v1" && key != "api/v1" && key != "api/legacy" &&
                   !absl::StartsWith(key, "v1/") &&
                   !absl::StartsWith(key, "api/v1/"),
               "a legacy key survived NormalizeLegacyRuntimeConfigKeys");
  }
}

void CheckDecisions(absl::string_view input) {
  const engine::Catalog& catalog = EmbeddedCatalog();

  engine::VersionQuery gates_query;
  gates_query.feature_gates = input;
  const absl::StatusOr<engine::EffectiveVersions> versions =
      engine::ResolveEffectiveVersions(catalog, gates_query);
  FUZZ_CHECK(versions.ok(), "the catalog's own versions do not resolve");
  const auto features =
      engine::DecideFeatures(catalog, *versions, gates_query, "");
  if (features.ok()) {
    FUZZ_CHECK(features->size() >= catalog.features.size(),
               "ListFeatures lost gates");
  } else {
    CheckRejection(features.status());
  }

  engine::VersionQuery config_query;
  config_query.runtime_config = input;
  const auto served = engine::ListServedAPIs(catalog, *versions, config_query);
  if (!served.ok()) CheckRejection(served.status());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  EmbeddedCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  CheckParsers(input);
  CheckDecisions(input);
  return 0;
}
