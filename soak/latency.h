#pragma once

// The latency of compatd-soak's well-behaved calls: per latency class, a
// histogram of bounded size (a 10-minute run makes millions of calls), the
// same per call (RPC, route or case) for the report's breakdown, and the
// slowest few calls with when they happened. Each thread records into its
// own LatencyRecorder; the run merges them at the end.

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace compatd::soak {

// The rows of the latency table. A light class is judged against
// --max-light-p99; the heavy lane's rows and the audit-hostile class's
// (hostile batches and their read-back) are reported only.
enum class LatencyClass {
  kValidLight,      // gRPC valid calls answered in the light lane
  kHttpValidLight,  // the same as /v1/<RPC> JSON
  kAdmission,       // POST /admission/v1/validate
  kGatekeeper,      // POST /gatekeeper/v1
  kHealthz,         // GET /healthz
  kValidHeavy,      // gRPC valid calls of the heavy lane (answered ones)
  kHttpValidHeavy,  // the same over /v1
  kHeavyGrpc,       // the heavy-grpc class (answered ones)
  kHeavyHttp,       // the heavy-http class (answered ones)
  kAuditBatch,      // audit-hostile: POST /audit/v1/events (answered 200)
  kAuditRead,       // audit-hostile: ListApiUsage, ListClients, /metrics
};
inline constexpr int kLatencyClassCount = 11;

struct LatencyClassInfo {
  absl::string_view name;
  absl::string_view lane;
  bool judged;  // against --max-light-p99
};
inline constexpr std::array<LatencyClassInfo, kLatencyClassCount>
    kLatencyClasses = {{
        {"valid (gRPC)", "light", true},
        {"HTTP valid /v1/<RPC>", "light", true},
        {"HTTP AdmissionReview", "light", true},
        {"HTTP Gatekeeper provider", "light", true},
        {"HTTP /healthz", "light", true},
        {"valid (gRPC)", "heavy", false},
        {"HTTP valid /v1/<RPC>", "heavy", false},
        {"heavy-grpc", "heavy", false},
        {"heavy-http", "heavy", false},
        {"audit-hostile batch", "light", false},
        {"audit-hostile read-back", "light", false},
    }};

// Counts of microsecond values in log-linear buckets: exact below 64 us,
// then 32 buckets per power of two (each at most 1/32 of its values wide),
// up to 2^40 us; larger values count in the last bucket. 9 KiB whatever the
// number of values; the maximum is kept exactly.
class LatencyHistogram {
 public:
  void Record(int64_t micros) {
    micros = std::clamp<int64_t>(micros, 0, kMaxMicros);
    ++counts_[Index(static_cast<uint64_t>(micros))];
    ++count_;
    max_ = std::max(max_, micros);
  }

  void Merge(const LatencyHistogram& other) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    max_ = std::max(max_, other.max_);
  }

  uint64_t count() const { return count_; }
  int64_t max() const { return max_; }

  // The q-quantile (0 < q <= 1) in microseconds: the upper end of the bucket
  // that holds it (at most 1/32 above the true value, never below it), and
  // never more than the maximum. 0 without values.
  int64_t Quantile(double q) const {
    if (count_ == 0) return 0;
    const double wanted = q * static_cast<double>(count_);
    uint64_t rank = static_cast<uint64_t>(wanted);
    if (static_cast<double>(rank) < wanted) ++rank;
    rank = std::clamp<uint64_t>(rank, 1, count_);
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(UpperEnd(i), max_);
    }
    return max_;
  }

 private:
  static constexpr int kSubBits = 5;
  static constexpr uint64_t kSub = uint64_t{1} << kSubBits;
  static constexpr int kMaxBits = 40;
  static constexpr int64_t kMaxMicros = (int64_t{1} << kMaxBits) - 1;
  static constexpr size_t kBuckets =
      kSub * (kMaxBits - kSubBits - 1) + 2 * kSub;

  // Values below 2 * kSub are their own bucket; above, a value's top
  // kSubBits + 1 bits pick one of kSub buckets of its power of two.
  static size_t Index(uint64_t v) {
    if (v < 2 * kSub) return static_cast<size_t>(v);
    const int shift = std::bit_width(v) - (kSubBits + 1);
    return static_cast<size_t>(kSub * static_cast<uint64_t>(shift) +
                               (v >> shift));
  }

  static int64_t UpperEnd(size_t index) {
    if (index < 2 * kSub) return static_cast<int64_t>(index);
    const uint64_t shift = index / kSub - 1;
    const uint64_t top = index - kSub * shift;
    return static_cast<int64_t>(((top + 1) << shift) - 1);
  }

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  int64_t max_ = 0;
};

