// compatd scraped by a real Prometheus server (Debian package "prometheus",
// /usr/bin/prometheus), both on loopback: an out-of-allowance kubelet and an
// allowed kubectl call compatd; Prometheus scrapes it every second with the
// configuration of tests/testdata/prometheus/prometheus.yml and evaluates the
// alert rules of k8s/monitoring/prometheusrule.yaml; the test asks
// Prometheus' HTTP API (/api/v1/query) what it stored and which alert is
// pending. Both processes stop by themselves (RAII), also when a test fails.

#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/integration/prometheus_process.h"
#include "tests/testing/status_matchers.h"

namespace compatd {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

using ::compatd::testing::kPrometheus;
constexpr char kKubeletAgent[] =
    "kubelet/v1.31.0 (linux/amd64) kubernetes/abc1234";

// A small JSON reader for Prometheus' API answers (RFC 8259). Not
// protobuf's Struct: protobuf's map is not usable in the TSan build (its
// layout differs from Debian's uninstrumented libprotobuf).
struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;

  // The member `key` of an object, or nullptr.
  const Json* Get(absl::string_view key) const {
    for (const auto& [name, value] : object) {
      if (name == key) return &value;
    }
    return nullptr;
  }
};

class JsonReader {
 public:
  explicit JsonReader(absl::string_view text) : text_(text) {}

  absl::StatusOr<Json> ReadDocument() {
    Json value;
    if (!ReadValue(&value, 0)) return Error();
    SkipSpace();
    if (pos_ != text_.size()) return Error();
    return value;
  }

 private:
  absl::Status Error() const {
    return absl::DataLossError(
        absl::StrCat("bad JSON at byte ", pos_, ": ", text_.substr(0, 400)));
  }
  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' ||
            text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  bool ReadHex4(uint32_t* out) {
    if (pos_ + 4 > text_.size()) return false;
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        value |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    *out = value;
    return true;
  }
  bool ReadString(std::string* out) {
    if (!Consume('"')) return false;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) return false;
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!ReadHex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
            uint32_t low = 0;
            if (!ConsumeWord("\\u") || !ReadHex4(&low) || low < 0xDC00 ||
                low > 0xDFFF) {
              return false;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }
  bool ReadValue(Json* out, int depth) {
    if (depth > 64) return false;
    SkipSpace();
    if (pos_ >= text_.size()) return false;
    const char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      out->type = Json::Type::kObject;
      if (Consume('}')) return true;
      do {
        std::string key;
        Json value;
        if (!ReadString(&key) || !Consume(':') ||
            !ReadValue(&value, depth + 1)) {
          return false;
        }
        out->object.emplace_back(std::move(key), std::move(value));
      } while (Consume(','));
      return Consume('}');
    }
    if (c == '[') {
      ++pos_;
      out->type = Json::Type::kArray;
      if (Consume(']')) return true;
      do {
        Json value;
        if (!ReadValue(&value, depth + 1)) return false;
        out->array.push_back(std::move(value));
      } while (Consume(','));
      return Consume(']');
    }
    if (c == '"') {
      out->type = Json::Type::kString;
      return ReadString(&out->string);
    }
    for (const bool word : {true, false}) {
      if (ConsumeWord(word ? "true" : "false")) {
        out->type = Json::Type::kBool;
        out->boolean = word;
        return true;
      }
    }
    if (ConsumeWord("null")) {
      out->type = Json::Type::kNull;
      return true;
    }
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           absl::string_view("+-0123456789.eE").find(text_[pos_]) !=
               absl::string_view::npos) {
      ++pos_;
    }
    out->type = Json::Type::kNumber;
    return pos_ > start &&
           absl::SimpleAtod(text_.substr(start, pos_ - start), &out->number);
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// One element of a Prometheus instant-vector result.
struct PromSample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

std::string Render(const std::vector<PromSample>& samples) {
  std::string out;
  for (const PromSample& s : samples) {
    absl::StrAppend(&out, "\n  {");
    for (const auto& [k, v] : s.labels) absl::StrAppend(&out, k, "=", v, " ");
    absl::StrAppend(&out, "} ", s.value);
  }
  return out.empty() ? " (empty)" : out;
}

