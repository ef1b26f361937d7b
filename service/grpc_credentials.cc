#include "service/grpc_credentials.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace compatd::service {
namespace {

std::string FdPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

absl::Status Errno(absl::string_view what) {
  return absl::InternalError(
      absl::StrCat("TLS files for gRPC: ", what, ": ", std::strerror(errno)));
}

}  // namespace

GrpcTlsFiles::GrpcTlsFiles(const http::TlsFileContext* context)
    : context_(context), client_ca_(!context->pems().client_ca.empty()) {}

GrpcTlsFiles::~GrpcTlsFiles() {
  std::lock_guard<std::mutex> lock(mu_);
  if (identity_fd_ >= 0) close(identity_fd_);
  if (ca_fd_ >= 0) close(ca_fd_);
}

absl::StatusOr<std::unique_ptr<GrpcTlsFiles>> GrpcTlsFiles::Create(
    const http::TlsFileContext* context) {
  std::unique_ptr<GrpcTlsFiles> files(new GrpcTlsFiles(context));
  if (absl::Status s = files->Update(); !s.ok()) return s;
  // gRPC opens the files by path: /proc/self/fd must be there.
  std::lock_guard<std::mutex> lock(files->mu_);
  const int probe = open(FdPath(files->identity_fd_).c_str(),
                         O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (probe < 0) {
    return Errno(absl::StrCat("cannot open ", FdPath(files->identity_fd_),
                              " (is /proc mounted?)"));
  }
  close(probe);
  return files;
}

absl::Status GrpcTlsFiles::Update() {
  const http::TlsFileContext::Pems pems = context_->pems();
  // The key first: gRPC takes the first PEM block of each kind it looks for
  // and skips the others, so one file serves as both key and chain.
  std::string identity = pems.key;
  if (!identity.empty() && identity.back() != '\n') identity.push_back('\n');
  identity += pems.cert;

  std::lock_guard<std::mutex> lock(mu_);
  // gRPC re-reads a pair whose modification time changed while it read it
  // (seconds): each new file gets a time at least a second after the last,
  // so that a swap between its reads of the key and of the chain is always
  // seen and re-read, whatever the clock says.
  auto replace = [this](int& fd, const std::string& bytes,
                        const char* name) -> absl::Status {
    const int next = memfd_create(name, MFD_CLOEXEC);
    if (next < 0) return Errno("memfd_create");
    for (size_t written = 0; written < bytes.size();) {
      const ssize_t n =
          write(next, bytes.data() + written, bytes.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const absl::Status error = Errno("writing a memory file");
        close(next);
        return error;
      }
      written += static_cast<size_t>(n);
    }
    absl::Time mtime = absl::Now();
    if (last_mtime_ != absl::InfinitePast()) {
      mtime = std::max(mtime, last_mtime_ + absl::Seconds(1));
    }
    const timespec times[2] = {{0, UTIME_OMIT}, absl::ToTimespec(mtime)};
    futimens(next, times);
    last_mtime_ = mtime;
    if (fd < 0) {
      fd = next;
      return absl::OkStatus();
    }
    // Atomic for anyone opening /proc/self/fd/<fd>: the old file or the new.
    if (dup3(next, fd, O_CLOEXEC) < 0) {
      const absl::Status error = Errno("dup3");
      close(next);
      return error;
    }
    close(next);
    return absl::OkStatus();
  };
  if (identity_fd_ < 0 || identity != identity_) {
    if (absl::Status s = replace(identity_fd_, identity, "compatd-grpc-tls");
        !s.ok()) {
      return s;
    }
    identity_ = std::move(identity);
  }
  if (client_ca_ && (ca_fd_ < 0 || pems.client_ca != ca_)) {
    if (absl::Status s = replace(ca_fd_, pems.client_ca, "compatd-grpc-ca");
        !s.ok()) {
      return s;
    }
    ca_ = pems.client_ca;
  }
  return absl::OkStatus();
}

std::shared_ptr<grpc::ServerCredentials> GrpcTlsFiles::Credentials(
    absl::Duration refresh) const {
  const unsigned int refresh_seconds = static_cast<unsigned int>(
      std::max<int64_t>(1, absl::ToInt64Seconds(refresh)));
  std::string identity_path;
  std::string ca_path;
  {
    std::lock_guard<std::mutex> lock(mu_);
    identity_path = FdPath(identity_fd_);
    if (ca_fd_ >= 0) ca_path = FdPath(ca_fd_);
  }
  auto provider =
      std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          identity_path, identity_path, ca_path, refresh_seconds);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (ca_path.empty()) {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    options.watch_root_certs();
    options.set_cert_request_type(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

std::shared_ptr<grpc::ServerCredentials> GrpcInsecureCredentials() {
  return grpc::InsecureServerCredentials();
}

}  // namespace compatd::service
