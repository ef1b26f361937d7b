#include "metrics/text_format.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "tests/testing/status_matchers.h"

namespace compatd::metrics {
namespace {

using ::testing::HasSubstr;

// Expected bytes follow the exposition format spec (prometheus/docs
// content/docs/instrumenting/exposition_formats.md) as prometheus-cpp 1.0.1's
// TextSerializer writes it (core/src/text_serializer.cc at v1.0.1): values
// through an ostream with precision max_digits10 - 1 = 16 ("%.16g"), NaN as
// "Nan", a histogram's _count and _sum before its buckets.
TEST(SerializeTextTest, ValuesTable) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    double value;
    const char* expected;
  };
  const Case cases[] = {
      {0, "0"},
      {1, "1"},
      {-3, "-3"},
      {1234567, "1234567"},
      {1e15, "1000000000000000"},
      {1e16, "1e+16"},
      {0.5, "0.5"},
      {0.0001, "0.0001"},
      {0.00005, "5e-05"},
      {123456.789, "123456.789"},
      {0.1 + 0.2, "0.3"},  // 16 significant digits, not the shortest
      {1765112345.25, "1765112345.25"},
      {1e21, "1e+21"},
      {inf, "+Inf"},
      {-inf, "-Inf"},
      {std::numeric_limits<double>::quiet_NaN(), "Nan"},
  };
  for (const Case& c : cases) {
    Registry registry;
    ASSERT_OK_AND_ASSIGN(Family<Gauge> * family,
                         registry.AddGaugeFamily("g", "G.", {}));
    ASSERT_OK_AND_ASSIGN(Gauge * gauge, family->Add({}));
    gauge->Set(c.value);
    EXPECT_EQ(SerializeText(registry.Collect()),
              absl::StrCat("# HELP g G.\n# TYPE g gauge\ng ", c.expected, "\n"))
        << c.expected;
  }
}

TEST(SerializeTextTest, CounterAndGaugeGolden) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Counter> * reloads,
                       registry.AddCounterFamily(
                           "compatd_catalog_reloads_total",
                           "Reloads, by result.\nSee \\docs.", {"result"}));
  ASSERT_OK_AND_ASSIGN(Counter * rejected, reloads->Add({"rejected"}));
  ASSERT_OK_AND_ASSIGN(Counter * loaded, reloads->Add({"loaded"}));
  loaded->Increment(3);
  rejected->Increment();
  ASSERT_OK_AND_ASSIGN(
      Family<Gauge> * generation,
      registry.AddGaugeFamily("compatd_catalog_generation", "Generation.", {}));
  ASSERT_OK_AND_ASSIGN(Gauge * gauge, generation->Add({}));
  gauge->Set(42);
  ASSERT_OK_AND_ASSIGN(Family<Gauge> * odd,
                       registry.AddGaugeFamily("odd", "Odd values.", {"v"}));
  ASSERT_OK_AND_ASSIGN(Gauge * escaped, odd->Add({"a\"b\\c\nd"}));
  escaped->Set(0.5);

  // Families by name, series by label value; HELP escapes \ and newline.
  EXPECT_EQ(SerializeText(registry.Collect()),
            "# HELP compatd_catalog_generation Generation.\n"
            "# TYPE compatd_catalog_generation gauge\n"
            "compatd_catalog_generation 42\n"
            "# HELP compatd_catalog_reloads_total Reloads, by result.\\nSee "
            "\\\\docs.\n"
            "# TYPE compatd_catalog_reloads_total counter\n"
            "compatd_catalog_reloads_total{result=\"loaded\"} 3\n"
            "compatd_catalog_reloads_total{result=\"rejected\"} 1\n"
            "# HELP odd Odd values.\n"
            "# TYPE odd gauge\n"
            "odd{v=\"a\\\"b\\\\c\\nd\"} 0.5\n");
}

TEST(SerializeTextTest, LabelsInTheFamilysOrderNotByName) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(
      Family<Counter> * handled,
      registry.AddCounterFamily("grpc_server_handled_total", "Handled.",
                                {"grpc_type", "grpc_method", "grpc_code"}));
  ASSERT_OK_AND_ASSIGN(Counter * counter,
                       handled->Add({"unary", "CheckSkew", "OK"}));
  counter->Increment();
  EXPECT_THAT(SerializeText(registry.Collect()),
              HasSubstr("grpc_server_handled_total{grpc_type=\"unary\","
                        "grpc_method=\"CheckSkew\",grpc_code=\"OK\"} 1\n"));
}