// Debian's Prometheus (tests/integration/prometheus_process.h), asked
// instant queries.
class PrometheusProcess : public testing::PrometheusProcess {
 public:
  // GET /api/v1/query?query=`expr`: the instant vector, or an error with
  // Prometheus' own message.
  absl::StatusOr<std::vector<PromSample>> Query(const std::string& expr) const {
    absl::StatusOr<testing::HttpReply> reply = testing::HttpGet(
        port(), absl::StrCat("/api/v1/query?query=", testing::UrlEncode(expr)));
    if (!reply.ok()) return reply.status();
    absl::StatusOr<Json> json = JsonReader(reply->body).ReadDocument();
    if (!json.ok()) return json.status();
    const Json* status = json->Get("status");
    if (reply->status != 200 || status == nullptr ||
        status->string != "success") {
      return absl::InvalidArgumentError(absl::StrCat(
          "query ", expr, " failed (HTTP ", reply->status, "): ", reply->body));
    }
    const Json* data = json->Get("data");
    const Json* type = data == nullptr ? nullptr : data->Get("resultType");
    const Json* result = data == nullptr ? nullptr : data->Get("result");
    if (type == nullptr || type->string != "vector" || result == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "query ", expr, " is not an instant vector: ", reply->body));
    }
    std::vector<PromSample> samples;
    for (const Json& item : result->array) {
      const Json* metric = item.Get("metric");
      const Json* value = item.Get("value");
      PromSample sample;
      if (metric == nullptr || value == nullptr || value->array.size() != 2 ||
          !absl::SimpleAtod(value->array[1].string, &sample.value)) {
        return absl::DataLossError(
            absl::StrCat("bad sample in: ", reply->body));
      }
      for (const auto& [key, label] : metric->object) {
        sample.labels[key] = label.string;
      }
      samples.push_back(std::move(sample));
    }
    return samples;
  }

  // Polls Query(expr) until `done` holds (up to `timeout`); the last result.
  template <typename Predicate>
  absl::StatusOr<std::vector<PromSample>> QueryUntil(
      const std::string& expr, Predicate done,
      std::chrono::milliseconds timeout = 30s) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    absl::StatusOr<std::vector<PromSample>> last;
    while (true) {
      last = Query(expr);
      if (!last.ok() || done(*last) ||
          std::chrono::steady_clock::now() > deadline) {
        return last;
      }
      std::this_thread::sleep_for(200ms);
    }
  }
};

// The `spec` of the PrometheusRule (everything indented under the last
// top-level key "spec:"), which is a plain Prometheus rule file.
absl::StatusOr<std::string> RuleFileOfPrometheusRule() {
  absl::StatusOr<std::string> contents = testing::ReadFile(
      absl::StrCat(COMPATD_SOURCE_DIR, "/k8s/monitoring/prometheusrule.yaml"));
  if (!contents.ok()) return contents.status();
  std::string spec;
  bool in_spec = false;
  for (absl::string_view line : absl::StrSplit(*contents, '\n')) {
    if (!in_spec) {
      in_spec = line == "spec:";
      continue;
    }
    if (!line.empty() && !absl::StartsWith(line, "  ")) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec must be the last top-level key: ", line));
    }
    if (!line.empty()) line.remove_prefix(2);
    absl::StrAppend(&spec, line, "\n");
  }
  if (!absl::StrContains(spec, "groups:")) {
    return absl::InvalidArgumentError("prometheusrule.yaml has no spec.groups");
  }
  return spec;
}

class PrometheusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(kPrometheus, X_OK), 0)
        << kPrometheus
        << " is missing: scripts/install-deps.sh installs Debian's prometheus";
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_OK(compatd_.Start());
  }

  // Writes the rule file and the configuration, and starts Prometheus.
  void StartPrometheus() {
    ASSERT_OK_AND_ASSIGN(const std::string rules, RuleFileOfPrometheusRule());
    const std::string rule_path = dir_.path() + "/compatd-rules.yaml";
    ASSERT_TRUE(testing::WriteFile(rule_path, rules));
    ASSERT_OK_AND_ASSIGN(
        const std::string config_template,
        testing::ReadFile(
            absl::StrCat(COMPATD_TESTDATA_DIR, "/prometheus/prometheus.yml")));
    const std::string config = absl::StrReplaceAll(
        config_template,
        {{"@RULE_FILE@", rule_path},
         {"@METRICS_TARGET@",
          absl::StrCat("127.0.0.1:", compatd_.metrics_port())}});
    const std::string config_path = dir_.path() + "/prometheus.yml";
    ASSERT_TRUE(testing::WriteFile(config_path, config));
    ASSERT_OK(prometheus_.Start(config_path, dir_.path() + "/data"));
  }

  grpc::StatusCode GetFeature(
      const std::shared_ptr<grpc::Channel>& channel,
      const std::map<std::string, std::string>& metadata = {}) {
    auto stub = v1::CompatibilityPolicy::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
    v1::GetFeatureRequest request;
    request.set_name("WatchList");
    v1::GetFeatureResponse response;
    return stub->GetFeature(&context, request, &response).error_code();
  }

  // kubelet 1.31 (out of allowance, by User-Agent) `kubelet_calls` times;
  // kubectl 1.36 (allowed, by metadata) `kubectl_calls` times.
  void SendTraffic(int kubelet_calls, int kubectl_calls) {
    auto kubelet = compatd_.NewChannel(kKubeletAgent);
    for (int i = 0; i < kubelet_calls; ++i) {
      EXPECT_EQ(GetFeature(kubelet), grpc::StatusCode::OK);
    }
    auto plain = compatd_.NewChannel();
    for (int i = 0; i < kubectl_calls; ++i) {
      EXPECT_EQ(GetFeature(plain, {{"x-kubernetes-component", "kubectl"},
                                   {"x-kubernetes-version", "v1.36.2"}}),
                grpc::StatusCode::OK);
    }
  }

  // Declared first, destroyed last: after both processes are gone.
  testing::TempDir dir_;
  testing::CompatdProcess compatd_;
  PrometheusProcess prometheus_;
};

