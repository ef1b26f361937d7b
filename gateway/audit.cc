#include "gateway/audit.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log.h"
#include "engine/user_agent.h"
#include "gateway/json.h"
#include "gateway/ondemand.h"
#include "simdjson.h"

namespace compatd::gateway {
namespace {

namespace od = simdjson::ondemand;

absl::string_view View(std::string_view s) { return {s.data(), s.size()}; }

absl::string_view TypeName(od::json_type type) {
  switch (type) {
    case od::json_type::array:
      return "an array";
    case od::json_type::object:
      return "an object";
    case od::json_type::number:
      return "a number";
    case od::json_type::string:
      return "a string";
    case od::json_type::boolean:
      return "a boolean";
    case od::json_type::null:
      return "null";
  }
  return "a value";
}

// Reading one event: a syntax error refuses the whole document (returned);
// a value of the wrong type, or one nested deeper than SkipValue reads, makes
// only this event malformed (`problem`).
class EventReader {
 public:
  EventReader(AuditEvent* event, std::string* problem)
      : event_(event), problem_(problem) {}

  // One field of the event. Past kMaxSkipDepth levels SkipValue answers
  // DEPTH_ERROR without telling simdjson, leaving the value unconsumed: the
  // loop over the event's fields (or the batch's items) then steps past it
  // with simdjson's skip_child, which counts brackets in a loop whatever the
  // depth (no recursion, no depth bound). An error simdjson reports itself
  // ends the document, so only ours is turned into a problem of this event.
  simdjson::error_code Field(std::string_view key, od::value value) {
    const simdjson::error_code error = ReadField(key, std::move(value));
    if (error != simdjson::DEPTH_ERROR) return error;
    if (problem_->empty()) {
      *problem_ = absl::StrCat(View(key), ": nested deeper than ",
                               kMaxSkipDepth, " levels");
    }
    return simdjson::SUCCESS;
  }

  // Called once the event's fields are read.
  void Finish() {
    if (problem_->empty() && event_->stage.empty()) {
      *problem_ = "stage: missing (every audit event has one)";
    }
  }

 private:
  simdjson::error_code ReadField(std::string_view key, od::value value) {
    if (key == "stage") return String(value, "stage", &event_->stage);
    if (key == "verb") return String(value, "verb", &event_->verb);
    if (key == "userAgent") {
      return String(value, "userAgent", &event_->user_agent);
    }
    if (key == "user") {
      return Object(value, "user", [this](std::string_view k, od::value v) {
        if (k == "username") {
          return String(v, "user.username", &event_->username);
        }
        return SkipValue(std::move(v));
      });
    }
    if (key == "objectRef") {
      return Object(
          value, "objectRef",
          [this](std::string_view k, od::value v) {
            event_->has_object_ref = true;
            if (k == "apiGroup") {
              return String(v, "objectRef.apiGroup", &event_->api_group);
            }
            if (k == "apiVersion") {
              return String(v, "objectRef.apiVersion", &event_->api_version);
            }
            if (k == "resource") {
              return String(v, "objectRef.resource", &event_->resource);
            }
            if (k == "subresource") {
              return String(v, "objectRef.subresource", &event_->subresource);
            }
            return SkipValue(std::move(v));
          },
          &event_->has_object_ref);
    }
    if (key == "responseStatus") {
      return Object(value, "responseStatus",
                    [this](std::string_view k, od::value v) {
                      if (k == "code") return Code(v);
                      return SkipValue(std::move(v));
                    });
    }
    if (key == "annotations") {
      return Object(value, "annotations",
                    [this](std::string_view k, od::value v) {
                      if (k == "k8s.io/deprecated") {
                        absl::string_view text;
                        const auto error =
                            String(v, "annotations[k8s.io/deprecated]", &text);
                        event_->deprecated_annotation = text == "true";
                        return error;
                      }
                      if (k == "k8s.io/removed-release") {
                        return String(v, "annotations[k8s.io/removed-release]",
                                      &event_->removed_release_annotation);
                      }
                      return SkipValue(std::move(v));
                    });
    }
    return SkipValue(std::move(value));
  }

