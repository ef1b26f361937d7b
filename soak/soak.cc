// compatd-soak: a bounded soak test of the real compatd binary.
//
//   compatd-soak --compatd=build/service/compatd --duration=10m
//                [--warmup=60s] [--workers=4] [--seed=N] [--report=FILE]
//
// Starts compatd on free ports of 127.0.0.1 with a catalog file in a fresh
// temporary directory, and for --duration at the same time:
//   - workers: valid calls of every unary RPC, each answer checked (mostly);
//     well-formed-but-wrong requests (random versions, names, flag strings,
//     huge strings, oversized batches); random bytes as request messages to
//     real methods, and unknown methods (grpc::GenericStub);
//   - WatchCatalog streams opened, read, cancelled;
//   - raw TCP connections to both ports sending garbage or closing early;
//   - catalog swaps every --swap-interval (write a temp file, rename it over
//     the catalog, as an editor does): good variants A and B in turn, and
//     now and then a bad one, each checked through GetCatalog;
//   - once a second: GET /metrics and compatd's VmRSS.
// Then SIGTERM, and the verdict. FAIL (exit 1) when compatd died or did not
// exit 0, a call got a code its class does not allow, an answer was wrong,
// a bad catalog replaced a good one or a good one was not picked up, a
// scrape failed, or RSS after the warm-up grew past --max-rss-growth percent
// of the baseline (the median of the last 5 warm-up samples). Growth is what
// RSS holds for a while: the median of every ~30 s window of samples after
// the warm-up, so that a moment's spike (several requests near the 4 MiB
// message limit at once) that is given back does not count. Exit 2 for bad
// flags. The report (also written to --report as markdown) lists calls per
// class, RPC and code, reloads, and RSS.
//
// Accepted codes per class:
//   valid            OK (and the answer's check passes)
//   wrong            OK, INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION,
//                    RESOURCE_EXHAUSTED; exactly RESOURCE_EXHAUSTED over the
//                    message size limit, INVALID_ARGUMENT over the Evaluate
//                    item limit
//   garbage          bytes the request type cannot decode: exactly
//                    INVALID_ARGUMENT "the request is not a valid
//                    compatd.v1.<Request> message: ..." (README.md, "Limits
//                    and bad input": compatd decodes the request itself and
//                    names the message type). Bytes that do decode reach the
//                    handler and get the "wrong" codes; the soak decodes each
//                    message itself, with the protobuf library compatd links,
//                    to know which applies.
//   unknown method   exactly UNIMPLEMENTED
//   WatchCatalog     CANCELLED (the soak cancels) or DEADLINE_EXCEEDED

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/flags.h"
#include "base/status_macros.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "google/protobuf/stubs/logging.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "soak/requests.h"

// tests/integration/compatd_harness.h starts COMPATD_BINARY, a path fixed at
// compile time in the tests; here it is --compatd.
namespace compatd::soak {
const std::string& CompatdBinary();
}  // namespace compatd::soak
#define COMPATD_BINARY ::compatd::soak::CompatdBinary()
#include "tests/integration/compatd_harness.h"
#include "tests/testing/loopback.h"

namespace compatd::soak {
namespace {

using ::compatd::testing::CompatdProcess;
using ::google::protobuf::Message;
using Clock = std::chrono::steady_clock;

constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;
// compatd's limits, passed explicitly so that the expectations match.
constexpr int kMaxRecvMessageBytes = 4 * 1024 * 1024;
constexpr int kMaxEvaluateItems = 1000;
constexpr int kMaxClientSeries = 256;
// At most this many failure examples are kept per kind.
constexpr size_t kExamplesPerKind = 5;

std::string g_compatd_binary;

struct Options {
  std::string compatd;
  std::string catalog = COMPATD_SOAK_DEFAULT_CATALOG;
  absl::Duration duration = absl::Minutes(10);
  absl::Duration warmup = absl::ZeroDuration();  // zero: 10%, at least 5 s
  int seed = 0;                                  // zero: from the clock
  std::string report;
  int workers = 4;
  int max_rss_growth = 10;  // percent
  absl::Duration swap_interval = absl::Milliseconds(200);
  absl::Duration reload_timeout = absl::Seconds(10);
  absl::Duration call_timeout = absl::Seconds(10);
  // Which kinds of load run (--classes); all by default.
  bool valid = true;
  bool wrong = true;
  bool garbage = true;
  bool unknown = true;
  bool watch = true;
  bool transport = true;
  bool swap = true;
};

enum class Class {
  kValid,
  kWrong,
  kGarbageUndecodable,
  kGarbageDecodable,
  kUnknownMethod,
  kWatch,
  kSwapCheck,
};
constexpr int kClassCount = 7;
constexpr std::array<absl::string_view, kClassCount> kClassNames = {
    "valid",
    "wrong",
    "garbage (undecodable)",
    "garbage (decodes)",
    "unknown method",
    "WatchCatalog",
    "GetCatalog (swap checks)"};

std::string CodeName(grpc::StatusCode code) {
  static constexpr std::array<absl::string_view, 17> kNames = {
      "OK",
      "CANCELLED",
      "UNKNOWN",
      "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED",
      "NOT_FOUND",
      "ALREADY_EXISTS",
      "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION",
      "ABORTED",
      "OUT_OF_RANGE",
      "UNIMPLEMENTED",
      "INTERNAL",
      "UNAVAILABLE",
      "DATA_LOSS",
      "UNAUTHENTICATED"};
  const int index = static_cast<int>(code);
  if (index >= 0 && index < static_cast<int>(kNames.size())) {
    return std::string(kNames[static_cast<size_t>(index)]);
  }
  return absl::StrCat("code ", index);
}

std::string Shorten(absl::string_view text, size_t max = 240) {
  if (text.size() <= max) return std::string(text);
  return absl::StrCat(text.substr(0, max), "... (", text.size(), " bytes)");
}

// Calls by class, method and code; one per thread, merged at the end.
using TallyKey = std::tuple<int, std::string, int>;
using Tally = std::map<TallyKey, uint64_t>;

void Count(Tally& tally, Class cls, absl::string_view method,
           grpc::StatusCode code) {
  ++tally[TallyKey(static_cast<int>(cls), std::string(method),
                   static_cast<int>(code))];
}

// Every failure by kind, with the first few examples.
class FailureLog {
 public:
  void Add(absl::string_view kind, std::string detail) {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& entry = entries_[std::string(kind)];
    ++entry.count;
    if (entry.examples.size() < kExamplesPerKind) {
      entry.examples.push_back(std::move(detail));
    }
    total_.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t total() const { return total_.load(std::memory_order_relaxed); }

  struct Entry {
    uint64_t count = 0;
    std::vector<std::string> examples;
  };
  std::map<std::string, Entry> Entries() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
  std::atomic<uint64_t> total_{0};
};

// Shared by every thread of a run.
struct Env {
  Options options;
  CatalogFacts facts;
  std::string catalog_dir;
  std::string catalog_path;
  std::string base_catalog;
  int grpc_port = 0;
  int metrics_port = 0;
  uint64_t seed = 0;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> calls{0};  // unary calls of every class
  FailureLog failures;
};

std::shared_ptr<grpc::Channel> NewChannel(const Env& env,
                                          const std::string& user_agent,
                                          int distinct) {
  grpc::ChannelArguments arguments;
  if (!user_agent.empty()) arguments.SetUserAgentPrefix(user_agent);
  // One TCP connection per channel.
  arguments.SetInt("compatd.soak.channel", distinct);
  arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  arguments.SetMaxSendMessageSize(64 * 1024 * 1024);
  arguments.SetMaxReceiveMessageSize(64 * 1024 * 1024);
  return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", env.grpc_port),
                                   grpc::InsecureChannelCredentials(),
                                   arguments);
}

std::chrono::system_clock::time_point Deadline(absl::Duration timeout) {
  return std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout);
}

size_t Below(Rng& rng, size_t n) {
  return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}

std::atomic<int> g_channel_serial{0};

// ---------------------------------------------------------------------------
// Workers: valid, wrong and garbage calls.

class Worker {
 public:
  Worker(Env* env, int index)
      : env_(*env), rng_(env->seed * 1000003 + static_cast<uint64_t>(index)) {}

