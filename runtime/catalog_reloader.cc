#include "runtime/catalog_reloader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/log.h"
#include "base/valid_utf8.h"
#include "catalog/catalog_loader.h"
#include "cluster/cluster_settings.h"
#include "cluster/profile.h"
#include "runtime/catalog_file.h"

namespace compatd::runtime {
namespace {

// A rejection's log line lists at most this many errors.
constexpr size_t kMaxLoggedErrors = 10;

// Errors come one per line; a log line shows the first few, joined.
std::string OneLine(absl::string_view message) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(message, '\n', absl::SkipEmpty());
  if (lines.size() <= kMaxLoggedErrors) return absl::StrJoin(lines, "; ");
  const size_t more = lines.size() - kMaxLoggedErrors;
  lines.resize(kMaxLoggedErrors);
  return absl::StrCat(absl::StrJoin(lines, "; "), "; ... and ", more, " more");
}

}  // namespace

// One watched directory: one DirWatcher (an inotify instance and an eventfd)
// and one thread for every reloader of the directory, shared through For()
// while one of them lives. The thread waits for the directory's events and
// steps each reloader in turn (CatalogReloader::Step), under `mu`: Start,
// Stop and the reloaders' loop state take it too.
struct CatalogReloader::DirectoryLoop {
  explicit DirectoryLoop(std::unique_ptr<DirWatcher> w)
      : watcher(std::move(w)),
        watching(watcher->watching()),
        watch_error(watcher->watch_status().message()) {
    thread = std::thread([this] { Run(); });
  }
  ~DirectoryLoop() {
    stop.store(true);
    watcher->Wake();
    thread.join();
  }
  DirectoryLoop(const DirectoryLoop&) = delete;
  DirectoryLoop& operator=(const DirectoryLoop&) = delete;

  // The loop of `dir`: the one alive, or a new one.
  static absl::StatusOr<std::shared_ptr<DirectoryLoop>> For(
      const std::string& dir) {
    // Leaked: reloaders may outlive static destruction.
    static auto* registry_mu = new std::mutex;
    static auto* registry =
        new std::map<std::string, std::weak_ptr<DirectoryLoop>>;
    std::lock_guard<std::mutex> lock(*registry_mu);
    for (auto it = registry->begin(); it != registry->end();) {
      it = it->second.expired() ? registry->erase(it) : std::next(it);
    }
    if (auto it = registry->find(dir); it != registry->end()) {
      if (std::shared_ptr<DirectoryLoop> loop = it->second.lock()) return loop;
    }
    absl::StatusOr<std::unique_ptr<DirWatcher>> created =
        DirWatcher::Create(dir);
    if (!created.ok()) return created.status();
    auto loop = std::make_shared<DirectoryLoop>(*std::move(created));
    (*registry)[dir] = loop;
    return loop;
  }

  void Add(CatalogReloader* member) {
    std::lock_guard<std::mutex> lock(mu);
    members.push_back(member);
    ++entries[member->entry_];
  }
  void Remove(CatalogReloader* member) {
    std::lock_guard<std::mutex> lock(mu);
    members.erase(std::find(members.begin(), members.end(), member));
    if (--entries[member->entry_] == 0) entries.erase(member->entry_);
  }
  // Whether `name` is the entry of a reloader of the directory (mu held).
  bool IsEntry(absl::string_view name) const {
    return entries.find(name) != entries.end();
  }

  void Run() {
    while (!stop.load()) {
      absl::Time until = absl::InfiniteFuture();
      {
        std::lock_guard<std::mutex> lock(mu);
        for (const CatalogReloader* member : members) {
          until = std::min(until, member->NextDue());
        }
      }
      const absl::Duration timeout =
          until == absl::InfiniteFuture()
              ? absl::InfiniteDuration()
              : std::max(absl::ZeroDuration(), until - absl::Now());
      const DirWatcher::WaitResult result = watcher->Wait(timeout);
      if (stop.load()) break;
      {
        std::lock_guard<std::mutex> lock(state_mu);
        watching = watcher->watching();
        watch_error = std::string(watcher->watch_status().message());
      }
      std::lock_guard<std::mutex> lock(mu);
      for (CatalogReloader* member : members)
        member->Step(result.events, *this);
    }
  }

