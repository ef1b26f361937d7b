#include "runtime/reload_result.h"

namespace compatd::runtime {

absl::string_view ReloadResultName(ReloadResult result) {
  switch (result) {
    case ReloadResult::kLoaded:
      return "loaded";
    case ReloadResult::kUnchanged:
      return "unchanged";
    case ReloadResult::kRejected:
      return "rejected";
  }
  return "unknown";
}

}  // namespace compatd::runtime
