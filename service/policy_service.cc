#include "service/policy_service.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "base/tsan.h"
#include "grpcpp/alarm.h"

namespace compatd::service {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

namespace {

// The key for the hand-off of the call-duration alarm's callback to gRPC.
char alarm_hand_off_key;

// Streams the catalog now serving, then one message per published reload, until
// the client cancels or the server closes runtime::CatalogEvents on shutdown
// (then it finishes with OK).
class WatchCatalogReactor final
    : public grpc::ServerWriteReactor<v1::GetCatalogResponse> {
 public:
  WatchCatalogReactor(const api::PolicyHandlers* handlers,
                      runtime::CatalogEvents* events, RpcObserver* observer)
      : handlers_(handlers),
        events_(events),
        observer_(observer),
        start_(absl::Now()),
        subscriber_(std::make_shared<Subscriber>(this)) {}

  // Subscribes and queues the current catalog. Call once, right after
  // construction.
  void Start(std::shared_ptr<const runtime::ServingSnapshot> current) {
    if (current == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      FinishLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                "no catalog is loaded yet"));
      return;
    }
    Enqueue(std::move(current));
    if (!events_->Subscribe(subscriber_)) Close();  // already shutting down
  }

  // Ends the stream with OK once `cap` (--max-call-duration) has passed,
  // unless the client's own deadline comes first: the deadline is clamped,
  // never refused. The client reconnects and gets the current catalog first.
  // Call before Start().
  void CapDuration(absl::Duration cap,
                   std::chrono::system_clock::time_point client_deadline) {
    const absl::Time end = absl::Now() + cap;
    if (absl::FromChrono(client_deadline) <= end) return;
    // The alarm holds the subscriber, not the reactor: once the stream is
    // done the subscriber is detached and the alarm's call does nothing.
    std::function<void(bool)> on_alarm = [subscriber =
                                              subscriber_](bool fired) {
      base::TsanAcquire(
          &alarm_hand_off_key);  // gRPC runs this after Set() (tsan.h)
      if (fired) subscriber->OnClose();
    };
    base::TsanRelease(&alarm_hand_off_key);
    cap_alarm_.Set(absl::ToChronoTime(end), std::move(on_alarm));
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok) {
      FinishLocked(
          grpc::Status(grpc::StatusCode::CANCELLED, "the stream was closed"));
    } else if (cancelled_) {
      // OnCancel() came while this write was in flight and left the finish
      // to us; a write that still completed is no reason to keep the stream
      // (compatd-soak found such streams never finished: reactor, call and
      // catalog snapshot kept until shutdown).
      FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED,
                                "the client cancelled the stream"));
    } else if (close_requested_) {
      FinishLocked(grpc::Status::OK);
    } else if (pending_ != nullptr) {
      WriteNextLocked();
    }
  }

  void OnCancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    if (!writing_) {
      FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED,
                                "the client cancelled the stream"));
    }
  }

  void OnDone() override {
    grpc::StatusCode final_code;
    {
      // final_code_ may have been set on another thread (Close() from the
      // catalog events or the alarm). Taking the lock also orders this after
      // Start(); not held below, where Unsubscribe() takes the events' lock.
      std::lock_guard<std::mutex> lock(mu_);
      final_code = final_code_;
    }
    events_->Unsubscribe(subscriber_.get());
    subscriber_->Detach();
    if (observer_ != nullptr) {
      observer_->OnFinish(api::Rpc::kWatchCatalog,
                          static_cast<absl::StatusCode>(final_code),
                          absl::Now() - start_);
    }
    delete this;
  }

 private:
  // Held by runtime::CatalogEvents; outlives the reactor safely (Detach() on
  // done).
  class Subscriber final : public runtime::CatalogEvents::Subscriber {
   public:
    explicit Subscriber(WatchCatalogReactor* reactor) : reactor_(reactor) {}
    void OnPublished(
        std::shared_ptr<const runtime::ServingSnapshot> snapshot) override {
      std::lock_guard<std::mutex> lock(mu_);
      if (reactor_ != nullptr) reactor_->Enqueue(std::move(snapshot));
    }
    void OnClose() override {
      std::lock_guard<std::mutex> lock(mu_);
      if (reactor_ != nullptr) reactor_->Close();
    }
    void Detach() {
      std::lock_guard<std::mutex> lock(mu_);
      reactor_ = nullptr;
    }

   private:
    std::mutex mu_;
    WatchCatalogReactor* reactor_ ABSL_GUARDED_BY(mu_);
  };

  void Enqueue(std::shared_ptr<const runtime::ServingSnapshot> snapshot) {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_ || cancelled_) return;
    // Start() reads the store's catalog and then subscribes; a reload
    // published just before can still be announced after that, with the
    // catalog Start() already queued (compatd-soak saw a generation twice).
    if (snapshot->generation <= queued_generation_) return;
    queued_generation_ = snapshot->generation;
    pending_ = std::move(snapshot);  // only the newest matters
    if (!writing_) WriteNextLocked();
  }

  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    close_requested_ = true;
    if (!writing_) FinishLocked(grpc::Status::OK);
  }

  void WriteNextLocked() {
    message_.Clear();
    handlers_->DescribeCatalog(*pending_, &message_);
    pending_.reset();
    writing_ = true;
    StartWrite(&message_);
  }

  void FinishLocked(const grpc::Status& status) {
    if (finished_) return;
    finished_ = true;
    final_code_ = status.error_code();
    Finish(status);
  }

  const api::PolicyHandlers* handlers_;
  runtime::CatalogEvents* events_;
  RpcObserver* observer_;
  const absl::Time start_;
  std::shared_ptr<Subscriber> subscriber_;
  grpc::Alarm cap_alarm_;  // cancelled when the reactor is deleted

  std::mutex mu_;
  v1::GetCatalogResponse message_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const runtime::ServingSnapshot> pending_ ABSL_GUARDED_BY(mu_);
  // The generation of the newest catalog queued (sent or pending).
  uint64_t queued_generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool close_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  grpc::StatusCode final_code_ ABSL_GUARDED_BY(mu_) = grpc::StatusCode::OK;
};

}  // namespace

