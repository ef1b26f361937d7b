#pragma once

// Is an object's apiVersion/kind served at a set of versions? The rule the
// admission webhook (gateway/) applies to every object, transport-free so
// that other callers (a manifest scan) share it.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/query.h"
#include "runtime/serving_snapshot.h"

namespace compatd::api {

struct ObjectApiVerdict {
  enum class State {
    kServed,      // served, not deprecated at the emulation version
    kDeprecated,  // served, deprecated (a warning)
    kNotServed,   // known, but not served: removed, or off by default
    kUnknown,     // not a built-in API of the catalog (a CRD, an aggregated
                  // API): compatd has nothing to say
  };
  State state = State::kUnknown;
  std::string resource;     // plural, when known
  std::string deprecated;   // "1.33", when deprecated
  std::string removed;      // "1.36", when removal is planned or done
  std::string replacement;  // "group/version", when known
  std::string emulation;    // the emulation version decided at
  // One sentence naming the rule and the release, for kubectl's warnings and
  // AdmissionReview's status.message.
  std::string message;
  // Set when the catalog has a cluster.upgradeTarget at which this known API
  // is not served: one sentence for a warning (never a denial).
  std::string upgrade_target_message;
};

// `group` is "" for the core group. INVALID_ARGUMENT for versions the query
// cannot resolve (as every RPC). Pure and thread-safe.
absl::StatusOr<ObjectApiVerdict> CheckObjectApi(
    const runtime::ServingSnapshot& snapshot, const engine::VersionQuery& query,
    absl::string_view group, absl::string_view version, absl::string_view kind);

}  // namespace compatd::api
