// The load generator's histogram, RPC mix and loopback check.

#include "bench/load_stats.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LatencyHistogramTest, SmallValuesHaveTheirOwnBucket) {
  for (uint64_t v : {0u, 1u, 127u, 255u}) {
    const size_t i = LatencyHistogram::BucketIndex(v);
    EXPECT_EQ(LatencyHistogram::BucketLowest(i), v);
    EXPECT_EQ(LatencyHistogram::BucketHighest(i), v);
  }
}

TEST(LatencyHistogramTest, EveryValueLiesInItsBucket) {
  for (uint64_t v :
       std::vector<uint64_t>{256, 257, 511, 512, 1000, 45'678, 999'999,
                             1'000'000'007, UINT64_MAX / 3, UINT64_MAX}) {
    const size_t i = LatencyHistogram::BucketIndex(v);
    ASSERT_LT(i, LatencyHistogram::kBuckets) << v;
    EXPECT_LE(LatencyHistogram::BucketLowest(i), v);
    EXPECT_GE(LatencyHistogram::BucketHighest(i), v);
  }
}

TEST(LatencyHistogramTest, BucketsAreContiguousAndIncreasing) {
  for (size_t i = 1; i < LatencyHistogram::kBuckets; ++i) {
    ASSERT_EQ(LatencyHistogram::BucketLowest(i),
              LatencyHistogram::BucketHighest(i - 1) + 1)
        << i;
  }
  EXPECT_EQ(LatencyHistogram::BucketHighest(LatencyHistogram::kBuckets - 1),
            UINT64_MAX);
}

TEST(LatencyHistogramTest, BucketWidthIsUnderOnePercentOfItsValue) {
  for (size_t i = 256; i < LatencyHistogram::kBuckets; i += 37) {
    const uint64_t low = LatencyHistogram::BucketLowest(i);
    const uint64_t width = LatencyHistogram::BucketHighest(i) - low + 1;
    EXPECT_LE(width * 128, low) << i;
  }
}

TEST(LatencyHistogramTest, SubMicrosecondResolutionUpTo128Microseconds) {
  const size_t i = LatencyHistogram::BucketIndex(127'000);
  EXPECT_LE(
      LatencyHistogram::BucketHighest(i) - LatencyHistogram::BucketLowest(i),
      1000u);
}

TEST(LatencyHistogramTest, QuantilesOfAUniformSpread) {
  LatencyHistogram h;
  for (uint64_t us = 1; us <= 1000; ++us) h.Record(us * 1000);
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.min(), 1000u);
  EXPECT_EQ(h.max(), 1'000'000u);
  EXPECT_DOUBLE_EQ(h.mean(), 500'500.0);
  // Each quantile is the 500th / 990th smallest value, within a bucket.
  EXPECT_NEAR(static_cast<double>(h.ValueAtQuantile(0.5)), 500'000,
              500'000 / 128.0);
  EXPECT_GE(h.ValueAtQuantile(0.5), 500'000u);
  EXPECT_NEAR(static_cast<double>(h.ValueAtQuantile(0.99)), 990'000,
              990'000 / 128.0);
  EXPECT_EQ(h.ValueAtQuantile(1.0), 1'000'000u);
  // The smallest value's bucket, reported by its highest value.
  EXPECT_EQ(h.ValueAtQuantile(0.0), LatencyHistogram::BucketHighest(
                                        LatencyHistogram::BucketIndex(1000)));
}

TEST(LatencyHistogramTest, QuantileNeverExceedsTheMaximum) {
  LatencyHistogram h;
  h.Record(100'001);
  EXPECT_EQ(h.ValueAtQuantile(0.5), 100'001u);
  EXPECT_EQ(h.ValueAtQuantile(0.999), 100'001u);
}

TEST(LatencyHistogramTest, EmptyReportsZeros) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.ValueAtQuantile(0.99), 0u);
}

TEST(LatencyHistogramTest, MergeAddsCountsAndKeepsExtremes) {
  LatencyHistogram a, b;
  a.Record(10);
  a.Record(20'000);
  b.Record(5);
  b.Record(9'000'000);
  a.Merge(b);
  EXPECT_EQ(a.count(), 4u);
  EXPECT_EQ(a.min(), 5u);
  EXPECT_EQ(a.max(), 9'000'000u);
  EXPECT_DOUBLE_EQ(a.mean(), (10 + 20'000 + 5 + 9'000'000) / 4.0);
}

TEST(ParseMixTest, NamesAndWeights) {
  auto mix = ParseMix("GetFeature:8, CheckSkew:2,ListAPIVersions");
  ASSERT_TRUE(mix.ok()) << mix.status();
  ASSERT_EQ(mix->size(), 3u);
  EXPECT_EQ((*mix)[0].rpc, LoadRpc::kGetFeature);
  EXPECT_EQ((*mix)[0].weight, 8);
  EXPECT_EQ((*mix)[1].rpc, LoadRpc::kCheckSkew);
  EXPECT_EQ((*mix)[1].weight, 2);
  EXPECT_EQ((*mix)[2].rpc, LoadRpc::kListAPIVersions);
  EXPECT_EQ((*mix)[2].weight, 1);
}

TEST(ParseMixTest, RejectsBadItems) {
  const std::map<std::string, std::string> cases = {
      {"", "empty"},
      {"GetFeature:0", "weight must be an integer in 1..1000"},
      {"GetFeature:x", "weight must be an integer"},
      {"GetFeature:1001", "1..1000"},
      {"Frobnicate:1", "unknown RPC \"Frobnicate\""},
      {"GetFeature,GetFeature:2", "twice"},
  };
  for (const auto& [text, message] : cases) {
    auto mix = ParseMix(text);
    EXPECT_EQ(mix.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(mix.status().message()), HasSubstr(message))
        << text;
  }
}

TEST(MixScheduleTest, InterleavesByWeight) {
  const std::vector<MixEntry> mix = {{LoadRpc::kGetFeature, 3},
                                     {LoadRpc::kCheckSkew, 1}};
  EXPECT_THAT(MixSchedule(mix),
              ElementsAre(LoadRpc::kGetFeature, LoadRpc::kGetFeature,
                          LoadRpc::kCheckSkew, LoadRpc::kGetFeature));
}

TEST(MixScheduleTest, CycleHasExactProportions) {
  const std::vector<MixEntry> mix = {{LoadRpc::kGetFeature, 8},
                                     {LoadRpc::kCheckSkew, 2},
                                     {LoadRpc::kGetStorageVersion, 1}};
  const std::vector<LoadRpc> schedule = MixSchedule(mix);
  ASSERT_EQ(schedule.size(), 11u);
  std::map<LoadRpc, int> counts;
  for (LoadRpc rpc : schedule) ++counts[rpc];
  EXPECT_EQ(counts[LoadRpc::kGetFeature], 8);
  EXPECT_EQ(counts[LoadRpc::kCheckSkew], 2);
  EXPECT_EQ(counts[LoadRpc::kGetStorageVersion], 1);
}

TEST(CheckLoopbackTargetTest, AcceptsLoopback) {
  for (const char* target :
       {"127.0.0.1:50051", "127.1.2.3:1", "localhost:8080", "[::1]:50051",
        "ipv4:127.0.0.1:50051", "ipv6:[::1]:443", "dns:///localhost:50051"}) {
    EXPECT_TRUE(CheckLoopbackTarget(target).ok()) << target;
  }
}

TEST(CheckLoopbackTargetTest, RefusesEverythingElse) {
  for (const char* target :
       {"10.0.0.1:50051", "192.168.1.1:50051", "8.8.8.8:53", "example.com:443",
        "localhost", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536",
        "[::2]:50051", "128.0.0.1:1", "127.0.0.1.5:1", "unix:/tmp/socket",
        "localhost.example.com:1", ""}) {
    const absl::Status s = CheckLoopbackTarget(target);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << target;
    EXPECT_THAT(std::string(s.message()), HasSubstr("loopback")) << target;
  }
}

}  // namespace
}  // namespace compatd::bench
