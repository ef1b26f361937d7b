#include "metrics/exposer.h"

#include <civetweb.h>

#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "metrics/text_format.h"

namespace compatd::metrics {
namespace {

// Parses "host:port" / "[v6]:port"; returns the civetweb listening_ports
// value (civetweb takes the same syntax).
absl::StatusOr<std::string> ListeningPorts(absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metrics address \"", address,
        "\": expected host:port, e.g. 127.0.0.1:9464 or [::1]:9464"));
  }
  absl::string_view host = address.substr(0, colon);
  absl::string_view port_text = address.substr(colon + 1);
  uint32_t port = 0;
  if (port_text.empty() || !absl::SimpleAtoi(port_text, &port) ||
      port > 65535 ||
      port_text.find_first_not_of("0123456789") != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address \"", address, "\": port \"", port_text,
                     "\" is not a number in 0..65535"));
  }
  if (absl::StartsWith(host, "[") != absl::EndsWith(host, "]") ||
      (!absl::StartsWith(host, "[") &&
       host.find(':') != absl::string_view::npos)) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address \"", address,
                     "\": an IPv6 host must be in brackets, e.g. [::1]:9464"));
  }
  if (host.find_first_of(", \t") != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address \"", address, "\": bad host"));
  }
  return absl::StrCat(host, ":", port);
}

// civetweb calls this for its own error messages; the exposer reports them
// through Start()'s status instead of printing them.
int SilenceLog(const mg_connection*, const char*) { return 1; }

void InitLibraryOnce() {
  static const bool initialized = [] {
    mg_init_library(0);
    return true;
  }();
  (void)initialized;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Exposer>> Exposer::Start(
    const Registry* registry, absl::string_view address) {
  if (registry == nullptr) {
    return absl::InvalidArgumentError("metrics exposer needs a registry");
  }
  absl::StatusOr<std::string> ports = ListeningPorts(address);
  if (!ports.ok()) return ports.status();
  InitLibraryOnce();

  std::unique_ptr<Exposer> exposer(new Exposer(registry));
  const char* options[] = {
      "listening_ports",    ports->c_str(), "num_threads", "2",
      "request_timeout_ms", "10000",        nullptr};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  callbacks.log_message = &SilenceLog;
  mg_init_data init;
  init.callbacks = &callbacks;
  init.user_data = exposer.get();
  init.configuration_options = options;
  char error_text[256] = "";
  unsigned error_code = 0;
  mg_error_data error;
  error.code = &error_code;
  error.text = error_text;
  error.text_buffer_size = sizeof(error_text);
  exposer->context_ = mg_start2(&init, &error);
  if (exposer->context_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, ": ",
                     error_text[0] != '\0' ? error_text : "civetweb failed"));
  }
  mg_server_port bound[4];
  std::memset(bound, 0, sizeof(bound));
  const int count = mg_get_server_ports(exposer->context_, 4, bound);
  if (count < 1 || bound[0].port <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ",
                                               address, ": no port was bound"));
  }
  exposer->port_ = bound[0].port;
  // "/metrics$" matches only /metrics exactly; "/" catches everything else
  // (civetweb picks the longest matching handler).
  mg_set_request_handler(exposer->context_, "/metrics$",
                         &Exposer::HandleMetrics, exposer.get());
  mg_set_request_handler(exposer->context_, "/", &Exposer::HandleNotFound,
                         exposer.get());
  return exposer;
}

Exposer::~Exposer() { Stop(); }

void Exposer::Stop() {
  if (context_ != nullptr) {
    mg_stop(context_);
    context_ = nullptr;
  }
}

int Exposer::HandleMetrics(mg_connection* connection, void* self) {
  const Exposer* exposer = static_cast<const Exposer*>(self);
  const mg_request_info* request = mg_get_request_info(connection);
  const absl::string_view method =
      request != nullptr && request->request_method != nullptr
          ? request->request_method
          : "";
  if (method != "GET" && method != "HEAD") {
    mg_response_header_start(connection, 405);
    mg_response_header_add(connection, "Allow", "GET, HEAD", -1);
    mg_response_header_add(connection, "Content-Length", "0", -1);
    mg_response_header_send(connection);
    return 405;
  }
  const std::string body = SerializeText(exposer->registry_->Collect());
  const std::string content_type(kTextContentType);
  mg_response_header_start(connection, 200);
  mg_response_header_add(connection, "Content-Type", content_type.c_str(), -1);
  const std::string length = absl::StrCat(body.size());
  mg_response_header_add(connection, "Content-Length", length.c_str(), -1);
  mg_response_header_send(connection);
  if (method == "GET") mg_write(connection, body.data(), body.size());
  return 200;
}

int Exposer::HandleNotFound(mg_connection* connection, void*) {
  mg_send_http_error(connection, 404, "%s",
                     "Not found: metrics are served at /metrics\n");
  return 404;
}

}  // namespace compatd::metrics
