#pragma once

// audit-hostile: kube-apiserver's audit webhook stream (POST
// /audit/v1/events) with hostile items among good events
// (soak/audit_batches.h), and what compatd keeps of it read back.

#include "base/valid_utf8.h"
#include "soak/audit_batches.h"
#include "soak/common.h"
#include "soak/http_worker.h"

namespace compatd::soak {

// The bounds docs/limits.md states ("Audit event fields"): compatd keeps at
// most 256 bytes of an event's user name, API group, version, resource,
// subresource and removed-release annotation, a longer one cut at a UTF-8
// boundary to at most 256 - 32 bytes and marked "...(N bytes cut)"
// (gateway/audit.cc, BoundedField); the User-Agent, a client's component
// and version at most 256 too (engine/user_agent.h).
constexpr size_t kMaxAuditFieldBytes = 256;
constexpr size_t kMaxAuditCutKeptBytes = kMaxAuditFieldBytes - 32;
// A label of two kept fields: group_version ("group/version").
constexpr size_t kMaxJoinedLabelBytes = 2 * kMaxAuditFieldBytes + 1;
// Text built of a few kept fields (a row's message, which names the group,
// version, resource and removed release).
constexpr size_t kMaxDerivedTextBytes = 4096;
// --max-api-usage-rows, passed explicitly (CatalogFacts::max_api_usage_rows).
constexpr int kMaxApiUsageRows = 1000;
// How often the class reads back what compatd keeps.
constexpr auto kAuditCheckEvery = std::chrono::seconds(3);
// One batch in this many is not UTF-8 (400 for the whole batch).
constexpr size_t kNotUtf8Every = 25;

// One thread: a batch every 100-300 ms, each answer judged (200 with the
// summary the batch must get, or 429 with Retry-After while the audit queue
// is full; a batch that is not UTF-8 400), and every kAuditCheckEvery
// ListApiUsage, ListClients (gRPC) and /metrics, which must answer and keep
// every field and label within its bound.
class AuditSender {
 public:
  explicit AuditSender(Env* env)
      : env_(*env), rng_(env->seed * 69069 + 11), client_(env->http_port) {}

  void Run() {
    latency_ = LatencyRecorder(env_.load_start, env_.measure_from);
    stub_ = v1::CompatibilityPolicy::NewStub(NewChannel(
        env_, "compatd-soak-audit/1.0", g_channel_serial.fetch_add(1)));
    auto next_check = Clock::now();
    while (!env_.stop.load()) {
      Post(Below(rng_, kNotUtf8Every) == 0 ? NotUtf8AuditBatch(rng_)
                                           : RandomAuditBatch(rng_));
      if (Clock::now() >= next_check && !env_.stop.load()) {
        CheckApiUsage();
        CheckClients();
        CheckMetrics();
        next_check = Clock::now() + kAuditCheckEvery;
      }
      SleepUnlessStopped(env_,
                         std::chrono::milliseconds(100 + Below(rng_, 200)));
    }
    client_.Close();
    stub_.reset();
  }

  const Tally& tally() const { return tally_; }
  const Outcomes& outcomes() const { return outcomes_; }
  const LatencyRecorder& latency() const { return latency_; }

  // One paragraph for the report.
  std::string Summary() const {
    return absl::StrFormat(
        "%d audit batches posted (%d events, %.1f MiB): %d answered 200, %d "
        "429 with Retry-After (the audit queue full), %d 400 (not UTF-8, as "
        "expected); the 200s' summaries: %d events recorded, %d skipped, %d "
        "malformed, each as its batch expected. Read back %d times: "
        "ListApiUsage at most %d rows (bound %d and the row \"other\") and "
        "%.1f KiB, ListClients at most %d clients (bound %d); the longest "
        "kept field %d bytes (bound %d; a row's message, built of several, "
        "%d), %d cut fields seen with their marker; the longest /metrics "
        "label value %d bytes (group_version's bound %d, the others' %d).\n",
        batches_, events_, static_cast<double>(bytes_) / (1 << 20), accepted_,
        busy_, refused_not_utf8_, recorded_, skipped_, malformed_, checks_,
        max_rows_, kMaxApiUsageRows,
        static_cast<double>(max_usage_bytes_) / 1024, max_clients_,
        kMaxClientSeries, max_field_bytes_, kMaxAuditFieldBytes,
        max_derived_bytes_, cut_fields_, max_label_bytes_, kMaxJoinedLabelBytes,
        kMaxAuditFieldBytes);
  }

