#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/api_names.h"
#include "engine/catalog.h"
#include "engine/skew.h"
#include "engine/version.h"
#include "ui/html.h"
#include "ui/timeline.h"
#include "ui/view_parts.h"
#include "ui/views.h"

namespace compatd::ui {

namespace {

// The four answers the overview summarizes.
struct OverviewData {
  v1::GetCatalogResponse catalog;
  v1::ListClientsResponse clients;
  v1::ListFeaturesResponse features;
  v1::ListAPIVersionsResponse apis;
};

absl::Status FetchOverview(const PageContext& context, OverviewData* data) {
  const runtime::ServingSnapshot& snapshot = *context.snapshot;
  if (absl::Status s = context.handlers->GetCatalog(
          snapshot, v1::GetCatalogRequest(), &data->catalog);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = context.handlers->ListClients(
          snapshot, v1::ListClientsRequest(), &data->clients);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = context.handlers->ListFeatures(
          snapshot, v1::ListFeaturesRequest(), &data->features);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = context.handlers->ListAPIVersions(
          snapshot, v1::ListAPIVersionsRequest(), &data->apis);
      !s.ok()) {
    return s;
  }
  return absl::OkStatus();
}

absl::Status AppendVersionsCard(std::string* out, const PageContext& context,
                                const v1::GetCatalogResponse& catalog) {
  out->append(
      "<section class=\"card\" id=\"versions\"><h2>Cluster versions</h2>");
  // A profile's binary with its patch ("1.35.2"), as `kubectl version`
  // prints the cluster's; the answers' versions carry the line ("1.35").
  v1::EffectiveVersion versions = catalog.versions();
  if (!catalog.cluster_binary_version().empty()) {
    versions.set_binary_version(catalog.cluster_binary_version());
  }
  AppendVersionsList(out, versions);
  absl::StatusOr<std::optional<Target>> target = UpgradeTargetOf(context);
  if (!target.ok()) return target.status();
  out->append("<dt>Upgrade target</dt><dd id=\"target\">");
  if (target->has_value()) {
    AppendEmulationAndMin(out, (*target)->effective);
    out->append(" (<a href=\"/ui/plan\">the plan</a>)");
  } else {
    out->append(
        "none (<a href=\"/ui/plan\">choose one</a>, or give "
        "<code>--upgrade-target</code>)");
  }
  out->append("</dd><dt>Described by</dt><dd id=\"cluster-source\">");
  if (catalog.cluster_source().empty()) {
    out->append(
        "no <code>--cluster</code> profile: the catalog's cluster section "
        "or Kubernetes' defaults");
  } else {
    out->append("<code>");
    AppendEscaped(out, catalog.cluster_source());
    out->append("</code>, kube-apiserver ");
    AppendEscaped(out, catalog.cluster_binary_version());
  }
  out->append("</dd></dl></section>");
  return absl::OkStatus();
}

// "EXACT", or "PROVISIONAL" with its reason on hover and for screen readers.
void AppendExactness(std::string* out, absl::string_view exactness,
                     absl::string_view reason) {
  if (exactness != "PROVISIONAL") {
    out->append("<span class=\"ok\">EXACT</span>");
    return;
  }
  out->append("<span class=\"warn\" title=\"");
  AppendEscaped(out, reason);
  out->append("\">PROVISIONAL</span>");
}

// Every release line served; the picker in the header shows the pages as
// another line's binary would answer.
void AppendLinesTable(std::string* out, const v1::GetCatalogResponse& catalog) {
  if (catalog.lines_size() <= 1) return;
  out->append(
      "<h3>Release lines</h3><table class=\"list\" id=\"lines\"><thead><tr>"
      "<th scope=\"col\">binary</th><th scope=\"col\">source</th>"
      "<th scope=\"col\">data</th><th scope=\"col\">gates</th>"
      "<th scope=\"col\">last reload</th></tr></thead><tbody>");
  for (const v1::CatalogLine& line : catalog.lines()) {
    out->append("<tr><td><a href=\"/ui/?binary=");
    AppendEscaped(out, line.line());
    out->append("\">");
    AppendEscaped(out, line.release());
    out->append("</a>");
    if (line.default_line()) out->append(" (shown)");
    out->append("</td><td>");
    // "embedded:kubernetes-1.33" may break after its scheme, not mid-word.
    for (absl::string_view part : absl::StrSplit(line.source(), ':')) {
      if (part.data() != line.source().data()) out->append(":<wbr>");
      AppendEscaped(out, part);
    }
    out->append("</td><td>");
    AppendExactness(out, line.exactness(), line.exactness_reason());
    absl::StrAppend(out, "</td><td>", line.counts().features(), "</td><td>");
    if (line.last_error().empty()) {
      out->append("<span class=\"ok\">no error</span>");
    } else {
      out->append("<span class=\"bad\">rejected: ");
      AppendEscaped(out, line.last_error());
      out->append("</span>");
    }
    out->append("</td></tr>");
  }
  out->append("</tbody></table>");
}

void AppendCatalogCard(std::string* out, const PageContext& context,
                       const v1::GetCatalogResponse& catalog) {
  out->append("<section class=\"card\" id=\"catalog\"><h2>Catalog</h2>");
  if (!catalog.last_error().empty()) {
    out->append(
        "<div class=\"error\" id=\"last-error\"><strong>The last reload was "
        "rejected");
    if (catalog.has_last_error_at()) {
      out->append(" ");
      AppendAgo(out, context.now, ToTime(catalog.last_error_at()));
    }
    out->append("</strong>; this catalog keeps serving.<pre>");
    AppendEscaped(out, catalog.last_error());
    out->append("</pre></div>");
  }
  absl::StrAppend(
      out, "<dl class=\"kv\"><dt>Generation</dt><dd id=\"generation\">",
      catalog.generation(), "</dd><dt>Digest</dt><dd><code class=\"digest\">");
  AppendEscaped(out, catalog.digest());
  out->append("</code></dd><dt>Source</dt><dd id=\"source\">");
  AppendEscaped(out, catalog.source());
  out->append("</dd><dt>Data</dt><dd id=\"exactness\">");
  AppendExactness(out, catalog.catalog_exactness(),
                  catalog.catalog_exactness_reason());
  if (catalog.catalog_exactness() == "PROVISIONAL") {
    out->append(": ");
    AppendEscaped(out, catalog.catalog_exactness_reason());
  }
  out->append("</dd><dt>Loaded</dt><dd>");
  AppendEscaped(out, WallTime(ToTime(catalog.loaded_at())));
  out->append(" (");
  AppendAgo(out, context.now, ToTime(catalog.loaded_at()));
  const v1::CatalogCounts& n = catalog.counts();
  absl::StrAppend(out, ")</dd><dt>Holds</dt><dd>", n.features(),
                  " feature gates, ", n.group_versions(), " group-versions (",
                  n.resources(), " resources), ", n.storage_overrides(),
                  " storage overrides, ", n.skew_rules(), " skew rules, ",
                  n.crds(), " CRD histories</dd>", "<dt>Last reload</dt><dd>",
                  catalog.last_error().empty()
                      ? "<span class=\"ok\">no error</span>"
                      : "<span class=\"bad\">rejected (above)</span>",
                  "</dd></dl>");
  AppendLinesTable(out, catalog);
  out->append("</section>");
}

void AppendClientsCard(std::string* out, const PageContext& context,
                       const v1::ListClientsResponse& clients) {
  // Clients: how many, how many out of allowance.
  uint64_t out_of_allowance = 0, unknown = 0, requests = 0;
  for (const v1::ObservedClient& client : clients.clients()) {
    requests += client.requests();
    if (client.verdict() == v1::SKEW_VERDICT_TOO_OLD ||
        client.verdict() == v1::SKEW_VERDICT_TOO_NEW) {
      ++out_of_allowance;
    } else if (client.verdict() != v1::SKEW_VERDICT_ALLOWED) {
      ++unknown;
    }
  }
  absl::StrAppend(out,
                  "<section class=\"card\" id=\"clients-summary\"><h2><a "
                  "href=\"/ui/clients\">Clients</a></h2><p class=\"big ",
                  out_of_allowance > 0 ? "bad" : "ok", "\">", out_of_allowance,
                  " out of allowance</p><p>", clients.clients_size(),
                  " component/version pairs seen (", requests, " requests), ",
                  unknown, " unidentified or without a skew rule.</p>");
  AppendClientScope(out, context, clients.view());
  if (out_of_allowance > 0) {
    out->append("<ul class=\"compact\">");
    int listed = 0;
    for (const v1::ObservedClient& client : clients.clients()) {
      if (client.verdict() != v1::SKEW_VERDICT_TOO_OLD &&
          client.verdict() != v1::SKEW_VERDICT_TOO_NEW) {
        continue;
      }
      if (++listed > 8) {
        out->append("<li><a href=\"/ui/clients\">and more</a></li>");
        break;
      }
      out->append("<li>");
      AppendEscaped(out, client.component());
      out->append(" ");
      AppendEscaped(out, client.version());
      absl::StrAppend(out, ": <span class=\"badge v-",
                      VerdictClass(client.verdict()), "\">",
                      VerdictText(client.verdict()), "</span></li>");
    }
    out->append("</ul>");
  }
  out->append("</section>");
}

void AppendFeaturesCard(std::string* out,
                        const v1::ListFeaturesResponse& features) {
  // Feature gates by stage at the emulation version.
  std::map<engine::PreRelease, uint64_t> by_stage;
  uint64_t enabled = 0;
  for (const v1::FeatureDecision& d : features.features()) {
    ++by_stage[ProtoStageToEngine(d.stage())];
    if (d.enabled()) ++enabled;
  }
  out->append(
      "<section class=\"card\" id=\"features-summary\"><h2><a "
      "href=\"/ui/features\">Feature gates</a> at ");
  AppendEscaped(out, features.versions().emulation_version());
  absl::StrAppend(out, "</h2><p class=\"big\">", enabled, " of ",
                  features.features_size(), " on</p>");
  std::vector<std::pair<std::string, uint64_t>> parts;
  std::string label = "gates by stage:";
  for (const auto& [stage, count] : by_stage) {
    parts.emplace_back(absl::StrCat("st-", StageClass(stage)), count);
    absl::StrAppend(&label, " ", StageTitle(stage), " ", count);
  }
  AppendStackedBar(out, parts, label);
  out->append("<ul class=\"compact stages\">");
  for (const auto& [stage, count] : by_stage) {
    absl::StrAppend(out,
                    "<li><a href=\"/ui/features?stage=", PreReleaseName(stage),
                    "\"><span class=\"sw st-", StageClass(stage), "\"></span>",
                    StageTitle(stage), "</a>: ", count, " (",
                    Percent(count, features.features_size()), "%)</li>");
  }
  out->append("</ul></section>");
}

void AppendApisAndProcessCards(std::string* out, const PageContext& context,
                               const v1::ListAPIVersionsResponse& apis) {
  uint64_t resources = 0;
  for (const v1::APIGroupVersion& gv : apis.group_versions()) {
    resources += gv.resources_size();
  }
  absl::StrAppend(out,
                  "<section class=\"card\" id=\"apis-summary\"><h2><a "
                  "href=\"/ui/apis\">APIs</a></h2><p class=\"big\">",
                  apis.group_versions_size(), " group-versions served</p><p>",
                  resources, " resources, at emulation version ");
  AppendEscaped(out, apis.versions().emulation_version());
  out->append(".</p></section>");

  absl::StrAppend(out,
                  "<section class=\"card\" id=\"process\"><h2>Process</h2><dl "
                  "class=\"kv\"><dt>Uptime</dt><dd id=\"uptime\">",
                  HumanDuration(context.now - context.started),
                  "</dd><dt>Started</dt><dd>", WallTime(context.started),
                  "</dd></dl></section>");
}

// The last Cluster API hook verdict of each cluster (none: no section).
void AppendCapiSection(std::string* out, const PageContext& context) {
  if (context.capi_verdicts == nullptr) return;
  const std::vector<runtime::CapiVerdict> verdicts =
      context.capi_verdicts->List();
  if (verdicts.empty()) return;
  out->append(
      "<section id=\"cluster-api\"><h2>Cluster API</h2><p>The last hook "
      "verdict compatd gave each Cluster (docs/cluster-api.md).</p><table>"
      "<thead><tr><th>Cluster</th><th>Hook</th><th>Versions</th><th>Verdict"
      "</th><th>When</th><th>Message</th></tr></thead><tbody>");
  for (const runtime::CapiVerdict& v : verdicts) {
    out->append("<tr><td>");
    AppendEscaped(out, v.cluster);
    out->append("</td><td>");
    AppendEscaped(out, v.hook);
    out->append("</td><td>");
    AppendEscaped(out,
                  v.from.empty() ? v.to : absl::StrCat(v.from, " -> ", v.to));
    out->append("</td><td>");
    AppendEscaped(out, v.retry_after_seconds > 0
                           ? absl::StrCat(v.status, ", retry in ",
                                          v.retry_after_seconds, "s")
                           : v.status);
    absl::StrAppend(out, "</td><td>", HumanDuration(context.now - v.at),
                    " ago</td><td><pre>");
    AppendEscaped(out, v.message);
    out->append("</pre></td></tr>");
  }
  out->append("</tbody></table></section>");
}

}  // namespace

absl::StatusOr<std::string> RenderOverview(const PageContext& context) {
  OverviewData data;
  if (absl::Status s = FetchOverview(context, &data); !s.ok()) return s;
  std::string out;
  out.reserve(8 << 10);
  AppendHead(&out, "Overview", View::kOverview, &context);
  out.append("<h1>Overview</h1><div class=\"cards\">");
  if (absl::Status s = AppendVersionsCard(&out, context, data.catalog);
      !s.ok()) {
    return s;
  }
  AppendCatalogCard(&out, context, data.catalog);
  AppendClientsCard(&out, context, data.clients);
  AppendFeaturesCard(&out, data.features);
  AppendApisAndProcessCards(&out, context, data.apis);
  out.append("</div>");
  AppendCapiSection(&out, context);
  AppendFoot(&out, &context);
  return out;
}

}  // namespace compatd::ui
