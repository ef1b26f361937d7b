#include "engine/catalog.h"

namespace compatd::engine {

absl::string_view PreReleaseName(PreRelease stage) {
  switch (stage) {
    case PreRelease::kPreAlpha:
      return "PRE-ALPHA";
    case PreRelease::kAlpha:
      return "ALPHA";
    case PreRelease::kBeta:
      return "BETA";
    case PreRelease::kGA:
      return "GA";
    case PreRelease::kDeprecated:
      return "DEPRECATED";
  }
  return "UNKNOWN";
}

}  // namespace compatd::engine
