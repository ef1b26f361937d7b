#include "http/tls.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/log.h"

namespace compatd::http {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct ChainFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct NamesFree {
  void operator()(STACK_OF(X509_NAME) * s) const {
    sk_X509_NAME_pop_free(s, X509_NAME_free);
  }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};

absl::StatusOr<std::string> ReadFile(const std::string& flag,
                                     const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, "=", path, ": cannot read the file: ", std::strerror(errno)));
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Every PEM certificate in `pem`, in order.
std::vector<std::unique_ptr<X509, X509Free>> ParseCertificates(
    const std::string& pem) {
  std::vector<std::unique_ptr<X509, X509Free>> certs;
  std::unique_ptr<BIO, BioFree> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  while (bio != nullptr) {
    X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (cert == nullptr) break;
    certs.emplace_back(cert);
  }
  // The loop ends on a "no start line" error: not an error for us, and
  // OpenSSL's per-thread error queue must not carry it into a handshake.
  ERR_clear_error();
  return certs;
}

}  // namespace

struct TlsFileContext::Loaded {
  std::string cert_pem;
  std::string key_pem;
  std::string ca_pem;
  std::unique_ptr<X509, X509Free> leaf;
  std::unique_ptr<STACK_OF(X509), ChainFree> chain;  // after the leaf
  std::unique_ptr<EVP_PKEY, PkeyFree> key;
  std::unique_ptr<X509_STORE, StoreFree> ca_store;  // null: no client CA
  std::unique_ptr<STACK_OF(X509_NAME), NamesFree> ca_names;
};

namespace {

absl::StatusOr<std::shared_ptr<TlsFileContext::Loaded>> LoadFiles(
    const TlsFiles& files, absl::string_view prefix) {
  const std::string cert_flag = absl::StrCat(prefix, "-cert");
  const std::string key_flag = absl::StrCat(prefix, "-key");
  const std::string ca_flag = absl::StrCat(prefix, "-client-ca");
  if (files.cert.empty() || files.key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        cert_flag, " and ", key_flag,
        " go together: give both (PEM files, e.g. a kubernetes.io/tls "
        "Secret's tls.crt and tls.key) or neither"));
  }
  auto loaded = std::make_shared<TlsFileContext::Loaded>();
  auto cert_pem = ReadFile(cert_flag, files.cert);
  if (!cert_pem.ok()) return cert_pem.status();
  loaded->cert_pem = *std::move(cert_pem);
  auto key_pem = ReadFile(key_flag, files.key);
  if (!key_pem.ok()) return key_pem.status();
  loaded->key_pem = *std::move(key_pem);

  auto certs = ParseCertificates(loaded->cert_pem);
  if (certs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        cert_flag, "=", files.cert,
        ": no PEM certificate (-----BEGIN CERTIFICATE-----) in the file"));
  }
  loaded->leaf = std::move(certs.front());
  loaded->chain.reset(sk_X509_new_null());
  for (size_t i = 1; i < certs.size(); ++i) {
    sk_X509_push(loaded->chain.get(), certs[i].release());
  }
  {
    std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(
        loaded->key_pem.data(), static_cast<int>(loaded->key_pem.size())));
    loaded->key.reset(
        PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    ERR_clear_error();
  }
  if (loaded->key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        key_flag, "=", files.key,
        ": not an unencrypted PEM private key (-----BEGIN "
        "PRIVATE KEY----- or -----BEGIN EC/RSA PRIVATE KEY-----)"));
  }
  if (X509_check_private_key(loaded->leaf.get(), loaded->key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(key_flag, "=", files.key,
                     " does not belong to the first certificate of ", cert_flag,
                     "=", files.cert));
  }
  if (!files.client_ca.empty()) {
    auto ca_pem = ReadFile(ca_flag, files.client_ca);
    if (!ca_pem.ok()) return ca_pem.status();
    loaded->ca_pem = *std::move(ca_pem);
    auto cas = ParseCertificates(loaded->ca_pem);
    if (cas.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          ca_flag, "=", files.client_ca,
          ": no PEM certificate (-----BEGIN CERTIFICATE-----) in the file"));
    }
    loaded->ca_store.reset(X509_STORE_new());
    loaded->ca_names.reset(sk_X509_NAME_new_null());
    for (auto& ca : cas) {
      X509_STORE_add_cert(loaded->ca_store.get(), ca.get());
      sk_X509_NAME_push(loaded->ca_names.get(),
                        X509_NAME_dup(X509_get_subject_name(ca.get())));
    }
    ERR_clear_error();
  }
  return loaded;
}

}  // namespace

absl::Status CheckTlsFiles(const TlsFiles& files,
                           absl::string_view flag_prefix) {
  if (!files.enabled()) {
    if (!files.client_ca.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag_prefix, "-client-ca needs ", flag_prefix,
                       "-cert and ", flag_prefix,
                       "-key: client certificates are only asked for over "
                       "TLS"));
    }
    return absl::OkStatus();
  }
  return LoadFiles(files, flag_prefix).status();
}

