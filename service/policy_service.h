#pragma once

// compatd.v1.CompatibilityPolicy over gRPC's callback API: a thin adapter. Each
// unary method calls the matching api::PolicyHandlers function (all logic lives
// there), converts the status once, and reports to the RpcObserver. Handlers
// never block.

#include "api/handlers.h"
#include "api/rpcs.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "runtime/catalog_events.h"
#include "runtime/serving_snapshot.h"
#include "service/rpc_observer.h"

namespace compatd::service {

// v1::CompatibilityPolicy::CallbackService
class PolicyService final : public v1::CompatibilityPolicy::CallbackService {
 public:
  // All pointers must outlive the service; `observer` may be null.
  PolicyService(const api::PolicyHandlers* handlers,
                runtime::CatalogEvents* events,
                const runtime::SnapshotStore* store, RpcObserver* observer);

#define COMPATD_UNARY_OVERRIDE(Name)                                   \
  grpc::ServerUnaryReactor* Name(grpc::CallbackServerContext* context, \
                                 const v1::Name##Request* request,     \
                                 v1::Name##Response* response) override;
  COMPATD_UNARY_RPCS(COMPATD_UNARY_OVERRIDE)
#undef COMPATD_UNARY_OVERRIDE

  grpc::ServerWriteReactor<v1::GetCatalogResponse>* WatchCatalog(
      grpc::CallbackServerContext* context,
      const v1::WatchCatalogRequest* request) override;

 private:
  // Takes the call's one snapshot, tells the observer (which records the
  // client against that snapshot), runs the handler on it, finishes.
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* Unary(api::Rpc rpc,
                                  grpc::CallbackServerContext* context,
                                  const Request& request, Response* response,
                                  absl::Status (api::PolicyHandlers::*handler)(
                                      const runtime::ServingSnapshot&,
                                      const Request&, Response*) const);

  const api::PolicyHandlers* handlers_;
  runtime::CatalogEvents* events_;
  const runtime::SnapshotStore* store_;
  RpcObserver* observer_;
};

// The one absl -> grpc status conversion of the code base.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace compatd::service
