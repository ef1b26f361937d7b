#pragma once
// The load generator's bookkeeping, kept apart from gRPC so it can be tested:
// a latency histogram, the RPC mix, and the loopback-only target check.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace compatd::bench {

// A log-linear latency histogram in nanoseconds (HdrHistogram's layout, no
// external dependency): values below 256 ns get one bucket each; above, every
// power of two is split into 128 equal buckets, so a bucket is at most 1/128
// (0.8%) of its value wide: 256 ns wide at 32-64 µs, under a microsecond up to
// 128 µs. Record() is lock-free (relaxed atomic adds) and may be called from
// any thread; read the results once the recording threads are done.
class LatencyHistogram final {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;
  // Largest index: a value of 2^64 - 1 (shift 56, mantissa 255).
  static constexpr size_t kBuckets = (64 - kSubBucketBits) * kSubBuckets + 128;

  LatencyHistogram() = default;
  LatencyHistogram(const LatencyHistogram&) = delete;
  LatencyHistogram& operator=(const LatencyHistogram&) = delete;

  void Record(uint64_t nanos);
  // Adds every count of `other` (read with relaxed loads).
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  // 0 when empty.
  uint64_t min() const;
  uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  double mean() const;
  // The value at quantile q in [0, 1]: the highest value of the bucket that
  // holds the ceil(q * count)-th smallest recording (HdrHistogram's
  // "highest equivalent value"), clamped to max(). 0 when empty.
  uint64_t ValueAtQuantile(double q) const;

  // Bucket arithmetic, exposed for tests.
  static size_t BucketIndex(uint64_t nanos);
  static uint64_t BucketLowest(size_t index);
  static uint64_t BucketHighest(size_t index);

 private:
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_{0};
  std::atomic<uint64_t> min_{UINT64_MAX};
  std::atomic<uint64_t> max_{0};
};

// The RPCs the load generator can send.
enum class LoadRpc {
  kGetFeature,
  kCheckSkew,
  kGetStorageVersion,
  kListAPIVersions,
  kResolveVersions,
  kListFeatures,
  kGetCatalog,
};
inline constexpr int kLoadRpcCount = 7;
absl::string_view LoadRpcName(LoadRpc rpc);
// "GetFeature" -> kGetFeature; INVALID_ARGUMENT listing the known names.
absl::StatusOr<LoadRpc> ParseLoadRpc(absl::string_view name);

struct MixEntry {
  LoadRpc rpc;
  int weight;
};

// "GetFeature:8,CheckSkew:2" (a bare name weighs 1). Weights are integers in
// 1..1000; no RPC twice. INVALID_ARGUMENT naming the offending item.
absl::StatusOr<std::vector<MixEntry>> ParseMix(absl::string_view text);

// The order calls are issued in: one cycle of sum(weights) slots, interleaved
// by smooth weighted round robin (8:2 -> GF GF GF GF CS GF GF GF GF CS), so
// any window of calls has the configured proportions, without randomness.
std::vector<LoadRpc> MixSchedule(const std::vector<MixEntry>& mix);

// OK when `target` is a loopback address gRPC can dial: "127.x.y.z:port",
// "localhost:port", "[::1]:port", optionally with an "ipv4:" / "ipv6:" /
// "dns:" scheme. INVALID_ARGUMENT otherwise: a load test never leaves the
// machine.
absl::Status CheckLoopbackTarget(absl::string_view target);

}  // namespace compatd::bench
