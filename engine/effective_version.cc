#include "engine/effective_version.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace compatd::engine {
namespace {

// Which kube-apiserver code decides, by the binary's major.minor:
//  - kBeforeEmulation: < 1.31, no --emulated-version at all.
//  - k131: apiserver v0.31.x pkg/util/version/version.go (component-base
//    v0.31 has no effective version): Validate accepts emulation in [N-1, N]
//    and min-compatibility exactly N-1; ValidateKubeEffectiveVersion also
//    requires emulation == binary at 1.31. SetEmulationVersion stores the
//    emulation version only, so min-compatibility stays N-1.
//  - k132: component-base v0.32.x version/version.go (unchanged v0.32.0 to
//    v0.32.13): the same Validate, emulation in [N-1, N] and min-compatibility
//    exactly N-1; SetEmulationVersion stores the emulation version only;
//    ValidateKubeEffectiveVersion only rejects binaries at 1.31. (The N-3 /
//    N-4 ranges and ">= 1.31" / ">= 1.30" checks of component-base 70b67d7
//    were 1.33-cycle code, first tagged v0.33.0-alpha.1, never in v0.32.)
//  - kFloors: component-base compatibility/ (v0.33.0 to master) with apiserver
//    pkg/util/compatibility kubeEffectiveVersionFloors: one floor max(N-3,
//    1.31) for both; setting emulation resets min-compatibility to
//    max(emulation-1, floor).
enum class Era { kBeforeEmulation, k131, k132, kFloors };

Era EraOf(const Version& binary) {
  if (binary.major() != 1) {
    return binary.major() < 1 ? Era::kBeforeEmulation : Era::kFloors;
  }
  if (binary.minor() < 31) return Era::kBeforeEmulation;
  if (binary.minor() == 31) return Era::k131;
  if (binary.minor() == 32) return Era::k132;
  return Era::kFloors;
}

const Version& MinimumKubeEmulationVersion() {
  static const Version* const kVersion =
      new Version(Version::MajorMinor(1, 31));
  return *kVersion;
}

Version Max(const Version& a, const Version& b) { return a < b ? b : a; }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// "1.33": the common case, parsed without allocating. Gives exactly what
// Version::Parse gives (a generic major.minor) or false to let it decide.
bool ParsePlainNumbers(absl::string_view text, uint64_t* major,
                       uint64_t* minor) {
  uint64_t parts[2] = {0, 0};
  size_t i = 0;
  for (int part = 0; part < 2; ++part) {
    const size_t start = i;
    while (i < text.size() && IsDigit(text[i])) {
      if (i - start >= 9) return false;  // leave overflow to the full parser
      parts[part] = parts[part] * 10 + static_cast<uint64_t>(text[i] - '0');
      ++i;
    }
    if (i == start) return false;
    // Only the first component may not have a leading zero.
    if (part == 0 && i - start > 1 && text[start] == '0') return false;
    if (part == 0) {
      if (i >= text.size() || text[i] != '.') return false;
      ++i;
    }
  }
  if (i != text.size()) return false;
  *major = parts[0];
  *minor = parts[1];
  return true;
}

bool ParsePlainMajorMinor(absl::string_view text, Version* out) {
  uint64_t major = 0, minor = 0;
  if (!ParsePlainNumbers(text, &major, &minor)) return false;
  *out = Version::MajorMinor(major, minor);
  return true;
}

// "1.33", "v1.35.2": the common cases, parsed without the StatusOr and the
// string work of Version::Parse. Two components give a generic major.minor,
// three a semantic version, exactly as Version::Parse gives them; anything
// else (blanks, pre-release, a leading zero, more digits) returns false and
// lets Version::Parse decide.
bool ParsePlainVersion(absl::string_view text, Version* out) {
  if (!text.empty() && text.front() == 'v') text.remove_prefix(1);
  uint64_t parts[3] = {0, 0, 0};
  int count = 0;
  size_t i = 0;
  while (count < 3) {
    const size_t start = i;
    while (i < text.size() && IsDigit(text[i])) {
      if (i - start >= 9) return false;  // leave overflow to the full parser
      parts[count] = parts[count] * 10 + static_cast<uint64_t>(text[i] - '0');
      ++i;
    }
    if (i == start) return false;
    // Semantic versions allow no leading zero; a generic one only in the
    // later components, which the full parser handles.
    if (i - start > 1 && text[start] == '0') return false;
    ++count;
    if (i == text.size()) break;
    if (text[i] != '.' || count == 3) return false;
    ++i;
  }
  if (i != text.size() || count < 2) return false;
  *out = count == 2 ? Version::MajorMinor(parts[0], parts[1])
                    : Version::Semantic(parts[0], parts[1], parts[2]);
  return true;
}

struct VersionRange {
  Version low;
  Version high;
};

std::string RangeText(const VersionRange& r) {
  if (r.low == r.high) return std::string(r.low.MajorMinorString());
  return absl::StrCat(r.low.MajorMinorString(), " to ",
                      r.high.MajorMinorString());
}

// Where a value came from, for error messages.
struct Origin {
  absl::string_view field;  // "emulation_version"
  absl::string_view where;  // "request field emulation_version"
  absl::string_view text;   // as written; empty when defaulted
  bool defaulted = false;
};

std::string Describe(const Origin& origin, const Version& value) {
  if (origin.defaulted) {
    return absl::StrFormat("%s %s (%s)", origin.field, value.MajorMinorString(),
                           origin.where);
  }
  return absl::StrFormat("%s \"%s\" (%s)", origin.field, origin.text,
                         origin.where);
}

// The checks of one era, with Kubernetes' own wording; empty when valid.
std::string CheckEmulation(Era era, const Version& binary,
                           const Version& emulation) {
  const Version binary_p0 = binary.WithPatch(0);
  switch (era) {
    case Era::kBeforeEmulation:
      if (emulation.CompareMajorMinor(binary) != 0) {
        return absl::StrFormat(
            "Kubernetes %s has no --emulated-version (emulation versions "
            "start with 1.31), so the emulation version is the binary "
            "version, got %s",
            binary.MajorMinorString(), emulation.MajorMinorString());
      }
      return "";
    case Era::k131:
    case Era::k132: {
      std::string error;
      const Version floor = binary_p0.SubtractMinor(1);
      if (emulation > binary_p0 || emulation < floor) {
        error = absl::StrFormat("emulation version %s is not between [%s, %s]",
                                emulation.ToString(), floor.ToString(),
                                binary_p0.ToString());
      }
      // ValidateKubeEffectiveVersion, which kube-apiserver 1.31 runs after
      // (and reports with) Validate. It prints EmulationVersion(), which
      // carries the binary's pre-release in 1.31.
      if (era == Era::k131 && emulation.CompareMajorMinor(binary) != 0) {
        std::string got = emulation.ToString();
        if (!binary.pre_release().empty()) {
          got = absl::StrCat(emulation.major(), ".", emulation.minor(), ".0-",
                             binary.pre_release());
        }
        if (!error.empty()) absl::StrAppend(&error, ", ");
        absl::StrAppend(
            &error,
            absl::StrFormat(
                "emulation version needs to be equal to binary version(%s) "
                "in compatibility-version alpha, got %s",
                binary.MajorMinorString(), got));
      }
      return error;
    }
    case Era::kFloors: {
      const Version floor = KubeVersionFloor(binary);
      if (emulation > binary_p0 || emulation < floor) {
        return absl::StrFormat("emulation version %s is not between [%s, %s]",
                               emulation.ToString(), floor.ToString(),
                               binary_p0.ToString());
      }
      return "";
    }
  }
  return "";
}

std::string CheckMinCompatibility(Era era, const Version& binary,
                                  const Version& emulation,
                                  const Version& min_compat) {
  const Version binary_p0 = binary.WithPatch(0);
  switch (era) {
    case Era::kBeforeEmulation:
    case Era::k131:
    case Era::k132: {
      const Version fixed = binary_p0.SubtractMinor(1);
      if (min_compat != fixed) {
        return absl::StrFormat(
            "minCompatibilityVersion version %s is not between [%s, %s]",
            min_compat.ToString(), fixed.ToString(), fixed.ToString());
      }
      return "";
    }
    case Era::kFloors: {
      const Version floor = KubeVersionFloor(binary);
      if (min_compat > emulation || min_compat < floor) {
        return absl::StrFormat(
            "minCompatibilityVersion version %s is not between [%s, %s]",
            min_compat.ToString(), floor.ToString(), emulation.ToString());
      }
      return "";
    }
  }
  return "";
}

VersionRange EmulationRange(Era era, const Version& binary) {
  const Version mm = binary.ToMajorMinor();
  switch (era) {
    case Era::kBeforeEmulation:
    case Era::k131:
      return {mm, mm};
    case Era::k132:
      return {mm.SubtractMinor(1), mm};
    case Era::kFloors:
      return {KubeVersionFloor(binary), mm};
  }
  return {mm, mm};
}

VersionRange MinCompatibilityRange(Era era, const Version& binary,
                                   const Version& emulation) {
  const Version mm = binary.ToMajorMinor();
  switch (era) {
    case Era::kBeforeEmulation:
    case Era::k131:
    case Era::k132:
      return {mm.SubtractMinor(1), mm.SubtractMinor(1)};
    case Era::kFloors:
      return {KubeVersionFloor(binary), emulation.ToMajorMinor()};
  }
  return {mm, mm};
}

// The checks of CheckEmulation and CheckMinCompatibility on plain major.minor
// numbers (every version compared there is major.minor, or the binary with
// patch 0, whose pre-release does not count against a generic version).
struct MajorMinorPair {
  uint64_t major;
  uint64_t minor;
  friend bool operator<(const MajorMinorPair& a, const MajorMinorPair& b) {
    return a.major != b.major ? a.major < b.major : a.minor < b.minor;
  }
};

MajorMinorPair MM(const Version& v) { return {v.major(), v.minor()}; }

MajorMinorPair Minus(MajorMinorPair v, uint64_t n) {
  return {v.major, v.minor > n ? v.minor - n : 0};
}

MajorMinorPair MaxPair(MajorMinorPair a, MajorMinorPair b) {
  return a < b ? b : a;
}

bool Within(MajorMinorPair v, MajorMinorPair low, MajorMinorPair high) {
  return !(v < low) && !(high < v);
}

bool WithinBounds(Era era, MajorMinorPair binary, MajorMinorPair emulation,
                  MajorMinorPair min_compat) {
  switch (era) {
    case Era::kBeforeEmulation:
    case Era::k131:
      return Within(emulation, binary, binary) &&
             Within(min_compat, Minus(binary, 1), Minus(binary, 1));
    case Era::k132:
      return Within(emulation, Minus(binary, 1), binary) &&
             Within(min_compat, Minus(binary, 1), Minus(binary, 1));
    case Era::kFloors: {
      const MajorMinorPair floor = MaxPair(Minus(binary, 3), {1, 31});
      return Within(emulation, floor, binary) &&
             Within(min_compat, floor, emulation);
    }
  }
  return false;
}

absl::Status FlagError(const Origin& origin, absl::string_view kubernetes,
                       const Version& binary, absl::string_view what,
                       const VersionRange& range) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %s; expected major.minor such as \"%s\" (kube-apiserver %s "
      "accepts %s %s)",
      Describe(origin, Version()), kubernetes, range.high.MajorMinorString(),
      binary.MajorMinorString(), what, RangeText(range)));
}

}  // namespace

