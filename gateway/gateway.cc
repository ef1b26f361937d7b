#include "gateway/gateway.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "api/rpcs.h"
#include "base/work_budget.h"
#include "engine/user_agent.h"
#include "gateway/admission.h"
#include "gateway/gatekeeper.h"
#include "gateway/json.h"
#include "gateway/stack_arena.h"

namespace compatd::gateway {
namespace {

void Fail(const absl::Status& status, http::Response* response) {
  response->status = HttpStatusOf(status.code());
  response->body = StatusJson(status);
}

void MethodNotAllowed(absl::string_view allow, absl::string_view path,
                      http::Response* response) {
  response->status = 405;
  response->headers.emplace_back("Allow", std::string(allow));
  response->body = StatusJson(absl::InvalidArgumentError(
      absl::StrCat(path, " takes ", allow, "; see docs/admission.md")));
}

// One unary RPC: the request from the body (POST) or the query (GET), the
// handler on the call's snapshot, the response as proto3 JSON.
template <typename Request, typename Response>
void ServeRpc(const api::PolicyHandlers& handlers,
              const runtime::ServingSnapshot& snapshot,
              absl::Status (api::PolicyHandlers::*handler)(
                  const runtime::ServingSnapshot&, const Request&, Response*)
                  const,
              const http::Request& http_request, http::Response* response) {
  StackArena arena;
  auto* request = StackArena::Create<Request>(arena);
  absl::Status status = http_request.method == "GET"
                            ? ParseQueryRequest(http_request.query, request)
                            : ParseJsonRequest(http_request.body, request);
  if (!status.ok()) return Fail(status, response);
  auto* answer = StackArena::Create<Response>(arena);
  status = (handlers.*handler)(snapshot, *request, answer);
  if (!status.ok()) return Fail(status, response);
  // --max-send-message-bytes, as on gRPC: checked before the JSON is built.
  if (const size_t size = answer->ByteSizeLong();
      size > handlers.limits().max_answer_bytes) {
    return Fail(absl::ResourceExhaustedError(absl::StrCat(
                    "the answer is ", size, " bytes, over the limit of ",
                    handlers.limits().max_answer_bytes,
                    " bytes (--max-send-message-bytes); ask for less (a "
                    "component, fewer Evaluate items)")),
                response);
  }
  response->body = ToJson(*answer);
}

// "/v1/GetFeature", ...: the metrics label of each RPC's route, built once.
absl::string_view RpcRoute(api::Rpc rpc) {
  static const std::vector<std::string>* const routes = [] {
    auto* routes = new std::vector<std::string>();
    for (int i = 0; i < api::kRpcCount; ++i) {
      routes->push_back(
          absl::StrCat("/v1/", api::RpcName(static_cast<api::Rpc>(i))));
    }
    return routes;
  }();
  return (*routes)[static_cast<size_t>(rpc)];
}

// /admission/v1/validate, with or without option segments after it.
bool IsAdmissionPath(absl::string_view path) {
  return absl::ConsumePrefix(&path, kAdmissionPath) &&
         (path.empty() || path.front() == '/');
}

}  // namespace

Gateway::Gateway(const api::PolicyHandlers* handlers,
                 const runtime::SnapshotStore* store,
                 runtime::ClientTracker* clients,
                 const runtime::ServiceMetrics* metrics,
                 const ui::StatusPage* ui, size_t gatekeeper_cache_bytes,
                 HeavyLane heavy, AuditIngest* audit,
                 runtime::CapiVerdicts* capi_verdicts)
    : handlers_(handlers),
      store_(store),
      clients_(clients),
      metrics_(metrics),
      ui_(ui),
      audit_(audit),
      capi_(handlers, metrics, capi_verdicts),
      gatekeeper_cache_(gatekeeper_cache_bytes),
      heavy_(heavy) {}

api::Lane Gateway::LaneOf(const http::Request& request) {
  absl::string_view path = request.path;
  if (!absl::ConsumePrefix(&path, "/v1/")) return api::LaneOf(path);
  if (path == api::RpcName(api::Rpc::kCheckCelExpression) &&
      request.body.size() + request.query.size() > api::kLightCelBytes) {
    return api::Lane::kHeavy;
  }
  const api::Lane lane = api::LaneOf(path);
  if (lane == api::Lane::kLight || path != "Evaluate" ||
      request.method != "POST" ||
      request.body.size() > api::kLightEvaluateBytes) {
    return lane;
  }
  StackArena arena;
  auto* evaluate = StackArena::Create<v1::EvaluateRequest>(arena);
  // A body that does not parse is refused at once, in the light lane.
  if (!ParseJsonRequest(request.body, evaluate).ok()) return api::Lane::kLight;
  return api::LaneOf(*evaluate);
}

void Gateway::ServeAuditTurn(http::Request request, http::Reply reply) const {
  auto shared = std::make_shared<const http::Request>(std::move(request));
  if (audit_->Schedule([this, shared, reply] {
        http::Response response;
        // A sender gone while its batch waited: nobody reads the answer.
        if (const std::atomic<bool>* gone = reply.client_gone();
            gone != nullptr && gone->load(std::memory_order_relaxed)) {
          response.status = 499;
          response.body = StatusJson(absl::CancelledError(
              "the sender went away before its batch's turn"));
        } else {
          Handle(*shared, &response);
        }
        reply(std::move(response));
      })) {
    return;
  }
  http::Response response;
  audit_->RefuseQueueFull(&response);
  if (metrics_ != nullptr) {
    metrics_->RecordHttpRequest(kAuditPath, response.status,
                                absl::ZeroDuration());
  }
  reply(std::move(response));
}

http::AsyncHandler Gateway::AsHandler() const {
  return [this](http::Request request, http::Reply reply) {
    if (audit_ != nullptr && request.path == kAuditPath &&
        request.method == "POST") {
      return ServeAuditTurn(std::move(request), std::move(reply));
    }
    if (heavy_.pool == nullptr || LaneOf(request) == api::Lane::kLight) {
      http::Response response;
      Handle(request, &response);
      reply(std::move(response));
      return;
    }
    auto shared = std::make_shared<const http::Request>(std::move(request));
    if (heavy_.pool->TrySubmit([this, shared, reply] {
          // The work stops at its budget or once its client has gone
          // (http::Reply::client_gone); a client gone while it waited is
          // not worked for.
          base::ScopedWorkBudget budget(absl::Now() + heavy_.work_time,
                                        reply.client_gone());
          http::Response response;
          if (const std::atomic<bool>* gone = reply.client_gone();
              gone != nullptr && gone->load(std::memory_order_relaxed)) {
            response.status = 499;  // nginx's "client closed request"
            response.body = StatusJson(absl::CancelledError(
                "the client went away before the work started"));
          } else {
            Handle(*shared, &response);
          }
          reply(std::move(response));
        })) {
      return;
    }
    // Full: refused now, not queued (docs/limits.md).
    http::Response response;
    response.status = 429;
    response.headers.emplace_back(
        "Retry-After", std::to_string(api::kLaneFullRetryAfterSeconds));
    response.body = StatusJson(
        absl::ResourceExhaustedError(api::LaneFullMessage(*heavy_.pool)));
    if (metrics_ != nullptr) {
      absl::string_view path = shared->path;
      absl::ConsumePrefix(&path, "/v1/");
      const std::optional<api::Rpc> rpc = api::FindRpc(path);
      metrics_->RecordHttpRequest(rpc.has_value() ? RpcRoute(*rpc) : "other",
                                  response.status, absl::ZeroDuration());
    }
    reply(std::move(response));
  };
}

namespace {

// GET or HEAD /healthz: 200 once a catalog is loaded, 503 before.
void ServeHealthz(const http::Request& request,
                  const runtime::ServingSnapshot* snapshot,
                  http::Response* response) {
  const absl::string_view path = request.path;
  if (request.method != "GET" && request.method != "HEAD") {
    // A google.rpc.Status like every other error: JSON, typed so.
    MethodNotAllowed("GET, HEAD", path, response);
  } else if (snapshot == nullptr) {
    response->content_type = "text/plain; charset=utf-8";
    response->status = 503;
    response->body = "no catalog is loaded yet\n";
  } else {
    response->content_type = "text/plain; charset=utf-8";
    response->body = "ok\n";
    response->omit_body = request.method == "HEAD";
  }
}

// /v1/<RPC>: the unary RPC `rpc_name` as JSON; the metrics route it gets
// (empty for an unknown RPC).
absl::string_view ServeV1(const api::PolicyHandlers& handlers,
                          const runtime::ServingSnapshot* snapshot,
                          absl::string_view path, const http::Request& request,
                          http::Response* response) {
  const std::optional<api::Rpc> rpc = api::FindRpc(path);
  if (!rpc.has_value() || api::IsServerStreaming(*rpc) ||
      absl::StrContains(path, "/") || absl::StrContains(path, ".")) {
    response->status = 404;
    response->body = StatusJson(absl::NotFoundError(absl::StrCat(
        request.path, ": no such RPC; /v1/<RPC> serves the unary RPCs of ",
        api::kServiceName,
        ", e.g. /v1/GetFeature (WatchCatalog is a "
        "stream: use gRPC)")));
    return absl::string_view();
  }
  if (request.method != "GET" && request.method != "POST") {
    MethodNotAllowed("GET, POST", request.path, response);
  } else if (absl::Status s = api::CheckServing(snapshot); !s.ok()) {
    Fail(s, response);
  } else {
    switch (*rpc) {
#define COMPATD_GATEWAY_RPC(Name)                                      \
  case api::Rpc::k##Name:                                              \
    ServeRpc(handlers, *snapshot, &api::PolicyHandlers::Name, request, \
             response);                                                \
    break;
      COMPATD_UNARY_RPCS(COMPATD_GATEWAY_RPC)
#undef COMPATD_GATEWAY_RPC
      case api::Rpc::kWatchCatalog:
        break;
    }
  }
  return RpcRoute(*rpc);
}

}  // namespace

void Gateway::Handle(const http::Request& request,
                     http::Response* response) const {
  const absl::Time start = absl::Now();
  // The call's one snapshot: its answer, its client verdict, its metrics.
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      store_->Current();
  const bool ui_route = ui_ != nullptr && ui::StatusPage::Owns(request.path);
  const bool audit_route =
      audit_ != nullptr && request.path == "/audit/v1/events";
  const bool capi_route = IsCapiPath(request.path);
  if (clients_ != nullptr && snapshot != nullptr && !ui_route && !audit_route &&
      !capi_route) {
    clients_->Record(*snapshot, engine::IdentifyClient(
                                    request.Header("x-kubernetes-component"),
                                    request.Header("x-kubernetes-version"),
                                    request.Header("user-agent")));
  }
  absl::string_view route = "other";  // the metrics label
  absl::string_view path = request.path;
  if (ui_route) {
    route = ui::StatusPage::Route(path);
    ui_->Handle(request, snapshot.get(), response);
  } else if (path == "/healthz") {
    route = "/healthz";
    ServeHealthz(request, snapshot.get(), response);
  } else if (absl::ConsumePrefix(&path, "/v1/")) {
    const absl::string_view rpc_route =
        ServeV1(*handlers_, snapshot.get(), path, request, response);
    if (!rpc_route.empty()) route = rpc_route;
  } else if (IsAdmissionPath(request.path)) {
    route = "/admission/v1/validate";
    if (request.method != "POST") {
      MethodNotAllowed("POST", request.path, response);
    } else {
      ServeAdmission(snapshot.get(), metrics_, request, response);
    }
  } else if (audit_route) {
    route = "/audit/v1/events";
    if (request.method != "POST") {
      MethodNotAllowed("POST", request.path, response);
    } else {
      audit_->Serve(snapshot.get(), request, response);
    }
  } else if (capi_route) {
    route = CapiRoute(request.path);
    capi_.Serve(snapshot.get(), request, response);
  } else if (IsGatekeeperPath(request.path)) {
    route = "/gatekeeper/v1";
    if (request.method != "POST") {
      ServeGatekeeperError(
          absl::StrCat("/gatekeeper/v1 takes POST, not ", request.method),
          response);
    } else {
      ServeGatekeeper(*handlers_, snapshot.get(), &gatekeeper_cache_, request,
                      response);
    }
  } else {
    response->status = 404;
    response->body = StatusJson(absl::NotFoundError(absl::StrCat(
        request.path,
        ": not found; compatd serves /v1/<RPC>, /admission/v1/validate, "
        "/gatekeeper/v1, Cluster API's /hooks.runtime.cluster.x-k8s.io/"
        "v1alpha1/... and /healthz here",
        audit_ != nullptr ? ", /audit/v1/events" : "",
        ui_ != nullptr ? ", and the status page at /ui/" : "")));
  }
  if (metrics_ != nullptr) {
    metrics_->RecordHttpRequest(route, response->status, absl::Now() - start);
  }
}

}  // namespace compatd::gateway
