#include "metrics/histogram.h"

#include <limits>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_type.h"
#include "tests/testing/status_matchers.h"

namespace compatd::metrics {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;

// (upper bound, cumulative count) of each bucket, +Inf last.
std::vector<std::pair<double, uint64_t>> Buckets(
    const prometheus::ClientMetric& metric) {
  std::vector<std::pair<double, uint64_t>> out;
  for (const auto& bucket : metric.histogram.bucket) {
    out.emplace_back(bucket.upper_bound, bucket.cumulative_count);
  }
  return out;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
using Bucket = std::pair<double, uint64_t>;

TEST(HistogramTest, BucketsAreInclusiveAndCumulative) {
  Histogram histogram({1, 2, 5});
  for (double v : {0.5, 1.0, 1.5, 2.0, 4.0, 7.0}) histogram.Observe(v);
  const prometheus::ClientMetric metric = histogram.Collect();
  // le=1: 0.5, 1.0; le=2: +1.5, 2.0; le=5: +4.0; +Inf: +7.0.
  EXPECT_THAT(Buckets(metric), ElementsAre(Bucket{1, 2}, Bucket{2, 4},
                                           Bucket{5, 5}, Bucket{kInf, 6}));
  EXPECT_EQ(metric.histogram.sample_count, 6u);
  EXPECT_DOUBLE_EQ(metric.histogram.sample_sum, 16.0);
}

TEST(HistogramTest, IgnoresNaN) {
  Histogram histogram({1});
  histogram.Observe(std::numeric_limits<double>::quiet_NaN());
  histogram.Observe(kInf);
  const prometheus::ClientMetric metric = histogram.Collect();
  EXPECT_THAT(Buckets(metric), ElementsAre(Bucket{1, 0}, Bucket{kInf, 1}));
  EXPECT_EQ(metric.histogram.sample_count, 1u);
}

TEST(HistogramTest, ConcurrentObservationsCountExactly) {
  Histogram histogram({0.5});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&histogram] {
      for (int i = 0; i < 50000; ++i) histogram.Observe(i % 2 == 0 ? 0.25 : 1);
    });
  }
  // Scrapes while observing: the count is never behind the buckets.
  for (int i = 0; i < 100; ++i) {
    const prometheus::ClientMetric metric = histogram.Collect();
    EXPECT_EQ(metric.histogram.sample_count,
              metric.histogram.bucket.back().cumulative_count);
  }
  for (std::thread& thread : threads) thread.join();
  const prometheus::ClientMetric metric = histogram.Collect();
  EXPECT_THAT(Buckets(metric),
              ElementsAre(Bucket{0.5, 100000}, Bucket{kInf, 200000}));
  EXPECT_DOUBLE_EQ(metric.histogram.sample_sum, 100000 * 0.25 + 100000 * 1.0);
}

TEST(ValidateBucketsTest, AcceptsIncreasingFiniteBoundsAndTrailingInf) {
  EXPECT_OK(ValidateBuckets({0.1, 1, 10}));
  EXPECT_OK(ValidateBuckets({0.1, kInf}));
}

TEST(ValidateBucketsTest, RejectsBadBounds) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::vector<double>& bounds : std::vector<std::vector<double>>{
           {}, {1, 1}, {2, 1}, {nan}, {kInf}, {1, kInf, 2}, {-kInf, 1}}) {
    EXPECT_THAT(ValidateBuckets(bounds),
                StatusIs(absl::StatusCode::kInvalidArgument, _))
        << ::testing::PrintToString(bounds);
  }
}

TEST(HistogramFamilyTest, OneHistogramPerLabelSetInLabelOrder) {
  HistogramFamily family("h", "Help.", {"z", "a"}, {1});
  Histogram* first = family.Add({"x", "y"});
  EXPECT_EQ(family.Add({"x", "y"}), first);
  EXPECT_NE(family.Add({"x", "w"}), first);
  first->Observe(0.5);
  const std::vector<prometheus::MetricFamily> collected = family.Collect();
  ASSERT_EQ(collected.size(), 1u);
  EXPECT_EQ(collected[0].name, "h");
  EXPECT_EQ(collected[0].type, prometheus::MetricType::Histogram);
  ASSERT_EQ(collected[0].metric.size(), 2u);
  const prometheus::ClientMetric& xy = collected[0].metric[1];
  ASSERT_EQ(xy.label.size(), 2u);
  EXPECT_EQ(xy.label[0].name, "z");
  EXPECT_EQ(xy.label[0].value, "x");
  EXPECT_EQ(xy.label[1].name, "a");
  EXPECT_EQ(xy.label[1].value, "y");
  EXPECT_EQ(xy.histogram.sample_count, 1u);
}

TEST(HistogramFamilyTest, EmptyFamilyCollectsNothing) {
  HistogramFamily family("h", "Help.", {}, {1});
  EXPECT_TRUE(family.Collect().empty());
}

}  // namespace
}  // namespace compatd::metrics
