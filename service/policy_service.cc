#include "service/policy_service.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/lanes.h"
#include "base/log.h"
#include "base/tsan.h"
#include "base/work_budget.h"
#include "base/work_pool.h"
#include "google/protobuf/stubs/logging.h"
#include "grpcpp/alarm.h"
#include "grpcpp/impl/codegen/server_callback_handlers.h"
#include "grpcpp/impl/rpc_service_method.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/proto_buffer_writer.h"
#include "service/inline_stream_handler.h"

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

// ---------------------------------------------------------------------------
// AnswerBacklog

AnswerBacklog::AnswerBacklog(int64_t limit, absl::Duration timeout)
    : limit_(limit), timeout_(timeout) {
  sweeper_ = std::thread([this] { Sweep(); });
}

AnswerBacklog::~AnswerBacklog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  sweeper_.join();
}

bool AnswerBacklog::Add(Entry* entry, grpc::ServerContextBase* context,
                        int64_t bytes) {
  if (bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes > limit_) {
    bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    return false;
  }
  entry->context = context;
  entry->bytes = bytes;
  entry->since = absl::Now();
  std::lock_guard<std::mutex> lock(mu_);
  entry->prev = tail_;
  entry->next = nullptr;
  (tail_ == nullptr ? head_ : tail_->next) = entry;
  tail_ = entry;
  return true;
}

void AnswerBacklog::Remove(Entry* entry) {
  if (entry->context == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    (entry->prev == nullptr ? head_ : entry->prev->next) = entry->next;
    (entry->next == nullptr ? tail_ : entry->next->prev) = entry->prev;
  }
  entry->context = nullptr;
  bytes_.fetch_sub(entry->bytes, std::memory_order_relaxed);
}

// Entries are in the order they were added, so only the head can be overdue.
// TryCancel() under the lock is safe: gRPC runs the call's OnDone (which
// removes the entry, taking the lock) on another thread, never inside
// TryCancel(), and not before TryCancel() returns, since it must take the
// lock first.
void AnswerBacklog::Sweep() {
  const absl::Duration tick =
      std::clamp(timeout_ / 4, absl::Milliseconds(50), absl::Seconds(1));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    stop_cv_.wait_for(lock, absl::ToChronoNanoseconds(tick),
                      [this]()
                          ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; });
    const absl::Time overdue = absl::Now() - timeout_;
    for (Entry* entry = head_; entry != nullptr && entry->since <= overdue;
         entry = entry->next) {
      if (entry->cancelled) continue;
      entry->cancelled = true;
      entry->context->TryCancel();
      timed_out_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

// ---------------------------------------------------------------------------
// Unary calls

// One unary call, from its HEADERS (gRPC hands it over then, see the header)
// until gRPC is done with it: reads the one request, answers it, writes the
// answer and the status.
class PolicyService::UnaryCall final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  UnaryCall(const PolicyService* service, api::Rpc rpc,
            grpc::CallbackServerContext* context)
      : service_(service), rpc_(rpc), context_(context) {
    if (service_->options_.calls_in_flight != nullptr) {
      service_->options_.calls_in_flight->fetch_add(1,
                                                    std::memory_order_relaxed);
    }
    base::TsanRelease(this);  // gRPC runs the reactions on other threads
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    base::TsanAcquire(this);
    if (!ok) {
      // The client ended its side without a request, or the call is gone
      // (then nobody reads this).
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "the call carried no request message: a unary call "
                          "sends exactly one"));
      return;
    }
    base::WorkPool* heavy = service_->options_.heavy;
    if (heavy == nullptr || CallLane() == api::Lane::kLight) return Respond();
    // The heavy lane: a pool thread answers; a full pool is refused now, not
    // waited for (api/lanes.h).
    base::TsanRelease(this);
    if (heavy->TrySubmit([this] {
          base::TsanAcquire(this);
          RespondWithinBudget();
        })) {
      return;
    }
    const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
        service_->store_->Current();
    if (service_->observer_ != nullptr) {
      service_->observer_->OnStart(rpc_, context_->client_metadata(),
                                   snapshot.get());
      service_->observer_->OnFinish(rpc_, absl::StatusCode::kResourceExhausted,
                                    absl::ZeroDuration());
    }
    Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        api::LaneFullMessage(*heavy)));
  }

  // The client went away (or its deadline passed): queued work is not
  // started, and running work stops at its next look at its budget.
  void OnCancel() override {
    cancelled_.store(true, std::memory_order_relaxed);
  }

  // No reaction blocks: heavy work is handed to the pool.
  bool InternalInlineable() override { return true; }

  void OnDone() override {
    base::TsanAcquire(this);
    if (service_->options_.backlog != nullptr) {
      service_->options_.backlog->Remove(&backlog_entry_);
    }
    if (service_->options_.calls_in_flight != nullptr) {
      service_->options_.calls_in_flight->fetch_sub(1,
                                                    std::memory_order_release);
    }
    delete this;
  }

 private:
  // The call's lane; Evaluate's from its items when its request is small
  // enough to look at them.
  api::Lane CallLane() const {
    return api::LaneOfCall(
        rpc_, request_.Length(), [this](v1::EvaluateRequest* request) {
          grpc::ByteBuffer copy(request_);  // shares the slices; parsing
                                            // clears it
          return grpc::SerializationTraits<v1::EvaluateRequest>::Deserialize(
                     &copy, request)
              .ok();
        });
  }

  // On a pool thread: the work stops at the end of its budget
  // (--max-heavy-work-time, or the client's deadline if sooner) or when the
  // client goes away; work whose client left while it waited is not done.
  void RespondWithinBudget() {
    if (cancelled_.load(std::memory_order_relaxed)) {
      base::TsanRelease(this);
      Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                          "the client went away before the work started"));
      return;
    }
    const absl::Time deadline =
        std::min(absl::Now() + service_->options_.heavy_work_time,
                 absl::FromChrono(context_->deadline()));
    base::ScopedWorkBudget budget(deadline, &cancelled_);
    Respond();
  }

  void Respond() {
    grpc::Status status =
        service_->Answer(rpc_, context_, &request_, &response_, &answer_bytes_);
    if (status.ok() && service_->options_.backlog != nullptr &&
        !service_->options_.backlog->Add(&backlog_entry_, context_,
                                         answer_bytes_)) {
      const AnswerBacklog& backlog = *service_->options_.backlog;
      status = grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrCat("the answer (", answer_bytes_,
                       " bytes) would pass the limit of ", backlog.limit(),
                       " bytes of answers waiting for their clients to take "
                       "them (--max-answer-backlog-bytes; now ",
                       backlog.bytes(), "); retry later"));
    }
    base::TsanRelease(this);
    if (status.ok()) {
      StartWriteAndFinish(&response_, grpc::WriteOptions(), status);
    } else {
      response_.Clear();
      Finish(status);
    }
  }

  const PolicyService* const service_;
  const api::Rpc rpc_;
  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  int64_t answer_bytes_ = 0;
  AnswerBacklog::Entry backlog_entry_;
  std::atomic<bool> cancelled_{false};
};