Version KubeVersionFloor(const Version& binary) {
  return Max(binary.WithPatch(0).SubtractMinor(3),
             MinimumKubeEmulationVersion());
}

absl::Status ValidateEffectiveVersionRange(const Version& binary,
                                           const Version& emulation,
                                           const Version& min_compatibility,
                                           const Version& emulation_floor,
                                           const Version& min_compat_floor) {
  const Version binary_p0 = binary.WithPatch(0);
  std::vector<std::string> errors;
  if (emulation > binary_p0 || emulation < emulation_floor) {
    errors.push_back(absl::StrFormat(
        "emulation version %s is not between [%s, %s]", emulation.ToString(),
        emulation_floor.ToString(), binary_p0.ToString()));
  }
  if (min_compatibility > emulation || min_compatibility < min_compat_floor) {
    errors.push_back(absl::StrFormat(
        "minCompatibilityVersion version %s is not between [%s, %s]",
        min_compatibility.ToString(), min_compat_floor.ToString(),
        emulation.ToString()));
  }
  if (errors.empty()) return absl::OkStatus();
  if (errors.size() == 1) return absl::InvalidArgumentError(errors[0]);
  // utilerrors.NewAggregate's wording for several errors.
  return absl::InvalidArgumentError(
      absl::StrCat("[", errors[0], ", ", errors[1], "]"));
}

