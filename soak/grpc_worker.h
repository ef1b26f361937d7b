#pragma once

// gRPC workers: valid, wrong and garbage calls, unknown methods.

#include "soak/common.h"
#include "soak/lanes.h"

namespace compatd::soak {

// ---------------------------------------------------------------------------
// Workers: valid, wrong and garbage calls.

// One worker per lane (soak/lanes.h): the light one sends the requests of
// the light lane and the heavy one those of the heavy lane, each drawn from
// the same mix (a request of the other lane is drawn again), so that a
// light call is never held up behind one of its own thread's heavy calls
// and the light workers keep their pace while the heavy lane is busy. A
// heavy-lane call refused because the lane is full (RESOURCE_EXHAUSTED) is
// accepted in every class, and its worker waits
// api::kLaneFullRetryAfterSeconds before its next call, as the refusal asks.
class Worker {
 public:
  Worker(Env* env, int index, Lane lane)
      : env_(*env),
        rng_(env->seed * 1000003 + static_cast<uint64_t>(index)),
        lane_(lane) {}

  void Run() {
    latency_ = LatencyRecorder(env_.load_start, env_.measure_from);
    cases_ = MakeValidCases(env_.facts);
    for (const ValidCase& c : cases_) lanes_.push_back(GrpcLane(c.request));
    std::discrete_distribution<size_t> pick_case = PickByWeight(cases_);
    responses_.resize(api::kRpcCount);  // indexed by api::Rpc
    for (Rpc rpc : kUnaryRpcs) {
      responses_[static_cast<int>(rpc)] = NewResponse(rpc);
    }
    // 75% valid, 20% wrong, 3.75% garbage messages, 1.25% unknown methods
    // (light: gRPC answers them), of the classes that run.
    const Options& o = env_.options;
    const bool light = lane_ == Lane::kLight;
    std::discrete_distribution<int> pick_class(
        {o.valid ? 75.0 : 0.0, o.wrong ? 20.0 : 0.0, o.garbage ? 3.75 : 0.0,
         o.unknown && light ? 1.25 : 0.0});
    uint64_t calls_on_channel = 0;
    Connect();
    while (!env_.stop.load(std::memory_order_relaxed)) {
      // A new connection (and User-Agent) now and then.
      if (calls_on_channel > 3000) {
        Connect();
        calls_on_channel = 0;
      }
      if (!Send(pick_class(rng_), pick_case)) continue;
      ++calls_on_channel;
      env_.calls.fetch_add(1, std::memory_order_relaxed);
      if (refused_) {
        refused_ = false;
        SleepUnlessStopped(
            env_, std::chrono::seconds(api::kLaneFullRetryAfterSeconds));
      }
    }
    cq_.Shutdown();
    void* tag;
    bool ok;
    while (cq_.Next(&tag, &ok)) {
    }
  }

  const Tally& tally() const { return tally_; }
  const LatencyRecorder& latency() const { return latency_; }

 private:
  // A call of class `cls` (pick_class's order), if its request is of this
  // worker's lane.
  bool Send(int cls, std::discrete_distribution<size_t>& pick_case) {
    switch (cls) {
      case 0: {
        const size_t index = pick_case(rng_);
        if (lanes_[index] != lane_) return false;
        Valid(cases_[index].request);
        return true;
      }
      case 1:
        return Wrong();
      case 2:
        return Garbage();
      default:
        UnknownMethod();
        return true;
    }
  }

  void Connect() {
    channel_ = NewChannel(env_, RandomUserAgent(rng_), ++g_channel_serial);
    stub_ = v1::CompatibilityPolicy::NewStub(channel_);
    generic_ = std::make_unique<grpc::GenericStub>(channel_);
  }

  grpc::Status Call(const SoakRequest& request, Message* response) {
    grpc::ClientContext context;
    context.set_deadline(Deadline(CallTimeout()));
    AddRandomIdentity(rng_, &context);
    return CallStub(*stub_, &context, request.rpc, *request.message, response);
  }

  void Unexpected(Class cls, absl::string_view method, absl::string_view label,
                  const grpc::Status& status, absl::string_view expected) {
    if (env_.QuotaCollateral(
            status,
            absl::StrCat(kClassNames[static_cast<int>(cls)], " ", method, ": ",
                         Shorten(status.error_message()))))
      return;
    env_.failures.Add(
        "unexpected status code",
        absl::StrCat(kClassNames[static_cast<int>(cls)], " ", method, " (",
                     Shorten(label, 300), "): ", CodeName(status.error_code()),
                     " \"", Shorten(status.error_message()), "\"; expected ",
                     expected));
  }

  // A heavy-lane call waits for the lane (kHeavyCallTimeout).
  absl::Duration CallTimeout() const {
    return lane_ == Lane::kLight ? env_.options.call_timeout
                                 : absl::FromChrono(kHeavyCallTimeout);
  }