  void Run() {
    cases_ = MakeValidCases(env_.facts);
    std::vector<int> weights;
    for (const ValidCase& c : cases_) weights.push_back(c.weight);
    std::discrete_distribution<size_t> pick_case(weights.begin(),
                                                 weights.end());
    responses_.resize(api::kRpcCount);  // indexed by api::Rpc
    for (Rpc rpc : kUnaryRpcs) {
      responses_[static_cast<int>(rpc)] = NewResponse(rpc);
    }
    // 75% valid, 20% wrong, 3.75% garbage messages, 1.25% unknown methods,
    // of the classes that run.
    const Options& o = env_.options;
    std::discrete_distribution<int> pick_class(
        {o.valid ? 75.0 : 0.0, o.wrong ? 20.0 : 0.0, o.garbage ? 3.75 : 0.0,
         o.unknown ? 1.25 : 0.0});
    uint64_t calls_on_channel = 0;
    Connect();
    while (!env_.stop.load(std::memory_order_relaxed)) {
      // A new connection (and User-Agent) now and then.
      if (++calls_on_channel > 3000) {
        Connect();
        calls_on_channel = 0;
      }
      switch (pick_class(rng_)) {
        case 0:
          Valid(cases_[pick_case(rng_)].request);
          break;
        case 1:
          Wrong();
          break;
        case 2:
          Garbage();
          break;
        default:
          UnknownMethod();
          break;
      }
      env_.calls.fetch_add(1, std::memory_order_relaxed);
    }
    cq_.Shutdown();
    void* tag;
    bool ok;
    while (cq_.Next(&tag, &ok)) {
    }
  }

  const Tally& tally() const { return tally_; }

 private:
  void Connect() {
    channel_ = NewChannel(env_, RandomUserAgent(rng_), ++g_channel_serial);
    stub_ = v1::CompatibilityPolicy::NewStub(channel_);
    generic_ = std::make_unique<grpc::GenericStub>(channel_);
  }

  grpc::Status Call(const SoakRequest& request, Message* response) {
    grpc::ClientContext context;
    context.set_deadline(Deadline(env_.options.call_timeout));
    AddRandomIdentity(rng_, &context);
    return CallStub(*stub_, &context, request.rpc, *request.message, response);
  }

  void Unexpected(Class cls, absl::string_view method, absl::string_view label,
                  const grpc::Status& status, absl::string_view expected) {
    env_.failures.Add(
        "unexpected status code",
        absl::StrCat(kClassNames[static_cast<int>(cls)], " ", method, " (",
                     Shorten(label, 300), "): ", CodeName(status.error_code()),
                     " \"", Shorten(status.error_message()), "\"; expected ",
                     expected));
  }

  void Valid(const SoakRequest& request) {
    Message* response = responses_[static_cast<int>(request.rpc)].get();
    const grpc::Status status = Call(request, response);
    const absl::string_view method = RpcName(request.rpc);
    Count(tally_, Class::kValid, method, status.error_code());
    if (!status.ok()) {
      Unexpected(Class::kValid, method, request.label, status, "OK");
      return;
    }
    if (std::string problem = request.check(*response); !problem.empty()) {
      env_.failures.Add(
          "wrong answer",
          absl::StrCat(method, " (", request.label, "): ", problem,
                       "; answer: ", Shorten(response->ShortDebugString())));
    }
  }

  void Wrong() {
    const SoakRequest request =
        RandomWrongRequest(rng_, kMaxRecvMessageBytes, kMaxEvaluateItems);
    Message* response = responses_[static_cast<int>(request.rpc)].get();
    const grpc::Status status = Call(request, response);
    const absl::string_view method = RpcName(request.rpc);
    Count(tally_, Class::kWrong, method, status.error_code());
    const bool accepted = request.exact_code.has_value()
                              ? status.error_code() == *request.exact_code
                              : IsAcceptedForWrongRequest(status.error_code());
    if (!accepted) {
      Unexpected(Class::kWrong, method,
                 absl::StrCat(request.label, ": ",
                              request.message->ShortDebugString()),
                 status,
                 request.exact_code.has_value()
                     ? CodeName(*request.exact_code)
                     : "OK, INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION "
                       "or RESOURCE_EXHAUSTED");
      return;
    }
    if (status.ok() && request.check) {
      if (std::string problem = request.check(*response); !problem.empty()) {
        env_.failures.Add(
            "wrong answer",
            absl::StrCat(method, " (wrong request ",
                         Shorten(request.message->ShortDebugString()),
                         "): ", problem));
      }
    }
  }

  // A unary call through the generic stub on this worker's completion queue
  // (the callback API is not usable under TSan, see bench/CMakeLists.txt).
  grpc::Status GenericCall(const std::string& method,
                           const std::string& bytes) {
    grpc::ClientContext context;
    context.set_deadline(Deadline(env_.options.call_timeout));
    AddRandomIdentity(rng_, &context);
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1);
    std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
        generic_->PrepareUnaryCall(&context, method, request, &cq_);
    call->StartCall();
    grpc::ByteBuffer reply;
    grpc::Status status;
    call->Finish(&reply, &status, call.get());
    void* tag = nullptr;
    bool ok = false;
    if (!cq_.Next(&tag, &ok) || tag != call.get()) {
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          "compatd-soak: completion queue out of step");
    }
    return status;
  }

  void UnknownMethod() {
    const std::string method = RandomUnknownMethod(rng_);
    const grpc::Status status =
        GenericCall(method, RandomGarbageMessage(rng_, Rpc::kGetFeature));
    Count(tally_, Class::kUnknownMethod, "(unknown method)",
          status.error_code());
    if (status.error_code() != grpc::StatusCode::UNIMPLEMENTED) {
      Unexpected(Class::kUnknownMethod, method, "unknown method", status,
                 "UNIMPLEMENTED");
    }
  }

  void Garbage() {
    const Rpc rpc = kUnaryRpcs[Below(rng_, kRpcCount)];
    const std::string bytes = RandomGarbageMessage(rng_, rpc);
    const bool decodes = Decodes(rpc, bytes);
    const grpc::Status status = GenericCall(MethodPath(rpc), bytes);
    const Class cls =
        decodes ? Class::kGarbageDecodable : Class::kGarbageUndecodable;
    Count(tally_, cls, RpcName(rpc), status.error_code());
    const bool accepted =
        decodes
            ? IsAcceptedForWrongRequest(status.error_code())
            : status.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
                  absl::StartsWith(status.error_message(),
                                   "the request is not a valid compatd.v1.");
    if (!accepted) {
      Unexpected(cls, RpcName(rpc),
                 absl::StrCat(bytes.size(), " bytes ",
                              Shorten(absl::CEscape(bytes), 120)),
                 status,
                 decodes ? "a code for a wrong request"
                         : "INVALID_ARGUMENT naming the request type "
                           "(compatd cannot decode it)");
    }
  }

  Env& env_;
  Rng rng_;
  std::vector<ValidCase> cases_;
  std::vector<std::unique_ptr<Message>> responses_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
  std::unique_ptr<grpc::GenericStub> generic_;
  grpc::CompletionQueue cq_;
  Tally tally_;
};

