#pragma once

// The HTTPS/JSON front door: valid and wrong requests.

#include "soak/common.h"
#include "soak/lanes.h"

namespace compatd::soak {

// ---------------------------------------------------------------------------
// The HTTPS/JSON front door (--http-listen): valid requests with their
// answers checked, wrong requests with their exact statuses, garbage and
// oversized bodies.

// The query of a GET request for `message` (Kyverno's form: scalar fields,
// nested ones as "versions.emulationVersion"), or nullopt when it has a
// repeated field (those take POST).
inline std::optional<std::string> QueryOf(const Message& message,
                                          const std::string& prefix = "") {
  const google::protobuf::Reflection* r = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(message, &fields);
  std::vector<std::string> pairs;
  using FD = google::protobuf::FieldDescriptor;
  for (const FD* field : fields) {
    if (field->is_repeated()) return std::nullopt;
    const std::string key = absl::StrCat(prefix, field->json_name());
    std::string value;
    switch (field->cpp_type()) {
      case FD::CPPTYPE_MESSAGE: {
        std::optional<std::string> nested =
            QueryOf(r->GetMessage(message, field), key + ".");
        if (!nested.has_value()) return std::nullopt;
        if (!nested->empty()) pairs.push_back(*nested);
        continue;
      }
      case FD::CPPTYPE_STRING:
        value = r->GetString(message, field);
        break;
      case FD::CPPTYPE_BOOL:
        value = r->GetBool(message, field) ? "true" : "false";
        break;
      case FD::CPPTYPE_ENUM:
        value = r->GetEnum(message, field)->name();
        break;
      case FD::CPPTYPE_INT32:
        value = absl::StrCat(r->GetInt32(message, field));
        break;
      case FD::CPPTYPE_UINT32:
        value = absl::StrCat(r->GetUInt32(message, field));
        break;
      case FD::CPPTYPE_INT64:
        value = absl::StrCat(r->GetInt64(message, field));
        break;
      case FD::CPPTYPE_UINT64:
        value = absl::StrCat(r->GetUInt64(message, field));
        break;
      default:
        return std::nullopt;
    }
    pairs.push_back(absl::StrCat(key, "=", testing::UrlEncode(value)));
  }
  return absl::StrJoin(pairs, "&");
}

inline std::string ToJsonText(const Message& message) {
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json);
  return json;
}

// The answer's JSON as a google.protobuf.Value; nullopt if it is not JSON.
inline std::optional<google::protobuf::Value> ParseValue(
    absl::string_view json) {
  google::protobuf::Value value;
  if (!google::protobuf::util::JsonStringToMessage(
           google::protobuf::StringPiece(json.data(), json.size()), &value)
           .ok()) {
    return std::nullopt;
  }
  return value;
}

// The member `path` ("response.uid") of a JSON object; a null Value when a
// step is missing.
inline google::protobuf::Value At(const google::protobuf::Value& root,
                                  absl::string_view path) {
  google::protobuf::Value current = root;
  for (absl::string_view step : absl::StrSplit(path, '.')) {
    if (!current.has_struct_value()) return google::protobuf::Value();
    const auto& fields = current.struct_value().fields();
    const auto it = fields.find(std::string(step));
    if (it == fields.end()) return google::protobuf::Value();
    google::protobuf::Value next = it->second;
    current = std::move(next);
  }
  return current;
}

// A request to the front door and the one status it must get.
struct HttpCase {
  std::string label;
  std::string method;
  std::string target;
  std::string body;
  int status = 200;
  // Judges a body of the right status: "" when right, else what is wrong.
  std::function<std::string(const HttpAnswer&)> check;
};

// The latency class of a valid front door request, by its path.
inline LatencyClass FrontDoorLatencyClass(absl::string_view target) {
  if (absl::StartsWith(target, "/admission/")) return LatencyClass::kAdmission;
  if (absl::StartsWith(target, "/gatekeeper/")) {
    return LatencyClass::kGatekeeper;
  }
  return LatencyClass::kHealthz;
}

constexpr char kUid[] = "soak-";

inline std::string Review(absl::string_view uid, absl::string_view operation,
                          absl::string_view object,
                          absl::string_view old_object) {
  return absl::StrCat(
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)",
      R"("request":{"uid":")", uid, R"(","operation":")", operation,
      R"(","userInfo":{"username":"soak"},"object":)", object,
      R"(,"oldObject":)", old_object, R"(,"dryRun":false}})");
}

