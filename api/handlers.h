#pragma once

// All the logic of the API, callable without gRPC: the server's callback
// service, Evaluate and `compatd eval` go through exactly these functions. Each
// takes the current catalog snapshot once and answers from it. Thread-safe.

#include <functional>
#include <memory>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "api/request_validation.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/catalog.h"
#include "engine/query.h"
#include "runtime/catalog_events.h"
#include "runtime/catalog_store.h"

namespace compatd::api {

class PolicyHandlers final {
 public:
  // Fills ListClients' entries (of one component, or all when empty). Optional.
  using ClientLister = std::function<void(absl::string_view component,
                                          const engine::Catalog& catalog,
                                          v1::ListClientsResponse* response)>;

  // `store` must outlive the handlers; `events` (GetCatalog's last error) may
  // be null. Every request is first checked by api/request_validation.h
  // (INVALID_ARGUMENT), with `limits` for what the server's flags bound.
  explicit PolicyHandlers(const runtime::CatalogStore* store,
                          const runtime::CatalogEvents* events = nullptr,
                          ClientLister client_lister = nullptr,
                          RequestLimits limits = RequestLimits());

  const RequestLimits& limits() const { return limits_; }

  absl::Status GetFeature(const v1::GetFeatureRequest& request,
                          v1::GetFeatureResponse* response) const;
  absl::Status ListFeatures(const v1::ListFeaturesRequest& request,
                            v1::ListFeaturesResponse* response) const;
  absl::Status GetStorageVersion(const v1::GetStorageVersionRequest& request,
                                 v1::GetStorageVersionResponse* response) const;
  absl::Status ListAPIVersions(const v1::ListAPIVersionsRequest& request,
                               v1::ListAPIVersionsResponse* response) const;
  absl::Status CheckSkew(const v1::CheckSkewRequest& request,
                         v1::CheckSkewResponse* response) const;
  absl::Status ResolveVersions(const v1::ResolveVersionsRequest& request,
                               v1::ResolveVersionsResponse* response) const;
  absl::Status ComputeStorageVersionAgreement(
      const v1::ComputeStorageVersionAgreementRequest& request,
      v1::ComputeStorageVersionAgreementResponse* response) const;
  absl::Status PlanVersionRemoval(
      const v1::PlanVersionRemovalRequest& request,
      v1::PlanVersionRemovalResponse* response) const;
  // engine/catalog_lint.h on the current snapshot.
  absl::Status LintCatalog(const v1::LintCatalogRequest& request,
                           v1::LintCatalogResponse* response) const;
  absl::Status Evaluate(const v1::EvaluateRequest& request,
                        v1::EvaluateResponse* response) const;
  absl::Status GetCatalog(const v1::GetCatalogRequest& request,
                          v1::GetCatalogResponse* response) const;
  absl::Status ListClients(const v1::ListClientsRequest& request,
                           v1::ListClientsResponse* response) const;

  // GetCatalog's answer for one snapshot (WatchCatalog sends one per reload).
  void DescribeCatalog(const engine::Catalog& catalog,
                       v1::GetCatalogResponse* response) const;

 private:
  // UNAVAILABLE until a catalog is published.
  absl::StatusOr<std::shared_ptr<const engine::Catalog>> Snapshot() const;

  // The replies that depend on the catalog alone (ListAPIVersions and
  // ListFeatures without versions or component): computed once per catalog
  // snapshot, then copied into each reply, instead of rebuilding and sorting
  // hundreds of entries per call (BENCHMARKS.md).
  struct CatalogAnswers;
  std::shared_ptr<const CatalogAnswers> AnswersFor(
      const std::shared_ptr<const engine::Catalog>& catalog) const;
  mutable std::mutex answers_mu_;
  mutable std::shared_ptr<const CatalogAnswers> answers_
      ABSL_GUARDED_BY(answers_mu_);

  const runtime::CatalogStore* store_;
  const runtime::CatalogEvents* events_;
  ClientLister client_lister_;
  RequestLimits limits_;
};

}  // namespace compatd::api
