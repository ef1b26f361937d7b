// SIGTERM while clients are still connected, against the real compatd binary:
// idle channels and never-ending streams (grpc.health.v1 Health/Watch) must
// not hold the exit for the whole --shutdown-grace, and a unary call still in
// flight when SIGTERM arrives (the server working on it, or its answer waiting
// for the client to accept it) must still be answered in full.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/integration/raw_http2.h"
#include "tests/testing/loopback.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/time_scale.h"

namespace compatd {
namespace {

using ::compatd::testing::CompatdProcess;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Long enough that waiting for it would fail every timing bound below (the
// harness gives the process 10 s after SIGTERM before it reports a hang).
constexpr char kGrace[] = "--shutdown-grace=10s";
// What "exits promptly" means here, with room for a loaded 2-core machine and
// sanitizer builds; measured: about 0.2 s (two looks 100 ms apart for calls
// in flight).
constexpr auto kPrompt = 3s;

int64_t Millis(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// utime + stime of a live process, in ms, from /proc/<pid>/stat.
absl::StatusOr<int64_t> CpuMillis(pid_t pid) {
  absl::StatusOr<std::string> stat =
      testing::ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  if (!stat.ok()) return stat.status();
  // Fields after the command name, which is in parentheses and may hold
  // spaces: state is field 3, utime 14, stime 15.
  const size_t paren = stat->rfind(')');
  if (paren == std::string::npos) {
    return absl::DataLossError(absl::StrCat("unexpected stat: ", *stat));
  }
  const std::vector<std::string> fields =
      absl::StrSplit(stat->substr(paren + 2), ' ');
  int64_t utime = 0;
  int64_t stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return absl::DataLossError(absl::StrCat("unexpected stat: ", *stat));
  }
  return (utime + stime) * 1000 / sysconf(_SC_CLK_TCK);
}

class ShutdownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(server_.Start({kGrace, "--max-evaluate-items=1000000",
                             "--max-send-message-bytes=67108864"}));
  }

  // SIGTERM; the exit code and how long it took.
  struct Exit {
    std::optional<int> code;
    Clock::duration took;
  };
  Exit Stop() {
    const Clock::time_point start = Clock::now();
    std::optional<int> code = server_.Stop();
    return Exit{code, Clock::now() - start};
  }

  // SIGTERM; the exit code, and how long until compatd logged "stopped" (its
  // gRPC server is shut down; what follows is process teardown). gRPC 1.51's
  // posix TCP backup poller (src/core/lib/iomgr/tcp_posix.cc, run_poller)
  // sleeps in 10 s pollset_work rounds once a socket write had to wait, and
  // grpc_shutdown() in ~grpc::Server joins it: the exit itself can come up to
  // 10 s after "stopped". The harness gives the
  // exit 10 s from its own SIGTERM, which it sends after "stopped" here.
  struct Drain {
    std::optional<int> code;
    Clock::duration took;
  };
  Drain StopAndWaitForTheDrain() {
    const Clock::time_point start = Clock::now();
    kill(server_.pid(), SIGTERM);
    Clock::duration took = 20s;
    while (Clock::now() - start < 20s) {
      if (absl::StrContains(server_.Stderr(), "I stopped")) {
        took = Clock::now() - start;
        break;
      }
      std::this_thread::sleep_for(5ms);
    }
    return Drain{server_.Stop(), took};
  }

  // A channel of its own that accepts answers of any size.
  std::shared_ptr<grpc::Channel> NewChannel() {
    grpc::ChannelArguments arguments;
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    arguments.SetMaxReceiveMessageSize(-1);
    return grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", server_.grpc_port()),
        grpc::InsecureChannelCredentials(), arguments);
  }

  // A grpc.health.v1 Health/Watch stream on the main port, open and past its
  // first answer (SERVING).
  struct HealthWatch {
    std::unique_ptr<grpc::health::v1::Health::Stub> stub;
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<grpc::health::v1::HealthCheckResponse>>
        stream;
  };
  void OpenHealthWatch(HealthWatch* watch) {
    watch->stub = grpc::health::v1::Health::NewStub(NewChannel());
    watch->stream = watch->stub->Watch(&watch->context,
                                       grpc::health::v1::HealthCheckRequest());
    grpc::health::v1::HealthCheckResponse response;
    ASSERT_TRUE(watch->stream->Read(&response));
    ASSERT_EQ(response.status(),
              grpc::health::v1::HealthCheckResponse::SERVING);
  }

