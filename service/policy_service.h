#pragma once

// compatd.v1.CompatibilityPolicy over gRPC's callback API: a thin adapter. Each
// unary method calls the matching api::PolicyHandlers function (all logic lives
// there), converts the status once, and reports to the RpcObserver. Handlers
// never block.
//
// The unary methods are registered as raw bidirectional-streaming methods
// (bytes in, bytes out) and read their one request themselves, for three
// reasons that gRPC 1.51's typed unary handlers cannot serve:
// - gRPC hands a typed unary call to the application only once its request
//   has arrived, and a server that is shutting down cancels a call whose
//   request arrives after the GOAWAY, although HTTP/2 accepted its stream (a
//   client that sent HEADERS before SIGTERM and DATA after got CANCELLED).
//   A raw streaming call is handed over at its HEADERS, counted as in
//   flight, and answered in full within --shutdown-grace.
// - A request that does not decode (malformed wire data, a string that is
//   not UTF-8, nesting past protobuf's depth limit) got UNIMPLEMENTED, as if
//   the method did not exist; it is INVALID_ARGUMENT here.
// - The answer's size is known before it is handed to gRPC: one over
//   --max-send-message-bytes, or one that would pass the bytes of answers
//   waiting for slow clients (--max-answer-backlog-bytes), fails with
//   RESOURCE_EXHAUSTED naming the sizes.
// Their reactions run inline, as a typed unary handler's do
// (service/inline_stream_handler.h): gRPC's own streaming handler hands each
// read and each OnDone to its executor thread, which cost a quarter of the
// QPS.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "api/handlers.h"
#include "api/rpcs.h"
#include "base/work_pool.h"
#include "compatd/v1/compatd.pb.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/impl/service_type.h"
#include "runtime/catalog_events.h"
#include "runtime/serving_snapshot.h"
#include "service/rpc_observer.h"

namespace compatd::service {

// Answers handed to gRPC whose calls are not done yet (their clients have not
// taken them all): their bytes are bounded across every connection, and an
// answer still waiting after `timeout` is cancelled, which frees it (a client
// that never opens its HTTP/2 flow-control window would hold it for as long
// as its connection lives). Thread-safe.
class AnswerBacklog {
 public:
  // Starts the thread that cancels answers waiting longer than `timeout`.
  AnswerBacklog(int64_t limit, absl::Duration timeout);
  ~AnswerBacklog();

  // One answer waiting for its client; lives in its call.
  struct Entry {
    Entry* prev = nullptr;
    Entry* next = nullptr;
    absl::Time since;
    grpc::ServerContextBase* context = nullptr;
    int64_t bytes = 0;
    bool cancelled = false;
  };

  // Reserves `bytes` for the answer of `context`'s call and starts its
  // clock; false, reserving nothing, if the backlog would pass its limit.
  bool Add(Entry* entry, grpc::ServerContextBase* context, int64_t bytes);
  // When the call is done (its answer taken, or the call cancelled); no-op
  // for an entry not added.
  void Remove(Entry* entry);

  int64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  int64_t limit() const { return limit_; }
  // Answers cancelled for waiting too long, since start.
  int64_t timed_out() const {
    return timed_out_.load(std::memory_order_relaxed);
  }

 private:
  void Sweep();

  const int64_t limit_;
  const absl::Duration timeout_;
  std::atomic<int64_t> bytes_{0};
  std::atomic<int64_t> timed_out_{0};
  // std::mutex rather than absl::Mutex: Debian's abseil does deadlock
  // detection on every Lock (GraphCycles, in every unary call's profile) and
  // is not built for TSan, which would not see it.
  std::mutex mu_;
  std::condition_variable stop_cv_;
  // Oldest first.
  Entry* head_ ABSL_GUARDED_BY(mu_) = nullptr;
  Entry* tail_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread sweeper_;
};

class PolicyService final : public grpc::Service {
 public:
  struct Options {
    // --max-send-message-bytes.
    size_t max_answer_bytes = 4 * 1024 * 1024;
    // Must outlive the service; null: no bound.
    AnswerBacklog* backlog = nullptr;
    // Unary calls in flight, from their HEADERS until gRPC is done with the
    // call (the drain waits for them); null: not counted.
    std::atomic<int>* calls_in_flight = nullptr;
    // The heavy lane (api/lanes.h): heavy calls run there, and are refused
    // with RESOURCE_EXHAUSTED when it is full; null: every call runs inline.
    // Must outlive the service.
    base::WorkPool* heavy = nullptr;
    // A heavy call's budget (--max-heavy-work-time): its work stops then
    // (base/work_budget.h), or at the client's deadline if sooner.
    absl::Duration heavy_work_time = absl::Seconds(10);
  };

  // All pointers must outlive the service; `observer` may be null.
  PolicyService(const api::PolicyHandlers* handlers,
                runtime::CatalogEvents* events,
                const runtime::SnapshotStore* store, RpcObserver* observer,
                Options options);

 private:
  class UnaryCall;
  class WatchCatalogCall;

  // The status of one unary call whose request bytes are `request`; on OK
  // `response` holds the answer and `*answer_bytes` its size, reserved in the
  // backlog.
  grpc::Status Answer(api::Rpc rpc, grpc::CallbackServerContext* context,
                      grpc::ByteBuffer* request, grpc::ByteBuffer* response,
                      int64_t* answer_bytes) const;
  template <typename Request, typename Response>
  grpc::Status Run(api::Rpc rpc, grpc::CallbackServerContext* context,
                   grpc::ByteBuffer* request_bytes, grpc::ByteBuffer* response,
                   int64_t* answer_bytes,
                   absl::Status (api::PolicyHandlers::*handler)(
                       const runtime::ServingSnapshot&, const Request&,
                       Response*) const) const;

  grpc::ServerWriteReactor<v1::GetCatalogResponse>* WatchCatalog(
      grpc::CallbackServerContext* context,
      const v1::WatchCatalogRequest* request);

  const api::PolicyHandlers* handlers_;
  runtime::CatalogEvents* events_;
  const runtime::SnapshotStore* store_;
  RpcObserver* observer_;
  const Options options_;
};

// The one absl -> grpc status conversion of the code base.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Routes protobuf's own log lines to base::Log, except the one protobuf
// writes for every request with a string that is not UTF-8 (the client is
// told, with INVALID_ARGUMENT; a line per request would let any client fill
// the log). Idempotent.
void RouteProtobufLogs();

}  // namespace compatd::service
