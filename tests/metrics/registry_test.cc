#include "metrics/registry.h"

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::metrics {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CounterTest, IncrementsByOneAndByAmounts) {
  Counter counter;
  counter.Increment();
  counter.Increment(2);
  counter.Increment(0.5);
  EXPECT_DOUBLE_EQ(counter.Value(), 3.5);
}

TEST(CounterTest, IgnoresNegativeAndNaNIncrements) {
  Counter counter;
  counter.Increment(-1);
  counter.Increment(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(counter.Value(), 0);
}

TEST(CounterTest, ConcurrentIncrementsAreExact) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Counter> * family,
                       registry.AddCounterFamily("c_total", "help", {"k"}));
  ASSERT_OK_AND_ASSIGN(Counter * counter, family->Add({"v"}));
  constexpr int kThreads = 8;
  constexpr int kPerThread = 200000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([counter] {
      for (int i = 0; i < kPerThread; ++i) counter->Increment();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter->Value(), static_cast<double>(kThreads) * kPerThread);
}

TEST(GaugeTest, SetIncrementDecrement) {
  Gauge gauge;
  gauge.Set(10);
  gauge.Increment(2.5);
  gauge.Decrement();
  EXPECT_DOUBLE_EQ(gauge.Value(), 11.5);
}

TEST(GaugeTest, ConcurrentIncrementsAndDecrementsCancelOut) {
  Gauge gauge;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&gauge, t] {
      for (int i = 0; i < 50000; ++i) {
        if (t % 2 == 0) {
          gauge.Increment();
        } else {
          gauge.Decrement();
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(gauge.Value(), 0);
}

TEST(HistogramTest, BucketsAreInclusiveAndCumulative) {
  Histogram histogram({1, 2, 5});
  for (double v : {0.5, 1.0, 1.5, 2.0, 4.0, 7.0}) histogram.Observe(v);
  HistogramSnapshot snapshot = histogram.Snapshot();
  EXPECT_THAT(snapshot.upper_bounds, ElementsAre(1, 2, 5));
  // le=1: 0.5, 1.0; le=2: +1.5, 2.0; le=5: +4.0; +Inf: +7.0.
  EXPECT_THAT(snapshot.cumulative_counts, ElementsAre(2, 4, 5, 6));
  EXPECT_DOUBLE_EQ(snapshot.sum, 16.0);
}

TEST(HistogramTest, IgnoresNaN) {
  Histogram histogram({1});
  histogram.Observe(std::numeric_limits<double>::quiet_NaN());
  histogram.Observe(std::numeric_limits<double>::infinity());
  HistogramSnapshot snapshot = histogram.Snapshot();
  EXPECT_THAT(snapshot.cumulative_counts, ElementsAre(0, 1));
}

TEST(HistogramTest, ConcurrentObservationsCountExactly) {
  Histogram histogram({0.5});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&histogram] {
      for (int i = 0; i < 50000; ++i) histogram.Observe(i % 2 == 0 ? 0.25 : 1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  HistogramSnapshot snapshot = histogram.Snapshot();
  EXPECT_THAT(snapshot.cumulative_counts, ElementsAre(100000, 200000));
  EXPECT_DOUBLE_EQ(snapshot.sum, 100000 * 0.25 + 100000 * 1.0);
}

TEST(ValidateBucketsTest, AcceptsIncreasingFiniteBoundsAndTrailingInf) {
  EXPECT_OK(ValidateBuckets({0.1, 1, 10}));
  EXPECT_OK(ValidateBuckets({0.1, std::numeric_limits<double>::infinity()}));
}

TEST(ValidateBucketsTest, RejectsBadBounds) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::vector<double>& bounds : std::vector<std::vector<double>>{
           {}, {1, 1}, {2, 1}, {nan}, {inf}, {1, inf, 2}, {-inf, 1}}) {
    EXPECT_THAT(ValidateBuckets(bounds),
                StatusIs(absl::StatusCode::kInvalidArgument, _))
        << ::testing::PrintToString(bounds);
  }
}

TEST(NamesTest, MetricAndLabelNames) {
  EXPECT_TRUE(IsValidMetricName("grpc_server_handled_total"));
  EXPECT_TRUE(IsValidMetricName("a:b_c"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_FALSE(IsValidMetricName("1abc"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_TRUE(IsValidLabelName("grpc_code"));
  EXPECT_FALSE(IsValidLabelName("__name__"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("9"));
}

TEST(Utf8Test, AcceptsValidAndRejectsInvalid) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // > U+10FFFF
}

TEST(RegistryTest, AddReturnsTheSameHandleForTheSameLabels) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Counter> * family,
                       registry.AddCounterFamily("x_total", "h", {"a", "b"}));
  ASSERT_OK_AND_ASSIGN(Counter * first, family->Add({"1", "2"}));
  ASSERT_OK_AND_ASSIGN(Counter * again, family->Add({"1", "2"}));
  ASSERT_OK_AND_ASSIGN(Counter * other, family->Add({"1", "3"}));
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
  EXPECT_EQ(family->size(), 2u);
}

TEST(RegistryTest, AddRejectsWrongArityAndInvalidUtf8) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Gauge> * family,
                       registry.AddGaugeFamily("g", "h", {"a"}));
  EXPECT_THAT(family->Add({}), StatusIs(absl::StatusCode::kInvalidArgument,
                                        HasSubstr("has 1 labels, got 0")));
  EXPECT_THAT(family->Add({"\xff"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("UTF-8")));
}

TEST(RegistryTest, RejectsDuplicateNamesIncludingHistogramSuffixes) {
  Registry registry;
  ASSERT_OK(registry.AddHistogramFamily("latency", "h", {}, {1}).status());
  EXPECT_THAT(registry.AddCounterFamily("latency", "h", {}).status(),
              StatusIs(absl::StatusCode::kAlreadyExists, _));
  EXPECT_THAT(registry.AddGaugeFamily("latency_count", "h", {}).status(),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       HasSubstr("already used by metric latency")));
  ASSERT_OK(registry.AddGaugeFamily("queue_sum", "h", {}).status());
  EXPECT_THAT(registry.AddHistogramFamily("queue", "h", {}, {1}).status(),
              StatusIs(absl::StatusCode::kAlreadyExists, _));
}

TEST(RegistryTest, RejectsBadNames) {
  Registry registry;
  EXPECT_THAT(
      registry.AddCounterFamily("bad-name", "h", {}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"bad-name\"")));
  EXPECT_THAT(registry.AddCounterFamily("ok_total", "h", {"__x"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(
      registry.AddCounterFamily("ok_total", "h", {"a", "a"}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("repeated")));
  EXPECT_THAT(
      registry.AddHistogramFamily("h", "h", {"le"}, {1}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"le\"")));
  EXPECT_THAT(registry.AddHistogramFamily("h", "h", {}, {2, 1}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  // A failed registration reserves nothing.
  EXPECT_OK(registry.AddCounterFamily("ok_total", "h", {}).status());
}

TEST(RegistryTest, HistogramDropsTrailingInfBucket) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(
      Family<Histogram> * family,
      registry.AddHistogramFamily(
          "h", "h", {}, {1, std::numeric_limits<double>::infinity()}));
  ASSERT_OK_AND_ASSIGN(Histogram * histogram, family->Add({}));
  EXPECT_THAT(histogram->Snapshot().upper_bounds, ElementsAre(1));
}

TEST(RegistryTest, CollectSortsFamiliesAndLabelSets) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Gauge> * zeta,
                       registry.AddGaugeFamily("zeta", "h", {"k"}));
  ASSERT_OK_AND_ASSIGN(Family<Gauge> * alpha,
                       registry.AddGaugeFamily("alpha", "h", {}));
  ASSERT_OK(zeta->Add({"b"}).status());
  ASSERT_OK(zeta->Add({"a"}).status());
  ASSERT_OK(alpha->Add({}).status());
  std::vector<FamilySnapshot> families = registry.Collect();
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].name, "alpha");
  EXPECT_EQ(families[1].name, "zeta");
  ASSERT_EQ(families[1].metrics.size(), 2u);
  EXPECT_THAT(families[1].metrics[0].label_values, ElementsAre("a"));
  EXPECT_THAT(families[1].metrics[1].label_values, ElementsAre("b"));
}