namespace {

// "/compatd.v1.CompatibilityPolicy/GetFeature", ... for the lifetime of the
// process (gRPC keeps the pointers).
const char* MethodPath(api::Rpc rpc) {
  static const std::vector<std::string>* const paths = [] {
    auto* paths = new std::vector<std::string>();
    for (int i = 0; i < api::kRpcCount; ++i) {
      paths->push_back(absl::StrCat("/", kPolicyServiceName, "/",
                                    api::RpcName(static_cast<api::Rpc>(i))));
    }
    return paths;
  }();
  return (*paths)[static_cast<size_t>(rpc)].c_str();
}

template <typename Message>
std::string FullName() {
  return std::string(Message::descriptor()->full_name());
}

}  // namespace

PolicyService::PolicyService(const api::PolicyHandlers* handlers,
                             runtime::CatalogEvents* events,
                             const runtime::SnapshotStore* store,
                             RpcObserver* observer, Options options)
    : handlers_(handlers),
      events_(events),
      store_(store),
      observer_(observer),
      options_(options) {
  // Unary methods: raw bidirectional streams whose reactions run inline (the
  // header says why).
  for (int i = 0; i < api::kRpcCount; ++i) {
    const auto rpc = static_cast<api::Rpc>(i);
    if (api::IsServerStreaming(rpc)) continue;
    auto* method = new grpc::internal::RpcServiceMethod(
        MethodPath(rpc), grpc::internal::RpcMethod::BIDI_STREAMING,
        new InlineStreamHandler(
            [this, rpc](grpc::CallbackServerContext* context) {
              return new UnaryCall(this, rpc, context);
            }));
    method->SetServerApiType(
        grpc::internal::RpcServiceMethod::ApiType::RAW_CALL_BACK);
    AddMethod(method);
  }
  auto* watch = new grpc::internal::RpcServiceMethod(
      MethodPath(api::Rpc::kWatchCatalog),
      grpc::internal::RpcMethod::SERVER_STREAMING,
      new grpc::internal::CallbackServerStreamingHandler<
          v1::WatchCatalogRequest, v1::GetCatalogResponse>(
          [this](grpc::CallbackServerContext* context,
                 const v1::WatchCatalogRequest* request) {
            return WatchCatalog(context, request);
          }));
  watch->SetServerApiType(grpc::internal::RpcServiceMethod::ApiType::CALL_BACK);
  AddMethod(watch);
}