PolicyService::PolicyService(const api::PolicyHandlers* handlers,
                             runtime::CatalogEvents* events,
                             const runtime::SnapshotStore* store,
                             RpcObserver* observer)
    : handlers_(handlers),
      events_(events),
      store_(store),
      observer_(observer) {}

template <typename Request, typename Response>
grpc::ServerUnaryReactor* PolicyService::Unary(
    api::Rpc rpc, grpc::CallbackServerContext* context, const Request& request,
    Response* response,
    absl::Status (api::PolicyHandlers::*handler)(
        const runtime::ServingSnapshot&, const Request&, Response*) const) {
  const absl::Time start = absl::Now();
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      store_->Current();
  if (observer_ != nullptr) {
    observer_->OnStart(rpc, context->client_metadata(), snapshot.get());
  }
  absl::Status status = api::CheckServing(snapshot.get());
  if (status.ok()) status = (handlers_->*handler)(*snapshot, request, response);
  if (observer_ != nullptr) {
    observer_->OnFinish(rpc, status.code(), absl::Now() - start);
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

#define COMPATD_UNARY_METHOD(Name)                                            \
  grpc::ServerUnaryReactor* PolicyService::Name(                              \
      grpc::CallbackServerContext* context, const v1::Name##Request* request, \
      v1::Name##Response* response) {                                         \
    return Unary(api::Rpc::k##Name, context, *request, response,              \
                 &api::PolicyHandlers::Name);                                 \
  }
COMPATD_UNARY_RPCS(COMPATD_UNARY_METHOD)
#undef COMPATD_UNARY_METHOD

grpc::ServerWriteReactor<v1::GetCatalogResponse>* PolicyService::WatchCatalog(
    grpc::CallbackServerContext* context, const v1::WatchCatalogRequest*) {
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      store_->Current();
  if (observer_ != nullptr) {
    observer_->OnStart(api::Rpc::kWatchCatalog, context->client_metadata(),
                       snapshot.get());
  }
  auto* reactor = new WatchCatalogReactor(handlers_, events_, observer_);
  reactor->CapDuration(handlers_->limits().max_call_duration,
                       context->deadline());
  reactor->Start(snapshot);
  return reactor;
}

}  // namespace compatd::service