  // Sets `problem` (the first one only) and walks the value all the same.
  simdjson::error_code WrongType(od::value& value, absl::string_view field,
                                 absl::string_view expected,
                                 od::json_type got) {
    if (problem_->empty()) {
      *problem_ =
          absl::StrCat(field, ": expected ", expected, ", got ", TypeName(got));
    }
    return SkipValue(std::move(value));
  }

  simdjson::error_code String(od::value& value, absl::string_view field,
                              absl::string_view* out) {
    od::json_type type;
    if (const auto error = value.type().get(type); error) return error;
    if (type == od::json_type::null) return SkipValue(std::move(value));
    if (type != od::json_type::string) {
      return WrongType(value, field, "a string", type);
    }
    std::string_view text;
    if (const auto error = value.get_string().get(text); error) return error;
    *out = View(text);
    return simdjson::SUCCESS;
  }

  simdjson::error_code Code(od::value& value) {
    od::json_type type;
    if (const auto error = value.type().get(type); error) return error;
    if (type == od::json_type::null) return SkipValue(std::move(value));
    if (type != od::json_type::number) {
      return WrongType(value, "responseStatus.code", "an integer", type);
    }
    int64_t code = 0;
    if (value.get_int64().get(code) != simdjson::SUCCESS) {
      return WrongType(value, "responseStatus.code", "an integer",
                       od::json_type::number);
    }
    event_->code = code;
    return simdjson::SUCCESS;
  }

  // An object field by field (null: absent); `present` set when it is one.
  template <typename OnField>
  simdjson::error_code Object(od::value& value, absl::string_view field,
                              OnField on_field, bool* present = nullptr) {
    od::json_type type;
    if (const auto error = value.type().get(type); error) return error;
    if (type == od::json_type::null) return SkipValue(std::move(value));
    if (type != od::json_type::object) {
      return WrongType(value, field, "an object", type);
    }
    od::object object;
    if (const auto error = value.get_object().get(object); error) return error;
    if (present != nullptr) *present = true;
    for (auto member : object) {
      std::string_view key;
      if (const auto error = member.unescaped_key().get(key); error) {
        return error;
      }
      od::value inner;
      if (const auto error = member.value().get(inner); error) return error;
      if (const auto error = on_field(key, std::move(inner)); error) {
        return error;
      }
    }
    return simdjson::SUCCESS;
  }

  AuditEvent* event_;
  std::string* problem_;
};

absl::Status NotJson(absl::string_view where, simdjson::error_code error) {
  return absl::InvalidArgumentError(
      absl::StrCat("the audit event batch is not valid JSON at ", where, ": ",
                   simdjson::error_message(error),
                   "; POST /audit/v1/events takes kube-apiserver's audit "
                   "webhook batches (audit.k8s.io/v1 EventList)"));
}

}  // namespace

namespace {

// items[index] into `event`; what is wrong with it (not an object, a field
// of the wrong type, nested too deep) into `problem`. An error only for JSON it
// cannot read.
absl::Status ReadItem(od::value item, size_t index, AuditEvent* event,
                      std::string* problem) {
  od::json_type type;
  if (const auto error = item.type().get(type); error) {
    return NotJson(absl::StrCat("items[", index, "]"), error);
  }
  if (type != od::json_type::object) {
    *problem = absl::StrCat("expected an object, got ", TypeName(type));
    // Too deep to check (DEPTH_ERROR): the loop over items steps past it.
    if (const auto error = SkipValue(std::move(item));
        error && error != simdjson::DEPTH_ERROR) {
      return NotJson(absl::StrCat("items[", index, "]"), error);
    }
  } else {
    od::object object;
    if (const auto error = item.get_object().get(object); error) {
      return NotJson(absl::StrCat("items[", index, "]"), error);
    }
    EventReader reader(event, problem);
    for (auto member : object) {
      std::string_view member_key;
      od::value member_value;
      simdjson::error_code error = member.unescaped_key().get(member_key);
      if (!error) error = member.value().get(member_value);
      if (!error) error = reader.Field(member_key, std::move(member_value));
      if (error) {
        return NotJson(absl::StrCat("items[", index, "]"), error);
      }
    }
    reader.Finish();
  }
  return absl::OkStatus();
}

// An EventList's items (null: none), at most `max_events`; `good` says which
// were read whole.
absl::Status ReadItems(od::value value, size_t max_events,
                       std::vector<AuditEvent>* items, std::vector<bool>* good,
                       AuditReadStats* stats) {
  std::string problem;
  // encoding/json writes an empty slice as null.
  bool is_null = false;
  if (value.is_null().get(is_null) == simdjson::SUCCESS && is_null) {
    return absl::OkStatus();
  }
  od::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        "items: expected an array of audit.k8s.io/v1 Events");
  }
  for (auto element : array) {
    if (items->size() >= max_events) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "the batch has more than %d events; compatd reads at most %d "
          "a batch (--audit-max-batch-events; kube-apiserver's "
          "--audit-webhook-batch-max-size defaults to 400)",
          max_events, max_events));
    }
    od::value item;
    const size_t index = items->size();
    if (const auto error = element.get(item); error) {
      return NotJson(absl::StrCat("items[", index, "]"), error);
    }
    items->emplace_back();
    problem.clear();
    if (absl::Status s =
            ReadItem(std::move(item), index, &items->back(), &problem);
        !s.ok()) {
      return s;
    }
    good->push_back(problem.empty());
    if (!problem.empty()) {
      ++stats->malformed;
      if (stats->first_problem.empty()) {
        stats->first_problem = absl::StrCat("items[", index, "].", problem);
      }
    }
  }
  return absl::OkStatus();
}

