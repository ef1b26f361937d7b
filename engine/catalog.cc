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

}  // namespace compatd::engine
