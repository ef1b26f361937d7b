#pragma once

// Keeps the catalog pipeline in step with a catalog source: the initial load,
// reloads on change (inotify on the source's directory, which also sees a
// Kubernetes ConfigMap's `..data` symlink swap), an optional periodic content
// check as a backstop, and reloads on demand (SIGHUP). A static source (the
// embedded catalog) is loaded once and never watched.
//
// Only a complete file is read: a reload follows a writer's close
// (IN_CLOSE_WRITE) or a rename into the directory (the ConfigMap swap, an
// editor's write-and-rename), never the creation or deletion of a file, and
// waits until the directory has been quiet for kDebounce. A file some process
// still has open for writing is not read (the kernel says so through a read
// lease where compatd owns the file; elsewhere a write seen without its close
// counts, for up to kMaxWriterWait): the reload waits for the writer's close,
// checking every kWriterPoll, and a file that changed while it was read is
// read again. Waiting is not a rejection; it is logged once.
//
// A reload reads the source, compares the bytes with the catalog in force
// (equal: nothing happens), parses and validates them off the request path,
// and hands the catalog to the pipeline, which publishes it with one swap. A
// file that is missing, unreadable, too large or invalid is rejected: nothing
// changes, the previous snapshot keeps serving, the pipeline records it, and
// each distinct rejection is logged once.
//
//   COMPATD_ASSIGN_OR_RETURN(auto reloader, CatalogReloader::Create(
//       {.source = NewFileCatalogSource("/etc/compatd/catalog.yaml"),
//        .interval = absl::Minutes(1)}, &pipeline));
//   reloader->Start();          // watcher thread (none for a static source)
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
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cluster/profile.h"
#include "engine/catalog.h"
#include "runtime/catalog_pipeline.h"
#include "runtime/catalog_source.h"
#include "runtime/dir_watcher.h"
#include "runtime/reload_result.h"

