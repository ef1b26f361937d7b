#pragma once

// All the logic of the API, callable without any transport: the gRPC service,
// Evaluate and `compatd eval` go through exactly these functions. Each
// answers from the one snapshot its caller took for the call. Thread-safe.

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "api/request_validation.h"
#include "api/rpcs.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/catalog.h"
#include "engine/catalog_set.h"
#include "engine/query.h"
#include "runtime/catalog_events.h"
#include "runtime/client_tracker.h"
#include "runtime/serving_snapshot.h"

namespace compatd::api {

// The answers ListFeatures and ListAPIVersions give without versions or
// component, and those at the line's upgrade target (whose binary version
// picks its line in `set`), built once per published catalog: the catalog
// pipeline's deriver (runtime::CatalogPipeline::Options::derive) in every
// process that serves.
std::shared_ptr<const runtime::DerivedAnswers> DeriveAnswers(
    const engine::CatalogSet& set, const engine::Catalog& catalog);

// UNAVAILABLE when no snapshot is published yet (`snapshot` is null), else
// OK: what every transport answers before the first catalog.
absl::Status CheckServing(const runtime::ServingSnapshot* snapshot);

class PolicyHandlers final {
 public:
  // `events` (GetCatalog's last error) and `clients` (ListClients) may be
  // null (offline evaluation); both must outlive the handlers. Every request
  // is first checked by api/request_validation.h (INVALID_ARGUMENT), with
  // `limits` for what the server's flags bound.
  explicit PolicyHandlers(const runtime::CatalogEvents* events = nullptr,
                          const runtime::ClientTracker* clients = nullptr,
                          RequestLimits limits = RequestLimits());

  const RequestLimits& limits() const { return limits_; }

  // Each answers from `snapshot` alone: the caller takes one snapshot per
  // call (and uses the same one for its client verdict and metrics). The
  // request's versions.binaryVersion picks the release line once (empty: the
  // default line); a line the snapshot has no catalog of is
  // INVALID_ARGUMENT naming the lines it has.
#define COMPATD_HANDLER_DECLARATION(Name)                     \
  absl::Status Name(const runtime::ServingSnapshot& snapshot, \
                    const v1::Name##Request& request,         \
                    v1::Name##Response* response) const;
  COMPATD_UNARY_RPCS(COMPATD_HANDLER_DECLARATION)
#undef COMPATD_HANDLER_DECLARATION

  // GetCatalog's answer for one snapshot (WatchCatalog sends one per reload).
  void DescribeCatalog(const runtime::ServingSnapshot& snapshot,
                       v1::GetCatalogResponse* response) const;

 private:
  const runtime::CatalogEvents* events_;
  const runtime::ClientTracker* clients_;
  RequestLimits limits_;
};

}  // namespace compatd::api
