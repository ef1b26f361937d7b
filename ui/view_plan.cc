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

struct PlanSectionInfo {
  absl::string_view id;
  absl::string_view title;
  absl::string_view what;
};

void AppendPlanItems(
    std::string* out, const PlanSectionInfo& section,
    const google::protobuf::RepeatedPtrField<v1::UpgradeItem>& items) {
  absl::StrAppend(out, "<section class=\"plan-section\" id=\"plan-", section.id,
                  "\"><h2>", section.title, " <span class=\"count\">",
                  items.size(), "</span></h2><p class=\"note\">", section.what,
                  "</p>");
  if (items.empty()) {
    out->append("<p class=\"empty\">Nothing.</p></section>");
    return;
  }
  out->append(
      "<div class=\"scroll\"><table class=\"list stack plan\"><thead><tr>"
      "<th scope=\"col\">step</th><th scope=\"col\">subject</th>"
      "<th scope=\"col\">what happens</th><th scope=\"col\">what to do</th>"
      "</tr></thead><tbody>");
  for (const v1::UpgradeItem& item : items) {
    absl::StrAppend(out, "<tr", item.blocking() ? " class=\"blocking\"" : "",
                    " data-rule=\"");
    AppendEscaped(out, item.rule());
    absl::StrAppend(out, "\"><td data-label=\"step\">", item.step(), " (");
    AppendEscaped(out, item.release());
    out->append(")</td><th scope=\"row\">");
    AppendEscaped(out, item.subject());
    if (item.blocking())
      out->append(" <span class=\"badge v-too-old\">blocks</span>");
    out->append("<div class=\"note\">");
    AppendEscaped(out, item.rule());
    out->append("</div></th><td data-label=\"what happens\">");
    AppendEscaped(out, item.reason());
    out->append("</td><td data-label=\"what to do\">");
    AppendEscaped(out, item.action());
    out->append("</td></tr>");
  }
  out->append("</tbody></table></div></section>");
}

using PlanItems = google::protobuf::RepeatedPtrField<v1::UpgradeItem>;

// The plan's sections, in the page's order: the index and one table each.
struct PlanSection {
  PlanSectionInfo info;
  const PlanItems& (*items)(const v1::PlanUpgradeResponse& plan);
};

constexpr PlanSection kPlanSections[] = {
    {{"flags", "Flags",
      "Flags kube-apiserver would refuse to start with at a step."},
     [](const v1::PlanUpgradeResponse& p) -> const PlanItems& {
       return p.flags();
     }},
    {{"feature-gates", "Feature gates",
      "Gates whose enabled state, default or stage changes."},
     [](const v1::PlanUpgradeResponse& p) -> const PlanItems& {
       return p.feature_gates();
     }},
    {{"apis", "APIs",
      "Group-versions whose resources stop or start being served."},
     [](const v1::PlanUpgradeResponse& p) -> const PlanItems& {
       return p.apis();
     }},
    {{"storage", "Storage",
      "Storage version changes, and KEP-2339 disagreement while a step rolls "
      "out."},
     [](const v1::PlanUpgradeResponse& p) -> const PlanItems& {
       return p.storage();
     }},
    {{"rollback", "Rollback",
      "The oldest release the cluster can roll back to after each step."},
     [](const v1::PlanUpgradeResponse& p) -> const PlanItems& {
       return p.rollback();
     }},
    {{"clients", "Clients",
      "Clients (recorded by this replica, or the fleet's through Prometheus: "
      "see Clients checked) outside the skew allowance at a step."},
     [](const v1::PlanUpgradeResponse& p) -> const PlanItems& {
       return p.clients();
     }},
};

// From and to, the blockers, why, the clients checked; the sections' index.
void AppendPlanSummary(std::string* out, const v1::PlanUpgradeResponse& plan) {
  out->append("<p class=\"plan-summary\">From ");
  AppendEmulationAndMin(out, plan.from());
  out->append(" to ");
  AppendEmulationAndMin(out, plan.to());
  absl::StrAppend(out, " (binary ");
  AppendEscaped(out, plan.to().binary_version());
  absl::StrAppend(out, "): ", plan.steps_size(),
                  " steps, <strong id=\"blockers\" class=\"",
                  plan.blockers() > 0 ? "bad" : "ok", "\">", plan.blockers(),
                  plan.blockers() == 1 ? " blocker" : " blockers",
                  "</strong>.</p><p class=\"note\">");
  AppendEscaped(out, plan.reason());
  if (!absl::EndsWith(plan.reason(), ".")) out->append(".");
  out->append(" Clients checked: ");
  AppendEscaped(out, plan.clients_checked());
  out->append(".</p><ul class=\"compact sections\" id=\"plan-index\">");
  for (const PlanSection& section : kPlanSections) {
    absl::StrAppend(out, "<li><a href=\"#plan-", section.info.id, "\">",
                    section.info.id, "</a> <span class=\"count\">",
                    section.items(plan).size(), "</span></li>");
  }
  out->append("</ul>");
}