// The document's apiVersion and kind, then its events to `on_event`: an
// EventList's good items, or a lone Event (the root, read by `root_reader`).
absl::Status Deliver(std::string_view kind, std::string_view api_version,
                     bool has_items, const std::vector<AuditEvent>& items,
                     const std::vector<bool>& good, EventReader& root_reader,
                     const AuditEvent& root_event, std::string& root_problem,
                     const std::function<void(const AuditEvent&)>& on_event,
                     AuditReadStats* stats) {
  if (api_version != "audit.k8s.io/v1") {
    return absl::InvalidArgumentError(
        absl::StrCat("apiVersion \"", View(api_version),
                     "\": expected \"audit.k8s.io/v1\" (kube-apiserver's "
                     "--audit-webhook-version default)"));
  }
  if (kind == "EventList") {
    stats->events = items.size();
    for (size_t i = 0; i < items.size(); ++i) {
      if (good[i]) on_event(items[i]);
    }
    return absl::OkStatus();
  }
  if (kind == "Event" && !has_items) {
    stats->events = 1;
    root_reader.Finish();
    if (!root_problem.empty()) {
      ++stats->malformed;
      stats->first_problem = std::move(root_problem);
      return absl::OkStatus();
    }
    on_event(root_event);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("kind \"", View(kind),
                   "\": expected \"EventList\" (a batch, as kube-apiserver's "
                   "audit webhook sends) or \"Event\""));
}

}  // namespace

absl::Status ReadAuditEvents(
    absl::string_view body, size_t max_events,
    const std::function<void(const AuditEvent&)>& on_event,
    AuditReadStats* stats) {
  // One parser per thread, reused: its buffers grow to the largest body seen
  // (bounded by the batch byte bound), given back after one over
  // kKeptParserBytes.
  thread_local od::parser parser;
  const ParserLease lease(parser);
  simdjson::padded_string padded(body.data(), body.size());
  od::document document;
  if (const auto error = Iterate(parser, padded).get(document); error) {
    return NotJson("the document", error);
  }
  od::object root;
  if (const auto error = document.get_object().get(root); error) {
    return NotJson("the document (expected an object)", error);
  }
  std::vector<AuditEvent> items;
  std::vector<bool> good;
  AuditEvent root_event;
  std::string root_problem;
  EventReader root_reader(&root_event, &root_problem);
  std::string_view kind, api_version;
  bool has_items = false;
  for (auto field : root) {
    std::string_view key;
    if (const auto error = field.unescaped_key().get(key); error) {
      return NotJson("the document", error);
    }
    od::value value;
    if (const auto error = field.value().get(value); error) {
      return NotJson(View(key), error);
    }
    if (key == "kind" || key == "apiVersion") {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(
            absl::StrCat(View(key),
                         ": expected a string (\"EventList\", "
                         "\"audit.k8s.io/v1\")"));
      }
      (key == "kind" ? kind : api_version) = text;
      continue;
    }
    if (key == "items") {
      has_items = true;
      if (absl::Status s =
              ReadItems(std::move(value), max_events, &items, &good, stats);
          !s.ok()) {
        return s;
      }
      continue;
    }
    if (const auto error = root_reader.Field(key, std::move(value)); error) {
      return NotJson(View(key), error);
    }
  }
  if (const auto error = CheckEnd(document); error) {
    return NotJson("the end of the document", error);
  }
  return Deliver(kind, api_version, has_items, items, good, root_reader,
                 root_event, root_problem, on_event, stats);
}

