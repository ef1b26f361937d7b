#include "http/server.h"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including
// <utility> (GCC 12, C++20).
#include <algorithm>
#include <utility>
// clang-format: keep <utility> before Boost.
#include <openssl/ssl.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/log.h"

namespace compatd::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

absl::string_view Request::Header(absl::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return {};
}

absl::Status ParseHostPort(absl::string_view flag, absl::string_view address,
                           std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  absl::string_view host_part =
      colon == absl::string_view::npos ? "" : address.substr(0, colon);
  const absl::string_view port_text =
      colon == absl::string_view::npos ? "" : address.substr(colon + 1);
  int value = -1;
  if (host_part.empty() || port_text.empty() ||
      port_text.find_first_not_of("0123456789") != absl::string_view::npos ||
      !absl::SimpleAtoi(port_text, &value) || value > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, "=", address,
                     ": expected host:port with a numeric host and a port in "
                     "0..65535 (0 picks a free one), e.g. 127.0.0.1:8443 or "
                     "[::1]:8443"));
  }
  if (host_part.front() == '[') {
    if (host_part.back() != ']') {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, "=", address, ": an IPv6 host must be in brackets"));
    }
    host_part = host_part.substr(1, host_part.size() - 2);
  }
  boost::system::error_code ec;
  net::ip::make_address(std::string(host_part), ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, "=", address, ": ", host_part,
                     " is not a numeric IPv4 or IPv6 address"));
  }
  *host = std::string(host_part);
  *port = value;
  return absl::OkStatus();
}

namespace {

std::chrono::steady_clock::duration Chrono(absl::Duration d) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      absl::ToChronoNanoseconds(d));
}

}  // namespace

// Destroyed in reverse order: the io_context (and with it every connection
// still pending in it) before the counters and the TLS context they use.
// Stop() destroys the acceptor and the io_context early, once its threads
// are joined: that closes the listener and every connection.
struct Server::Impl {
  Options options;
  AsyncHandler handler;
  std::atomic<int> connections{0};
  std::atomic<int64_t> refused{0};
  std::atomic<bool> stopped{false};
  // Replies held (Reply::State alive); Stop() waits for none.
  std::atomic<int> replies_held{0};
  std::mutex replies_mu;  // for replies_cv only
  std::condition_variable replies_cv;
  std::optional<ssl::context> tls;
  // Built in Start() with the number of threads as its concurrency hint: a
  // hint of 1 makes Asio's scheduler wake no other thread for queued work,
  // so one request's handler held every connection (issue 23).
  std::optional<net::io_context> io;
  std::optional<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  // A body bound and the flag that sets it: options.max_body_bytes, then
  // options.path_body_limits; set by Start().
  struct BodyLimit {
    std::string path;
    size_t bytes = 0;
    std::string flag;
    std::function<void(uint64_t)> on_refused;
  };
  BodyLimit default_limit;
  std::vector<BodyLimit> path_limits;
  size_t largest_body_bytes = 0;

  // The bound of a request target's path.
  const BodyLimit& LimitFor(absl::string_view target) const {
    const absl::string_view path = target.substr(0, target.find('?'));
    for (const BodyLimit& limit : path_limits) {
      absl::string_view rest = path;
      if (absl::ConsumePrefix(&rest, limit.path) &&
          (rest.empty() || rest.front() == '/')) {
        return limit;
      }
    }
    return default_limit;
  }

  void Accept();
};

// One request's reply: sends the answer on its connection's strand, once.
struct Reply::State {
  State(Server::Impl* server, std::function<void(Response)> send,
        std::function<void()> abandon)
      : server(server), send(std::move(send)), abandon(std::move(abandon)) {
    server->replies_held.fetch_add(1, std::memory_order_relaxed);
  }
  ~State() {
    if (!sent.exchange(true)) abandon();
    if (server->replies_held.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(server->replies_mu);
      server->replies_cv.notify_all();
    }
  }
  Server::Impl* const server;
  const std::function<void(Response)> send;
  const std::function<void()> abandon;
  std::atomic<bool> sent{false};
  std::atomic<bool> client_gone{false};
};

void Reply::operator()(Response response) const {
  if (state_ == nullptr || state_->sent.exchange(true)) return;
  state_->send(std::move(response));
}

const std::atomic<bool>* Reply::client_gone() const {
  return state_ == nullptr ? nullptr : &state_->client_gone;
}