void AppendStepsTable(std::string* out, const v1::PlanUpgradeResponse& plan) {
  out->append(
      "<h2>Steps</h2><div class=\"scroll\"><table class=\"list stack\" "
      "id=\"steps\"><thead><tr><th scope=\"col\">#</th><th "
      "scope=\"col\">step</th><th scope=\"col\">binary / emulation / "
      "min-compatibility</th><th scope=\"col\">what to do</th><th "
      "scope=\"col\">rollback to</th><th scope=\"col\" "
      "class=\"num\">items</th></tr></thead><tbody>");
  for (const v1::UpgradeStep& step : plan.steps()) {
    int blocking = 0;
    for (const v1::UpgradeItem& item : step.items())
      blocking += item.blocking();
    absl::StrAppend(out, "<tr", blocking > 0 ? " class=\"blocking\"" : "",
                    "><td data-label=\"#\">", step.number(),
                    "</td><th scope=\"row\">");
    AppendEscaped(out, step.name());
    out->append("</th><td data-label=\"versions\">");
    AppendEscaped(out, step.versions().binary_version());
    out->append(" / ");
    AppendEscaped(out, step.versions().emulation_version());
    out->append(" / ");
    AppendEscaped(out, step.versions().min_compatibility_version());
    out->append("</td><td data-label=\"what to do\">");
    AppendEscaped(out, step.action());
    out->append("</td><td data-label=\"rollback to\">");
    AppendEscaped(out, step.rollback_to());
    absl::StrAppend(out, "</td><td class=\"num\" data-label=\"items\">",
                    step.items_size());
    if (blocking > 0) {
      absl::StrAppend(out, " <span class=\"badge v-too-old\">", blocking,
                      " blocking</span>");
    }
    out->append("</td></tr>");
  }
  out->append("</tbody></table></div>");
}

// The form choosing the target (GET /ui/plan?to=1.37; no script needed),
// with the served lines as suggestions.
void AppendTargetForm(std::string* out, const PageContext& context,
                      absl::string_view value) {
  out->append(
      "<form class=\"filters\" method=\"get\" action=\"/ui/plan\" "
      "id=\"plan-target\"><label>Plan the upgrade to kube-apiserver "
      "<input type=\"text\" name=\"to\" list=\"plan-lines\" "
      "placeholder=\"1.37\" value=\"");
  AppendEscaped(out, value);
  out->append("\"></label><datalist id=\"plan-lines\">");
  for (const runtime::ServingLine& line : context.snapshot->lines) {
    out->append("<option value=\"");
    AppendEscaped(out, line.catalog->binary_version.MajorMinorString());
    out->append("\">");
  }
  out->append("</datalist><button type=\"submit\">Plan</button></form>");
}

}  // namespace

absl::StatusOr<std::string> RenderPlan(const PageContext& context,
                                       absl::string_view to) {
  absl::StatusOr<std::optional<Target>> target = UpgradeTargetOf(context);
  if (!target.ok()) return target.status();
  std::string out;
  out.reserve(32 << 10);
  AppendHead(&out, "Upgrade plan", View::kPlan, &context);
  out.append("<h1>Upgrade plan</h1>");
  AppendTargetForm(&out, context,
                   !to.empty() ? to
                   : target->has_value()
                       ? absl::string_view((*target)->versions.binary_version())
                       : absl::string_view());
  if (!to.empty()) {
    Target chosen;
    chosen.versions.set_binary_version(std::string(to));
    *target = std::move(chosen);
  }
  if (!target->has_value()) {
    out.append(
        "<p class=\"empty\" id=\"no-target\">The cluster has no upgrade "
        "target: choose one above, or give compatd one "
        "(<code>--upgrade-target=1.37</code>, or <code>upgradeTarget</code> "
        "in the <code>--cluster</code> profile) to see its plan here and in "
        "the webhook and metrics. <code>PlanUpgrade</code> answers for any "
        "target.</p>");
    AppendFoot(&out, &context);
    return out;
  }
  // PlanUpgrade from the cluster section (an empty `from`) to the target.
  v1::PlanUpgradeRequest request;
  *request.mutable_to() = (*target)->versions;
  v1::PlanUpgradeResponse plan;
  if (absl::Status s =
          context.handlers->PlanUpgrade(*context.snapshot, request, &plan);
      !s.ok()) {
    // A target typed into the form that compatd cannot plan to (no line, not
    // a version): the reason beside the form, which stays to try again.
    if (to.empty() || s.code() != absl::StatusCode::kInvalidArgument) return s;
    out.append("<p class=\"empty\" id=\"plan-error\">No plan to ");
    AppendEscaped(&out, to);
    out.append(": ");
    AppendEscaped(&out, s.message());
    out.append("</p>");
    AppendFoot(&out, &context);
    return out;
  }
  AppendPlanSummary(&out, plan);
  AppendStepsTable(&out, plan);
  for (const PlanSection& section : kPlanSections) {
    AppendPlanItems(&out, section.info, section.items(plan));
  }
  AppendFoot(&out, &context);
  return out;
}

}  // namespace compatd::ui
