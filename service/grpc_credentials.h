#pragma once

// The gRPC port's TLS: gRPC's own certificate watcher, fed with files compatd
// has read and checked itself.
//
// gRPC's FileWatcherCertificateProvider reads the files it is given on its
// own thread, at start and every refresh interval, whole and without bounds
// (fopen, fseek to the end, one allocation of that size) and blocking (a FIFO
// hangs its thread). So it is never given the paths of --tls-cert, --tls-key
// and --tls-client-ca: compatd reads those (http::TlsFileContext: regular
// files of at most http::kMaxTlsFileBytes, opened without blocking, the key
// checked against the certificate) and hands gRPC memory files (memfd,
// /proc/self/fd/N) holding what it read. A rotation that reads as a valid
// pair replaces them whole; a bad or half-written one keeps the previous pair
// serving, as on /metrics.
//
//   COMPATD_ASSIGN_OR_RETURN(auto files, GrpcTlsFiles::Create(&context));
//   builder.AddListeningPort(addr, files->Credentials(refresh));
//   ... context.ReloadNow(); files->Update();   // every refresh interval

#include <memory>
#include <mutex>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/security/server_credentials.h"
#include "http/tls.h"

namespace compatd::service {

class GrpcTlsFiles final {
 public:
  // Memory files with `context`'s current files. `context` must outlive
  // this, and this every gRPC server its Credentials() were given to.
  // INTERNAL when memory files cannot be made or /proc/self/fd cannot be
  // read.
  static absl::StatusOr<std::unique_ptr<GrpcTlsFiles>> Create(
      const http::TlsFileContext* context);
  ~GrpcTlsFiles();
  GrpcTlsFiles(const GrpcTlsFiles&) = delete;
  GrpcTlsFiles& operator=(const GrpcTlsFiles&) = delete;

  // TLS (mTLS with a client CA) whose files gRPC re-reads every `refresh`.
  std::shared_ptr<grpc::ServerCredentials> Credentials(
      absl::Duration refresh) const;

  // Replaces the memory files with the context's current files if they
  // differ. Thread-safe.
  absl::Status Update();

 private:
  explicit GrpcTlsFiles(const http::TlsFileContext* context);

  const http::TlsFileContext* const context_;
  const bool client_ca_;
  mutable std::mutex mu_;
  // The key and the certificate chain in one file, so that one dup3() swaps
  // both and gRPC can never read a key with the other pair's chain.
  int identity_fd_ ABSL_GUARDED_BY(mu_) = -1;
  int ca_fd_ ABSL_GUARDED_BY(mu_) = -1;
  std::string identity_ ABSL_GUARDED_BY(mu_);
  std::string ca_ ABSL_GUARDED_BY(mu_);
  absl::Time last_mtime_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

// Insecure credentials (plaintext gRPC).
std::shared_ptr<grpc::ServerCredentials> GrpcInsecureCredentials();

}  // namespace compatd::service
