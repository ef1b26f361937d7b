#include "metrics/registry.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"
#include "tests/testing/status_matchers.h"

namespace compatd::metrics {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The series of family `name` in a scrape: each one's label values (in the
// written order) and value (counter or gauge).
struct Series {
  std::vector<std::string> labels;
  double value;
  bool operator==(const Series&) const = default;
};
void PrintTo(const Series& s, std::ostream* os) {
  *os << ::testing::PrintToString(s.labels) << "=" << s.value;
}
std::vector<Series> SeriesOf(const Registry& registry, absl::string_view name) {
  std::vector<Series> out;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      Series& series = out.emplace_back();
      for (const auto& label : metric.label)
        series.labels.push_back(label.value);
      series.value = family.type == prometheus::MetricType::Counter
                         ? metric.counter.value
                         : metric.gauge.value;
    }
  }
  return out;
}
std::vector<std::string> Names(const Registry& registry) {
  std::vector<std::string> names;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    names.push_back(family.name);
  }
  return names;
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
  EXPECT_EQ(SeriesOf(registry, "x_total").size(), 2u);
}

TEST(RegistryTest, AddRejectsWrongArityAndInvalidUtf8) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Gauge> * family,
                       registry.AddGaugeFamily("g", "h", {"a"}));
  EXPECT_THAT(family->Add({}), StatusIs(absl::StatusCode::kInvalidArgument,
                                        HasSubstr("has 1 labels, got 0")));
  EXPECT_THAT(family->Add({"\xff"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("UTF-8")));
  ASSERT_OK_AND_ASSIGN(Family<Histogram> * histograms,
                       registry.AddHistogramFamily("h", "h", {"a"}, {1}));
  EXPECT_THAT(histograms->Add({"a", "b"}),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(histograms->Add({"\xc0\xaf"}),  // overlong
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("UTF-8")));
  EXPECT_THAT(Names(registry), IsEmpty());
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
  EXPECT_THAT(registry.AddCallbackValue("queue_sum", "h", MetricType::kGauge,
                                        [] { return 1.0; }),
              StatusIs(absl::StatusCode::kAlreadyExists, _));
}

TEST(RegistryTest, RejectsBadNamesHelpAndBuckets) {
  Registry registry;
  EXPECT_THAT(
      registry.AddCounterFamily("bad-name", "h", {}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"bad-name\"")));
  EXPECT_THAT(registry.AddCounterFamily("1abc", "h", {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(registry.AddCounterFamily("ok_total", "h", {"__x"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(registry.AddCounterFamily("ok_total", "h", {"a:b"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(
      registry.AddCounterFamily("ok_total", "h", {"a", "a"}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("repeated")));
  EXPECT_THAT(registry.AddCounterFamily("ok_total", "\xff", {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("UTF-8")));
  EXPECT_THAT(
      registry.AddHistogramFamily("h", "h", {"le"}, {1}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"le\"")));
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::vector<double>& bounds : std::vector<std::vector<double>>{
           {}, {1, 1}, {2, 1}, {nan}, {inf}, {1, inf, 2}, {-inf, 1}}) {
    EXPECT_THAT(registry.AddHistogramFamily("h", "h", {}, bounds).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, _))
        << ::testing::PrintToString(bounds);
  }
  // A failed registration reserves nothing.
  EXPECT_OK(registry.AddCounterFamily("ok_total", "h", {}).status());
  EXPECT_OK(registry.AddHistogramFamily("h", "h", {}, {1, inf}).status());
}

TEST(RegistryTest, CollectSortsFamiliesAndSeriesAndKeepsLabelOrder) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Gauge> * zeta,
                       registry.AddGaugeFamily("zeta", "h", {"z", "a"}));
  ASSERT_OK_AND_ASSIGN(Family<Counter> * beta,
                       registry.AddCounterFamily("beta_total", "h", {}));
  ASSERT_OK_AND_ASSIGN(Family<Gauge> * alpha,
                       registry.AddGaugeFamily("alpha", "h", {}));
  ASSERT_OK(zeta->Add({"b", "1"}).status());
  ASSERT_OK(zeta->Add({"a", "2"}).status());
  ASSERT_OK(zeta->Add({"a", "1"}).status());
  ASSERT_OK(alpha->Add({}).status());
  ASSERT_OK(beta->Add({}).status());
  EXPECT_THAT(Names(registry), ElementsAre("alpha", "beta_total", "zeta"));
  EXPECT_THAT(SeriesOf(registry, "zeta"),
              ElementsAre(Series{{"a", "1"}, 0}, Series{{"a", "2"}, 0},
                          Series{{"b", "1"}, 0}));
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != "zeta") continue;
    EXPECT_EQ(family.metric[0].label[0].name, "z");
    EXPECT_EQ(family.metric[0].label[1].name, "a");
  }
}

TEST(RegistryTest, CallbackFamilyIsEvaluatedAtEachCollect) {
  Registry registry;
  double value = 1;
  ASSERT_OK(registry.AddCallbackValue(
      "cb", "h", MetricType::kGauge,
      [&value]() -> std::optional<double> { return value; }));
  EXPECT_THAT(SeriesOf(registry, "cb"), ElementsAre(Series{{}, 1}));
  value = 7;
  EXPECT_THAT(SeriesOf(registry, "cb"), ElementsAre(Series{{}, 7}));
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
      registry.AddCallbackFamily("cb", "h", MetricType::kCounter, {"k"}, [] {
        return std::vector<CallbackSample>{
            {{"b"}, 2}, {{"a"}, 1}, {{"a"}, 9}, {{}, 3}, {{"\xff"}, 4}};
      }));
  EXPECT_THAT(SeriesOf(registry, "cb"),
              ElementsAre(Series{{"a"}, 1}, Series{{"b"}, 2}));
}

TEST(RegistryTest, CallbackHistogramAndNullFunctionAreRejected) {
  Registry registry;
  EXPECT_THAT(
      registry.AddCallbackFamily("cb", "h", MetricType::kHistogram, {},
                                 [] { return std::vector<CallbackSample>{}; }),
      StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(
      registry.AddCallbackFamily("cb", "h", MetricType::kGauge, {}, nullptr),
      StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_OK(registry.AddCallbackFamily("cb", "h", MetricType::kGauge, {}, [] {
    return std::vector<CallbackSample>{};
  }));
}

// A Collectable that writes a described family with labels in another
// order, and one that was never described.
class TwoFamilies final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    prometheus::MetricFamily described;
    described.name = "described";
    described.help = "ignored";
    described.type = prometheus::MetricType::Untyped;
    prometheus::ClientMetric& metric = described.metric.emplace_back();
    metric.label = {{"a", "1"}, {"b", "2"}};
    metric.gauge.value = 5;
    prometheus::ClientMetric& wrong = described.metric.emplace_back();
    wrong.label = {{"a", "1"}};  // not the declared labels: dropped
    prometheus::MetricFamily stranger = described;
    stranger.name = "stranger";
    return {described, stranger};
  }
};

TEST(RegistryTest, CollectableFamiliesFollowTheirDescription) {
  Registry registry;
  ASSERT_OK(registry.AddCollectable(
      {FamilyDescription{
          "described", "Described.", MetricType::kGauge, {"b", "a"}}},
      std::make_shared<TwoFamilies>()));
  const std::vector<prometheus::MetricFamily> families = registry.Collect();
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].help, "Described.");
  EXPECT_EQ(families[0].type, prometheus::MetricType::Gauge);
  EXPECT_THAT(SeriesOf(registry, "described"),
              ElementsAre(Series{{"2", "1"}, 5}));
}