TEST(RegistryTest, CallbackFamilyIsEvaluatedAtEachCollect) {
  Registry registry;
  double value = 1;
  ASSERT_OK(registry.AddCallbackValue(
      "cb", "h", MetricType::kGauge,
      [&value]() -> std::optional<double> { return value; }));
  EXPECT_EQ(registry.Collect()[0].metrics[0].value, 1);
  value = 7;
  EXPECT_EQ(registry.Collect()[0].metrics[0].value, 7);
}

TEST(RegistryTest, CallbackWithoutValueIsLeftOut) {
  Registry registry;
  ASSERT_OK(registry.AddCallbackValue(
      "cb", "h", MetricType::kGauge,
      []() -> std::optional<double> { return std::nullopt; }));
  EXPECT_TRUE(registry.Collect().empty());
}

TEST(RegistryTest, CallbackFamilyDropsMalformedAndDuplicateSamples) {
  Registry registry;
  ASSERT_OK(
      registry.AddCallbackFamily("cb", "h", MetricType::kGauge, {"k"}, [] {
        return std::vector<CallbackSample>{
            {{"b"}, 2}, {{"a"}, 1}, {{"a"}, 9}, {{}, 3}, {{"\xff"}, 4}};
      }));
  std::vector<FamilySnapshot> families = registry.Collect();
  ASSERT_EQ(families.size(), 1u);
  ASSERT_EQ(families[0].metrics.size(), 2u);
  EXPECT_THAT(families[0].metrics[0].label_values, ElementsAre("a"));
  EXPECT_EQ(families[0].metrics[0].value, 1);
  EXPECT_THAT(families[0].metrics[1].label_values, ElementsAre("b"));
}

TEST(RegistryTest, CallbackHistogramIsRejected) {
  Registry registry;
  EXPECT_THAT(
      registry.AddCallbackFamily("cb", "h", MetricType::kHistogram, {},
                                 [] { return std::vector<CallbackSample>{}; }),
      StatusIs(absl::StatusCode::kInvalidArgument, _));
}

TEST(RegistryTest, ConcurrentAddAndCollect) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Counter> * family,
                       registry.AddCounterFamily("c_total", "h", {"k"}));
  std::thread adder([family] {
    for (int i = 0; i < 2000; ++i) {
      absl::StatusOr<Counter*> counter = family->Add({std::to_string(i % 100)});
      if (counter.ok()) (*counter)->Increment();
    }
  });
  size_t max_seen = 0;
  for (int i = 0; i < 200; ++i) {
    max_seen = std::max(max_seen, registry.Collect()[0].metrics.size());
  }
  adder.join();
  EXPECT_LE(max_seen, 100u);
  double total = 0;
  const std::vector<FamilySnapshot> families = registry.Collect();
  for (const MetricSnapshot& m : families[0].metrics) total += m.value;
  EXPECT_EQ(total, 2000);
}

}  // namespace
}  // namespace compatd::metrics
