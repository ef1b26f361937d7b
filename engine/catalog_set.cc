#include "engine/catalog_set.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace compatd::engine {
namespace {

std::string LineName(const Catalog& catalog) {
  return catalog.binary_version.ToMajorMinor().ToString();
}

}  // namespace

absl::StatusOr<std::shared_ptr<const CatalogSet>> CatalogSet::Make(
    std::vector<std::shared_ptr<const Catalog>> lines,
    std::optional<Version> default_line) {
  if (lines.empty()) {
    return absl::InvalidArgumentError(
        "a catalog set needs at least one catalog");
  }
  for (const auto& line : lines) {
    if (line == nullptr) {
      return absl::InvalidArgumentError(
          "a catalog set cannot hold a null catalog");
    }
  }
  std::stable_sort(
      lines.begin(), lines.end(), [](const auto& a, const auto& b) {
        return a->binary_version.CompareMajorMinor(b->binary_version) < 0;
      });
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i - 1]->binary_version.CompareMajorMinor(
            lines[i]->binary_version) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "two catalogs describe kube-apiserver ", LineName(*lines[i]), ": ",
          lines[i - 1]->source, " (", lines[i - 1]->binary_version.ToString(),
          ") and ", lines[i]->source, " (", lines[i]->binary_version.ToString(),
          "); serve one catalog per release line"));
    }
  }
  std::shared_ptr<CatalogSet> set(new CatalogSet());
  set->line_names_ = absl::StrJoin(
      lines, ", ",
      [](std::string* out, const std::shared_ptr<const Catalog>& c) {
        out->append(LineName(*c));
      });
  // The newest exact line: a provisional one (pre-release sources) answers
  // only requests that name it, until its data is exact.
  set->default_index_ = lines.size() - 1;
  for (size_t i = lines.size(); i-- > 0;) {
    if (lines[i]->exactness == Exactness::kExact) {
      set->default_index_ = i;
      break;
    }
  }
  if (default_line.has_value()) {
    auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& c) {
      return c->binary_version.CompareMajorMinor(*default_line) == 0;
    });
    if (it == lines.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "default binary version ", default_line->ToMajorMinor().ToString(),
          ": no catalog describes that release line; the lines are ",
          set->line_names_));
    }
    set->default_index_ = static_cast<size_t>(it - lines.begin());
  }
  set->lines_ = std::move(lines);
  return std::shared_ptr<const CatalogSet>(std::move(set));
}

std::shared_ptr<const CatalogSet> CatalogSet::Single(
    std::shared_ptr<const Catalog> catalog) {
  std::shared_ptr<CatalogSet> set(new CatalogSet());
  set->line_names_ = LineName(*catalog);
  set->lines_.push_back(std::move(catalog));
  return set;
}

const Catalog* CatalogSet::Find(const Version& binary) const {
  for (const auto& line : lines_) {
    if (line->binary_version.CompareMajorMinor(binary) == 0) return line.get();
  }
  return nullptr;
}

absl::StatusOr<const Catalog*> CatalogSet::Resolve(
    absl::string_view binary_version, absl::string_view field) const {
  absl::StatusOr<size_t> index = ResolveIndex(binary_version, field);
  if (!index.ok()) return index.status();
  return lines_[*index].get();
}

namespace {

bool IsIdentChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || c == '.' || c == '-';
}

// A kube-apiserver binary version as releases spell it: "[v]MAJOR.MINOR" or
// "[v]MAJOR.MINOR.PATCH", the patch optionally followed by "-prerelease" and
// "+build" (semver's identifiers: "1.37.0-rc.1", "v1.30.5-gke.1014001").
// Leading and trailing blanks are allowed. Allocates nothing.
bool WellFormedBinaryVersion(absl::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  if (!text.empty() && text.front() == 'v') text.remove_prefix(1);
  size_t pos = 0;
  int numbers = 0;
  while (numbers < 3) {
    const size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start) return false;
    ++numbers;
    if (pos < text.size() && text[pos] == '.' && numbers < 3) {
      ++pos;
      continue;
    }
    break;
  }
  if (numbers < 2) return false;
  if (pos == text.size()) return true;
  if (numbers != 3) return false;
  for (char marker : {'-', '+'}) {
    if (pos < text.size() && text[pos] == marker) {
      const size_t start = ++pos;
      while (pos < text.size() && IsIdentChar(text[pos])) ++pos;
      if (pos == start) return false;
    }
  }
  return pos == text.size();
}

// "1.36", "v1.35.2": [v]MAJOR.MINOR[.PATCH] of a few digits each, what nearly
// every caller sends, read in one pass into the line's numbers. Anything else
// (blanks, a pre-release or build, a zero-prefixed major, long numbers)
// returns false and takes the checked path, which decides it the same way.
bool PlainMajorMinor(absl::string_view text, uint64_t* major, uint64_t* minor) {
  size_t i = !text.empty() && text.front() == 'v' ? 1 : 0;
  uint64_t parts[3] = {0, 0, 0};
  int count = 0;
  while (true) {
    const size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (i - start >= 9) return false;
      parts[count] = parts[count] * 10 + static_cast<uint64_t>(text[i] - '0');
      ++i;
    }
    if (i == start) return false;
    if (count == 0 && i - start > 1 && text[start] == '0') return false;
    ++count;
    if (i == text.size()) break;
    if (text[i] != '.' || count == 3) return false;
    ++i;
  }
  if (count < 2) return false;
  *major = parts[0];
  *minor = parts[1];
  return true;
}

}  // namespace

absl::StatusOr<size_t> CatalogSet::ResolveIndex(
    absl::string_view binary_version, absl::string_view field) const {
  if (binary_version.empty()) return default_index_;
  uint64_t major = 0;
  uint64_t minor = 0;
  const bool plain = PlainMajorMinor(binary_version, &major, &minor);
  if (!plain && !WellFormedBinaryVersion(binary_version)) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " \"", binary_version,
        "\" is not a kube-apiserver version: accepted forms are MAJOR.MINOR "
        "or MAJOR.MINOR.PATCH with an optional \"v\", pre-release and build "
        "(\"1.35\", \"1.35.2\", \"v1.35.2\", \"1.37.0-rc.1\"); the release "
        "lines "
        "compatd has are ",
        line_names_));
  }
  if (plain ||
      Version::ParseMajorMinorNoAlloc(binary_version, &major, &minor)) {
    for (size_t i = 0; i < lines_.size(); ++i) {
      const Version& v = lines_[i]->binary_version;
      if (v.major() == major && v.minor() == minor) return i;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        field, " \"", binary_version,
        "\": no catalog describes kube-apiserver ", major, ".", minor,
        ", so compatd cannot answer for that binary; the release lines it "
        "has are ",
        line_names_));
  }
  absl::StatusOr<Version> version = Version::Parse(binary_version);
  return absl::InvalidArgumentError(
      absl::StrCat(field, " \"", binary_version, "\" is not a version (",
                   version.ok() ? "no major.minor" : version.status().message(),
                   "); give a kube-apiserver binary version such as \"",
                   default_catalog().binary_version.ToMajorMinor().ToString(),
                   "\" or \"v", default_catalog().binary_version.ToString(),
                   "\", one of the lines ", line_names_));
}

}  // namespace compatd::engine