  CompatdProcess server_;
};

TEST_F(ShutdownTest, IdleChannelDoesNotHoldTheExit) {
  std::shared_ptr<grpc::Channel> channel = NewChannel();
  auto stub = v1::CompatibilityPolicy::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  v1::GetCatalogResponse response;
  ASSERT_TRUE(
      stub->GetCatalog(&context, v1::GetCatalogRequest(), &response).ok());
  ASSERT_EQ(channel->GetState(false), GRPC_CHANNEL_READY);

  const Exit exit = Stop();
  std::cout << "idle channel: exit after " << Millis(exit.took) << " ms\n";
  ASSERT_EQ(exit.code, 0) << server_.Stderr();
  EXPECT_LT(exit.took, kPrompt) << server_.Stderr();
}

TEST_F(ShutdownTest, HealthWatchStreamOnTheMainPortDoesNotHoldTheExit) {
  HealthWatch watch;
  ASSERT_NO_FATAL_FAILURE(OpenHealthWatch(&watch));
  grpc::health::v1::HealthCheckResponse response;

  const Exit exit = Stop();
  std::cout << "Health/Watch stream: exit after " << Millis(exit.took)
            << " ms\n";
  ASSERT_EQ(exit.code, 0) << server_.Stderr();
  EXPECT_LT(exit.took, kPrompt) << server_.Stderr();
  // The stream was ended by the server, not by this client.
  while (watch.stream->Read(&response)) {
  }
  EXPECT_FALSE(watch.stream->Finish().ok());
}

TEST_F(ShutdownTest, HealthWatchOnTheMainPortSeesNotServingBeforeItIsClosed) {
  HealthWatch watch;
  ASSERT_NO_FATAL_FAILURE(OpenHealthWatch(&watch));

  ASSERT_EQ(kill(server_.pid(), SIGTERM), 0);
  // The stream ends when compatd cancels what is left (about 0.2 s after
  // SIGTERM; kPrompt scaled for sanitizer builds); a stream still open then
  // is cancelled here, and the test fails on what it saw, not on a hang.
  std::mutex mu;
  std::condition_variable ended_cv;
  bool ended = false;
  bool cancelled_here = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mu);
    if (!ended_cv.wait_for(lock, testing::Scaled(kPrompt),
                           [&] { return ended; })) {
      cancelled_here = true;
      watch.context.TryCancel();
    }
  });
  std::vector<grpc::health::v1::HealthCheckResponse::ServingStatus> seen;
  grpc::health::v1::HealthCheckResponse response;
  while (watch.stream->Read(&response)) seen.push_back(response.status());
  {
    std::lock_guard<std::mutex> lock(mu);
    ended = true;
  }
  ended_cv.notify_one();
  watchdog.join();
  watch.stream->Finish();
  EXPECT_FALSE(cancelled_here)
      << "the stream was still open "
      << Millis(testing::Scaled(
             std::chrono::duration_cast<Clock::duration>(kPrompt)))
      << " ms after SIGTERM";
  EXPECT_THAT(seen, ::testing::ElementsAre(
                        grpc::health::v1::HealthCheckResponse::NOT_SERVING));
  // The exit may come up to 10 s after "stopped" (see
  // StopAndWaitForTheDrain), more under a sanitizer.
  EXPECT_EQ(server_.WaitForExit(testing::Scaled(10s)), 0) << server_.Stderr();
}

// ---------------------------------------------------------------------------
// A call whose answer waits for its client

// Just enough HTTP/2 (h2c with prior knowledge, RFC 9113) to make one gRPC
// call whose answer the client does not accept until told to: it announces a
// stream window of 0, so the server can send the answer's headers but no DATA
// until WindowUpdate(). gRPC C++ clients always accept at once.
class WithheldCall {
 public:
  // The frame types, flags and encoding of tests/integration/raw_http2.h.
  using H2 = testing::RawHttp2;
  using Frame = H2::Frame;
  static constexpr uint8_t kData = H2::kData, kHeaders = H2::kHeaders,
                           kRstStream = H2::kRstStream,
                           kSettings = H2::kSettings, kPing = H2::kPing,
                           kGoAway = H2::kGoAway,
                           kWindowUpdate = H2::kWindowUpdate;
  static constexpr uint8_t kEndStream = H2::kEndStream, kAck = H2::kAck,
                           kEndHeaders = H2::kEndHeaders;

