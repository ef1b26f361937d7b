#include "http/exposer.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "metrics/text_format.h"

namespace compatd::http {
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

// Opens and closes one TCP connection to host:port (numeric host, no
// brackets). Errors are ignored: this only wakes a poll().
void Poke(const std::string& host, int port) {
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* result = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &result) != 0) return;
  for (addrinfo* ai = result; ai != nullptr; ai = ai->ai_next) {
    const int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) continue;
    const int connected = connect(fd, ai->ai_addr, ai->ai_addrlen);
    close(fd);
    if (connected == 0) break;
  }
  freeaddrinfo(result);
}

// The address to poke for a listening host: wildcards become loopback.
std::string PokeHost(absl::string_view host) {
  if (absl::StartsWith(host, "[")) {
    host.remove_prefix(1);
    host.remove_suffix(1);
    return host == "::" ? "::1" : std::string(host);
  }
  return host == "0.0.0.0" ? "127.0.0.1" : std::string(host);
}

void InitLibraryOnce() {
  static const bool initialized = [] {
    mg_init_library(0);
    return true;
  }();
  (void)initialized;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Exposer>> Exposer::Start(
    const metrics::Registry* registry, absl::string_view address) {
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
  exposer->poke_host_ = PokeHost(address.substr(0, address.rfind(':')));
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
  if (context_ == nullptr) return;
  // civetweb's listener thread notices the stop flag only when its poll()
  // returns, which after the first request means its 2 s timeout. A
  // connection to our own port wakes it at once; keep poking until mg_stop()
  // is done (the listening socket is closed early in it).
  std::atomic<bool> stopped{false};
  std::thread stopper([this, &stopped] {
    mg_stop(context_);
    stopped.store(true);
  });
  for (int i = 0; i < 200 && !stopped.load(); ++i) {
    Poke(poke_host_, port_);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stopper.join();
  context_ = nullptr;
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
  const std::string body =
      metrics::SerializeText(exposer->registry_->Collect());
  const std::string content_type(metrics::kTextContentType);
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

}  // namespace compatd::http
