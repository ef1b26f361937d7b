#pragma once

// Watches one directory with inotify (Linux) and reports changes to its
// entries. Watching the directory rather than a file is what makes Kubernetes
// ConfigMap updates visible: the kubelet never writes `catalog.yaml` (a symlink
// to `..data/catalog.yaml`); it renames a new `..data_tmp` symlink over
// `..data` (IN_MOVED_TO "..data"). Editors that write a temporary file and
// rename it show up the same way, and in-place writes as IN_CLOSE_WRITE, after
// one IN_MODIFY per write() (kModified: a file is being written; it is
// complete only at its IN_CLOSE_WRITE).
//
// Survives the directory disappearing: the watch is then retried every
// kRetryInterval, and a kWatchEstablished event reports that it is back (the
// directory's contents may have changed in between). A directory that does not
// exist yet when the watcher is created is handled the same way.
//
// Reading files in the directory produces no events (IN_OPEN, IN_ACCESS and
// IN_CLOSE_NOWRITE are not watched), so a reader reacting to events cannot
// trigger itself.
//
// Example:
//   COMPATD_ASSIGN_OR_RETURN(auto watcher, DirWatcher::Create("/etc/compatd"));
//   DirWatcher::WaitResult r = watcher->Wait(absl::Seconds(1));
//   for (const DirEvent& e : r.events) ...  // e.g. {kMovedIn, "..data"}

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace compatd::runtime {

struct DirEvent {
  enum class Kind {
    kCreated,           // IN_CREATE: a file, directory or symlink was created
    kMovedIn,           // IN_MOVED_TO: renamed into (or within) the directory
    kMovedOut,          // IN_MOVED_FROM: renamed away (or within)
    kWritten,           // IN_CLOSE_WRITE: a file opened for writing was closed
    kModified,          // IN_MODIFY: a file was written to (or truncated)
    kDeleted,           // IN_DELETE
    kAttributes,        // IN_ATTRIB: permissions, owner, timestamps, links
    kOverflow,          // IN_Q_OVERFLOW: events were lost; anything may differ
    kWatchLost,         // the directory was deleted, moved away or unmounted
    kWatchEstablished,  // the watch is (back) in place after being lost or
                        // never set up; the contents may have changed
  };
  Kind kind;
  std::string name;  // the entry's name in the directory; empty for the last 3
};

// "created", "moved-in", ... for logs and test messages.
absl::string_view DirEventKindName(DirEvent::Kind kind);

class DirWatcher final {
 public:
  // How often a lost (or never established) watch is retried.
  static constexpr absl::Duration kRetryInterval = absl::Milliseconds(100);

  struct WaitResult {
    std::vector<DirEvent> events;  // in the order the kernel reported them
    bool woken = false;            // Wake() was called
  };

  // Starts watching `dir`. A directory that cannot be watched yet (missing,
  // not readable, inotify limits reached) is not an error: watching() is false
  // and the watch is retried by Wait(). Fails (INTERNAL) only if the wake-up
  // eventfd cannot be created.
  static absl::StatusOr<std::unique_ptr<DirWatcher>> Create(std::string dir);

  ~DirWatcher();
  DirWatcher(const DirWatcher&) = delete;
  DirWatcher& operator=(const DirWatcher&) = delete;

  // Blocks until something changed in the directory, Wake() was called, or
  // `timeout` passed (absl::InfiniteDuration() waits forever), then returns
  // every event available without blocking further. Retries a lost watch.
  // Never fails: errors of the underlying calls become kWatchLost (and
  // retries). Call from one thread at a time.
  WaitResult Wait(absl::Duration timeout);

  // Makes the current or next Wait() return promptly with woken = true.
  // Thread-safe; never blocks.
  void Wake();

  // Whether a watch on the directory is in place; why not, if it is not (e.g.
  // NOT_FOUND "cannot watch /etc/compatd: No such file or directory"). Same
  // thread as Wait().
  bool watching() const { return wd_ >= 0; }
  const absl::Status& watch_status() const { return watch_status_; }

  const std::string& dir() const { return dir_; }

 private:
  DirWatcher(std::string dir, int wake_fd);

  // Tries to (re)establish the watch; returns true if it did.
  bool TryWatch();
  // Drops the current watch (and the inotify instance on read errors).
  void LoseWatch(absl::Status why, bool close_inotify);
  void ReadEvents(std::vector<DirEvent>& out);

  const std::string dir_;
  const int wake_fd_;  // eventfd
  int inotify_fd_ = -1;
  int wd_ = -1;
  absl::Status watch_status_;
  absl::Time next_retry_ = absl::InfinitePast();
};

}  // namespace compatd::runtime
