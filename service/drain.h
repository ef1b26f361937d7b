#pragma once

// Graceful drain of the gRPC port: count the unary calls in flight, and at
// shutdown close connections as soon as none is (instead of waiting out the
// grace period for idle connections and never-ending streams).

#include <atomic>
#include <memory>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/server_interceptor.h"

namespace compatd::service {

// A server interceptor factory that counts the unary calls of every service
// in `*in_flight` from dispatch until gRPC is done with them.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewUnaryCallCounter(std::atomic<int>* in_flight);

// Stops `server` (GOAWAY, no new calls), lets the unary calls counted in
// `unary_calls_in_flight` finish for up to `grace`, then cancels what is
// left and waits until gRPC is done. Health must be NOT_SERVING already.
void DrainGrpcServer(grpc::Server* server,
                     const std::atomic<int>& unary_calls_in_flight,
                     absl::Duration grace);

}  // namespace compatd::service