// ---------------------------------------------------------------------------
// WatchCatalog streams: open, read a few messages, cancel (or let the
// deadline end them).

class Watcher {
 public:
  Watcher(Env* env, int index)
      : env_(*env), rng_(env->seed * 7919 + static_cast<uint64_t>(index)) {}

  void Run() {
    auto channel = NewChannel(env_, RandomUserAgent(rng_), ++g_channel_serial);
    auto stub = v1::CompatibilityPolicy::NewStub(channel);
    while (!env_.stop.load()) {
      grpc::ClientContext context;
      context.set_deadline(
          Deadline(absl::Milliseconds(500 + Below(rng_, 3500))));
      AddRandomIdentity(rng_, &context);
      const size_t limit = 1 + Below(rng_, 15);
      std::unique_ptr<grpc::ClientReader<v1::GetCatalogResponse>> reader =
          stub->WatchCatalog(&context, v1::WatchCatalogRequest());
      ++streams_;
      v1::GetCatalogResponse message;
      uint64_t previous = 0;
      size_t read = 0;
      bool cancelled = false;
      while (reader->Read(&message)) {
        ++read;
        ++messages_;
        const std::string& digest = message.digest();
        if (digest != env_.facts.digest_a && digest != env_.facts.digest_b) {
          env_.failures.Add(
              "wrong answer",
              absl::StrCat("WatchCatalog announced catalog ", digest,
                           ", which is neither good variant"));
        }
        if (message.generation() <= previous) {
          env_.failures.Add(
              "wrong answer",
              absl::StrCat("WatchCatalog generation ", message.generation(),
                           " after ", previous, " on the same stream"));
        }
        previous = message.generation();
        if (!cancelled && (read >= limit || env_.stop.load())) {
          context.TryCancel();
          cancelled = true;
        }
      }
      const grpc::Status status = reader->Finish();
      Count(tally_, Class::kWatch, "WatchCatalog", status.error_code());
      if (status.error_code() != grpc::StatusCode::CANCELLED &&
          status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
        env_.failures.Add(
            "unexpected status code",
            absl::StrCat("WatchCatalog stream after ", read,
                         " messages: ", CodeName(status.error_code()), " \"",
                         Shorten(status.error_message()),
                         "\"; expected CANCELLED or DEADLINE_EXCEEDED"));
      }
    }
  }

  const Tally& tally() const { return tally_; }
  uint64_t streams() const { return streams_; }
  uint64_t messages() const { return messages_; }

 private:
  Env& env_;
  Rng rng_;
  Tally tally_;
  uint64_t streams_ = 0;
  uint64_t messages_ = 0;
};

// ---------------------------------------------------------------------------
// Raw TCP garbage to both ports. The only check: the port still accepts.

class TransportGarbage {
 public:
  TransportGarbage(Env* env) : env_(*env), rng_(env->seed * 104729 + 1) {}

  void Run() {
    while (!env_.stop.load()) {
      OneConnection();
      std::this_thread::sleep_for(
          std::chrono::milliseconds(20 + Below(rng_, 60)));
    }
  }

  const std::map<std::string, uint64_t>& counts() const { return counts_; }

 private:
  std::string RandomBytes(size_t max) {
    std::string bytes(1 + Below(rng_, max), '\0');
    for (char& c : bytes) c = static_cast<char>(Below(rng_, 256));
    return bytes;
  }