  const std::unique_ptr<DirWatcher> watcher;
  std::mutex mu;
  std::vector<CatalogReloader*> members ABSL_GUARDED_BY(mu);
  // Each member's entry, and how many members have it.
  std::map<std::string, int, std::less<>> entries ABSL_GUARDED_BY(mu);
  // The watch's state as the thread last saw it, for other threads.
  mutable std::mutex state_mu;
  bool watching ABSL_GUARDED_BY(state_mu);
  std::string watch_error ABSL_GUARDED_BY(state_mu);
  std::atomic<bool> stop{false};
  std::thread thread;
};

absl::StatusOr<std::unique_ptr<CatalogReloader>> CatalogReloader::Create(
    Options options, CatalogPipeline* pipeline) {
  if (options.source == nullptr) {
    return absl::InvalidArgumentError("no catalog source");
  }
  if (options.interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("reload interval ", absl::FormatDuration(options.interval),
                     " is negative: expected 0 (no periodic check) or more"));
  }
  if (pipeline == nullptr) {
    return absl::InvalidArgumentError("catalog pipeline is null");
  }
  // Watch before the first read, so that a change right after it is seen.
  std::shared_ptr<DirectoryLoop> loop;
  if (const std::string dir = options.source->WatchDir(); !dir.empty()) {
    absl::StatusOr<std::shared_ptr<DirectoryLoop>> shared =
        DirectoryLoop::For(dir);
    if (!shared.ok()) return shared.status();
    loop = *std::move(shared);
  }
  std::unique_ptr<CatalogReloader> reloader(
      new CatalogReloader(std::move(options), pipeline, std::move(loop)));
  {
    std::lock_guard<std::mutex> lock(reloader->reload_mu_);
    // A catalog being written when compatd starts is waited for (start-up
    // can be interrupted: service/server.cc takes SIGTERM meanwhile).
    const absl::Time give_up = absl::Now() + kMaxStartupWait;
    for (;;) {
      absl::StatusOr<bool> loaded = reloader->ReloadLocked(/*initial=*/true);
      if (loaded.ok()) break;
      if (loaded.status().code() != absl::StatusCode::kUnavailable) {
        return loaded.status();
      }
      if (absl::Now() >= give_up) {
        return absl::UnavailableError(
            absl::StrCat(loaded.status().message(), "; still so after ",
                         absl::FormatDuration(kMaxStartupWait)));
      }
      reloader->NoteBeingWritten(loaded.status().message());
      absl::SleepFor(kWriterPoll);
    }
  }
  return reloader;
}

CatalogReloader::CatalogReloader(Options options, CatalogPipeline* pipeline,
                                 std::shared_ptr<DirectoryLoop> loop)
    : options_(std::move(options)),
      pipeline_(pipeline),
      loop_(std::move(loop)),
      watcher_(loop_ != nullptr ? loop_->watcher.get() : nullptr),
      entry_(options_.source->WatchEntry()) {
  status_.path = options_.source->name();
  if (loop_ != nullptr) {
    {
      std::lock_guard<std::mutex> lock(loop_->state_mu);
      status_.watching = loop_->watching;
      status_.watch_error = loop_->watch_error;
    }
    // Its events are classified from now on (a change during the first
    // load is reloaded once started).
    loop_->Add(this);
  }
}

CatalogReloader::~CatalogReloader() {
  Stop();
  if (loop_ != nullptr) loop_->Remove(this);
}

absl::StatusOr<bool> CatalogReloader::ReloadNow() {
  std::lock_guard<std::mutex> lock(reload_mu_);
  return ReloadLocked(/*initial=*/false);
}

