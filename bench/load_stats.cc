#include "bench/load_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace compatd::bench {

size_t LatencyHistogram::BucketIndex(uint64_t nanos) {
  if (nanos < 2 * kSubBuckets) return static_cast<size_t>(nanos);
  const int msb = 63 - std::countl_zero(nanos);
  const int shift = msb - kSubBucketBits;    // >= 1
  const uint64_t mantissa = nanos >> shift;  // in [128, 256)
  return static_cast<size_t>(shift) * kSubBuckets +
         static_cast<size_t>(mantissa);
}

uint64_t LatencyHistogram::BucketLowest(size_t index) {
  if (index < 2 * kSubBuckets) return index;
  const size_t shift = index / kSubBuckets - 1;
  const uint64_t mantissa = index - shift * kSubBuckets;
  return mantissa << shift;
}

uint64_t LatencyHistogram::BucketHighest(size_t index) {
  if (index < 2 * kSubBuckets) return index;
  const size_t shift = index / kSubBuckets - 1;
  return BucketLowest(index) + ((uint64_t{1} << shift) - 1);
}

void LatencyHistogram::Record(uint64_t nanos) {
  buckets_[BucketIndex(nanos)].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(nanos, std::memory_order_relaxed);
  uint64_t seen = min_.load(std::memory_order_relaxed);
  while (nanos < seen &&
         !min_.compare_exchange_weak(seen, nanos, std::memory_order_relaxed)) {
  }
  seen = max_.load(std::memory_order_relaxed);
  while (nanos > seen &&
         !max_.compare_exchange_weak(seen, nanos, std::memory_order_relaxed)) {
  }
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) {
    const uint64_t n = other.buckets_[i].load(std::memory_order_relaxed);
    if (n != 0) buckets_[i].fetch_add(n, std::memory_order_relaxed);
  }
  count_.fetch_add(other.count(), std::memory_order_relaxed);
  sum_.fetch_add(other.sum_.load(std::memory_order_relaxed),
                 std::memory_order_relaxed);
  const uint64_t other_min = other.min_.load(std::memory_order_relaxed);
  uint64_t seen = min_.load(std::memory_order_relaxed);
  while (other_min < seen && !min_.compare_exchange_weak(
                                 seen, other_min, std::memory_order_relaxed)) {
  }
  const uint64_t other_max = other.max();
  seen = max_.load(std::memory_order_relaxed);
  while (other_max > seen && !max_.compare_exchange_weak(
                                 seen, other_max, std::memory_order_relaxed)) {
  }
}

uint64_t LatencyHistogram::min() const {
  return count() == 0 ? 0 : min_.load(std::memory_order_relaxed);
}

double LatencyHistogram::mean() const {
  const uint64_t n = count();
  return n == 0 ? 0.0
                : static_cast<double>(sum_.load(std::memory_order_relaxed)) /
                      static_cast<double>(n);
}

uint64_t LatencyHistogram::ValueAtQuantile(double q) const {
  const uint64_t n = count();
  if (n == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const uint64_t rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(n))));
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i].load(std::memory_order_relaxed);
    if (seen >= rank) return std::min(BucketHighest(i), max());
  }
  return max();
}

namespace {

constexpr absl::string_view kLoadRpcNames[kLoadRpcCount] = {
    "GetFeature",      "CheckSkew",    "GetStorageVersion", "ListAPIVersions",
    "ResolveVersions", "ListFeatures", "GetCatalog",
};

constexpr int kMaxWeight = 1000;

}  // namespace

absl::string_view LoadRpcName(LoadRpc rpc) {
  return kLoadRpcNames[static_cast<int>(rpc)];
}

absl::StatusOr<LoadRpc> ParseLoadRpc(absl::string_view name) {
  for (int i = 0; i < kLoadRpcCount; ++i) {
    if (kLoadRpcNames[i] == name) return static_cast<LoadRpc>(i);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown RPC \"", name, "\"; the load generator sends ",
                   absl::StrJoin(kLoadRpcNames, ", ")));
}

absl::StatusOr<std::vector<MixEntry>> ParseMix(absl::string_view text) {
  std::vector<MixEntry> mix;
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(
        "--mix is empty; expected e.g. \"GetFeature:8,CheckSkew:2\"");
  }
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    absl::string_view name = item;
    int weight = 1;
    if (const size_t colon = item.find(':'); colon != absl::string_view::npos) {
      name = item.substr(0, colon);
      const absl::string_view number = item.substr(colon + 1);
      if (!absl::SimpleAtoi(number, &weight) || weight < 1 ||
          weight > kMaxWeight) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--mix item \"", item, "\": the weight must be an integer in 1..",
            kMaxWeight, " (e.g. \"GetFeature:8\")"));
      }
    }
    absl::StatusOr<LoadRpc> rpc = ParseLoadRpc(name);
    if (!rpc.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--mix item \"", item, "\": ", rpc.status().message()));
    }
    for (const MixEntry& e : mix) {
      if (e.rpc == *rpc) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--mix names ", name, " twice; give each RPC one weight"));
      }
    }
    mix.push_back({*rpc, weight});
  }
  return mix;
}

std::vector<LoadRpc> MixSchedule(const std::vector<MixEntry>& mix) {
  int total = 0;
  for (const MixEntry& e : mix) total += e.weight;
  std::vector<LoadRpc> schedule;
  schedule.reserve(static_cast<size_t>(total));
  std::vector<int> current(mix.size(), 0);
  for (int slot = 0; slot < total; ++slot) {
    size_t best = 0;
    for (size_t i = 0; i < mix.size(); ++i) {
      current[i] += mix[i].weight;
      if (current[i] > current[best]) best = i;
    }
    current[best] -= total;
    schedule.push_back(mix[best].rpc);
  }
  return schedule;
}

namespace {

bool IsLoopbackIpv4(absl::string_view host) {
  std::vector<absl::string_view> octets = absl::StrSplit(host, '.');
  if (octets.size() != 4) return false;
  for (absl::string_view octet : octets) {
    int value = 0;
    if (octet.empty() || octet.size() > 3 ||
        !std::all_of(octet.begin(), octet.end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(octet, &value) || value > 255) {
      return false;
    }
  }
  return octets[0] == "127";
}

bool IsPort(absl::string_view port) {
  int value = 0;
  return !port.empty() && port.size() <= 5 &&
         std::all_of(port.begin(), port.end(), absl::ascii_isdigit) &&
         absl::SimpleAtoi(port, &value) && value > 0 && value <= 65535;
}

}  // namespace

absl::Status CheckLoopbackTarget(absl::string_view target) {
  absl::string_view rest = target;
  absl::ConsumePrefix(&rest, "ipv4:") || absl::ConsumePrefix(&rest, "ipv6:") ||
      absl::ConsumePrefix(&rest, "dns:");
  absl::ConsumePrefix(&rest, "///");
  absl::string_view host;
  absl::string_view port;
  if (absl::ConsumePrefix(&rest, "[")) {
    const size_t close = rest.find(']');
    if (close != absl::string_view::npos && rest.substr(close + 1, 1) == ":") {
      host = rest.substr(0, close);
      port = rest.substr(close + 2);
    }
  } else if (const size_t colon = rest.rfind(':');
             colon != absl::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  const bool loopback =
      host == "localhost" || host == "::1" || IsLoopbackIpv4(host);
  if (loopback && IsPort(port)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--target=", target,
                   ": the load generator only dials this machine's loopback: "
                   "127.x.y.z:PORT, localhost:PORT or [::1]:PORT"));
}

}  // namespace compatd::bench
