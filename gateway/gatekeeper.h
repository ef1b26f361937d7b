#pragma once

// POST /gatekeeper/v1: an OPA Gatekeeper external data provider. Takes a
// externaldata.gatekeeper.sh/v1beta1 ProviderRequest and answers a
// ProviderResponse with response.idempotent true and one item per key, all
// from one catalog snapshot. The key grammar (README.md, "Admission"):
//
//   feature:NAME[@EMULATION]                 GetFeature's answer
//   api:GROUP/VERSION/KIND[@EMULATION]       whether the API is served
//   api:VERSION/KIND[@EMULATION]             (core group: api:v1/Pod)
//   storage:GROUP/RESOURCE[@EMULATION]       GetStorageVersion's answer
//   storage:RESOURCE[@EMULATION]             (core group)
//   skew:COMPONENT/VERSION                   CheckSkew's answer
//
// An item's value is the answer as JSON. Gatekeeper caches item errors, so
// lasting answers (an unknown gate, a malformed key) are item errors, and
// transient ones (no catalog yet) are the response's systemError. Each
// distinct key is answered once per request, and from `cache` when an
// earlier request asked it of the same snapshot.

#include "api/handlers.h"
#include "gateway/provider_cache.h"
#include "http/server.h"
#include "runtime/serving_snapshot.h"

namespace compatd::gateway {

// At most this many keys in one request (RESOURCE_EXHAUSTED, 429, beyond).
inline constexpr size_t kMaxProviderKeys = 1000;

// `cache` may be null (nothing kept).
void ServeGatekeeper(const api::PolicyHandlers& handlers,
                     const runtime::ServingSnapshot* snapshot,
                     ProviderCache* cache, const http::Request& request,
                     http::Response* response);

}  // namespace compatd::gateway
