#pragma once

// POST /gatekeeper/v1: an OPA Gatekeeper external data provider. Takes a
// externaldata.gatekeeper.sh/v1beta1 ProviderRequest and answers a
// ProviderResponse with response.idempotent true and one item per key, all
// from one catalog snapshot. The key grammar (docs/admission.md):
//
//   feature:NAME[@EMULATION]                 GetFeature's answer
//   api:GROUP/VERSION/KIND[@EMULATION]       whether the API is served
//   api:VERSION/KIND[@EMULATION]             (core group: api:v1/Pod)
//   storage:GROUP/RESOURCE[@EMULATION]       GetStorageVersion's answer
//   storage:RESOURCE[@EMULATION]             (core group)
//   skew:COMPONENT/VERSION                   CheckSkew's answer
//
// The URL may name the cluster's versions as the admission webhook's path
// does (/gatekeeper/v1/binary-1.34/emulation-1.33) or in its query
// (?binaryVersion=1.34): binary-MAJOR.MINOR selects the release line every
// key is answered from (default: the default line), emulation-MAJOR.MINOR
// is the emulation version of a key without "@", min-compatibility- the
// rest of the cluster's versions. One Provider per cluster binary.
//
// An item's value is the answer as JSON. Gatekeeper caches item errors, so
// lasting answers (an unknown gate, a malformed key) are item errors, and
// transient ones (no catalog yet) are the response's systemError, as is a
// request compatd cannot read: every answer is a 200 ProviderResponse. Each
// distinct key is answered once per request, and from `cache` when an
// earlier request asked it of the same snapshot.

#include "api/handlers.h"
#include "gateway/provider_cache.h"
#include "http/server.h"
#include "runtime/serving_snapshot.h"

namespace compatd::gateway {

inline constexpr char kGatekeeperPath[] = "/gatekeeper/v1";

// /gatekeeper/v1 and /gatekeeper/v1/<segments>.
bool IsGatekeeperPath(absl::string_view path);

// At most this many keys in one request (a systemError beyond).
inline constexpr size_t kMaxProviderKeys = 1000;

// A 200 ProviderResponse with no items and `system_error` (Gatekeeper reads
// only 200 answers: a 4xx reaches its policy as an empty response).
void ServeGatekeeperError(absl::string_view system_error,
                          http::Response* response);

// `cache` may be null (nothing kept). A body that is not a v1beta1
// ProviderRequest (not JSON, v1alpha1, more than kMaxProviderKeys keys) is
// answered 200 with a systemError saying so.
void ServeGatekeeper(const api::PolicyHandlers& handlers,
                     const runtime::ServingSnapshot* snapshot,
                     ProviderCache* cache, const http::Request& request,
                     http::Response* response);

}  // namespace compatd::gateway