  void OneConnection() {
    static constexpr absl::string_view kPreface =
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    const bool grpc_port = Below(rng_, 2) == 0;
    const int port = grpc_port ? env_.grpc_port : env_.metrics_port;
    std::string scenario;
    std::string payload;
    bool read_reply = Below(rng_, 2) == 0;
    bool reset = false;
    switch (Below(rng_, 6)) {
      case 0:
        scenario = "connect, close";
        break;
      case 1:
        scenario = "random bytes";
        payload = RandomBytes(4096);
        break;
      case 2:
        if (grpc_port) {
          scenario = "HTTP/2 preface, random frames";
          payload = std::string(kPreface);
          for (size_t n = 1 + Below(rng_, 4); n > 0; --n) {
            const std::string body = RandomBytes(64);
            const char header[9] = {
                0,
                0,
                static_cast<char>(body.size()),
                static_cast<char>(Below(rng_, 12)),   // frame type
                static_cast<char>(Below(rng_, 256)),  // flags
                0,
                0,
                0,
                static_cast<char>(Below(rng_, 8))};  // stream
            payload.append(header, sizeof(header));
            payload.append(body);
          }
        } else {
          scenario = "HTTP request cut short";
          const std::string full =
              "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
          payload = full.substr(0, Below(rng_, full.size()));
        }
        break;
      case 3:
        if (grpc_port) {
          scenario = "half an HTTP/2 preface";
          payload = std::string(kPreface.substr(0, Below(rng_, 24)));
        } else {
          scenario = "huge header";
          payload = absl::StrCat("GET /metrics HTTP/1.1\r\nX-Soak: ",
                                 std::string(20000, 'a'), "\r\n\r\n");
          read_reply = true;
        }
        break;
      case 4:
        if (grpc_port) {
          scenario = "HTTP/1.1 request";
          payload = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        } else {
          scenario = "unknown path";
          payload = absl::StrCat("GET /", Below(rng_, 1000000),
                                 "?x=%zz HTTP/1.0\r\n\r\n");
        }
        read_reply = true;
        break;
      default:
        scenario = "random bytes, then reset";
        payload = RandomBytes(1024);
        reset = true;
        break;
    }
    ++counts_[absl::StrCat(grpc_port ? "gRPC port: " : "metrics port: ",
                           scenario)];
    const int fd = testing::ConnectLoopback(port, timeval{0, 300000});
    if (fd < 0) {
      if (!env_.stop.load()) {
        env_.failures.Add("port closed",
                          absl::StrCat("cannot connect to 127.0.0.1:", port,
                                       ": ", std::strerror(errno)));
      }
      return;
    }
    if (!payload.empty()) {
      (void)send(fd, payload.data(), payload.size(), MSG_NOSIGNAL);
    }
    if (read_reply) {
      char buffer[4096];
      for (int i = 0; i < 16; ++i) {
        if (recv(fd, buffer, sizeof(buffer), 0) <= 0) break;
      }
    }
    if (reset) {
      linger hard{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
    }
    close(fd);
  }

  Env& env_;
  Rng rng_;
  std::map<std::string, uint64_t> counts_;
};

// ---------------------------------------------------------------------------
// Catalog swaps, each checked through GetCatalog.

absl::Time FromTimestamp(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

class Swapper {
 public:
  Swapper(Env* env, uint64_t initial_generation)
      : env_(*env),
        rng_(env->seed * 15485863 + 2),
        variant_a_(VariantA(env->base_catalog)),
        variant_b_(VariantB(env->base_catalog)),
        generation_(initial_generation) {}

  void Run() {
    stub_ = v1::CompatibilityPolicy::NewStub(
        NewChannel(env_, "compatd-soak-swapper/1.0", ++g_channel_serial));
    const auto interval = absl::ToChronoNanoseconds(env_.options.swap_interval);
    auto next = Clock::now() + interval;
    while (!env_.stop.load()) {
      std::this_thread::sleep_until(next);
      next = std::max(next + interval, Clock::now());
      if (env_.stop.load()) break;
      if (Below(rng_, 5) == 0) {
        std::string kind;
        const std::string bytes =
            BadVariant(rng_, env_.base_catalog, ++bad_serial_, &kind);
        ++bad_kinds_[kind];
        const absl::Time before = absl::Now();
        if (WriteThenRename(bytes)) VerifyRejected(before, kind);
      } else {
        const bool b = next_is_b_;
        const auto start = Clock::now();
        if (WriteThenRename(b ? variant_b_ : variant_a_)) {
          VerifyLoaded(b ? env_.facts.digest_b : env_.facts.digest_a, start);
        }
      }
    }
  }

  const Tally& tally() const { return tally_; }
  uint64_t good() const { return good_.load(); }
  uint64_t bad() const { return bad_.load(); }
  uint64_t generation() const { return generation_seen_.load(); }
  const std::vector<double>& load_ms() const { return load_ms_; }
  const std::vector<double>& reject_ms() const { return reject_ms_; }
  const std::map<std::string, uint64_t>& bad_kinds() const {
    return bad_kinds_;
  }
  const std::string& serving_digest() const { return previous_digest_; }

 private:
  bool WriteThenRename(const std::string& bytes) {
    const std::string tmp = env_.catalog_dir + "/.catalog.yaml.soak-tmp";
    bool ok = false;
    if (FILE* f = std::fopen(tmp.c_str(), "wb")) {
      ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
      ok = std::fclose(f) == 0 && ok;
    }
    ok = ok && std::rename(tmp.c_str(), env_.catalog_path.c_str()) == 0;
    if (!ok) {
      env_.failures.Add("catalog swap",
                        absl::StrCat("cannot write and rename ", tmp, ": ",
                                     std::strerror(errno)));
    }
    return ok;
  }

  std::optional<v1::GetCatalogResponse> GetCatalog() {
    grpc::ClientContext context;
    context.set_deadline(Deadline(env_.options.call_timeout));
    v1::GetCatalogResponse response;
    const grpc::Status status =
        stub_->GetCatalog(&context, v1::GetCatalogRequest(), &response);
    Count(tally_, Class::kSwapCheck, "GetCatalog", status.error_code());
    env_.calls.fetch_add(1, std::memory_order_relaxed);
    if (!status.ok()) {
      env_.failures.Add(
          "unexpected status code",
          absl::StrCat(
              "GetCatalog (swap check): ", CodeName(status.error_code()), " \"",
              Shorten(status.error_message()), "\"; expected OK"));
      return std::nullopt;
    }
    return response;
  }

  void VerifyLoaded(const std::string& digest, Clock::time_point start) {
    const auto deadline =
        start + absl::ToChronoNanoseconds(env_.options.reload_timeout);
    while (true) {
      std::optional<v1::GetCatalogResponse> r = GetCatalog();
      if (r.has_value() && r->digest() == digest) {
        if (r->generation() != generation_ + 1) {
          env_.failures.Add(
              "catalog swap",
              absl::StrCat("a good catalog was published as generation ",
                           r->generation(), " after generation ", generation_,
                           " (want +1)"));
        }
        load_ms_.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start)
                .count());
        Settle(*r);
        ++good_;
        return;
      }
      if (r.has_value() && r->digest() != previous_digest_) {
        env_.failures.Add(
            "catalog swap",
            absl::StrCat("while waiting for ", digest, ", GetCatalog reports ",
                         r->digest(), ", neither it nor the previous ",
                         previous_digest_));
      }
      if (Clock::now() > deadline) {
        env_.failures.Add(
            "catalog swap",
            absl::StrCat("good catalog ", digest, " not served within ",
                         absl::FormatDuration(env_.options.reload_timeout),
                         " of its rename"));
        if (r.has_value()) Settle(*r);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  // The catalog now serving, as GetCatalog reports it.
  void Settle(const v1::GetCatalogResponse& r) {
    generation_ = r.generation();
    generation_seen_.store(generation_);
    previous_digest_ = r.digest();
    next_is_b_ = previous_digest_ != env_.facts.digest_b;
  }

  void VerifyRejected(absl::Time before, const std::string& kind) {
    const auto start = Clock::now();
    const auto deadline =
        start + absl::ToChronoNanoseconds(env_.options.reload_timeout);
    while (true) {
      std::optional<v1::GetCatalogResponse> r = GetCatalog();
      if (r.has_value() &&
          (r->digest() != previous_digest_ || r->generation() != generation_)) {
        env_.failures.Add(
            "bad catalog replaced a good one",
            absl::StrCat("after a bad catalog (", kind,
                         "), GetCatalog reports generation ", r->generation(),
                         " digest ", r->digest(),
                         "; still serving should be "
                         "generation ",
                         generation_, " digest ", previous_digest_));
        Settle(*r);
        return;
      }
      if (r.has_value() && !r->last_error().empty() &&
          FromTimestamp(r->last_error_at()) >= before - absl::Milliseconds(1)) {
        reject_ms_.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start)
                .count());
        ++bad_;
        return;
      }
      if (Clock::now() > deadline) {
        env_.failures.Add(
            "catalog swap",
            absl::StrCat("bad catalog (", kind, ") not reported by GetCatalog ",
                         "last_error within ",
                         absl::FormatDuration(env_.options.reload_timeout)));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  Env& env_;
  Rng rng_;
  const std::string variant_a_;
  const std::string variant_b_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
  uint64_t generation_;
  std::string previous_digest_ = env_.facts.digest_a;
  bool next_is_b_ = true;
  uint64_t bad_serial_ = 0;
  std::atomic<uint64_t> good_{0};
  std::atomic<uint64_t> bad_{0};
  std::atomic<uint64_t> generation_seen_{0};
  std::vector<double> load_ms_;
  std::vector<double> reject_ms_;
  std::map<std::string, uint64_t> bad_kinds_;
  Tally tally_;
};

// ---------------------------------------------------------------------------
// Report helpers

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index =
      std::min(values.size() - 1,
               static_cast<size_t>(q * static_cast<double>(values.size())));
  return values[index];
}

double MiB(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

struct RssSample {
  double seconds;
  int64_t bytes;
};

// Sums of the samples of `name` matching `labels`.
double SumOf(const std::vector<testing::Sample>& samples,
             absl::string_view name,
             const std::map<std::string, std::string>& labels = {}) {
  double sum = 0;
  for (const testing::Sample& s : testing::Select(samples, name, labels)) {
    sum += s.value;
  }
  return sum;
}

// ---------------------------------------------------------------------------
// The run

constexpr char kUsage[] =
    "compatd-soak: a bounded soak test of the real compatd binary on "
    "127.0.0.1: mixed valid, wrong and garbage load, WatchCatalog streams, "
    "raw TCP garbage, catalog swaps (good and bad) and /metrics scrapes, "
    "while compatd's RSS is sampled. Exit 0 PASS, 1 FAIL, 2 bad flags.\n\n"
    "Usage:\n"
    "  compatd-soak --compatd=PATH [--duration=10m] [--warmup=60s] "
    "[--workers=4]\n"
    "               [--seed=N] [--report=FILE]\n\n"
    "Flags:\n";

class Soak {
 public:
  explicit Soak(Options options) { env_.options = std::move(options); }

  int Run() {
    const Options& o = env_.options;
    env_.seed = o.seed != 0
                    ? static_cast<uint64_t>(o.seed)
                    : static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())) %
                          1000000007;
    if (absl::Status s = Setup(); !s.ok()) {
      std::cerr << "compatd-soak: setup failed: " << s.message() << "\n";
      return kExitFail;
    }
    std::cout << absl::StrFormat(
                     "compatd-soak: %s (pid %d) on 127.0.0.1:%d, metrics :%d; "
                     "catalog %s; "
                     "%s with %s warm-up, %d workers, seed %d\n",
                     o.compatd, compatd_.pid(), env_.grpc_port,
                     env_.metrics_port, env_.catalog_path,
                     absl::FormatDuration(o.duration),
                     absl::FormatDuration(o.warmup), o.workers, env_.seed)
              << std::flush;
    Load();
    Finish();
    const std::string report = Report();
    std::cout << "\n" << report << std::flush;
    if (!o.report.empty()) {
      std::ofstream out(o.report, std::ios::trunc);
      out << report;
      if (!out) {
        std::cerr << "compatd-soak: cannot write " << o.report << "\n";
        return kExitFail;
      }
    }
    return Passed() ? 0 : kExitFail;
  }

 private:
  absl::Status Setup() {
    const Options& o = env_.options;
    absl::StatusOr<std::string> base = testing::ReadFile(o.catalog);
    if (!base.ok()) return base.status();
    env_.base_catalog = *std::move(base);
    if (env_.base_catalog.find("\ncluster:") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          o.catalog, " has a cluster section; variant B adds its own"));
    }
    if (dir_.path().empty()) {
      return absl::InternalError("cannot make a temporary directory");
    }
    env_.catalog_dir = dir_.path() + "/catalog";
    std::filesystem::create_directory(env_.catalog_dir);
    env_.catalog_path = env_.catalog_dir + "/catalog.yaml";
    const std::string a = VariantA(env_.base_catalog);
    const std::string b = VariantB(env_.base_catalog);
    env_.facts.digest_a = CatalogDigest(a);
    env_.facts.digest_b = CatalogDigest(b);
    env_.facts.max_client_series = kMaxClientSeries;
    // Both variants must be valid, or every check below is moot.
    const std::string b_path = dir_.path() + "/variant-b.yaml";
    if (!testing::WriteFile(env_.catalog_path, a) ||
        !testing::WriteFile(b_path, b)) {
      return absl::InternalError(absl::StrCat("cannot write in ", dir_.path()));
    }
    for (const std::string& path : {env_.catalog_path, b_path}) {
      const testing::RunResult check =
          testing::RunCompatd(o.compatd, {"--check-catalog=" + path});
      if (check.exit_code != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("compatd --check-catalog=", path, " exited ",
                         check.exit_code, ":\n", check.out, check.err));
      }
    }
    COMPATD_RETURN_IF_ERROR(compatd_.Start(
        {"--catalog=" + env_.catalog_path,
         absl::StrCat("--max-recv-message-bytes=", kMaxRecvMessageBytes),
         absl::StrCat("--max-evaluate-items=", kMaxEvaluateItems),
         absl::StrCat("--max-client-series=", kMaxClientSeries)}));
    env_.grpc_port = compatd_.grpc_port();
    env_.metrics_port = compatd_.metrics_port();
    auto stub = v1::CompatibilityPolicy::NewStub(compatd_.NewChannel());
    grpc::ClientContext context;
    context.set_deadline(Deadline(o.call_timeout));
    v1::GetCatalogResponse catalog;
    const grpc::Status status =
        stub->GetCatalog(&context, v1::GetCatalogRequest(), &catalog);
    if (!status.ok()) {
      return absl::UnavailableError(
          absl::StrCat("GetCatalog: ", status.error_message()));
    }
    if (catalog.digest() != env_.facts.digest_a) {
      return absl::InternalError(absl::StrCat(
          "compatd serves digest ", catalog.digest(), ", the soak computed ",
          env_.facts.digest_a, " for the same bytes"));
    }
    env_.facts.features = catalog.counts().features();
    initial_generation_ = catalog.generation();
    return absl::OkStatus();
  }

  void Load() {
    const Options& o = env_.options;
    if (o.valid || o.wrong || o.garbage || o.unknown) {
      for (int i = 0; i < o.workers; ++i) {
        workers_.push_back(std::make_unique<Worker>(&env_, i));
      }
    }
    if (o.watch) {
      for (int i = 0; i < 2; ++i) {
        watchers_.push_back(std::make_unique<Watcher>(&env_, i));
      }
    }
    transport_ = std::make_unique<TransportGarbage>(&env_);
    swapper_ = std::make_unique<Swapper>(&env_, initial_generation_);
    start_ = Clock::now();
    std::vector<std::thread> threads;
    for (auto& w : workers_) threads.emplace_back([&w] { w->Run(); });
    for (auto& w : watchers_) threads.emplace_back([&w] { w->Run(); });
    if (o.transport) threads.emplace_back([this] { transport_->Run(); });
    if (o.swap) threads.emplace_back([this] { swapper_->Run(); });

    const double duration = absl::ToDoubleSeconds(o.duration);
    const double warmup = absl::ToDoubleSeconds(o.warmup);
    const int progress_every = duration >= 120 ? 30 : 5;
    uint64_t calls_at_last_progress = 0;
    double last_progress = 0;
    for (int tick = 0;; ++tick) {
      std::this_thread::sleep_until(start_ + std::chrono::seconds(tick));
      const double t = Seconds();
      // A slow scrape makes ticks late: skip the ones already past.
      tick = std::max(tick, static_cast<int>(t));
      if (t >= duration) break;
      absl::StatusOr<int64_t> rss = testing::VmRssBytes(compatd_.pid());
      if (!rss.ok()) {
        // A process that exited has no VmRSS (a zombie) or no /proc entry.
        died_ = true;
        env_.failures.Add("compatd died",
                          absl::StrCat("at ", absl::StrFormat("%.0f", t),
                                       " s: ", rss.status().message()));
        break;
      }
      rss_.push_back({t, *rss});
      Scrape(/*final=*/false);
      if (t - last_progress >= progress_every) {
        const uint64_t calls = env_.calls.load();
        std::cout << absl::StrFormat(
                         "[%4.0fs] %s calls %d (%.0f/s), failures %d, RSS "
                         "%.1f MiB, catalog generation %d (%d good, %d bad "
                         "swaps)\n",
                         t, t < warmup ? "warm-up" : "soak   ", calls,
                         static_cast<double>(calls - calls_at_last_progress) /
                             (t - last_progress),
                         env_.failures.total(), MiB(*rss),
                         swapper_->generation(), swapper_->good(),
                         swapper_->bad())
                  << std::flush;
        calls_at_last_progress = calls;
        last_progress = t;
      }
    }
    env_.stop.store(true);
    load_seconds_ = Seconds();
    for (std::thread& thread : threads) thread.join();
  }

  double Seconds() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }

  void Scrape(bool final) {
    ++scrapes_;
    absl::StatusOr<testing::HttpReply> reply =
        testing::HttpGet(env_.metrics_port, "/metrics");
    std::string problem;
    if (!reply.ok()) {
      problem = std::string(reply.status().message());
    } else if (reply->status != 200) {
      problem = absl::StrCat("status ", reply->status);
    } else if (reply->body.find("\ncompatd_catalog_generation ") ==
               std::string::npos) {
      problem = "no compatd_catalog_generation sample";
    } else {
      absl::StatusOr<std::vector<testing::Sample>> samples =
          testing::ParseExposition(reply->body);
      if (!samples.ok()) {
        problem = absl::StrCat("unparsable: ", samples.status().message());
      } else if (final) {
        final_samples_ = *std::move(samples);
        final_scrape_ok_ = true;
      }
    }
    if (!problem.empty()) {
      ++scrape_failures_;
      env_.failures.Add("metrics scrape",
                        absl::StrCat(final ? "final " : "",
                                     "GET /metrics: ", Shorten(problem)));
    }
  }

  // started - handled over every method of the final scrape.
  double ServerCallsOpen() const {
    return SumOf(final_samples_, "grpc_server_started_total") -
           SumOf(final_samples_, "grpc_server_handled_total");
  }

  void Finish() {
    if (!died_) {
      // Every call is over on the client; the server's counters follow
      // within moments (a cancelled stream finishes asynchronously). A call
      // that never finishes is a leak.
      Scrape(/*final=*/true);
      const auto settle = Clock::now() + std::chrono::seconds(5);
      while (final_scrape_ok_ && ServerCallsOpen() != 0 &&
             Clock::now() < settle) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        Scrape(/*final=*/true);
      }
      if (final_scrape_ok_) {
        auto reloads = [&](const char* result) {
          return static_cast<uint64_t>(SumOf(final_samples_,
                                             "compatd_catalog_reloads_total",
                                             {{"result", result}}));
        };
        loaded_ = reloads("loaded");
        unchanged_ = reloads("unchanged");
        rejected_ = reloads("rejected");
        final_generation_ = static_cast<uint64_t>(
            SumOf(final_samples_, "compatd_catalog_generation"));
        server_in_flight_ = ServerCallsOpen();
        for (const testing::Sample& started :
             testing::Select(final_samples_, "grpc_server_started_total")) {
          const std::string method = started.labels.count("grpc_method")
                                         ? started.labels.at("grpc_method")
                                         : "?";
          const double handled =
              SumOf(final_samples_, "grpc_server_handled_total",
                    {{"grpc_method", method}});
          if (started.value != handled) {
            absl::StrAppendFormat(&in_flight_detail_, " %s %.0f-%.0f", method,
                                  started.value, handled);
          }
        }
        if (server_in_flight_ != 0) {
          env_.failures.Add(
              "calls never finished",
              absl::StrFormat("5 s after the load stopped, "
                              "grpc_server_started_total - "
                              "grpc_server_handled_total is %.0f (started - "
                              "handled by method:%s)",
                              server_in_flight_, in_flight_detail_));
        }
        if (loaded_ != swapper_->good()) {
          env_.failures.Add(
              "catalog swap",
              absl::StrCat("compatd_catalog_reloads_total{result=\"loaded\"} ",
                           loaded_, " but ", swapper_->good(),
                           " good catalogs were swapped in"));
        }
        if (rejected_ < swapper_->bad()) {
          env_.failures.Add(
              "catalog swap",
              absl::StrCat(
                  "compatd_catalog_reloads_total{result=\"rejected\"} ",
                  rejected_, " but ", swapper_->bad(),
                  " bad catalogs were swapped in"));
        }
        if (final_generation_ != initial_generation_ + loaded_) {
          env_.failures.Add(
              "catalog swap",
              absl::StrCat("compatd_catalog_generation ", final_generation_,
                           " after ", loaded_, " reloads from generation ",
                           initial_generation_));
        }
      }
    }
    const auto stop_start = Clock::now();
    exit_code_ = compatd_.Stop();
    stop_seconds_ =
        std::chrono::duration<double>(Clock::now() - stop_start).count();
    if (!exit_code_.has_value()) {
      env_.failures.Add("compatd exit",
                        "no exit within 10 s of SIGTERM (killed)");
    } else if (*exit_code_ != 0) {
      env_.failures.Add("compatd exit",
                        absl::StrCat("exit code ", *exit_code_,
                                     *exit_code_ > 128 ? " (a signal)" : ""));
    }
    if (!exit_code_.has_value() || *exit_code_ != 0) {
      const std::string err = compatd_.Stderr();
      stderr_tail_ = err.substr(err.size() > 4000 ? err.size() - 4000 : 0);
    }
    JudgeRss();
  }

  void JudgeRss() {
    const double warmup = absl::ToDoubleSeconds(env_.options.warmup);
    std::vector<int64_t> tail;
    for (const RssSample& s : rss_) {
      if (s.seconds < warmup) tail.push_back(s.bytes);
    }
    if (tail.size() > 5) tail.erase(tail.begin(), tail.end() - 5);
    if (tail.empty() || died_) return;
    std::sort(tail.begin(), tail.end());
    baseline_ = tail[tail.size() / 2];
    std::vector<RssSample> after;
    for (const RssSample& s : rss_) {
      if (s.seconds < warmup) continue;
      after.push_back(s);
      ++rss_after_warmup_;
      if (s.bytes > max_after_warmup_) {
        max_after_warmup_ = s.bytes;
        max_at_ = s.seconds;
      }
    }
    // The sustained RSS: the median of each window of kWindow samples.
    constexpr size_t kWindow = 31;
    for (size_t i = 0; i < after.size(); ++i) {
      const size_t begin = i >= kWindow / 2 ? i - kWindow / 2 : 0;
      const size_t end = std::min(after.size(), i + kWindow / 2 + 1);
      std::vector<int64_t> window;
      for (size_t j = begin; j < end; ++j) window.push_back(after[j].bytes);
      std::nth_element(window.begin(), window.begin() + window.size() / 2,
                       window.end());
      const int64_t median = window[window.size() / 2];
      if (median > sustained_max_) {
        sustained_max_ = median;
        sustained_at_ = after[i].seconds;
      }
    }
    final_rss_ = rss_.back().bytes;
    const double limit =
        static_cast<double>(baseline_) *
        (1.0 + static_cast<double>(env_.options.max_rss_growth) / 100.0);
    if (static_cast<double>(sustained_max_) > limit) {
      env_.failures.Add(
          "RSS growth",
          absl::StrFormat("sustained %.1f MiB around %.0f s (median of ~30 s), "
                          "over %.1f MiB (baseline %.1f MiB + %d%%)",
                          MiB(sustained_max_), sustained_at_, limit / (1 << 20),
                          MiB(baseline_), env_.options.max_rss_growth));
    }
  }

  bool Passed() const { return env_.failures.total() == 0; }

  std::string Report() const {
    const Options& o = env_.options;
    std::string out;
    absl::StrAppend(&out, "# compatd soak: ", Passed() ? "PASS" : "FAIL",
                    "\n\n");
    absl::StrAppendFormat(
        &out,
        "compatd `%s`, %s of load (%.0f s measured) with a %s warm-up, %d "
        "workers, seed %d.\n\n",
        o.compatd, absl::FormatDuration(o.duration), load_seconds_,
        absl::FormatDuration(o.warmup), o.workers, env_.seed);

    // Calls.
    Tally tally;
    auto merge = [&tally](const Tally& t) {
      for (const auto& [key, n] : t) tally[key] += n;
    };
    for (const auto& w : workers_) merge(w->tally());
    for (const auto& w : watchers_) merge(w->tally());
    merge(swapper_->tally());
    std::map<std::pair<int, int>, uint64_t> by_class_code;
    std::map<std::pair<int, std::string>, uint64_t> by_class_method;
    uint64_t unary = 0;
    for (const auto& [key, n] : tally) {
      const auto& [cls, method, code] = key;
      by_class_code[{cls, code}] += n;
      by_class_method[{cls, method}] += n;
      if (cls != static_cast<int>(Class::kWatch)) unary += n;
    }
    absl::StrAppendFormat(
        &out, "## Calls\n\n%d unary calls in %.0f s: **%.0f calls/s**.\n\n",
        unary, load_seconds_,
        load_seconds_ > 0 ? static_cast<double>(unary) / load_seconds_ : 0.0);
    absl::StrAppend(&out, "| class | code | calls |\n|---|---|---:|\n");
    for (const auto& [key, n] : by_class_code) {
      absl::StrAppend(&out, "| ", kClassNames[static_cast<size_t>(key.first)],
                      " | ",
                      CodeName(static_cast<grpc::StatusCode>(key.second)),
                      " | ", n, " |\n");
    }
    absl::StrAppend(&out,
                    "\nBy RPC:\n\n| class | RPC | calls |\n|---|---|---:|\n");
    for (const auto& [key, n] : by_class_method) {
      absl::StrAppend(&out, "| ", kClassNames[static_cast<size_t>(key.first)],
                      " | ", key.second, " | ", n, " |\n");
    }
    uint64_t streams = 0;
    uint64_t messages = 0;
    for (const auto& w : watchers_) {
      streams += w->streams();
      messages += w->messages();
    }
    absl::StrAppendFormat(&out,
                          "\nWatchCatalog: %d streams, %d messages read.\n\n",
                          streams, messages);
    absl::StrAppend(&out,
                    "Raw TCP connections (no check but that the ports "
                    "keep accepting):\n\n| scenario | connections |\n"
                    "|---|---:|\n");
    for (const auto& [scenario, n] : transport_->counts()) {
      absl::StrAppend(&out, "| ", scenario, " | ", n, " |\n");
    }

    // Reloads.
    absl::StrAppend(&out, "\n## Catalog reloads\n\n");
    absl::StrAppendFormat(
        &out,
        "Swaps every %s: %d good (rename to GetCatalog serving it: p50 %.1f "
        "ms, max %.1f ms), %d bad (rename to GetCatalog reporting the "
        "rejection: p50 %.1f ms, max %.1f ms).\n\n",
        absl::FormatDuration(o.swap_interval), swapper_->good(),
        Percentile(swapper_->load_ms(), 0.5),
        Percentile(swapper_->load_ms(), 1.0), swapper_->bad(),
        Percentile(swapper_->reject_ms(), 0.5),
        Percentile(swapper_->reject_ms(), 1.0));
    std::vector<std::string> kinds;
    for (const auto& [kind, n] : swapper_->bad_kinds()) {
      kinds.push_back(absl::StrCat(kind, " ", n));
    }
    absl::StrAppend(&out, "Bad catalogs: ", absl::StrJoin(kinds, ", "),
                    ".\n\n");
    if (final_scrape_ok_) {
      absl::StrAppendFormat(
          &out,
          "compatd_catalog_reloads_total: loaded %d, unchanged %d, rejected "
          "%d; compatd_catalog_generation %d (from %d).\n\n",
          loaded_, unchanged_, rejected_, final_generation_,
          initial_generation_);
      std::map<std::string, double> server_codes;
      for (const testing::Sample& s :
           testing::Select(final_samples_, "grpc_server_handled_total")) {
        server_codes[s.labels.count("grpc_code") ? s.labels.at("grpc_code")
                                                 : "?"] += s.value;
      }
      std::vector<std::string> codes;
      for (const auto& [code, n] : server_codes) {
        if (n > 0) codes.push_back(absl::StrFormat("%s %.0f", code, n));
      }
      absl::StrAppendFormat(
          &out,
          "Server side, grpc_server_handled_total by code: %s; "
          "grpc_server_started_total - handled once the load stopped: "
          "%.0f%s.\n\n",
          absl::StrJoin(codes, ", "), server_in_flight_, in_flight_detail_);
    }
    absl::StrAppendFormat(&out, "/metrics scrapes: %d, failed %d.\n\n",
                          scrapes_, scrape_failures_);

    // RSS.
    absl::StrAppend(&out,
                    "## Memory (compatd VmRSS, sampled every second)\n\n");
    if (baseline_ > 0) {
      absl::StrAppendFormat(
          &out,
          "Baseline (median of the last 5 warm-up samples) %.1f MiB; "
          "sustained max after warm-up (median of ~30 s) %.1f MiB around %.0f "
          "s (%+.1f%%, limit +%d%%); momentary max %.1f MiB at %.0f s "
          "(%+.1f%%); final %.1f MiB (%+.1f%%); %d samples after "
          "warm-up.\n\n",
          MiB(baseline_), MiB(sustained_max_), sustained_at_,
          100.0 * (static_cast<double>(sustained_max_) /
                       static_cast<double>(baseline_) -
                   1),
          o.max_rss_growth, MiB(max_after_warmup_), max_at_,
          100.0 * (static_cast<double>(max_after_warmup_) /
                       static_cast<double>(baseline_) -
                   1),
          MiB(final_rss_),
          100.0 * (static_cast<double>(final_rss_) /
                       static_cast<double>(baseline_) -
                   1),
          rss_after_warmup_);
    }
    if (!rss_.empty()) {
      const size_t step = std::max<size_t>(1, rss_.size() / 20);
      std::vector<std::string> series;
      for (size_t i = 0; i < rss_.size(); i += step) {
        series.push_back(
            absl::StrFormat("%.0fs %.1f", rss_[i].seconds, MiB(rss_[i].bytes)));
      }
      if ((rss_.size() - 1) % step != 0) {
        series.push_back(absl::StrFormat("%.0fs %.1f", rss_.back().seconds,
                                         MiB(rss_.back().bytes)));
      }
      absl::StrAppend(&out, "Series (MiB): ", absl::StrJoin(series, ", "),
                      ".\n\n");
    }

    // Shutdown and verdict.
    absl::StrAppend(&out, "## Verdict\n\n");
    if (exit_code_.has_value()) {
      absl::StrAppendFormat(&out, "SIGTERM: exit code %d after %.2f s.\n\n",
                            *exit_code_, stop_seconds_);
    } else {
      absl::StrAppend(&out, "SIGTERM: no exit within 10 s.\n\n");
    }
    const auto entries = env_.failures.Entries();
    if (entries.empty()) {
      absl::StrAppend(&out,
                      "**PASS**: no crash, no unexpected status code, every "
                      "checked answer right, every good catalog picked up and "
                      "no bad one served, every scrape answered, RSS within "
                      "the limit, clean exit.\n");
    } else {
      absl::StrAppendFormat(&out, "**FAIL**: %d failures.\n\n",
                            env_.failures.total());
      for (const auto& [kind, entry] : entries) {
        absl::StrAppend(&out, "- ", kind, ": ", entry.count, "\n");
        for (const std::string& example : entry.examples) {
          absl::StrAppend(&out, "  - ", example, "\n");
        }
      }
      if (!stderr_tail_.empty()) {
        absl::StrAppend(&out, "\ncompatd's stderr (tail):\n\n```\n",
                        stderr_tail_, "\n```\n");
      }
    }
    return out;
  }

  Env env_;
  testing::TempDir dir_;
  CompatdProcess compatd_;
  uint64_t initial_generation_ = 0;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Watcher>> watchers_;
  std::unique_ptr<TransportGarbage> transport_;
  std::unique_ptr<Swapper> swapper_;
  Clock::time_point start_;
  double load_seconds_ = 0;
  bool died_ = false;
  std::vector<RssSample> rss_;
  int64_t baseline_ = 0;
  int64_t max_after_warmup_ = 0;
  double max_at_ = 0;
  int64_t sustained_max_ = 0;
  double sustained_at_ = 0;
  int64_t final_rss_ = 0;
  int rss_after_warmup_ = 0;
  uint64_t scrapes_ = 0;
  uint64_t scrape_failures_ = 0;
  bool final_scrape_ok_ = false;
  std::vector<testing::Sample> final_samples_;
  uint64_t loaded_ = 0;
  uint64_t unchanged_ = 0;
  uint64_t rejected_ = 0;
  uint64_t final_generation_ = 0;
  double server_in_flight_ = 0;
  std::string in_flight_detail_;
  std::optional<int> exit_code_;
  double stop_seconds_ = 0;
  std::string stderr_tail_;
};