namespace {

// What a row keeps of a User-Agent: printable ASCII, at most 256 bytes.
// One kept field of an event, bounded at intake: a field over
// kMaxAuditFieldBytes is cut at a UTF-8 boundary and marked, in `storage`
// (issue 36: a 2.9 MB user name or resource was kept whole in every row and
// label). Group, version, resource and subresource names are at most 253
// bytes in Kubernetes, and user names in practice far less.
absl::string_view BoundedField(absl::string_view value, std::string* storage) {
  if (value.size() <= kMaxAuditFieldBytes) return value;
  size_t keep = kMaxAuditFieldBytes - 32;
  while (keep > 0 && (static_cast<unsigned char>(value[keep]) & 0xC0) == 0x80) {
    --keep;
  }
  *storage = absl::StrCat(value.substr(0, keep), "...(", value.size() - keep,
                          " bytes cut)");
  return *storage;
}

// An event whose kept fields are bounded (BoundedField), the cut copies in
// `storage`; the views point into it, so it is neither copied nor moved.
struct BoundedEvent {
  explicit BoundedEvent(const AuditEvent& in) : event(in) {
    event.username = BoundedField(in.username, &storage[0]);
    event.api_group = BoundedField(in.api_group, &storage[1]);
    event.api_version = BoundedField(in.api_version, &storage[2]);
    event.resource = BoundedField(in.resource, &storage[3]);
    event.subresource = BoundedField(in.subresource, &storage[4]);
    event.removed_release_annotation =
        BoundedField(in.removed_release_annotation, &storage[5]);
  }
  BoundedEvent(const BoundedEvent&) = delete;
  BoundedEvent& operator=(const BoundedEvent&) = delete;

  AuditEvent event;
  std::string storage[6];
};

absl::string_view KeptUserAgent(absl::string_view user_agent) {
  user_agent = user_agent.substr(0, engine::kMaxClientFieldBytes);
  for (char c : user_agent) {
    if (c < 0x20 || c > 0x7e) return "(not printable)";
  }
  return user_agent.empty() ? absl::string_view(engine::kUnknownClient)
                            : user_agent;
}

// Why a batch is refused before it is read (compressed, not JSON, too
// large), with its status and its audit batch result.
struct Refusal {
  int status;
  runtime::AuditBatchResult result;
  absl::Status why;
};

std::optional<Refusal> RefuseHead(const http::Request& request,
                                  size_t max_batch_bytes) {
  const absl::string_view encoding = request.Header("content-encoding");
  if (!encoding.empty() && encoding != "identity") {
    return Refusal{415, runtime::AuditBatchResult::kMalformed,
                   absl::InvalidArgumentError(absl::StrCat(
                       "Content-Encoding \"", encoding,
                       "\": audit batches are read uncompressed, as "
                       "kube-apiserver sends them"))};
  }
  const absl::string_view type = request.Header("content-type");
  if (!type.empty() && type.substr(0, type.find(';')) != "application/json") {
    return Refusal{415, runtime::AuditBatchResult::kMalformed,
                   absl::InvalidArgumentError(absl::StrCat(
                       "Content-Type \"", type,
                       "\": expected application/json (kube-apiserver's "
                       "audit webhook sends JSON)"))};
  }
  if (request.body.size() > max_batch_bytes) {
    return Refusal{413, runtime::AuditBatchResult::kTooLarge,
                   absl::ResourceExhaustedError(absl::StrFormat(
                       "the batch is %d bytes; compatd reads at most %d "
                       "(--audit-max-batch-bytes); lower kube-apiserver's "
                       "--audit-webhook-batch-max-size",
                       request.body.size(), max_batch_bytes))};
  }
  return std::nullopt;
}

// A batch read: its counts into the metrics and the answer.
void AnswerAccepted(const runtime::ServiceMetrics* metrics, uint64_t recorded,
                    uint64_t skipped_stage, uint64_t unauthenticated,
                    const AuditReadStats& stats, http::Response* response) {
  using runtime::AuditBatchResult;
  using runtime::AuditEventResult;
  if (metrics != nullptr) {
    metrics->RecordAuditBatch(AuditBatchResult::kAccepted);
    metrics->RecordAuditEvents(AuditEventResult::kRecorded, recorded);
    metrics->RecordAuditEvents(AuditEventResult::kSkippedStage, skipped_stage);
    metrics->RecordAuditEvents(AuditEventResult::kUnauthenticated,
                               unauthenticated);
    metrics->RecordAuditEvents(AuditEventResult::kMalformed, stats.malformed);
  }
  response->body = absl::StrFormat(
      "{\"events\":%d,\"recorded\":%d,\"skipped\":%d,\"malformed\":%d%s}",
      stats.events, recorded, skipped_stage + unauthenticated, stats.malformed,
      stats.first_problem.empty()
          ? std::string()
          : absl::StrCat(",\"firstProblem\":", JsonQuote(stats.first_problem)));
}

}  // namespace

