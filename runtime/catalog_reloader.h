#pragma once

// Keeps a CatalogStore in step with a catalog file: the initial load, reloads
// on change (inotify on the file's directory, which also sees a Kubernetes
// ConfigMap's `..data` symlink swap), an optional periodic content check as a
// backstop, and reloads on demand (SIGHUP).
//
// A reload reads the file, compares the bytes with the catalog in force
// (equal: nothing happens), parses and validates them off the request path,
// and publishes the whole new catalog with one pointer swap. A file that is
// missing, unreadable, too large or invalid is rejected: nothing changes, the
// previous catalog keeps serving, the listener hears about it, and each
// distinct rejection is logged once.
//
//   CatalogReloader::Options options{.path = "/etc/compatd/catalog.yaml",
//                                    .interval = absl::Minutes(1)};
//   COMPATD_ASSIGN_OR_RETURN(auto reloader,
//                    CatalogReloader::Create(options, &store, &listener));
//   reloader->Start();          // watcher thread
//   ... reloader->TriggerReload();  // on SIGHUP
//   reloader->Stop();           // or destroy it

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/catalog.h"
#include "runtime/catalog_store.h"
#include "runtime/dir_watcher.h"

namespace compatd::runtime {

enum class ReloadResult {
  kLoaded,     // a new catalog was published
  kUnchanged,  // the file holds the catalog in force
  kRejected,   // unreadable or invalid; the previous catalog keeps serving
};

// "loaded", "unchanged", "rejected" (the metric's label values).
absl::string_view ReloadResultName(ReloadResult result);

class ReloadListener {
 public:
  virtual ~ReloadListener() = default;
  // Called once per reload attempt after Create() (not for the initial load),
  // in order, never concurrently (reloads are serialized): from the watcher
  // thread, or from the thread calling ReloadNow(). `published` is the catalog
  // just published (kLoaded only, else null; the store holds it too).
  // `error` (kRejected only, else empty) is one "<path>:<line>: <message>"
  // line per error, or "<path>: <why>" when the file could not be read. Must
  // not call ReloadNow() (it would deadlock); may call
  // CatalogReloader::Status() and the store.
  virtual void OnReload(ReloadResult result, const engine::Catalog* published,
                        absl::string_view error) = 0;
};

// What a CatalogReloader has done so far (CatalogReloader::Status()).
struct ReloaderStatus {
  std::string path;
  uint64_t generation = 0;  // of the catalog this reloader last published
  uint64_t loaded = 0;      // catalogs published, the initial one included
  uint64_t unchanged = 0;
  uint64_t rejected = 0;
  std::string last_error;  // the latest rejection's message; empty if none
  absl::Time last_error_at = absl::InfinitePast();
  ReloadResult last_result = ReloadResult::kLoaded;
  absl::Time last_attempt_at = absl::InfinitePast();
  // Whether the watch on the directory is in place, and why not.
  bool watching = false;
  std::string watch_error;
};

class CatalogReloader final {
 public:
  struct Options {
    std::string path;  // the catalog file; a symlink is followed
    // Content check every `interval` in addition to the watch, for changes
    // inotify cannot see (e.g. a symlink pointing into another directory, or
    // network filesystems). Zero: no periodic check.
    absl::Duration interval = absl::ZeroDuration();
  };

  // Watches the file's directory, then loads the file synchronously and
  // publishes it to `store` as generation 1 (source = path, loaded_at = now).
  // Errors (startup is fatal): INVALID_ARGUMENT for an empty path, a negative
  // interval or an invalid catalog (one "<path>:<line>: <message>" per
  // line); NOT_FOUND / PERMISSION_DENIED / FAILED_PRECONDITION when the file
  // cannot be read (missing, unreadable, not a regular file, larger than
  // catalog::kMaxCatalogBytes). `store` and `listener` (may be null) must
  // outlive the reloader.
  static absl::StatusOr<std::unique_ptr<CatalogReloader>> Create(
      Options options, runtime::CatalogStore* store, ReloadListener* listener);

  ~CatalogReloader();  // Stop()s
  CatalogReloader(const CatalogReloader&) = delete;
  CatalogReloader& operator=(const CatalogReloader&) = delete;

