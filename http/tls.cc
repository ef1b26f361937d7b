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
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/bounded_file.h"
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

// A certificate, key or CA file: a regular file of at most kMaxTlsFileBytes,
// opened without blocking (base/bounded_file.h), so that --tls-key=/dev/zero
// or a FIFO fails at once instead of filling memory or hanging.
absl::StatusOr<std::string> ReadFile(const std::string& flag,
                                     const std::string& path) {
  absl::StatusOr<std::string> bytes = base::ReadBoundedFile(
      path, {.max_bytes = kMaxTlsFileBytes, .what = "the file"});
  if (!bytes.ok()) {
    // "--tls-key=/dev/zero: not a regular file (it is a device)"
    return absl::InvalidArgumentError(
        absl::StrCat(flag, "=", bytes.status().message()));
  }
  return bytes;
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
      base::LogLimited(
          base::LogLevel::kWarning, absl::StrCat("tls-reload", flag_prefix_),
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

TlsFileContext::Pems TlsFileContext::pems() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Pems{loaded_->cert_pem, loaded_->key_pem, loaded_->ca_pem};
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

}  // namespace compatd::http
