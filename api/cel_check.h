#pragma once

// CheckCelExpression: one CEL expression against the answering binary's CEL
// environments (engine/cel_reader.h, engine/cel_environment.h,
// catalog/cel_environments.h).

#include "absl/status/status.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/cel_environment.h"
#include "engine/cel_reader.h"
#include "engine/effective_version.h"
#include "engine/query.h"
#include "runtime/serving_snapshot.h"

namespace compatd::api {

// The answer for resolved versions: the uses, whether NewExpressions at the
// min-compatibility version has them, and whether each release from binary - 1
// down to the min-compatibility version can read them back. INVALID_ARGUMENT
// for a binary line compatd holds no CEL environment for. An expression that
// does not parse is an answer (parses = false), not an error.
absl::Status AnswerCelCheck(const engine::EffectiveVersions& versions,
                            const v1::CheckCelExpressionRequest& request,
                            v1::CheckCelExpressionResponse* response);

// The handlers' form (api/handlers.cc): resolves the versions against the
// snapshot's catalog.
absl::Status Answer(const runtime::ServingLine& line,
                    const engine::VersionQuery& query,
                    const v1::CheckCelExpressionRequest& request,
                    v1::CheckCelExpressionResponse* response);

// PlanUpgrade's cel section: for each step that raises the min-compatibility
// version, the CEL libraries of the step's binary that enter NewExpressions
// (engine::CelLibrariesUnlocked), added to `plan->cel()` and to the step's
// items. Steps on binaries without a CEL environment in compatd add nothing.
void AddCelPlanItems(v1::PlanUpgradeResponse* plan);

// One use as the API reports it; `library` null when no library declares it.
void FillCelUse(const engine::CelUse& use, const engine::CelLibrary* library,
                v1::CelExpressionUse* out);

}  // namespace compatd::api