// True once the result has exactly one sample, of value `value`.
auto OneSampleOf(double value) {
  return [value](const std::vector<PromSample>& samples) {
    return samples.size() == 1 && samples[0].value == value;
  };
}

TEST_F(PrometheusTest, StoresTheSkewSeriesOfAnOutOfAllowanceKubelet) {
  const auto start = std::chrono::steady_clock::now();
  SendTraffic(/*kubelet_calls=*/3, /*kubectl_calls=*/2);
  StartPrometheus();

  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> too_old,
      prometheus_.QueryUntil(
          R"(compatd_client_requests_total{verdict="too_old"})",
          OneSampleOf(3)));
  ASSERT_EQ(too_old.size(), 1u) << Render(too_old) << prometheus_.Stderr();
  EXPECT_EQ(too_old[0].value, 3);
  EXPECT_EQ(too_old[0].labels.at("component"), "kubelet");
  EXPECT_EQ(too_old[0].labels.at("version"), "1.31");
  EXPECT_EQ(too_old[0].labels.at("job"), "compatd");
  EXPECT_EQ(too_old[0].labels.at("instance"),
            absl::StrCat("127.0.0.1:", compatd_.metrics_port()));

  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> allowed,
      prometheus_.Query(
          R"(compatd_client_requests_total{component="kubectl",verdict="allowed"})"));
  ASSERT_EQ(allowed.size(), 1u) << Render(allowed);
  EXPECT_EQ(allowed[0].value, 2);
  EXPECT_EQ(allowed[0].labels.at("version"), "1.36");

  ASSERT_OK_AND_ASSIGN(const std::vector<PromSample> up,
                       prometheus_.Query(R"(up{job="compatd"})"));
  ASSERT_EQ(up.size(), 1u) << Render(up);
  EXPECT_EQ(up[0].value, 1);

  std::cerr << "Prometheus stored the skew series "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count()
            << " ms after the test started\n";
}

TEST_F(PrometheusTest, OutOfAllowanceGaugeIsOneForKubeletZeroForKubectl) {
  SendTraffic(/*kubelet_calls=*/1, /*kubectl_calls=*/1);
  StartPrometheus();
  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> kubelet,
      prometheus_.QueryUntil(
          R"(compatd_clients_out_of_allowance{component="kubelet"})",
          OneSampleOf(1)));
  ASSERT_EQ(kubelet.size(), 1u) << Render(kubelet);
  EXPECT_EQ(kubelet[0].value, 1);
  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> kubectl,
      prometheus_.Query(
          R"(compatd_clients_out_of_allowance{component="kubectl"})"));
  ASSERT_EQ(kubectl.size(), 1u) << Render(kubectl);
  EXPECT_EQ(kubectl[0].value, 0);

  // docs/metrics.md's "are any clients outside the allowed skew right now?"
  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> outside,
      prometheus_.Query(
          "max by (component) (compatd_clients_out_of_allowance) > 0"));
  ASSERT_EQ(outside.size(), 1u) << Render(outside);
  EXPECT_EQ(outside[0].labels,
            (std::map<std::string, std::string>{{"component", "kubelet"}}));
}