namespace compatd::runtime {

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
    std::unique_ptr<CatalogSource> source;
    // Content check every `interval` in addition to the watch, for changes
    // inotify cannot see (e.g. a symlink pointing into another directory, or
    // network filesystems). Zero: no periodic check. Ignored for a static
    // source.
    absl::Duration interval = absl::ZeroDuration();
    // The pipeline's slot this source fills (CatalogPipeline::PublishLine):
    // one reloader per catalog file, each reloaded on its own.
    size_t slot = 0;
    // The source holds a cluster profile (cluster/profile.h: compatd's own
    // format, a static pod manifest, a kubeadm or Cluster API configuration,
    // /version JSON) instead of a catalog: it is read with `profile_options`
    // (--cluster-version, --upgrade-target) and put in force with the
    // pipeline's SetCluster. Everything else (watch, debounce, writers,
    // rejections) is as for a catalog.
    bool cluster_profile = false;
    cluster::ReadOptions profile_options = {};
  };

  // Watches the source's directory (if it has one), then loads it
  // synchronously and publishes it through `pipeline` (the start-up publish),
  // waiting up to kMaxStartupWait for a writer that has the file open.
  // Errors (startup is fatal): INVALID_ARGUMENT for a missing source or
  // pipeline, a negative interval or an invalid catalog (one
  // "<name>:<line>: <message>" per line); NOT_FOUND / PERMISSION_DENIED /
  // FAILED_PRECONDITION when the file cannot be read (missing, unreadable,
  // not a regular file, larger than catalog::kMaxCatalogBytes); UNAVAILABLE
  // when it was still open for writing after kMaxStartupWait. `pipeline`
  // must outlive the reloader.
  static absl::StatusOr<std::unique_ptr<CatalogReloader>> Create(
      Options options, CatalogPipeline* pipeline);

  ~CatalogReloader();  // Stop()s
  CatalogReloader(const CatalogReloader&) = delete;
  CatalogReloader& operator=(const CatalogReloader&) = delete;

  // Reloads now, on the calling thread. True if a new catalog was published
  // (generation + 1), false if the source is unchanged. On error (the codes of
  // Create()) nothing changes; UNAVAILABLE (the file is being written) is not
  // a rejection: try again. Thread-safe; concurrent calls are serialized.
  absl::StatusOr<bool> ReloadNow();

  // Starts watching: reloads ~kDebounce after the directory changes
  // (bursts, like the kubelet's five-step update, make one reload), every
  // `interval` if non-zero, and on TriggerReload(). No-op if started. The
  // reloaders of one directory share its watch and its thread (one inotify
  // instance, one eventfd, one thread per directory, however many files: a
  // directory of 300 catalogs took 300 of each, past Linux's 128 inotify
  // instances per user); the thread lives while a reloader of the directory
  // does.
  void Start();
  // Stops watching promptly (no-op if not started). A reload in progress
  // (of any reloader of the directory) finishes first.
  void Stop();
  // Asks the watcher thread for an immediate reload. Never blocks;
  // thread-safe (callable from a signal-handling thread, not from a signal
  // handler). No effect unless started: use ReloadNow() then.
  void TriggerReload();

  ReloaderStatus Status() const;
  // The source's name (its path for a file).
  const std::string& path() const { return options_.source->name(); }

  // Quiet time after the last directory event before reloading, and the
  // longest a continuous stream of events can delay the reload. The events
  // watched mark completed writes (close after write, rename, create), and a
  // burst such as the kubelet's update comes within a millisecond, so a few
  // milliseconds coalesce it; a reload that still lands mid-burst finds the
  // file unchanged and costs one read. Short, because it adds to every
  // reload's event-to-publish time (target 20 ms, BENCHMARKS.md).
  static constexpr absl::Duration kDebounce = absl::Milliseconds(5);
  static constexpr absl::Duration kMaxDebounce = absl::Milliseconds(500);
  // While the file is open for writing: how often to look again, how long a
  // write without its close (where the kernel cannot tell) holds a reload
  // back, and how long start-up waits for the writer.
  static constexpr absl::Duration kWriterPoll = absl::Milliseconds(100);
  static constexpr absl::Duration kMaxWriterWait = absl::Minutes(1);
  static constexpr absl::Duration kMaxStartupWait = absl::Seconds(10);

  // A replaced catalog is freed on the watcher thread once no request holds
  // it any more (checked every kRetiredCheck); after kMaxRetiredAge the
  // reloader lets go, and the last holder frees it.
  static constexpr absl::Duration kRetiredCheck = absl::Milliseconds(20);
  static constexpr absl::Duration kMaxRetiredAge = absl::Seconds(10);
  // Replaced catalogs waiting to be freed, for tests.
  size_t RetiredCount();

 private:
  // One watched directory: its DirWatcher and the thread that reloads its
  // reloaders (catalog_reloader.cc).
  struct DirectoryLoop;

  CatalogReloader(Options options, CatalogPipeline* pipeline,
                  std::shared_ptr<DirectoryLoop> loop);

  absl::StatusOr<bool> ReloadLocked(bool initial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  // ReloadLocked's last step: `catalog` (parsed from `bytes`) into the
  // pipeline's slot; true once published.
  absl::StatusOr<bool> Publish(std::unique_ptr<engine::Catalog> catalog,
                               std::string bytes, bool initial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  // The same for a cluster profile: `bytes` read, converted and handed to
  // the pipeline's SetCluster. Errors are the reload's rejection.
  absl::StatusOr<bool> PublishProfile(std::string bytes, bool initial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  // The pipeline's answer to a publish of `bytes`: a rejection (logged once
  // per distinct error) or, once taken, Published and the `reloaded` log line.
  absl::StatusOr<bool> Taken(
      absl::StatusOr<std::shared_ptr<const ServingSnapshot>> replaced,
      std::string bytes, bool initial,
      absl::FunctionRef<std::string()> reloaded)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  // What Publish and PublishProfile do once the pipeline took the change.
  void Published(std::shared_ptr<const ServingSnapshot> replaced,
                 std::string bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  // The generation serving now (the pipeline's; this reloader's last one
  // before anything was published).
  uint64_t CurrentGeneration() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  // Logs, once per wait, that the file is being written.
  void NoteBeingWritten(absl::string_view why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  // Records a rejection, logs it if it differs from the previous one, tells
  // the pipeline. Returns `error`.
  absl::Status Reject(absl::Status error, bool log)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  // One turn of the directory's thread for this reloader (the loop's lock
  // held): the events into `pending_` (debounced), then a reload when one
  // is due and the reloader is started.
  void Step(const std::vector<DirEvent>& events, const DirectoryLoop& loop);
  // When Step next has work without an event (the loop's lock held).
  absl::Time NextDue() const;
  // A reload the watcher thread has pending: due at `due`; the burst of
  // events began at `first`; the last write seen on our entry without its
  // close at `written_at` (inotify's view of "open for writing", for when the
  // kernel cannot tell us). Used by the watcher thread only.
  struct PendingReload {
    absl::Time due = absl::InfiniteFuture();
    absl::Time first = absl::InfiniteFuture();
    absl::Time written_at = absl::InfinitePast();
  };
  // What a batch of directory events means: `trigger`, a change that may be
  // complete (a close after writing, a rename, a new link, a lost watch);
  // `activity`, a change that is not quiet yet (a write without its close).
  struct EventVerdict {
    bool trigger = false;
    bool activity = false;
  };
  // Events naming another reloader's file of the directory are not this
  // one's (a rename of one of 300 files reloads one, not 300).
  EventVerdict ClassifyEvents(const std::vector<DirEvent>& events,
                              absl::string_view entry, absl::Time now,
                              PendingReload* pending,
                              const DirectoryLoop& loop);
  // Reloads unless a writer still has the file open, in which case the
  // reload is put off by kWriterPoll; clears `pending` once done.
  void ReloadWhenClosed(absl::Time now, PendingReload* pending);
  void NoteWatchState();
  // Frees the replaced catalogs no request holds any more (and lets go of
  // those older than kMaxRetiredAge). True if some are still held.
  bool ReleaseRetired();

  const Options options_;
  CatalogPipeline* const pipeline_;
  // The directory's loop, shared with the other reloaders of its directory,
  // and its watcher (used by the loop's thread only); null for a static
  // source.
  std::shared_ptr<DirectoryLoop> loop_;
  DirWatcher* watcher_ = nullptr;

  // std::mutex rather than absl::Mutex: Debian's abseil is not built with
  // ThreadSanitizer, so TSan cannot see absl::Mutex's synchronization and
  // would report every guarded access as a race.
  std::mutex reload_mu_;
  // The generation this reloader last published (for its log lines).
  uint64_t generation_ ABSL_GUARDED_BY(reload_mu_) = 0;
  std::string last_loaded_ ABSL_GUARDED_BY(reload_mu_);  // bytes in force
  // A static source's catalog was published (its bytes are not kept).
  bool static_loaded_ ABSL_GUARDED_BY(reload_mu_) = false;
  // The most recently rejected bytes and their error, so that a bad file
  // sitting there is neither parsed nor logged again on every check.
  bool has_rejected_bytes_ ABSL_GUARDED_BY(reload_mu_) = false;
  std::string rejected_bytes_ ABSL_GUARDED_BY(reload_mu_);
  absl::Status rejected_status_ ABSL_GUARDED_BY(reload_mu_);
  // The latest read error's message, so that it is logged once.
  std::string read_error_ ABSL_GUARDED_BY(reload_mu_);
  // The latest refusal of a valid catalog by the set (another file of its
  // line, say), so that it is logged once. Not cached by bytes: a change of
  // another file may lift it.
  std::string set_error_ ABSL_GUARDED_BY(reload_mu_);
  // Whether the current wait for a writer was logged.
  bool logged_being_written_ ABSL_GUARDED_BY(reload_mu_) = false;
  struct Retired {
    std::shared_ptr<const ServingSnapshot> snapshot;
    absl::Time since;
  };
  std::vector<Retired> retired_ ABSL_GUARDED_BY(reload_mu_);

  mutable std::mutex status_mu_;
  ReloaderStatus status_ ABSL_GUARDED_BY(status_mu_);

  // The source's entry in its directory.
  const std::string entry_;
  // Guarded by the loop's lock (DirectoryLoop::mu), like Step's state below.
  bool started_ = false;
  // Step's state between turns: the reload pending, the next periodic
  // check, whether replaced catalogs are still held, whether to note the
  // watch's state (once started).
  PendingReload pending_;
  absl::Time next_check_ = absl::InfiniteFuture();
  bool retired_held_ = false;
  bool note_watch_ = false;
  std::atomic<bool> trigger_{false};
  std::atomic<bool> running_{false};
  bool logged_watching_ = true;  // the loop's thread only
};

}  // namespace compatd::runtime