 private:
  void Fail(absl::string_view what, absl::string_view detail) {
    env_.failures.Add(what,
                      absl::StrCat("audit-hostile: ", Shorten(detail, 400)));
  }

  // One batch and its answer.
  void Post(const AuditBatch& batch) {
    const Clock::time_point start = Clock::now();
    absl::StatusOr<HttpAnswer> answer = client_.Call(
        "POST", "/audit/v1/events", batch.body,
        {"User-Agent: kube-apiserver/v1.36.3 (linux/amd64) kubernetes/5d3a1f0"},
        std::chrono::milliseconds(
            absl::ToInt64Milliseconds(env_.options.call_timeout)));
    const Clock::time_point end = Clock::now();
    const int status = answer.ok() ? answer->status : 0;
    const std::string route = batch.not_utf8
                                  ? "POST /audit/v1/events (not UTF-8)"
                                  : "POST /audit/v1/events";
    Count(tally_, Class::kAuditHostile, route,
          static_cast<grpc::StatusCode>(status));
    env_.calls.fetch_add(1, std::memory_order_relaxed);
    ++batches_;
    events_ += batch.events;
    bytes_ += batch.body.size();
    if (!answer.ok()) {
      return Fail("audit batch not answered",
                  absl::StrCat(batch.label, ": ", answer.status().ToString()));
    }
    if (status == 429) return Busy(*answer, batch);
    if (batch.not_utf8) {
      ++outcomes_[absl::StrCat("batch not UTF-8: HTTP ", status)];
      if (status == 400) {
        ++refused_not_utf8_;
      } else {
        Fail("audit batch that is not UTF-8 not refused with 400",
             absl::StrCat(batch.label, ": HTTP ", status, " ", answer->body));
      }
      return;
    }
    latency_.Record(LatencyClass::kAuditBatch, "POST /audit/v1/events",
                    batch.label, start, end, 0);
    if (status != 200) {
      ++outcomes_[absl::StrCat("batch: HTTP ", status, " (failure)")];
      return Fail(
          "audit batch not accepted",
          absl::StrCat(batch.label, ": HTTP ", status, " ", answer->body));
    }
    ++accepted_;
    ++outcomes_["batch: HTTP 200"];
    for (HostileItem kind : batch.hostile) {
      ++outcomes_[absl::StrCat("hostile item accepted: ",
                               kHostileItemNames[static_cast<size_t>(kind)])];
    }
    CheckSummary(batch, answer->body);
  }

  // A 429: the audit queue was full; Retry-After must say when to come back.
  void Busy(const HttpAnswer& answer, const AuditBatch& batch) {
    ++busy_;
    ++outcomes_["batch: HTTP 429 (audit queue full)"];
    int seconds = 0;
    if (!absl::SimpleAtoi(answer.Header("retry-after"), &seconds) ||
        seconds < 1) {
      Fail("audit 429 without Retry-After",
           absl::StrCat(batch.label, ": Retry-After \"",
                        answer.Header("retry-after"), "\""));
      seconds = 1;
    }
    SleepUnlessStopped(env_, std::chrono::seconds(seconds));
  }

  // The 200's summary: exactly the events, recorded, skipped and malformed
  // counts the batch was built with.
  void CheckSummary(const AuditBatch& batch, const std::string& body) {
    const std::optional<google::protobuf::Value> value = ParseValue(body);
    if (!value.has_value()) {
      return Fail("audit batch summary wrong",
                  absl::StrCat(batch.label, ": not JSON: ", body));
    }
    const auto count = [&](absl::string_view name) {
      return static_cast<size_t>(At(*value, name).number_value());
    };
    if (count("events") != batch.events ||
        count("recorded") != batch.recorded ||
        count("skipped") != batch.skipped ||
        count("malformed") != batch.malformed) {
      return Fail("audit batch summary wrong",
                  absl::StrFormat("%s: expected events %d, recorded %d, "
                                  "skipped %d, malformed %d; got %s",
                                  batch.label, batch.events, batch.recorded,
                                  batch.skipped, batch.malformed, body));
    }
    recorded_ += batch.recorded;
    skipped_ += batch.skipped;
    malformed_ += batch.malformed;
  }