inline std::string Crd(absl::string_view versions, absl::string_view stored) {
  return absl::StrCat(
      R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",)",
      R"("metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com",)",
      R"("versions":[)", versions, R"(]},"status":{"storedVersions":[)", stored,
      "]}}");
}

// An AdmissionReview answer: 200, the uid echoed, allowed as expected, a
// 403 status when denied, warnings when expected.
inline std::function<std::string(const HttpAnswer&)> ExpectReview(
    std::string uid, bool allowed, bool warnings) {
  return [uid, allowed, warnings](const HttpAnswer& answer) -> std::string {
    const std::optional<google::protobuf::Value> v = ParseValue(answer.body);
    if (!v.has_value()) return "not JSON";
    if (At(*v, "apiVersion").string_value() != "admission.k8s.io/v1" ||
        At(*v, "kind").string_value() != "AdmissionReview") {
      return "not an admission.k8s.io/v1 AdmissionReview";
    }
    if (At(*v, "response.uid").string_value() != uid) {
      return absl::StrCat("response.uid is not ", uid);
    }
    if (!At(*v, "response.allowed").has_bool_value() ||
        At(*v, "response.allowed").bool_value() != allowed) {
      return absl::StrCat("expected allowed ", allowed ? "true" : "false");
    }
    if (!allowed && At(*v, "response.status.code").number_value() != 403) {
      return "a denial without status.code 403";
    }
    if (warnings != At(*v, "response.warnings").has_list_value()) {
      return warnings ? "no warning" : "an unexpected warning";
    }
    return "";
  };
}

// A google.rpc.Status body with `code` whose message mentions `text`.
inline std::function<std::string(const HttpAnswer&)> ExpectStatus(
    int code, std::string text) {
  return [code, text](const HttpAnswer& answer) -> std::string {
    const std::optional<google::protobuf::Value> v = ParseValue(answer.body);
    if (!v.has_value()) return "not JSON";
    if (At(*v, "code").number_value() != code) {
      return absl::StrCat("expected google.rpc.Status code ", code);
    }
    if (!absl::StrContains(At(*v, "message").string_value(), text)) {
      return absl::StrCat("the message does not mention \"", text, "\"");
    }
    return "";
  };
}

// The fixed requests beyond the RPCs: admission reviews, a Gatekeeper
// ProviderRequest and /healthz, at an explicit emulation version so that
// both catalog variants answer them the same.
inline std::vector<HttpCase> ValidFrontDoorCases(Rng& rng) {
  const std::string uid = absl::StrCat(kUid, Below(rng, 1000000000));
  const std::string deployment =
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1}})";
  const std::string cronjob =
      R"({"apiVersion":"batch/v1beta1","kind":"CronJob","metadata":{"name":"c"},"spec":{}})";
  const std::string v1 = R"({"name":"v1","served":true,"storage":false})";
  const std::string v2 = R"({"name":"v2","served":true,"storage":true})";
  std::vector<HttpCase> cases;
  cases.push_back({"AdmissionReview of a served API, enforce", "POST",
                   "/admission/v1/validate?emulationVersion=1.36&mode=enforce",
                   Review(uid, "CREATE", deployment, "null"), 200,
                   ExpectReview(uid, true, false)});
  // kube-apiserver served it, so the catalog does not match the cluster: a
  // warning, never a denial (no upgrade target to enforce).
  cases.push_back({"AdmissionReview of a removed API, enforce", "POST",
                   "/admission/v1/validate/enforce/emulation-1.36",
                   Review(uid, "CREATE", cronjob, "null"), 200,
                   ExpectReview(uid, true, true)});
  cases.push_back({"AdmissionReview of a removed API, warn", "POST",
                   "/admission/v1/validate?emulationVersion=1.36&timeout=10s",
                   Review(uid, "UPDATE", cronjob, cronjob), 200,
                   ExpectReview(uid, true, true)});
  cases.push_back({"AdmissionReview of a CRD dropping a stored version", "POST",
                   "/admission/v1/validate",
                   Review(uid, "UPDATE", Crd(v2, R"("v1","v2")"),
                          Crd(absl::StrCat(v1, ",", v2), R"("v1","v2")")),
                   200, ExpectReview(uid, false, false)});
  cases.push_back(
      {"Gatekeeper ProviderRequest", "POST", "/gatekeeper/v1",
       R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1","kind":"ProviderRequest",)"
       R"("request":{"keys":["feature:WatchList@1.36","api:batch/v1beta1/CronJob@1.36",)"
       R"("feature:NoSuchGate","storage:pods"]}})",
       200, [](const HttpAnswer& answer) -> std::string {
         const std::optional<google::protobuf::Value> v =
             ParseValue(answer.body);
         if (!v.has_value()) return "not JSON";
         if (At(*v, "kind").string_value() != "ProviderResponse" ||
             !At(*v, "response.idempotent").bool_value()) {
           return "not an idempotent ProviderResponse";
         }
         const google::protobuf::Value list = At(*v, "response.items");
         const auto& items = list.list_value().values();
         if (items.size() != 4) return "not one item per key";
         if (!At(items[0], "value.enabled").bool_value() ||
             At(items[1], "value.state").string_value() != "notServed" ||
             At(items[2], "error").string_value().empty() ||
             !At(items[2], "value").has_null_value() ||
             At(items[3], "value.version").string_value() != "v1") {
           return "WatchList on, CronJob batch/v1beta1 notServed, NoSuchGate "
                  "an error, pods stored as v1: not so";
         }
         return "";
       }});
  cases.push_back({"/healthz", "GET", "/healthz", "", 200,
                   [](const HttpAnswer& answer) -> std::string {
                     return answer.body == "ok\n" ? "" : "not \"ok\"";
                   }});
  return cases;
}