TEST_F(PrometheusTest, DocumentedQueriesNameTheClientsAndTheirVersions) {
  SendTraffic(/*kubelet_calls=*/1, /*kubectl_calls=*/1);
  StartPrometheus();
  // increase() and rate() need the counter to change between two scrapes:
  // wait for the first scrape, then call again.
  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> first,
      prometheus_.QueryUntil(
          "compatd_client_requests_total > 0",
          [](const std::vector<PromSample>& s) { return s.size() == 2; }));
  ASSERT_EQ(first.size(), 2u) << Render(first);
  SendTraffic(/*kubelet_calls=*/2, /*kubectl_calls=*/2);

  // docs/metrics.md: "Which client versions call us at all?"
  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> inventory,
      prometheus_.QueryUntil(
          "sum by (component, version) "
          "(increase(compatd_client_requests_total[1h])) > 0",
          [](const std::vector<PromSample>& s) { return s.size() == 2; }));
  std::vector<std::string> rows;
  for (const PromSample& s : inventory) {
    rows.push_back(
        absl::StrCat(s.labels.at("component"), " ", s.labels.at("version")));
  }
  EXPECT_THAT(rows, UnorderedElementsAre("kubelet 1.31", "kubectl 1.36"));

  // docs/metrics.md: "Which versions of which component are they?"
  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> outside,
      prometheus_.Query(
          "sum by (component, version, verdict) ("
          "rate(compatd_client_requests_total{verdict=~\"too_old|too_new\"}"
          "[10m])) > 0"));
  ASSERT_EQ(outside.size(), 1u) << Render(outside);
  EXPECT_EQ(outside[0].labels,
            (std::map<std::string, std::string>{{"component", "kubelet"},
                                                {"version", "1.31"},
                                                {"verdict", "too_old"}}));
}

TEST_F(PrometheusTest, OutOfAllowanceAlertGoesPendingForKubeletOnly) {
  SendTraffic(/*kubelet_calls=*/1, /*kubectl_calls=*/1);
  StartPrometheus();
  // CompatdClientsOutOfAllowance has `for: 10m`: within the test it is
  // pending, which shows its expression matched the live series.
  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> alerts,
      prometheus_.QueryUntil(
          R"(ALERTS{alertname="CompatdClientsOutOfAllowance"})",
          [](const std::vector<PromSample>& s) { return !s.empty(); }));
  ASSERT_EQ(alerts.size(), 1u) << Render(alerts) << prometheus_.Stderr();
  EXPECT_EQ(alerts[0].labels.at("component"), "kubelet");
  EXPECT_EQ(alerts[0].labels.at("alertstate"), "pending");
  EXPECT_EQ(alerts[0].labels.at("severity"), "warning");
  // No other compatd alert is active against a healthy server.
  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> others,
      prometheus_.Query(
          R"(ALERTS{alertname=~"Compatd.*",alertname!="CompatdClientsOutOfAllowance"})"));
  EXPECT_TRUE(others.empty()) << Render(others);
}

TEST_F(PrometheusTest, NewCallsReachPrometheusAtTheNextScrape) {
  SendTraffic(/*kubelet_calls=*/1, /*kubectl_calls=*/0);
  StartPrometheus();
  const std::string expr =
      R"(compatd_client_requests_total{component="kubelet",verdict="too_old"})";
  ASSERT_OK_AND_ASSIGN(const std::vector<PromSample> before,
                       prometheus_.QueryUntil(expr, OneSampleOf(1)));
  ASSERT_EQ(before.size(), 1u) << Render(before);
  ASSERT_EQ(before[0].value, 1);
  SendTraffic(/*kubelet_calls=*/4, /*kubectl_calls=*/0);
  ASSERT_OK_AND_ASSIGN(const std::vector<PromSample> after,
                       prometheus_.QueryUntil(expr, OneSampleOf(5)));
  ASSERT_EQ(after.size(), 1u) << Render(after);
  EXPECT_EQ(after[0].value, 5);
}

TEST_F(PrometheusTest, BothProcessesStopCleanly) {
  StartPrometheus();
  ASSERT_OK_AND_ASSIGN(
      const std::vector<PromSample> up,
      prometheus_.QueryUntil(R"(up{job="compatd"})", OneSampleOf(1)));
  ASSERT_EQ(up.size(), 1u) << Render(up);
  EXPECT_EQ(prometheus_.Stop(), 0) << prometheus_.Stderr();
  EXPECT_EQ(compatd_.Stop(), 0) << compatd_.Stderr();
}

}  // namespace
}  // namespace compatd