  ~WithheldCall() {
    if (fd_ >= 0) close(fd_);
  }

  // Connects and sends the call of `path` with the serialized `message`.
  absl::Status Start(int port, absl::string_view path,
                     absl::string_view message) {
    fd_ = testing::ConnectLoopback(port);
    if (fd_ < 0) return absl::UnavailableError("cannot connect");
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    // SETTINGS_INITIAL_WINDOW_SIZE = 0.
    AppendFrame(&out, kSettings, 0, 0, std::string("\x00\x04", 2) + Uint32(0));
    AppendFrame(&out, kHeaders, kEndHeaders, 1,
                testing::RawHttp2::HeaderBlock(path, port));
    AppendFrame(&out, kData, kEndStream, 1,
                std::string(1, '\0') +
                    Uint32(static_cast<uint32_t>(message.size())) +
                    std::string(message));
    return Send(out);
  }

  // Lets the server send the answer.
  absl::Status WindowUpdate() {
    std::string out;
    AppendFrame(&out, kWindowUpdate, 0, 1, Uint32(1 << 30));
    return Send(out);
  }

  // The next frame of stream 1 or a GOAWAY, answering the server's SETTINGS
  // and PINGs on the way; nullopt if none came within `timeout`.
  absl::StatusOr<std::optional<Frame>> Next(std::chrono::milliseconds timeout) {
    const Clock::time_point end = Clock::now() + timeout;
    while (true) {
      if (std::optional<Frame> frame = TakeFrame()) {
        if (frame->type == kSettings && !(frame->flags & kAck)) {
          std::string out;
          AppendFrame(&out, kSettings, kAck, 0, "");
          if (absl::Status s = Send(out); !s.ok()) return s;
        } else if (frame->type == kPing && !(frame->flags & kAck)) {
          std::string out;
          AppendFrame(&out, kPing, kAck, 0, frame->payload);
          if (absl::Status s = Send(out); !s.ok()) return s;
        } else if (frame->stream == 1 || frame->type == kGoAway) {
          return frame;
        }
        continue;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - Clock::now());
      if (left.count() <= 0) return std::optional<Frame>();
      pollfd pfd{fd_, POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[16384];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        return absl::UnavailableError("the server closed the connection");
      }
      in_.append(buffer, static_cast<size_t>(n));
    }
  }

 private:
  static std::string Uint32(uint32_t v) { return H2::Uint32(v); }
  static void AppendFrame(std::string* out, uint8_t type, uint8_t flags,
                          uint32_t stream, absl::string_view payload) {
    H2::AppendFrame(out, type, flags, stream, payload);
  }
  absl::Status Send(absl::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return absl::UnavailableError("send() failed");
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }
  std::optional<Frame> TakeFrame() {
    if (in_.size() < 9) return std::nullopt;
    const auto* h = reinterpret_cast<const unsigned char*>(in_.data());
    const size_t length = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
    if (in_.size() < 9 + length) return std::nullopt;
    Frame frame;
    frame.type = h[3];
    frame.flags = h[4];
    frame.stream = ((uint32_t{h[5]} << 24) | (uint32_t{h[6]} << 16) |
                    (uint32_t{h[7]} << 8) | h[8]) &
                   0x7fffffff;
    frame.payload = in_.substr(9, length);
    in_.erase(0, 9 + length);
    return frame;
  }

  int fd_ = -1;
  std::string in_;
};

