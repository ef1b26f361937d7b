#include "runtime/dir_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace compatd::runtime {
namespace {

// IN_CLOSE_NOWRITE, IN_OPEN and IN_ACCESS are left out on purpose: reading the
// catalog must not look like a change. IN_MODIFY fires on every write(): it
// is reported so that a reader can tell a file that is being written (and must
// not be read yet) from one that is complete, which it is at the writer's
// close (IN_CLOSE_WRITE). IN_IGNORED, IN_UNMOUNT and IN_Q_OVERFLOW are always
// delivered.
constexpr uint32_t kWatchMask =
    IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_MODIFY |
    IN_DELETE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

// poll()'s timeout for "until `until`": rounded up so that we never wake up
// just before the deadline and spin; -1 for forever.
int PollTimeoutMs(absl::Time until) {
  if (until == absl::InfiniteFuture()) return -1;
  const absl::Duration left = until - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  const int64_t ms =
      absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)));
  return static_cast<int>(std::min<int64_t>(ms, INT_MAX));
}

}  // namespace

absl::string_view DirEventKindName(DirEvent::Kind kind) {
  switch (kind) {
    case DirEvent::Kind::kCreated:
      return "created";
    case DirEvent::Kind::kMovedIn:
      return "moved-in";
    case DirEvent::Kind::kMovedOut:
      return "moved-out";
    case DirEvent::Kind::kWritten:
      return "written";
    case DirEvent::Kind::kModified:
      return "modified";
    case DirEvent::Kind::kDeleted:
      return "deleted";
    case DirEvent::Kind::kAttributes:
      return "attributes";
    case DirEvent::Kind::kOverflow:
      return "overflow";
    case DirEvent::Kind::kWatchLost:
      return "watch-lost";
    case DirEvent::Kind::kWatchEstablished:
      return "watch-established";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<DirWatcher>> DirWatcher::Create(
    std::string dir) {
  const int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    const int error = errno;
    return absl::InternalError(absl::StrCat(
        "cannot create an eventfd to watch ", dir, ": ", std::strerror(error)));
  }
  std::unique_ptr<DirWatcher> watcher(new DirWatcher(std::move(dir), wake_fd));
  watcher->TryWatch();  // failure is retried by Wait()
  return watcher;
}

DirWatcher::DirWatcher(std::string dir, int wake_fd)
    : dir_(std::move(dir)), wake_fd_(wake_fd) {}

DirWatcher::~DirWatcher() {
  if (inotify_fd_ >= 0) close(inotify_fd_);
  close(wake_fd_);
}

bool DirWatcher::TryWatch() {
  if (inotify_fd_ < 0) {
    inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotify_fd_ < 0) {
      // EMFILE here usually means fs.inotify.max_user_instances is exhausted.
      watch_status_ = absl::ErrnoToStatus(
          errno, absl::StrCat("cannot initialize inotify to watch ", dir_));
      next_retry_ = absl::Now() + kRetryInterval;
      return false;
    }
  }
  const int wd = inotify_add_watch(inotify_fd_, dir_.c_str(), kWatchMask);
  if (wd < 0) {
    watch_status_ =
        absl::ErrnoToStatus(errno, absl::StrCat("cannot watch ", dir_));
    next_retry_ = absl::Now() + kRetryInterval;
    return false;
  }
  wd_ = wd;
  watch_status_ = absl::OkStatus();
  return true;
}

void DirWatcher::LoseWatch(absl::Status why, bool close_inotify) {
  if (wd_ >= 0 && inotify_fd_ >= 0) {
    // Needed after IN_MOVE_SELF (the watch would follow the moved directory);
    // harmless (EINVAL) when the kernel already removed the watch.
    inotify_rm_watch(inotify_fd_, wd_);
  }
  wd_ = -1;
  if (close_inotify && inotify_fd_ >= 0) {
    close(inotify_fd_);
    inotify_fd_ = -1;
  }
  watch_status_ = std::move(why);
  // The directory may already be back (deleted and recreated): retry at once.
  next_retry_ = absl::Now();
}

