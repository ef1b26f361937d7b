#pragma once

// What compatd-soak sends: the RPCs of compatd.v1.CompatibilityPolicy, valid
// requests with a check of their answers, random well-formed-but-wrong
// requests, random bytes in place of a request message, and the catalog
// variants the swapper writes. No gRPC calls here (soak.cc makes them), so
// every generator is a plain function of a random engine.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "api/rpcs.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "google/protobuf/message.h"
#include "grpcpp/grpcpp.h"
#include "service/rpc_observer.h"

namespace compatd::soak {

using Rng = std::mt19937_64;

// Random pieces, for every class of the soak.
inline size_t Below(Rng& rng, size_t n) {
  return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}
inline bool OneIn(Rng& rng, size_t n) { return Below(rng, n) == 0; }
template <typename T, size_t N>
const T& Pick(Rng& rng, const std::array<T, N>& pool) {
  return pool[Below(rng, N)];
}

// An RPC of the service, from the API's one list (api/rpcs.h).
using Rpc = api::Rpc;
// The unary ones, which the workers call (WatchCatalog is driven by its own
// threads).
inline constexpr std::array<Rpc, api::kRpcCount - 1> kUnaryRpcs = {
#define COMPATD_SOAK_RPC(Name) Rpc::k##Name,
    COMPATD_UNARY_RPCS(COMPATD_SOAK_RPC)
#undef COMPATD_SOAK_RPC
};
inline constexpr int kRpcCount = static_cast<int>(kUnaryRpcs.size());

// "/compatd.v1.CompatibilityPolicy/GetFeature".
std::string MethodPath(Rpc rpc);
// A new empty request / response message of a unary RPC (null for
// WatchCatalog).
std::unique_ptr<google::protobuf::Message> NewRequest(Rpc rpc);
std::unique_ptr<google::protobuf::Message> NewResponse(Rpc rpc);

// Calls `rpc` through the generated synchronous stub (`request` and
// `response` must be the RPC's message types).
grpc::Status CallStub(v1::CompatibilityPolicy::Stub& stub,
                      grpc::ClientContext* context, Rpc rpc,
                      const google::protobuf::Message& request,
                      google::protobuf::Message* response);

// The codes a request that is well formed but wrong may get: an answer, or
// a refusal that names the problem. Anything else (INTERNAL, UNKNOWN,
// UNAVAILABLE, DEADLINE_EXCEEDED, ...) is a failure.
bool IsAcceptedForWrongRequest(grpc::StatusCode code);
// The same for the google.rpc.Status code of an Evaluate item.
bool IsAcceptedItemCode(int32_t code);

// What the soak knows about the two good catalog variants: every answer must
// come from one of them, and answer what that variant says.
struct CatalogFacts {
  std::string digest_a;
  std::string digest_b;
  // Variant B turns this alpha gate on in its cluster section; A leaves it
  // off (its default at 1.36). Every answer about it must match the digest
  // it carries.
  static constexpr absl::string_view kSwitchedGate = "APIServingWithRoutine";
  uint32_t features = 0;  // both variants: the same gates
  int max_client_series = 256;
  // --max-api-usage-rows: ListApiUsage answers at most this many rows and
  // the one row "other" that counts the calls past them (runtime/api_usage.h).
  int max_api_usage_rows = 1000;
};

// One request to send and how to judge the outcome.
struct SoakRequest {
  Rpc rpc = Rpc::kGetFeature;
  std::unique_ptr<google::protobuf::Message> message;
  // Set when exactly one code is right (a message over the size limit is
  // RESOURCE_EXHAUSTED, an Evaluate batch over the item limit
  // INVALID_ARGUMENT); otherwise the class's accepted codes apply.
  std::optional<grpc::StatusCode> exact_code;
  // Judges an OK answer: "" when it is right, else what is wrong. May be
  // empty (no check).
  std::function<std::string(const google::protobuf::Message& response)> check;
  // Short description for failure reports ("WatchList at emulation 1.33").
  std::string label;
};

// A check of a `Response` as SoakRequest::check: the answer must come from
// one of the good catalog variants (facts.digest_a, digest_b), then pass
// `check`.
template <typename Response>
std::function<std::string(const google::protobuf::Message&)> CheckedAnswer(
    std::function<std::string(const Response&)> check,
    const CatalogFacts& facts) {
  return [check = std::move(check),
          facts](const google::protobuf::Message& response) -> std::string {
    const auto& typed = static_cast<const Response&>(response);
    const std::string& digest = typed.catalog_digest();
    if (digest != facts.digest_a && digest != facts.digest_b) {
      return "answered from catalog " + digest +
             ", which is neither good variant";
    }
    return check(typed);
  };
}

// The valid requests, each with a check of its answer against `facts`. Built
// once per worker (protobuf messages cache their size when serialized, so
// one message must not be sent from two threads) and sent again and again.
// `weight` is the relative frequency.
struct ValidCase {
  SoakRequest request;
  int weight = 1;
};
std::vector<ValidCase> MakeValidCases(const CatalogFacts& facts);

// A pick among `cases` (anything with a `weight`) by their weights.
template <typename Case>
std::discrete_distribution<size_t> PickByWeight(
    const std::vector<Case>& cases) {
  std::vector<int> weights;
  for (const Case& c : cases) weights.push_back(c.weight);
  return std::discrete_distribution<size_t>(weights.begin(), weights.end());
}

// A random well-formed-but-wrong request: random versions, names, feature
// gate and runtime-config strings, huge strings, oversized batches, unknown
// names. `max_recv_message_bytes` and `max_evaluate_items` are compatd's
// limits (its defaults).
SoakRequest RandomWrongRequest(Rng& rng, int max_recv_message_bytes,
                               int max_evaluate_items);

// Bytes in place of a request message of `rpc`: pure random bytes, a valid
// request with bytes flipped, inserted or cut, or another RPC's request.
std::string RandomGarbageMessage(Rng& rng, Rpc rpc);
// Whether compatd's gRPC library can decode `bytes` as `rpc`'s request (the
// same protobuf library compatd links): if not, gRPC answers INTERNAL before
// any handler runs.
bool Decodes(Rpc rpc, const std::string& bytes);
// A method path compatd does not serve ("/compatd.v1.CompatibilityPolicy/X",
// "/no.such.Service/GetFeature", ...): UNIMPLEMENTED.
std::string RandomUnknownMethod(Rng& rng);

// Client identities: a User-Agent prefix per channel, and metadata per call
// (x-kubernetes-component / -version), some of them garbage.
std::string RandomUserAgent(Rng& rng);
void AddRandomIdentity(Rng& rng, grpc::ClientContext* context);

// The catalog variants. `base` is a valid catalog without a cluster section
// (catalog/kubernetes-1.36.yaml).
std::string VariantA(const std::string& base);
std::string VariantB(const std::string& base);
// An invalid catalog, different from every earlier one (`serial` goes into
// it), of one of several kinds (truncated YAML, unknown key, random bytes,
// empty file, bad binaryVersion, duplicate key, refused cluster section).
// `kind` names the kind.
std::string BadVariant(Rng& rng, const std::string& base, uint64_t serial,
                       std::string* kind);

// "sha256:<hex>" of `bytes`, as compatd reports a catalog's digest.
std::string CatalogDigest(absl::string_view bytes);

}  // namespace compatd::soak
