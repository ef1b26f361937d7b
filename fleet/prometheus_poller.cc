#include "fleet/prometheus_poller.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "base/status_macros.h"
#include "fleet/prometheus_answer.h"

namespace compatd::fleet {
namespace {

const std::vector<std::string>& PairLabels() {
  static const auto* labels =
      new std::vector<std::string>{"component", "version"};
  return *labels;
}

// The metric's result label for a failed refresh.
absl::string_view FailureName(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      return "unreachable";
    case absl::StatusCode::kDeadlineExceeded:
      return "timeout";
    case absl::StatusCode::kInternal:
      return "http_error";
    case absl::StatusCode::kFailedPrecondition:
      // Prometheus' own error JSON, or a token/TLS file: the message says.
      return absl::StartsWith(status.message(), "Prometheus answered")
                 ? "prometheus_error"
                 : "config";
    case absl::StatusCode::kResourceExhausted:
      return "too_large";
    case absl::StatusCode::kNotFound:
      return "no_replicas";
    default:
      return "bad_answer";
  }
}

absl::Time FromSeconds(double seconds) {
  return absl::UnixEpoch() + absl::Seconds(seconds);
}

}  // namespace

PrometheusPoller::PrometheusPoller(PrometheusPollerOptions options,
                                   runtime::FleetClients* fleet,
                                   metrics::Registry* registry)
    : options_(std::move(options)),
      queries_(runtime::BuildFleetQueries(options_.queries)),
      fleet_(fleet),
      registry_(registry),
      client_(options_.client) {}

PrometheusPoller::~PrometheusPoller() { Stop(); }

absl::Status PrometheusPoller::Init() {
  if (registry_ == nullptr) return absl::OkStatus();
  COMPATD_ASSIGN_OR_RETURN(
      queries_total_,
      registry_->AddCounterFamily(
          "compatd_prometheus_queries_total",
          "Refreshes of the fleet's clients from Prometheus "
          "(--prometheus-url), by result: ok, unreachable, timeout, "
          "http_error, prometheus_error, bad_answer, too_large, no_replicas, "
          "config.",
          {"result"}));
  for (absl::string_view result :
       {"ok", "unreachable", "timeout", "http_error", "prometheus_error",
        "bad_answer", "too_large", "no_replicas", "config"}) {
    COMPATD_RETURN_IF_ERROR(
        queries_total_->Add({std::string(result)}).status());
  }
  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Gauge> * last,
      registry_->AddGaugeFamily(
          "compatd_prometheus_last_success_timestamp_seconds",
          "Unix time of the last refresh of the fleet's clients that "
          "Prometheus answered.",
          {}));
  COMPATD_ASSIGN_OR_RETURN(last_success_, last->Add({}));
  COMPATD_ASSIGN_OR_RETURN(
      metrics::Family<metrics::Gauge> * fleet,
      registry_->AddGaugeFamily(
          "compatd_client_view_fleet",
          "1 while ListClients, the plan and the status page show the "
          "fleet's clients (Prometheus answered the last refresh), 0 while "
          "they show this replica's only.",
          {}));
  COMPATD_ASSIGN_OR_RETURN(view_fleet_, fleet->Add({}));
  return absl::OkStatus();
}

void PrometheusPoller::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void PrometheusPoller::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PrometheusPoller::Run() {
  while (true) {
    RefreshOnce().IgnoreError();
    std::unique_lock<std::mutex> lock(mu_);
    if (wake_.wait_for(
            lock, absl::ToChronoMilliseconds(options_.refresh),
            [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; })) {
      return;
    }
  }
}

