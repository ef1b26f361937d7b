#pragma once

// Which of compatd's lanes (api/lanes.h) a soak request runs in, decided by
// compatd's own functions, so that the soak cannot disagree with the
// server: a light call's latency is judged, a heavy one's is not, and only
// a heavy call may be refused because the heavy lane is full.

#include "api/lanes.h"
#include "gateway/gateway.h"
#include "http/server.h"
#include "soak/common.h"

namespace compatd::soak {

using api::Lane;

// A gRPC call of `rpc` with the serialized request `bytes`: the server's own
// api::LaneOfCall.
inline Lane GrpcLane(Rpc rpc, const std::string& bytes) {
  return api::LaneOfCall(rpc, bytes.size(),
                         [&bytes](v1::EvaluateRequest* request) {
                           return request->ParseFromString(bytes);
                         });
}

// The same for a request message (its serialization decodes to itself).
inline Lane GrpcLane(const SoakRequest& request) {
  return api::LaneOfCall(
      request.rpc, request.message->ByteSizeLong(),
      [&request](v1::EvaluateRequest* evaluate) {
        *evaluate = static_cast<const v1::EvaluateRequest&>(*request.message);
        return true;
      });
}

// An HTTP request to the front door: gateway::Gateway::LaneOf itself.
inline Lane HttpLane(absl::string_view method, absl::string_view target,
                     absl::string_view body) {
  http::Request request;
  request.method = std::string(method);
  request.target = std::string(target);
  const size_t query = target.find('?');
  request.path = std::string(target.substr(0, query));
  if (query != absl::string_view::npos) {
    request.query = std::string(target.substr(query + 1));
  }
  request.body = std::string(body);
  return gateway::Gateway::LaneOf(request);
}

// A heavy call refused because the heavy lane was full: RESOURCE_EXHAUSTED
// with api::LaneFullMessage's words ...
inline bool LaneFull(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
         absl::StartsWith(status.error_message(), "the heavy lane is full");
}

// ... and over HTTP: 429 with Retry-After and the same message.
inline bool LaneFull(const HttpAnswer& answer) {
  return answer.status == 429 && !answer.Header("retry-after").empty() &&
         absl::StrContains(answer.body, "the heavy lane is full");
}

}  // namespace compatd::soak
