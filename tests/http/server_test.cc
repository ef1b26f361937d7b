// The HTTP/1.1 server of compatd's HTTP ports (http/server.h) over raw
// loopback sockets: keep-alive, HEAD, 100-continue, the bounds (413 before
// the body is read, 431), the header and idle timeouts (slowloris), the
// connection cap and a prompt Stop(). Timeouts are shortened to a few hundred
// milliseconds so that every test ends in well under 3 s.

#include "http/server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/loopback.h"
#include "tests/testing/status_matchers.h"

namespace compatd::http {
namespace {

using ::compatd::testing::ConnectLoopback;
using ::compatd::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// A socket closed on destruction.
class Socket {
 public:
  explicit Socket(int port) : fd_(ConnectLoopback(port, timeval{3, 0})) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Waits up to `timeout` for the peer to close (EOF or reset); false if the
  // connection is still open then. Bytes that arrive meanwhile are kept in
  // `pending_`.
  bool WaitClosed(std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - Clock::now());
      if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 1))) <=
          0) {
        continue;
      }
      char buffer[4096];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return true;
      pending_.append(buffer, static_cast<size_t>(n));
    }
    return false;
  }

  struct Reply {
    int status = 0;
    std::string head;  // lowercased
    std::string body;
    bool ok = false;
  };

  // Reads one response (Content-Length framed); `head_only` for a HEAD.
  Reply Read(bool head_only = false) {
    Reply reply;
    size_t end;
    while ((end = pending_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return reply;
    }
    reply.head = absl::AsciiStrToLower(pending_.substr(0, end));
    pending_.erase(0, end + 4);
    if (!absl::SimpleAtoi(absl::string_view(reply.head).substr(9, 3),
                          &reply.status)) {
      return reply;
    }
    size_t length = 0;
    const size_t at = reply.head.find("content-length: ");
    if (at != std::string::npos) {
      const size_t eol = reply.head.find("\r\n", at);
      if (!absl::SimpleAtoi(reply.head.substr(at + 16, eol == std::string::npos
                                                           ? std::string::npos
                                                           : eol - at - 16),
                            &length)) {
        return reply;
      }
    }
    if (!head_only) {
      while (pending_.size() < length) {
        if (!Fill()) return reply;
      }
      reply.body = pending_.substr(0, length);
      pending_.erase(0, length);
    }
    reply.ok = true;
    return reply;
  }

  const std::string& pending() const { return pending_; }

 private:
  bool Fill() {
    char buffer[16384];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) return false;
    pending_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  std::string pending_;
};

std::string Get(absl::string_view target, absl::string_view extra = "") {
  return absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: t\r\n", extra,
                      "\r\n");
}

int64_t MillisSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                               start)
      .count();
}

// Polls `condition` for up to 2 s.
template <typename F>
bool Eventually(F condition) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