absl::StatusOr<bool> CatalogReloader::ReloadLocked(bool initial) {
  {
    std::lock_guard<std::mutex> lock(status_mu_);
    status_.last_attempt_at = absl::Now();
  }
  absl::StatusOr<std::string> bytes = options_.source->Read();
  if (!bytes.ok() && bytes.status().code() == absl::StatusCode::kUnavailable) {
    // Being written: nothing is wrong with the catalog yet. The caller tries
    // again (the watcher thread after kWriterPoll, or at the writer's close).
    return bytes.status();
  }
  logged_being_written_ = false;
  if (!bytes.ok()) {
    if (initial) return bytes.status();
    has_rejected_bytes_ = false;
    rejected_bytes_.clear();
    // A file missing for a while is checked many times; say so once.
    const bool log = bytes.status().message() != read_error_;
    read_error_ = std::string(bytes.status().message());
    return Reject(bytes.status(), log);
  }
  read_error_.clear();

  // A static source (an embedded catalog) never changes: its bytes are not
  // kept for the comparison (they are in the binary already).
  if (!initial && (static_loaded_ || *bytes == last_loaded_)) {
    has_rejected_bytes_ = false;
    rejected_bytes_.clear();
    {
      std::lock_guard<std::mutex> lock(status_mu_);
      ++status_.unchanged;
      status_.last_result = ReloadResult::kUnchanged;
    }
    pipeline_->Unchanged(options_.source->name());
    return false;
  }

  if (has_rejected_bytes_ && *bytes == rejected_bytes_) {
    return Reject(rejected_status_, /*log=*/false);
  }

  if (options_.cluster_profile) {
    return PublishProfile(*std::move(bytes), initial);
  }
  absl::StatusOr<std::unique_ptr<engine::Catalog>> parsed =
      catalog::ParseCatalog(*bytes, options_.source->name());
  if (!parsed.ok()) {
    if (initial) return parsed.status();
    has_rejected_bytes_ = true;
    rejected_bytes_ = *std::move(bytes);
    rejected_status_ = parsed.status();
    return Reject(parsed.status(), /*log=*/true);
  }
  has_rejected_bytes_ = false;
  rejected_bytes_.clear();

  return Publish(*std::move(parsed), *std::move(bytes), initial);
}

absl::StatusOr<bool> CatalogReloader::Publish(
    std::unique_ptr<engine::Catalog> catalog, std::string bytes, bool initial) {
  const size_t features = catalog->features.size();
  const size_t group_versions = catalog->apis.size();
  const std::string digest = catalog->digest;
  const std::string release = catalog->binary_version.ToString();
  return Taken(
      pipeline_->PublishLine(options_.slot, std::move(catalog), initial),
      std::move(bytes), initial, [&] {
        return absl::StrCat("catalog reloaded: ", options_.source->name(),
                            " (kube-apiserver ", release, ") generation ",
                            generation_, " ", digest, " (", features,
                            " features, ", group_versions, " group-versions)");
      });
}

absl::StatusOr<bool> CatalogReloader::Taken(
    absl::StatusOr<std::shared_ptr<const ServingSnapshot>> replaced,
    std::string bytes, bool initial,
    absl::FunctionRef<std::string()> reloaded) {
  if (!replaced.ok()) {
    if (initial) return replaced.status();
    const bool log = replaced.status().message() != set_error_;
    set_error_ = std::string(replaced.status().message());
    return Reject(replaced.status(), log);
  }
  set_error_.clear();
  Published(*std::move(replaced), std::move(bytes));
  if (!initial) base::LogInfo(reloaded());
  return true;
}

