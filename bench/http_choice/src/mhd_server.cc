// The measurement harness as it was run (bench/http_choice/README.md).
// clang-format off
// libmicrohttpd null server: POST /x with small JSON -> canned 300-byte JSON.
// usage: mhd_server PORT [threads] [cert.pem key.pem [ca.pem]]
//   TLS: certificate+key are (re)loaded by the GnuTLS retrieve callback whenever
//   the files' mtime changes (checked per handshake).
#include <microhttpd.h>
#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>
#include <gnutls/x509.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "canned.h"

static constexpr size_t kMaxBody = 1 << 20;
static volatile sig_atomic_t g_stop = 0;
static MHD_Response *g_canned;
static MHD_Response *g_413;

struct Req {
  std::string body;
  bool too_big = false;
};

static std::string slurp(const char *path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// ---- certificate rotation via gnutls_certificate_retrieve_function2 ----
struct CertSet {
  gnutls_pcert_st pcert[8];
  unsigned n = 0;
  gnutls_privkey_t key = nullptr;
  ~CertSet() {
    for (unsigned i = 0; i < n; i++) gnutls_pcert_deinit(&pcert[i]);
    if (key) gnutls_privkey_deinit(key);
  }
};
static const char *g_cert_path, *g_key_path;
static std::mutex g_cert_mu;
static std::shared_ptr<CertSet> g_cert;
static struct timespec g_cert_mtime, g_key_mtime;
static std::atomic<int> g_reloads{0};

static bool same(const timespec &a, const timespec &b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

static std::shared_ptr<CertSet> load_certs() {
  auto cs = std::make_shared<CertSet>();
  std::string c = slurp(g_cert_path), k = slurp(g_key_path);
  gnutls_datum_t cd{(unsigned char *)c.data(), (unsigned)c.size()};
  gnutls_datum_t kd{(unsigned char *)k.data(), (unsigned)k.size()};
  unsigned n = 8;
  if (gnutls_pcert_list_import_x509_raw(cs->pcert, &n, &cd, GNUTLS_X509_FMT_PEM, 0) < 0) return nullptr;
  cs->n = n;
  gnutls_privkey_init(&cs->key);
  if (gnutls_privkey_import_x509_raw(cs->key, &kd, GNUTLS_X509_FMT_PEM, nullptr, 0) < 0) return nullptr;
  return cs;
}

// Called by GnuTLS per handshake. The returned pcert/key must stay valid for the
// session; we keep every loaded set alive via a per-session shared_ptr copy.
static int cert_cb(gnutls_session_t session, const gnutls_datum_t *, int, const gnutls_pk_algorithm_t *, int,
                   gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey) {
  struct stat sc, sk;
  std::shared_ptr<CertSet> cur;
  {
    std::lock_guard<std::mutex> lk(g_cert_mu);
    if (stat(g_cert_path, &sc) == 0 && stat(g_key_path, &sk) == 0 &&
        (!same(sc.st_mtim, g_cert_mtime) || !same(sk.st_mtim, g_key_mtime) || !g_cert)) {
      if (auto fresh = load_certs()) {
        g_cert = fresh;
        g_cert_mtime = sc.st_mtim;
        g_key_mtime = sk.st_mtim;
        g_reloads++;
      }
    }
    cur = g_cert;
  }
  if (!cur) return -1;
  // pin the set to the session so a later rotation cannot free it mid-handshake
  auto *pin = static_cast<std::shared_ptr<CertSet> *>(gnutls_session_get_ptr(session));
  (void)pin;  // (for the null server we simply never free old sets: leaks one per rotation)
  static std::mutex keep_mu;
  static std::vector<std::shared_ptr<CertSet>> keep;
  {
    std::lock_guard<std::mutex> lk(keep_mu);
    if (keep.empty() || keep.back() != cur) keep.push_back(cur);
  }
  *pcert = cur->pcert;
  *pcert_length = cur->n;
  *pkey = cur->key;
  return 0;
}

static void completed(void *, MHD_Connection *, void **con_cls, MHD_RequestTerminationCode) {
  delete static_cast<Req *>(*con_cls);
  *con_cls = nullptr;
}

static MHD_Result ahc(void *, MHD_Connection *c, const char *url, const char *method, const char *,
                      const char *upload_data, size_t *upload_data_size, void **con_cls) {
  Req *r = static_cast<Req *>(*con_cls);
  if (!r) {
    // First call: headers only. Reject oversize bodies here, before MHD reads them
    // (MHD also suppresses "100 Continue" when a response is queued now).
    if (std::strcmp(method, "POST") != 0) return MHD_queue_response(c, 405, g_413);
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && std::strtoull(cl, nullptr, 10) > kMaxBody) return MHD_queue_response(c, 413, g_413);
    *con_cls = r = new Req;
    return MHD_YES;
  }
  if (*upload_data_size) {
    if (!r->too_big) {
      if (r->body.size() + *upload_data_size > kMaxBody)
        r->too_big = true, r->body.clear();
      else
        r->body.append(upload_data, *upload_data_size);
    }
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (r->too_big) return MHD_queue_response(c, 413, g_413);
  // mTLS result for the handler:
  if (const MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION)) {
    gnutls_session_t s = (gnutls_session_t)ci->tls_session;
    unsigned status = 0;
    unsigned ncerts = 0;
    const gnutls_datum_t *certs = s ? gnutls_certificate_get_peers(s, &ncerts) : nullptr;
    if (certs && ncerts) {
      bool ok = gnutls_certificate_verify_peers2(s, &status) == 0 && status == 0;
      MHD_Response *resp = MHD_create_response_from_buffer(kCannedLen, (void *)kCanned, MHD_RESPMEM_PERSISTENT);
      MHD_add_response_header(resp, "Content-Type", "application/json");
      MHD_add_response_header(resp, "X-Client-Verified", ok ? "1" : "0");
      MHD_Result ret = MHD_queue_response(c, 200, resp);
      MHD_destroy_response(resp);
      return ret;
    }
  }
  return MHD_queue_response(c, 200, g_canned);
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 8082;
  unsigned threads = argc > 2 ? atoi(argv[2]) : 1;
  const char *cert = argc > 3 ? argv[3] : nullptr;
  const char *key = argc > 4 ? argv[4] : nullptr;
  const char *ca = argc > 5 ? argv[5] : nullptr;
  g_canned = MHD_create_response_from_buffer(kCannedLen, (void *)kCanned, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(g_canned, "Content-Type", "application/json");
  static const char k413[] = "{\"error\":\"request body too large\"}";
  g_413 = MHD_create_response_from_buffer(sizeof k413 - 1, (void *)k413, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(g_413, "Connection", "close");

  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_USE_TURBO;
  std::string ca_pem;
  MHD_OptionItem ops[16];
  int i = 0;
  ops[i++] = {MHD_OPTION_SOCK_ADDR, 0, &addr};
  if (threads > 1) ops[i++] = {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)threads, nullptr};
  const char *cap = getenv("HB_MAX_CONNS");
  ops[i++] = {MHD_OPTION_CONNECTION_LIMIT, cap ? atoi(cap) : 10000, nullptr};
  ops[i++] = {MHD_OPTION_PER_IP_CONNECTION_LIMIT, 0, nullptr};
  ops[i++] = {MHD_OPTION_CONNECTION_TIMEOUT, 5, nullptr};  // seconds of *inactivity*
  ops[i++] = {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 32 * 1024, nullptr};  // header+read buffer
  ops[i++] = {MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096, nullptr};
  ops[i++] = {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, nullptr};
  if (cert) {
    flags |= MHD_USE_TLS;
    g_cert_path = cert;
    g_key_path = key;
    ops[i++] = {MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)cert_cb};
    ops[i++] = {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"};
    if (ca) {
      ca_pem = slurp(ca);
      ops[i++] = {MHD_OPTION_HTTPS_MEM_TRUST, 0, (void *)ca_pem.c_str()};
    }
  }
  ops[i++] = {MHD_OPTION_END, 0, nullptr};
  MHD_Daemon *d = MHD_start_daemon(flags, 0, nullptr, nullptr, &ahc, nullptr, MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
  if (!d) {
    std::fprintf(stderr, "MHD_start_daemon failed\n");
    return 1;
  }
  std::fprintf(stderr, "mhd %s listening 127.0.0.1:%d threads=%u tls=%d\n", MHD_get_version(), port, threads, !!cert);
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  while (!g_stop) pause();
  MHD_stop_daemon(d);
}
