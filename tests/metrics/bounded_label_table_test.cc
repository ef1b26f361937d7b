#include "metrics/bounded_label_table.h"

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "metrics/text_format.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"
#include "tests/testing/status_matchers.h"

namespace compatd::metrics {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::_;

// The number of series of the registry's only family.
size_t SeriesCount(const Registry& registry) {
  const std::vector<prometheus::MetricFamily> families = registry.Collect();
  return families.empty() ? 0 : families[0].metric.size();
}

BoundedLabelTableOptions Bound(size_t max_label_sets) {
  BoundedLabelTableOptions options;
  options.max_label_sets = max_label_sets;
  return options;
}

std::string RandomValue(std::mt19937_64& rng) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789-./";
  std::uniform_int_distribution<size_t> length(1, 40);
  std::uniform_int_distribution<size_t> pick(0, sizeof(kChars) - 2);
  std::string value(length(rng), ' ');
  for (char& c : value) c = kChars[pick(rng)];
  return value;
}

TEST(BoundedLabelTableTest, AdmitsLabelSetsUpToTheBound) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Counter> * family,
                       registry.AddCounterFamily("c_total", "h", {"k"}));
  BoundedLabelTable<Counter> table(family, Bound(4));
  for (const char* value : {"a", "b", "c"}) {
    ASSERT_OK_AND_ASSIGN(Counter * counter, table.Get({value}));
    counter->Increment();
  }
  ASSERT_OK_AND_ASSIGN(Counter * a_again, table.Get({"a"}));
  ASSERT_OK_AND_ASSIGN(Counter * a_direct, family->Add({"a"}));
  EXPECT_EQ(a_again, a_direct);
  EXPECT_EQ(a_direct->Value(), 1);
}

TEST(BoundedLabelTableTest, OverflowGoesToOther) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Counter> * family,
                       registry.AddCounterFamily("c_total", "h", {"k"}));
  BoundedLabelTable<Counter> table(family, Bound(3));
  ASSERT_OK(table.Get({"a"}).status());
  ASSERT_OK(table.Get({"b"}).status());
  ASSERT_OK_AND_ASSIGN(Counter * c, table.Get({"c"}));
  ASSERT_OK_AND_ASSIGN(Counter * d, table.Get({"d"}));
  ASSERT_OK_AND_ASSIGN(Counter * other, family->Add({"other"}));
  EXPECT_EQ(c, other);
  EXPECT_EQ(d, other);
  EXPECT_EQ(SeriesCount(registry), 3u);
}

TEST(BoundedLabelTableTest, OverflowKeepsTheClosedSetLabels) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(
      Family<Counter> * family,
      registry.AddCounterFamily("c_total", "h",
                                {"component", "version", "verdict"}));
  BoundedLabelTable<Counter> table(
      family,
      {.max_label_sets = 6, .overflow_labels = {0, 1}, .overflow_reserve = 2});
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK(table.Get({std::to_string(i), "1.31", "allowed"}).status());
  }
  ASSERT_OK_AND_ASSIGN(Counter * allowed, table.Get({"x", "1.30", "allowed"}));
  ASSERT_OK_AND_ASSIGN(Counter * too_old, table.Get({"y", "1.20", "too_old"}));
  EXPECT_NE(allowed, too_old);
  ASSERT_OK_AND_ASSIGN(Counter * other_allowed,
                       family->Add({"other", "other", "allowed"}));
  ASSERT_OK_AND_ASSIGN(Counter * other_too_old,
                       family->Add({"other", "other", "too_old"}));
  EXPECT_EQ(allowed, other_allowed);
  EXPECT_EQ(too_old, other_too_old);
  // Past the reserve: the first overflow label set.
  ASSERT_OK_AND_ASSIGN(Counter * too_new, table.Get({"z", "1.40", "too_new"}));
  EXPECT_EQ(too_new, other_allowed);
  EXPECT_EQ(SeriesCount(registry), 6u);
}

TEST(BoundedLabelTableTest, HundredThousandRandomValuesStayAtTheBound) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(
      Family<Counter> * family,
      registry.AddCounterFamily("c_total", "h", {"component", "version"}));
  BoundedLabelTable<Counter> table(family, {});  // default: 256
  std::mt19937_64 rng(42);
  for (int i = 0; i < 100000; ++i) {
    ASSERT_OK_AND_ASSIGN(Counter * counter,
                         table.Get({RandomValue(rng), RandomValue(rng)}));
    counter->Increment();
  }
  EXPECT_EQ(SeriesCount(registry), kDefaultMaxLabelSets);
  EXPECT_EQ(table.size(), kDefaultMaxLabelSets);
  // Every increment is kept, in some series.
  double total = 0;
  const std::vector<prometheus::MetricFamily> families = registry.Collect();
  for (const prometheus::ClientMetric& metric : families[0].metric) {
    total += metric.counter.value;
  }
  EXPECT_EQ(total, 100000);
  ASSERT_OK_AND_ASSIGN(Counter * other, family->Add({"other", "other"}));
  EXPECT_EQ(other->Value(), 100000 - (kDefaultMaxLabelSets - 1));
  // The scrape is bounded too: HELP + TYPE + one line per series.
  const std::string text = SerializeText(families);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'),
            static_cast<long>(kDefaultMaxLabelSets + 2));
}

TEST(BoundedLabelTableTest, ConcurrentGetsRespectTheBound) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Counter> * family,
                       registry.AddCounterFamily("c_total", "h", {"k"}));
  BoundedLabelTable<Counter> table(family, Bound(64));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&table, t] {
      std::mt19937_64 rng(t);
      for (int i = 0; i < 5000; ++i) {
        absl::StatusOr<Counter*> counter = table.Get({RandomValue(rng)});
        if (counter.ok()) (*counter)->Increment();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(SeriesCount(registry), 64u);
}

TEST(BoundedLabelTableTest, PassesFamilyErrorsThrough) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Counter> * family,
                       registry.AddCounterFamily("c_total", "h", {"k"}));
  BoundedLabelTable<Counter> table(family, {});
  EXPECT_THAT(table.Get({"a", "b"}),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(table.Get({"\xff"}),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_EQ(table.size(), 0u);
}

}  // namespace
}  // namespace compatd::metrics