namespace {

// One connection: read a request (head within the header timeout, body
// within the body timeout, both bounded), answer it, wait for the next.
template <class Stream>
class Session final : public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <class... Args>
  Session(Server::Impl* server, std::string peer, Args&&... args)
      : server_(server),
        peer_(std::move(peer)),
        stream_(std::forward<Args>(args)...),
        buffer_(server->options.max_header_bytes + kBodyReadBytes),
        watch_timer_(stream_.get_executor()) {}
  ~Session() {
    UnreserveAll();
    server_->connections.fetch_sub(1, std::memory_order_relaxed);
  }

  void Start() {
    Lowest().expires_after(Chrono(server_->options.header_timeout));
    if constexpr (kTls) {
      stream_.async_handshake(
          ssl::stream_base::server,
          [self = this->shared_from_this()](beast::error_code ec) {
            if (ec) return self->Close();
            self->ReadHeader();
          });
    } else {
      ReadHeader();
    }
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;
  // The most of a body read at once (the buffer's room beyond a head).
  static constexpr size_t kBodyReadBytes = 64 * 1024;

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  // Between requests: wait up to the idle timeout for the next one's first
  // byte, holding only a small buffer.
  void WaitForRequest() {
    if (buffer_.size() > 0) return ReadHeader();  // pipelined
    Lowest().expires_after(Chrono(server_->options.idle_timeout));
    buffer_.shrink_to_fit();
    stream_.async_read_some(
        buffer_.prepare(1024),
        [self = this->shared_from_this()](beast::error_code ec, size_t n) {
          if (ec) return self->Close();
          self->buffer_.commit(n);
          self->Lowest().expires_after(
              Chrono(self->server_->options.header_timeout));
          self->ReadHeader();
        });
  }

  void ReadHeader() {
    parser_.emplace();
    limit_ = nullptr;
    parser_->header_limit(
        static_cast<uint32_t>(server_->options.max_header_bytes));
    // The largest bound until the head names the path (Beast checks a
    // Content-Length against it while reading the head); OnHeader narrows it.
    parser_->body_limit(server_->largest_body_bytes);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec == bhttp::error::header_limit) {
            return self->Refuse(
                431,
                "the request head is larger than " +
                    std::to_string(self->server_->options.max_header_bytes) +
                    " bytes");
          }
          // Beast checks Content-Length against body_limit() in the head
          // (the largest bound; the request line, read by then, names the
          // path whose bound the answer names).
          if (ec == bhttp::error::body_limit) {
            const beast::string_view target = self->parser_->get().target();
            self->limit_ = &self->server_->LimitFor(
                absl::string_view(target.data(), target.size()));
            return self->RefuseBody();
          }
          if (ec) return self->Close();
          self->OnHeader();
        });
  }

  void OnHeader() {
    const auto& request = parser_->get();
    const beast::string_view target = request.target();
    limit_ =
        &server_->LimitFor(absl::string_view(target.data(), target.size()));
    if (const auto length = parser_->content_length();
        length && *length > limit_->bytes) {
      return RefuseBody();
    }
    // No body octet is parsed yet: the bound may change (Beast's rule).
    parser_->body_limit(limit_->bytes);
    // Nothing is taken from the memory budget for what the head declares:
    // ReadBody takes the body's bytes as they arrive.
    const beast::string_view expect = request[bhttp::field::expect];
    if (absl::EqualsIgnoreCase(absl::string_view(expect.data(), expect.size()),
                               "100-continue")) {
      auto interim = std::make_shared<bhttp::response<bhttp::empty_body>>(
          bhttp::status::continue_, request.version());
      bhttp::async_write(stream_, *interim,
                         [self = this->shared_from_this(), interim](
                             beast::error_code ec, size_t) {
                           if (ec) return self->Close();
                           self->ReadBody();
                         });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    Lowest().expires_after(Chrono(server_->options.body_timeout));
    // Beast reads as much as the buffer's free capacity (512 bytes at
    // least): with the small buffer of the wait for a request, a 357 KB
    // audit batch took 700 reads, each a timer, an epoll and a thread
    // wake-up (3.75 ms of CPU). The body's bytes (up to kBodyReadBytes at a
    // time) are read in a few calls; the next wait for a request gives the
    // memory back.
    const auto length = parser_->content_length();
    const size_t want =
        length.has_value() ? static_cast<size_t>(*length) : kBodyReadBytes;
    if (want > buffer_.capacity() - buffer_.size()) {
      buffer_.reserve(buffer_.size() + std::min(want, kBodyReadBytes));
    }
    ReadBodySome();
  }

  // One read of the body, then its bytes from the memory budget: a head
  // that declares 16 MiB and sends nothing holds nothing (issue 36: four
  // such heads held the whole budget for 30 s each).
  void ReadBodySome() {
    // No body (a GET), or all of it read.
    if (parser_->is_done()) return Handle();
    bhttp::async_read_some(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec == bhttp::error::body_limit) return self->RefuseBody();
          if (ec) return self->Close();
          if (!self->TakeBodyBytes()) return;
          self->ReadBodySome();
        });
  }

  // The body's bytes read since the last call, from the budget's bodies;
  // false (the 429 on its way) when they would pass it.
  bool TakeBodyBytes() {
    const int64_t have = static_cast<int64_t>(parser_->get().body().size());
    if (have <= body_reserved_) return true;
    if (Reserve(MemoryBudget::Account::kBodies, have - body_reserved_)) {
      return true;
    }
    Refuse(429,
           absl::StrCat("the request body (", have,
                        " bytes so far) would pass the bytes of request "
                        "bodies in flight on the HTTP ports "
                        "(--max-http-memory-bytes=",
                        server_->options.memory->limit(), "); retry later"),
           /*retry_after=*/true);
    return false;
  }

  void Handle() {
    bhttp::request<bhttp::string_body> message = parser_->release();
    parser_.reset();
    Request request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    const size_t question = request.target.find('?');
    request.path = request.target.substr(0, question);
    if (question != std::string::npos) {
      request.query = request.target.substr(question + 1);
    }
    for (const auto& field : message) {
      request.headers.emplace_back(
          absl::AsciiStrToLower(std::string(field.name_string())),
          std::string(field.value()));
    }
    request.body = std::move(message.body());
    request.peer = peer_;
    request.tls = kTls;
    const unsigned version = message.version();
    const bool keep_alive = message.keep_alive();
    // The reply holds the session: while the handler works, no read or
    // write does.
    std::shared_ptr<Session> held = this->shared_from_this();
    auto state = std::make_shared<Reply::State>(
        server_,
        [self = held, version, keep_alive](Response response) {
          // Inline when on the connection's strand (a light request),
          // posted to it from another thread (the heavy lane).
          net::dispatch(
              self->stream_.get_executor(),
              [self, response = std::move(response), version, keep_alive] {
                self->Write(response, version, keep_alive);
              });
        },
        [self = held] {
          net::dispatch(self->stream_.get_executor(),
                        [self] { self->Close(); });
        });
    held.reset();
    answered_ = false;
    awaiting_ = state;
    server_->handler(std::move(request), Reply(std::move(state)));
    // Answered on this thread: the write is under way. Else the work goes on
    // elsewhere (the heavy lane): watch for the client leaving meanwhile.
    if (!answered_ && buffer_.size() == 0) Watch();
  }

  // While a handler works: a read that ends when the client closes or
  // resets the connection (its Reply's client_gone, so that the work can
  // stop), or when it sends its next request early (kept in buffer_). After
  // the answer, the same read waits for the next request (watch_timer_
  // bounds the wait by the idle timeout: the stream's own timer cannot be
  // set while the read is pending).
  void Watch() {
    watching_ = true;
    Lowest().expires_never();
    stream_.async_read_some(
        buffer_.prepare(1024),
        [self = this->shared_from_this()](beast::error_code ec, size_t n) {
          self->watching_ = false;
          self->watch_timer_.cancel();
          if (ec) {
            if (auto state = self->awaiting_.lock()) {
              state->client_gone.store(true, std::memory_order_relaxed);
            }
            // Not answered yet: the answer's write fails and closes (or a
            // half-closed client still gets it).
            if (self->answered_) self->Close();
            return;
          }
          self->buffer_.commit(n);
          if (self->next_after_watch_) {
            self->next_after_watch_ = false;
            self->Lowest().expires_after(
                Chrono(self->server_->options.header_timeout));
            self->ReadHeader();
          }
        });
  }

  // The answer is written and the watch's read still waits: it is the wait
  // for the next request, closed after the idle timeout.
  void WaitAfterWatch() {
    next_after_watch_ = true;
    watch_timer_.expires_after(Chrono(server_->options.idle_timeout));
    watch_timer_.async_wait(
        [self = this->shared_from_this()](beast::error_code ec) {
          if (!ec && self->watching_) self->Close();
        });
  }

  void RefuseBody() {
    const Server::Impl::BodyLimit& limit =
        limit_ != nullptr ? *limit_ : server_->default_limit;
    if (limit.on_refused) {
      const auto length = parser_->content_length();
      limit.on_refused(length.has_value() ? *length : 0);
    }
    Refuse(413, absl::StrCat("the request body is larger than ", limit.flag,
                             "=", limit.bytes));
  }

  // An error the server answers itself, then closes the connection.
  void Refuse(int status, const std::string& message,
              bool retry_after = false) {
    Response response;
    response.status = status;
    response.body =
        absl::StrCat(R"({"code":)", status == 413 || status == 429 ? 8 : 3,
                     R"(,"message":")", message, R"(","details":[]})");
    if (retry_after) response.headers.emplace_back("Retry-After", "1");
    Write(response, 11, /*keep_alive=*/false);
  }

  // Bytes held against the memory budget (Options::memory) by this
  // connection: its request's body as it arrives, then its answer until
  // written.
  bool Reserve(MemoryBudget::Account account, int64_t bytes) {
    MemoryBudget* budget = server_->options.memory;
    if (bytes == 0) return true;
    if (budget != nullptr && !budget->TryReserve(account, bytes)) return false;
    (account == MemoryBudget::Account::kBodies ? body_reserved_
                                               : answer_reserved_) += bytes;
    return true;
  }
  void Unreserve(MemoryBudget::Account account) {
    int64_t& held = account == MemoryBudget::Account::kBodies
                        ? body_reserved_
                        : answer_reserved_;
    if (held > 0 && server_->options.memory != nullptr) {
      server_->options.memory->Release(account, held);
    }
    held = 0;
  }
  void UnreserveAll() {
    Unreserve(MemoryBudget::Account::kBodies);
    Unreserve(MemoryBudget::Account::kAnswers);
  }

  void Write(const Response& given, unsigned version, bool keep_alive) {
    answered_ = true;
    // The body's reservation ends with its answer; the answer's starts.
    UnreserveAll();
    const Response* chosen = &given;
    Response refused;
    if (!given.omit_body && !Reserve(MemoryBudget::Account::kAnswers,
                                     static_cast<int64_t>(given.body.size()))) {
      refused.status = 429;
      refused.headers.emplace_back("Retry-After", "1");
      refused.body = absl::StrCat(
          R"({"code":8,"message":"the answer ()", given.body.size(),
          " bytes) would pass the bytes of answers not yet written on the "
          "HTTP ports (--max-http-memory-bytes=",
          server_->options.memory->limit(), R"(); retry later","details":[]})");
      chosen = &refused;
    }
    const Response& response = *chosen;
    response_ = {};
    response_.version(version);
    response_.result(static_cast<unsigned>(response.status));
    response_.set(bhttp::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) {
      response_.set(name, value);
    }
    response_.keep_alive(keep_alive);
    if (response.omit_body) {
      response_.content_length(response.body.size());
    } else {
      response_.body() = response.body;
      response_.prepare_payload();
    }
    Lowest().expires_after(Chrono(server_->options.body_timeout));
    bhttp::async_write(stream_, response_,
                       [self = this->shared_from_this(), keep_alive](
                           beast::error_code ec, size_t) {
                         self->UnreserveAll();
                         self->response_ = {};
                         if (ec || !keep_alive) return self->Close();
                         if (self->watching_) return self->WaitAfterWatch();
                         self->WaitForRequest();
                       });
  }

  void Close() {
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    Lowest().close();
  }

  Server::Impl* const server_;
  const std::string peer_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  // The body bound of the request being read (set once its head is in).
  const Server::Impl::BodyLimit* limit_ = nullptr;
  bhttp::response<bhttp::string_body> response_;
  // Bytes held against each account of the memory budget.
  int64_t body_reserved_ = 0;
  int64_t answer_reserved_ = 0;
  // The request being answered (Handle) and the watch on its client.
  std::weak_ptr<Reply::State> awaiting_;
  bool answered_ = false;
  bool watching_ = false;
  bool next_after_watch_ = false;
  net::steady_timer watch_timer_;
};

}  // namespace