  // A read-back call's status: OK, or a failure (but the huge-prefix
  // attack's known collateral, Env::QuotaCollateral).
  bool CallOk(absl::string_view method, const grpc::Status& status) {
    Count(tally_, Class::kAuditChecks, method, status.error_code());
    env_.calls.fetch_add(1, std::memory_order_relaxed);
    if (status.ok()) return true;
    if (!env_.QuotaCollateral(status, absl::StrCat("audit-hostile ", method))) {
      Fail("audit read-back failed",
           absl::StrCat(method, ": ", CodeName(status.error_code()), " ",
                        status.error_message()));
    }
    return false;
  }

  // A kept field (`where`: "ListApiUsage usage[3].resource"): within
  // `bound`, UTF-8, and when cut, cut as documented: at most
  // kMaxAuditCutKeptBytes kept, then "...(N bytes cut)", N the rest of a
  // field longer than kMaxAuditFieldBytes.
  void CheckKept(absl::string_view where, absl::string_view value,
                 size_t bound) {
    size_t& longest =
        bound == kMaxAuditFieldBytes ? max_field_bytes_ : max_derived_bytes_;
    longest = std::max(longest, value.size());
    if (value.size() > bound) {
      Fail("kept audit field over its bound",
           absl::StrCat(where, " is ", value.size(), " bytes, over ", bound,
                        ": ", Shorten(absl::CEscape(value), 120)));
    }
    if (base::ValidUtf8(value) != value) {
      Fail("kept audit field not UTF-8",
           absl::StrCat(where, ": ", Shorten(absl::CEscape(value), 120)));
    }
    constexpr absl::string_view kEnd = " bytes cut)";
    if (!absl::EndsWith(value, kEnd)) return;
    ++cut_fields_;
    const size_t open = value.rfind("...(");
    uint64_t cut = 0;
    if (open == absl::string_view::npos || open > kMaxAuditCutKeptBytes ||
        !absl::SimpleAtoi(
            value.substr(open + 4, value.size() - kEnd.size() - open - 4),
            &cut) ||
        open + cut <= kMaxAuditFieldBytes) {
      Fail("cut audit field not marked as documented",
           absl::StrCat(where, ": ", Shorten(absl::CEscape(value), 300)));
    }
  }

  // ListApiUsage: answered, at most --max-api-usage-rows rows, every kept
  // field within its bound.
  void CheckApiUsage() {
    ++checks_;
    v1::ListApiUsageResponse usage;
    grpc::ClientContext context;
    context.set_deadline(Deadline(env_.options.call_timeout));
    const Clock::time_point start = Clock::now();
    const grpc::Status status =
        stub_->ListApiUsage(&context, v1::ListApiUsageRequest(), &usage);
    latency_.Record(LatencyClass::kAuditRead, "ListApiUsage", "read-back",
                    start, Clock::now(), 0);
    if (!CallOk("ListApiUsage", status)) return;
    max_rows_ = std::max(max_rows_, usage.usage_size());
    max_usage_bytes_ = std::max(max_usage_bytes_, usage.ByteSizeLong());
    // The rows kept, and the one row "other" that counts the calls past
    // them (runtime/api_usage.h).
    if (usage.usage_size() > kMaxApiUsageRows + 1) {
      Fail("kept audit data over its bound",
           absl::StrCat("ListApiUsage: ", usage.usage_size(),
                        " rows, over --max-api-usage-rows=", kMaxApiUsageRows,
                        " and the row \"other\""));
    }
    for (int i = 0; i < usage.usage_size(); ++i) {
      const v1::ApiUsage& row = usage.usage(i);
      const std::string at = absl::StrCat("ListApiUsage usage[", i, "].");
      for (const auto& [name, value] : std::initializer_list<
               std::pair<absl::string_view, const std::string*>>{
               {"component", &row.component()},
               {"clientVersion", &row.client_version()},
               {"user", &row.user()},
               {"userAgent", &row.user_agent()},
               {"group", &row.group()},
               {"version", &row.version()},
               {"resource", &row.resource()},
               {"subresource", &row.subresource()},
               {"release", &row.release()},
               {"apiserverRemovedRelease", &row.apiserver_removed_release()}}) {
        CheckKept(absl::StrCat(at, name), *value, kMaxAuditFieldBytes);
      }
      CheckKept(absl::StrCat(at, "message"), row.message(),
                kMaxDerivedTextBytes);
    }
  }

