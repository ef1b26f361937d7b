#pragma once

// Kubernetes version strings, exactly as kubernetes/apimachinery
// pkg/util/version/version.go (v0.36.0) parses, compares and renders them
// (docs/kubernetes-rules.md#version-strings).
//
//   Parse("v1.31.2")        -> 1.31.2, semantic
//   Parse("1.31")           -> 1.31, generic (semantic needs 3 numbers)
//   Parse("1.33.0-alpha.1") -> 1.33.0-alpha.1, semantic, pre-release alpha.1
//   Parse("1.2a.3")         -> 1.2, generic (the rest is ignored)
//
// Comparison: numeric components first, a missing one counting as zero (so
// 1.31 equals 1.31.0); the pre-release counts only when both sides were
// parsed as semantic versions.

#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace compatd::engine {

class Version final {
 public:
  // 0.0 (generic).
  Version() : components_{0, 0} {}

  // A generic major.minor version.
  static Version MajorMinor(uint64_t major, uint64_t minor);
  // The semantic version major.minor.patch, as ParseSemantic("1.35.2") gives
  // it (no pre-release, no build metadata).
  static Version Semantic(uint64_t major, uint64_t minor, uint64_t patch);

  // Exactly three numeric components without leading zeros, then an optional
  // "-pre.release" and "+build.meta". A leading "v" and surrounding white space
  // are allowed.
  static absl::StatusOr<Version> ParseSemantic(absl::string_view text);
  // Two or more numeric components (only the first may not have a leading
  // zero); anything after the numbers is ignored.
  static absl::StatusOr<Version> ParseGeneric(absl::string_view text);
  // ParseSemantic, else ParseGeneric (apimachinery's version.Parse).
  static absl::StatusOr<Version> Parse(absl::string_view text);

  // The major and minor version Parse() would return for `text`, without
  // allocating (the hot paths of CheckSkew and client capture). Parse() accepts
  // exactly what the generic rule accepts (every semantic version is also a
  // generic one with the same numbers), so this checks the generic rule. False
  // where Parse() fails: ask Parse() for the message.
  static bool ParseMajorMinorNoAlloc(absl::string_view text, uint64_t* major,
                                     uint64_t* minor);

  uint64_t major() const { return components_[0]; }
  uint64_t minor() const { return components_[1]; }
  // 0 when there is no third component.
  uint64_t patch() const { return components_.size() > 2 ? components_[2] : 0; }
  const absl::InlinedVector<uint64_t, 3>& components() const {
    return components_;
  }
  bool semver() const { return semver_; }
  const std::string& pre_release() const { return pre_release_; }
  const std::string& build_metadata() const { return build_metadata_; }

  // -1, 0 or 1 (apimachinery's compareInternal).
  int Compare(const Version& other) const;
  // Compares major.minor only.
  int CompareMajorMinor(const Version& other) const;

  // major.(minor+offset), clamped at minor 0; generic, no patch (OffsetMinor).
  Version OffsetMinor(int64_t offset) const;
  Version SubtractMinor(uint64_t diff) const {
    return OffsetMinor(-static_cast<int64_t>(diff));
  }
  Version AddMinor(uint64_t diff) const {
    return OffsetMinor(static_cast<int64_t>(diff));
  }
  // major.minor.patch, keeping the semver flag, pre-release and build metadata.
  Version WithPatch(uint64_t patch) const;
  // Generic major.minor of this version.
  Version ToMajorMinor() const { return MajorMinor(major(), minor()); }

  // "1.31.2-alpha.1+build" (no "v").
  std::string ToString() const;
  // "1.31".
  std::string MajorMinorString() const;

  friend bool operator==(const Version& a, const Version& b) {
    return a.Compare(b) == 0;
  }
  friend bool operator!=(const Version& a, const Version& b) {
    return a.Compare(b) != 0;
  }
  friend bool operator<(const Version& a, const Version& b) {
    return a.Compare(b) < 0;
  }
  friend bool operator<=(const Version& a, const Version& b) {
    return a.Compare(b) <= 0;
  }
  friend bool operator>(const Version& a, const Version& b) {
    return a.Compare(b) > 0;
  }
  friend bool operator>=(const Version& a, const Version& b) {
    return a.Compare(b) >= 0;
  }

 private:
  static absl::StatusOr<Version> ParseImpl(absl::string_view text, bool semver);

  absl::InlinedVector<uint64_t, 3> components_;
  bool semver_ = false;
  std::string pre_release_;
  std::string build_metadata_;
};

}  // namespace compatd::engine
