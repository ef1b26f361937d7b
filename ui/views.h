#pragma once

// The status page's views, rendered on the server from one catalog snapshot
// through the same handlers the RPCs use (api/handlers.h): GetCatalog for the
// overview, ListClients and CheckSkew for the client matrix, ListFeatures and
// the catalog's versioned specs for the feature gates, ListAPIVersions for
// the APIs, PlanUpgrade for the upgrade plan; the same at the catalog's
// upgrade target (cluster.upgradeTarget) when it has one. Every string from the
// catalog or a client is escaped (ui/html.h). Pure functions of their inputs:
// no clock, no I/O.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/handlers.h"
#include "runtime/capi_verdicts.h"
#include "runtime/serving_snapshot.h"

namespace compatd::ui {

struct PageContext {
  const runtime::ServingSnapshot* snapshot = nullptr;  // never null
  const api::PolicyHandlers* handlers = nullptr;       // never null
  absl::Time now;                                      // "3m ago", uptime
  absl::Time started;  // the process's start, for the uptime
  // The last Cluster API hook verdict per cluster (may be null: no section).
  const runtime::CapiVerdicts* capi_verdicts = nullptr;
};

// The feature gate table's filters (the form's query parameters q,
// component, stage); empty fields do not filter.
struct FeatureFilter {
  std::string name;       // case-insensitive substring of the gate's name
  std::string component;  // exact
  std::string stage;      // "ALPHA", "BETA", "GA", "DEPRECATED", "PRE-ALPHA"
};

// Parses "q=...&component=...&stage=..." (percent-encoded, '+' as space);
// unknown parameters are ignored (the form's own), malformed escapes kept as
// they are.
FeatureFilter ParseFeatureFilter(absl::string_view query);

// The views. Errors are the handlers' (a cluster section the engine refuses
// cannot happen for a loaded catalog; they are passed on all the same).
absl::StatusOr<std::string> RenderOverview(const PageContext& context);
absl::StatusOr<std::string> RenderClients(const PageContext& context);
absl::StatusOr<std::string> RenderFeatures(const PageContext& context,
                                           const FeatureFilter& filter);
// One gate's page (the permalink): NOT_FOUND for a gate the catalog lacks.
absl::StatusOr<std::string> RenderFeature(const PageContext& context,
                                          absl::string_view name);
absl::StatusOr<std::string> RenderApis(const PageContext& context);
// ListApiUsage: the calls at risk kube-apiserver's audit events showed, per
// client and API (a note on how to send them when there are none).
absl::StatusOr<std::string> RenderApiUse(const PageContext& context);
// The PlanUpgrade answer from the cluster section to its upgrade target,
// section by section (a note when the catalog has no target).
// The plan to `to` (the page's ?to=, a kube-apiserver version such as
// "1.37") or, when empty, to the cluster's upgrade target; with neither, the
// form that asks for one.
absl::StatusOr<std::string> RenderPlan(const PageContext& context,
                                       absl::string_view to);
// A page for an error (404 and the like), with the same chrome.
std::string RenderError(const PageContext* context, absl::string_view title,
                        absl::string_view message);

// {"generation":N,"digest":"sha256:..."}: what the page polls to reload
// itself when the catalog changes.
std::string StatusDocument(const runtime::ServingSnapshot& snapshot);

// "12s", "3m 12s", "2h 5m", "4d 3h".
std::string HumanDuration(absl::Duration duration);

}  // namespace compatd::ui
