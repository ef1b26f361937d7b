#include "engine/version.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace compatd::engine {
namespace {

// Go's regexp \s: [\t\n\f\r ].
bool IsGoSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         c == '-';
}

// strconv.ParseUint(s, 10, 64) on a string of digits: false on overflow.
bool ParseUint64(absl::string_view digits, uint64_t* out) {
  if (digits.empty()) return false;
  uint64_t value = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    value = value * 10 + d;
  }
  *out = value;
  return true;
}

// Consumes `[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*` at *pos; false if it does not
// match.
bool ConsumeIdentifiers(absl::string_view s, size_t* pos) {
  size_t p = *pos;
  while (true) {
    const size_t start = p;
    while (p < s.size() && IsIdentChar(s[p])) ++p;
    if (p == start) return false;
    if (p < s.size() && s[p] == '.') {
      ++p;
      continue;
    }
    *pos = p;
    return true;
  }
}

}  // namespace

// A default Version already holds two components: they are written in place
// (an initializer list's assignment went through InlinedVector's generic
// Assign, 7% of a GetFeature naming a patch).
Version Version::MajorMinor(uint64_t major, uint64_t minor) {
  Version v;
  v.components_[0] = major;
  v.components_[1] = minor;
  return v;
}

Version Version::Semantic(uint64_t major, uint64_t minor, uint64_t patch) {
  Version v;
  v.components_[0] = major;
  v.components_[1] = minor;
  v.components_.push_back(patch);
  v.semver_ = true;
  return v;
}

absl::StatusOr<Version> Version::ParseSemantic(absl::string_view text) {
  return ParseImpl(text, /*semver=*/true);
}

absl::StatusOr<Version> Version::ParseGeneric(absl::string_view text) {
  return ParseImpl(text, /*semver=*/false);
}

absl::StatusOr<Version> Version::Parse(absl::string_view text) {
  absl::StatusOr<Version> v = ParseImpl(text, /*semver=*/true);
  if (v.ok()) return v;
  return ParseImpl(text, /*semver=*/false);
}

// apimachinery's parse(): versionMatchRE `^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$`,
// then the component rules, then (semver only) extraMatchRE for pre-release and
// build metadata.
absl::StatusOr<Version> Version::ParseImpl(absl::string_view text,
                                           bool semver) {
  size_t pos = 0;
  while (pos < text.size() && IsGoSpace(text[pos])) ++pos;
  if (pos < text.size() && text[pos] == 'v') ++pos;
  const size_t numbers_start = pos;
  if (pos >= text.size() || !IsDigit(text[pos])) {
    return absl::InvalidArgumentError(
        absl::StrFormat("could not parse \"%s\" as version", text));
  }
  while (pos < text.size() && IsDigit(text[pos])) ++pos;
  while (pos + 1 < text.size() && text[pos] == '.' && IsDigit(text[pos + 1])) {
    ++pos;
    while (pos < text.size() && IsDigit(text[pos])) ++pos;
  }
  const absl::string_view numbers =
      text.substr(numbers_start, pos - numbers_start);
  const absl::string_view extra = text.substr(pos);
  // `.` does not match a newline and `$` is the end of the text.
  if (extra.find('\n') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("could not parse \"%s\" as version", text));
  }

  // Inline for up to four components, so that parsing "1.35.2" (a binary
  // version with a patch, on every request that names one) allocates nothing.
  const absl::InlinedVector<absl::string_view, 4> parts =
      absl::StrSplit(numbers, '.');
  if ((semver && parts.size() != 3) || (!semver && parts.size() < 2)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("illegal version string \"%s\"", text));
  }
  Version v;
  v.components_.clear();
  v.semver_ = semver;
  for (size_t i = 0; i < parts.size(); ++i) {
    const absl::string_view comp = parts[i];
    if ((i == 0 || semver) && comp.size() > 1 && comp[0] == '0') {
      return absl::InvalidArgumentError(absl::StrFormat(
          "illegal zero-prefixed version component \"%s\" in \"%s\"", comp,
          text));
    }
    uint64_t num = 0;
    if (!ParseUint64(comp, &num)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "illegal non-numeric version component \"%s\" in \"%s\": value out "
          "of range",
          comp, text));
    }
    v.components_.push_back(num);
  }

  if (semver && !extra.empty()) {
    size_t p = 0;
    size_t pre_start = 0, pre_end = 0, build_start = 0, build_end = 0;
    bool ok = true;
    if (p < extra.size() && extra[p] == '-') {
      pre_start = ++p;
      ok = ConsumeIdentifiers(extra, &p);
      pre_end = p;
    }
    if (ok && p < extra.size() && extra[p] == '+') {
      build_start = ++p;
      ok = ConsumeIdentifiers(extra, &p);
      build_end = p;
    }
    while (ok && p < extra.size()) {
      if (!IsGoSpace(extra[p])) ok = false;
      ++p;
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "could not parse pre-release/metadata (%s) in version \"%s\"", extra,
          text));
    }
    v.pre_release_ = std::string(extra.substr(pre_start, pre_end - pre_start));
    v.build_metadata_ =
        std::string(extra.substr(build_start, build_end - build_start));
    for (absl::string_view comp : absl::StrSplit(v.pre_release_, '.')) {
      uint64_t unused = 0;
      if (ParseUint64(comp, &unused) && comp.size() > 1 && comp[0] == '0') {
        return absl::InvalidArgumentError(absl::StrFormat(
            "illegal zero-prefixed version component \"%s\" in \"%s\"", comp,
            text));
      }
    }
  }
  return v;
}

