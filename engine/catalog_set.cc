#include "engine/catalog_set.h"

#include <algorithm>
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
  set->default_index_ = lines.size() - 1;
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

absl::StatusOr<size_t> CatalogSet::ResolveIndex(
    absl::string_view binary_version, absl::string_view field) const {
  if (binary_version.empty()) return default_index_;
  uint64_t major = 0;
  uint64_t minor = 0;
  if (Version::ParseMajorMinorNoAlloc(binary_version, &major, &minor)) {
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