int Main(int argc, char** argv) {
  Options options;
  bool help = false;
  base::FlagTable flags;
  flags.AddString("compatd", &options.compatd, "the compatd binary to soak");
  flags.AddString("catalog", &options.catalog,
                  "a valid catalog without a cluster section; the soak "
                  "swaps it, a variant of it and bad catalogs");
  flags.AddDuration("duration", &options.duration,
                    "how long the load runs (warm-up included)");
  flags.AddDuration("warmup", &options.warmup,
                    "RSS before this is the warm-up (0: 10% of --duration, at "
                    "least 5s); the baseline is the median of its last 5 "
                    "samples");
  flags.AddInt("workers", &options.workers, 1, 64,
               "threads making valid, wrong and garbage calls");
  flags.AddInt("seed", &options.seed, 0, 2000000000,
               "random seed (0: from the clock; printed either way)");
  flags.AddString("report", &options.report,
                  "also write the report (markdown) to this file");
  flags.AddInt("max-rss-growth", &options.max_rss_growth, 0, 10000,
               "FAIL when RSS after the warm-up, held for ~30 s, exceeds the "
               "baseline by more than this many percent");
  flags.AddDuration("swap-interval", &options.swap_interval,
                    "time between catalog swaps");
  flags.AddDuration("reload-timeout", &options.reload_timeout,
                    "how long a swapped catalog may take to be served or "
                    "rejected");
  flags.AddDuration("call-timeout", &options.call_timeout,
                    "deadline of each unary call");
  std::string classes = "all";
  flags.AddString("classes", &classes,
                  "the load that runs: all, or some of valid, wrong, garbage, "
                  "unknown, watch, transport, swap (comma-separated)");
  flags.AddBool("help", &help, "print this help and exit");
  std::vector<std::string> positional;
  if (absl::Status s = flags.Parse(argc, argv, 1, &positional); !s.ok()) {
    std::cerr << "compatd-soak: " << s.message() << "\n";
    return kExitUsage;
  }
  if (help) {
    std::cout << kUsage << flags.Usage();
    return 0;
  }
  auto usage_error = [](absl::string_view message) {
    std::cerr << "compatd-soak: " << message << " (see --help)\n";
    return kExitUsage;
  };
  if (!positional.empty()) {
    return usage_error(
        absl::StrCat("unexpected argument \"", positional[0], "\""));
  }
  if (classes != "all") {
    options.valid = options.wrong = options.garbage = options.unknown = false;
    options.watch = options.transport = options.swap = false;
    for (absl::string_view name : absl::StrSplit(classes, ',')) {
      bool* flag = name == "valid"       ? &options.valid
                   : name == "wrong"     ? &options.wrong
                   : name == "garbage"   ? &options.garbage
                   : name == "unknown"   ? &options.unknown
                   : name == "watch"     ? &options.watch
                   : name == "transport" ? &options.transport
                   : name == "swap"      ? &options.swap
                                         : nullptr;
      if (flag == nullptr) {
        return usage_error(absl::StrCat(
            "--classes: unknown class \"", name,
            "\"; accepted: all, valid, wrong, garbage, unknown, watch, "
            "transport, swap"));
      }
      *flag = true;
    }
  }
  if (options.compatd.empty()) {
    return usage_error("--compatd=PATH is required");
  }
  if (access(options.compatd.c_str(), X_OK) != 0) {
    return usage_error(absl::StrCat("--compatd: \"", options.compatd,
                                    "\" is not an executable file"));
  }
  if (access(options.catalog.c_str(), R_OK) != 0) {
    return usage_error(
        absl::StrCat("--catalog: cannot read \"", options.catalog, "\""));
  }
  if (options.warmup == absl::ZeroDuration()) {
    options.warmup = std::max(absl::Seconds(5), options.duration / 10);
  }
  if (options.warmup < absl::Seconds(5)) {
    return usage_error(
        "--warmup must be at least 5s (the baseline is the "
        "median of its last 5 one-second samples)");
  }
  if (options.duration < options.warmup + absl::Seconds(5)) {
    return usage_error(absl::StrCat("--duration must exceed --warmup (",
                                    absl::FormatDuration(options.warmup),
                                    ") by at least 5s"));
  }
  if (options.swap_interval < absl::Milliseconds(10)) {
    return usage_error("--swap-interval must be at least 10ms");
  }
  if (options.reload_timeout < absl::Seconds(1) ||
      options.call_timeout < absl::Seconds(1)) {
    return usage_error(
        "--reload-timeout and --call-timeout must be at least "
        "1s");
  }
  g_compatd_binary = options.compatd;
  // Garbage requests make protobuf log every parse failure (invalid UTF-8);
  // the soak judges the status codes instead.
  google::protobuf::SetLogHandler(nullptr);
  Soak soak(std::move(options));
  return soak.Run();
}

}  // namespace

const std::string& CompatdBinary() { return g_compatd_binary; }

}  // namespace compatd::soak

int main(int argc, char** argv) { return compatd::soak::Main(argc, argv); }