// The counting that matters: a call is in flight until gRPC is done with it,
// not when its handler returns. Here the handler has answered (the answer's
// headers arrived) but the client has not accepted the answer yet: after
// SIGTERM the server must keep the connection for it, then deliver it in full
// and exit.
TEST_F(ShutdownTest, AnswerNotYetAcceptedByItsClientIsStillDelivered) {
  WithheldCall call;
  ASSERT_OK(call.Start(server_.grpc_port(),
                       "/compatd.v1.CompatibilityPolicy/GetCatalog",
                       v1::GetCatalogRequest().SerializeAsString()));
  // The handler has run once the answer's headers come.
  {
    ASSERT_OK_AND_ASSIGN(std::optional<WithheldCall::Frame> frame,
                         call.Next(10s));
    ASSERT_TRUE(frame.has_value()) << "no answer headers";
    ASSERT_EQ(frame->type, WithheldCall::kHeaders);
  }

  ASSERT_EQ(kill(server_.pid(), SIGTERM), 0);
  // Well past the server's two looks for calls in flight (200 ms): the
  // connection stays, the answer waits.
  const Clock::time_point sigterm = Clock::now();
  while (Clock::now() - sigterm < 1s) {
    ASSERT_OK_AND_ASSIGN(std::optional<WithheldCall::Frame> frame,
                         call.Next(100ms));
    if (frame.has_value()) {
      ASSERT_EQ(frame->type, WithheldCall::kGoAway)
          << "frame type " << int{frame->type} << " on the withheld stream";
    }
  }
  EXPECT_THAT(server_.Stderr(), ::testing::Not(HasSubstr("I stopped")));

  const Clock::time_point released = Clock::now();
  ASSERT_OK(call.WindowUpdate());
  std::string data;
  bool ended = false;
  while (!ended) {
    ASSERT_OK_AND_ASSIGN(std::optional<WithheldCall::Frame> frame,
                         call.Next(10s));
    ASSERT_TRUE(frame.has_value()) << "the answer did not come";
    if (frame->type == WithheldCall::kData) data += frame->payload;
    ASSERT_NE(frame->type, WithheldCall::kRstStream);
    ended = frame->type != WithheldCall::kGoAway &&
            (frame->flags & WithheldCall::kEndStream);
  }
  // One length-prefixed message, whole.
  ASSERT_GE(data.size(), 5u);
  const auto* prefix = reinterpret_cast<const unsigned char*>(data.data());
  const size_t length = (size_t{prefix[1]} << 24) | (size_t{prefix[2]} << 16) |
                        (size_t{prefix[3]} << 8) | prefix[4];
  ASSERT_EQ(data.size(), 5 + length);
  v1::GetCatalogResponse response;
  ASSERT_TRUE(response.ParseFromString(data.substr(5)));
  EXPECT_EQ(response.generation(), 1u);

  const Exit exit = Stop();
  std::cout << "withheld answer: exit " << Millis(Clock::now() - released)
            << " ms after the client accepted it\n";
  EXPECT_EQ(exit.code, 0) << server_.Stderr();
  EXPECT_LT(Clock::now() - released, kPrompt);
}

// A stream whose HEADERS the server had before SIGTERM is at or below the
// GOAWAY's last-stream-id, so its client may not retry it elsewhere: it must
// be answered, even when its request (DATA) arrives after the GOAWAY. Before:
// gRPC 1.51 handed a unary call to the application only with its request,
// and cancelled one whose request came once shutdown had begun (CANCELLED).
TEST_F(ShutdownTest,
       StreamOpenedBeforeSigtermIsAnsweredWhenItsRequestComesAfter) {
  testing::RawHttp2 call;
  ASSERT_OK(call.Connect(server_.grpc_port()));
  ASSERT_OK(call.SendHeaders(1, "/compatd.v1.CompatibilityPolicy/GetCatalog"));
  std::this_thread::sleep_for(300ms);  // the server has the stream
  ASSERT_EQ(kill(server_.pid(), SIGTERM), 0);
  bool goaway = false;
  const Clock::time_point sigterm = Clock::now();
  while (!goaway && Clock::now() - sigterm < 5s) {
    ASSERT_OK_AND_ASSIGN(std::optional<testing::RawHttp2::Frame> frame,
                         call.Next(100ms));
    if (!frame.has_value()) continue;
    ASSERT_EQ(frame->type, testing::RawHttp2::kGoAway)
        << "frame type " << int{frame->type} << " before the request";
    goaway = true;
    EXPECT_GE(testing::RawHttp2::ReadUint32(frame->payload, 0) & 0x7fffffff, 1u)
        << "GOAWAY does not cover the open stream";
  }
  ASSERT_TRUE(goaway) << "no GOAWAY after SIGTERM";
  std::this_thread::sleep_for(50ms);
  ASSERT_OK(call.SendData(1,
                          testing::RawHttp2::GrpcMessage(
                              v1::GetCatalogRequest().SerializeAsString()),
                          /*end_stream=*/true));
  std::string data;
  bool ended = false;
  while (!ended) {
    ASSERT_OK_AND_ASSIGN(std::optional<testing::RawHttp2::Frame> frame,
                         call.Next(5000ms));
    ASSERT_TRUE(frame.has_value()) << "the answer did not come";
    ASSERT_NE(frame->type, testing::RawHttp2::kRstStream)
        << "the stream was reset";
    if (frame->type == testing::RawHttp2::kGoAway) continue;
    if (frame->type == testing::RawHttp2::kData) data += frame->payload;
    ended = frame->flags & testing::RawHttp2::kEndStream;
  }
  ASSERT_GE(data.size(), 5u) << "no answer message (an error status?)";
  v1::GetCatalogResponse response;
  ASSERT_TRUE(response.ParseFromString(data.substr(5)));
  EXPECT_EQ(response.generation(), 1u);
  const Exit exit = Stop();
  EXPECT_EQ(exit.code, 0) << server_.Stderr();
}

