#pragma once

// The gRPC port's TLS: gRPC's own certificate watcher over the files of
// http/tls.h's http::TlsFiles.

#include <memory>

#include "absl/time/time.h"
#include "grpcpp/security/server_credentials.h"
#include "http/tls.h"

namespace compatd::service {

// Insecure credentials when `files` is not enabled(), else TLS (mTLS with a
// client CA) whose files are re-read every `refresh`. Call
// http::CheckTlsFiles() first: the provider itself only logs unreadable files.
std::shared_ptr<grpc::ServerCredentials> GrpcServerCredentials(
    const http::TlsFiles& files, absl::Duration refresh);

}  // namespace compatd::service