  // ListClients: answered, at most --max-client-series clients, each
  // component and version within its bound.
  void CheckClients() {
    v1::ListClientsResponse clients;
    grpc::ClientContext context;
    context.set_deadline(Deadline(env_.options.call_timeout));
    const Clock::time_point start = Clock::now();
    const grpc::Status status =
        stub_->ListClients(&context, v1::ListClientsRequest(), &clients);
    latency_.Record(LatencyClass::kAuditRead, "ListClients", "read-back", start,
                    Clock::now(), 0);
    if (!CallOk("ListClients", status)) return;
    max_clients_ = std::max(max_clients_, clients.clients_size());
    if (clients.clients_size() > kMaxClientSeries) {
      Fail("kept audit data over its bound",
           absl::StrCat(
               "ListClients: ", clients.clients_size(),
               " clients, over --max-client-series=", kMaxClientSeries));
    }
    for (int i = 0; i < clients.clients_size(); ++i) {
      const v1::ObservedClient& c = clients.clients(i);
      const std::string at = absl::StrCat("ListClients clients[", i, "].");
      CheckKept(at + "component", c.component(), kMaxAuditFieldBytes);
      CheckKept(at + "version", c.version(), kMaxAuditFieldBytes);
    }
  }

  // /metrics: 200, and every label value within its bound and UTF-8.
  void CheckMetrics() {
    const Clock::time_point start = Clock::now();
    absl::StatusOr<testing::HttpReply> reply =
        testing::HttpGet(env_.metrics_port, "/metrics");
    latency_.Record(LatencyClass::kAuditRead, "GET /metrics", "read-back",
                    start, Clock::now(), 0);
    Count(tally_, Class::kAuditHostile, "GET /metrics",
          static_cast<grpc::StatusCode>(reply.ok() ? reply->status : 0));
    absl::StatusOr<std::vector<testing::Sample>> samples =
        reply.ok() && reply->status == 200
            ? testing::ParseExposition(reply->body)
            : absl::StatusOr<std::vector<testing::Sample>>(
                  absl::UnavailableError(
                      reply.ok() ? absl::StrCat("HTTP ", reply->status)
                                 : reply.status().ToString()));
    if (!samples.ok()) {
      return Fail("audit read-back failed",
                  absl::StrCat("GET /metrics: ", samples.status().message()));
    }
    for (const testing::Sample& sample : *samples) {
      for (const auto& [label, value] : sample.labels) {
        max_label_bytes_ = std::max(max_label_bytes_, value.size());
        const std::string where =
            absl::StrCat("/metrics ", sample.name, "{", label, "}");
        if (label != "group_version") {
          CheckKept(where, value, kMaxAuditFieldBytes);
          continue;
        }
        // Two kept fields: each within its bound, and cut as documented.
        if (value.size() > kMaxJoinedLabelBytes) {
          Fail("kept audit field over its bound",
               absl::StrCat(where, " is ", value.size(), " bytes, over ",
                            kMaxJoinedLabelBytes));
        }
        const size_t slash = value.find('/');
        CheckKept(where + " (group)", value.substr(0, slash),
                  kMaxAuditFieldBytes);
        if (slash != std::string::npos) {
          CheckKept(where + " (version)", value.substr(slash + 1),
                    kMaxAuditFieldBytes);
        }
      }
    }
  }

  Env& env_;
  Rng rng_;
  HttpClient client_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
  Tally tally_;
  Outcomes outcomes_;
  LatencyRecorder latency_;
  uint64_t batches_ = 0, events_ = 0, bytes_ = 0;
  uint64_t accepted_ = 0, busy_ = 0, refused_not_utf8_ = 0;
  uint64_t recorded_ = 0, skipped_ = 0, malformed_ = 0;
  uint64_t checks_ = 0, cut_fields_ = 0;
  int max_rows_ = 0, max_clients_ = 0;
  size_t max_usage_bytes_ = 0, max_field_bytes_ = 0, max_label_bytes_ = 0;
  size_t max_derived_bytes_ = 0;
};

}  // namespace compatd::soak