AuditIngest::AuditIngest(runtime::ClientTracker* clients,
                         runtime::ApiUsageTracker* usage,
                         const runtime::ServiceMetrics* metrics,
                         Options options)
    : clients_(clients),
      usage_(usage),
      metrics_(metrics),
      options_(std::move(options)) {}

void AuditIngest::RecordApiUse(const engine::ApiUseIndex& index,
                               const AuditEvent& raw,
                               const engine::ClientIdentity& identity,
                               std::string* user) {
  // Every field kept in a row, a label or an answer, bounded.
  const BoundedEvent bounded(raw);
  const AuditEvent& event = bounded.event;
  const engine::ApiUseJudgement* judgement = index.FindCall(
      event.api_group, event.api_version, event.resource, event.code);
  engine::ApiUseJudgement from_annotation;
  if (judgement == nullptr) {
    // An API the catalog does not know that kube-apiserver calls
    // deprecated (a CRD version, an aggregated API).
    if (!event.deprecated_annotation ||
        index.Knows(event.api_group, event.api_version, event.resource)) {
      return;
    }
    from_annotation = runtime::AnnotationJudgement(
        event.api_group, event.api_version, event.resource,
        event.removed_release_annotation);
    judgement = &from_annotation;
  }
  *user = runtime::UserLabel(event.username, options_.user_names,
                             usage_->user_secret());
  std::string client_version =
      identity.has_major_minor()
          ? absl::StrCat(*identity.major, ".", *identity.minor)
          : std::string(identity.version);
  runtime::ApiCall call;
  call.component = identity.component;
  call.client_version = client_version;
  call.user = *user;
  call.user_agent = KeptUserAgent(event.user_agent);
  call.group = event.api_group;
  call.version = event.api_version;
  call.resource = event.resource;
  call.subresource = event.subresource;
  call.denied = event.code == 403;
  call.succeeded = event.code >= 200 && event.code <= 299;
  call.apiserver_deprecated = event.deprecated_annotation;
  call.apiserver_removed_release = event.removed_release_annotation;
  usage_->Record(call, *judgement);
}

void AuditIngest::RefusedBeforeRead(uint64_t content_length,
                                    absl::string_view bound) const {
  if (metrics_ != nullptr) {
    metrics_->RecordAuditBatch(runtime::AuditBatchResult::kTooLarge);
  }
  base::LogLimited(
      base::LogLevel::kWarning, "audit-too-large",
      absl::StrCat("audit batch refused (413, too_large): ",
                   content_length > 0 ? absl::StrCat(content_length, " bytes")
                                      : std::string("a chunked body"),
                   " is over ", bound,
                   "; kube-apiserver drops it after its retries: lower its "
                   "--audit-webhook-batch-max-size (docs/cluster-view.md)"));
}

