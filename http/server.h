#pragma once

// An HTTP/1.1 server for compatd's HTTP ports (the HTTPS/JSON front door and
// /metrics), on Boost.Beast and Asio with a few event-loop threads: chosen by
// measurement (BENCHMARKS.md, "The HTTP library and JSON parser"). Bounded
// against slow and hostile clients:
//
// - a request's head must arrive within `header_timeout` of its first byte
//   (and a new connection's first request within `header_timeout` of the
//   accept), so trickling headers (slowloris) cannot hold a connection;
// - a keep-alive connection with no request is closed after `idle_timeout`;
// - a TLS handshake must finish within `header_timeout`;
// - heads larger than `max_header_bytes` get 431, bodies larger than
//   `max_body_bytes` (or their path's `path_body_limits` bound) get 413
//   before the body is read (from Content-Length) or as soon as a chunked
//   body passes the bound;
// - at most `max_connections` connections are open; more are closed at once;
// - the body must arrive within `body_timeout`, the answer be read within it.
//
// TLS (TlsFileContext) re-reads certificate files on rotation; with a client
// CA, clients must present a certificate that chains to it. Handlers run on
// the server's threads and must not block; an AsyncHandler may answer from
// another thread (the heavy lane, api/lanes.h). The server's threads serve
// connections concurrently (each connection on its own strand).
//
//   COMPATD_ASSIGN_OR_RETURN(auto server, Server::Start(options, handler));
//   server->port();   // the bound port (0 in the address picks one)
//   server->Stop();   // or destroy it

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "http/tls.h"

namespace compatd::http {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: "/v1/GetFeature?name=WatchList"
  std::string path;    // "/v1/GetFeature"
  std::string query;   // "name=WatchList" (after '?', not decoded)
  // Header names lowercased, in arrival order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string peer;  // "127.0.0.1:53412"
  bool tls = false;

  // The first header named `name` (lowercase), or empty.
  absl::string_view Header(absl::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones
  std::string body;
  // HEAD: the headers of the GET answer, without the body.
  bool omit_body = false;
};

// Answers on the server's thread, before the next request of the
// connection is read; must not block.
using Handler = std::function<void(const Request& request, Response* response)>;

// The answer to one request of an AsyncHandler: call it once, from any
// thread (later calls do nothing). Copyable; when every copy is gone without
// a call, the connection is closed. Server::Stop() waits for the replies
// still held, so work holding one must end (bound it).
class Reply final {
 public:
  struct State;
  explicit Reply(std::shared_ptr<State> state) : state_(std::move(state)) {}
  void operator()(Response response) const;
  // True once the client has closed its connection (or reset it) while its
  // answer was being worked on: work that looks at it (a base::WorkBudget)
  // can stop. Watched only while a handler works off the server's thread
  // and the client has sent nothing more; a client that half-closes after
  // its request reads as gone. Lives as long as the reply.
  const std::atomic<bool>* client_gone() const;

 private:
  std::shared_ptr<State> state_;
};

// Called on the server's thread; may hand the request and the reply to
// another thread (the heavy lane) and return at once. The connection reads
// its next request once the reply has been written.
using AsyncHandler = std::function<void(Request request, Reply reply)>;

// A Handler as an AsyncHandler that answers on the server's thread.
AsyncHandler Inline(Handler handler);

// Bytes of request bodies and of answers not yet written, over every
// connection of every server that shares it (--max-http-memory-bytes), in
// two accounts of `limit` bytes each, so that bodies never refuse an answer
// (/healthz, /metrics) and answers never refuse a body:
// - bodies: taken as their bytes arrive (a read at a time, at most 64 KiB
//   past the limit per connection), never from a declared Content-Length, so
//   that heads alone hold nothing; held until the answer is ready. A body
//   whose next bytes would pass it gets 429 with Retry-After and its
//   connection is closed;
// - answers: from the answer's handing over until it is written; an answer
//   that would pass it is replaced by a 429.
// Thread-safe.
class MemoryBudget final {
 public:
  enum class Account { kBodies, kAnswers };

  explicit MemoryBudget(int64_t limit) : limit_(limit) {}
  // False (nothing reserved) when `bytes` more would pass the account's
  // limit.
  bool TryReserve(Account account, int64_t bytes) {
    std::atomic<int64_t>& held = Held(account);
    if (held.fetch_add(bytes, std::memory_order_relaxed) + bytes > limit_) {
      held.fetch_sub(bytes, std::memory_order_relaxed);
      refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  void Release(Account account, int64_t bytes) {
    Held(account).fetch_sub(bytes, std::memory_order_relaxed);
  }
  // Both accounts.
  int64_t bytes() const {
    return bodies_.load(std::memory_order_relaxed) +
           answers_.load(std::memory_order_relaxed);
  }
  int64_t bytes(Account account) const {
    return (account == Account::kBodies ? bodies_ : answers_)
        .load(std::memory_order_relaxed);
  }
  // Each account's.
  int64_t limit() const { return limit_; }
  // Requests and answers refused since start.
  int64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t>& Held(Account account) {
    return account == Account::kBodies ? bodies_ : answers_;
  }

  const int64_t limit_;
  std::atomic<int64_t> bodies_{0};
  std::atomic<int64_t> answers_{0};
  std::atomic<int64_t> refused_{0};
};

class Server final {
 public:
  struct Options {
    // "host:port" or "[v6]:port" with a numeric host; port 0 picks one.
    std::string address;
    // The flag that set `address`, for errors ("--http-listen").
    std::string flag = "--http-listen";
    // Null: plaintext. Must outlive the server.
    TlsFileContext* tls = nullptr;
    size_t max_body_bytes = 3 << 20;
    // Paths that take a body bound of their own instead of max_body_bytes:
    // the path itself and every path under it ("/admission/v1/validate",
    // "/admission/v1/validate/enforce"). `flag` names the bound in a 413.
    struct PathBodyLimit {
      std::string path;
      size_t bytes = 0;
      std::string flag;
      // Told (on a server thread, before the 413 is written) of each body
      // refused for this bound, with its Content-Length (0 for a chunked
      // body, refused once past the bound): the path's handler never sees
      // it, so this is how it counts and logs it. Null: nothing.
      std::function<void(uint64_t content_length)> on_refused;
    };
    std::vector<PathBodyLimit> path_body_limits;
    size_t max_header_bytes = 16 << 10;
    absl::Duration header_timeout = absl::Seconds(10);
    absl::Duration body_timeout = absl::Seconds(30);
    absl::Duration idle_timeout = absl::Seconds(60);
    int max_connections = 1024;
    int threads = 2;
    // Shared by the servers it bounds; must outlive them. Null: no bound.
    MemoryBudget* memory = nullptr;
  };

  // INVALID_ARGUMENT for a malformed address or option, UNAVAILABLE naming
  // the flag when the address cannot be bound (in use, not on this machine).
  static absl::StatusOr<std::unique_ptr<Server>> Start(Options options,
                                                       Handler handler);
  static absl::StatusOr<std::unique_ptr<Server>> Start(Options options,
                                                       AsyncHandler handler);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const { return port_; }
  // Connections open now.
  int connections() const;
  // Connections refused since start because `max_connections` were open.
  int64_t refused_connections() const;
  // Waits for the replies still held (Reply), then closes the listener and
  // every connection, joins the threads. Idempotent.
  void Stop();

  struct Impl;

 private:
  Server() = default;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// "host:port" or "[v6]:port" into its parts; INVALID_ARGUMENT naming `flag`.
absl::Status ParseHostPort(absl::string_view flag, absl::string_view address,
                           std::string* host, int* port);

}  // namespace compatd::http