// Wrong requests, each with its one right status (docs/admission.md).
inline std::vector<HttpCase> WrongFrontDoorCases() {
  std::vector<HttpCase> cases;
  cases.push_back({"malformed JSON", "POST", "/v1/GetFeature", R"({"name":)",
                   400, ExpectStatus(3, "not valid JSON at byte 8")});
  cases.push_back({"unknown field", "POST", "/v1/GetFeature",
                   R"({"feature":"WatchList"})", 400,
                   ExpectStatus(3, "feature")});
  cases.push_back({"unknown gate", "POST", "/v1/GetFeature",
                   R"({"name":"NoSuchGate"})", 404,
                   ExpectStatus(5, "NoSuchGate")});
  cases.push_back({"bad version", "GET",
                   "/v1/GetFeature?name=WatchList&versions.emulationVersion="
                   "banana",
                   "", 400, ExpectStatus(3, "banana")});
  cases.push_back({"nesting past 64", "POST", "/v1/Evaluate",
                   std::string(100, '[') + std::string(100, ']'), 400,
                   ExpectStatus(3, "deeper than 64")});
  cases.push_back({"repeated field in a GET", "GET",
                   "/v1/ComputeStorageVersionAgreement?participants=a", "", 400,
                   ExpectStatus(3, "POST the request as JSON")});
  cases.push_back({"wrong method", "PUT", "/v1/GetFeature", "{}", 405,
                   [](const HttpAnswer& answer) -> std::string {
                     return answer.Header("allow") == "get, post"
                                ? ""
                                : "no Allow: GET, POST";
                   }});
  cases.push_back({"wrong method (webhook)", "GET", "/admission/v1/validate",
                   "", 405, [](const HttpAnswer& answer) -> std::string {
                     return answer.Header("allow") == "post" ? ""
                                                             : "no Allow: POST";
                   }});
  cases.push_back({"unknown RPC", "POST", "/v1/NoSuchRpc", "{}", 404,
                   ExpectStatus(5, "no such RPC")});
  cases.push_back({"stream over HTTP", "GET", "/v1/WatchCatalog", "", 404,
                   ExpectStatus(5, "WatchCatalog is a stream")});
  cases.push_back({"unknown path", "GET", "/metrics", "", 404,
                   ExpectStatus(5, "not found")});
  cases.push_back(
      {"AdmissionReview v1beta1", "POST", "/admission/v1/validate",
       R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}})",
       400, ExpectStatus(3, "admissionReviewVersions")});
  cases.push_back({"AdmissionReview, unknown parameter", "POST",
                   "/admission/v1/validate?mode=block",
                   Review("x", "CREATE", "null", "null"), 400,
                   ExpectStatus(3, "mode")});
  // Gatekeeper reads only 200 answers: a systemError says what is wrong.
  cases.push_back(
      {"ProviderRequest without keys", "POST", "/gatekeeper/v1",
       R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1","kind":"ProviderRequest","request":{}})",
       200, [](const HttpAnswer& answer) -> std::string {
         return answer.body.find(
                    R"("systemError":"the ProviderRequest has no request.keys")") !=
                        std::string::npos
                    ? ""
                    : "no systemError naming request.keys";
       }});
  return cases;
}

