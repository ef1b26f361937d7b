#include "metrics/process_metrics.h"

#include <unistd.h>

#include <ctime>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"
#include "tests/testing/status_matchers.h"

namespace compatd::metrics {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;

TEST(ParseProcStatTest, CountsFieldsFromTheLastParenthesis) {
  // A command name with spaces and parentheses, as proc(5) allows.
  const char* stat =
      "4242 (my (weird) cmd) S 1 4242 4242 0 -1 4194560 1000 0 0 0 "
      "250 150 0 0 20 0 3 0 12345 104857600 2560 18446744073709551615";
  ProcessStats stats;
  ASSERT_OK(ParseProcStat(stat, 100, 4096, 1700000000, &stats));
  EXPECT_DOUBLE_EQ(*stats.cpu_seconds, 4.0);  // (250 + 150) / 100
  EXPECT_DOUBLE_EQ(*stats.virtual_memory_bytes, 104857600);
  EXPECT_DOUBLE_EQ(*stats.resident_memory_bytes, 2560.0 * 4096);
  EXPECT_DOUBLE_EQ(*stats.start_time_seconds, 1700000000 + 123.45);
}

TEST(ParseProcStatTest, RejectsMalformedText) {
  ProcessStats stats;
  EXPECT_THAT(ParseProcStat("garbage", 100, 4096, 0, &stats),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(ParseProcStat("1 (x) S 1 2 3", 100, 4096, 0, &stats),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(ParseProcStat("1 (x) S 1 2 3 4 5 6 7 8 9 10 x y 0 0 0 0 0 0 1 "
                            "2 3",
                            100, 4096, 0, &stats),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
}

TEST(ReadProcessStatsTest, ReadsPlausibleValuesForThisProcess) {
  ProcessStats stats = ReadProcessStats();
  ASSERT_TRUE(stats.cpu_seconds.has_value());
  EXPECT_GE(*stats.cpu_seconds, 0);
  ASSERT_TRUE(stats.resident_memory_bytes.has_value());
  EXPECT_GT(*stats.resident_memory_bytes, 0);
  ASSERT_TRUE(stats.virtual_memory_bytes.has_value());
  EXPECT_GE(*stats.virtual_memory_bytes, *stats.resident_memory_bytes);
  ASSERT_TRUE(stats.open_fds.has_value());
  EXPECT_GE(*stats.open_fds, 3);  // stdin, stdout, stderr
  ASSERT_TRUE(stats.max_fds.has_value());
  EXPECT_GE(*stats.max_fds, *stats.open_fds);
  ASSERT_TRUE(stats.start_time_seconds.has_value());
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(*stats.start_time_seconds, now + 1);
  EXPECT_GT(*stats.start_time_seconds, now - 3600);
}

TEST(ReadProcessStatsTest, OpenFdsFollowsOpenAndClose) {
  const double before = *ReadProcessStats().open_fds;
  const int fd = dup(1);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(*ReadProcessStats().open_fds, before + 1);
  close(fd);
  EXPECT_EQ(*ReadProcessStats().open_fds, before);
}

TEST(RegisterProcessMetricsTest, RegistersTheSixFamilies) {
  Registry registry;
  ASSERT_OK(RegisterProcessMetrics(&registry));
  std::vector<prometheus::MetricFamily> families = registry.Collect();
  std::vector<std::string> names;
  for (const prometheus::MetricFamily& family : families) {
    names.push_back(family.name);
  }
  EXPECT_THAT(names,
              ElementsAre("process_cpu_seconds_total", "process_max_fds",
                          "process_open_fds", "process_resident_memory_bytes",
                          "process_start_time_seconds",
                          "process_virtual_memory_bytes"));
  EXPECT_EQ(families[0].type, prometheus::MetricType::Counter);
  EXPECT_EQ(families[2].type, prometheus::MetricType::Gauge);
  EXPECT_GT(families[2].metric.at(0).gauge.value, 0);  // process_open_fds
  EXPECT_THAT(RegisterProcessMetrics(&registry),
              StatusIs(absl::StatusCode::kAlreadyExists, _));
}

}  // namespace
}  // namespace compatd::metrics