absl::StatusOr<Version> ParseVersionFlag(absl::string_view value) {
  Version fast;
  if (ParsePlainMajorMinor(value, &fast)) return fast;
  if (value.empty()) {
    return absl::InvalidArgumentError("empty version flag");
  }
  // pflag's StringSlice splits the flag value on commas.
  std::vector<std::pair<std::string, Version>> versions;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    absl::string_view component = "kube";
    absl::string_view text = item;
    const size_t eq = item.find('=');
    if (eq != absl::string_view::npos) {
      component = absl::StripAsciiWhitespace(item.substr(0, eq));
      text = absl::StripAsciiWhitespace(item.substr(eq + 1));
    }
    absl::StatusOr<Version> parsed = Version::Parse(text);
    if (!parsed.ok()) return parsed.status();
    if (parsed->patch() != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("patch version not allowed, got: %s=%s", component,
                          parsed->ToString()));
    }
    for (const auto& [existing_component, existing] : versions) {
      if (existing_component == component) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "duplicate version flag, %s=%s and %s=%s", component,
            existing.ToString(), component, parsed->ToString()));
      }
    }
    versions.emplace_back(std::string(component), *std::move(parsed));
  }
  for (const auto& [component, unused] : versions) {
    if (component != "kube") {
      return absl::InvalidArgumentError(
          absl::StrFormat("component not registered: %s", component));
    }
  }
  return versions.front().second.ToMajorMinor();
}