// One of the slowest calls of a class.
struct SlowCall {
  int64_t micros = 0;
  double at_seconds = 0;  // since the load started
  std::string what;       // the call and its case
};

// One thread's latencies; calls that start before `measure_from` (the end
// of the warm-up) are not recorded.
class LatencyRecorder {
 public:
  static constexpr size_t kSlowest = 5;
  using Clock = std::chrono::steady_clock;

  LatencyRecorder() = default;
  LatencyRecorder(Clock::time_point load_start, Clock::time_point measure_from)
      : load_start_(load_start), measure_from_(measure_from) {}

  // A call of `cls` to `call` ("GetFeature", "/v1/GetFeature") from `start`
  // to `end`; `label` names its case for the slowest calls. Also counts the
  // calls over `bound_micros` (0: none counted).
  void Record(LatencyClass cls, absl::string_view call, absl::string_view label,
              Clock::time_point start, Clock::time_point end,
              int64_t bound_micros) {
    if (start < measure_from_) return;
    const int index = static_cast<int>(cls);
    const int64_t micros =
        std::chrono::duration_cast<std::chrono::microseconds>(end - start)
            .count();
    by_class_[static_cast<size_t>(index)].Record(micros);
    by_call_[{index, std::string(call)}].Record(micros);
    if (bound_micros > 0 && micros > bound_micros) {
      ++over_bound_[static_cast<size_t>(index)];
    }
    std::vector<SlowCall>& slowest = slowest_[static_cast<size_t>(index)];
    if (slowest.size() == kSlowest && slowest.back().micros >= micros) return;
    slowest.push_back(
        {micros, std::chrono::duration<double>(start - load_start_).count(),
         absl::StrCat(call, " (", label, ")")});
    std::sort(slowest.begin(), slowest.end(),
              [](const SlowCall& a, const SlowCall& b) {
                return a.micros > b.micros;
              });
    if (slowest.size() > kSlowest) slowest.pop_back();
  }

  // Heavy-lane calls refused because the lane was full (not in the
  // histograms: they are answered at once).
  void CountRefused(LatencyClass cls, Clock::time_point start) {
    if (start >= measure_from_) ++refused_[static_cast<size_t>(cls)];
  }

  void Merge(const LatencyRecorder& other) {
    for (int i = 0; i < kLatencyClassCount; ++i) {
      const size_t at = static_cast<size_t>(i);
      by_class_[at].Merge(other.by_class_[at]);
      over_bound_[at] += other.over_bound_[at];
      refused_[at] += other.refused_[at];
      std::vector<SlowCall>& slowest = slowest_[at];
      slowest.insert(slowest.end(), other.slowest_[at].begin(),
                     other.slowest_[at].end());
      std::sort(slowest.begin(), slowest.end(),
                [](const SlowCall& a, const SlowCall& b) {
                  return a.micros > b.micros;
                });
      if (slowest.size() > kSlowest) slowest.resize(kSlowest);
    }
    for (const auto& [key, histogram] : other.by_call_) {
      by_call_[key].Merge(histogram);
    }
  }

  const LatencyHistogram& of(LatencyClass cls) const {
    return by_class_[static_cast<size_t>(cls)];
  }
  uint64_t over_bound(LatencyClass cls) const {
    return over_bound_[static_cast<size_t>(cls)];
  }
  uint64_t refused(LatencyClass cls) const {
    return refused_[static_cast<size_t>(cls)];
  }
  const std::vector<SlowCall>& slowest(LatencyClass cls) const {
    return slowest_[static_cast<size_t>(cls)];
  }
  // By (class, call).
  const std::map<std::pair<int, std::string>, LatencyHistogram>& by_call()
      const {
    return by_call_;
  }

 private:
  Clock::time_point load_start_;
  Clock::time_point measure_from_;
  std::array<LatencyHistogram, kLatencyClassCount> by_class_;
  std::map<std::pair<int, std::string>, LatencyHistogram> by_call_;
  std::array<uint64_t, kLatencyClassCount> over_bound_{};
  std::array<uint64_t, kLatencyClassCount> refused_{};
  std::array<std::vector<SlowCall>, kLatencyClassCount> slowest_;
};

}  // namespace compatd::soak
