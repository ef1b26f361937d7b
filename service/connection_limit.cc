#include "service/connection_limit.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>

#include "grpc/support/sync.h"
#include "grpcpp/support/channel_arguments.h"

// gRPC 1.51's socket mutator (src/core/lib/iomgr/socket_mutator.h, which
// Debian does not install; the public headers declare the struct only).
// libgrpc exports these functions with C++ linkage.
typedef enum {
  GRPC_FD_CLIENT_CONNECTION_USAGE,
  GRPC_FD_SERVER_LISTENER_USAGE,
  GRPC_FD_SERVER_CONNECTION_USAGE,
} grpc_fd_usage;
typedef struct {
  int fd;
  grpc_fd_usage usage;
} grpc_mutate_socket_info;
struct grpc_socket_mutator_vtable {
  bool (*mutate_fd)(int fd, grpc_socket_mutator* mutator);
  int (*compare)(grpc_socket_mutator* a, grpc_socket_mutator* b);
  void (*destroy)(grpc_socket_mutator* mutator);
  bool (*mutate_fd_2)(const grpc_mutate_socket_info* info,
                      grpc_socket_mutator* mutator);
};
struct grpc_socket_mutator {
  const grpc_socket_mutator_vtable* vtable;
  gpr_refcount refcount;
};
void grpc_socket_mutator_init(grpc_socket_mutator* mutator,
                              const grpc_socket_mutator_vtable* vtable);
grpc_socket_mutator* grpc_socket_mutator_ref(grpc_socket_mutator* mutator);
void grpc_socket_mutator_unref(grpc_socket_mutator* mutator);

namespace compatd::service {

struct ConnectionLimit::Mutator : grpc_socket_mutator {
  // Null once the limit is gone; gRPC may still accept (and hold the
  // mutator) after that.
  ConnectionLimit* limit;  // guarded by MutatorMutex()
  // The one mutex every thread takes to touch a Mutator, its allocation and
  // its delete included. The mutator's owner is gRPC's reference count (a
  // gpr_refcount in libgrpc): its last reference may drop on any gRPC thread
  // (a channel args AVL released after the server is gone), and that count's
  // atomics are in uninstrumented Debian libgrpc, so ThreadSanitizer sees no
  // order between the main thread's writes (new, init, `limit`) and that
  // thread's delete. Taking this std::mutex on both sides makes the order the
  // count already gives visible, and covers the accept threads' reads too.
  static std::mutex& MutatorMutex() {
    static std::mutex* const mu = new std::mutex;
    return *mu;
  }
};

namespace {

bool MutateFd(int, grpc_socket_mutator*) { return true; }

// A failure here would stop gRPC's acceptor for good (tcp_server_posix.cc
// treats it as fatal), so a refused connection is shut down, not failed.
bool MutateFd2(const grpc_mutate_socket_info* info,
               grpc_socket_mutator* mutator) {
  if (info->usage != GRPC_FD_SERVER_CONNECTION_USAGE) return true;
  std::lock_guard<std::mutex> lock(ConnectionLimit::Mutator::MutatorMutex());
  ConnectionLimit* limit =
      static_cast<ConnectionLimit::Mutator*>(mutator)->limit;
  if (limit != nullptr) limit->OnAccept(info->fd);
  return true;
}

int Compare(grpc_socket_mutator* a, grpc_socket_mutator* b) {
  return a < b ? -1 : (a > b ? 1 : 0);
}

// Runs on whichever thread drops the last reference (see MutatorMutex).
void Destroy(grpc_socket_mutator* mutator) {
  std::lock_guard<std::mutex> lock(ConnectionLimit::Mutator::MutatorMutex());
  delete static_cast<ConnectionLimit::Mutator*>(mutator);
}

constexpr grpc_socket_mutator_vtable kVtable = {MutateFd, Compare, Destroy,
                                                MutateFd2};

class MutatorOption final : public grpc::ServerBuilderOption {
 public:
  explicit MutatorOption(grpc_socket_mutator* mutator) : mutator_(mutator) {}
  void UpdateArguments(grpc::ChannelArguments* args) override {
    // The argument takes over the reference given here.
    args->SetSocketMutator(grpc_socket_mutator_ref(mutator_));
  }
  void UpdatePlugins(
      std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>*) override {}

 private:
  grpc_socket_mutator* mutator_;
};

// The inode of the socket `fd` names now; 0 if it names none. Read from
// /proc/self/fd ("socket:[12345]"), not fstat(fd): the descriptor may have
// been closed by gRPC and taken by another thread's accept() meanwhile, which
// the inode tells apart either way; fstat would also be an access to that
// other thread's descriptor (ThreadSanitizer reports it as a race), a path
// lookup is not.
ino_t SocketInode(int fd) {
  char path[32];
  std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  char target[64];
  const ssize_t n = readlink(path, target, sizeof(target) - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  unsigned long long inode = 0;
  if (std::sscanf(target, "socket:[%llu]", &inode) != 1) return 0;
  return static_cast<ino_t>(inode);
}

}  // namespace

ConnectionLimit::ConnectionLimit(int max_connections)
    : max_connections_(max_connections) {
  std::lock_guard<std::mutex> lock(Mutator::MutatorMutex());
  mutator_ = new Mutator;
  grpc_socket_mutator_init(mutator_, &kVtable);
  mutator_->limit = this;
}

ConnectionLimit::~ConnectionLimit() {
  {
    std::lock_guard<std::mutex> lock(Mutator::MutatorMutex());
    mutator_->limit = nullptr;
  }
  // Outside the lock: when this is the last reference, Destroy takes it.
  grpc_socket_mutator_unref(mutator_);
}

std::unique_ptr<grpc::ServerBuilderOption> ConnectionLimit::BuilderOption() {
  return std::make_unique<MutatorOption>(mutator_);
}

void ConnectionLimit::SweepLocked() {
  for (auto it = open_.begin(); it != open_.end();) {
    auto current = it++;
    if (SocketInode(current->first) != current->second) open_.erase(current);
  }
}

bool ConnectionLimit::OnAccept(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  SweepLocked();
  if (static_cast<int>(open_.size()) < max_connections_) {
    open_[fd] = SocketInode(fd);
    return true;
  }
  ++refused_;
  // A reset instead of a goodbye, and no byte read or written: gRPC's first
  // read sees end-of-file and closes the socket.
  const linger reset{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  shutdown(fd, SHUT_RDWR);
  return false;
}

int ConnectionLimit::Count() {
  std::lock_guard<std::mutex> lock(mu_);
  SweepLocked();
  return static_cast<int>(open_.size());
}

int64_t ConnectionLimit::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

}  // namespace compatd::service