class ServerTest : public ::testing::Test {
 protected:
  // Starts the server with `options` (address 127.0.0.1:0) and a handler
  // that answers "<method> <path> <query> <body bytes>".
  void StartServer(Server::Options options) {
    options.address = "127.0.0.1:0";
    absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(
        std::move(options), [this](const Request& request, Response* response) {
          handled_.fetch_add(1);
          response->content_type = "text/plain";
          response->body =
              absl::StrCat(request.method, " ", request.path, " ",
                           request.query, " ", request.body.size());
          if (request.method == "HEAD") response->omit_body = true;
          if (!request.Header("x-answer-header").empty()) {
            response->headers.emplace_back(
                "X-Echo", std::string(request.Header("x-answer-header")));
          }
        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  std::atomic<int> handled_{0};
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  StartServer({});
  Socket socket(server_->port());
  ASSERT_TRUE(socket.ok());
  ASSERT_TRUE(socket.Send(Get("/first?a=1", "X-Answer-Header: yes\r\n")));
  Socket::Reply first = socket.Read();
  ASSERT_TRUE(first.ok);
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, "GET /first a=1 0");
  EXPECT_THAT(first.head, HasSubstr("x-echo: yes"));
  EXPECT_THAT(first.head, HasSubstr("content-type: text/plain"));
  EXPECT_THAT(first.head, ::testing::Not(HasSubstr("connection: close")));

  const std::string body = "{\"x\":1}";
  ASSERT_TRUE(socket.Send(absl::StrCat(
      "POST /second HTTP/1.1\r\nHost: t\r\nContent-Length: ", body.size(),
      "\r\n\r\n", body)));
  Socket::Reply second = socket.Read();
  ASSERT_TRUE(second.ok);
  EXPECT_EQ(second.body, "POST /second  7");
  EXPECT_EQ(handled_.load(), 2);
  EXPECT_EQ(server_->connections(), 1);
}

TEST_F(ServerTest, PipelinedRequestsAreAnsweredInOrder) {
  StartServer({});
  Socket socket(server_->port());
  ASSERT_TRUE(socket.ok());
  ASSERT_TRUE(socket.Send(Get("/a") + Get("/b") + Get("/c")));
  for (const char* path : {"/a", "/b", "/c"}) {
    Socket::Reply reply = socket.Read();
    ASSERT_TRUE(reply.ok) << path;
    EXPECT_EQ(reply.body, absl::StrCat("GET ", path, "  0"));
  }
}

TEST_F(ServerTest, Http10ClosesAfterTheAnswer) {
  StartServer({});
  Socket socket(server_->port());
  ASSERT_TRUE(socket.Send("GET /old HTTP/1.0\r\n\r\n"));
  Socket::Reply reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.body, "GET /old  0");
  EXPECT_TRUE(socket.WaitClosed(std::chrono::seconds(1)));
}

TEST_F(ServerTest, HeadOmitsTheBodyButKeepsItsLength) {
  StartServer({});
  Socket socket(server_->port());
  ASSERT_TRUE(socket.Send("HEAD /x HTTP/1.1\r\nHost: t\r\n\r\n"));
  Socket::Reply head = socket.Read(/*head_only=*/true);
  ASSERT_TRUE(head.ok);
  EXPECT_EQ(head.status, 200);
  // The length of "HEAD /x  0", the body a GET-like answer would have.
  EXPECT_THAT(head.head, HasSubstr("content-length: 10"));
  // No body bytes follow: the next answer starts right away.
  ASSERT_TRUE(socket.Send(Get("/after")));
  Socket::Reply next = socket.Read();
  ASSERT_TRUE(next.ok);
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(next.body, "GET /after  0");
}

TEST_F(ServerTest, ExpectContinueGetsAnInterimAnswer) {
  StartServer({});
  Socket socket(server_->port());
  ASSERT_TRUE(
      socket.Send("POST /p HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
                  "Expect: 100-continue\r\n\r\n"));
  Socket::Reply interim = socket.Read(/*head_only=*/true);
  ASSERT_TRUE(interim.ok);
  EXPECT_EQ(interim.status, 100);
  ASSERT_TRUE(socket.Send("abc"));
  Socket::Reply reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.body, "POST /p  3");
}