absl::StatusOr<runtime::FleetAnswer> PrometheusPoller::Fetch() {
  auto vector = [this](const std::string& query)
      -> absl::StatusOr<std::vector<VectorSample>> {
    COMPATD_ASSIGN_OR_RETURN(std::string body, client_.Query(query));
    absl::StatusOr<std::vector<VectorSample>> samples = ParseInstantVector(
        body,
        query == queries_.replicas ? std::vector<std::string>{} : PairLabels(),
        static_cast<size_t>(options_.max_series));
    if (!samples.ok()) {
      return absl::Status(
          samples.status().code(),
          absl::StrCat(samples.status().message(), " (query: ", query, ")"));
    }
    return samples;
  };
  runtime::FleetAnswer answer;
  COMPATD_ASSIGN_OR_RETURN(std::vector<VectorSample> replicas,
                           vector(queries_.replicas));
  if (replicas.size() > 1) {
    return absl::DataLossError(
        absl::StrCat("Prometheus' answer to ", queries_.replicas, " has ",
                     replicas.size(), " samples, expected one"));
  }
  if (replicas.empty() || replicas[0].value < 1) {
    return absl::NotFoundError(absl::StrCat(
        "Prometheus holds no compatd series for ", queries_.replicas,
        ": does it scrape compatd, and does --prometheus-selector match its "
        "labels?"));
  }
  answer.replicas = static_cast<int64_t>(replicas[0].value);
  COMPATD_ASSIGN_OR_RETURN(std::vector<VectorSample> last,
                           vector(queries_.last_seen));
  COMPATD_ASSIGN_OR_RETURN(std::vector<VectorSample> first,
                           vector(queries_.first_seen));
  COMPATD_ASSIGN_OR_RETURN(std::vector<VectorSample> requests,
                           vector(queries_.requests));
  // The pairs seen within the TTL (last), with the others' values.
  std::map<std::pair<std::string, std::string>, runtime::FleetClient> pairs;
  for (VectorSample& sample : last) {
    runtime::FleetClient client;
    client.component = std::move(sample.labels[0]);
    client.version = std::move(sample.labels[1]);
    client.last_seen = FromSeconds(sample.value);
    client.first_seen = client.last_seen;
    auto key = std::make_pair(client.component, client.version);
    if (!pairs.emplace(std::move(key), std::move(client)).second) {
      return absl::DataLossError(absl::StrCat(
          "Prometheus' answer to ", queries_.last_seen, " has the pair ",
          sample.labels[0], "/", sample.labels[1], " twice"));
    }
  }
  for (const VectorSample& sample : first) {
    auto it = pairs.find(std::make_pair(sample.labels[0], sample.labels[1]));
    if (it == pairs.end()) continue;
    it->second.first_seen =
        std::min(it->second.last_seen, FromSeconds(sample.value));
  }
  for (const VectorSample& sample : requests) {
    auto it = pairs.find(std::make_pair(sample.labels[0], sample.labels[1]));
    if (it == pairs.end() || sample.value < 0) continue;
    it->second.requests =
        static_cast<uint64_t>(std::llround(std::min(sample.value, 1e18)));
  }
  answer.clients.reserve(pairs.size());
  for (auto& [key, client] : pairs) answer.clients.push_back(std::move(client));
  answer.taken = absl::Now();
  return answer;
}

absl::Status PrometheusPoller::RefreshOnce() {
  absl::StatusOr<runtime::FleetAnswer> answer = Fetch();
  if (answer.ok()) {
    const size_t pairs = answer->clients.size();
    const int64_t replicas = answer->replicas;
    fleet_->Publish(*std::move(answer));
    if (queries_total_ != nullptr) {
      queries_total_->Add({"ok"}).value()->Increment();
      last_success_->Set(
          absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
      view_fleet_->Set(1);
    }
    if (failing_) {
      base::LogInfo(absl::StrCat(
          "the fleet's clients come from ", fleet_->source(), " again: ", pairs,
          " client component/version pairs of ", replicas, " replica(s)"));
      failing_ = false;
    }
    return absl::OkStatus();
  }
  fleet_->Fail(answer.status());
  if (queries_total_ != nullptr) {
    queries_total_->Add({std::string(FailureName(answer.status()))})
        .value()
        ->Increment();
    view_fleet_->Set(0);
  }
  failing_ = true;
  base::LogLimited(
      base::LogLevel::kWarning, "prometheus",
      absl::StrCat("the fleet's clients are not available, ListClients and "
                   "the status page show this replica's: ",
                   answer.status().message()));
  return answer.status();
}

}  // namespace compatd::fleet
