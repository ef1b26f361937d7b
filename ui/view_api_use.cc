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

absl::string_view ApiUseVerdictText(v1::ApiUseVerdict verdict) {
  switch (verdict) {
    case v1::API_USE_VERDICT_NOT_SERVED:
      return "not served now";
    case v1::API_USE_VERDICT_REMOVED_AT_TARGET:
      return "removed at the target";
    case v1::API_USE_VERDICT_NOT_SERVED_AT_TARGET:
      return "not served at the target";
    case v1::API_USE_VERDICT_NOT_SERVED_AT_ROLLBACK:
      return "not served at the rollback floor";
    case v1::API_USE_VERDICT_DEPRECATED:
      return "deprecated";
    case v1::API_USE_VERDICT_CATALOG_MISMATCH:
      return "catalog mismatch (served by the cluster)";
    default:
      return "unknown";
  }
}

// The badge colour: what fails (now or at the target) is "too old"'s red,
// the rest the warning colour.
absl::string_view ApiUseVerdictClass(v1::ApiUseVerdict verdict) {
  switch (verdict) {
    case v1::API_USE_VERDICT_NOT_SERVED:
    case v1::API_USE_VERDICT_REMOVED_AT_TARGET:
    case v1::API_USE_VERDICT_NOT_SERVED_AT_TARGET:
      return "too-old";
    default:
      return "unknown";
  }
}

}  // namespace

absl::StatusOr<std::string> RenderApiUse(const PageContext& context) {
  v1::ListApiUsageResponse usage;
  if (absl::Status s = context.handlers->ListApiUsage(
          *context.snapshot, v1::ListApiUsageRequest(), &usage);
      !s.ok()) {
    return s;
  }
  std::string out;
  out.reserve(16 << 10);
  AppendHead(&out, "API use", View::kApiUse, &context);
  out.append("<h1>API use</h1><p>");
  AppendEscaped(&out, usage.reason());
  out.append(".</p>");
  if (usage.usage().empty()) {
    out.append(
        "<p class=\"empty\">No call to an API at risk has been seen (within "
        "--api-usage-ttl). kube-apiserver sends its audit events here when "
        "started with --audit-webhook-config-file naming "
        "<code>/audit/v1/events</code> (docs/cluster-view.md).</p>");
    AppendFoot(&out, &context);
    return out;
  }
  out.append(
      "<div class=\"scroll\"><table class=\"list stack\" "
      "id=\"api-use\"><thead><tr>"
      "<th scope=\"col\">verdict</th><th scope=\"col\">API</th>"
      "<th scope=\"col\">client</th><th scope=\"col\">user</th>"
      "<th scope=\"col\" class=\"num\">requests</th>"
      "<th scope=\"col\" class=\"num\">denied</th>"
      "<th scope=\"col\">first seen</th><th scope=\"col\">last seen</th>"
      "<th scope=\"col\">why</th></tr></thead><tbody>");
  for (const v1::ApiUsage& row : usage.usage()) {
    absl::StrAppend(
        &out, "<tr data-verdict=\"", v1::ApiUseVerdict_Name(row.verdict()),
        "\"><td><span class=\"badge v-", ApiUseVerdictClass(row.verdict()),
        "\">", ApiUseVerdictText(row.verdict()),
        "</span></td><td data-label=\"API\"><code>");
    AppendEscaped(&out, engine::GroupVersionString(row.group(), row.version()));
    out.append("</code> ");
    AppendEscaped(&out, row.resource());
    if (!row.subresource().empty()) {
      out.append("/");
      AppendEscaped(&out, row.subresource());
    }
    out.append("</td><td class=\"component\" data-label=\"client\">");
    AppendEscaped(&out, row.component());
    out.append(" ");
    AppendEscaped(&out, row.client_version());
    out.append("<br><small>");
    AppendEscaped(&out, row.user_agent());
    out.append("</small></td><td data-label=\"user\">");
    AppendEscaped(&out, row.user());
    absl::StrAppend(&out, "</td><td class=\"num\" data-label=\"requests\">",
                    row.requests(),
                    "</td><td class=\"num\" data-label=\"denied\">",
                    row.denied(), "</td><td data-label=\"first seen\">");
    AppendAgo(&out, context.now, ToTime(row.first_seen()));
    out.append("</td><td data-label=\"last seen\">");
    AppendAgo(&out, context.now, ToTime(row.last_seen()));
    out.append("</td><td data-label=\"why\">");
    AppendEscaped(&out, row.message());
    out.append("</td></tr>");
  }
  out.append("</tbody></table></div>");
  AppendFoot(&out, &context);
  return out;
}

}  // namespace compatd::ui