// One Evaluate call of GetFeature items under a long --feature-gates value:
// little to send, about 15 us of work per item for the server (each item
// parses the gates again), about 220 bytes of answer per item, whose
// completeness is easy to check. (ListFeatures answers are 25 kB an item: the
// larger the answer, the likelier gRPC's TCP backup poller delays the exit,
// see StopAndWaitForTheDrain.)
v1::EvaluateRequest Batch(int items) {
  v1::EvaluateRequest request;
  std::string gates;
  while (gates.size() < 4000) gates += "AllBeta=false,";
  gates.pop_back();
  request.mutable_versions()->set_feature_gates(gates);
  for (int i = 0; i < items; ++i) {
    request.add_items()->mutable_get_feature()->set_name("WatchList");
  }
  return request;
}

// A call's outcome as the client saw it.
struct Outcome {
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  std::string message;
  bool complete = false;  // OK, with every item answered
  Clock::time_point done;
};

Outcome Call(v1::CompatibilityPolicy::Stub* stub,
             const v1::EvaluateRequest& request) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 60s);
  v1::EvaluateResponse response;
  const grpc::Status status = stub->Evaluate(&context, request, &response);
  Outcome outcome;
  outcome.code = status.error_code();
  outcome.message = status.error_message();
  outcome.complete =
      status.ok() && response.results_size() == request.items_size() &&
      std::all_of(response.results().begin(), response.results().end(),
                  [](const v1::EvaluateResult& result) {
                    return result.get_feature().name() == "WatchList";
                  });
  outcome.done = Clock::now();
  return outcome;
}