void Server::Impl::Accept() {
  acceptor->async_accept(net::make_strand(*io), [this](beast::error_code ec,
                                                       tcp::socket socket) {
    if (stopped.load()) return;
    if (!ec) {
      if (connections.fetch_add(1, std::memory_order_relaxed) >=
          options.max_connections) {
        connections.fetch_sub(1, std::memory_order_relaxed);
        refused.fetch_add(1, std::memory_order_relaxed);
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        beast::error_code peer_ec;
        const tcp::endpoint peer = socket.remote_endpoint(peer_ec);
        std::string peer_text =
            peer_ec
                ? std::string("unknown")
                : absl::StrCat(peer.address().to_string(), ":", peer.port());
        socket.set_option(tcp::no_delay(true), peer_ec);
        if (tls.has_value()) {
          std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
              this, std::move(peer_text), std::move(socket), *tls)
              ->Start();
        } else {
          std::make_shared<Session<beast::tcp_stream>>(
              this, std::move(peer_text), std::move(socket))
              ->Start();
        }
      }
    }
    Accept();
  });
}

AsyncHandler Inline(Handler handler) {
  return [handler = std::move(handler)](Request request, Reply reply) {
    Response response;
    handler(request, &response);
    reply(std::move(response));
  };
}

absl::StatusOr<std::unique_ptr<Server>> Server::Start(Options options,
                                                      Handler handler) {
  return Start(std::move(options), Inline(std::move(handler)));
}