TlsFileContext::TlsFileContext(TlsFiles files, absl::Duration refresh,
                               std::string flag_prefix)
    : files_(std::move(files)),
      refresh_(refresh),
      flag_prefix_(std::move(flag_prefix)) {}

TlsFileContext::~TlsFileContext() = default;

absl::StatusOr<std::unique_ptr<TlsFileContext>> TlsFileContext::Create(
    TlsFiles files, absl::Duration refresh, std::string flag_prefix) {
  auto loaded = LoadFiles(files, flag_prefix);
  if (!loaded.ok()) return loaded.status();
  std::unique_ptr<TlsFileContext> context(
      new TlsFileContext(std::move(files), refresh, std::move(flag_prefix)));
  std::lock_guard<std::mutex> lock(context->mu_);
  context->loaded_ = *std::move(loaded);
  context->next_check_ = absl::Now() + refresh;
  return context;
}

absl::StatusOr<bool> TlsFileContext::ReloadNow() {
  absl::StatusOr<std::shared_ptr<Loaded>> next =
      LoadFiles(files_, flag_prefix_);
  std::lock_guard<std::mutex> lock(mu_);
  if (!next.ok()) {
    const std::string error(next.status().message());
    if (error != last_error_) {
      base::LogWarning(
          absl::StrCat("TLS files not reloaded, the previous ones keep "
                       "serving: ",
                       error));
      last_error_ = error;
    }
    return next.status();
  }
  last_error_.clear();
  if ((*next)->cert_pem == loaded_->cert_pem &&
      (*next)->key_pem == loaded_->key_pem &&
      (*next)->ca_pem == loaded_->ca_pem) {
    return false;
  }
  loaded_ = *std::move(next);
  ++reloads_;
  base::LogInfo(absl::StrCat("TLS files of ", flag_prefix_,
                             "-cert=", files_.cert, " reloaded"));
  return true;
}

int TlsFileContext::reloads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reloads_;
}

absl::Status TlsFileContext::Configure(void* ssl_ctx) {
  SSL_CTX* ctx = static_cast<SSL_CTX*>(ssl_ctx);
  if (ctx == nullptr) {
    return absl::InvalidArgumentError("no SSL_CTX to configure");
  }
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
    ERR_clear_error();
    return absl::InternalError("OpenSSL refused TLS 1.2 as minimum version");
  }
  SSL_CTX_set_cert_cb(
      ctx,
      [](SSL* ssl, void* self) {
        return static_cast<TlsFileContext*>(self)->OnHandshake(ssl);
      },
      this);
  if (!files_.client_ca.empty()) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       nullptr);
  }
  return absl::OkStatus();
}

int TlsFileContext::OnHandshake(void* ssl_handle) {
  SSL* ssl = static_cast<SSL*>(ssl_handle);
  bool due = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = absl::Now();
    if (now >= next_check_) {
      next_check_ = now + refresh_;
      due = true;
    }
  }
  if (due) (void)ReloadNow();  // errors are logged; the old pair serves
  std::shared_ptr<const Loaded> loaded;
  {
    std::lock_guard<std::mutex> lock(mu_);
    loaded = loaded_;
  }
  if (SSL_use_cert_and_key(ssl, loaded->leaf.get(), loaded->key.get(),
                           loaded->chain.get(), 1) != 1) {
    ERR_clear_error();
    return 0;
  }
  if (loaded->ca_store != nullptr) {
    if (SSL_set1_verify_cert_store(ssl, loaded->ca_store.get()) != 1) {
      ERR_clear_error();
      return 0;
    }
    SSL_set_client_CA_list(ssl, SSL_dup_CA_list(loaded->ca_names.get()));
  }
  return 1;
}