void AuditIngest::Serve(const runtime::ServingSnapshot* snapshot,
                        const http::Request& request,
                        http::Response* response) {
  using runtime::AuditBatchResult;
  const auto refuse = [&](int status, AuditBatchResult result,
                          const absl::Status& why) {
    response->status = status;
    response->body = StatusJson(why);
    if (metrics_ != nullptr) metrics_->RecordAuditBatch(result);
    if (result == AuditBatchResult::kTooLarge) {
      base::LogLimited(
          base::LogLevel::kWarning, "audit-too-large",
          absl::StrCat("audit batch refused (413, too_large, ",
                       request.body.size(), " bytes): ", why.message()));
    }
  };
  if (snapshot == nullptr) {
    response->status = 503;
    response->body = StatusJson(absl::UnavailableError(
        "no catalog is loaded yet; kube-apiserver retries the batch"));
    return;
  }
  if (std::optional<Refusal> refusal =
          RefuseHead(request, options_.max_batch_bytes)) {
    return refuse(refusal->status, refusal->result, refusal->why);
  }
  if (in_flight_.fetch_add(1, std::memory_order_acq_rel) >=
      options_.max_concurrent_batches) {
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    response->headers.emplace_back("Retry-After", "1");
    return refuse(429, AuditBatchResult::kBusy,
                  absl::ResourceExhaustedError(absl::StrFormat(
                      "%d audit batches are being read "
                      "(--audit-max-concurrent-batches); kube-apiserver "
                      "retries this one",
                      options_.max_concurrent_batches)));
  }
  struct Release {
    std::atomic<int>* in_flight;
    ~Release() { in_flight->fetch_sub(1, std::memory_order_acq_rel); }
  } release{&in_flight_};

  const std::shared_ptr<const engine::ApiUseIndex> index =
      usage_ != nullptr ? usage_->Index(*snapshot) : nullptr;
  uint64_t recorded = 0, skipped_stage = 0, unauthenticated = 0;
  std::string user;
  AuditReadStats stats;
  const absl::Status status = ReadAuditEvents(
      request.body, options_.max_batch_events,
      [&](const AuditEvent& event) {
        if (event.stage != "ResponseComplete" && event.stage != "Panic") {
          ++skipped_stage;
          return;
        }
        if (event.code == 401) {
          ++unauthenticated;
          return;
        }
        ++recorded;
        const engine::ClientIdentity identity =
            engine::ParseUserAgent(event.user_agent);
        if (clients_ != nullptr) {
          clients_->Record(*snapshot, identity, runtime::ClientSeen::kAudit);
        }
        if (index == nullptr || !event.has_object_ref ||
            event.resource.empty()) {
          return;
        }
        RecordApiUse(*index, event, identity, &user);
      },
      &stats);
  if (!status.ok()) {
    const bool too_large =
        status.code() == absl::StatusCode::kResourceExhausted;
    return refuse(
        too_large ? 413 : 400,
        too_large ? AuditBatchResult::kTooLarge : AuditBatchResult::kMalformed,
        status);
  }
  AnswerAccepted(metrics_, recorded, skipped_stage, unauthenticated, stats,
                 response);
}

bool AuditIngest::Schedule(std::function<void()> batch) {
  {
    std::lock_guard<std::mutex> lock(turns_mu_);
    if (running_ >= options_.max_concurrent_batches) {
      if (queued_.size() >=
          static_cast<size_t>(std::max(options_.max_queued_batches, 0))) {
        return false;
      }
      queued_.push_back(std::move(batch));
      return true;
    }
    ++running_;
  }
  // This thread's turn, then the turns of those that queued meanwhile (a
  // loop, not a post: the gateway has no executor of its own). Other threads
  // keep serving every other call.
  while (true) {
    batch();
    std::lock_guard<std::mutex> lock(turns_mu_);
    if (queued_.empty()) {
      --running_;
      return true;
    }
    batch = std::move(queued_.front());
    queued_.pop_front();
  }
}

void AuditIngest::RefuseQueueFull(http::Response* response) const {
  response->status = 429;
  response->headers.emplace_back("Retry-After", "1");
  response->body = StatusJson(absl::ResourceExhaustedError(absl::StrFormat(
      "%d audit batches are being read and %d wait "
      "(--audit-max-concurrent-batches, --audit-max-queued-batches); "
      "kube-apiserver retries this one",
      options_.max_concurrent_batches, options_.max_queued_batches)));
  if (metrics_ != nullptr) {
    metrics_->RecordAuditBatch(runtime::AuditBatchResult::kBusy);
  }
}

}  // namespace compatd::gateway