bool Version::ParseMajorMinorNoAlloc(absl::string_view text, uint64_t* major,
                                     uint64_t* minor) {
  size_t pos = 0;
  while (pos < text.size() && IsGoSpace(text[pos])) ++pos;
  if (pos < text.size() && text[pos] == 'v') ++pos;
  uint64_t values[2] = {0, 0};
  int components = 0;
  while (true) {
    const size_t start = pos;
    uint64_t value = 0;
    while (pos < text.size() && IsDigit(text[pos])) {
      const uint64_t d = static_cast<uint64_t>(text[pos] - '0');
      if (value > (std::numeric_limits<uint64_t>::max() - d) / 10) {
        return false;  // "value out of range"
      }
      value = value * 10 + d;
      ++pos;
    }
    if (pos == start) return false;
    if (components == 0 && pos - start > 1 && text[start] == '0') {
      return false;  // "illegal zero-prefixed version component"
    }
    if (components < 2) values[components] = value;
    ++components;
    if (pos + 1 < text.size() && text[pos] == '.' && IsDigit(text[pos + 1])) {
      ++pos;
      continue;
    }
    break;
  }
  if (components < 2) return false;
  if (text.substr(pos).find('\n') != absl::string_view::npos) return false;
  *major = values[0];
  *minor = values[1];
  return true;
}

int Version::Compare(const Version& other) const {
  const size_t v_len = components_.size();
  const size_t o_len = other.components_.size();
  for (size_t i = 0; i < v_len && i < o_len; ++i) {
    if (other.components_[i] < components_[i]) return 1;
    if (other.components_[i] > components_[i]) return -1;
  }
  for (size_t i = o_len; i < v_len; ++i) {
    if (components_[i] != 0) return 1;
  }
  for (size_t i = v_len; i < o_len; ++i) {
    if (other.components_[i] != 0) return -1;
  }
  if (!semver_ || !other.semver_) return 0;

  if (pre_release_.empty() && !other.pre_release_.empty()) return 1;
  if (!pre_release_.empty() && other.pre_release_.empty()) return -1;
  if (pre_release_ == other.pre_release_) return 0;

  const std::vector<absl::string_view> v_pr = absl::StrSplit(pre_release_, '.');
  const std::vector<absl::string_view> o_pr =
      absl::StrSplit(other.pre_release_, '.');
  for (size_t i = 0; i < v_pr.size() && i < o_pr.size(); ++i) {
    uint64_t v_num = 0, o_num = 0;
    if (ParseUint64(v_pr[i], &v_num) && ParseUint64(o_pr[i], &o_num)) {
      if (o_num < v_num) return 1;
      if (o_num > v_num) return -1;
      continue;
    }
    if (o_pr[i] < v_pr[i]) return 1;
    if (o_pr[i] > v_pr[i]) return -1;
  }
  if (o_pr.size() < v_pr.size()) return 1;
  if (o_pr.size() > v_pr.size()) return -1;
  return 0;
}

int Version::CompareMajorMinor(const Version& other) const {
  if (major() != other.major()) return major() < other.major() ? -1 : 1;
  if (minor() != other.minor()) return minor() < other.minor() ? -1 : 1;
  return 0;
}

Version Version::OffsetMinor(int64_t offset) const {
  uint64_t minor_value = 0;
  if (offset >= 0) {
    minor_value = minor() + static_cast<uint64_t>(offset);
  } else {
    const uint64_t diff = static_cast<uint64_t>(-offset);
    if (diff < minor()) minor_value = minor() - diff;
  }
  return MajorMinor(major(), minor_value);
}

Version Version::WithPatch(uint64_t patch) const {
  Version v = *this;
  v.components_ = {major(), minor(), patch};
  return v;
}

std::string Version::ToString() const {
  std::string out = absl::StrJoin(components_, ".");
  if (!pre_release_.empty()) absl::StrAppend(&out, "-", pre_release_);
  if (!build_metadata_.empty()) absl::StrAppend(&out, "+", build_metadata_);
  return out;
}

std::string Version::MajorMinorString() const {
  return absl::StrCat(major(), ".", minor());
}

}  // namespace compatd::engine
