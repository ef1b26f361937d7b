#include "engine/kube_aware_version.h"

#include <cstdint>
#include <limits>

#include "absl/strings/match.h"

namespace compatd::engine {
namespace {

enum class KubeVersionType { kAlpha = 0, kBeta = 1, kGA = 2 };

struct KubeVersion {
  int64_t major = 0;
  KubeVersionType type = KubeVersionType::kGA;
  int64_t minor = 0;
};

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// strconv.Atoi on a run of ASCII digits: false when it overflows int64.
bool AtoiDigits(absl::string_view digits, int64_t* out) {
  int64_t value = 0;
  for (char c : digits) {
    const int64_t d = c - '0';
    if (value > (std::numeric_limits<int64_t>::max() - d) / 10) return false;
    value = value * 10 + d;
  }
  *out = value;
  return true;
}

// Consumes [0-9]+ at *pos; false if there is none.
bool ConsumeDigits(absl::string_view s, size_t* pos, absl::string_view* out) {
  const size_t start = *pos;
  while (*pos < s.size() && IsAsciiDigit(s[*pos])) ++*pos;
  if (*pos == start) return false;
  *out = s.substr(start, *pos - start);
  return true;
}

// kubeVersionRegex `^v([\d]+)(?:(alpha|beta)([\d]+))?$` plus the Atoi calls of
// parseKubeVersion (an overflowing number makes the string non-kube).
bool ParseKubeVersion(absl::string_view v, KubeVersion* out) {
  if (v.empty() || v[0] != 'v') return false;
  size_t pos = 1;
  absl::string_view major_digits;
  if (!ConsumeDigits(v, &pos, &major_digits)) return false;
  KubeVersion parsed;
  if (!AtoiDigits(major_digits, &parsed.major)) return false;
  if (pos == v.size()) {
    parsed.type = KubeVersionType::kGA;
    *out = parsed;
    return true;
  }
  const absl::string_view rest = v.substr(pos);
  if (absl::StartsWith(rest, "alpha")) {
    parsed.type = KubeVersionType::kAlpha;
    pos += 5;
  } else if (absl::StartsWith(rest, "beta")) {
    parsed.type = KubeVersionType::kBeta;
    pos += 4;
  } else {
    return false;
  }
  absl::string_view minor_digits;
  if (!ConsumeDigits(v, &pos, &minor_digits) || pos != v.size()) return false;
  if (!AtoiDigits(minor_digits, &parsed.minor)) return false;
  *out = parsed;
  return true;
}

template <typename T>
int Sign(T a, T b) {
  return a < b ? -1 : (a > b ? 1 : 0);
}

}  // namespace

int CompareKubeAwareVersionStrings(absl::string_view a, absl::string_view b) {
  if (a == b) return 0;
  KubeVersion ka, kb;
  const bool ok_a = ParseKubeVersion(a, &ka);
  const bool ok_b = ParseKubeVersion(b, &kb);
  if (!ok_a && !ok_b) {
    // strings.Compare(v2, v1): non-kube strings sort reverse-alphabetically.
    const int c = b.compare(a);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (!ok_a) return -1;
  if (!ok_b) return 1;
  if (ka.type != kb.type) {
    return Sign(static_cast<int>(ka.type), static_cast<int>(kb.type));
  }
  if (ka.major != kb.major) return Sign(ka.major, kb.major);
  return Sign(ka.minor, kb.minor);
}

}  // namespace compatd::engine