  // A heavy-lane call refused because the lane is full: accepted, and the
  // worker waits before its next call.
  bool Refused(const grpc::Status& status) {
    refused_ = lane_ == Lane::kHeavy && LaneFull(status);
    return refused_;
  }

  void Valid(const SoakRequest& request) {
    Message* response = responses_[static_cast<int>(request.rpc)].get();
    const Clock::time_point start = Clock::now();
    const grpc::Status status = Call(request, response);
    const Clock::time_point end = Clock::now();
    const absl::string_view method = RpcName(request.rpc);
    Count(tally_, Class::kValid, method, status.error_code());
    if (Refused(status)) {
      latency_.CountRefused(LatencyClass::kValidHeavy, start);
      return;
    }
    // The light lane's every call; the heavy lane's answered ones.
    if (lane_ == Lane::kLight || status.ok()) {
      latency_.Record(lane_ == Lane::kLight ? LatencyClass::kValidLight
                                            : LatencyClass::kValidHeavy,
                      method, request.label, start, end,
                      LightBoundMicros(env_));
    }
    if (!status.ok()) {
      Unexpected(Class::kValid, method, request.label, status,
                 lane_ == Lane::kLight
                     ? "OK"
                     : "OK, or RESOURCE_EXHAUSTED (the heavy lane is full)");
      return;
    }
    if (std::string problem = request.check(*response); !problem.empty()) {
      env_.failures.Add(
          "wrong answer",
          absl::StrCat(method, " (", request.label, "): ", problem,
                       "; answer: ", Shorten(response->ShortDebugString())));
    }
  }

  bool Wrong() {
    const SoakRequest request =
        RandomWrongRequest(rng_, kMaxRecvMessageBytes, kMaxEvaluateItems);
    if (GrpcLane(request) != lane_) return false;
    Message* response = responses_[static_cast<int>(request.rpc)].get();
    const grpc::Status status = Call(request, response);
    const absl::string_view method = RpcName(request.rpc);
    Count(tally_, Class::kWrong, method, status.error_code());
    // A full heavy lane refuses before the request is looked at.
    const bool accepted =
        Refused(status) ||
        (request.exact_code.has_value()
             ? status.error_code() == *request.exact_code
             : IsAcceptedForWrongRequest(status.error_code()));
    if (!accepted) {
      Unexpected(Class::kWrong, method,
                 absl::StrCat(request.label, ": ",
                              request.message->ShortDebugString()),
                 status,
                 request.exact_code.has_value()
                     ? CodeName(*request.exact_code)
                     : "OK, INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION "
                       "or RESOURCE_EXHAUSTED");
      return true;
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
    return true;
  }

  // A unary call through the generic stub on this worker's completion queue
  // (the callback API is not usable under TSan, see bench/CMakeLists.txt).
  grpc::Status GenericCall(const std::string& method,
                           const std::string& bytes) {
    grpc::ClientContext context;
    context.set_deadline(Deadline(CallTimeout()));
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

  // Bytes in place of a request. A heavy RPC's (by its name) is decoded on
  // the heavy lane, so a full lane refuses it before compatd reads it.
  bool Garbage() {
    const Rpc rpc = kUnaryRpcs[Below(rng_, kRpcCount)];
    const std::string bytes = RandomGarbageMessage(rng_, rpc);
    if (GrpcLane(rpc, bytes) != lane_) return false;
    const bool decodes = Decodes(rpc, bytes);
    const grpc::Status status = GenericCall(MethodPath(rpc), bytes);
    const Class cls =
        decodes ? Class::kGarbageDecodable : Class::kGarbageUndecodable;
    Count(tally_, cls, RpcName(rpc), status.error_code());
    const bool accepted =
        Refused(status) ||
        (decodes
             ? IsAcceptedForWrongRequest(status.error_code())
             : status.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
                   absl::StartsWith(status.error_message(),
                                    "the request is not a valid compatd.v1."));
    if (!accepted) {
      Unexpected(cls, RpcName(rpc),
                 absl::StrCat(bytes.size(), " bytes ",
                              Shorten(absl::CEscape(bytes), 120)),
                 status,
                 decodes ? "a code for a wrong request"
                         : "INVALID_ARGUMENT naming the request type "
                           "(compatd cannot decode it)");
    }
    return true;
  }

  Env& env_;
  Rng rng_;
  const Lane lane_;
  bool refused_ = false;
  std::vector<ValidCase> cases_;
  std::vector<Lane> lanes_;  // of cases_
  std::vector<std::unique_ptr<Message>> responses_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
  std::unique_ptr<grpc::GenericStub> generic_;
  grpc::CompletionQueue cq_;
  Tally tally_;
  LatencyRecorder latency_;
};

}  // namespace compatd::soak
