#include "soak/audit_batches.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/testing/audit_events.h"

namespace compatd::soak {

const std::array<absl::string_view, kHostileItemCount> kHostileItemNames = {
    "giant user.username (system:)",
    "giant user.username (a service account)",
    "giant objectRef.apiGroup",
    "giant objectRef.resource",
    "giant objectRef.subresource",
    "giant k8s.io/removed-release annotation",
    "giant userAgent",
    "giant objectRef.resource of multi-byte characters",
    "odd text (U+FFFD, NUL, ESC, quotes, U+2028, BOM, C1, emoji)",
    "requestObject nested deeper than 1024 levels",
    "an item that is not an event",
    "a field of the wrong type"};

namespace {

using ::compatd::testing::AuditEventJson;
using ::compatd::testing::AuditEventListJson;
using ::compatd::testing::AuditEventSpec;

// A custom API kube-apiserver annotates deprecated: the catalog does not
// know it, so compatd keeps a row of it (and its fields) whatever they are.
constexpr char kCustomGroup[] = "giant.example.com";

// One event of the clients of a cluster; `skipped` when compatd does not
// count it (a watch's ResponseStarted, a 401).
AuditEventSpec GoodEvent(Rng& rng, bool* skipped) {
  struct Client {
    absl::string_view agent, user, group, version, resource, verb;
    int code;
  };
  static constexpr std::array<Client, 6> kClients = {{
      {"kubelet/v1.35.2 (linux/amd64) kubernetes/9a1b2c3", "system:node:node-",
       "", "v1", "pods", "get", 200},
      {"kube-proxy/v1.34.1 (linux/arm64) kubernetes/93248f9",
       "system:kube-proxy", "networking.k8s.io", "v1beta1", "ipaddresses",
       "watch", 200},
      {"cluster-autoscaler/v1.28.2 (linux/amd64) kubernetes/1a2b3c4",
       "system:serviceaccount:kube-system:cluster-autoscaler", "policy",
       "v1beta1", "poddisruptionbudgets", "list", 404},
      {"cert-manager-cainjector/v1.17.2 (linux/amd64) kubernetes/6e3f1f8",
       "system:serviceaccount:cert-manager:cert-manager-cainjector",
       "example.com", "v1alpha1", "widgets", "list", 200},
      {"kubectl/v1.35.2 (darwin/arm64) kubernetes/5d3a1f0", "alice@example.com",
       "flowcontrol.apiserver.k8s.io", "v1beta3", "flowschemas", "get", 404},
      {"kube-scheduler/v1.36.0 (linux/amd64) kubernetes/0f1e2d3",
       "system:kube-scheduler", "", "v1", "pods", "watch", 200},
  }};
  const Client& c = Pick(rng, kClients);
  AuditEventSpec e;
  e.user_agent = std::string(c.agent);
  e.username = std::string(c.user);
  if (absl::EndsWith(e.username, "-"))
    absl::StrAppend(&e.username, Below(rng, 50));
  e.api_group = std::string(c.group);
  e.api_version = std::string(c.version);
  e.resource = std::string(c.resource);
  e.verb = std::string(c.verb);
  e.code = c.code;
  e.deprecated = c.group == "example.com";
  *skipped = false;
  if (OneIn(rng, 10)) {
    e.stage = e.verb == "watch" ? "ResponseStarted" : "RequestReceived";
    *skipped = true;
  } else if (OneIn(rng, 20)) {
    e.code = 401;
    *skipped = true;
  }
  return e;
}

// One of kGiantLengths lengths from kGiantMinBytes to kGiantMaxBytes.
size_t GiantLength(Rng& rng) {
  return kGiantMinBytes +
         Below(rng, kGiantLengths) *
             ((kGiantMaxBytes - kGiantMinBytes) / (kGiantLengths - 1));
}

// ASCII (a name's letters) of a GiantLength: each length a row of its own
// (its mark "...(N bytes cut)" differs).
std::string Giant(Rng& rng) { return std::string(GiantLength(rng), 'x'); }

// 2-, 3- and 4-byte characters (é € U+1F600, 9 bytes in all, repeated) after
// 0 to 8 ASCII bytes, so that over the batches the cut falls at every offset
// of the 9: between characters and inside each.
std::string GiantMultibyte(Rng& rng) {
  std::string text(Below(rng, 9), 'w');
  const size_t bytes = GiantLength(rng);
  while (text.size() < bytes)
    text.append("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  return text;
}

// Text that is JSON and UTF-8 but odd, as AuditEventJson writes it verbatim
// inside quotes, one snippet of: what Go writes for bytes that are not UTF-8
// (U+FFFD), escapes of controls, quotes and backslashes (one of Prometheus'
// escapes), a surrogate pair, line and paragraph separators, a BOM, C1
// controls.
std::string OddText(Rng& rng) {
  static constexpr std::array<absl::string_view, 12> kOdd = {
      "\xef\xbf\xbd\xef\xbf\xbd",  // U+FFFD twice
      "\\u0000",
      "\\u001b[2J\\u001b[H",
      "line\\nbreak\\r\\t",
      "quote\\\"back\\\\slash",
      "\\ud83d\\ude00",            // a surrogate pair: U+1F600
      "\xe2\x80\xa8\xe2\x80\xa9",  // U+2028 U+2029 raw
      "\\u2028",
      "\xef\xbb\xbf",      // BOM
      "\xc2\x85\xc2\x9b",  // NEL, CSI (C1)
      "\xf0\x9f\x98\x80",  // U+1F600 raw
      "\\u007f"};
  return std::string(Pick(rng, kOdd));
}

// A value nested `levels` deep, objects and arrays in turn (as a
// RequestResponse-level requestObject carries them).
std::string Nested(size_t levels) {
  std::string value;
  value.reserve(levels * 6 + 1);
  for (size_t i = 0; i < levels; ++i) value += i % 2 ? "[" : "{\"a\":";
  value += "1";
  for (size_t i = levels; i-- > 0;) value += i % 2 ? "]" : "}";
  return value;
}

// An event of a custom API marked deprecated, so that compatd keeps a row
// with its fields; the caller makes one of them hostile.
AuditEventSpec CustomApiEvent() {
  AuditEventSpec e;
  e.user_agent = "widget-operator/v0.9.1 (linux/amd64) kubernetes/$Format";
  e.username = "system:serviceaccount:widgets:widget-operator";
  e.api_group = kCustomGroup;
  e.api_version = "v1";
  e.resource = "widgets";
  e.deprecated = true;
  e.removed_release = "1.40";
  return e;
}

// An event that calls an API at risk (policy/v1beta1, removed in 1.25), so
// that its user and User-Agent are kept in a row.
AuditEventSpec AtRiskEvent() {
  AuditEventSpec e;
  e.user_agent = "cluster-autoscaler/v1.28.2 (linux/amd64) kubernetes/1a2b3c4";
  e.username = "system:serviceaccount:kube-system:cluster-autoscaler";
  e.api_group = "policy";
  e.api_version = "v1beta1";
  e.resource = "poddisruptionbudgets";
  e.verb = "list";
  e.code = 404;
  return e;
}

// The giant items' events (all counted: recorded).
std::string GiantItem(Rng& rng, HostileItem kind) {
  AuditEventSpec e = CustomApiEvent();
  switch (kind) {
    case HostileItem::kGiantUser:
      e = AtRiskEvent();
      e.username = absl::StrCat("system:", Giant(rng));
      break;
    case HostileItem::kGiantServiceAccount:
      e = AtRiskEvent();
      e.username = absl::StrCat("system:serviceaccount:soak:", Giant(rng));
      break;
    case HostileItem::kGiantGroup:
      e.api_group = absl::StrCat("g", Giant(rng), ".example.com");
      break;
    case HostileItem::kGiantResource:
      e.resource = absl::StrCat("widgets", Giant(rng));
      break;
    case HostileItem::kGiantSubresource:
      e.subresource = absl::StrCat("status", Giant(rng));
      break;
    case HostileItem::kGiantRemovedRelease:
      e.removed_release = absl::StrCat("1.40", Giant(rng));
      break;
    case HostileItem::kGiantUserAgent:
      e = AtRiskEvent();
      e.user_agent = absl::StrCat(
          "kubectl/v1.36.0 (linux/amd64) kubernetes/5d3a1f0 ", Giant(rng));
      break;
    default:  // kGiantMultibyte
      e.resource = absl::StrCat("widgets", GiantMultibyte(rng));
      break;
  }
  return AuditEventJson(e);
}

// The other hostile items; `malformed` when compatd must skip and count it.
std::string OtherItem(Rng& rng, HostileItem kind, bool* malformed) {
  *malformed = true;
  switch (kind) {
    case HostileItem::kOddText: {
      *malformed = false;
      AuditEventSpec e = CustomApiEvent();
      std::string* fields[] = {&e.username,   &e.api_group,
                               &e.resource,   &e.subresource,
                               &e.user_agent, &e.removed_release};
      absl::StrAppend(fields[Below(rng, 6)], OddText(rng));
      return AuditEventJson(e);
    }
    case HostileItem::kDeep: {
      // One in four within the bound (900 levels): read, and counted.
      *malformed = !OneIn(rng, 4);
      const std::string value =
          Nested(*malformed ? 1100 + Below(rng, 2900) : 900);
      std::string event = AuditEventJson(AtRiskEvent());
      // Before the event's other fields (still read) or after them.
      if (OneIn(rng, 2)) {
        event.insert(1, absl::StrCat("\"requestObject\":", value, ","));
      } else {
        event.insert(event.size() - 1,
                     absl::StrCat(",\"requestObject\":", value));
      }
      return event;
    }
    case HostileItem::kNotAnEvent: {
      static constexpr std::array<absl::string_view, 7> kItems = {
          "42",
          "-1.5e308",
          "\"an audit event\"",
          "null",
          "true",
          "[]",
          "[{\"stage\":\"ResponseComplete\"}]"};
      return std::string(Pick(rng, kItems));
    }
    default: {  // kWrongType
      std::string event = AuditEventJson(AtRiskEvent());
      static constexpr std::array<
          std::pair<absl::string_view, absl::string_view>, 3>
          kSwaps = {{{"\"verb\":\"list\"", "\"verb\":{\"list\":1}"},
                     {"\"user\":{", "\"user\":\"root\",\"userX\":{"},
                     {"\"code\":404", "\"code\":\"404\""}}};
      const auto& [from, to] = Pick(rng, kSwaps);
      event.replace(event.find(from.data(), 0, from.size()), from.size(),
                    to.data(), to.size());
      return event;
    }
  }
}

}  // namespace

AuditBatch RandomAuditBatch(Rng& rng) {
  AuditBatch batch;
  std::vector<std::string> items;
  for (size_t i = 0, n = 10 + Below(rng, 40); i < n; ++i) {
    bool skipped = false;
    items.push_back(AuditEventJson(GoodEvent(rng, &skipped)));
    batch.skipped += skipped ? 1 : 0;
  }
  size_t giants = 0;
  for (size_t i = 0, n = 1 + Below(rng, 3); i < n; ++i) {
    auto kind = static_cast<HostileItem>(Below(rng, kHostileItemCount));
    const bool giant = kind <= HostileItem::kGiantMultibyte;
    if (giant && ++giants > 2) kind = HostileItem::kNotAnEvent;
    bool malformed = false;
    std::string item = kind <= HostileItem::kGiantMultibyte
                           ? GiantItem(rng, kind)
                           : OtherItem(rng, kind, &malformed);
    batch.malformed += malformed ? 1 : 0;
    batch.hostile.push_back(kind);
    items.insert(items.begin() +
                     static_cast<std::ptrdiff_t>(Below(rng, items.size() + 1)),
                 std::move(item));
  }
  batch.events = items.size();
  batch.recorded = batch.events - batch.skipped - batch.malformed;
  batch.body = AuditEventListJson(items);
  std::vector<absl::string_view> names;
  for (HostileItem kind : batch.hostile) {
    names.push_back(kHostileItemNames[static_cast<size_t>(kind)]);
  }
  batch.label = absl::StrCat(batch.events, " events, ", batch.body.size(),
                             " bytes; hostile: ", absl::StrJoin(names, ", "));
  return batch;
}

AuditBatch NotUtf8AuditBatch(Rng& rng) {
  static constexpr std::array<absl::string_view, 4> kBytes = {
      "\x80", "\xe2\x82", "\xff\xfe", "\\ud800"};
  const absl::string_view bytes = Pick(rng, kBytes);
  std::vector<std::string> items;
  for (size_t i = 0, n = 1 + Below(rng, 5); i < n; ++i) {
    bool skipped = false;
    items.push_back(AuditEventJson(GoodEvent(rng, &skipped)));
  }
  AuditEventSpec e = AtRiskEvent();
  e.username = absl::StrCat("system:serviceaccount:soak:", bytes, "x");
  items.push_back(AuditEventJson(e));
  AuditBatch batch;
  batch.not_utf8 = true;
  batch.body = AuditEventListJson(items);
  batch.events = items.size();
  batch.label = absl::StrCat(items.size(), " events, one user name with ",
                             bytes == "\\ud800" ? "a lone surrogate escape"
                                                : "bytes that are not UTF-8");
  return batch;
}

}  // namespace compatd::soak