namespace {

void SetSocketTimeouts(int fd, absl::Duration timeout) {
  timeval tv = absl::ToTimeval(timeout);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

constexpr absl::Duration kHandshakeTimeout = absl::Seconds(10);
constexpr absl::Duration kIdleTimeout = absl::Seconds(30);

}  // namespace

absl::StatusOr<std::unique_ptr<TlsTerminator>> TlsTerminator::Start(
    absl::string_view address, int backend_port, TlsFileContext* context) {
  const size_t colon = address.rfind(':');
  absl::string_view host =
      colon == absl::string_view::npos ? "" : address.substr(0, colon);
  const absl::string_view port_text =
      colon == absl::string_view::npos ? "" : address.substr(colon + 1);
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  if (host.empty() || !absl::SimpleAtoi(port_text, &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address \"", address,
                     "\": expected host:port with a numeric host, e.g. "
                     "0.0.0.0:9464 or [::]:9464"));
  }
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* result = nullptr;
  const std::string host_text(host);
  const std::string service = absl::StrCat(port);
  if (getaddrinfo(host_text.c_str(), service.c_str(), &hints, &result) != 0 ||
      result == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address \"", address, "\": host \"", host,
                     "\" is not a numeric IPv4 or IPv6 address"));
  }
  std::unique_ptr<TlsTerminator> terminator(new TlsTerminator());
  terminator->backend_port_ = backend_port;
  terminator->listen_fd_ =
      socket(result->ai_family, result->ai_socktype | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (terminator->listen_fd_ >= 0) {
    setsockopt(terminator->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one,
               sizeof(one));
  }
  const bool bound =
      terminator->listen_fd_ >= 0 &&
      bind(terminator->listen_fd_, result->ai_addr, result->ai_addrlen) == 0 &&
      listen(terminator->listen_fd_, 64) == 0;
  const int bind_errno = errno;
  freeaddrinfo(result);
  if (!bound) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics over TLS on ", address, ": ",
                     std::strerror(bind_errno)));
  }
  sockaddr_storage bound_address;
  socklen_t length = sizeof(bound_address);
  getsockname(terminator->listen_fd_,
              reinterpret_cast<sockaddr*>(&bound_address), &length);
  terminator->port_ =
      ntohs(bound_address.ss_family == AF_INET6
                ? reinterpret_cast<sockaddr_in6*>(&bound_address)->sin6_port
                : reinterpret_cast<sockaddr_in*>(&bound_address)->sin_port);

  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    ERR_clear_error();
    return absl::InternalError("OpenSSL cannot create a TLS server context");
  }
  terminator->ssl_ctx_ = ctx;
  if (absl::Status s = context->Configure(ctx); !s.ok()) return s;
  if (pipe2(terminator->wake_fds_, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  terminator->acceptor_ =
      std::thread([t = terminator.get()] { t->AcceptLoop(); });
  return terminator;
}

TlsTerminator::~TlsTerminator() {
  Stop();
  if (ssl_ctx_ != nullptr) SSL_CTX_free(static_cast<SSL_CTX*>(ssl_ctx_));
  for (int fd : wake_fds_) {
    if (fd >= 0) close(fd);
  }
}

void TlsTerminator::Stop() {
  if (stopping_.exchange(true)) return;
  if (acceptor_.joinable()) {
    const char byte = 0;
    (void)!write(wake_fds_[1], &byte, 1);
    acceptor_.join();
  }
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    listen_fd_ = -1;
  }
  std::unique_lock<std::mutex> lock(mu_);
  // Wakes every relay blocked in a handshake, read or poll.
  for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
  idle_.wait(lock, [this] { return active_ == 0; });
}

void TlsTerminator::AcceptLoop() {
  while (!stopping_.load()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fds_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    if (active_ >= kMaxConnections || stopping_.load()) {
      close(client);
      continue;
    }
    ++active_;
    open_fds_.push_back(client);
    std::thread([this, client] { Relay(client); }).detach();
  }
}

void TlsTerminator::Relay(int client) {
  int backend = -1;
  SSL* ssl = SSL_new(static_cast<SSL_CTX*>(ssl_ctx_));
  SetSocketTimeouts(client, kHandshakeTimeout);
  if (ssl != nullptr && SSL_set_fd(ssl, client) == 1 && SSL_accept(ssl) == 1) {
    SetSocketTimeouts(client, kIdleTimeout);
    backend = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to;
    std::memset(&to, 0, sizeof(to));
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(backend_port_));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (backend >= 0 &&
        connect(backend, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0) {
      SetSocketTimeouts(backend, kIdleTimeout);
      char buffer[16384];
      while (!stopping_.load()) {
        pollfd fds[2] = {{client, POLLIN, 0}, {backend, POLLIN, 0}};
        const bool pending = SSL_pending(ssl) > 0;
        const int ready =
            pending ? 1
                    : poll(fds, 2,
                           static_cast<int>(
                               absl::ToInt64Milliseconds(kIdleTimeout)));
        if (ready <= 0) break;  // idle, or poll failed
        if (pending || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
          const int n = SSL_read(ssl, buffer, sizeof(buffer));
          if (n <= 0) break;
          if (!WriteAll(backend, buffer, static_cast<size_t>(n))) break;
        }
        if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
          const ssize_t n = recv(backend, buffer, sizeof(buffer), 0);
          if (n <= 0) break;
          if (SSL_write(ssl, buffer, static_cast<int>(n)) <= 0) break;
        }
      }
      SSL_shutdown(ssl);
    }
  }
  ERR_clear_error();  // this thread's OpenSSL error queue dies with it
  if (ssl != nullptr) SSL_free(ssl);
  if (backend >= 0) close(backend);
  std::lock_guard<std::mutex> lock(mu_);
  open_fds_.erase(std::find(open_fds_.begin(), open_fds_.end(), client));
  close(client);
  if (--active_ == 0) idle_.notify_all();
}

}  // namespace compatd::http
