#pragma once

// The outcome of one attempt to reload the catalog: the one enum for the
// reloader, the pipeline, the metrics (compatd_catalog_reloads_total{result})
// and WatchCatalog's feed.

#include "absl/strings/string_view.h"

namespace compatd::runtime {

enum class ReloadResult {
  kLoaded,     // a new catalog was published
  kUnchanged,  // the source holds the catalog in force
  kRejected,   // unreadable or invalid; the previous catalog keeps serving
};
inline constexpr int kReloadResultCount = 3;

// "loaded", "unchanged", "rejected" (the metric's label values).
absl::string_view ReloadResultName(ReloadResult result);

}  // namespace compatd::runtime
