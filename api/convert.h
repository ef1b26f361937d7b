#pragma once

// Conversions between the API's protos and the engine's types. No gRPC here:
// the handlers (and `compatd eval`) use these without a server.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/patches.h"
#include "engine/query.h"
#include "engine/skew.h"
#include "engine/upgrade_plan.h"
#include "runtime/api_usage.h"
#include "runtime/client_tracker.h"
#include "runtime/serving_snapshot.h"

namespace compatd::api {

// Views into `context`; valid while it lives.
engine::VersionQuery ToQuery(const v1::VersionContext& context);

void FillVersions(const engine::EffectiveVersions& versions,
                  v1::EffectiveVersion* out);

v1::Stage ToProtoStage(engine::PreRelease stage);
// The wire form of the engine's verdict; nullopt (a client the skew policy
// cannot judge) is SKEW_VERDICT_UNKNOWN.
v1::SkewVerdict ToProtoVerdict(std::optional<engine::SkewVerdict> verdict);

// One ListClients entry.
// A ClientView's provenance (not its clients).
void FillClientView(const runtime::ClientView& view, v1::ClientView* out);

void FillObservedClient(const runtime::ObservedClientInfo& info,
                        v1::ObservedClient* out);

// One ListApiUsage row.
void FillApiUsage(const runtime::ApiUsageInfo& info, v1::ApiUsage* out);
v1::ApiUseVerdict ToProtoApiUseVerdict(engine::ApiUseVerdict verdict);

// PlanUpgrade's answer (besides the common fields): each item goes to its
// section and to its step.
void FillUpgradePlan(engine::UpgradePlan plan, v1::PlanUpgradeResponse* out);

// The answering catalog's digest, release and source, and how exact it is.
// The release is the patch `binary` names when the catalog knows that patch
// (engine/patches.h AnsweredRelease), else the catalog's own.
template <typename Response>
void FillCatalogIdentity(const engine::Catalog& catalog,
                         const engine::Version& binary, Response* response) {
  response->set_catalog_digest(catalog.digest);
  response->set_catalog_release(engine::AnsweredRelease(catalog, binary));
  response->set_catalog_source(catalog.source);
  response->set_catalog_exactness(
      std::string(engine::ExactnessName(catalog.exactness)));
  response->set_catalog_exactness_reason(catalog.exactness_reason);
}

// The google.rpc.Status form of an error (Evaluate's per-item errors).
void ToRpcStatus(const absl::Status& status, google::rpc::Status* out);

// "INVALID_ARGUMENT", "NOT_FOUND", ... (the canonical code names).
std::string CodeName(absl::StatusCode code);

// Every response carries the versions it was answered at, a reason, the
// snapshot's generation, and the catalog that answered: its digest, the
// release it describes (line and patch) and its source.
// This form leaves the reason to the caller (decisions that write their own
// reason straight into the response).
template <typename Response>
void FillCommon(const runtime::ServingLine& line,
                const engine::EffectiveVersions& versions, Response* response) {
  FillVersions(versions, response->mutable_versions());
  response->set_catalog_generation(line.generation);
  FillCatalogIdentity(*line.catalog, versions.binary, response);
}
template <typename Response>
void FillCommon(const runtime::ServingLine& snapshot,
                const engine::EffectiveVersions& versions, std::string reason,
                Response* response) {
  FillCommon(snapshot, versions, response);
  response->set_reason(std::move(reason));
}

}  // namespace compatd::api
