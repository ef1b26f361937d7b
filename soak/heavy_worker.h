#pragma once

// The heavy classes (issue 23): heavy-grpc and heavy-http, kHeavyThreads
// threads each, every thread with one heavy request in flight at a time
// (soak/heavy_requests.h: a scan of ~3 MiB of rendered charts, a plan, a
// lint, large Evaluate batches), so that compatd's heavy lane is busy while
// the light classes' latency is measured. Accepted: OK with a right answer,
// or the lane full (RESOURCE_EXHAUSTED; 429 with Retry-After), after which
// the thread waits as the refusal asks. Anything else fails the run.

#include "soak/common.h"
#include "soak/heavy_requests.h"
#include "soak/http_worker.h"
#include "soak/lanes.h"

namespace compatd::soak {

class HeavyWorker {
 public:
  // `http`: heavy-http (POST /v1/<RPC>), else heavy-grpc.
  HeavyWorker(Env* env, int index, bool http)
      : env_(*env),
        rng_(env->seed * 40503 + static_cast<uint64_t>(index)),
        http_(http),
        client_(env->http_port) {}

  void Run() {
    latency_ = LatencyRecorder(env_.load_start, env_.measure_from);
    cases_ = MakeHeavyCases(env_.facts, kMaxRecvMessageBytes,
                            kMaxHttpBodyBytes - 4096);
    std::discrete_distribution<size_t> pick = PickByWeight(cases_);
    if (!http_) {
      stub_ = v1::CompatibilityPolicy::NewStub(
          NewChannel(env_, "compatd-soak-heavy/1.0", ++g_channel_serial));
    }
    while (!env_.stop.load(std::memory_order_relaxed)) {
      const HeavyCase& c = cases_[pick(rng_)];
      const int retry_after = http_ ? Http(c) : Grpc(c);
      env_.calls.fetch_add(1, std::memory_order_relaxed);
      if (retry_after > 0) {
        SleepUnlessStopped(env_, std::chrono::seconds(retry_after));
      }
    }
  }

  const Tally& tally() const { return tally_; }
  const LatencyRecorder& latency() const { return latency_; }

 private:
  Class cls() const { return http_ ? Class::kHeavyHttp : Class::kHeavyGrpc; }
  LatencyClass latency_class() const {
    return http_ ? LatencyClass::kHeavyHttp : LatencyClass::kHeavyGrpc;
  }

  void Failed(absl::string_view what, const HeavyCase& c,
              absl::string_view problem) {
    env_.failures.Add(
        what, absl::StrCat(kClassNames[static_cast<int>(cls())], " ",
                           RpcName(c.request.rpc), " (", c.request.label,
                           "): ", Shorten(problem, 400)));
  }

  // One call; the seconds to wait before the next (a refusal), or 0.
  int Grpc(const HeavyCase& c) {
    std::unique_ptr<Message> response = NewResponse(c.request.rpc);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kHeavyCallTimeout);
    const Clock::time_point start = Clock::now();
    const grpc::Status status = CallStub(*stub_, &context, c.request.rpc,
                                         *c.request.message, response.get());
    const Clock::time_point end = Clock::now();
    Count(tally_, cls(), RpcName(c.request.rpc), status.error_code());
    if (LaneFull(status)) {
      latency_.CountRefused(latency_class(), start);
      return api::kLaneFullRetryAfterSeconds;
    }
    if (!status.ok()) {
      if (!env_.QuotaCollateral(
              status, absl::StrCat("heavy-grpc ", RpcName(c.request.rpc), ": ",
                                   Shorten(status.error_message())))) {
        Failed("unexpected status code", c,
               absl::StrCat(CodeName(status.error_code()), " \"",
                            Shorten(status.error_message()),
                            "\"; expected OK or RESOURCE_EXHAUSTED (the heavy "
                            "lane is full)"));
      }
      return 0;
    }
    Answered(c, *response, start, end);
    return 0;
  }

  int Http(const HeavyCase& c) {
    const std::string target = absl::StrCat("/v1/", RpcName(c.request.rpc));
    const Clock::time_point start = Clock::now();
    absl::StatusOr<HttpAnswer> answer = client_.Call(
        "POST", target, c.json, {"User-Agent: compatd-soak-heavy/1.0"},
        std::chrono::milliseconds(kHeavyCallTimeout));
    const Clock::time_point end = Clock::now();
    Count(tally_, cls(), target,
          static_cast<grpc::StatusCode>(answer.ok() ? answer->status : 0));
    if (!answer.ok()) {
      Failed("HTTP call failed", c, answer.status().ToString());
      return 0;
    }
    if (LaneFull(*answer)) {
      latency_.CountRefused(latency_class(), start);
      int seconds = api::kLaneFullRetryAfterSeconds;
      (void)absl::SimpleAtoi(answer->Header("retry-after"), &seconds);
      return std::clamp(seconds, 1, 10);
    }
    if (answer->status != 200) {
      Failed("unexpected HTTP status", c,
             absl::StrCat(answer->status, " ", Shorten(answer->body),
                          "; expected 200, or 429 with Retry-After (the heavy "
                          "lane is full)"));
      return 0;
    }
    std::unique_ptr<Message> response = NewResponse(c.request.rpc);
    if (!google::protobuf::util::JsonStringToMessage(answer->body,
                                                     response.get())
             .ok()) {
      Failed("wrong answer", c,
             absl::StrCat("not the response message as JSON: ",
                          Shorten(answer->body)));
      return 0;
    }
    Answered(c, *response, start, end);
    return 0;
  }

  void Answered(const HeavyCase& c, const Message& response,
                Clock::time_point start, Clock::time_point end) {
    latency_.Record(latency_class(), RpcName(c.request.rpc), c.request.label,
                    start, end, /*bound_micros=*/0);
    if (std::string problem = c.request.check(response); !problem.empty()) {
      Failed("wrong answer", c, problem);
    }
  }

  Env& env_;
  Rng rng_;
  const bool http_;
  HttpClient client_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
  std::vector<HeavyCase> cases_;
  Tally tally_;
  LatencyRecorder latency_;
};

}  // namespace compatd::soak