namespace {

// A version flag as major.minor numbers: the allocation-free form first.
absl::Status ParseFlagPair(absl::string_view text, MajorMinorPair* out) {
  if (ParsePlainNumbers(text, &out->major, &out->minor)) {
    return absl::OkStatus();
  }
  absl::StatusOr<Version> parsed = ParseVersionFlag(text);
  if (!parsed.ok()) return parsed.status();
  *out = MM(*parsed);
  return absl::OkStatus();
}

Version ToVersion(MajorMinorPair v) {
  return Version::MajorMinor(v.major, v.minor);
}

// ResolveEffectiveVersions when some version was given. Works on major.minor
// numbers and builds the result once, so that a request that sets
// emulation_version does not pay for Version copies.
absl::StatusOr<EffectiveVersions> ResolveGiven(const Catalog& catalog,
                                               const VersionQuery& query) {
  Version parsed_binary;
  const Version* binary_ptr = catalog.cluster.binary.has_value()
                                  ? &*catalog.cluster.binary
                                  : &catalog.binary_version;
  if (!query.binary_version.empty() &&
      ParsePlainVersion(query.binary_version, &parsed_binary)) {
    binary_ptr = &parsed_binary;
  } else if (!query.binary_version.empty()) {
    absl::StatusOr<Version> binary = Version::Parse(query.binary_version);
    if (!binary.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "binary_version \"%s\" (request field binary_version): %s; "
          "expected a version such as \"1.36\" or \"v1.36.2\"",
          query.binary_version, binary.status().message()));
    }
    parsed_binary = *std::move(binary);
    binary_ptr = &parsed_binary;
  }
  const Version& binary = *binary_ptr;
  const Era era = EraOf(binary);

  // --emulated-version: the request's, else the cluster section's.
  Origin emulation_origin{"emulation_version",
                          "request field emulation_version",
                          query.emulation_version};
  if (emulation_origin.text.empty()) {
    // Not a ?: of a literal and a std::string: that would make a temporary
    // string for the string_view to point into.
    if (catalog.cluster.emulation_origin.empty()) {
      emulation_origin.where = "catalog cluster.emulationVersion";
    } else {
      emulation_origin.where = catalog.cluster.emulation_origin;
    }
    emulation_origin.text = catalog.cluster.emulation_version;
  }
  Origin min_compat_origin{"min_compatibility_version",
                           "request field min_compatibility_version",
                           query.min_compatibility_version};
  if (min_compat_origin.text.empty()) {
    if (catalog.cluster.min_compatibility_origin.empty()) {
      min_compat_origin.where = "catalog cluster.minCompatibilityVersion";
    } else {
      min_compat_origin.where = catalog.cluster.min_compatibility_origin;
    }
    min_compat_origin.text = catalog.cluster.min_compatibility_version;
  }

  // NewEffectiveVersion: emulation = binary major.minor, min-compat =
  // binary - 1 (not floored).
  const MajorMinorPair binary_mm = MM(binary);
  MajorMinorPair emulation = binary_mm;
  MajorMinorPair min_compat = Minus(binary_mm, 1);
  if (emulation_origin.text.empty()) {
    emulation_origin.defaulted = true;
    emulation_origin.where = "default: the binary version";
  } else {
    const absl::Status status =
        ParseFlagPair(emulation_origin.text, &emulation);
    if (!status.ok()) {
      return FlagError(emulation_origin, status.message(), binary,
                       "emulation versions", EmulationRange(era, binary));
    }
    // From 1.33 SetEmulationVersion also resets the min-compatibility
    // version; in 1.31 and 1.32 it stores the emulation version only, so
    // min-compatibility stays binary - 1.
    if (era == Era::kFloors) {
      min_compat =
          MaxPair(Minus(emulation, 1), MaxPair(Minus(binary_mm, 3), {1, 31}));
    }
  }
  if (min_compat_origin.text.empty()) {
    min_compat_origin.defaulted = true;
    min_compat_origin.where = emulation_origin.defaulted || era != Era::kFloors
                                  ? "default: the binary version - 1"
                                  : "default for the emulation version set";
  } else {
    const absl::Status status =
        ParseFlagPair(min_compat_origin.text, &min_compat);
    if (!status.ok()) {
      return FlagError(
          min_compat_origin, status.message(), binary,
          "min-compatibility versions",
          MinCompatibilityRange(era, binary, ToVersion(emulation)));
    }
  }

  // Validate (and ValidateKubeEffectiveVersion in 1.31): first on plain
  // numbers, then, only when something is out of range, again with
  // Kubernetes' wording.
  if (WithinBounds(era, binary_mm, emulation, min_compat)) {
    // The parsed binary is moved, not copied (a Version is an inlined vector
    // and two strings): the request path of every call naming a binary.
    return absl::StatusOr<EffectiveVersions>(
        absl::in_place,
        EffectiveVersions{
            binary_ptr == &parsed_binary ? std::move(parsed_binary) : binary,
            ToVersion(emulation), ToVersion(min_compat)});
  }
  const Version emulation_version = ToVersion(emulation);
  const Version min_compat_version = ToVersion(min_compat);
  const std::string emulation_error =
      CheckEmulation(era, binary, emulation_version);
  std::string message;
  if (!emulation_error.empty()) {
    absl::StrAppend(&message, Describe(emulation_origin, emulation_version),
                    ": ", emulation_error, "; kube-apiserver ",
                    binary.MajorMinorString(), " accepts emulation versions ",
                    RangeText(EmulationRange(era, binary)));
  }
  // A defaulted min-compatibility version follows the emulation version, so
  // it is only worth reporting on its own or when it was given.
  if (emulation_error.empty() || !min_compat_origin.defaulted) {
    const std::string min_compat_error = CheckMinCompatibility(
        era, binary, emulation_version, min_compat_version);
    if (!min_compat_error.empty()) {
      if (!message.empty()) absl::StrAppend(&message, "; ");
      absl::StrAppend(
          &message, Describe(min_compat_origin, min_compat_version), ": ",
          min_compat_error, "; at emulation version ",
          emulation_version.MajorMinorString(), " kube-apiserver ",
          binary.MajorMinorString(), " accepts min-compatibility versions ",
          RangeText(MinCompatibilityRange(era, binary, emulation_version)));
    }
  }
  // WithinBounds and the Check functions apply the same rules.
  if (message.empty()) {
    return absl::InternalError(absl::StrFormat(
        "effective versions %s/%s/%s: range checks disagree", binary.ToString(),
        emulation_version.ToString(), min_compat_version.ToString()));
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace

absl::StatusOr<EffectiveVersions> ResolveEffectiveVersions(
    const Catalog& catalog, const VersionQuery& query) {
  // The common case, built in place: no version given anywhere, so the
  // catalog's binary with NewEffectiveVersion's defaults, which are within
  // range in every release line.
  if (query.binary_version.empty() && query.emulation_version.empty() &&
      query.min_compatibility_version.empty() &&
      catalog.cluster.emulation_version.empty() &&
      catalog.cluster.min_compatibility_version.empty()) {
    const Version& binary = catalog.cluster.binary.has_value()
                                ? *catalog.cluster.binary
                                : catalog.binary_version;
    return absl::StatusOr<EffectiveVersions>(
        absl::in_place, EffectiveVersions{binary, binary.ToMajorMinor(),
                                          binary.SubtractMinor(1)});
  }
  return ResolveGiven(catalog, query);
}

}  // namespace compatd::engine