TEST(RegistryTest, AddCollectableIsAllOrNone) {
  Registry registry;
  ASSERT_OK(registry.AddGaugeFamily("taken", "h", {}).status());
  EXPECT_THAT(registry.AddCollectable(
                  {FamilyDescription{"free", "h", MetricType::kGauge, {}},
                   FamilyDescription{"taken", "h", MetricType::kGauge, {}}},
                  std::make_shared<TwoFamilies>()),
              StatusIs(absl::StatusCode::kAlreadyExists, _));
  EXPECT_THAT(registry.AddCollectable(
                  {FamilyDescription{"free", "h", MetricType::kGauge, {}},
                   FamilyDescription{"bad-name", "h", MetricType::kGauge, {}}},
                  std::make_shared<TwoFamilies>()),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(registry.AddCollectable({}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  // "free" was not kept by the failed calls.
  EXPECT_OK(registry.AddGaugeFamily("free", "h", {}).status());
}

TEST(RegistryTest, ConcurrentIncrementsAreExact) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Counter> * family,
                       registry.AddCounterFamily("c_total", "help", {"k"}));
  ASSERT_OK_AND_ASSIGN(Counter * counter, family->Add({"v"}));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([counter] {
      for (int i = 0; i < kPerThread; ++i) counter->Increment();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter->Value(), static_cast<double>(kThreads) * kPerThread);
}

TEST(RegistryTest, ConcurrentAddAndCollect) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Counter> * family,
                       registry.AddCounterFamily("c_total", "h", {"k"}));
  ASSERT_OK_AND_ASSIGN(Family<Histogram> * histograms,
                       registry.AddHistogramFamily("h", "h", {"k"}, {1}));
  std::thread adder([family, histograms] {
    for (int i = 0; i < 2000; ++i) {
      const std::string key = std::to_string(i % 100);
      absl::StatusOr<Counter*> counter = family->Add({key});
      if (counter.ok()) (*counter)->Increment();
      absl::StatusOr<Histogram*> histogram = histograms->Add({key});
      if (histogram.ok()) (*histogram)->Observe(0.5);
    }
  });
  std::thread registrar([&registry] {
    for (int i = 0; i < 50; ++i) {
      (void)registry.AddGaugeFamily("g" + std::to_string(i), "h", {});
    }
  });
  size_t max_seen = 0;
  for (int i = 0; i < 200; ++i) {
    max_seen = std::max(max_seen, SeriesOf(registry, "c_total").size());
  }
  adder.join();
  registrar.join();
  EXPECT_LE(max_seen, 100u);
  double total = 0;
  for (const Series& series : SeriesOf(registry, "c_total")) {
    total += series.value;
  }
  EXPECT_EQ(total, 2000);
}

}  // namespace
}  // namespace compatd::metrics
