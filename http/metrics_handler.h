#pragma once

// /metrics on an http::Server: GET or HEAD /metrics answers the registry in
// the text exposition format 0.0.4 (Content-Type "text/plain;
// version=0.0.4; charset=utf-8"); another method on /metrics gets 405 with
// Allow: GET, HEAD; any other path 404.
//
//   http::Server::Start(options, http::MetricsHandler(&registry));

#include "http/server.h"
#include "metrics/registry.h"

namespace compatd::http {

inline constexpr absl::string_view kDefaultMetricsAddress = "127.0.0.1:9464";

// `registry` must outlive every server using the handler.
Handler MetricsHandler(const metrics::Registry* registry);

// The same for one request, for servers that route several paths.
void ServeMetrics(const metrics::Registry& registry, const Request& request,
                  Response* response);

}  // namespace compatd::http
