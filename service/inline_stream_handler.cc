#include "service/inline_stream_handler.h"

#include <atomic>
#include <functional>
#include <utility>

#include "base/tsan.h"

namespace compatd::service {

// The last op of each batch: the hand-off to the thread that will run the
// batch's callback (base/tsan.h), released once every other op of the batch
// has read what it sends (the context's metadata maps, the status), just
// before grpc_call_start_batch. A release before PerformOps left those reads
// unordered with the completion's thread, which may free the context right
// after (CallOnDone's call_requester): TSan saw a heavy-lane thread's read of
// the context race its free. In a named namespace: TSan's suppressions
// (tests/tsan.supp) match gRPC's op set frames by their qualified names, which
// a type of an anonymous namespace in their arguments takes away.
template <int I>
class HandOffOp : public grpc::internal::CallNoOp<I> {
 public:
  void set_hand_off_key(const void* key) { key_ = key; }

 protected:
  void AddOp(grpc_op* /*ops*/, size_t* /*nops*/) {
    compatd::base::TsanRelease(key_);
  }

 private:
  const void* key_ = nullptr;
};

}  // namespace compatd::service

namespace grpc::internal {

// compatd::service::InlineStreamHandler.
using InlineHandler =
    CallbackBidiHandler<compatd::service::InlineReactions, grpc::ByteBuffer>;

// gRPC's ServerCallbackReaderWriterImpl of CallbackBidiHandler, line for line,
// with can_inline and inline_ondone true throughout (the header says why).
class InlineHandler::Stream final
    : public grpc::ServerCallbackReaderWriter<grpc::ByteBuffer,
                                              grpc::ByteBuffer> {
 public:
  Stream(grpc::CallbackServerContext* ctx, grpc::internal::Call* call,
         std::function<void()> call_requester)
      : ctx_(ctx), call_(*call), call_requester_(std::move(call_requester)) {
    meta_ops_.set_hand_off_key(this);
    finish_ops_.set_hand_off_key(this);
    write_ops_.set_hand_off_key(this);
    read_ops_.set_hand_off_key(this);
  }

  void Finish(grpc::Status status) override {
    finish_tag_.Set(
        call_.call(),
        [this](bool) {
          compatd::base::TsanAcquire(this);
          MaybeDone(/*inline_ondone=*/true);
        },
        &finish_ops_, /*can_inline=*/true);
    finish_ops_.set_core_cq_tag(&finish_tag_);
    SendInitialMetadataWith(&finish_ops_);
    finish_ops_.ServerSendStatus(&ctx_->trailing_metadata_, status);
    call_.PerformOps(&finish_ops_);
  }

  void SendInitialMetadata() override {
    Ref();
    meta_tag_.Set(
        call_.call(),
        [this](bool ok) {
          compatd::base::TsanAcquire(this);
          reactor_.load(std::memory_order_relaxed)
              ->OnSendInitialMetadataDone(ok);
          MaybeDone(/*inline_ondone=*/true);
        },
        &meta_ops_, /*can_inline=*/true);
    SendInitialMetadataWith(&meta_ops_);
    meta_ops_.set_core_cq_tag(&meta_tag_);
    call_.PerformOps(&meta_ops_);
  }

  void Write(const grpc::ByteBuffer* message,
             grpc::WriteOptions options) override {
    Ref();
    if (options.is_last_message()) options.set_buffer_hint();
    SendInitialMetadataWith(&write_ops_);
    // Sending a ByteBuffer only takes a reference to its slices; it cannot
    // fail (gRPC's handler asserts the same).
    GPR_CODEGEN_ASSERT(write_ops_.SendMessagePtr(message, options).ok());
    call_.PerformOps(&write_ops_);
  }

  void WriteAndFinish(const grpc::ByteBuffer* message,
                      grpc::WriteOptions options,
                      grpc::Status status) override {
    GPR_CODEGEN_ASSERT(finish_ops_.SendMessagePtr(message, options).ok());
    Finish(std::move(status));
  }

  void Read(grpc::ByteBuffer* message) override {
    Ref();
    read_ops_.RecvMessage(message);
    call_.PerformOps(&read_ops_);
  }

  // Binds `reactor` (releasing the operations it started in its
  // constructor); the last step of RunHandler.
  void SetupReactor(Reactor* reactor) {
    reactor_.store(reactor, std::memory_order_relaxed);
    write_tag_.Set(
        call_.call(),
        [this, reactor](bool ok) {
          compatd::base::TsanAcquire(this);
          reactor->OnWriteDone(ok);
          MaybeDone(/*inline_ondone=*/true);
        },
        &write_ops_, /*can_inline=*/true);
    write_ops_.set_core_cq_tag(&write_tag_);
    read_tag_.Set(
        call_.call(),
        [this, reactor](bool ok) {
          compatd::base::TsanAcquire(this);
          if (!ok) ctx_->MaybeMarkCancelledOnRead();
          reactor->OnReadDone(ok);
          MaybeDone(/*inline_ondone=*/true);
        },
        &read_ops_, /*can_inline=*/true);
    read_ops_.set_core_cq_tag(&read_tag_);
    HandOff();
    BindReactor(reactor);
    MaybeCallOnCancel(reactor);
    MaybeDone(/*inline_ondone=*/true);
  }

 private:
  // libgrpc runs the tags' callbacks on its threads, ordered after the
  // operation that started them by synchronization TSan cannot see
  // (base/tsan.h): released by each batch's last op (HandOffOp) and before the
  // reactor's binding, acquired first thing in each callback.
  void HandOff() { compatd::base::TsanRelease(this); }

  template <typename Ops>
  void SendInitialMetadataWith(Ops* ops) {
    if (ctx_->sent_initial_metadata_) return;
    ops->SendInitialMetadata(&ctx_->initial_metadata_,
                             ctx_->initial_metadata_flags());
    if (ctx_->compression_level_set()) {
      ops->set_compression_level(ctx_->compression_level());
    }
    ctx_->sent_initial_metadata_ = true;
  }

  void CallOnDone() override {
    compatd::base::TsanAcquire(this);
    reactor_.load(std::memory_order_relaxed)->OnDone();
    grpc_call* call = call_.call();
    auto call_requester = std::move(call_requester_);
    if (ctx_->context_allocator() != nullptr) {
      ctx_->context_allocator()->Release(ctx_);
    }
    this->~Stream();  // allocated in the call's arena
    grpc::g_core_codegen_interface->grpc_call_unref(call);
    call_requester();
  }

  grpc::internal::ServerReactor* reactor() override {
    compatd::base::TsanAcquire(this);  // called from the completion op's thread
    return reactor_.load(std::memory_order_relaxed);
  }

  grpc::internal::CallOpSet<grpc::internal::CallOpSendInitialMetadata,
                            compatd::service::HandOffOp<2>>
      meta_ops_;
  grpc::internal::CallbackWithSuccessTag meta_tag_;
  grpc::internal::CallOpSet<grpc::internal::CallOpSendInitialMetadata,
                            grpc::internal::CallOpSendMessage,
                            grpc::internal::CallOpServerSendStatus,
                            compatd::service::HandOffOp<4>>
      finish_ops_;
  grpc::internal::CallbackWithSuccessTag finish_tag_;
  grpc::internal::CallOpSet<grpc::internal::CallOpSendInitialMetadata,
                            grpc::internal::CallOpSendMessage,
                            compatd::service::HandOffOp<3>>
      write_ops_;
  grpc::internal::CallbackWithSuccessTag write_tag_;
  grpc::internal::CallOpSet<grpc::internal::CallOpRecvMessage<grpc::ByteBuffer>,
                            compatd::service::HandOffOp<2>>
      read_ops_;
  grpc::internal::CallbackWithSuccessTag read_tag_;

  grpc::CallbackServerContext* const ctx_;
  grpc::internal::Call call_;
  std::function<void()> call_requester_;
  // Set once in SetupReactor, before any reaction can run (gRPC's comment on
  // ServerCallbackUnaryImpl::reactor_ explains the relaxed order).
  std::atomic<Reactor*> reactor_{nullptr};
};

void InlineHandler::RunHandler(const HandlerParameter& param) {
  grpc::g_core_codegen_interface->grpc_call_ref(param.call->call());
  auto* stream = new (grpc::g_core_codegen_interface->grpc_call_arena_alloc(
      param.call->call(), sizeof(Stream)))
      Stream(static_cast<grpc::CallbackServerContext*>(param.server_context),
             param.call, param.call_requester);
  compatd::base::TsanRelease(stream);
  param.server_context->BeginCompletionOp(
      param.call,
      [stream](bool) {
        compatd::base::TsanAcquire(stream);
        stream->MaybeDone(/*inline_ondone=*/true);
      },
      stream);
  // A streaming call carries no request to deserialize: param.status is OK.
  stream->SetupReactor(make_reactor_(
      static_cast<grpc::CallbackServerContext*>(param.server_context)));
}

}  // namespace grpc::internal