template <typename Request, typename Response>
grpc::Status PolicyService::Run(api::Rpc rpc,
                                grpc::CallbackServerContext* context,
                                grpc::ByteBuffer* request_bytes,
                                grpc::ByteBuffer* response_bytes,
                                int64_t* answer_bytes,
                                absl::Status (api::PolicyHandlers::*handler)(
                                    const runtime::ServingSnapshot&,
                                    const Request&, Response*) const) const {
  const absl::Time start = absl::Now();
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      store_->Current();
  if (observer_ != nullptr) {
    observer_->OnStart(rpc, context->client_metadata(), snapshot.get());
  }
  Request request;
  Response response;
  absl::Status status;
  if (!grpc::SerializationTraits<Request>::Deserialize(request_bytes, &request)
           .ok()) {
    // gRPC's status guide suggests INTERNAL for a request the server cannot
    // parse; compatd answers INVALID_ARGUMENT, as for every other fault of
    // the request (docs/limits.md): it is the client's to
    // fix, and must not count as a server error.
    status = absl::InvalidArgumentError(absl::StrCat(
        "the request is not a valid ", FullName<Request>(),
        " message: malformed protobuf wire data, a string field that is not "
        "UTF-8, or nesting deeper than 100 levels"));
  } else {
    status = api::CheckServing(snapshot.get());
    if (status.ok())
      status = (handlers_->*handler)(*snapshot, request, &response);
  }
  if (status.ok()) {
    const size_t size = response.ByteSizeLong();
    if (size > options_.max_answer_bytes) {
      status = absl::ResourceExhaustedError(absl::StrCat(
          "the answer is ", size, " bytes, over the limit of ",
          options_.max_answer_bytes,
          " bytes (--max-send-message-bytes); ask for less (a component, "
          "fewer Evaluate items)"));
    } else {
      bool own_buffer = false;
      grpc::Status serialized = grpc::SerializationTraits<Response>::Serialize(
          response, response_bytes, &own_buffer);
      if (!serialized.ok()) {
        status = absl::InternalError(absl::StrCat(
            "cannot serialize the answer: ", serialized.error_message()));
      }
      *answer_bytes = static_cast<int64_t>(size);
    }
  }
  if (observer_ != nullptr) {
    observer_->OnFinish(rpc, status.code(), absl::Now() - start);
  }
  return ToGrpcStatus(status);
}

grpc::Status PolicyService::Answer(api::Rpc rpc,
                                   grpc::CallbackServerContext* context,
                                   grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response,
                                   int64_t* answer_bytes) const {
  switch (rpc) {
#define COMPATD_UNARY_CASE(Name)                              \
  case api::Rpc::k##Name:                                     \
    return Run(rpc, context, request, response, answer_bytes, \
               &api::PolicyHandlers::Name);
    COMPATD_UNARY_RPCS(COMPATD_UNARY_CASE)
#undef COMPATD_UNARY_CASE
    case api::Rpc::kWatchCatalog:
      break;
  }
  return grpc::Status(grpc::StatusCode::INTERNAL, "not a unary method");
}

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

namespace {

void ProtobufLog(google::protobuf::LogLevel level, const char* filename,
                 int line, const std::string& message) {
  // WireFormatLite::VerifyUtf8String, for every such request.
  if (absl::StrContains(message, "contains invalid UTF-8 data")) return;
  const std::string text =
      absl::StrCat("protobuf ", filename, ":", line, ": ", message);
  switch (level) {
    case google::protobuf::LOGLEVEL_INFO:
      base::LogInfo(text);
      break;
    case google::protobuf::LOGLEVEL_WARNING:
      base::LogWarning(text);
      break;
    default:
      base::LogError(text);
      break;
  }
}

}  // namespace

void RouteProtobufLogs() { google::protobuf::SetLogHandler(&ProtobufLog); }

}  // namespace compatd::service
