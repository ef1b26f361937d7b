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

// Appends the reason to a string grown once, so that writing it costs at most
// one allocation (CheckSkew sits on the admission-webhook hot path).
class ReasonWriter {
 public:
  // Every number has at most 20 digits; the fixed text of the longest reason
  // is under 100 characters and it holds at most 10 numbers.
  ReasonWriter(std::string* out, size_t component_size) : out_(out) {
    const size_t start = out_->size();
    out_->resize(start + component_size + 400);
    next_ = out_->data() + start;
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
  ReasonWriter& Bound(const SkewBound& bound, const Version& base) {
    *this << BaseName(bound.of) << " ";
    MajorMinor(base);
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

std::vector<SkewRule> DefaultSkewPolicy() {
  // KEP-4330 "Skew": controllers [minCompat, emulation]; kubelet and kube-proxy
  // [minCompat-2, emulation]; kubectl [minCompat, emulation+1].
  return {
      SkewRule{{"kube-controller-manager", "kube-scheduler",
                "cloud-controller-manager"},
               {SkewBase::kMinCompatibility, 0},
               {SkewBase::kEmulation, 0}},
      SkewRule{{"kubelet", "kube-proxy"},
               {SkewBase::kMinCompatibility, -2},
               {SkewBase::kEmulation, 0}},
      SkewRule{{"kubectl"},
               {SkewBase::kMinCompatibility, 0},
               {SkewBase::kEmulation, 1}},
  };
}

const std::vector<SkewRule>& SkewRulesInForce(const Catalog& catalog) {
  static const std::vector<SkewRule>* const kDefault =
      new std::vector<SkewRule>(DefaultSkewPolicy());
  return catalog.skew_policy.empty() ? *kDefault : catalog.skew_policy;
}

std::string SkewDecision::Reason() const {
  std::string out;
  AppendReason(&out);
  return out;
}

void SkewDecision::AppendReason(std::string* out) const {
  // The writer sizes `out` on destruction.
  ReasonWriter reason(out, component.size());
  reason << component << " " << client_major << "." << client_minor;
  switch (verdict) {
    case SkewVerdict::kTooOld:
      reason << " is older than the oldest allowed ";
      reason.MajorMinor(min_version) << " (";
      reason.Bound(min_bound, min_base) << ")";
      return;
    case SkewVerdict::kTooNew:
      reason << " is newer than the newest allowed ";
      reason.MajorMinor(max_version) << " (";
      reason.Bound(max_bound, max_base) << ")";
      return;
    case SkewVerdict::kAllowed:
      reason << " is within the allowed range ";
      reason.MajorMinor(min_version) << " (";
      reason.Bound(min_bound, min_base) << ") to ";
      reason.MajorMinor(max_version) << " (";
      reason.Bound(max_bound, max_base) << ")";
      return;
  }
}

absl::StatusOr<SkewDecision> CheckSkew(const Catalog& catalog,
                                       const EffectiveVersions& versions,
                                       absl::string_view component,
                                       absl::string_view client_version) {
  const std::vector<SkewRule>& rules = SkewRulesInForce(catalog);
  const SkewRule* rule = nullptr;
  absl::string_view matched;
  for (const SkewRule& r : rules) {
    for (const std::string& c : r.components) {
      if (c == component) {
        rule = &r;
        matched = c;
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

  decision.component = matched;
  decision.client_major = major;
  decision.client_minor = minor;
  decision.min_bound = rule->min;
  decision.max_bound = rule->max;
  decision.min_base = BaseVersion(versions, rule->min.of).ToMajorMinor();
  decision.max_base = BaseVersion(versions, rule->max.of).ToMajorMinor();
  if (CompareMajorMinor(major, minor, decision.min_version) < 0) {
    decision.verdict = SkewVerdict::kTooOld;
  } else if (CompareMajorMinor(major, minor, decision.max_version) > 0) {
    decision.verdict = SkewVerdict::kTooNew;
  } else {
    decision.verdict = SkewVerdict::kAllowed;
  }
  return decision;
}

}  // namespace compatd::engine
