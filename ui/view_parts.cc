#include "ui/view_parts.h"

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

namespace compatd::ui {

absl::Time ToTime(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

std::string WallTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

void AppendAgo(std::string* out, absl::Time now, absl::Time then) {
  absl::StrAppend(
      out, "<time datetime=\"",
      absl::FormatTime(absl::RFC3339_sec, then, absl::UTCTimeZone()),
      "\" title=\"", WallTime(then), "\">", HumanDuration(now - then),
      " ago</time>");
}

// "sha256:0123456789ab" of "sha256:<64 hex>".
absl::string_view ShortDigest(absl::string_view digest) {
  return digest.substr(0, std::min<size_t>(digest.size(), 19));
}

void AppendHead(std::string* out, absl::string_view title, View active,
                const PageContext* context) {
  out->append(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\"><title>");
  AppendEscaped(out, title);
  out->append(
      " \xC2\xB7 compatd</title><link rel=\"icon\" href=\"data:,\">"
      "<link rel=\"stylesheet\" href=\"/ui/style.css\">"
      "<script src=\"/ui/app.js\" defer></script></head><body");
  if (context != nullptr) {
    absl::StrAppend(out, " data-generation=\"", context->snapshot->generation,
                    "\"");
  }
  out->append(
      "><header class=\"top\"><a class=\"brand\" "
      "href=\"/ui/\">compatd</a><nav>");
  struct Link {
    View view;
    absl::string_view href;
    absl::string_view text;
  };
  static constexpr Link kLinks[] = {
      {View::kOverview, "/ui/", "Overview"},
      {View::kClients, "/ui/clients", "Clients"},
      {View::kFeatures, "/ui/features", "Feature gates"},
      {View::kApis, "/ui/apis", "APIs"},
      {View::kApiUse, "/ui/api-use", "API use"},
      {View::kPlan, "/ui/plan", "Upgrade plan"},
  };
  for (const Link& link : kLinks) {
    absl::StrAppend(out, "<a href=\"", link.href, "\"",
                    link.view == active ? " aria-current=\"page\"" : "", ">",
                    link.text, "</a>");
  }
  out->append("</nav>");
  if (context != nullptr && context->snapshot->lines.size() > 1) {
    // The binary picker: every page answers as the chosen line's
    // kube-apiserver would (?binary=1.34; a plain GET form, no script).
    out->append(
        "<form class=\"picker\" method=\"get\" id=\"binary-picker\">"
        "<label for=\"binary\">kube-apiserver</label> "
        "<select name=\"binary\" id=\"binary\">");
    const engine::Catalog& chosen = context->snapshot->default_catalog();
    for (const runtime::ServingLine& line : context->snapshot->lines) {
      const std::string name = line.catalog->binary_version.MajorMinorString();
      absl::StrAppend(out, "<option value=\"", name, "\"",
                      line.catalog.get() == &chosen ? " selected" : "", ">");
      AppendEscaped(out, line.catalog->binary_version.ToString());
      out->append("</option>");
    }
    out->append("</select> <button type=\"submit\">show</button></form>");
  }
  if (context != nullptr) {
    absl::StrAppend(out, "<span class=\"gen\">generation ",
                    context->snapshot->generation, " \xC2\xB7 <code>");
    AppendEscaped(out,
                  ShortDigest(context->snapshot->default_catalog().digest));
    out->append("</code></span>");
  }
  out->append("</header><main>");
}

void AppendFoot(std::string* out, const PageContext* context) {
  out->append("</main><footer>");
  if (context != nullptr) {
    absl::StrAppend(out, "Rendered from catalog generation ",
                    context->snapshot->generation, " at ",
                    WallTime(context->now),
                    ". <span id=\"live\">This page reloads itself when the "
                    "catalog changes (with JavaScript on).</span>");
  }
  out->append("</footer></body></html>\n");
}

absl::string_view VerdictClass(v1::SkewVerdict verdict) {
  switch (verdict) {
    case v1::SKEW_VERDICT_ALLOWED:
      return "allowed";
    case v1::SKEW_VERDICT_TOO_OLD:
      return "too-old";
    case v1::SKEW_VERDICT_TOO_NEW:
      return "too-new";
    default:
      return "unknown";
  }
}

absl::string_view VerdictText(v1::SkewVerdict verdict) {
  switch (verdict) {
    case v1::SKEW_VERDICT_ALLOWED:
      return "allowed";
    case v1::SKEW_VERDICT_TOO_OLD:
      return "too old";
    case v1::SKEW_VERDICT_TOO_NEW:
      return "too new";
    default:
      return "unknown";
  }
}

absl::string_view ProtoStageName(v1::Stage stage) {
  switch (stage) {
    case v1::STAGE_PRE_ALPHA:
      return "PRE-ALPHA";
    case v1::STAGE_ALPHA:
      return "ALPHA";
    case v1::STAGE_BETA:
      return "BETA";
    case v1::STAGE_GA:
      return "GA";
    case v1::STAGE_DEPRECATED:
      return "DEPRECATED";
    default:
      return "UNSPECIFIED";
  }
}

engine::PreRelease ProtoStageToEngine(v1::Stage stage) {
  switch (stage) {
    case v1::STAGE_ALPHA:
      return engine::PreRelease::kAlpha;
    case v1::STAGE_BETA:
      return engine::PreRelease::kBeta;
    case v1::STAGE_GA:
      return engine::PreRelease::kGA;
    case v1::STAGE_DEPRECATED:
      return engine::PreRelease::kDeprecated;
    default:
      return engine::PreRelease::kPreAlpha;
  }
}

void AppendVersionsList(std::string* out, const v1::EffectiveVersion& v) {
  out->append(
      "<dl class=\"kv\"><dt>Binary version</dt><dd id=\"binary-version\">");
  AppendEscaped(out, v.binary_version());
  out->append("</dd><dt>Emulation version</dt><dd id=\"emulation-version\">");
  AppendEscaped(out, v.emulation_version());
  out->append(
      "</dd><dt>Min-compatibility version</dt><dd "
      "id=\"min-compatibility-version\">");
  AppendEscaped(out, v.min_compatibility_version());
  out->append("</dd>");  // the caller closes the <dl>
}

absl::StatusOr<std::optional<Target>> UpgradeTargetOf(
    const PageContext& context) {
  v1::GetCatalogResponse catalog;
  if (absl::Status s = context.handlers->GetCatalog(
          *context.snapshot, v1::GetCatalogRequest(), &catalog);
      !s.ok()) {
    return s;
  }
  if (!catalog.has_upgrade_target()) return std::optional<Target>();
  Target target;
  target.versions = catalog.upgrade_target();
  v1::ResolveVersionsRequest request;
  *request.mutable_versions() = target.versions;
  v1::ResolveVersionsResponse resolved;
  if (absl::Status s = context.handlers->ResolveVersions(*context.snapshot,
                                                         request, &resolved);
      !s.ok()) {
    return s;
  }
  target.effective = resolved.versions();
  return std::optional<Target>(std::move(target));
}

// "emulation 1.36, min-compatibility 1.35".
void AppendEmulationAndMin(std::string* out, const v1::EffectiveVersion& v) {
  out->append("emulation ");
  AppendEscaped(out, v.emulation_version());
  out->append(", min-compatibility ");
  AppendEscaped(out, v.min_compatibility_version());
}

// A CamelCase gate name, escaped, with a <wbr> where a lower-case letter or
// digit is followed by an upper-case one: long names wrap at their words.
void AppendWithCamelBreaks(std::string* out, absl::string_view name) {
  size_t start = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (absl::ascii_isupper(static_cast<unsigned char>(name[i])) &&
        !absl::ascii_isupper(static_cast<unsigned char>(name[i - 1]))) {
      AppendEscaped(out, name.substr(start, i - start));
      out->append("<wbr>");
      start = i;
    }
  }
  AppendEscaped(out, name.substr(start));
}

uint64_t Percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0 : (part * 100 + whole / 2) / whole;
}