absl::StatusOr<bool> CatalogReloader::PublishProfile(std::string bytes,
                                                     bool initial) {
  absl::StatusOr<std::shared_ptr<const engine::ClusterSettings>> settings =
      [&]() -> absl::StatusOr<std::shared_ptr<const engine::ClusterSettings>> {
    absl::StatusOr<cluster::ClusterProfile> profile =
        cluster::ReadClusterProfile(bytes, options_.source->name(),
                                    options_.profile_options);
    if (!profile.ok()) return profile.status();
    absl::StatusOr<engine::ClusterSettings> converted =
        cluster::ToClusterSettings(*profile);
    if (!converted.ok()) return converted.status();
    return std::make_shared<const engine::ClusterSettings>(
        *std::move(converted));
  }();
  if (!settings.ok()) {
    if (initial) return settings.status();
    has_rejected_bytes_ = true;
    rejected_bytes_ = std::move(bytes);
    rejected_status_ = settings.status();
    return Reject(settings.status(), /*log=*/true);
  }
  has_rejected_bytes_ = false;
  rejected_bytes_.clear();
  const std::string binary = (*settings)->binary->ToString();
  return Taken(pipeline_->SetCluster(*std::move(settings), initial),
               std::move(bytes), initial, [&] {
                 return absl::StrCat(
                     "cluster profile reloaded: ", options_.source->name(),
                     " (kube-apiserver ", binary, ") generation ", generation_);
               });
}

void CatalogReloader::Published(std::shared_ptr<const ServingSnapshot> replaced,
                                std::string bytes) {
  if (replaced != nullptr) {
    retired_.push_back(Retired{std::move(replaced), absl::Now()});
  }
  // Null while other sources are still loading (start-up).
  if (std::shared_ptr<const ServingSnapshot> now = pipeline_->Current()) {
    generation_ = now->generation;
  }
  if (options_.source->WatchDir().empty()) {
    static_loaded_ = true;
  } else {
    last_loaded_ = std::move(bytes);
  }
  {
    std::lock_guard<std::mutex> lock(status_mu_);
    ++status_.loaded;
    status_.generation = generation_;
    status_.last_result = ReloadResult::kLoaded;
  }
}

uint64_t CatalogReloader::CurrentGeneration() const {
  const std::shared_ptr<const ServingSnapshot> now = pipeline_->Current();
  return now != nullptr ? now->generation : generation_;
}

absl::Status CatalogReloader::Reject(absl::Status error, bool log) {
  // The errors quote the bad file's bytes (values the loader names, libyaml's
  // messages about the byte it stopped at), and they end up in
  // GetCatalog's last_error: a proto3 string a client cannot decode unless
  // it is valid UTF-8 (compatd-soak found every GetCatalog failing after such
  // a rejection).
  error = absl::Status(error.code(), base::ValidUtf8(error.message()));
  {
    std::lock_guard<std::mutex> lock(status_mu_);
    ++status_.rejected;
    status_.last_error = std::string(error.message());
    status_.last_error_at = absl::Now();
    status_.last_result = ReloadResult::kRejected;
  }
  // GetCatalog and WatchCatalog see the rejection before the log says it (a
  // client watching the log, as an operator or a test does, then finds it).
  pipeline_->Rejected(error.message(), options_.source->name());
  if (log) {
    // Rejections are logged once per distinct content, but a writer cycling
    // through bad contents must not flood the log either.
    base::LogLimited(
        base::LogLevel::kWarning, "catalog-reload-rejected",
        absl::StrCat(options_.cluster_profile ? "cluster profile" : "catalog",
                     " reload rejected, still serving generation ",
                     CurrentGeneration(), ": ", OneLine(error.message())));
  }
  return error;
}

void CatalogReloader::NoteBeingWritten(absl::string_view why) {
  if (logged_being_written_) return;
  logged_being_written_ = true;
  base::LogLimited(base::LogLevel::kInfo, "catalog-being-written",
                   absl::StrCat("catalog not read yet: ", why));
}

