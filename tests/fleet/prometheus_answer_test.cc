// ParseInstantVector against answers in the shape Prometheus' HTTP API
// documents for /api/v1/query (prometheus/docs/querying/api.md, "Instant
// vectors" and "Format overview"), and what it must refuse.

#include "fleet/prometheus_answer.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fleet/fake_prometheus.h"
#include "tests/testing/status_matchers.h"

namespace compatd::fleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::vector<std::string> kPair = {"component", "version"};

TEST(ParseInstantVectorTest, ReadsSamplesAndIgnoresOtherLabels) {
  // Prometheus' documented example answer, with a vector of two samples.
  const std::string body = R"({
    "status" : "success",
    "data" : {
      "resultType" : "vector",
      "result" : [
        {"metric" : {"component" : "kubelet", "version" : "1.33",
                     "job" : "compatd"},
         "value" : [ 1435781451.781, "1764230399.5" ]},
        {"metric" : {"component" : "kubectl", "version" : "unknown"},
         "value" : [ 1435781451.781, "12" ]}
      ]
    }
  })";
  absl::StatusOr<std::vector<VectorSample>> samples =
      ParseInstantVector(body, kPair, 10);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_THAT((*samples)[0].labels, ElementsAre("kubelet", "1.33"));
  EXPECT_DOUBLE_EQ((*samples)[0].value, 1764230399.5);
  EXPECT_THAT((*samples)[1].labels, ElementsAre("kubectl", "unknown"));
  EXPECT_DOUBLE_EQ((*samples)[1].value, 12);
}

TEST(ParseInstantVectorTest, EmptyVectorAndLabelFreeSample) {
  absl::StatusOr<std::vector<VectorSample>> empty =
      ParseInstantVector(VectorAnswer({}), kPair, 10);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT(*empty, IsEmpty());
  // count(...) answers one sample with no labels.
  absl::StatusOr<std::vector<VectorSample>> count =
      ParseInstantVector(VectorAnswer({{"{}", "3"}}), {}, 10);
  ASSERT_TRUE(count.ok()) << count.status();
  ASSERT_EQ(count->size(), 1u);
  EXPECT_EQ((*count)[0].value, 3);
}

TEST(ParseInstantVectorTest, PrometheusErrorIsQuoted) {
  absl::StatusOr<std::vector<VectorSample>> samples = ParseInstantVector(
      R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected <by>"})",
      kPair, 10);
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(samples.status().message(),
              HasSubstr("bad_data: 1:5: parse error: unexpected <by>"));
}

// Issue 36: an error answer's text is logged and reaches ListClients'
// view.note: newlines, ESC and invalid UTF-8 come out escaped, on one line.
TEST(ParseInstantVectorTest, PrometheusTextIsQuotedPrintable) {
  absl::StatusOr<std::vector<VectorSample>> samples = ParseInstantVector(
      "{\"status\":\"error\",\"errorType\":\"bad\\ndata\",\"error\":"
      "\"x\\n2026-01-01T00:00:00.000Z E forged\\u001b[2J\"}",
      kPair, 10);
  ASSERT_EQ(samples.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(samples.status().message(),
              HasSubstr("bad\\ndata: x\\n2026-01-01T00:00:00.000Z E forged"
                        "\\x1b[2J"));
  absl::StatusOr<std::vector<VectorSample>> garbage =
      ParseInstantVector("<html>\r\n\xc2\x85\xff</html>", kPair, 10);
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(garbage.status().message(),
              HasSubstr("<html>\\r\\n\\u0085\\xff</html>"));
}

TEST(ParseInstantVectorTest, RefusesWhatIsNotAnInstantVector) {
  struct Case {
    std::string body;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"", "not JSON"},
      {"<html>502 Bad Gateway</html>", "not JSON"},
      {R"({"status":"success","data":{"resultType":"vector","result":[})",
       "not JSON"},
      {R"({"status":"success","data":{"resultType":"vector","result":[]}} x)",
       "not JSON"},
      {"[]", "not a JSON object"},
      {R"({"data":{}})", "no \"status\""},
      {R"({"status":"partial"})", "status \"partial\""},
      {R"({"status":"success"})", "no \"data\" object"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
       "\"matrix\", not \"vector\""},
      {R"({"status":"success","data":{"resultType":"vector","result":{}}})",
       "data.result is missing or not an array"},
      {R"({"status":"success","data":{"resultType":"vector","result":[1]}})",
       "data.result[0] is not an object"},
      {VectorAnswer({{R"({"component":"kubelet"})", "1"}}),
       "data.result[0].metric has no string label \"version\""},
      {VectorAnswer({{R"({"component":"kubelet","version":1.33})", "1"}}),
       "has no string label \"version\""},
      {VectorAnswer({{R"({"component":"","version":"1.33"})", "1"}}),
       "1..256 bytes of printable ASCII"},
      {VectorAnswer({{R"({"component":"kube\nlet","version":"1.33"})", "1"}}),
       "1..256 bytes of printable ASCII"},
      {VectorAnswer({{absl::StrCat(R"({"component":")", std::string(257, 'k'),
                                   R"(","version":"1.33"})"),
                      "1"}}),
       "1..256 bytes of printable ASCII"},
      {VectorAnswer({{R"({"component":"kubelet","version":"1.33"})", "NaN"}}),
       "is not a finite number"},
      {VectorAnswer({{R"({"component":"kubelet","version":"1.33"})", "+Inf"}}),
       "is not a finite number"},
      {VectorAnswer({{R"({"component":"kubelet","version":"1.33"})", "x"}}),
       "is not a finite number"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"component":"a","version":"1"},"value":[1]}]}})",
       "is not a [timestamp, \"value\"] pair"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"component":"a","version":"1"},"value":[1,2]}]}})",
       "is not a [timestamp, \"value\"] pair"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":[],"value":[1,"2"]}]}})",
       "metric is missing or not an object"},
      {std::string(40, '[') + std::string(40, ']'), "not JSON"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<VectorSample>> samples =
        ParseInstantVector(c.body, kPair, 10);
    EXPECT_EQ(samples.status().code(), absl::StatusCode::kDataLoss) << c.body;
    EXPECT_THAT(samples.status().message(), HasSubstr(c.says)) << c.body;
  }
}

TEST(ParseInstantVectorTest, MoreSeriesThanTheBoundAreRefused) {
  std::vector<std::pair<std::string, std::string>> samples;
  for (int i = 0; i < 11; ++i) {
    samples.emplace_back(
        absl::StrCat(R"({"component":"c)", i, R"(","version":"1.33"})"), "1");
  }
  absl::StatusOr<std::vector<VectorSample>> parsed =
      ParseInstantVector(VectorAnswer(samples), kPair, 10);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(parsed.status().message(),
              HasSubstr("11 series; at most 10 are read"));
  samples.pop_back();
  EXPECT_TRUE(ParseInstantVector(VectorAnswer(samples), kPair, 10).ok());
}

}  // namespace
}  // namespace compatd::fleet
