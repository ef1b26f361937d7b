#include "base/log.h"

#include <cstdio>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/valid_utf8.h"

namespace compatd::base {
namespace {

// The quoted line in a summary is cut to this many bytes.
constexpr size_t kMaxQuotedBytes = 300;

char Tag(LogLevel level) {
  return level == LogLevel::kInfo      ? 'I'
         : level == LogLevel::kWarning ? 'W'
                                       : 'E';
}

void Write(LogLevel level, absl::string_view message, absl::Time now) {
  // One write per line, so concurrent lines never interleave.
  const std::string line = absl::StrCat(
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", now, absl::UTCTimeZone()), " ",
      std::string(1, Tag(level)), " ", PrintableText(message), "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

// The process's limiter; its mutex also orders a summary before the line
// that triggered it.
struct Limited {
  std::mutex mu;
  LogRateLimiter limiter{kLogBurst, kLogWindow, kMaxLogKinds};
};

Limited& Global() {
  static Limited* const limited = new Limited();  // never destroyed
  return *limited;
}

}  // namespace

LogRateLimiter::LogRateLimiter(int burst, absl::Duration window,
                               size_t max_kinds)
    : burst_(burst), window_(window), max_kinds_(max_kinds) {}

void LogRateLimiter::Close(const std::string& kind, Window& window,
                           absl::Time now, bool all,
                           std::vector<std::string>& summaries) const {
  if (!all && now - window.start < window_) return;
  if (window.suppressed > 0) {
    std::string last = window.last;
    if (last.size() > kMaxQuotedBytes) {
      last.resize(kMaxQuotedBytes);
      last += "...";
    }
    summaries.push_back(absl::StrCat(
        "suppressed ", window.suppressed, " more line",
        window.suppressed == 1 ? "" : "s", " of kind ", kind, " in the last ",
        absl::FormatDuration(now - window.start), " (at most ", burst_, " per ",
        absl::FormatDuration(window_), "); the last one: ", last));
  }
  window = Window{now, 0, 0, ""};
}

LogRateLimiter::Decision LogRateLimiter::Admit(absl::string_view kind,
                                               absl::string_view message,
                                               absl::Time now) {
  Decision decision;
  decision.summaries = Flush(now);
  auto it = kinds_.find(kind);
  if (it == kinds_.end()) {
    if (kinds_.size() >= max_kinds_) kind = "other";
    it = kinds_.try_emplace(std::string(kind), Window{now, 0, 0, ""}).first;
  }
  Window& window = it->second;
  if (window.written < burst_) {
    ++window.written;
    decision.write = true;
  } else {
    ++window.suppressed;
    window.last = std::string(message);
  }
  return decision;
}

std::vector<std::string> LogRateLimiter::Flush(absl::Time now, bool all) {
  std::vector<std::string> summaries;
  for (auto it = kinds_.begin(); it != kinds_.end();) {
    Close(it->first, it->second, now, all, summaries);
    // A kind quiet for a whole window is forgotten, so that a kind seen once
    // does not hold one of the max_kinds_ places forever.
    if (it->second.written == 0 && it->second.suppressed == 0) {
      it = kinds_.erase(it);
    } else {
      ++it;
    }
  }
  return summaries;
}

void Log(LogLevel level, absl::string_view message) {
  Limited& limited = Global();
  std::lock_guard<std::mutex> lock(limited.mu);
  const absl::Time now = absl::Now();
  for (const std::string& summary : limited.limiter.Flush(now)) {
    Write(LogLevel::kWarning, summary, now);
  }
  Write(level, message, now);
}

void LogLimited(LogLevel level, absl::string_view kind,
                absl::string_view message) {
  Limited& limited = Global();
  std::lock_guard<std::mutex> lock(limited.mu);
  const absl::Time now = absl::Now();
  LogRateLimiter::Decision decision = limited.limiter.Admit(kind, message, now);
  for (const std::string& summary : decision.summaries) {
    Write(LogLevel::kWarning, summary, now);
  }
  if (decision.write) Write(level, message, now);
}

void FlushSuppressedLogs(bool all) {
  Limited& limited = Global();
  std::lock_guard<std::mutex> lock(limited.mu);
  const absl::Time now = absl::Now();
  for (const std::string& summary : limited.limiter.Flush(now, all)) {
    Write(LogLevel::kWarning, summary, now);
  }
}

}  // namespace compatd::base