TEST_F(ServerTest, ChunkedBodyWithinTheBoundIsRead) {
  Server::Options options;
  options.max_body_bytes = 1024;
  StartServer(options);
  Socket socket(server_->port());
  ASSERT_TRUE(socket.Send(
      "POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
  Socket::Reply reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.body, "POST /c  11");
}

TEST_F(ServerTest, ContentLengthOverTheBoundIs413BeforeTheBodyIsSent) {
  Server::Options options;
  options.max_body_bytes = 1024;
  StartServer(options);
  Socket socket(server_->port());
  // Only the head: the answer must not wait for the 1025 bytes.
  ASSERT_TRUE(socket.Send(
      "POST /big HTTP/1.1\r\nHost: t\r\nContent-Length: 1025\r\n\r\n"));
  const Clock::time_point start = Clock::now();
  Socket::Reply reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_LT(MillisSince(start), 1000);
  EXPECT_EQ(reply.status, 413);
  EXPECT_THAT(reply.body, HasSubstr("--max-http-body-bytes=1024"));
  EXPECT_THAT(reply.body, HasSubstr("\"code\":8"));
  EXPECT_THAT(reply.head, HasSubstr("connection: close"));
  EXPECT_TRUE(socket.WaitClosed(std::chrono::seconds(1)));
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(ServerTest, ContentLengthAtTheBoundIsRead) {
  Server::Options options;
  options.max_body_bytes = 1024;
  StartServer(options);
  Socket socket(server_->port());
  ASSERT_TRUE(socket.Send(
      absl::StrCat("POST /edge HTTP/1.1\r\nHost: t\r\nContent-Length: 1024"
                   "\r\n\r\n",
                   std::string(1024, 'x'))));
  Socket::Reply reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "POST /edge  1024");
}

TEST_F(ServerTest, ChunkedBodyPassingTheBoundIs413) {
  Server::Options options;
  options.max_body_bytes = 1024;
  StartServer(options);
  Socket socket(server_->port());
  ASSERT_TRUE(socket.Send(
      "POST /chunks HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "200\r\n" +
      std::string(512, 'a') + "\r\n"));
  // Within the bound so far: no answer yet.
  EXPECT_FALSE(socket.WaitClosed(std::chrono::milliseconds(100)));
  EXPECT_TRUE(socket.pending().empty());
  // The next chunk passes it; the server answers without waiting for it.
  ASSERT_TRUE(socket.Send("201\r\n"));
  Socket::Reply reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.status, 413);
  EXPECT_THAT(reply.body, HasSubstr("larger than --max-http-body-bytes=1024"));
  EXPECT_TRUE(socket.WaitClosed(std::chrono::seconds(1)));
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(ServerTest, LargeHeadIs431) {
  Server::Options options;
  options.max_header_bytes = 4096;
  StartServer(options);
  Socket socket(server_->port());
  ASSERT_TRUE(socket.Send(absl::StrCat("GET /h HTTP/1.1\r\nHost: t\r\nX-Big: ",
                                       std::string(5000, 'b'), "\r\n\r\n")));
  Socket::Reply reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.status, 431);
  EXPECT_THAT(reply.body, HasSubstr("larger than 4096 bytes"));
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(ServerTest, HeadJustUnderTheBoundIsServed) {
  Server::Options options;
  options.max_header_bytes = 4096;
  StartServer(options);
  Socket socket(server_->port());
  ASSERT_TRUE(socket.Send(absl::StrCat("GET /h HTTP/1.1\r\nHost: t\r\nX-Big: ",
                                       std::string(3500, 'b'), "\r\n\r\n")));
  Socket::Reply reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.status, 200);
}

TEST_F(ServerTest, SlowlorisIsClosedWhileAFreshRequestIsAnswered) {
  Server::Options options;
  options.header_timeout = absl::Milliseconds(300);
  StartServer(options);
  Socket slow(server_->port());
  ASSERT_TRUE(slow.ok());
  const std::string head =
      Get("/slow", "X-Padding: " + std::string(64, 'p') + "\r\n");
  const Clock::time_point start = Clock::now();
  std::atomic<bool> closed{false};
  std::atomic<int64_t> closed_after_ms{-1};
  std::thread trickler([&] {
    // One byte every 100 ms, never the whole head.
    for (size_t i = 0; i + 4 < head.size() && MillisSince(start) < 2500; ++i) {
      if (send(slow.fd(), head.data() + i, 1, MSG_NOSIGNAL) != 1 ||
          slow.WaitClosed(std::chrono::milliseconds(100))) {
        closed = true;
        closed_after_ms = MillisSince(start);
        return;
      }
    }
  });
  // Meanwhile a fresh connection is answered at once.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  {
    Socket fresh(server_->port());
    const Clock::time_point asked = Clock::now();
    ASSERT_TRUE(fresh.Send(Get("/fresh")));
    Socket::Reply reply = fresh.Read();
    ASSERT_TRUE(reply.ok);
    EXPECT_EQ(reply.body, "GET /fresh  0");
    EXPECT_LT(MillisSince(asked), 200);
  }
  trickler.join();
  EXPECT_TRUE(closed.load()) << "the trickling connection was never closed";
  EXPECT_GE(closed_after_ms.load(), 250);
  EXPECT_LT(closed_after_ms.load(), 1500);
  EXPECT_EQ(handled_.load(), 1);
}

