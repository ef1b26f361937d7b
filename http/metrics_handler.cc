#include "http/metrics_handler.h"

#include <string>

#include "metrics/text_format.h"

namespace compatd::http {

void ServeMetrics(const metrics::Registry& registry, const Request& request,
                  Response* response) {
  if (request.path != "/metrics") {
    response->status = 404;
    response->content_type = "text/plain; charset=utf-8";
    response->body = "Not found: metrics are served at /metrics\n";
    return;
  }
  if (request.method != "GET" && request.method != "HEAD") {
    response->status = 405;
    response->content_type = "text/plain; charset=utf-8";
    response->headers.emplace_back("Allow", "GET, HEAD");
    response->body = "Method not allowed: /metrics takes GET or HEAD\n";
    return;
  }
  response->status = 200;
  response->content_type = std::string(metrics::kTextContentType);
  response->body = metrics::SerializeText(registry.Collect());
  response->omit_body = request.method == "HEAD";
}

Handler MetricsHandler(const metrics::Registry* registry) {
  return [registry](const Request& request, Response* response) {
    ServeMetrics(*registry, request, response);
  };
}

}  // namespace compatd::http
