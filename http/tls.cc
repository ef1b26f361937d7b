#include "http/tls.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/bn.h>
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
#include <ctime>
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
  std::vector<CertificateInfo> certificates;  // chain, then client CA
};

namespace {

absl::Time Asn1Time(const ASN1_TIME* time) {
  struct tm tm;
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) {
    ERR_clear_error();
    return absl::InfinitePast();
  }
  return absl::FromTimeT(timegm(&tm));
}

CertificateInfo Describe(X509* cert, std::string file, int index) {
  CertificateInfo info;
  info.file = std::move(file);
  info.index = index;
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (bio != nullptr &&
      X509_NAME_print_ex(bio.get(), X509_get_subject_name(cert), 0,
                         XN_FLAG_RFC2253) >= 0) {
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    if (size > 0) info.subject.assign(data, static_cast<size_t>(size));
  }
  if (BIGNUM* serial =
          ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr)) {
    if (char* hex = BN_bn2hex(serial)) {
      info.serial = hex;
      OPENSSL_free(hex);
    }
    BN_free(serial);
  }
  info.not_before = Asn1Time(X509_get0_notBefore(cert));
  info.not_after = Asn1Time(X509_get0_notAfter(cert));
  ERR_clear_error();
  return info;
}

std::string Rfc3339(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

// "certificate 2 of --tls-cert=/tls/tls.crt (subject CN=x, serial 1F)".
std::string Name(const CertificateInfo& info, absl::string_view flag_prefix,
                 const TlsFiles& files) {
  const bool ca = info.file == "client_ca";
  return absl::StrCat(
      info.index == 0 && !ca ? "the certificate"
                             : absl::StrCat("certificate ", info.index + 1),
      " of ", flag_prefix,
      ca ? "-client-ca=" : "-cert=", ca ? files.client_ca : files.cert,
      " (subject ", info.subject, ", serial ", info.serial, ")");
}

// One line per certificate of `loaded` at load and rotation: what it is and
// until when; a warning for one that clients refuse now.
void LogValidity(const TlsFileContext::Loaded& loaded,
                 absl::string_view flag_prefix, const TlsFiles& files,
                 absl::Time now) {
  for (const CertificateInfo& info : loaded.certificates) {
    const std::string name = Name(info, flag_prefix, files);
    if (now >= info.not_after) {
      base::LogLimited(
          base::LogLevel::kWarning, "tls-certificate-validity",
          absl::StrCat(name, " expired at ", Rfc3339(info.not_after),
                       info.file == "client_ca"
                           ? ": client certificates it signed are refused"
                           : ": TLS clients refuse it; rotate it"));
    } else if (now < info.not_before) {
      base::LogLimited(
          base::LogLevel::kWarning, "tls-certificate-validity",
          absl::StrCat(name, " is not valid before ", Rfc3339(info.not_before),
                       ": TLS clients refuse it until then"));
    } else if (info.index == 0 || info.file == "cert") {
      // The chain, not every CA of a bundle.
      base::LogLimited(
          base::LogLevel::kInfo, "tls-certificate-validity",
          absl::StrCat(name, " is valid until ", Rfc3339(info.not_after), " (",
                       absl::FormatDuration(
                           absl::Trunc(info.not_after - now, absl::Minutes(1))),
                       " from now)"));
    }
  }
}

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
  for (size_t i = 0; i < certs.size(); ++i) {
    loaded->certificates.push_back(
        Describe(certs[i].get(), "cert", static_cast<int>(i)));
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
    for (size_t i = 0; i < cas.size(); ++i) {
      loaded->certificates.push_back(
          Describe(cas[i].get(), "client_ca", static_cast<int>(i)));
    }
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
  const absl::Time now = absl::Now();
  LogValidity(**loaded, context->flag_prefix_, context->files_, now);
  context->expiry_logged_.clear();
  for (const CertificateInfo& info : (*loaded)->certificates) {
    context->expiry_logged_.push_back(now >= info.not_after);
  }
  context->loaded_ = *std::move(loaded);
  context->next_check_ = now + refresh;
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
  const absl::Time now = absl::Now();
  LogValidity(*loaded_, flag_prefix_, files_, now);
  expiry_logged_.clear();
  for (const CertificateInfo& info : loaded_->certificates) {
    expiry_logged_.push_back(now >= info.not_after);
  }
  return true;
}

std::vector<CertificateInfo> TlsFileContext::certificates() const {
  std::lock_guard<std::mutex> lock(mu_);
  return loaded_->certificates;
}

absl::Time TlsFileContext::NoteExpiry(absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time next = absl::InfiniteFuture();
  const std::vector<CertificateInfo>& certs = loaded_->certificates;
  for (size_t i = 0; i < certs.size() && i < expiry_logged_.size(); ++i) {
    if (now < certs[i].not_after) {
      next = std::min(next, certs[i].not_after);
      continue;
    }
    if (expiry_logged_[i]) continue;
    expiry_logged_[i] = true;
    base::LogLimited(
        base::LogLevel::kError, "tls-certificate-expired",
        absl::StrCat(Name(certs[i], flag_prefix_, files_), " expired at ",
                     Rfc3339(certs[i].not_after),
                     certs[i].file == "client_ca"
                         ? ": client certificates it signed are refused "
                           "until it is rotated"
                         : ": TLS clients fail their handshake until it is "
                           "rotated"));
  }
  return next;
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