void CatalogReloader::Start() {
  if (loop_ == nullptr) return;  // static: nothing to watch
  {
    std::lock_guard<std::mutex> lock(loop_->mu);
    if (started_) return;
    started_ = true;
    trigger_.store(false);
    running_.store(true);
    next_check_ = options_.interval > absl::ZeroDuration()
                      ? absl::Now() + options_.interval
                      : absl::InfiniteFuture();
    note_watch_ = true;
  }
  watcher_->Wake();
}

void CatalogReloader::Stop() {
  if (loop_ == nullptr) return;
  // Waits for the loop's turn in progress, if any.
  std::lock_guard<std::mutex> lock(loop_->mu);
  running_.store(false);
  started_ = false;
}

void CatalogReloader::TriggerReload() {
  if (!running_.load()) return;
  trigger_.store(true);
  watcher_->Wake();
}

ReloaderStatus CatalogReloader::Status() const {
  std::lock_guard<std::mutex> lock(status_mu_);
  return status_;
}

void CatalogReloader::NoteWatchState() {
  const bool watching = watcher_->watching();
  {
    std::lock_guard<std::mutex> lock(status_mu_);
    status_.watching = watching;
    status_.watch_error = std::string(watcher_->watch_status().message());
  }
  if (watching == logged_watching_) return;
  logged_watching_ = watching;
  if (watching) {
    base::LogInfo(
        absl::StrCat("watching ", watcher_->dir(), " for catalog changes"));
  } else {
    base::LogWarning(
        absl::StrCat("not watching for catalog changes (",
                     watcher_->watch_status().message(), "); retrying every ",
                     absl::FormatDuration(DirWatcher::kRetryInterval),
                     options_.interval > absl::ZeroDuration()
                         ? absl::StrCat("; checking the file every ",
                                        absl::FormatDuration(options_.interval))
                         : std::string("; send SIGHUP to reload meanwhile")));
  }
}

size_t CatalogReloader::RetiredCount() {
  std::lock_guard<std::mutex> lock(reload_mu_);
  return retired_.size();
}

bool CatalogReloader::ReleaseRetired() {
  std::vector<std::shared_ptr<const ServingSnapshot>> to_free;
  bool held = false;
  {
    std::lock_guard<std::mutex> lock(reload_mu_);
    const absl::Time now = absl::Now();
    auto keep = retired_.begin();
    for (Retired& r : retired_) {
      // use_count() == 1: the store and every request have let go, and only
      // a new reference from ours could appear. (The count is read relaxed;
      // what orders the catalog's destruction after the requests' last reads
      // is this thread's own decrement when `to_free` goes, as for any
      // shared_ptr.)
      if (r.snapshot.use_count() == 1 || now - r.since >= kMaxRetiredAge) {
        to_free.push_back(std::move(r.snapshot));
      } else {
        *keep++ = std::move(r);
      }
    }
    retired_.erase(keep, retired_.end());
    held = !retired_.empty();
  }
  return held;  // `to_free` is freed here, outside the lock
}

CatalogReloader::EventVerdict CatalogReloader::ClassifyEvents(
    const std::vector<DirEvent>& events, absl::string_view entry,
    absl::Time now, PendingReload* pending, const DirectoryLoop& loop) {
  EventVerdict verdict;
  for (const DirEvent& event : events) {
    const bool ours = !entry.empty() && event.name == entry;
    if (!ours && !event.name.empty() && loop.IsEntry(event.name)) continue;
    switch (event.kind) {
      case DirEvent::Kind::kWritten:  // a writer closed: complete
      case DirEvent::Kind::kMovedIn:  // a rename: complete
        if (ours) pending->written_at = absl::InfinitePast();
        verdict.trigger = true;
        break;
      case DirEvent::Kind::kAttributes:  // e.g. made readable
        verdict.trigger = true;
        break;
      case DirEvent::Kind::kModified:  // written to, not closed yet
        if (ours) {
          pending->written_at = now;
          verdict.activity = true;
        }
        break;
      case DirEvent::Kind::kCreated: {
        // A new symlink (or directory) is complete; a new regular file is
        // being written, and complete at its close.
        struct stat st;
        const std::string path = absl::StrCat(watcher_->dir(), "/", event.name);
        if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
          if (ours) {
            pending->written_at = now;
            verdict.activity = true;
          }
        } else {
          verdict.trigger = true;
        }
        break;
      }
      case DirEvent::Kind::kDeleted:
      case DirEvent::Kind::kMovedOut:
        // The file is gone, for now: its replacement's close or rename is
        // what to reload (a missing file is found by the periodic check).
        if (ours) pending->written_at = absl::InfinitePast();
        break;
      case DirEvent::Kind::kOverflow:
      case DirEvent::Kind::kWatchLost:
      case DirEvent::Kind::kWatchEstablished:
        // Anything may have changed, and what was seen may be stale.
        pending->written_at = absl::InfinitePast();
        verdict.trigger = true;
        NoteWatchState();
        break;
    }
  }
  return verdict;
}

