#pragma once

// gRPC's own log lines (gpr_log: "Handshake failed with fatal error ...", one
// per failed TLS handshake) through compatd's log, rate-limited per call site
// (base::LogLimited), so that a client cannot flood the log with them.

namespace compatd::service {

// Installs the route (gpr_set_log_function); process-wide, idempotent.
void RouteGrpcLogsThroughCompatdLog();

}  // namespace compatd::service