TEST_F(ServerTest, ConnectionThatSendsNothingIsClosedAfterTheHeaderTimeout) {
  Server::Options options;
  options.header_timeout = absl::Milliseconds(300);
  StartServer(options);
  Socket silent(server_->port());
  const Clock::time_point start = Clock::now();
  ASSERT_TRUE(silent.WaitClosed(std::chrono::milliseconds(1500)));
  EXPECT_GE(MillisSince(start), 250);
  EXPECT_TRUE(Eventually([&] { return server_->connections() == 0; }));
}

TEST_F(ServerTest, IdleKeepAliveConnectionIsClosed) {
  Server::Options options;
  options.header_timeout = absl::Seconds(2);
  options.idle_timeout = absl::Milliseconds(300);
  StartServer(options);
  Socket socket(server_->port());
  ASSERT_TRUE(socket.Send(Get("/once")));
  ASSERT_TRUE(socket.Read().ok);
  const Clock::time_point answered = Clock::now();
  ASSERT_TRUE(socket.WaitClosed(std::chrono::milliseconds(1500)));
  // The idle timeout, not the (longer) header timeout, closed it.
  EXPECT_GE(MillisSince(answered), 250);
  EXPECT_LT(MillisSince(answered), 1500);
  EXPECT_TRUE(Eventually([&] { return server_->connections() == 0; }));
}

TEST_F(ServerTest, ConnectionsOverTheCapAreClosedAndCounted) {
  Server::Options options;
  options.max_connections = 2;
  StartServer(options);
  Socket a(server_->port());
  Socket b(server_->port());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(Eventually([&] { return server_->connections() == 2; }));
  EXPECT_EQ(server_->refused_connections(), 0);
  Socket c(server_->port());
  ASSERT_TRUE(c.ok());  // the kernel accepts; the server closes it at once
  EXPECT_TRUE(c.WaitClosed(std::chrono::seconds(1)));
  EXPECT_TRUE(c.pending().empty());
  EXPECT_EQ(server_->refused_connections(), 1);
  EXPECT_EQ(server_->connections(), 2);
  // The open ones still work, and a slot freed is taken again.
  ASSERT_TRUE(a.Send(Get("/a")));
  EXPECT_EQ(a.Read().body, "GET /a  0");
  ASSERT_TRUE(b.Send("GET /b HTTP/1.0\r\n\r\n"));
  EXPECT_EQ(b.Read().body, "GET /b  0");
  ASSERT_TRUE(Eventually([&] { return server_->connections() == 1; }));
  Socket d(server_->port());
  ASSERT_TRUE(d.Send(Get("/d")));
  EXPECT_EQ(d.Read().body, "GET /d  0");
  EXPECT_EQ(server_->refused_connections(), 1);
}

TEST_F(ServerTest, GarbageIsClosedWithoutReachingTheHandler) {
  StartServer({});
  Socket socket(server_->port());
  ASSERT_TRUE(
      socket.Send(std::string("\x16\x03\x01\x02\x00\x01\x00\r\n\r\n", 11)));
  EXPECT_TRUE(socket.WaitClosed(std::chrono::seconds(1)));
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(ServerTest, StopIsPromptWithOpenConnections) {
  Server::Options options;
  options.header_timeout = absl::Seconds(30);
  options.idle_timeout = absl::Seconds(30);
  StartServer(options);
  Socket idle(server_->port());
  ASSERT_TRUE(idle.Send(Get("/x")));
  ASSERT_TRUE(idle.Read().ok);  // now idle between requests
  Socket half(server_->port());
  ASSERT_TRUE(half.Send("GET /half HTTP/1.1\r\nHost:"));  // mid-head
  Socket body(server_->port());
  ASSERT_TRUE(body.Send(
      "POST /b HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nabc"));
  ASSERT_TRUE(Eventually([&] { return server_->connections() == 3; }));
  const Clock::time_point start = Clock::now();
  server_->Stop();
  EXPECT_LT(MillisSince(start), 500);
  for (Socket* s : {&idle, &half, &body}) {
    EXPECT_TRUE(s->WaitClosed(std::chrono::seconds(1)));
  }
  server_->Stop();  // idempotent
  EXPECT_LT(ConnectLoopback(server_->port()), 0);
}

// Issue 23: the server's threads serve connections concurrently (the
// io_context's concurrency hint was 1: one slow handler held every other
// connection, /healthz and TLS handshakes included).
TEST(ServerConcurrencyTest, ASlowHandlerDoesNotHoldOtherConnections) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> slow_started{false};
  Server::Options options;
  options.address = "127.0.0.1:0";
  options.threads = 2;
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Start(options, [&](const Request& request, Response* response) {
        if (request.path == "/slow") {
          slow_started = true;
          released.wait_for(std::chrono::seconds(5));
        }
        response->body = request.path;
      });
  ASSERT_TRUE(server.ok()) << server.status();
  Socket slow((*server)->port());
  ASSERT_TRUE(slow.Send(Get("/slow")));
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(2);
  while (!slow_started && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(slow_started);
  for (int i = 0; i < 5; ++i) {
    const Clock::time_point start = Clock::now();
    Socket fast((*server)->port());
    ASSERT_TRUE(fast.Send(Get("/fast")));
    const Socket::Reply reply = fast.Read();
    ASSERT_TRUE(reply.ok);
    EXPECT_EQ(reply.body, "/fast");
    EXPECT_LT(MillisSince(start), 50);
  }
  release.set_value();
  const Socket::Reply reply = slow.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.body, "/slow");
}

