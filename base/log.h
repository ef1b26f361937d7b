#pragma once

// One line per event on stderr: "2026-11-21T09:37:30.123Z W catalog reload
// rejected: ...". Only service/ logs; engine/ and metrics/ return errors.
// Thread-safe.

#include "absl/strings/string_view.h"

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

}  // namespace compatd::base
