#include "service/drain.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/log.h"
#include "base/tsan.h"
#include "grpc/grpc.h"
#include "grpc/support/time.h"

namespace compatd::service {
namespace {

// Counts the unary calls of every service on the --listen port (ours and
// grpc.health.v1 Check) from the moment gRPC hands a call to the application
// until gRPC is done with it: the interceptor is made before the handler runs
// (CallbackCallTag::Run in gRPC's src/cpp/server/server_cc.cc) and deleted
// with the call's ServerContext, once its answer and status are in the
// transport's hands. The metrics' started/handled counts would not do: a call
// is "handled" before its answer is sent. Streams are not counted: the server
// ends WatchCatalog itself, Health/Watch and reflection streams end only when
// the client ends them. compatd's own unary methods are registered as raw
// streams (service/policy_service.h says why) and count themselves in the
// same counter, from their HEADERS until gRPC is done with them.
class UnaryCallCounter final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit UnaryCallCounter(std::atomic<int>* in_flight)
      : in_flight_(in_flight) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY) {
      return nullptr;  // no interceptor: gRPC skips the interception hooks
    }
    return new Call(in_flight_);
  }

 private:
  class Call final : public grpc::experimental::Interceptor {
   public:
    explicit Call(std::atomic<int>* in_flight) : in_flight_(in_flight) {
      in_flight_->fetch_add(1, std::memory_order_relaxed);
      base::TsanRelease(
          this);  // gRPC calls and deletes it on other threads (tsan.h)
    }
    ~Call() override {
      base::TsanAcquire(this);
      in_flight_->fetch_sub(1, std::memory_order_release);
    }
    void Intercept(
        grpc::experimental::InterceptorBatchMethods* methods) override {
      // Before Proceed(), after which the call may end and gRPC delete this
      // on another thread.
      base::TsanRelease(this);
      methods->Proceed();
    }

   private:
    std::atomic<int>* const in_flight_;
  };

  std::atomic<int>* const in_flight_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewUnaryCallCounter(std::atomic<int>* in_flight) {
  return std::make_unique<UnaryCallCounter>(in_flight);
}

// grpc::Server::Shutdown(deadline) (gRPC 1.51 src/cpp/server/server_cc.cc,
// ShutdownInternal) calls grpc_server_shutdown_and_notify, waits until the
// core server reports every connection gone (not every call: Server::
// MaybeFinishShutdown in src/core/lib/surface/server.cc waits for
// channels_.empty()), and only at the deadline calls
// grpc_server_cancel_all_calls. An idle client connection then held the
// exit for as long as the graceful GOAWAY took (measured: 5 s), an open
// Health/Watch stream for the whole --shutdown-grace. This does the same
// steps, but cancels as soon as no unary call is in flight. Cancelling
// closes every connection at once; the chttp2 transport still finishes a
// socket write in progress first ("Delayed close due to in-progress
// write"), so answers of calls already done are not cut.
void DrainGrpcServer(grpc::Server* server,
                     const std::atomic<int>& unary_calls_in_flight,
                     absl::Duration grace) {
  grpc_completion_queue* shutdown_cq =
      grpc_completion_queue_create_for_next(nullptr);
  int shutdown_tag = 0;
  // Returns once the listeners are closed, GOAWAY is on its way to every
  // connection, and every call admitted before has been handed to the
  // application (ShutdownAndNotify waits for admissions in progress); the
  // core server admits no call after it.
  grpc_server_shutdown_and_notify(server->c_server(), shutdown_cq,
                                  &shutdown_tag);
  const absl::Time deadline = absl::Now() + grace;
  // A call handed to the application is counted when a gRPC thread runs its
  // first step (UnaryCallCounter), normally microseconds later, so one look
  // at zero could miss a call just admitted. Closing only after zero on two
  // looks kDrainPoll apart means such a call would have to be stalled that
  // long to be cut. The first look comes kDrainPoll after shutdown began,
  // so Health/Watch streams also get 200 ms to receive NOT_SERVING, as on
  // the --health-listen server.
  constexpr absl::Duration kDrainPoll = absl::Milliseconds(100);
  int idle_looks = 0;
  while (true) {
    const absl::Duration wait = std::max(
        absl::ZeroDuration(), std::min(deadline - absl::Now(), kDrainPoll));
    const grpc_event event = grpc_completion_queue_next(
        shutdown_cq,
        gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                     gpr_time_from_micros(absl::ToInt64Microseconds(wait),
                                          GPR_TIMESPAN)),
        nullptr);
    if (event.type != GRPC_QUEUE_TIMEOUT) break;  // every connection is gone
    const int in_flight = unary_calls_in_flight.load(std::memory_order_acquire);
    idle_looks = in_flight == 0 ? idle_looks + 1 : 0;
    if (idle_looks < 2 && absl::Now() < deadline) continue;
    base::LogInfo(in_flight == 0
                      ? "no call in flight: closing the remaining connections "
                        "and streams"
                      : absl::StrCat("--shutdown-grace is over with ",
                                     in_flight,
                                     " call(s) in flight: cancelling them"));
    grpc_server_cancel_all_calls(server->c_server());
    // Now every connection closes without waiting for its client.
    grpc_completion_queue_next(shutdown_cq, gpr_inf_future(GPR_CLOCK_MONOTONIC),
                               nullptr);
    break;
  }
  grpc_completion_queue_shutdown(shutdown_cq);
  while (grpc_completion_queue_next(
             shutdown_cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), nullptr)
             .type != GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(shutdown_cq);
  // The core server is shut down already: this returns once gRPC C++ has
  // finished its own callbacks.
  server->Shutdown();
  server->Wait();
}

}  // namespace compatd::service