void DirWatcher::ReadEvents(std::vector<DirEvent>& out) {
  alignas(struct inotify_event) char buffer[16 * 1024];
  for (;;) {
    const ssize_t n = read(inotify_fd_, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      LoseWatch(
          absl::ErrnoToStatus(
              errno, absl::StrCat("cannot read inotify events for ", dir_)),
          /*close_inotify=*/true);
      out.push_back({DirEvent::Kind::kWatchLost, ""});
      return;
    }
    if (n == 0) return;
    for (ssize_t offset = 0; offset < n;) {
      const auto* event =
          reinterpret_cast<const struct inotify_event*>(buffer + offset);
      offset += static_cast<ssize_t>(sizeof(struct inotify_event) + event->len);
      const uint32_t mask = event->mask;
      if (mask & IN_Q_OVERFLOW) {
        out.push_back({DirEvent::Kind::kOverflow, ""});
        continue;
      }
      // Events of a watch we already dropped (the IN_IGNORED that follows
      // IN_DELETE_SELF, anything queued before IN_MOVE_SELF) are stale.
      if (wd_ < 0 || event->wd != wd_) continue;
      if (mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED)) {
        const char* what = (mask & IN_DELETE_SELF) ? "was deleted"
                           : (mask & IN_MOVE_SELF) ? "was moved away"
                           : (mask & IN_UNMOUNT)   ? "was unmounted"
                                                   : "is no longer watched";
        LoseWatch(absl::UnavailableError(absl::StrCat(dir_, " ", what)),
                  /*close_inotify=*/false);
        out.push_back({DirEvent::Kind::kWatchLost, ""});
        continue;
      }
      // The name is NUL-padded to `len`.
      std::string name =
          event->len > 0
              ? std::string(event->name, strnlen(event->name, event->len))
              : std::string();
      DirEvent::Kind kind;
      if (mask & IN_CREATE) {
        kind = DirEvent::Kind::kCreated;
      } else if (mask & IN_MOVED_TO) {
        kind = DirEvent::Kind::kMovedIn;
      } else if (mask & IN_MOVED_FROM) {
        kind = DirEvent::Kind::kMovedOut;
      } else if (mask & IN_CLOSE_WRITE) {
        kind = DirEvent::Kind::kWritten;
      } else if (mask & IN_MODIFY) {
        kind = DirEvent::Kind::kModified;
      } else if (mask & IN_DELETE) {
        kind = DirEvent::Kind::kDeleted;
      } else if (mask & IN_ATTRIB) {
        kind = DirEvent::Kind::kAttributes;
      } else {
        continue;  // not one we asked for
      }
      out.push_back({kind, std::move(name)});
    }
  }
}

DirWatcher::WaitResult DirWatcher::Wait(absl::Duration timeout) {
  WaitResult result;
  const absl::Time deadline = timeout == absl::InfiniteDuration()
                                  ? absl::InfiniteFuture()
                                  : absl::Now() + timeout;
  for (;;) {
    if (wd_ < 0 && absl::Now() >= next_retry_ && TryWatch()) {
      result.events.push_back({DirEvent::Kind::kWatchEstablished, ""});
    }
    if (result.woken || !result.events.empty()) return result;

    absl::Time until = deadline;
    if (wd_ < 0) until = std::min(until, next_retry_);
    struct pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    const nfds_t nfds = inotify_fd_ >= 0 ? 2 : 1;
    const int ready = poll(fds, nfds, PollTimeoutMs(until));
    if (ready < 0 && errno != EINTR) {
      // Only EFAULT/EINVAL/ENOMEM are possible; none is retryable in a loop.
      return result;
    }
    if (ready > 0) {
      if (fds[0].revents != 0) {
        uint64_t count;
        // Resets the eventfd counter; EAGAIN (already reset) is fine.
        while (read(wake_fd_, &count, sizeof(count)) < 0 && errno == EINTR) {
        }
        result.woken = true;
      }
      if (nfds == 2 && fds[1].revents != 0) ReadEvents(result.events);
    }
    if (result.woken || !result.events.empty()) continue;  // retry, return
    if (absl::Now() >= deadline) return result;
  }
}

void DirWatcher::Wake() {
  const uint64_t one = 1;
  // EAGAIN only if the counter is saturated, i.e. already signalled.
  while (write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

}  // namespace compatd::runtime
