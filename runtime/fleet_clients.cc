#include "runtime/fleet_clients.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace compatd::runtime {
namespace {

constexpr size_t kMaxSelectorBytes = 1024;

// `{selector}`, or nothing.
std::string Braces(absl::string_view selector) {
  return selector.empty() ? std::string() : absl::StrCat("{", selector, "}");
}

}  // namespace

FleetQueries BuildFleetQueries(const FleetQueryOptions& options) {
  const std::string sel = Braces(options.selector);
  const int64_t ttl_seconds =
      std::max<int64_t>(1, absl::ToInt64Seconds(options.client_ttl));
  const absl::string_view last = options.recorded
                                     ? "job:compatd_client_last_seen_"
                                       "timestamp_seconds:max"
                                     : "compatd_client_last_seen_timestamp_"
                                       "seconds";
  const absl::string_view first = options.recorded
                                      ? "job:compatd_client_first_seen_"
                                        "timestamp_seconds:min"
                                      : "compatd_client_first_seen_timestamp_"
                                        "seconds";
  const absl::string_view requests = options.recorded
                                         ? "job:compatd_client_requests:sum"
                                         : "compatd_client_requests_total";
  FleetQueries queries;
  queries.last_seen = absl::StrCat("max by (component, version) (", last, sel,
                                   ") > time() - ", ttl_seconds);
  queries.first_seen =
      absl::StrCat("min by (component, version) (", first, sel, ")");
  queries.requests =
      absl::StrCat("sum by (component, version) (", requests, sel, ")");
  queries.replicas = absl::StrCat("count(compatd_build_info", sel, ")");
  return queries;
}

absl::Status ValidateSelector(absl::string_view selector) {
  if (selector.size() > kMaxSelectorBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("selector of ", selector.size(), " bytes: at most ",
                     kMaxSelectorBytes));
  }
  size_t i = 0;
  auto fail = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("selector `", selector, "` at byte ", i, ": ", what,
                     "; expected label matchers like "
                     "namespace=\"compatd\",job=~\"compatd.*\""
                     " (operators = != =~ !~, values in double quotes)"));
  };
  auto skip_space = [&] {
    while (i < selector.size() && (selector[i] == ' ' || selector[i] == '\t')) {
      ++i;
    }
  };
  skip_space();
  if (i == selector.size()) return absl::OkStatus();
  while (true) {
    skip_space();
    const size_t name_start = i;
    while (i < selector.size() &&
           (absl::ascii_isalnum(static_cast<unsigned char>(selector[i])) ||
            selector[i] == '_')) {
      ++i;
    }
    if (i == name_start ||
        absl::ascii_isdigit(static_cast<unsigned char>(selector[name_start]))) {
      return fail("a label name ([a-zA-Z_][a-zA-Z0-9_]*) is missing");
    }
    skip_space();
    if (selector.substr(i, 2) == "=~" || selector.substr(i, 2) == "!=" ||
        selector.substr(i, 2) == "!~") {
      i += 2;
    } else if (selector.substr(i, 1) == "=") {
      i += 1;
    } else {
      return fail("an operator (= != =~ !~) is missing");
    }
    skip_space();
    if (i >= selector.size() || selector[i] != '"') {
      return fail("a double-quoted value is missing");
    }
    ++i;
    bool closed = false;
    while (i < selector.size()) {
      const char c = selector[i];
      if (c == '\\') {
        i += 2;
        continue;
      }
      if (c == '\n' || c == '\r') return fail("a line break in a value");
      ++i;
      if (c == '"') {
        closed = true;
        break;
      }
    }
    if (!closed) return fail("a value's closing quote is missing");
    skip_space();
    if (i == selector.size()) return absl::OkStatus();
    if (selector[i] != ',') return fail("a comma between matchers is missing");
    ++i;
  }
}

FleetClients::FleetClients(Options options) : options_(std::move(options)) {}

absl::Time FleetClients::Now() const {
  return options_.clock ? options_.clock() : absl::Now();
}

void FleetClients::Publish(FleetAnswer answer) {
  auto shared = std::make_shared<const FleetAnswer>(std::move(answer));
  const absl::Time now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  answer_ = std::move(shared);
  error_.clear();
  error_since_ = absl::InfinitePast();
  last_attempt_ = now;
}

void FleetClients::Fail(const absl::Status& why) {
  const absl::Time now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  if (error_.empty()) error_since_ = now;
  error_ = why.ToString(absl::StatusToStringMode::kWithNoExtraData);
  last_attempt_ = now;
}

FleetClients::State FleetClients::Current() const {
  const absl::Time now = Now();
  State state;
  state.source = options_.source;
  std::lock_guard<std::mutex> lock(mu_);
  state.last_attempt = last_attempt_;
  if (!error_.empty()) {
    state.why_not =
        absl::StrCat(options_.source, " failed since ",
                     absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", error_since_,
                                      absl::UTCTimeZone()),
                     ": ", error_);
    return state;
  }
  if (answer_ == nullptr) {
    state.why_not =
        absl::StrCat(options_.source, " has not answered yet since start");
    return state;
  }
  if (now - answer_->taken > options_.max_age) {
    state.why_not = absl::StrCat(options_.source, "'s last answer is ",
                                 absl::FormatDuration(absl::Trunc(
                                     now - answer_->taken, absl::Seconds(1))),
                                 " old (older than ",
                                 absl::FormatDuration(options_.max_age), ")");
    return state;
  }
  state.answer = answer_;
  return state;
}

}  // namespace compatd::runtime
