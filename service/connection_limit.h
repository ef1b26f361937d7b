#pragma once

// The open connections of the gRPC port, counted and capped. gRPC 1.51 has no
// limit of its own (GRPC_ARG_MAX_ALLOWED_INCOMING_CONNECTIONS came later); it
// does call a socket mutator (GRPC_ARG_SOCKET_MUTATOR) on every accepted
// socket, before the TLS or HTTP/2 handshake. That is where connections are
// counted, and one past the cap is shut down at once (SO_LINGER 0: a reset);
// gRPC then reads end-of-file and closes it. gRPC never tells a mutator that
// a connection closed: a connection counts as open while its descriptor
// still names the socket it was accepted as (its inode, from /proc/self/fd),
// checked on every accept and every Count().

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "grpcpp/server_builder.h"

namespace compatd::service {

class ConnectionLimit {
 public:
  explicit ConnectionLimit(int max_connections);
  ~ConnectionLimit();
  ConnectionLimit(const ConnectionLimit&) = delete;
  ConnectionLimit& operator=(const ConnectionLimit&) = delete;

  // For grpc::ServerBuilder::SetOption: installs the socket mutator. gRPC
  // owns the mutator (its reference count) and may free it on any of its
  // threads after the server is gone; once this limit is destroyed, the
  // mutator keeps every connection and counts none.
  std::unique_ptr<grpc::ServerBuilderOption> BuilderOption();

  // Connections open now (accepted and not yet closed).
  int Count();
  // Connections closed at once because the cap was reached, since start.
  int64_t refused() const;

  // Called by the mutator for every accepted socket: true to keep it.
  bool OnAccept(int fd);

  // gRPC's reference-counted socket mutator, pointing here.
  struct Mutator;

 private:
  void SweepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_connections_;
  Mutator* mutator_;  // holds one reference
  // std::mutex: TSan cannot see Debian's (uninstrumented) absl::Mutex.
  mutable std::mutex mu_;
  // Accepted descriptor -> the inode of its socket.
  absl::flat_hash_map<int, ino_t> open_ ABSL_GUARDED_BY(mu_);
  int64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace compatd::service
