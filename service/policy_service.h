#pragma once

// compatd.v1.CompatibilityPolicy over gRPC's callback API: a thin adapter. Each
// unary method calls the matching api::PolicyHandlers function (all logic lives
// there), converts the status once, and reports to the RpcObserver. Handlers
// never block.

#include "api/handlers.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "runtime/catalog_events.h"
#include "service/rpc_observer.h"

namespace compatd::service {

// v1::CompatibilityPolicy::CallbackService
class PolicyService final : public v1::CompatibilityPolicy::CallbackService {
 public:
  // All pointers must outlive the service; `observer` may be null.
  PolicyService(const api::PolicyHandlers* handlers,
                runtime::CatalogEvents* events,
                const runtime::CatalogStore* store, RpcObserver* observer);

  grpc::ServerUnaryReactor* GetFeature(
      grpc::CallbackServerContext* context,
      const v1::GetFeatureRequest* request,
      v1::GetFeatureResponse* response) override;
  grpc::ServerUnaryReactor* ListFeatures(
      grpc::CallbackServerContext* context,
      const v1::ListFeaturesRequest* request,
      v1::ListFeaturesResponse* response) override;
  grpc::ServerUnaryReactor* GetStorageVersion(
      grpc::CallbackServerContext* context,
      const v1::GetStorageVersionRequest* request,
      v1::GetStorageVersionResponse* response) override;
  grpc::ServerUnaryReactor* ListAPIVersions(
      grpc::CallbackServerContext* context,
      const v1::ListAPIVersionsRequest* request,
      v1::ListAPIVersionsResponse* response) override;
  grpc::ServerUnaryReactor* CheckSkew(grpc::CallbackServerContext* context,
                                      const v1::CheckSkewRequest* request,
                                      v1::CheckSkewResponse* response) override;
  grpc::ServerUnaryReactor* ResolveVersions(
      grpc::CallbackServerContext* context,
      const v1::ResolveVersionsRequest* request,
      v1::ResolveVersionsResponse* response) override;
  grpc::ServerUnaryReactor* ComputeStorageVersionAgreement(
      grpc::CallbackServerContext* context,
      const v1::ComputeStorageVersionAgreementRequest* request,
      v1::ComputeStorageVersionAgreementResponse* response) override;
  grpc::ServerUnaryReactor* PlanVersionRemoval(
      grpc::CallbackServerContext* context,
      const v1::PlanVersionRemovalRequest* request,
      v1::PlanVersionRemovalResponse* response) override;
  grpc::ServerUnaryReactor* LintCatalog(
      grpc::CallbackServerContext* context,
      const v1::LintCatalogRequest* request,
      v1::LintCatalogResponse* response) override;
  grpc::ServerUnaryReactor* Evaluate(grpc::CallbackServerContext* context,
                                     const v1::EvaluateRequest* request,
                                     v1::EvaluateResponse* response) override;
  grpc::ServerUnaryReactor* GetCatalog(
      grpc::CallbackServerContext* context,
      const v1::GetCatalogRequest* request,
      v1::GetCatalogResponse* response) override;
  grpc::ServerWriteReactor<v1::GetCatalogResponse>* WatchCatalog(
      grpc::CallbackServerContext* context,
      const v1::WatchCatalogRequest* request) override;
  grpc::ServerUnaryReactor* ListClients(
      grpc::CallbackServerContext* context,
      const v1::ListClientsRequest* request,
      v1::ListClientsResponse* response) override;

 private:
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* Unary(
      RpcMethod method, grpc::CallbackServerContext* context,
      const Request& request, Response* response,
      absl::Status (api::PolicyHandlers::*handler)(const Request&, Response*)
          const);

  const api::PolicyHandlers* handlers_;
  runtime::CatalogEvents* events_;
  const runtime::CatalogStore* store_;
  RpcObserver* observer_;
};

// The one absl -> grpc status conversion of the code base.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace compatd::service
