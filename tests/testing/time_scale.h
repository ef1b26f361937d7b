#pragma once

// How much slower this build runs than a release build: 1, or more under a
// sanitizer (COMPATD_TIME_SCALE, set by tests/CMakeLists.txt). Latency bounds
// that hold a release build to milliseconds are multiplied by it, so that a
// sanitizer run checks the same property (a light call is not held behind a
// heavy one for seconds) instead of the sanitizer's own cost.
//
//   constexpr auto kLightBound = Scaled(std::chrono::milliseconds(50));

#include <chrono>

#ifndef COMPATD_TIME_SCALE
#define COMPATD_TIME_SCALE 1
#endif

namespace compatd::testing {

inline constexpr int kTimeScale = COMPATD_TIME_SCALE;

template <typename Rep, typename Period>
constexpr std::chrono::duration<Rep, Period> Scaled(
    std::chrono::duration<Rep, Period> bound) {
  return bound * kTimeScale;
}

}  // namespace compatd::testing
