#include "engine/patches.h"

#include "absl/strings/str_cat.h"

namespace compatd::engine {
namespace {

// `binary` names a patch of the catalog's line (three components, no
// pre-release: a pre-release is answered as the catalog's own patch), and the
// catalog names its own patch.
bool NamesPatchOfLine(const Catalog& catalog, const Version& binary) {
  return binary.components().size() >= 3 && binary.pre_release().empty() &&
         catalog.binary_version.components().size() >= 3 &&
         binary.CompareMajorMinor(catalog.binary_version) == 0;
}

// The newest patch the catalog vouches for.
uint64_t NewestKnownPatch(const Catalog& catalog) {
  uint64_t newest = catalog.binary_version.patch();
  if (catalog.patches_known_through.has_value() &&
      catalog.patches_known_through->patch() > newest) {
    newest = catalog.patches_known_through->patch();
  }
  return newest;
}

}  // namespace

const Feature* FeatureAtPatch(const Catalog& catalog, const Feature& feature,
                              const Version& binary) {
  if (feature.earlier_patches.empty() || !NamesPatchOfLine(catalog, binary)) {
    return &feature;
  }
  const uint64_t patch = binary.patch();
  for (const PatchVariant& variant : feature.earlier_patches) {
    if (patch < variant.since.patch()) {
      if (variant.before_index < 0) return nullptr;
      return &catalog.patch_features[static_cast<size_t>(variant.before_index)];
    }
  }
  return &feature;
}

bool KnowsPatch(const Catalog& catalog, const Version& binary) {
  if (!NamesPatchOfLine(catalog, binary)) return false;
  if (binary.patch() == catalog.binary_version.patch()) return true;
  return catalog.patches_known_through.has_value() &&
         binary.patch() <= NewestKnownPatch(catalog);
}

std::string AnsweredRelease(const Catalog& catalog, const Version& binary) {
  if (NamesPatchOfLine(catalog, binary)) {
    if (KnowsPatch(catalog, binary)) {
      return catalog.binary_version.WithPatch(binary.patch()).ToString();
    }
    if (binary.patch() > NewestKnownPatch(catalog)) {
      return catalog.binary_version.WithPatch(NewestKnownPatch(catalog))
          .ToString();
    }
  }
  return catalog.binary_version.ToString();
}

std::string NewerPatchNote(const Catalog& catalog, const Version& binary) {
  if (!NamesPatchOfLine(catalog, binary) ||
      binary.patch() <= NewestKnownPatch(catalog)) {
    return "";
  }
  const std::string newest =
      catalog.binary_version.WithPatch(NewestKnownPatch(catalog)).ToString();
  return absl::StrCat("kube-apiserver ", binary.ToString(),
                      " is newer than the newest patch this catalog knows (",
                      newest, "): answered from ", newest, "'s facts");
}

}  // namespace compatd::engine