absl::StatusOr<std::unique_ptr<Server>> Server::Start(Options options,
                                                      AsyncHandler handler) {
  std::string host;
  int port = 0;
  if (absl::Status s =
          ParseHostPort(options.flag, options.address, &host, &port);
      !s.ok()) {
    return s;
  }
  if (options.threads < 1 || options.max_connections < 1 ||
      options.max_body_bytes < 1 || options.max_header_bytes < 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.flag,
                     ": threads, connections and body size must be positive "
                     "and the header bound at least 1024 bytes"));
  }
  std::unique_ptr<Server> server(new Server());
  server->impl_ = std::make_unique<Impl>();
  Impl& impl = *server->impl_;
  impl.options = std::move(options);
  impl.default_limit = {"", impl.options.max_body_bytes,
                        "--max-http-body-bytes", nullptr};
  impl.largest_body_bytes = impl.options.max_body_bytes;
  for (const Options::PathBodyLimit& limit : impl.options.path_body_limits) {
    if (limit.bytes < 1 || limit.path.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(limit.flag, ": a path's body bound must be positive"));
    }
    impl.path_limits.push_back(
        {limit.path, limit.bytes, limit.flag, limit.on_refused});
    impl.largest_body_bytes = std::max(impl.largest_body_bytes, limit.bytes);
  }
  impl.handler = std::move(handler);
  impl.io.emplace(impl.options.threads);
  impl.acceptor.emplace(*impl.io);
  if (impl.options.tls != nullptr) {
    impl.tls.emplace(ssl::context::tls_server);
    if (absl::Status s = impl.options.tls->Configure(impl.tls->native_handle());
        !s.ok()) {
      return s;
    }
  }
  beast::error_code ec;
  const tcp::endpoint endpoint(net::ip::make_address(host),
                               static_cast<unsigned short>(port));
  impl.acceptor->open(endpoint.protocol(), ec);
  // Not SO_REUSEPORT: a second process on the same port is a start-up error.
  if (!ec) impl.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl.acceptor->bind(endpoint, ec);
  if (!ec) impl.acceptor->listen(1024, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", impl.options.flag, "=",
                     impl.options.address, ": ", ec.message()));
  }
  server->port_ = impl.acceptor->local_endpoint().port();
  impl.Accept();
  for (int i = 0; i < impl.options.threads; ++i) {
    impl.threads.emplace_back([&impl] { impl.io->run(); });
  }
  return server;
}

Server::~Server() { Stop(); }

int Server::connections() const {
  return impl_ == nullptr ? 0 : impl_->connections.load();
}

int64_t Server::refused_connections() const {
  return impl_ == nullptr ? 0 : impl_->refused.load();
}

void Server::Stop() {
  if (impl_ == nullptr || impl_->stopped.exchange(true)) return;
  {
    // Answers still being worked on elsewhere are written first (their
    // writes need the io_context's threads).
    std::unique_lock<std::mutex> lock(impl_->replies_mu);
    impl_->replies_cv.wait(lock, [this]() {
      return impl_->replies_held.load(std::memory_order_acquire) == 0;
    });
  }
  impl_->io->stop();
  for (std::thread& thread : impl_->threads) thread.join();
  impl_->threads.clear();
  // No thread runs a handler now. Closing the acceptor and destroying the
  // io_context destroys every pending operation, and with it every session
  // and its socket: the listener and the connections close now, not when the
  // server object goes away.
  impl_->acceptor.reset();
  impl_->io.reset();
}

}  // namespace compatd::http