  // Reloads now, on the calling thread. True if a new catalog was published
  // (generation + 1), false if the file is unchanged. On error (the codes of
  // Create()) nothing changes. Thread-safe; concurrent calls are serialized.
  absl::StatusOr<bool> ReloadNow();

  // Starts the watcher thread: reloads ~kDebounce after the directory changes
  // (bursts, like the kubelet's five-step update, make one reload), every
  // `interval` if non-zero, and on TriggerReload(). No-op if started.
  void Start();
  // Stops and joins the watcher thread promptly (no-op if not started). A
  // reload in progress finishes first.
  void Stop();
  // Asks the watcher thread for an immediate reload. Never blocks;
  // thread-safe (callable from a signal-handling thread, not from a signal
  // handler). No effect unless started: use ReloadNow() then.
  void TriggerReload();

  ReloaderStatus Status() const;
  const std::string& path() const { return options_.path; }

  // Quiet time after the last directory event before reloading, and the
  // longest a continuous stream of events can delay the reload. The events
  // watched mark completed writes (close after write, rename, create), and a
  // burst such as the kubelet's update comes within a millisecond, so a few
  // milliseconds coalesce it; a reload that still lands mid-burst finds the
  // file unchanged and costs one read. Short, because it adds to every
  // reload's event-to-publish time (target 20 ms, BENCHMARKS.md).
  static constexpr absl::Duration kDebounce = absl::Milliseconds(5);
  static constexpr absl::Duration kMaxDebounce = absl::Milliseconds(500);

  // A replaced catalog is freed on the watcher thread once no request holds
  // it any more (checked every kRetiredCheck); after kMaxRetiredAge the
  // reloader lets go, and the last holder frees it.
  static constexpr absl::Duration kRetiredCheck = absl::Milliseconds(20);
  static constexpr absl::Duration kMaxRetiredAge = absl::Seconds(10);
  // Replaced catalogs waiting to be freed, for tests.
  size_t RetiredCount();

 private:
  CatalogReloader(Options options, runtime::CatalogStore* store,
                  ReloadListener* listener,
                  std::unique_ptr<DirWatcher> watcher);

  absl::StatusOr<bool> ReloadLocked(bool initial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  // Records a rejection, logs it if it differs from the previous one, tells
  // the listener. Returns `error`.
  absl::Status Reject(absl::Status error, bool log)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  void Run();
  void NoteWatchState();
  // Frees the replaced catalogs no request holds any more (and lets go of
  // those older than kMaxRetiredAge). True if some are still held.
  bool ReleaseRetired();

  const Options options_;
  runtime::CatalogStore* const store_;
  ReloadListener* const listener_;
  // Used only by the watcher thread once started (and by Create() before).
  const std::unique_ptr<DirWatcher> watcher_;

  // std::mutex rather than absl::Mutex: Debian's abseil is not built with
  // ThreadSanitizer, so TSan cannot see absl::Mutex's synchronization and
  // would report every guarded access as a race.
  std::mutex reload_mu_;
  uint64_t generation_ ABSL_GUARDED_BY(reload_mu_) = 0;
  std::string last_loaded_ ABSL_GUARDED_BY(reload_mu_);  // bytes in force
  // The most recently rejected bytes and their error, so that a bad file
  // sitting there is neither parsed nor logged again on every check.
  bool has_rejected_bytes_ ABSL_GUARDED_BY(reload_mu_) = false;
  std::string rejected_bytes_ ABSL_GUARDED_BY(reload_mu_);
  absl::Status rejected_status_ ABSL_GUARDED_BY(reload_mu_);
  // The latest read error's message, so that it is logged once.
  std::string read_error_ ABSL_GUARDED_BY(reload_mu_);
  struct Retired {
    std::shared_ptr<const engine::Catalog> catalog;
    absl::Time since;
  };
  std::vector<Retired> retired_ ABSL_GUARDED_BY(reload_mu_);

  mutable std::mutex status_mu_;
  ReloaderStatus status_ ABSL_GUARDED_BY(status_mu_);

  std::mutex thread_mu_;  // serializes Start() and Stop()
  std::thread thread_ ABSL_GUARDED_BY(thread_mu_);
  std::atomic<bool> stop_{false};
  std::atomic<bool> trigger_{false};
  std::atomic<bool> running_{false};
  bool logged_watching_ = true;  // watcher thread only
};

}  // namespace compatd::runtime
