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

// The directory to watch: where the entry `path` names lives (not where a
// symlink points: a ConfigMap's `catalog.yaml -> ..data/catalog.yaml` changes
// by a rename in the same directory).
std::string ContainingDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

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

absl::string_view ReloadResultName(ReloadResult result) {
  switch (result) {
    case ReloadResult::kLoaded:
      return "loaded";
    case ReloadResult::kUnchanged:
      return "unchanged";
    case ReloadResult::kRejected:
      return "rejected";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<CatalogReloader>> CatalogReloader::Create(
    Options options, runtime::CatalogStore* store, ReloadListener* listener) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError(
        "catalog path is empty: expected the path of a catalog file");
  }
  if (options.interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("reload interval ", absl::FormatDuration(options.interval),
                     " is negative: expected 0 (no periodic check) or more"));
  }
  if (store == nullptr) {
    return absl::InvalidArgumentError("catalog store is null");
  }
  // Watch before the first read, so that a change right after it is seen.
  absl::StatusOr<std::unique_ptr<DirWatcher>> watcher =
      DirWatcher::Create(ContainingDir(options.path));
  if (!watcher.ok()) return watcher.status();
  std::unique_ptr<CatalogReloader> reloader(new CatalogReloader(
      std::move(options), store, listener, *std::move(watcher)));
  {
    std::lock_guard<std::mutex> lock(reloader->reload_mu_);
    absl::StatusOr<bool> loaded = reloader->ReloadLocked(/*initial=*/true);
    if (!loaded.ok()) return loaded.status();
  }
  return reloader;
}

CatalogReloader::CatalogReloader(Options options, runtime::CatalogStore* store,
                                 ReloadListener* listener,
                                 std::unique_ptr<DirWatcher> watcher)
    : options_(std::move(options)),
      store_(store),
      listener_(listener),
      watcher_(std::move(watcher)) {
  status_.path = options_.path;
  status_.watching = watcher_->watching();
  status_.watch_error = std::string(watcher_->watch_status().message());
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
  absl::StatusOr<std::string> bytes = ReadCatalogFile(options_.path);
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
    if (listener_ != nullptr) {
      listener_->OnReload(ReloadResult::kUnchanged, nullptr, "");
    }
    return false;
  }

  if (has_rejected_bytes_ && *bytes == rejected_bytes_) {
    return Reject(rejected_status_, /*log=*/false);
  }

  absl::StatusOr<std::unique_ptr<engine::Catalog>> parsed =
      catalog::ParseCatalog(*bytes, base::ValidUtf8(options_.path));
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
  catalog->generation = ++generation_;
  catalog->source = base::ValidUtf8(options_.path);
  catalog->loaded_at = absl::Now();
  std::shared_ptr<const engine::Catalog> published = std::move(catalog);
  if (std::shared_ptr<const engine::Catalog> replaced =
          store_->Publish(published)) {
    retired_.push_back(Retired{std::move(replaced), absl::Now()});
  }
  last_loaded_ = *std::move(bytes);
  {
    std::lock_guard<std::mutex> lock(status_mu_);
    ++status_.loaded;
    status_.generation = published->generation;
    status_.last_result = ReloadResult::kLoaded;
  }
  if (!initial) {
    base::LogInfo(absl::StrCat("catalog reloaded: ", options_.path,
                               " generation ", published->generation, " ",
                               published->digest, " (",
                               published->features.size(), " features, ",
                               published->apis.size(), " group-versions)"));
    if (listener_ != nullptr) {
      listener_->OnReload(ReloadResult::kLoaded, published.get(), "");
    }
  }
  return true;
}

absl::Status CatalogReloader::Reject(absl::Status error, bool log) {
  // The errors quote the bad file's bytes (yaml-cpp's "unknown escape
  // character: \xff", values the loader names), and they end up in
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
    base::LogWarning(
        absl::StrCat("catalog reload rejected, still serving generation ",
                     generation_, ": ", OneLine(error.message())));
  }
  if (listener_ != nullptr) {
    listener_->OnReload(ReloadResult::kRejected, nullptr, error.message());
  }
  return error;
}

void CatalogReloader::Start() {
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable()) return;
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
  std::vector<std::shared_ptr<const engine::Catalog>> to_free;
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
      if (r.catalog.use_count() == 1 || now - r.since >= kMaxRetiredAge) {
        to_free.push_back(std::move(r.catalog));
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
      // Errors are reported to the listener and logged by the reload itself.
      ReloadNow().IgnoreError();
      retired_held = ReleaseRetired();
      if (periodic) next_check = absl::Now() + options_.interval;
    }
  }
}

}  // namespace compatd::runtime