TEST(SerializeTextTest, HistogramGolden) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(
      Family<Histogram> * family,
      registry.AddHistogramFamily("grpc_server_handling_seconds", "Latency.",
                                  {"grpc_method"}, {0.00005, 0.001, 1}));
  ASSERT_OK_AND_ASSIGN(Histogram * check, family->Add({"CheckSkew"}));
  check->Observe(0.00002);
  check->Observe(0.0005);
  check->Observe(0.0005);
  check->Observe(2);
  ASSERT_OK(family->Add({"GetFeature"}).status());

  EXPECT_EQ(
      SerializeText(registry.Collect()),
      "# HELP grpc_server_handling_seconds Latency.\n"
      "# TYPE grpc_server_handling_seconds histogram\n"
      "grpc_server_handling_seconds_count{grpc_method=\"CheckSkew\"} 4\n"
      "grpc_server_handling_seconds_sum{grpc_method=\"CheckSkew\"} 2.00102\n"
      "grpc_server_handling_seconds_bucket{grpc_method=\"CheckSkew\",le=\"5e-"
      "05\"} 1\n"
      "grpc_server_handling_seconds_bucket{grpc_method=\"CheckSkew\",le=\"0."
      "001\"} 3\n"
      "grpc_server_handling_seconds_bucket{grpc_method=\"CheckSkew\",le=\"1\"} "
      "3\n"
      "grpc_server_handling_seconds_bucket{grpc_method=\"CheckSkew\",le=\"+"
      "Inf\"} 4\n"
      "grpc_server_handling_seconds_count{grpc_method=\"GetFeature\"} 0\n"
      "grpc_server_handling_seconds_sum{grpc_method=\"GetFeature\"} 0\n"
      "grpc_server_handling_seconds_bucket{grpc_method=\"GetFeature\",le=\"5e-"
      "05\"} 0\n"
      "grpc_server_handling_seconds_bucket{grpc_method=\"GetFeature\",le=\"0."
      "001\"} 0\n"
      "grpc_server_handling_seconds_bucket{grpc_method=\"GetFeature\",le=\"1\"}"
      " 0\n"
      "grpc_server_handling_seconds_bucket{grpc_method=\"GetFeature\",le=\"+"
      "Inf\"} 0\n");
}

TEST(SerializeTextTest, UnlabelledHistogramHasOnlyLe) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Histogram> * family,
                       registry.AddHistogramFamily("h", "H.", {}, {1}));
  ASSERT_OK_AND_ASSIGN(Histogram * histogram, family->Add({}));
  histogram->Observe(0.5);
  EXPECT_EQ(SerializeText(registry.Collect()),
            "# HELP h H.\n"
            "# TYPE h histogram\n"
            "h_count 1\n"
            "h_sum 0.5\n"
            "h_bucket{le=\"1\"} 1\n"
            "h_bucket{le=\"+Inf\"} 1\n");
}

TEST(SerializeTextTest, FamilyWithoutSeriesIsLeftOut) {
  Registry registry;
  ASSERT_OK(
      registry.AddCounterFamily("empty_total", "Nothing yet.", {"k"}).status());
  ASSERT_OK(registry.AddHistogramFamily("empty", "Nothing.", {}, {1}).status());
  EXPECT_EQ(SerializeText(registry.Collect()), "");
}

TEST(SerializeTextTest, Utf8LabelValuesPassThrough) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(Family<Gauge> * family,
                       registry.AddGaugeFamily("g", "G.", {"k"}));
  ASSERT_OK_AND_ASSIGN(Gauge * gauge, family->Add({"caf\xc3\xa9"}));
  gauge->Set(1);
  EXPECT_THAT(SerializeText(registry.Collect()),
              HasSubstr("g{k=\"caf\xc3\xa9\"} 1\n"));
}

}  // namespace
}  // namespace compatd::metrics