// An AsyncHandler answers from another thread; Stop() waits for a reply
// still held, and a reply dropped unsent closes the connection.
TEST_F(ServerTest, AsyncRepliesFromAnotherThread) {
  std::vector<std::thread> workers;
  std::mutex mu;
  std::atomic<int> replied{0};
  Server::Options options;
  options.address = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(
      options, AsyncHandler([&](Request request, Reply reply) {
        std::lock_guard<std::mutex> lock(mu);
        workers.emplace_back([&replied, request = std::move(request), reply] {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          if (request.path == "/drop") return;  // the reply is never sent
          Response response;
          response.body = "late " + request.path;
          reply(response);
          reply(response);  // a second call does nothing
          ++replied;
        });
      }));
  ASSERT_TRUE(server.ok()) << server.status();
  Socket socket((*server)->port());
  ASSERT_TRUE(socket.Send(Get("/a")));
  Socket::Reply reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.body, "late /a");
  ASSERT_TRUE(socket.Send(Get("/b")));  // keep-alive still works
  reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.body, "late /b");
  Socket dropped((*server)->port());
  ASSERT_TRUE(dropped.Send(Get("/drop")));
  EXPECT_TRUE(dropped.WaitClosed(std::chrono::milliseconds(2000)));
  Socket pending((*server)->port());
  ASSERT_TRUE(pending.Send(Get("/c")));
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard<std::mutex> lock(mu);
    return workers.size() == 4;
  }));
  (*server)->Stop();  // waits for /c's reply (held 20 ms by its worker)
  EXPECT_EQ(replied.load(), 3);
  std::lock_guard<std::mutex> lock(mu);
  for (std::thread& worker : workers) worker.join();
}

TEST(ServerStartTest, BadAddressesAreInvalidArgumentsNamingTheFlag) {
  for (const char* address :
       {"", "8443", "localhost:8443", "127.0.0.1:", "127.0.0.1:65536",
        "127.0.0.1:-1", "[::1:8443", "1.2.3:80"}) {
    Server::Options options;
    options.address = address;
    options.flag = "--http-listen";
    EXPECT_THAT(Server::Start(options, [](const Request&, Response*) {}),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("--http-listen")))
        << address;
  }
}

TEST(ServerStartTest, PortInUseIsUnavailableNamingTheFlag) {
  Server::Options options;
  options.address = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<Server>> first =
      Server::Start(options, [](const Request&, Response*) {});
  ASSERT_TRUE(first.ok()) << first.status();
  options.address = absl::StrCat("127.0.0.1:", (*first)->port());
  options.flag = "--metrics-listen";
  EXPECT_THAT(Server::Start(options, [](const Request&, Response*) {}),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("--metrics-listen=127.0.0.1:"),
                             HasSubstr("in use"))));
}

