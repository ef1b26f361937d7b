#pragma once

// Serves a metrics::Registry over HTTP (civetweb): GET or HEAD /metrics answers
// the text exposition format 0.0.4 (Content-Type "text/plain; version=0.0.4;
// charset=utf-8"); other methods on /metrics get 405, other paths 404.
//
//   COMPATD_ASSIGN_OR_RETURN(std::unique_ptr<Exposer> exposer,
//                            Exposer::Start(&registry, "127.0.0.1:9464"));
//   exposer->port();  // the bound port (useful with ":0")
//
// The exposer stops (and joins its threads) when destroyed or on Stop(). The
// registry must outlive it. Thread-safe.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "metrics/registry.h"

struct mg_context;
struct mg_connection;

namespace compatd::http {

inline constexpr absl::string_view kDefaultMetricsAddress = "127.0.0.1:9464";

class Exposer final {
 public:
  // `address` is "host:port" with an IPv4 host or a bracketed IPv6 host
  // ("[::1]:9464"); port 0 picks a free port. INVALID_ARGUMENT for a
  // malformed address, UNAVAILABLE when it cannot be bound (with civetweb's
  // reason).
  static absl::StatusOr<std::unique_ptr<Exposer>> Start(
      const metrics::Registry* registry,
      absl::string_view address = kDefaultMetricsAddress);

  ~Exposer();
  Exposer(const Exposer&) = delete;
  Exposer& operator=(const Exposer&) = delete;

  // The port actually bound.
  int port() const { return port_; }
  // Stops serving; waits for in-flight scrapes. Idempotent.
  void Stop();

 private:
  Exposer(const metrics::Registry* registry) : registry_(registry) {}
  static int HandleMetrics(mg_connection* connection, void* self);
  static int HandleNotFound(mg_connection* connection, void* self);

  const metrics::Registry* registry_;
  mg_context* context_ = nullptr;
  int port_ = 0;
  std::string poke_host_;  // where Stop() connects to wake civetweb
};

}  // namespace compatd::http
