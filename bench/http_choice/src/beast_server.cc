// The measurement harness as it was run (bench/http_choice/README.md).
// clang-format off
// Boost.Beast (1.74) null server: POST /x with small JSON -> canned 300-byte JSON.
// usage: beast_server PORT [threads] [cert.pem key.pem [ca.pem]]
//
// Hardening implemented here (all by hand; Beast gives the primitives):
//   * idle keep-alive timeout   : tcp_stream::expires_after(kIdle) around a 1-byte-ish read_some
//   * header (request) timeout  : tcp_stream::expires_after(kHeader) around async_read_header
//   * header size bound         : request_parser::header_limit(kMaxHeader)  -> 431
//   * body bound + early 413    : check parser.content_length() after async_read_header,
//                                 before any body byte is read; parser.body_limit() for chunked
//   * body timeout              : expires_after(kBody) around async_read (body)
//   * connection cap            : atomic counter checked at accept
//   * TLS cert rotation         : new ssl::context built when cert/key mtime changes; each new
//                                 connection takes the current shared_ptr<ssl::context>
//   * mTLS                      : verify_peer + CA; verify callback records but never fails the
//                                 handshake; handler reads SSL_get_verify_result()
// Boost 1.74 + GCC 12 + C++20: asio/awaitable.hpp uses std::exchange without <utility>.
#include <utility>
#include <optional>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "canned.h"

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

static constexpr std::uint64_t kMaxBody = 1 << 20;
static constexpr std::uint32_t kMaxHeader = 16 * 1024;
static constexpr auto kHeader = 5s, kIdle = 30s, kBody = 10s, kHandshake = 5s;
static constexpr std::size_t kIdleReadSize = 1024;
static int kMaxConns = getenv("HB_MAX_CONNS") ? atoi(getenv("HB_MAX_CONNS")) : 10000;
static std::atomic<int> g_conns{0};

// ---------------------------------------------------------------- TLS context
struct TlsConfig {
  std::string cert, key, ca;
  std::mutex mu;
  std::shared_ptr<ssl::context> cur;
  timespec cm{}, km{};
  std::atomic<int> reloads{0};

  static bool same(const timespec &a, const timespec &b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

  std::shared_ptr<ssl::context> build() {
    auto c = std::make_shared<ssl::context>(ssl::context::tls_server);
    c->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    SSL_CTX_set_min_proto_version(c->native_handle(), TLS1_2_VERSION);
    c->use_certificate_chain_file(cert);
    c->use_private_key_file(key, ssl::context::pem);
    if (!ca.empty()) {
      c->load_verify_file(ca);
      c->set_verify_mode(ssl::verify_peer);  // request, do not require
      // Never fail the handshake: the handler decides using SSL_get_verify_result().
      c->set_verify_callback([](bool, ssl::verify_context &) { return true; });
    }
    return c;
  }
  // Called per accepted connection: cheap stat() pair, rebuild on change.
  std::shared_ptr<ssl::context> get() {
    struct stat sc, sk;
    std::lock_guard<std::mutex> lk(mu);
    if (stat(cert.c_str(), &sc) == 0 && stat(key.c_str(), &sk) == 0 &&
        (!cur || !same(sc.st_mtim, cm) || !same(sk.st_mtim, km))) {
      try {
        cur = build();
        cm = sc.st_mtim;
        km = sk.st_mtim;
        reloads++;
      } catch (const std::exception &e) {
        std::fprintf(stderr, "tls reload failed (keeping old): %s\n", e.what());
      }
    }
    return cur;
  }
};
static std::unique_ptr<TlsConfig> g_tls;

// ---------------------------------------------------------------- session
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <class... Args>
  explicit Session(std::shared_ptr<ssl::context> ctx, Args &&...args)
      : ctx_(std::move(ctx)), stream_(std::forward<Args>(args)...) {}
  ~Session() { g_conns--; }