TEST(ServerStartTest, OptionsOutOfRangeAreRefused) {
  Server::Options options;
  options.address = "127.0.0.1:0";
  options.max_header_bytes = 100;
  EXPECT_THAT(Server::Start(options, [](const Request&, Response*) {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1024")));
}

TEST(ParseHostPortTest, AcceptsNumericHostsOnly) {
  std::string host;
  int port = 0;
  EXPECT_OK(ParseHostPort("--f", "0.0.0.0:8443", &host, &port));
  EXPECT_EQ(host, "0.0.0.0");
  EXPECT_EQ(port, 8443);
  EXPECT_OK(ParseHostPort("--f", "[::1]:0", &host, &port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 0);
  EXPECT_THAT(
      ParseHostPort("--f", "[::1:80", &host, &port),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("brackets")));
  EXPECT_THAT(
      ParseHostPort("--f", "example.com:80", &host, &port),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a numeric")));
}

}  // namespace
}  // namespace compatd::http

namespace compatd::http {
namespace {

// An AsyncHandler whose work waits (up to 5 s) for its client to leave
// (Reply::client_gone), as a heavy scan looks at its budget; then answers
// "gone" or "stayed".
class ClientGoneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Server::Options options;
    options.address = "127.0.0.1:0";
    options.idle_timeout = absl::Milliseconds(400);
    absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(
        options, AsyncHandler([this](Request request, Reply reply) {
          std::lock_guard<std::mutex> lock(mu_);
          workers_.emplace_back([this, request = std::move(request), reply] {
            const std::atomic<bool>* gone = reply.client_gone();
            const auto deadline =
                Clock::now() + (request.path == "/quick"
                                    ? std::chrono::milliseconds(50)
                                    : std::chrono::milliseconds(5000));
            while (Clock::now() < deadline && !gone->load()) {
              std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
            if (gone->load()) ++gone_;
            Response response;
            response.body = gone->load() ? "gone" : "stayed " + request.path;
            reply(response);
          });
        }));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  void TearDown() override {
    server_->Stop();
    std::lock_guard<std::mutex> lock(mu_);
    for (std::thread& worker : workers_) worker.join();
  }

  std::mutex mu_;
  std::vector<std::thread> workers_;
  std::atomic<int> gone_{0};
  std::unique_ptr<Server> server_;
};

TEST_F(ClientGoneTest, AClientThatClosesIsSeenGoneAtOnce) {
  {
    Socket socket(server_->port());
    ASSERT_TRUE(socket.Send(Get("/slow")));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }  // closed while its work runs
  const Clock::time_point closed = Clock::now();
  ASSERT_TRUE(Eventually([&] { return gone_.load() == 1; }));
  EXPECT_LT(MillisSince(closed), 1000);
  EXPECT_TRUE(Eventually([&] { return server_->connections() == 0; }));
}

TEST_F(ClientGoneTest, AClientThatWaitsGetsItsAnswerAndKeepsItsConnection) {
  Socket socket(server_->port());
  ASSERT_TRUE(socket.Send(Get("/quick")));
  Socket::Reply reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.body, "stayed /quick");
  // The watch's read is now the wait for the next request.
  ASSERT_TRUE(socket.Send(Get("/quick?2")));
  reply = socket.Read();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.body, "stayed /quick");
  // ... closed after the idle timeout, as any keep-alive connection.
  const Clock::time_point answered = Clock::now();
  EXPECT_TRUE(socket.WaitClosed(std::chrono::milliseconds(2000)));
  EXPECT_GE(MillisSince(answered), 300);
  EXPECT_EQ(gone_.load(), 0);
}

TEST_F(ClientGoneTest, ARequestSentEarlyIsKeptAndAnsweredInOrder) {
  Socket socket(server_->port());
  ASSERT_TRUE(socket.Send(Get("/quick")));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(socket.Send(Get("/quick?next")));  // while the first works
  Socket::Reply first = socket.Read();
  Socket::Reply second = socket.Read();
  ASSERT_TRUE(first.ok);
  ASSERT_TRUE(second.ok);
  EXPECT_EQ(first.body, "stayed /quick");
  EXPECT_EQ(second.body, "stayed /quick");
  EXPECT_EQ(gone_.load(), 0);
}

}  // namespace
}  // namespace compatd::http