// A horizontal stacked bar (inline SVG) of counts with a class each.
void AppendStackedBar(
    std::string* out,
    const std::vector<std::pair<std::string, uint64_t>>& parts,
    absl::string_view label) {
  uint64_t total = 0;
  for (const auto& part : parts) total += part.second;
  absl::StrAppend(out,
                  "<svg class=\"bar\" viewBox=\"0 0 100 8\" "
                  "preserveAspectRatio=\"none\" role=\"img\" aria-label=\"");
  AppendEscaped(out, label);
  out->append("\">");
  double x = 0;
  for (const auto& [cls, count] : parts) {
    if (count == 0 || total == 0) continue;
    const double w =
        100.0 * static_cast<double>(count) / static_cast<double>(total);
    absl::StrAppend(out, "<rect class=\"", cls, "\" x=\"", x,
                    "\" y=\"0\" width=\"", w, "\" height=\"8\"><title>", count,
                    " ", cls, "</title></rect>");
    x += w;
  }
  out->append("</svg>");
}

void AppendClientScope(std::string* out, const PageContext& context,
                       const v1::ClientView& view) {
  if (view.scope() == v1::CLIENT_SCOPE_FLEET) {
    absl::StrAppend(out,
                    "<p class=\"scope scope-fleet\" id=\"client-scope\">"
                    "<span class=\"badge v-allowed\">fleet</span> Every "
                    "replica's clients: ",
                    view.replicas(),
                    view.replicas() == 1 ? " replica" : " replicas",
                    " summed by ");
    AppendEscaped(out, view.source());
    out->append(", ");
    AppendAgo(out, context.now, ToTime(view.as_of()));
    out->append(", with this replica's own since.</p>");
    return;
  }
  out->append(
      "<p class=\"scope scope-replica\" id=\"client-scope\"><span "
      "class=\"badge v-too-new\">this replica only</span> ");
  AppendEscaped(out, view.note());
  out->append("</p>");
}

std::string HumanDuration(absl::Duration duration) {
  if (duration < absl::ZeroDuration()) duration = absl::ZeroDuration();
  const int64_t s = absl::ToInt64Seconds(duration);
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrCat(s / 60, "m ", s % 60, "s");
  if (s < 86400) return absl::StrCat(s / 3600, "h ", s % 3600 / 60, "m");
  return absl::StrCat(s / 86400, "d ", s % 86400 / 3600, "h");
}

std::string StatusDocument(const runtime::ServingSnapshot& snapshot) {
  // The digest is "sha256:" and hex (the loader's): nothing to escape.
  return absl::StrCat("{\"generation\":", snapshot.generation, ",\"digest\":\"",
                      snapshot.default_catalog().digest, "\"}");
}

std::string RenderError(const PageContext* context, absl::string_view title,
                        absl::string_view message) {
  std::string out;
  AppendHead(&out, title, View::kNone, context);
  out.append("<h1>");
  AppendEscaped(&out, title);
  out.append("</h1><p class=\"error\">");
  AppendEscaped(&out, message);
  out.append("</p><p><a href=\"/ui/\">Back to the overview</a></p>");
  AppendFoot(&out, context);
  return out;
}

}  // namespace compatd::ui
