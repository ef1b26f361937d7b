#include "runtime/catalog_reloader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/log.h"
#include "base/valid_utf8.h"
#include "catalog/catalog_loader.h"
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
  std::unique_ptr<DirWatcher> watcher;
  if (const std::string dir = options.source->WatchDir(); !dir.empty()) {
    absl::StatusOr<std::unique_ptr<DirWatcher>> created =
        DirWatcher::Create(dir);
    if (!created.ok()) return created.status();
    watcher = *std::move(created);
  }
  std::unique_ptr<CatalogReloader> reloader(
      new CatalogReloader(std::move(options), pipeline, std::move(watcher)));
  {
    std::lock_guard<std::mutex> lock(reloader->reload_mu_);
    absl::StatusOr<bool> loaded = reloader->ReloadLocked(/*initial=*/true);
    if (!loaded.ok()) return loaded.status();
  }
  return reloader;
}

CatalogReloader::CatalogReloader(Options options, CatalogPipeline* pipeline,
                                 std::unique_ptr<DirWatcher> watcher)
    : options_(std::move(options)),
      pipeline_(pipeline),
      watcher_(std::move(watcher)) {
  status_.path = options_.source->name();
  status_.watching = watcher_ != nullptr && watcher_->watching();
  if (watcher_ != nullptr) {
    status_.watch_error = std::string(watcher_->watch_status().message());
  }
}

CatalogReloader::~CatalogReloader() { Stop(); }

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

  if (!initial && *bytes == last_loaded_) {
    has_rejected_bytes_ = false;
    rejected_bytes_.clear();
    {
      std::lock_guard<std::mutex> lock(status_mu_);
      ++status_.unchanged;
      status_.last_result = ReloadResult::kUnchanged;
    }
    pipeline_->Unchanged();
    return false;
  }

  if (has_rejected_bytes_ && *bytes == rejected_bytes_) {
    return Reject(rejected_status_, /*log=*/false);
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

  std::unique_ptr<engine::Catalog> catalog = *std::move(parsed);
  const size_t features = catalog->features.size();
  const size_t group_versions = catalog->apis.size();
  const std::string digest = catalog->digest;
  if (std::shared_ptr<const ServingSnapshot> replaced =
          pipeline_->Publish(std::move(catalog), initial)) {
    retired_.push_back(Retired{std::move(replaced), absl::Now()});
  }
  generation_ = pipeline_->Current()->generation;
  last_loaded_ = *std::move(bytes);
  {
    std::lock_guard<std::mutex> lock(status_mu_);
    ++status_.loaded;
    status_.generation = generation_;
    status_.last_result = ReloadResult::kLoaded;
  }
  if (!initial) {
    base::LogInfo(absl::StrCat("catalog reloaded: ", options_.source->name(),
                               " generation ", generation_, " ", digest, " (",
                               features, " features, ", group_versions,
                               " group-versions)"));
  }
  return true;
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
  if (log) {
    // Rejections are logged once per distinct content, but a writer cycling
    // through bad contents must not flood the log either.
    base::LogLimited(
        base::LogLevel::kWarning, "catalog-reload-rejected",
        absl::StrCat("catalog reload rejected, still serving generation ",
                     generation_, ": ", OneLine(error.message())));
  }
  pipeline_->Rejected(error.message());
  return error;
}

void CatalogReloader::Start() {
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable() || watcher_ == nullptr) return;  // static: no thread
  stop_.store(false);
  trigger_.store(false);
  running_.store(true);
  thread_ = std::thread([this] { Run(); });
}

void CatalogReloader::Stop() {
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (!thread_.joinable()) return;
  running_.store(false);
  stop_.store(true);
  watcher_->Wake();
  thread_.join();
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

void CatalogReloader::Run() {
  const bool periodic = options_.interval > absl::ZeroDuration();
  absl::Time next_check =
      periodic ? absl::Now() + options_.interval : absl::InfiniteFuture();
  // A pending debounced reload: due at `due`; the burst began at `first`.
  absl::Time due = absl::InfiniteFuture();
  absl::Time first = absl::InfiniteFuture();
  NoteWatchState();
  bool retired_held = false;
  while (!stop_.load()) {
    const absl::Time until = std::min(due, next_check);
    absl::Duration timeout =
        until == absl::InfiniteFuture()
            ? absl::InfiniteDuration()
            : std::max(absl::ZeroDuration(), until - absl::Now());
    if (retired_held) timeout = std::min(timeout, kRetiredCheck);
    DirWatcher::WaitResult result = watcher_->Wait(timeout);
    if (stop_.load()) break;
    retired_held = ReleaseRetired();
    const absl::Time now = absl::Now();
    if (!result.events.empty()) {
      // Any change in the directory may be ours (the kubelet's `..data` swap,
      // an editor's rename, another symlink's target); comparing the bytes
      // sorts out the rest cheaply.
      if (due == absl::InfiniteFuture()) first = now;
      due = std::min(now + kDebounce, first + kMaxDebounce);
      for (const DirEvent& event : result.events) {
        if (event.kind == DirEvent::Kind::kWatchLost ||
            event.kind == DirEvent::Kind::kWatchEstablished) {
          NoteWatchState();
          break;
        }
      }
    }
    const bool triggered = trigger_.exchange(false);
    if (triggered || now >= due || now >= next_check) {
      due = absl::InfiniteFuture();
      first = absl::InfiniteFuture();
      // Errors are recorded by the pipeline and logged by the reload itself.
      ReloadNow().IgnoreError();
      retired_held = ReleaseRetired();
      if (periodic) next_check = absl::Now() + options_.interval;
    }
  }
}

}  // namespace compatd::runtime