// The test fails if the server closes connections while a unary call it has
// started is not answered yet: one long call is made sure to be in the
// server's hands at SIGTERM (the server process has spent CPU time on it),
// and clients keep calling while SIGTERM arrives. Every call must end OK with
// the whole answer or be refused UNAVAILABLE, and the long one must be OK.
TEST_F(ShutdownTest, CallInFlightAtSigtermIsAnsweredInFull) {
#ifdef COMPATD_TSAN
  // Under TSan a handler that works for hundreds of ms overflows the history
  // of its thread, so the report TSan always makes on gRPC 1.51's own
  // ServerCallbackCall reference count (constructed on one gRPC thread,
  // released on another, ordered by libgrpc's completion queue, which TSan
  // cannot see) comes without the constructor's frame that tests/tsan.supp
  // matches, and halts the server. Measured with the code before this
  // change too. AnswerNotYetAcceptedByItsClientIsStillDelivered covers the
  // counting of calls in flight under TSan.
  GTEST_SKIP() << "long handlers defeat TSan's history (see the comment)";
#endif
  std::shared_ptr<grpc::Channel> channel = NewChannel();
  auto stub = v1::CompatibilityPolicy::NewStub(channel);
  // Sized so that the server works on it for about kLong (this build, this
  // machine's load): long enough to still be running after the server's
  // second look for calls in flight (200 ms after SIGTERM), which is when a
  // close that ignored it would cut it.
  constexpr auto kLong = 800ms;
  int items = 1000;
  {
    const Outcome warm = Call(stub.get(), Batch(items));
    ASSERT_TRUE(warm.complete) << warm.message;
    const Clock::time_point start = Clock::now();
    const Outcome timed = Call(stub.get(), Batch(items));
    ASSERT_TRUE(timed.complete) << timed.message;
    items = static_cast<int>(std::clamp<int64_t>(
        items * Millis(kLong) /
            std::max<int64_t>(1, Millis(timed.done - start)),
        1000, 200000));
  }
  const v1::EvaluateRequest long_request = Batch(items);

  ASSERT_OK_AND_ASSIGN(const int64_t cpu_before, CpuMillis(server_.pid()));
  const Clock::time_point long_start = Clock::now();
  Outcome long_call;
  std::thread long_thread([&] { long_call = Call(stub.get(), long_request); });
  // The server is busy with it once its CPU time has grown (it is idle
  // otherwise, and receiving the request costs little).
  bool working = false;
  while (!working && Clock::now() - long_start < 10s) {
    std::this_thread::sleep_for(5ms);
    absl::StatusOr<int64_t> cpu = CpuMillis(server_.pid());
    working = cpu.ok() && *cpu - cpu_before >= 30;
  }

  // Clients that keep calling while SIGTERM arrives, each on its own
  // connection, until their first failure.
  constexpr int kLoops = 2;
  std::atomic<bool> stop{false};
  std::vector<std::vector<Outcome>> loop_outcomes(kLoops);
  std::vector<std::thread> loops;
  for (int i = 0; i < kLoops; ++i) {
    loops.emplace_back([&, i, loop_channel = NewChannel()] {
      auto loop_stub = v1::CompatibilityPolicy::NewStub(loop_channel);
      const v1::EvaluateRequest request = Batch(20);
      while (!stop.load()) {
        loop_outcomes[i].push_back(Call(loop_stub.get(), request));
        if (loop_outcomes[i].back().code != grpc::StatusCode::OK) break;
      }
    });
  }
  std::this_thread::sleep_for(20ms);
  const Clock::time_point sigterm = Clock::now();
  const Drain drain = StopAndWaitForTheDrain();
  stop.store(true);
  long_thread.join();
  for (std::thread& loop : loops) loop.join();

  ASSERT_TRUE(working) << "the server never started on the long call";
  std::cout << items << " items: answered " << Millis(long_call.done - sigterm)
            << " ms after SIGTERM, drained after " << Millis(drain.took)
            << " ms\n";
  EXPECT_EQ(drain.code, 0) << server_.Stderr();
  EXPECT_TRUE(long_call.complete)
      << "code " << long_call.code << ": " << long_call.message;
  // Still running after the server's second look, or this proves nothing.
  EXPECT_GT(long_call.done - sigterm, 250ms)
      << "the long call ended too soon: the calibration is off";
  // The others: answered in full, or refused. gRPC 1.51 refuses a call that
  // reaches a server already shutting down on an open connection with
  // CANCELLED (no message; the same before this change), one on a new
  // connection with UNAVAILABLE. A call cut by the force-close fails with
  // UNAVAILABLE "Cancelling all calls" (core Server::CancelAllCalls); the
  // clients have had the GOAWAY for 200 ms by then and send no new calls on
  // those connections, so only a call the server was working on can end so.
  int answered = 0;
  for (const std::vector<Outcome>& outcomes : loop_outcomes) {
    for (const Outcome& outcome : outcomes) {
      if (outcome.code == grpc::StatusCode::OK) {
        EXPECT_TRUE(outcome.complete) << "an OK answer with items missing";
        ++answered;
        continue;
      }
      EXPECT_THAT(outcome.code, ::testing::AnyOf(grpc::StatusCode::CANCELLED,
                                                 grpc::StatusCode::UNAVAILABLE))
          << outcome.message;
      EXPECT_THAT(outcome.message,
                  ::testing::Not(HasSubstr("Cancelling all calls")));
    }
  }
  std::cout << answered << " short calls answered\n";
}

}  // namespace
}  // namespace compatd
