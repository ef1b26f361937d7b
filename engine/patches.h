#pragma once

// Patch releases inside a release line: a catalog describes one patch of its
// line (its binaryVersion) and records, in patchChanges, how earlier patches
// had some gates otherwise (catalog/README.md, "Patch changes"). A request
// that names a patch (versions.binaryVersion "1.35.2") is answered from that
// patch's gates; one that names none ("1.35", or nothing) from the catalog's
// own patch. docs/catalog.md#patch-releases.

#include <string>

#include "absl/strings/string_view.h"
#include "engine/catalog.h"
#include "engine/version.h"

namespace compatd::engine {

// The gate as kube-apiserver `binary` registers it: `feature` itself, its form
// in an earlier patch (catalog.patch_features), or null when that patch did
// not register it. `binary` without a patch component, or of another line,
// is the catalog's own patch. Allocates nothing.
const Feature* FeatureAtPatch(
    const Catalog& catalog ABSL_ATTRIBUTE_LIFETIME_BOUND,
    const Feature& feature ABSL_ATTRIBUTE_LIFETIME_BOUND,
    const Version& binary);

// Whether `binary` names a patch of the catalog's line the catalog vouches for:
// its own, or any up to patches_known_through when it records the line's
// changes in full.
bool KnowsPatch(const Catalog& catalog, const Version& binary);

// The release whose facts answer a request at `binary` (an answer's
// catalogRelease): the patch asked for when the catalog knows it; the newest
// patch the catalog knows when the request names a newer one; otherwise the
// catalog's own binaryVersion.
std::string AnsweredRelease(const Catalog& catalog, const Version& binary);

// When a request names a patch newer than every patch the catalog knows, one
// clause for the reason ("kube-apiserver 1.35.9 is newer than the newest patch
// this catalog knows (1.35.6): answered from 1.35.6's facts"); else empty.
std::string NewerPatchNote(const Catalog& catalog, const Version& binary);

}  // namespace compatd::engine
