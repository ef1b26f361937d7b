#include "engine/skew.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace compatd::engine {
namespace {

const std::vector<SkewRule>& DefaultRules() {
  static const std::vector<SkewRule>* const rules =
      new std::vector<SkewRule>(DefaultSkewPolicy());
  return *rules;
}

absl::string_view BaseName(SkewBase base) {
  switch (base) {
    case SkewBase::kMinCompatibility:
      return "min-compatibility";
    case SkewBase::kEmulation:
      return "emulation";
    case SkewBase::kBinary:
      return "binary";
  }
  return "binary";
}

const Version& BaseVersion(const EffectiveVersions& versions, SkewBase base) {
  switch (base) {
    case SkewBase::kMinCompatibility:
      return versions.min_compatibility;
    case SkewBase::kEmulation:
      return versions.emulation;
    case SkewBase::kBinary:
      return versions.binary;
  }
  return versions.binary;
}

// Writes the reason into a buffer sized once, so that building it costs a
// single allocation (CheckSkew sits on the admission-webhook hot path).
class ReasonWriter {
 public:
  // Every number has at most 20 digits; the fixed text of the longest reason
  // is under 100 characters and it holds at most 10 numbers.
  ReasonWriter(std::string* out, size_t component_size) : out_(out) {
    out_->resize(component_size + 400);
    next_ = out_->data();
  }
  ~ReasonWriter() { out_->resize(static_cast<size_t>(next_ - out_->data())); }

  ReasonWriter& operator<<(absl::string_view s) {
    std::memcpy(next_, s.data(), s.size());
    next_ += s.size();
    return *this;
  }
  ReasonWriter& operator<<(uint64_t n) {
    char digits[20];
    int len = 0;
    do {
      digits[len++] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n != 0);
    while (len > 0) *next_++ = digits[--len];
    return *this;
  }
  ReasonWriter& MajorMinor(const Version& v) {
    return *this << v.major() << "." << v.minor();
  }
  // "min-compatibility 1.33 - 2" (or "+ 1", or nothing for offset 0).
  ReasonWriter& Bound(const EffectiveVersions& versions,
                      const SkewBound& bound) {
    *this << BaseName(bound.of) << " ";
    MajorMinor(BaseVersion(versions, bound.of));
    if (bound.offset > 0) {
      *this << " + " << static_cast<uint64_t>(bound.offset);
    } else if (bound.offset < 0) {
      *this << " - "
            << static_cast<uint64_t>(-static_cast<int64_t>(bound.offset));
    }
    return *this;
  }

 private:
  std::string* out_;
  char* next_;
};

int CompareMajorMinor(uint64_t major, uint64_t minor, const Version& v) {
  if (major != v.major()) return major < v.major() ? -1 : 1;
  if (minor != v.minor()) return minor < v.minor() ? -1 : 1;
  return 0;
}

}  // namespace

absl::StatusOr<SkewDecision> CheckSkew(const Catalog& catalog,
                                       const EffectiveVersions& versions,
                                       absl::string_view component,
                                       absl::string_view client_version) {
  const std::vector<SkewRule>& rules =
      catalog.skew_policy.empty() ? DefaultRules() : catalog.skew_policy;
  const SkewRule* rule = nullptr;
  for (const SkewRule& r : rules) {
    for (const std::string& c : r.components) {
      if (c == component) {
        rule = &r;
        break;
      }
    }
    if (rule != nullptr) break;
  }
  if (rule == nullptr) {
    std::vector<absl::string_view> known;
    for (const SkewRule& r : rules) {
      for (const std::string& c : r.components) known.push_back(c);
    }
    std::sort(known.begin(), known.end());
    known.erase(std::unique(known.begin(), known.end()), known.end());
    return absl::InvalidArgumentError(absl::StrFormat(
        "component \"%s\" has no skew rule (KEP-4330 defines none for it); "
        "known components: %s",
        component, absl::StrJoin(known, ", ")));
  }

  uint64_t major = 0;
  uint64_t minor = 0;
  if (!Version::ParseMajorMinorNoAlloc(client_version, &major, &minor)) {
    absl::StatusOr<Version> parsed = Version::Parse(client_version);
    return absl::InvalidArgumentError(absl::StrFormat(
        "client version \"%s\" of %s: %s (expected e.g. \"1.31\" or "
        "\"v1.31.2\")",
        client_version, component,
        parsed.ok() ? "not a version" : parsed.status().message()));
  }

  SkewDecision decision;
  decision.min_version =
      BaseVersion(versions, rule->min.of).OffsetMinor(rule->min.offset);
  decision.max_version =
      BaseVersion(versions, rule->max.of).OffsetMinor(rule->max.offset);

  {  // The writer sizes the reason on destruction: finish before returning.
    ReasonWriter reason(&decision.reason, component.size());
    reason << component << " " << major << "." << minor;
    if (CompareMajorMinor(major, minor, decision.min_version) < 0) {
      decision.verdict = SkewVerdict::kTooOld;
      reason << " is older than the oldest allowed ";
      reason.MajorMinor(decision.min_version) << " (";
      reason.Bound(versions, rule->min) << ")";
    } else if (CompareMajorMinor(major, minor, decision.max_version) > 0) {
      decision.verdict = SkewVerdict::kTooNew;
      reason << " is newer than the newest allowed ";
      reason.MajorMinor(decision.max_version) << " (";
      reason.Bound(versions, rule->max) << ")";
    } else {
      decision.verdict = SkewVerdict::kAllowed;
      reason << " is within the allowed range ";
      reason.MajorMinor(decision.min_version) << " (";
      reason.Bound(versions, rule->min) << ") to ";
      reason.MajorMinor(decision.max_version) << " (";
      reason.Bound(versions, rule->max) << ")";
    }
  }
  return decision;
}

}  // namespace compatd::engine
