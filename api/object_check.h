#pragma once

// Is an object's apiVersion/kind served at a set of versions? The admission
// webhook's and the Gatekeeper provider's (gateway/) form of the one verdict,
// engine::JudgeApi (engine/api_verdict.h), at the versions of a request:
// the line's start-up there, then its API history.

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/api_verdict.h"
#include "engine/effective_version.h"
#include "engine/query.h"
#include "runtime/serving_snapshot.h"

namespace compatd::api {

struct ObjectApiVerdict {
  enum class State {
    kServed,      // served, not deprecated at the emulation version
    kDeprecated,  // served, deprecated (a warning)
    kNotServed,   // known, but not served: removed, or off by default
    kUnknown,     // not a built-in API of the line (a CRD, an aggregated
                  // API): compatd has nothing to say
  };
  // Why a kNotServed object is not served.
  enum class NotServed {
    kNone,
    kRemoved,        // removed by the emulation version
    kNotIntroduced,  // introduced after the emulation version
    kDisabled,       // off (by default or --runtime-config)
  };
  State state = State::kUnknown;
  NotServed not_served = NotServed::kNone;
  // engine::JudgeApi's state, which every surface reports the same.
  engine::ApiState verdict = engine::ApiState::kUnknown;
  std::string resource;     // plural, when known
  std::string deprecated;   // "1.33", when deprecated
  std::string removed;      // "1.36", when removal is planned or done
  std::string replacement;  // "group/version", when known
  // The replacement's kind (the same kind unless the catalog's apis or
  // apiHistory says otherwise: v1 Endpoints -> EndpointSlice); set with
  // `replacement`.
  std::string replacement_kind;
  std::string emulation;  // the emulation version decided at
  // One sentence naming the rule and the release, for kubectl's warnings and
  // AdmissionReview's status.message.
  std::string message;
  // Set when the catalog has a cluster.upgradeTarget at which this known API
  // is not served: one sentence for a warning (never a denial).
  std::string upgrade_target_message;
  // The same fact in parts, for callers that word it themselves (the
  // admission webhook's short warnings): whether the target does not serve
  // it, the target's emulation version, and why ("removed in Kubernetes
  // 1.25", "not enabled by default").
  bool target_not_served = false;
  std::string target_emulation;
  std::string target_why;
};

// The versions and the served resources one query resolves to: computed once,
// then used for many objects (a manifest scan). Borrows the line's derived
// answers when the query has no override; the snapshot must outlive it. The
// caller picked the line from the query's binary version
// (runtime::ServingSnapshot::Line).
struct ObjectApiContext {
  engine::EffectiveVersions versions;
  // ServedKey(group, version, resource) of every served resource: `own`, or
  // the snapshot's.
  const absl::flat_hash_set<std::string>* served = nullptr;
  absl::flat_hash_set<std::string> own;

  ObjectApiContext() = default;
  ObjectApiContext(const ObjectApiContext&) = delete;
  ObjectApiContext& operator=(const ObjectApiContext&) = delete;
};

// INVALID_ARGUMENT for versions or flags the query cannot resolve.
absl::Status ResolveObjectApiContext(const runtime::ServingLine& snapshot,
                                     const engine::VersionQuery& query,
                                     ObjectApiContext* context);

// The context as engine::JudgeApi's start-up (borrows its served set).
engine::ApiStartUp StartUpOf(const ObjectApiContext& context);

// CheckObjectApi against a resolved context. Pure and thread-safe.
ObjectApiVerdict CheckObjectApiIn(const engine::Catalog& catalog,
                                  const ObjectApiContext& context,
                                  absl::string_view group,
                                  absl::string_view version,
                                  absl::string_view kind);

// `group` is "" for the core group. INVALID_ARGUMENT for versions the query
// cannot resolve (as every RPC). Pure and thread-safe. The snapshot form picks
// the line from query.binary_version (INVALID_ARGUMENT for a line it has no
// catalog of).
absl::StatusOr<ObjectApiVerdict> CheckObjectApi(
    const runtime::ServingSnapshot& snapshot, const engine::VersionQuery& query,
    absl::string_view group, absl::string_view version, absl::string_view kind);
absl::StatusOr<ObjectApiVerdict> CheckObjectApi(
    const runtime::ServingLine& snapshot, const engine::VersionQuery& query,
    absl::string_view group, absl::string_view version, absl::string_view kind);

}  // namespace compatd::api
