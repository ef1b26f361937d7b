// The measurement harness as it was run (bench/http_choice/README.md).
// clang-format off
// h2o 2.2 (libh2o-evloop) null server: POST /x with small JSON -> canned 300-byte JSON.
// usage: h2o_server PORT [cert.pem key.pem [ca.pem]]   (single event-loop thread)
#define H2O_USE_LIBUV 0
extern "C" {
#include <h2o.h>
#include <h2o/http1.h>
#include <h2o/http2.h>
}
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "canned.h"

static h2o_globalconf_t config;
static h2o_context_t ctx;
static h2o_accept_ctx_t accept_ctx;
static int g_conns = 0;
static int kMaxConns = getenv("HB_MAX_CONNS") ? atoi(getenv("HB_MAX_CONNS")) : 10000;
static const char *g_cert, *g_key;
static timespec g_cm, g_km;
static X509 *g_x509;
static STACK_OF(X509) * g_chain;
static EVP_PKEY *g_pkey;
static int g_reloads;

static int on_req(h2o_handler_t *, h2o_req_t *req) {
  if (!h2o_memis(req->method.base, req->method.len, H2O_STRLIT("POST"))) return -1;
  // h2o 2.2 buffers the whole entity (bounded by max_request_entity_size -> 413) before calling us
  static h2o_generator_t gen = {nullptr, nullptr};
  req->res.status = 200;
  req->res.reason = "OK";
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, nullptr, H2O_STRLIT("application/json"));
  req->res.content_length = kCannedLen;
  // mTLS result: h2o 2.2 has no public accessor for the SSL*; st_h2o_socket_ssl_t is private
  // (lib/common/socket.c). Relying on its layout is a hack.
  if (h2o_socket_t *sock = req->conn->callbacks->get_socket(req->conn); sock && sock->ssl) {
    // 2.2.5 layout (checked in gdb): { SSL_CTX *ssl_ctx; SSL *ssl; ... } -> second word.
    SSL *ssl = reinterpret_cast<SSL **>(sock->ssl)[1];
    if (SSL_get0_peer_certificate(ssl))
      h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("x-client-verified"), 0, nullptr,
                            SSL_get_verify_result(ssl) == X509_V_OK ? "1" : "0", 1);
  }
  h2o_start_response(req, &gen);
  h2o_iovec_t body = h2o_iovec_init(kCanned, kCannedLen);
  h2o_send(req, &body, 1, H2O_SEND_STATE_FINAL);
  return 0;
}

static void on_sock_close(void *) { g_conns--; }

static void on_accept(h2o_socket_t *listener, const char *err) {
  if (err) return;
  h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
  if (!sock) return;
  if (g_conns >= kMaxConns) {
    h2o_socket_close(sock);
    return;
  }
  g_conns++;
  int one = 1;
  setsockopt(h2o_socket_get_fd(sock), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sock->on_close.cb = on_sock_close;
  sock->on_close.data = nullptr;
  h2o_accept(&accept_ctx, sock);
}

static bool same(const timespec &a, const timespec &b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

static void reload_if_changed() {
  struct stat sc, sk;
  if (stat(g_cert, &sc) || stat(g_key, &sk)) return;
  if (g_x509 && same(sc.st_mtim, g_cm) && same(sk.st_mtim, g_km)) return;
  FILE *f = fopen(g_cert, "r");
  if (!f) return;
  X509 *x = PEM_read_X509(f, nullptr, nullptr, nullptr);
  STACK_OF(X509) *chain = sk_X509_new_null();
  while (X509 *c = PEM_read_X509(f, nullptr, nullptr, nullptr)) sk_X509_push(chain, c);
  fclose(f);
  ERR_clear_error();
  f = fopen(g_key, "r");
  EVP_PKEY *k = f ? PEM_read_PrivateKey(f, nullptr, nullptr, nullptr) : nullptr;
  if (f) fclose(f);
  if (!x || !k) return;
  if (g_x509) X509_free(g_x509), sk_X509_pop_free(g_chain, X509_free), EVP_PKEY_free(g_pkey);
  g_x509 = x, g_chain = chain, g_pkey = k, g_cm = sc.st_mtim, g_km = sk.st_mtim, g_reloads++;
}

// Per handshake: install the current cert/key on this SSL (SSL_use_cert_and_key copies refs).
static int cert_cb(SSL *ssl, void *) {
  reload_if_changed();
  return SSL_use_cert_and_key(ssl, g_x509, g_pkey, g_chain, 1) == 1;
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 8084;
  signal(SIGPIPE, SIG_IGN);
  h2o_config_init(&config);
  config.max_request_entity_size = 1 << 20;  // 413 when Content-Length exceeds (checked on head)
  config.http1.req_timeout = 5000;           // ms
  config.http2.idle_timeout = 30000;
  h2o_hostconf_t *host = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
  h2o_pathconf_t *path = h2o_config_register_path(host, "/x", 0);
  h2o_handler_t *h = h2o_create_handler(path, sizeof(*h));
  h->on_req = on_req;

  h2o_context_init(&ctx, h2o_evloop_create(), &config);
  accept_ctx.ctx = &ctx;
  accept_ctx.hosts = config.hosts;
  if (argc > 3) {
    g_cert = argv[2];
    g_key = argv[3];
    SSL_CTX *sc = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_min_proto_version(sc, TLS1_2_VERSION);
    SSL_CTX_set_options(sc, SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_cert_cb(sc, cert_cb, nullptr);
    reload_if_changed();
    if (argc > 4) {
      SSL_CTX_load_verify_locations(sc, argv[4], nullptr);
      SSL_CTX_set_verify(sc, SSL_VERIFY_PEER, [](int, X509_STORE_CTX *) { return 1; });
    }
    h2o_ssl_register_alpn_protocols(sc, h2o_http2_alpn_protocols);
    accept_ctx.ssl_ctx = sc;
  }

  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (sockaddr *)&a, sizeof a) || listen(fd, 4096)) {
    perror("bind/listen");
    return 1;
  }
  h2o_socket_t *ls = h2o_evloop_socket_create(ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
  h2o_socket_read_start(ls, on_accept);
  std::fprintf(stderr, "h2o listening 127.0.0.1:%d tls=%d\n", port, argc > 3);
  static volatile sig_atomic_t stop = 0;
  signal(SIGTERM, [](int) { stop = 1; });
  signal(SIGINT, [](int) { stop = 1; });
  while (!stop && h2o_evloop_run(ctx.loop, 1000) == 0) {
  }
  return 0;
}