  void start() {
    if constexpr (is_tls) {
      beast::get_lowest_layer(stream_).expires_after(kHandshake);
      stream_.async_handshake(ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (!ec) self->wait_request(true);
      });
    } else {
      wait_request(true);
    }
  }

 private:
  static constexpr bool is_tls = !std::is_same_v<Stream, beast::tcp_stream>;
  auto &tcp() { return beast::get_lowest_layer(stream_); }

  // Idle phase: wait (kIdle) for the first byte of the next request.
  void wait_request(bool first) {
    if (buffer_.size() > 0) return read_header();  // pipelined bytes already buffered
    tcp().expires_after(first ? kHeader : kIdle);
    // Idle connections should cost little memory: drop the (grown) buffer and wait with a small one.
    buffer_.shrink_to_fit();
    stream_.async_read_some(buffer_.prepare(kIdleReadSize),
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) return self->close();
                              self->buffer_.commit(n);
                              self->read_header();
                            });
  }

  // Header phase: the whole request head must arrive within kHeader (slowloris).
  void read_header() {
    parser_.emplace();
    parser_->header_limit(kMaxHeader);
    parser_->body_limit(kMaxBody);
    tcp().expires_after(kHeader);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec == http::error::header_limit) return self->send_error(http::status::request_header_fields_too_large);
                              // Beast checks Content-Length against body_limit() while parsing the head:
                              if (ec == http::error::body_limit) return self->send_error(http::status::payload_too_large);
                              if (ec) return self->close();
                              self->on_header();
                            });
  }

  void on_header() {
    auto &req = parser_->get();
    if (req.method() != http::verb::post) return send_error(http::status::method_not_allowed);
    // Early 413: decided from Content-Length before a single body byte is read.
    if (auto cl = parser_->content_length(); cl && *cl > kMaxBody) return send_error(http::status::payload_too_large);
    if (req[http::field::expect] == "100-continue") {
      auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, req.version());
      http::async_write(stream_, *cont, [self = this->shared_from_this(), cont](beast::error_code ec, std::size_t) {
        if (ec) return self->close();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  void read_body() {
    tcp().expires_after(kBody);
    http::async_read(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec == http::error::body_limit) return self->send_error(http::status::payload_too_large);
      if (ec) return self->close();
      self->handle();
    });
  }

  void handle() {
    auto &req = parser_->get();
    res_ = {};
    res_.version(req.version());
    res_.result(http::status::ok);
    res_.set(http::field::content_type, "application/json");
    if constexpr (is_tls) {
      // mTLS result available to the handler:
      SSL *s = stream_.native_handle();
      X509 *peer = SSL_get0_peer_certificate(s);
      if (peer) res_.set("X-Client-Verified", SSL_get_verify_result(s) == X509_V_OK ? "1" : "0");
    }
    res_.body() = std::string_view(kCanned, kCannedLen);
    res_.keep_alive(req.keep_alive());
    res_.prepare_payload();
    write(!req.keep_alive());
  }

  void send_error(http::status st) {
    res_ = {};
    res_.result(st);
    res_.version(11);
    res_.set(http::field::content_type, "application/json");
    res_.body() = "{\"error\":\"" + std::string(http::obsolete_reason(st)) + "\"}";
    res_.keep_alive(false);
    res_.prepare_payload();
    write(true);
  }

  void write(bool close_after) {
    tcp().expires_after(kBody);
    http::async_write(stream_, res_, [self = this->shared_from_this(), close_after](beast::error_code ec, std::size_t) {
      if (ec || close_after) return self->close();
      self->wait_request(false);
    });
  }

  void close() {
    beast::error_code ec;
    if constexpr (is_tls) {
      // skip async_shutdown for brevity (close_notify is optional for HTTP/1.1 with Content-Length)
    }
    tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
    tcp().cancel();
  }

  std::shared_ptr<ssl::context> ctx_;
  Stream stream_;
  beast::flat_buffer buffer_{kMaxHeader + 16384};  // max size: must exceed header_limit
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
};

// ---------------------------------------------------------------- acceptor
class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(net::io_context &ioc, tcp::endpoint ep, bool strands) : ioc_(ioc), acc_(ioc), strands_(strands) {
    acc_.open(ep.protocol());
    acc_.set_option(net::socket_base::reuse_address(true));
    acc_.bind(ep);
    acc_.listen(4096);
  }
  void run() { accept(); }

 private:
  void accept() {
    // one io_context thread: no strand needed (all handlers already serialised)
    auto ex = strands_ ? net::any_io_executor(net::make_strand(ioc_)) : net::any_io_executor(ioc_.get_executor());
    acc_.async_accept(ex, [self = shared_from_this()](beast::error_code ec, tcp::socket s) {
      if (!ec) {
        if (++g_conns > kMaxConns) {
          g_conns--;  // over the cap: drop immediately
        } else {
          s.set_option(tcp::no_delay(true));
          if (g_tls) {
            auto ctx = g_tls->get();
            std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(ctx, std::move(s), *ctx)->start();
          } else {
            std::make_shared<Session<beast::tcp_stream>>(nullptr, std::move(s))->start();
          }
        }
      }
      self->accept();
    });
  }
  net::io_context &ioc_;
  tcp::acceptor acc_;
  bool strands_;
};

int main(int argc, char **argv) {
  unsigned short port = argc > 1 ? atoi(argv[1]) : 8083;
  int threads = argc > 2 ? atoi(argv[2]) : 1;
  if (argc > 4) {
    g_tls = std::make_unique<TlsConfig>();
    g_tls->cert = argv[3];
    g_tls->key = argv[4];
    if (argc > 5) g_tls->ca = argv[5];
    g_tls->get();
  }
  net::io_context ioc{threads};
  std::make_shared<Listener>(ioc, tcp::endpoint{net::ip::make_address("127.0.0.1"), port}, threads > 1)->run();
  net::signal_set sig(ioc, SIGINT, SIGTERM);
  sig.async_wait([&](beast::error_code, int) { ioc.stop(); });
  std::fprintf(stderr, "beast %d listening 127.0.0.1:%u threads=%d tls=%d\n", BOOST_VERSION, port, threads, !!g_tls);
  std::vector<std::thread> v;
  for (int i = 1; i < threads; i++) v.emplace_back([&] { ioc.run(); });
  ioc.run();
  for (auto &t : v) t.join();
}