inline bool Closed(int fd) {
  pollfd pfd{fd, POLLIN, 0};
  if (poll(&pfd, 1, 0) <= 0) return false;
  char buffer[4096];
  const ssize_t n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

// The head of a request whose body is never sent: --max-http-body-bytes
// must refuse it with 413 before reading the body.
inline absl::StatusOr<HttpAnswer> OversizedHead(int port, bool chunked,
                                                size_t bytes) {
  const int fd = testing::ConnectLoopback(port, timeval{10, 0});
  if (fd < 0) return absl::UnavailableError("cannot connect");
  std::string head = absl::StrCat(
      "POST /v1/Evaluate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\n");
  if (chunked) {
    // One chunk announcing more than the limit, its first bytes.
    absl::StrAppend(&head, "Transfer-Encoding: chunked\r\n\r\n",
                    absl::Hex(bytes), "\r\n{\"items\":[");
  } else {
    absl::StrAppend(&head, "Content-Length: ", bytes, "\r\n\r\n");
  }
  absl::StatusOr<HttpAnswer> answer =
      send(fd, head.data(), head.size(), MSG_NOSIGNAL) ==
              static_cast<ssize_t>(head.size())
          ? absl::StatusOr<HttpAnswer>(absl::UnavailableError("not read"))
          : absl::StatusOr<HttpAnswer>(absl::UnavailableError("send failed"));
  if (absl::IsUnavailable(answer.status()) &&
      answer.status().message() == "not read") {
    std::string buffer;
    answer = ReadHttpAnswer(fd, &buffer, std::chrono::milliseconds(10000));
  }
  close(fd);
  return answer;
}

// One front door worker per lane, as the gRPC workers (soak/grpc_worker.h):
// each sends the requests of its lane (gateway::Gateway::LaneOf) from the
// same mix; a heavy-lane request refused with 429 because the lane is full
// is accepted, and its worker waits the answer's Retry-After.
class HttpWorker {
 public:
  HttpWorker(Env* env, int index, Lane lane)
      : env_(*env),
        rng_(env->seed * 2654435761u + static_cast<uint64_t>(index)),
        client_(env->http_port),
        lane_(lane) {}

  void Run() {
    latency_ = LatencyRecorder(env_.load_start, env_.measure_from);
    cases_ = MakeValidCases(env_.facts);
    for (const ValidCase& c : cases_) {
      post_lanes_.push_back(
          HttpLane("POST", absl::StrCat("/v1/", RpcName(c.request.rpc)),
                   ToJsonText(*c.request.message)));
    }
    std::discrete_distribution<size_t> pick_case = PickByWeight(cases_);
    const std::vector<HttpCase> wrong = WrongFrontDoorCases();
    const Options& o = env_.options;
    // 60% RPCs, 15% webhooks and /healthz, 20% wrong, 5% random wrong
    // requests of the gRPC workers as JSON, of the classes that run.
    std::discrete_distribution<int> pick_class(
        {o.http_valid ? 60.0 : 0.0, o.http_valid ? 15.0 : 0.0,
         o.http_wrong ? 20.0 : 0.0, o.http_wrong ? 5.0 : 0.0});
    while (!env_.stop.load(std::memory_order_relaxed)) {
      bool sent = false;
      switch (pick_class(rng_)) {
        case 0:
          sent = Rpc(pick_case(rng_));
          break;
        case 1: {
          const std::vector<HttpCase> valid = ValidFrontDoorCases(rng_);
          sent = Fixed(Class::kHttpValid, valid[Below(rng_, valid.size())]);
          break;
        }
        case 2:
          sent = Fixed(Class::kHttpWrong, wrong[Below(rng_, wrong.size())]);
          break;
        default:
          sent = RandomWrong();
          break;
      }
      if (!sent) continue;
      env_.calls.fetch_add(1, std::memory_order_relaxed);
      if (retry_after_ > 0) {
        SleepUnlessStopped(env_, std::chrono::seconds(retry_after_));
        retry_after_ = 0;
      }
    }
  }

  const Tally& tally() const { return tally_; }
  const LatencyRecorder& latency() const { return latency_; }

 private:
  std::vector<std::string> Identity() {
    static constexpr std::array<absl::string_view, 4> kAgents = {
        "kube-apiserver-admission/v1.36.0", "Go-http-client/1.1",
        "kyverno/v1.13.0 (linux/amd64)", "curl/7.88.1"};
    return {absl::StrCat("User-Agent: ", kAgents[Below(rng_, kAgents.size())])};
  }

  void Failed(Class cls, absl::string_view what, absl::string_view label,
              absl::string_view problem) {
    env_.failures.Add(
        what, absl::StrCat(kClassNames[static_cast<int>(cls)], " ", label, ": ",
                           Shorten(problem, 400)));
  }

  // A heavy-lane call waits for the lane.
  std::chrono::milliseconds Timeout() const {
    return lane_ == Lane::kLight
               ? std::chrono::milliseconds(
                     absl::ToInt64Milliseconds(env_.options.call_timeout))
               : std::chrono::milliseconds(kHeavyCallTimeout);
  }

  // A heavy-lane request refused because the lane is full (429 with
  // Retry-After): accepted, and the worker waits before its next request.
  bool Refused(const HttpAnswer& answer) {
    if (lane_ != Lane::kHeavy || !LaneFull(answer)) return false;
    int seconds = 0;
    if (!absl::SimpleAtoi(answer.Header("retry-after"), &seconds)) {
      seconds = api::kLaneFullRetryAfterSeconds;
    }
    retry_after_ = std::clamp(seconds, 1, 10);
    return true;
  }

  // A unary RPC as JSON: POST, or GET with the query form when the request
  // has scalar fields only (a third of those), judged by the gRPC case's
  // own check on the answer parsed back into the response message. False
  // when the request is not of this worker's lane (not sent).
  bool Rpc(size_t index) {
    const SoakRequest& request = cases_[index].request;
    const std::string name(RpcName(request.rpc));
    std::optional<std::string> query;
    if (Below(rng_, 3) == 0) query = QueryOf(*request.message);
    const std::string target =
        query.has_value()
            ? absl::StrCat("/v1/", name, query->empty() ? "" : "?", *query)
            : absl::StrCat("/v1/", name);
    const Lane lane =
        query.has_value() ? HttpLane("GET", target, "") : post_lanes_[index];
    if (lane != lane_) return false;
    const Clock::time_point start = Clock::now();
    absl::StatusOr<HttpAnswer> answer =
        query.has_value()
            ? client_.Call("GET", target, "", Identity(), Timeout())
            : client_.Call("POST", target, ToJsonText(*request.message),
                           Identity(), Timeout());
    const Clock::time_point end = Clock::now();
    const std::string label =
        absl::StrCat(query.has_value() ? "GET " : "POST ", "/v1/", name, " (",
                     request.label, ")");
    Count(tally_, Class::kHttpValid, absl::StrCat("/v1/", name),
          static_cast<grpc::StatusCode>(answer.ok() ? answer->status : 0));
    if (answer.ok() && Refused(*answer)) {
      latency_.CountRefused(LatencyClass::kHttpValidHeavy, start);
      return true;
    }
    if (lane_ == Lane::kLight || (answer.ok() && answer->status == 200)) {
      latency_.Record(lane_ == Lane::kLight ? LatencyClass::kHttpValidLight
                                            : LatencyClass::kHttpValidHeavy,
                      absl::StrCat("/v1/", name), request.label, start, end,
                      LightBoundMicros(env_));
    }
    JudgeRpc(request, label, answer);
    return true;
  }

  void JudgeRpc(const SoakRequest& request, const std::string& label,
                const absl::StatusOr<HttpAnswer>& answer) {
    if (!answer.ok()) {
      Failed(Class::kHttpValid, "HTTP call failed", label,
             answer.status().ToString());
      return;
    }
    if (answer->status != 200) {
      Failed(Class::kHttpValid, "unexpected HTTP status", label,
             absl::StrCat(answer->status, " ", answer->body));
      return;
    }
    std::unique_ptr<Message> response = NewResponse(request.rpc);
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    if (!google::protobuf::util::JsonStringToMessage(answer->body,
                                                     response.get(), options)
             .ok()) {
      Failed(Class::kHttpValid, "wrong answer", label,
             absl::StrCat("not the response message as JSON: ", answer->body));
      return;
    }
    if (std::string problem = request.check(*response); !problem.empty()) {
      Failed(Class::kHttpValid, "wrong answer", label,
             absl::StrCat(problem, "; answer: ", answer->body));
    }
  }

  // One of the fixed requests (all of the light lane).
  bool Fixed(Class cls, const HttpCase& c) {
    if (HttpLane(c.method, c.target, c.body) != lane_) return false;
    const Clock::time_point start = Clock::now();
    absl::StatusOr<HttpAnswer> answer =
        client_.Call(c.method, c.target, c.body, Identity(), Timeout());
    if (cls == Class::kHttpValid) {
      latency_.Record(FrontDoorLatencyClass(c.target), c.label,
                      absl::StrCat(c.method, " ", c.target), start,
                      Clock::now(), LightBoundMicros(env_));
    }
    Count(tally_, cls, c.label,
          static_cast<grpc::StatusCode>(answer.ok() ? answer->status : 0));
    const std::string label =
        absl::StrCat(c.method, " ", c.target, " (", c.label, ")");
    if (!answer.ok()) {
      Failed(cls, "HTTP call failed", label, answer.status().ToString());
      return true;
    }
    if (answer->status != c.status) {
      Failed(cls, "unexpected HTTP status", label,
             absl::StrCat(answer->status, " (expected ", c.status, ") ",
                          answer->body));
      return true;
    }
    if (std::string problem = c.check(*answer); !problem.empty()) {
      Failed(cls, "wrong answer", label,
             absl::StrCat(problem, "; answer: ", answer->body));
    }
    return true;
  }

  // The gRPC workers' wrong requests as JSON: a refusal or an answer, by
  // grpc-gateway's mapping; a body over --max-http-body-bytes is 413 (for
  // its head alone: before any lane).
  bool RandomWrong() {
    const SoakRequest request =
        RandomWrongRequest(rng_, kMaxRecvMessageBytes, kMaxEvaluateItems);
    const std::string json = ToJsonText(*request.message);
    const std::string name(RpcName(request.rpc));
    const bool oversized = json.size() > kMaxHttpBodyBytes;
    const Lane lane = oversized
                          ? Lane::kLight
                          : HttpLane("POST", absl::StrCat("/v1/", name), json);
    if (lane != lane_) return false;
    absl::StatusOr<HttpAnswer> answer =
        oversized ? OversizedHead(env_.http_port, false, json.size())
                  : client_.Call("POST", absl::StrCat("/v1/", name), json,
                                 Identity(), Timeout());
    Count(tally_, Class::kHttpWrong, absl::StrCat("/v1/", name),
          static_cast<grpc::StatusCode>(answer.ok() ? answer->status : 0));
    const std::string label =
        absl::StrCat("POST /v1/", name, " (", request.label, ")");
    if (!answer.ok()) {
      Failed(Class::kHttpWrong, "HTTP call failed", label,
             answer.status().ToString());
      return true;
    }
    const int status = answer->status;
    const bool accepted =
        Refused(*answer) ||
        (oversized ? status == 413
         : request.exact_code.has_value()
             ? (*request.exact_code == grpc::StatusCode::INVALID_ARGUMENT
                    ? status == 400
                    : status == 400 || status == 429)
             : status == 200 || status == 400 || status == 404 ||
                   status == 429);
    if (!accepted) {
      Failed(Class::kHttpWrong, "unexpected HTTP status", label,
             absl::StrCat(status, " ", answer->body));
    }
    return true;
  }

  Env& env_;
  Rng rng_;
  HttpClient client_;
  const Lane lane_;
  int retry_after_ = 0;  // seconds to wait before the next request
  std::vector<ValidCase> cases_;
  std::vector<Lane> post_lanes_;  // of cases_ as POST /v1/<RPC>
  Tally tally_;
  LatencyRecorder latency_;
};

}  // namespace compatd::soak
