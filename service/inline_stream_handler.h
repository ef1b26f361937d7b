#pragma once

// The method handler of compatd's unary methods: gRPC 1.51's
// CallbackBidiHandler<ByteBuffer, ByteBuffer> (grpcpp/impl/codegen/
// server_callback_handlers.h), with one difference: every reaction runs where
// its operation completed, as gRPC runs a typed unary method's handler,
// instead of being handed to gRPC's default executor thread.
//
// gRPC's bidi handler hands each OnReadDone and OnDone to the executor because
// a general reactor may block. compatd's unary reactor answers from memory and
// never blocks; with the stock handler each call paid two thread hand-offs
// (futex wake-ups were 18% of the server's CPU samples at saturation, and the
// QPS ratio to a do-nothing server fell from 90% to 65-77%).
//
// Only for reactors whose reactions (OnReadDone, OnWriteDone, OnDone, ...) are
// short and never block or wait on another call.

#include <functional>
#include <utility>

#include "grpcpp/impl/codegen/server_callback_handlers.h"
#include "grpcpp/impl/rpc_service_method.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"

namespace compatd::service {
// The tag that names compatd's specialization below; nothing else uses it.
struct InlineReactions;
}  // namespace compatd::service

// An explicit specialization of gRPC's own handler template rather than a
// class of compatd's: grpc::ServerContextBase grants the state a handler needs
// (initial metadata, the completion op) to CallbackBidiHandler
// specializations only.
template <>
class grpc::internal::CallbackBidiHandler<compatd::service::InlineReactions,
                                          grpc::ByteBuffer>
    final : public grpc::internal::MethodHandler {
 public:
  using Reactor = grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>;

  // `make_reactor` never returns null.
  explicit CallbackBidiHandler(
      std::function<Reactor*(grpc::CallbackServerContext*)> make_reactor)
      : make_reactor_(std::move(make_reactor)) {}

  void RunHandler(const HandlerParameter& param) override;

 private:
  class Stream;

  std::function<Reactor*(grpc::CallbackServerContext*)> make_reactor_;
};

namespace compatd::service {
using InlineStreamHandler =
    grpc::internal::CallbackBidiHandler<InlineReactions, grpc::ByteBuffer>;
}  // namespace compatd::service