void CatalogReloader::ReloadWhenClosed(absl::Time now, PendingReload* pending) {
  // Some process still has the file open for writing: wait for its close.
  // The kernel's answer (a read lease, for our own files) wins; without one,
  // a write seen without its close counts for a while.
  std::optional<bool> writing = options_.source->OpenForWriting();
  if (!writing.has_value()) {
    writing = pending->written_at != absl::InfinitePast() &&
              now - pending->written_at < kMaxWriterWait;
  }
  if (*writing) {
    {
      std::lock_guard<std::mutex> lock(reload_mu_);
      NoteBeingWritten(absl::StrCat(options_.source->name(),
                                    ": the catalog is open for writing; "
                                    "it is read once the writer has "
                                    "closed it"));
    }
    // The writer's close starts a new burst (and its own debounce).
    pending->first = now;
    pending->due = now + kWriterPoll;
    return;
  }
  // Errors are recorded by the pipeline and logged by the reload itself.
  absl::StatusOr<bool> reloaded = ReloadNow();
  if (!reloaded.ok() &&
      reloaded.status().code() == absl::StatusCode::kUnavailable) {
    std::lock_guard<std::mutex> lock(reload_mu_);
    NoteBeingWritten(reloaded.status().message());
    pending->first = absl::Now();
    pending->due = pending->first + kWriterPoll;
  } else {
    *pending = PendingReload();
  }
}

void CatalogReloader::Step(const std::vector<DirEvent>& events,
                           const DirectoryLoop& loop) {
  if (note_watch_) {
    note_watch_ = false;
    NoteWatchState();
  }
  retired_held_ = ReleaseRetired();
  const absl::Time now = absl::Now();
  const EventVerdict verdict =
      ClassifyEvents(events, entry_, now, &pending_, loop);
  if (verdict.trigger && pending_.due == absl::InfiniteFuture()) {
    pending_.first = now;
  }
  if ((pending_.due != absl::InfiniteFuture() || verdict.trigger) &&
      (verdict.trigger || verdict.activity)) {
    // Quiet for kDebounce (within a burst's kMaxDebounce).
    pending_.due = std::min(now + kDebounce, pending_.first + kMaxDebounce);
  }
  if (!started_) return;  // a change before Start is reloaded once started
  const bool triggered = trigger_.exchange(false);
  const bool periodic_due = now >= next_check_;
  if (triggered || periodic_due || now >= pending_.due) {
    if (periodic_due) next_check_ = now + options_.interval;
    ReloadWhenClosed(now, &pending_);
    retired_held_ = ReleaseRetired();
  }
}

absl::Time CatalogReloader::NextDue() const {
  if (!started_) return absl::InfiniteFuture();
  absl::Time due = std::min(pending_.due, next_check_);
  if (retired_held_) due = std::min(due, absl::Now() + kRetiredCheck);
  return due;
}

}  // namespace compatd::runtime
