#pragma once

// TLS and mutual TLS for the gRPC port and the /metrics endpoint, with
// certificate files that are re-read when they change (cert-manager and
// kubelet rotate Secret mounts in place), so rotation needs no restart.
//
//   TlsFiles files{.cert = "/tls/tls.crt", .key = "/tls/tls.key",
//                  .client_ca = "/tls/ca.crt"};
//   COMPATD_RETURN_IF_ERROR(CheckTlsFiles(files, "--tls"));
//   builder.AddListeningPort(addr, grpc_files->Credentials(refresh));
//   // (service/grpc_credentials.h: gRPC is not linked here)
//
// gRPC: a TlsFileContext reads the files (re-read every `refresh` by
// service/tls_monitor.h), and
// grpc::experimental::FileWatcherCertificateProvider polls memory copies of
// what it read (service/grpc_credentials.h says why) every `refresh` (at least
// 1 s) and hands new ones to new handshakes; established connections keep the
// certificate they started with. With a client CA, clients must present a
// certificate that chains to it
// (GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY).
//
// The HTTP ports (http/server.h): TlsFileContext gives the server's SSL_CTX
// a certificate callback that, at most once per `refresh`, re-reads the files
// on a handshake and switches to them when they form a valid pair (a
// half-written rotation keeps the previous pair serving and is logged).

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace compatd::http {

struct TlsFiles {
  std::string cert;       // PEM certificate chain, leaf first; empty: no TLS
  std::string key;        // PEM private key of the leaf
  std::string client_ca;  // PEM CA bundle; set: require client certificates

  bool enabled() const { return !cert.empty() || !key.empty(); }
};

// The largest certificate chain, key or CA bundle read (Debian's bundle of
// every public root CA is about 220 KB).
inline constexpr size_t kMaxTlsFileBytes = 1 << 20;

// Checks, at startup, that cert and key are both given, readable, PEM, and
// belong together, and that the client CA (if any) holds at least one
// certificate; a client CA without cert/key is an error too. INVALID_ARGUMENT
// naming the flag (`flag_prefix` + "-cert", "-key", "-client-ca") and what is
// wrong. OK when nothing is set.
absl::Status CheckTlsFiles(const TlsFiles& files,
                           absl::string_view flag_prefix);

// One certificate of a listener's files, for logs and the expiry metric.
struct CertificateInfo {
  std::string file;     // "cert" (the chain, leaf first) or "client_ca"
  int index = 0;        // position in its file, from 0 (the leaf)
  std::string subject;  // RFC 2253, e.g. "CN=compatd.example.com,O=Example"
  std::string serial;   // hex
  absl::Time not_before;
  absl::Time not_after;
};

// The certificate, key and client CA of one listener, loaded from files and
// re-read on a handshake once `refresh` has passed since the last look.
// Certificates past their validity (or not yet valid) are served, as the
// files say, but never silently: loading and each rotation log every
// certificate's validity (a warning for one that is expired or not yet
// valid), and NoteExpiry() logs, once, each one that expires while it serves.
// Thread-safe; must outlive every SSL_CTX it configured.
class TlsFileContext final {
 public:
  // Loads the files (CheckTlsFiles' errors).
  static absl::StatusOr<std::unique_ptr<TlsFileContext>> Create(
      TlsFiles files, absl::Duration refresh, std::string flag_prefix);
  ~TlsFileContext();
  TlsFileContext(const TlsFileContext&) = delete;
  TlsFileContext& operator=(const TlsFileContext&) = delete;

  // Configures an OpenSSL SSL_CTX (passed as void*, as civetweb hands it
  // over): TLS 1.2+, the certificate callback, and with a client CA,
  // verification of a required client certificate.
  absl::Status Configure(void* ssl_ctx);

  // Re-reads the files now if they changed; true when a new pair (or CA) was
  // taken. Errors leave the previous files serving.
  absl::StatusOr<bool> ReloadNow();

  // How many times new files were taken since Create().
  int reloads() const;

  // The files in force, as read (PEM): what a consumer that reads the files
  // itself (gRPC's certificate watcher, service/grpc_credentials.h) is handed
  // instead of the paths.
  struct Pems {
    std::string cert;
    std::string key;
    std::string client_ca;  // empty without a client CA
  };
  Pems pems() const;

  // Every certificate of the files in force (the chain, then the client CA
  // bundle).
  std::vector<CertificateInfo> certificates() const;

  // Logs (an error, once per certificate) each certificate in force that has
  // expired by `now` and was not said to be expired yet; returns when the
  // next one expires (absl::InfiniteFuture() if none).
  absl::Time NoteExpiry(absl::Time now);

  // "--tls", "--metrics-tls".
  const std::string& flag_prefix() const { return flag_prefix_; }

  // OpenSSL's certificate callback for one handshake (an SSL*): re-reads the
  // files when due and sets the current pair and client CA on it. 1 on
  // success, 0 to fail the handshake.
  int OnHandshake(void* ssl);

  // The parsed files (opaque outside tls.cc).
  struct Loaded;

 private:
  TlsFileContext(TlsFiles files, absl::Duration refresh,
                 std::string flag_prefix);

  const TlsFiles files_;
  const absl::Duration refresh_;
  const std::string flag_prefix_;

  mutable std::mutex mu_;
  std::shared_ptr<const Loaded> loaded_ ABSL_GUARDED_BY(mu_);
  absl::Time next_check_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  int reloads_ ABSL_GUARDED_BY(mu_) = 0;
  // Certificates of loaded_ already said to be expired (by index into
  // loaded_'s certificates).
  std::vector<bool> expiry_logged_ ABSL_GUARDED_BY(mu_);
};

}  // namespace compatd::http
