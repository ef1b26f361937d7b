// The measurement harness as it was run (bench/http_choice/README.md).
// clang-format off
// civetweb null server: POST /x with small JSON -> canned 300-byte JSON.
// usage: civet_server PORT [threads] [tls:cert_and_key.pem] [ca.pem]
#include <civetweb.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <csignal>
#include <string>
#include <vector>
#include <unistd.h>

#include "canned.h"

static constexpr long long kMaxBody = 1 << 20;  // 1 MiB
static volatile sig_atomic_t g_stop = 0;

static int handler(struct mg_connection *conn, void *) {
  const mg_request_info *ri = mg_get_request_info(conn);
  if (std::strcmp(ri->request_method, "POST") != 0) {
    mg_send_http_error(conn, 405, "%s", "POST only");
    return 405;
  }
  // 413 before reading: content_length is -1 for chunked.
  if (ri->content_length > kMaxBody) {
    // mg_send_http_error sets "Connection: close" for error statuses when body unread.
    mg_send_http_error(conn, 413, "%s", "body too large");
    return 413;
  }
  std::string body;
  char buf[8192];
  int n;
  while ((n = mg_read(conn, buf, sizeof buf)) > 0) {
    body.append(buf, n);
    if ((long long)body.size() > kMaxBody) {  // chunked bodies
      mg_send_http_error(conn, 413, "%s", "body too large");
      return 413;
    }
  }
  // mTLS: ri->client_cert is non-null when a client certificate was presented and verified.
  const char *who = (ri->client_cert && ri->client_cert->subject) ? ri->client_cert->subject : nullptr;
  mg_printf(conn,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %u\r\n%s%s%s\r\n",
            kCannedLen, who ? "X-Client-Subject: " : "", who ? who : "", who ? "\r\n" : "");
  mg_write(conn, kCanned, kCannedLen);
  return 200;
}

int main(int argc, char **argv) {
  const char *port = argc > 1 ? argv[1] : "8081";
  const char *threads = argc > 2 ? argv[2] : "4";
  const char *tls = argc > 3 ? argv[3] : nullptr;
  const char *ca = argc > 4 ? argv[4] : nullptr;
  std::string listen = std::string("127.0.0.1:") + port + (tls ? "s" : "");
  std::vector<const char *> opts = {"listening_ports", listen.c_str(),
                                    "num_threads", threads,
                                    "enable_keep_alive", "yes",
                                    "keep_alive_timeout_ms", "30000",
                                    "request_timeout_ms", "5000",
                                    "max_request_size", "16384",  // header buffer
                                    "listen_backlog", "4096",
                                    "connection_queue", "4096",
                                    "tcp_nodelay", "1"};
  if (tls) {
    opts.insert(opts.end(), {"ssl_certificate", tls, "ssl_protocol_version", "4",  // 4 = TLS1.2+
                             "ssl_short_trust", "yes"});
    if (ca) opts.insert(opts.end(), {"ssl_verify_peer", "optional", "ssl_ca_file", ca});
  }
  opts.push_back(nullptr);
  unsigned feat = mg_init_library(tls ? MG_FEATURES_TLS : 0);
  std::fprintf(stderr, "civetweb %s features=0x%x tls=%d\n", mg_version(), feat,
               (int)mg_check_feature(MG_FEATURES_TLS));
  mg_callbacks cb{};
  cb.log_message = [](const mg_connection *, const char *msg) {
    std::fprintf(stderr, "civet: %s\n", msg);
    return 1;
  };
  mg_context *ctx = mg_start(&cb, nullptr, opts.data());
  if (!ctx) {
    std::fprintf(stderr, "mg_start failed\n");
    return 1;
  }
  mg_set_request_handler(ctx, "/x", handler, nullptr);
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  std::fprintf(stderr, "listening %s\n", listen.c_str());
  while (!g_stop) pause();
  mg_stop(ctx);
}
