#pragma once

// One line per event on stderr: "2026-11-21T09:37:30.123Z W catalog reload
// rejected: ...". Only service/ logs; engine/ and metrics/ return errors.
// Thread-safe.
//
// Lines that someone outside can cause over and over (a failed TLS handshake,
// gRPC's own errors, a rejected catalog) go through LogLimited() with a kind:
// at most kLogBurst lines of one kind per kLogWindow are written, the rest are
// counted, and once the window is over one line says how many were left out
// and quotes the last of them:
//
//   base::LogLimited(base::LogLevel::kWarning, "tls-handshake",
//                    absl::StrCat("TLS handshake failed: ", why));
//   ... W suppressed 4990 more lines of kind tls-handshake in the last 1m;
//       the last one: TLS handshake failed: ...
//
// A summary is written by the next line logged after its window ends, or by
// FlushSuppressedLogs() (the server calls it every few seconds, and with
// `all` on exit).

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace compatd::base {

enum class LogLevel { kInfo, kWarning, kError };

void Log(LogLevel level, absl::string_view message);

inline void LogInfo(absl::string_view message) {
  Log(LogLevel::kInfo, message);
}
inline void LogWarning(absl::string_view message) {
  Log(LogLevel::kWarning, message);
}
inline void LogError(absl::string_view message) {
  Log(LogLevel::kError, message);
}

// Lines of one kind written per window, the window, and how many kinds are
// told apart (further kinds share one budget, "other").
inline constexpr int kLogBurst = 10;
inline constexpr absl::Duration kLogWindow = absl::Minutes(1);
inline constexpr size_t kMaxLogKinds = 128;

// Log(), at most kLogBurst lines of `kind` per kLogWindow (see above).
void LogLimited(LogLevel level, absl::string_view kind,
                absl::string_view message);

// Writes the summaries of the windows that are over now (`all`: of every
// window that suppressed lines, over or not).
void FlushSuppressedLogs(bool all = false);

// The bookkeeping of LogLimited(), with the time passed in (for tests).
// Not thread-safe.
class LogRateLimiter {
 public:
  LogRateLimiter(int burst, absl::Duration window, size_t max_kinds);

  struct Decision {
    bool write = false;  // write this line
    // Summaries of windows that ended before `now` (this kind's and
    // others'), to be written before the line.
    std::vector<std::string> summaries;
  };
  Decision Admit(absl::string_view kind, absl::string_view message,
                 absl::Time now);
  // Summaries of the windows that ended before `now` (`all`: of every
  // window, which then ends).
  std::vector<std::string> Flush(absl::Time now, bool all = false);

  size_t kinds() const { return kinds_.size(); }

 private:
  struct Window {
    absl::Time start;
    int written = 0;
    long suppressed = 0;
    std::string last;  // the last suppressed line
  };
  // Ends `window` if it is over at `now`; a summary if it suppressed lines.
  void Close(const std::string& kind, Window& window, absl::Time now, bool all,
             std::vector<std::string>& summaries) const;

  const int burst_;
  const absl::Duration window_;
  const size_t max_kinds_;
  std::map<std::string, Window, std::less<>> kinds_;
};

}  // namespace compatd::base
