#include "ui/views.h"

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

namespace compatd::ui {
namespace {

enum class View {
  kOverview,
  kClients,
  kFeatures,
  kApis,
  kApiUse,
  kPlan,
  kNone
};

// Releases of history the feature table's timelines show (the detail page
// shows a gate's whole history).
constexpr uint64_t kTableTimelineReleases = 12;

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

// The catalog's cluster.upgradeTarget (GetCatalog's upgrade_target) with its
// effective versions (ResolveVersions at it); nullopt when it has none.
struct Target {
  v1::VersionContext versions;
  v1::EffectiveVersion effective;
};

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

// ---------------------------------------------------------------------------
// Clients

struct Cell {
  v1::SkewVerdict verdict = v1::SKEW_VERDICT_UNKNOWN;
  std::string reason;
  uint64_t requests = 0;
  absl::Time last_seen = absl::InfinitePast();
  std::vector<std::string> versions;  // the clients' versions in an edge cell
};

struct Row {
  std::string component;
  bool has_rule = false;
  std::string min_version;
  std::string max_version;
  std::vector<Cell> cells;  // [older, window..., newer]
};

// The lowest and highest minor version any skew rule allows at `versions`
// (null: the cluster's): the columns a client matrix needs.
absl::Status AllowedSpan(const PageContext& context,
                         const v1::VersionContext* versions, uint64_t* lo,
                         uint64_t* hi) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  for (const engine::SkewRule& rule : engine::SkewRulesInForce(catalog)) {
    for (const std::string& component : rule.components) {
      v1::CheckSkewRequest request;
      if (versions != nullptr) *request.mutable_versions() = *versions;
      request.set_component(component);
      request.set_client_version(catalog.binary_version.MajorMinorString());
      v1::CheckSkewResponse response;
      if (absl::Status s = context.handlers->CheckSkew(*context.snapshot,
                                                       request, &response);
          !s.ok()) {
        return s;
      }
      uint64_t mj = 0, mn = 0;
      if (engine::Version::ParseMajorMinorNoAlloc(response.min_version(), &mj,
                                                  &mn) &&
          mj == catalog.binary_version.major()) {
        *lo = std::min(*lo, mn);
      }
      if (engine::Version::ParseMajorMinorNoAlloc(response.max_version(), &mj,
                                                  &mn) &&
          mj == catalog.binary_version.major()) {
        *hi = std::max(*hi, mn);
      }
    }
  }
  return absl::OkStatus();
}

// Whose clients the page shows: the fleet's through Prometheus, or this
// replica's alone (and why), in one line under the heading.
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

// The client matrix at the cluster's versions: every component a skew rule
// names plus every component seen, columns for the minor versions around the
// allowed ranges, with edge columns for what lies beyond.
//
// `versions` (may be null: the cluster's) are the versions the verdicts are
// judged at (the upgrade target's for the second matrix); `id` is the
// table's id. The counts are the clients' whatever the versions.
//
// The columns cover at least the minor versions [span_lo, span_hi] (so that
// the matrices now and at the target line up), else the allowed ranges.
absl::Status AppendClientMatrix(std::string* out, const PageContext& context,
                                const v1::ListClientsResponse& clients,
                                const v1::VersionContext* versions,
                                absl::string_view id, uint64_t span_lo,
                                uint64_t span_hi) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  const uint64_t major = catalog.binary_version.major();
  std::vector<std::string> components;
  absl::flat_hash_set<std::string> known;
  for (const engine::SkewRule& rule : engine::SkewRulesInForce(catalog)) {
    for (const std::string& component : rule.components) {
      if (known.insert(component).second) components.push_back(component);
    }
  }
  absl::flat_hash_set<std::string> seen_components;
  for (const v1::ObservedClient& client : clients.clients()) {
    if (!known.contains(client.component()) &&
        seen_components.insert(client.component()).second) {
      components.push_back(client.component());
    }
  }
  // The window: three releases below the lowest allowed minimum to two above
  // the highest allowed maximum.
  std::vector<Row> rows;
  uint64_t lo = span_lo, hi = span_hi;
  for (const std::string& component : components) {
    Row row;
    row.component = component;
    if (known.contains(component)) {
      v1::CheckSkewRequest request;
      if (versions != nullptr) *request.mutable_versions() = *versions;
      request.set_component(component);
      request.set_client_version(catalog.binary_version.MajorMinorString());
      v1::CheckSkewResponse response;
      if (absl::Status s = context.handlers->CheckSkew(*context.snapshot,
                                                       request, &response);
          !s.ok()) {
        return s;
      }
      row.has_rule = true;
      row.min_version = response.min_version();
      row.max_version = response.max_version();
      uint64_t mj = 0, mn = 0;
      if (engine::Version::ParseMajorMinorNoAlloc(row.min_version, &mj, &mn) &&
          mj == major) {
        lo = std::min(lo, mn);
      }
      if (engine::Version::ParseMajorMinorNoAlloc(row.max_version, &mj, &mn) &&
          mj == major) {
        hi = std::max(hi, mn);
      }
    }
    rows.push_back(std::move(row));
  }
  if (lo == UINT64_MAX || hi < lo) {
    lo = hi = catalog.binary_version.minor();
  }
  const uint64_t first = lo >= 3 ? lo - 3 : 0;
  const uint64_t last = hi + 2;
  const size_t columns = static_cast<size_t>(last - first + 1);

  for (Row& row : rows) {
    row.cells.resize(columns + 2);
    Cell& older = row.cells.front();
    Cell& newer = row.cells.back();
    older.verdict =
        row.has_rule ? v1::SKEW_VERDICT_TOO_OLD : v1::SKEW_VERDICT_UNKNOWN;
    newer.verdict =
        row.has_rule ? v1::SKEW_VERDICT_TOO_NEW : v1::SKEW_VERDICT_UNKNOWN;
    if (row.has_rule) {
      for (size_t i = 0; i < columns; ++i) {
        v1::CheckSkewRequest request;
        if (versions != nullptr) *request.mutable_versions() = *versions;
        request.set_component(row.component);
        request.set_client_version(
            engine::Version::MajorMinor(major, first + i).MajorMinorString());
        v1::CheckSkewResponse response;
        if (absl::Status s = context.handlers->CheckSkew(*context.snapshot,
                                                         request, &response);
            !s.ok()) {
          return s;
        }
        row.cells[i + 1].verdict = response.verdict();
        row.cells[i + 1].reason = response.reason();
      }
    }
  }
  absl::flat_hash_map<std::string, size_t> row_of;
  for (size_t i = 0; i < rows.size(); ++i) row_of[rows[i].component] = i;
  for (const v1::ObservedClient& client : clients.clients()) {
    auto it = row_of.find(client.component());
    if (it == row_of.end()) continue;
    Row& row = rows[it->second];
    uint64_t mj = 0, mn = 0;
    size_t column;
    if (!engine::Version::ParseMajorMinorNoAlloc(client.version(), &mj, &mn)) {
      continue;  // listed in the table below only
    }
    if (mj < major || (mj == major && mn < first)) {
      column = 0;
    } else if (mj > major || mn > last) {
      column = columns + 1;
    } else {
      column = static_cast<size_t>(mn - first) + 1;
    }
    Cell& cell = row.cells[column];
    cell.requests += client.requests();
    cell.last_seen = std::max(cell.last_seen, ToTime(client.last_seen()));
    if (column == 0 || column == columns + 1) {
      cell.versions.push_back(client.version());
    }
  }

  absl::StrAppend(out, "<div class=\"scroll\"><table class=\"matrix\" id=\"",
                  id, "\">");
  out->append(
      "<thead><tr><th scope=\"col\">component</th>"
      "<th scope=\"col\">allowed</th>");
  absl::StrAppend(out, "<th scope=\"col\">&lt;",
                  engine::Version::MajorMinor(major, first).MajorMinorString(),
                  "</th>");
  for (size_t i = 0; i < columns; ++i) {
    absl::StrAppend(
        out, "<th scope=\"col\">",
        engine::Version::MajorMinor(major, first + i).MajorMinorString(),
        "</th>");
  }
  absl::StrAppend(out, "<th scope=\"col\">&gt;",
                  engine::Version::MajorMinor(major, last).MajorMinorString(),
                  "</th></tr></thead><tbody>");
  for (const Row& row : rows) {
    out->append("<tr data-component=\"");
    AppendEscaped(out, row.component);
    out->append("\"><th scope=\"row\">");
    AppendEscaped(out, row.component);
    out->append("</th><td class=\"range\">");
    if (row.has_rule) {
      AppendEscaped(out, row.min_version);
      out->append("\xE2\x80\x93");  // en dash
      AppendEscaped(out, row.max_version);
    } else {
      out->append("no skew rule");
    }
    out->append("</td>");
    for (size_t c = 0; c < row.cells.size(); ++c) {
      const Cell& cell = row.cells[c];
      const bool edge = c == 0 || c == row.cells.size() - 1;
      std::string version =
          edge ? std::string()
               : engine::Version::MajorMinor(major, first + c - 1)
                     .MajorMinorString();
      // The allowed range's outline: its first and last cells close it.
      const bool allowed = cell.verdict == v1::SKEW_VERDICT_ALLOWED;
      const bool range_lo =
          allowed && row.cells[c - 1].verdict != v1::SKEW_VERDICT_ALLOWED;
      const bool range_hi =
          allowed && row.cells[c + 1].verdict != v1::SKEW_VERDICT_ALLOWED;
      absl::StrAppend(out, "<td class=\"cell v-", VerdictClass(cell.verdict),
                      cell.requests > 0 ? " seen" : "", edge ? " edge" : "",
                      range_lo ? " lo" : "", range_hi ? " hi" : "",
                      "\" data-verdict=\"", VerdictClass(cell.verdict), "\"");
      if (!edge) absl::StrAppend(out, " data-version=\"", version, "\"");
      out->append(" title=\"");
      AppendEscaped(out, row.component);
      out->append(" ");
      if (edge) {
        out->append(c == 0 ? "older" : "newer");
      } else {
        out->append(version);
      }
      absl::StrAppend(out, ": ", VerdictText(cell.verdict));
      if (!cell.reason.empty()) {
        out->append(" (");
        AppendEscaped(out, cell.reason);
        out->append(")");
      }
      if (!cell.versions.empty()) {
        out->append("; seen: ");
        for (size_t i = 0; i < cell.versions.size(); ++i) {
          if (i > 0) out->append(", ");
          AppendEscaped(out, cell.versions[i]);
        }
      }
      out->append("\">");
      if (cell.requests > 0) {
        absl::StrAppend(out, "<span class=\"n\">", cell.requests,
                        "</span><span class=\"ago\">");
        AppendAgo(out, context.now, cell.last_seen);
        out->append("</span>");
      } else {
        out->append("<span class=\"sr\">");
        absl::StrAppend(out, VerdictText(cell.verdict), "</span>");
      }
      out->append("</td>");
    }
    out->append("</tr>");
  }
  out->append("</tbody></table></div>");
  out->append(
      "<p class=\"legend\">Verdicts by component and client version; the "
      "outlined cells are the allowed range, numbers are requests.<br><span "
      "class=\"sw v-allowed\"></span> allowed "
      "<span class=\"sw v-too-old\"></span> too old <span class=\"sw "
      "v-too-new\"></span> too new <span class=\"sw v-unknown\"></span> "
      "unknown; strong colours: versions that called within the client "
      "TTL.</p>");
  return absl::OkStatus();
}

void AppendClientTable(std::string* out, const PageContext& context,
                       const v1::ListClientsResponse& clients,
                       const std::optional<Target>& target) {
  out->append("<h2>Every client seen</h2>");
  if (clients.clients().empty()) {
    out->append(
        "<p class=\"empty\">No client has called since start (or within "
        "--client-ttl).</p>");
    return;
  }
  out->append(
      "<div class=\"scroll\"><table class=\"list stack\" "
      "id=\"clients\"><thead><tr>"
      "<th scope=\"col\">component</th><th scope=\"col\">version</th>"
      "<th scope=\"col\">verdict</th><th scope=\"col\">allowed</th>");
  if (target.has_value()) {
    out->append("<th scope=\"col\">at the target ");
    AppendEscaped(out, target->effective.emulation_version());
    out->append("</th>");
  }
  out->append(
      "<th scope=\"col\" class=\"num\">requests</th><th "
      "scope=\"col\">seen via</th><th "
      "scope=\"col\">first seen</th><th scope=\"col\">last seen</th></tr>"
      "</thead><tbody>");
  for (const v1::ObservedClient& client : clients.clients()) {
    absl::StrAppend(out, "<tr class=\"v-", VerdictClass(client.verdict()),
                    "\" data-verdict=\"", VerdictClass(client.verdict()),
                    "\"><td class=\"component\" data-label=\"component\">");
    AppendEscaped(out, client.component());
    out->append("</td><td class=\"version\" data-label=\"version\">");
    AppendEscaped(out, client.version());
    absl::StrAppend(out, "</td><td><span class=\"badge v-",
                    VerdictClass(client.verdict()), "\">",
                    VerdictText(client.verdict()),
                    "</span></td><td data-label=\"allowed\">");
    if (!client.min_version().empty()) {
      AppendEscaped(out, client.min_version());
      out->append("\xE2\x80\x93");
      AppendEscaped(out, client.max_version());
    }
    if (target.has_value()) {
      // CheckSkew at the target, for the versions it can read.
      v1::SkewVerdict at_target = v1::SKEW_VERDICT_UNKNOWN;
      std::string range;
      uint64_t major = 0, minor = 0;
      if (client.verdict() != v1::SKEW_VERDICT_UNKNOWN &&
          client.verdict() != v1::SKEW_VERDICT_UNSPECIFIED &&
          engine::Version::ParseMajorMinorNoAlloc(client.version(), &major,
                                                  &minor)) {
        v1::CheckSkewRequest request;
        *request.mutable_versions() = target->versions;
        request.set_component(client.component());
        request.set_client_version(client.version());
        v1::CheckSkewResponse response;
        if (context.handlers->CheckSkew(*context.snapshot, request, &response)
                .ok()) {
          at_target = response.verdict();
          range = absl::StrCat(response.min_version(), "\xE2\x80\x93",
                               response.max_version());
        }
      }
      absl::StrAppend(out,
                      "</td><td data-label=\"at the target\" "
                      "data-target-verdict=\"",
                      VerdictClass(at_target), "\"><span class=\"badge v-",
                      VerdictClass(at_target), "\">", VerdictText(at_target),
                      "</span>");
      if (!range.empty()) {
        out->append(" ");
        AppendEscaped(out, range);
      }
    }
    bool direct = false, audit = false;
    for (int via : client.seen_via()) {
      direct = direct || via == v1::CLIENT_SEEN_VIA_DIRECT;
      audit = audit || via == v1::CLIENT_SEEN_VIA_AUDIT;
    }
    const absl::string_view seen_via = direct && audit ? "direct, audit"
                                       : audit         ? "audit"
                                                       : "direct";
    absl::StrAppend(
        out, "</td><td class=\"num\" data-label=\"requests\">",
        client.requests(), "</td><td data-label=\"seen via\" data-seen-via=\"",
        seen_via, "\">", seen_via, "</td><td data-label=\"first seen\">");
    AppendAgo(out, context.now, ToTime(client.first_seen()));
    out->append("</td><td data-label=\"last seen\">");
    AppendAgo(out, context.now, ToTime(client.last_seen()));
    out->append("</td></tr>");
  }
  out->append("</tbody></table></div>");
}

// ---------------------------------------------------------------------------
// Feature gates

bool Matches(const FeatureFilter& filter, const v1::FeatureDecision& d) {
  if (!filter.component.empty() && d.component() != filter.component) {
    return false;
  }
  if (!filter.stage.empty() && ProtoStageName(d.stage()) != filter.stage) {
    return false;
  }
  if (!filter.name.empty() &&
      !absl::StrContains(absl::AsciiStrToLower(d.name()),
                         absl::AsciiStrToLower(filter.name))) {
    return false;
  }
  return true;
}

void AppendSelect(std::string* out, absl::string_view name,
                  absl::string_view label, absl::string_view selected,
                  const std::vector<std::string>& options) {
  absl::StrAppend(out, "<label>", label);
  absl::StrAppend(out, " <select name=\"", name, "\" id=\"filter-", name,
                  "\"><option value=\"\">any</option>");
  for (const std::string& option : options) {
    out->append("<option value=\"");
    AppendEscaped(out, option);
    out->append("\"");
    if (option == selected) out->append(" selected");
    out->append(">");
    AppendEscaped(out, option);
    out->append("</option>");
  }
  out->append("</select></label>");
}

void AppendDecisionCells(std::string* out, const v1::FeatureDecision& d) {
  absl::StrAppend(
      out, "<td><span class=\"badge st-",
      StageClass(ProtoStageToEngine(d.stage())), "\">",
      StageTitle(ProtoStageToEngine(d.stage())),
      "</span></td><td data-label=\"now\" class=\"", d.enabled() ? "on" : "off",
      "\">", d.enabled() ? "on" : "off",
      d.overridden() ? " <abbr title=\"set by the cluster's "
                       "--feature-gates\">(set)</abbr>"
                     : "",
      "</td><td data-label=\"default\">", d.default_enabled() ? "on" : "off",
      d.locked_to_default() ? " <span class=\"locked\">locked</span>" : "",
      "</td>");
}

// ---------------------------------------------------------------------------
// Upgrade plan

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

}  // namespace

FeatureFilter ParseFeatureFilter(absl::string_view query) {
  FeatureFilter filter;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const size_t eq = pair.find('=');
    const absl::string_view key = pair.substr(0, eq);
    const std::string value = eq == absl::string_view::npos
                                  ? std::string()
                                  : PercentDecode(pair.substr(eq + 1), true);
    if (key == "q") {
      filter.name = std::string(absl::StripAsciiWhitespace(value));
    } else if (key == "component") {
      filter.component = value;
    } else if (key == "stage") {
      filter.stage = value;
    }
  }
  return filter;
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

absl::StatusOr<std::string> RenderOverview(const PageContext& context) {
  const runtime::ServingSnapshot& snapshot = *context.snapshot;
  v1::GetCatalogResponse catalog;
  if (absl::Status s = context.handlers->GetCatalog(
          snapshot, v1::GetCatalogRequest(), &catalog);
      !s.ok()) {
    return s;
  }
  v1::ListClientsResponse clients;
  if (absl::Status s = context.handlers->ListClients(
          snapshot, v1::ListClientsRequest(), &clients);
      !s.ok()) {
    return s;
  }
  v1::ListFeaturesResponse features;
  if (absl::Status s = context.handlers->ListFeatures(
          snapshot, v1::ListFeaturesRequest(), &features);
      !s.ok()) {
    return s;
  }
  v1::ListAPIVersionsResponse apis;
  if (absl::Status s = context.handlers->ListAPIVersions(
          snapshot, v1::ListAPIVersionsRequest(), &apis);
      !s.ok()) {
    return s;
  }

  std::string out;
  out.reserve(8 << 10);
  AppendHead(&out, "Overview", View::kOverview, &context);
  out.append("<h1>Overview</h1><div class=\"cards\">");

  out.append(
      "<section class=\"card\" id=\"versions\"><h2>Cluster versions</h2>");
  AppendVersionsList(&out, catalog.versions());
  {
    absl::StatusOr<std::optional<Target>> target = UpgradeTargetOf(context);
    if (!target.ok()) return target.status();
    out.append("<dt>Upgrade target</dt><dd id=\"target\">");
    if (target->has_value()) {
      AppendEmulationAndMin(&out, (*target)->effective);
      out.append(" (<a href=\"/ui/plan\">the plan</a>)");
    } else {
      out.append("none (<code>cluster.upgradeTarget</code>)");
    }
    out.append("</dd></dl>");
  }
  out.append("</section>");

  out.append("<section class=\"card\" id=\"catalog\"><h2>Catalog</h2>");
  if (!catalog.last_error().empty()) {
    out.append(
        "<div class=\"error\" id=\"last-error\"><strong>The last reload was "
        "rejected");
    if (catalog.has_last_error_at()) {
      out.append(" ");
      AppendAgo(&out, context.now, ToTime(catalog.last_error_at()));
    }
    out.append("</strong>; this catalog keeps serving.<pre>");
    AppendEscaped(&out, catalog.last_error());
    out.append("</pre></div>");
  }
  absl::StrAppend(
      &out, "<dl class=\"kv\"><dt>Generation</dt><dd id=\"generation\">",
      catalog.generation(), "</dd><dt>Digest</dt><dd><code class=\"digest\">");
  AppendEscaped(&out, catalog.digest());
  out.append("</code></dd><dt>Source</dt><dd id=\"source\">");
  AppendEscaped(&out, catalog.source());
  out.append("</dd><dt>Loaded</dt><dd>");
  AppendEscaped(&out, WallTime(ToTime(catalog.loaded_at())));
  out.append(" (");
  AppendAgo(&out, context.now, ToTime(catalog.loaded_at()));
  const v1::CatalogCounts& n = catalog.counts();
  absl::StrAppend(&out, ")</dd><dt>Holds</dt><dd>", n.features(),
                  " feature gates, ", n.group_versions(), " group-versions (",
                  n.resources(), " resources), ", n.storage_overrides(),
                  " storage overrides, ", n.skew_rules(), " skew rules, ",
                  n.crds(), " CRD histories</dd>", "<dt>Last reload</dt><dd>",
                  catalog.last_error().empty()
                      ? "<span class=\"ok\">no error</span>"
                      : "<span class=\"bad\">rejected (above)</span>",
                  "</dd></dl>");
  if (catalog.lines_size() > 1) {
    // Every release line served; the picker in the header shows the pages
    // as another line's binary would answer.
    out.append(
        "<h3>Release lines</h3><table class=\"list\" id=\"lines\"><thead><tr>"
        "<th scope=\"col\">binary</th><th scope=\"col\">source</th>"
        "<th scope=\"col\">gates</th><th scope=\"col\">last reload</th>"
        "</tr></thead><tbody>");
    for (const v1::CatalogLine& line : catalog.lines()) {
      out.append("<tr><td><a href=\"/ui/?binary=");
      AppendEscaped(&out, line.line());
      out.append("\">");
      AppendEscaped(&out, line.release());
      out.append("</a>");
      if (line.default_line()) out.append(" (shown)");
      out.append("</td><td>");
      AppendEscaped(&out, line.source());
      absl::StrAppend(&out, "</td><td>", line.counts().features(), "</td><td>");
      if (line.last_error().empty()) {
        out.append("<span class=\"ok\">no error</span>");
      } else {
        out.append("<span class=\"bad\">rejected: ");
        AppendEscaped(&out, line.last_error());
        out.append("</span>");
      }
      out.append("</td></tr>");
    }
    out.append("</tbody></table>");
  }
  out.append("</section>");

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
  absl::StrAppend(&out,
                  "<section class=\"card\" id=\"clients-summary\"><h2><a "
                  "href=\"/ui/clients\">Clients</a></h2><p class=\"big ",
                  out_of_allowance > 0 ? "bad" : "ok", "\">", out_of_allowance,
                  " out of allowance</p><p>", clients.clients_size(),
                  " component/version pairs seen (", requests, " requests), ",
                  unknown, " unidentified or without a skew rule.</p>");
  AppendClientScope(&out, context, clients.view());
  if (out_of_allowance > 0) {
    out.append("<ul class=\"compact\">");
    int listed = 0;
    for (const v1::ObservedClient& client : clients.clients()) {
      if (client.verdict() != v1::SKEW_VERDICT_TOO_OLD &&
          client.verdict() != v1::SKEW_VERDICT_TOO_NEW) {
        continue;
      }
      if (++listed > 8) {
        out.append("<li><a href=\"/ui/clients\">and more</a></li>");
        break;
      }
      out.append("<li>");
      AppendEscaped(&out, client.component());
      out.append(" ");
      AppendEscaped(&out, client.version());
      absl::StrAppend(&out, ": <span class=\"badge v-",
                      VerdictClass(client.verdict()), "\">",
                      VerdictText(client.verdict()), "</span></li>");
    }
    out.append("</ul>");
  }
  out.append("</section>");

  // Feature gates by stage at the emulation version.
  std::map<engine::PreRelease, uint64_t> by_stage;
  uint64_t enabled = 0;
  for (const v1::FeatureDecision& d : features.features()) {
    ++by_stage[ProtoStageToEngine(d.stage())];
    if (d.enabled()) ++enabled;
  }
  out.append(
      "<section class=\"card\" id=\"features-summary\"><h2><a "
      "href=\"/ui/features\">Feature gates</a> at ");
  AppendEscaped(&out, features.versions().emulation_version());
  absl::StrAppend(&out, "</h2><p class=\"big\">", enabled, " of ",
                  features.features_size(), " on</p>");
  std::vector<std::pair<std::string, uint64_t>> parts;
  std::string label = "gates by stage:";
  for (const auto& [stage, count] : by_stage) {
    parts.emplace_back(absl::StrCat("st-", StageClass(stage)), count);
    absl::StrAppend(&label, " ", StageTitle(stage), " ", count);
  }
  AppendStackedBar(&out, parts, label);
  out.append("<ul class=\"compact stages\">");
  for (const auto& [stage, count] : by_stage) {
    absl::StrAppend(&out,
                    "<li><a href=\"/ui/features?stage=", PreReleaseName(stage),
                    "\"><span class=\"sw st-", StageClass(stage), "\"></span>",
                    StageTitle(stage), "</a>: ", count, " (",
                    Percent(count, features.features_size()), "%)</li>");
  }
  out.append("</ul></section>");

  uint64_t resources = 0;
  for (const v1::APIGroupVersion& gv : apis.group_versions()) {
    resources += gv.resources_size();
  }
  absl::StrAppend(&out,
                  "<section class=\"card\" id=\"apis-summary\"><h2><a "
                  "href=\"/ui/apis\">APIs</a></h2><p class=\"big\">",
                  apis.group_versions_size(), " group-versions served</p><p>",
                  resources, " resources, at emulation version ");
  AppendEscaped(&out, apis.versions().emulation_version());
  out.append(".</p></section>");

  absl::StrAppend(&out,
                  "<section class=\"card\" id=\"process\"><h2>Process</h2><dl "
                  "class=\"kv\"><dt>Uptime</dt><dd id=\"uptime\">",
                  HumanDuration(context.now - context.started),
                  "</dd><dt>Started</dt><dd>", WallTime(context.started),
                  "</dd></dl></section>");
  out.append("</div>");
  AppendFoot(&out, &context);
  return out;
}

absl::StatusOr<std::string> RenderClients(const PageContext& context) {
  v1::ListClientsResponse clients;
  if (absl::Status s = context.handlers->ListClients(
          *context.snapshot, v1::ListClientsRequest(), &clients);
      !s.ok()) {
    return s;
  }
  std::string out;
  out.reserve(16 << 10);
  AppendHead(&out, "Clients", View::kClients, &context);
  out.append("<h1>Clients</h1><p>Skew verdicts at binary ");
  AppendEscaped(&out, clients.versions().binary_version());
  out.append(", emulation ");
  AppendEscaped(&out, clients.versions().emulation_version());
  out.append(", min-compatibility ");
  AppendEscaped(&out, clients.versions().min_compatibility_version());
  out.append(".</p>");
  AppendClientScope(&out, context, clients.view());
  absl::StatusOr<std::optional<Target>> target = UpgradeTargetOf(context);
  if (!target.ok()) return target.status();
  // One set of columns for both matrices.
  uint64_t lo = UINT64_MAX, hi = 0;
  if (target->has_value()) {
    if (absl::Status s = AllowedSpan(context, nullptr, &lo, &hi); !s.ok()) {
      return s;
    }
    if (absl::Status s = AllowedSpan(context, &(*target)->versions, &lo, &hi);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = AppendClientMatrix(&out, context, clients, nullptr,
                                          "client-matrix", lo, hi);
      !s.ok()) {
    return s;
  }
  if (target->has_value()) {
    out.append("<h2 id=\"at-target\">At the upgrade target: ");
    AppendEmulationAndMin(&out, (*target)->effective);
    out.append("</h2>");
    if (absl::Status s =
            AppendClientMatrix(&out, context, clients, &(*target)->versions,
                               "client-matrix-target", lo, hi);
        !s.ok()) {
      return s;
    }
  }
  AppendClientTable(&out, context, clients, *target);
  AppendFoot(&out, &context);
  return out;
}

absl::StatusOr<std::string> RenderFeatures(const PageContext& context,
                                           const FeatureFilter& filter) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  v1::ListFeaturesResponse features;
  if (absl::Status s = context.handlers->ListFeatures(
          *context.snapshot, v1::ListFeaturesRequest(), &features);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<engine::Version> emulation =
      engine::Version::Parse(features.versions().emulation_version());
  if (!emulation.ok()) return emulation.status();
  const engine::Version binary = catalog.binary_version.ToMajorMinor();
  // At the upgrade target, when the catalog has one: a column and a marker.
  absl::StatusOr<std::optional<Target>> target = UpgradeTargetOf(context);
  if (!target.ok()) return target.status();
  v1::ListFeaturesResponse at_target;
  absl::flat_hash_map<std::string, const v1::FeatureDecision*> target_of;
  std::optional<engine::Version> target_emulation;
  if (target->has_value()) {
    v1::ListFeaturesRequest request;
    *request.mutable_versions() = (*target)->versions;
    if (absl::Status s = context.handlers->ListFeatures(*context.snapshot,
                                                        request, &at_target);
        !s.ok()) {
      return s;
    }
    for (const v1::FeatureDecision& d : at_target.features()) {
      target_of[d.name()] = &d;
    }
    absl::StatusOr<engine::Version> v =
        engine::Version::Parse(at_target.versions().emulation_version());
    if (!v.ok()) return v.status();
    target_emulation = *v;
  }

  std::string out;
  out.reserve(256 << 10);
  AppendHead(&out, "Feature gates", View::kFeatures, &context);
  out.append("<h1>Feature gates</h1><p>State at emulation version ");
  AppendEscaped(&out, features.versions().emulation_version());
  absl::StrAppend(
      &out,
      " (with the cluster's <code class=\"flag\">--feature-gates</code>); "
      "history from the catalog's "
      "versioned specs, the last ",
      kTableTimelineReleases + 1,
      " releases (a gate's own page shows all of it).</p>");

  std::vector<std::string> components;
  {
    absl::flat_hash_set<std::string> seen;
    for (const engine::Feature& f : catalog.features) {
      if (!f.component.empty() && seen.insert(f.component).second) {
        components.push_back(f.component);
      }
    }
    std::sort(components.begin(), components.end());
  }
  out.append(
      "<form class=\"filters\" method=\"get\" action=\"/ui/features\" "
      "id=\"feature-filter\"><label>Name <input type=\"search\" name=\"q\" "
      "id=\"filter-q\" autocomplete=\"off\" value=\"");
  AppendEscaped(&out, filter.name);
  out.append("\"></label>");
  AppendSelect(&out, "component", "Component", filter.component, components);
  AppendSelect(&out, "stage", "Stage", filter.stage,
               {"ALPHA", "BETA", "GA", "DEPRECATED", "PRE-ALPHA"});
  out.append(
      "<button type=\"submit\">Filter</button> <a "
      "href=\"/ui/features\">clear</a>"
      "</form>");

  TimelineAxis axis;
  axis.major = binary.major();
  axis.last_minor = binary.minor();
  axis.first_minor = binary.minor() > kTableTimelineReleases
                         ? binary.minor() - kTableTimelineReleases
                         : 0;
  out.append(
      "<div class=\"scroll\"><table class=\"list gates stack\" "
      "id=\"gates\"><thead><tr>"
      "<th scope=\"col\">gate</th><th scope=\"col\">component</th>"
      "<th scope=\"col\">stage</th><th scope=\"col\">now</th>"
      "<th scope=\"col\">default</th>");
  if (target_emulation.has_value()) {
    absl::StrAppend(&out, "<th scope=\"col\">at the target ",
                    target_emulation->MajorMinorString(), "</th>");
  }
  out.append(
      "<th scope=\"col\">since</th>"
      "<th scope=\"col\" class=\"tlcol\">history ");
  absl::StrAppend(&out,
                  engine::Version::MajorMinor(axis.major, axis.first_minor)
                      .MajorMinorString(),
                  "\xE2\x80\x93", binary.MajorMinorString(),
                  "</th></tr></thead><tbody>");
  size_t shown = 0;
  for (const v1::FeatureDecision& d : features.features()) {
    if (!Matches(filter, d)) continue;
    ++shown;
    const engine::Feature* feature = catalog.FindFeature(d.name());
    const std::string id = IdToken(d.name());
    out.append("<tr id=\"gate-");
    out.append(id);
    out.append("\" data-name=\"");
    AppendEscaped(&out, d.name());
    out.append("\" data-component=\"");
    AppendEscaped(&out, d.component());
    absl::StrAppend(&out, "\" data-stage=\"", ProtoStageName(d.stage()),
                    "\"><th scope=\"row\"><a href=\"/ui/features/");
    AppendPathSegment(&out, d.name());
    out.append("\">");
    AppendWithCamelBreaks(&out, d.name());
    out.append("</a></th><td data-label=\"component\">");
    AppendEscaped(&out, d.component());
    out.append("</td>");
    AppendDecisionCells(&out, d);
    if (target_emulation.has_value()) {
      auto it = target_of.find(d.name());
      if (it == target_of.end()) {
        out.append("<td data-label=\"at the target\"></td>");
      } else {
        const v1::FeatureDecision& t = *it->second;
        const bool changes =
            t.enabled() != d.enabled() || t.stage() != d.stage();
        absl::StrAppend(&out, "<td data-label=\"at the target\" class=\"",
                        t.enabled() ? "on" : "off", changes ? " changes" : "",
                        "\" data-target-enabled=\"", t.enabled() ? "on" : "off",
                        "\">", t.enabled() ? "on" : "off");
        if (t.stage() != d.stage()) {
          absl::StrAppend(&out, " <span class=\"badge st-",
                          StageClass(ProtoStageToEngine(t.stage())), "\">",
                          StageTitle(ProtoStageToEngine(t.stage())), "</span>");
        }
        out.append("</td>");
      }
    }
    out.append("<td data-label=\"since\">");
    AppendEscaped(&out, d.since());
    out.append("</td><td class=\"tlcol\">");
    if (feature != nullptr) {
      const std::vector<TimelineSegment> segments =
          FeatureSegments(*feature, binary);
      AppendTimelineSvg(&out, d.name(), segments, axis, *emulation,
                        target_emulation ? &*target_emulation : nullptr);
    }
    out.append("</td></tr>");
  }
  out.append("</tbody></table></div>");
  absl::StrAppend(&out, "<p id=\"gate-count\" data-total=\"",
                  features.features_size(), "\">", shown, " of ",
                  features.features_size(), " gates shown.</p>");
  out.append(
      "<p class=\"legend\"><span class=\"sw st-alpha\"></span> Alpha "
      "<span class=\"sw st-beta\"></span> Beta <span class=\"sw st-ga\"></span>"
      " GA <span class=\"sw st-deprecated\"></span> Deprecated; solid: on by "
      "default, pale: off; dark base: locked to its default; the line marks "
      "the emulation version.</p>");
  AppendFoot(&out, &context);
  return out;
}

namespace {

// A gate's spec history as each release line's binary has it (Kubernetes
// rewrote histories between releases, and removed gates): one row per line.
void AppendLineHistories(std::string* out, const PageContext& context,
                         absl::string_view name) {
  if (context.snapshot->lines.size() < 2) return;
  out->append(
      "<h2>By kube-apiserver release line</h2><div class=\"scroll\">"
      "<table class=\"list\" id=\"lines\"><thead><tr>"
      "<th scope=\"col\">binary</th><th scope=\"col\">versioned specs "
      "(version: stage, default, locked)</th></tr></thead><tbody>");
  for (const runtime::ServingLine& line : context.snapshot->lines) {
    out->append("<tr><td>");
    AppendEscaped(out, line.catalog->binary_version.ToString());
    out->append("</td><td>");
    const engine::Feature* feature = line.catalog->FindFeature(name);
    if (feature == nullptr) {
      out->append("<em>not registered by this binary</em>");
    } else {
      bool first = true;
      for (const engine::FeatureSpec& spec : feature->specs) {
        if (!first) out->append("; ");
        first = false;
        absl::StrAppend(out, spec.version.MajorMinorString(), ": ",
                        StageTitle(spec.pre_release), ", ",
                        spec.default_enabled ? "on" : "off",
                        spec.lock_to_default ? ", locked" : "");
      }
    }
    out->append("</td></tr>");
  }
  out->append("</tbody></table></div>");
}

}  // namespace

absl::StatusOr<std::string> RenderFeature(const PageContext& context,
                                          absl::string_view name) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  const engine::Feature* feature = catalog.FindFeature(name);
  if (feature == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("feature gate \"", name, "\" is not in the catalog"));
  }
  v1::GetFeatureRequest request;
  request.set_name(feature->name);
  v1::GetFeatureResponse d;
  if (absl::Status s =
          context.handlers->GetFeature(*context.snapshot, request, &d);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<engine::Version> emulation =
      engine::Version::Parse(d.versions().emulation_version());
  if (!emulation.ok()) return emulation.status();
  const engine::Version binary = catalog.binary_version.ToMajorMinor();

  std::string out;
  AppendHead(&out, feature->name, View::kFeatures, &context);
  out.append(
      "<p class=\"crumbs\"><a href=\"/ui/features\">Feature gates</a> / "
      "<a href=\"/ui/features#gate-");
  out.append(IdToken(feature->name));
  out.append("\">in the table</a></p><h1 id=\"gate\">");
  AppendEscaped(&out, feature->name);
  out.append("</h1><dl class=\"kv\"><dt>Component</dt><dd>");
  AppendEscaped(&out,
                feature->component.empty() ? "(none)" : feature->component);
  out.append("</dd><dt>At emulation version ");
  AppendEscaped(&out, d.versions().emulation_version());
  absl::StrAppend(
      &out, "</dt><dd id=\"state\"><span class=\"badge st-",
      StageClass(ProtoStageToEngine(d.stage())), "\">",
      StageTitle(ProtoStageToEngine(d.stage())), "</span> ",
      d.enabled() ? "<strong class=\"on\">on</strong>"
                  : "<strong class=\"off\">off</strong>",
      ", ", d.default_enabled() ? "on" : "off", " by default",
      d.locked_to_default() ? ", locked to its default" : "",
      d.overridden()
          ? ", set by the cluster's <code class=\"flag\">--feature-gates</code>"
          : "",
      "</dd><dt>Why</dt><dd>");
  AppendEscaped(&out, d.reason());
  out.append("</dd>");
  if (feature->removed.has_value()) {
    out.append("<dt>Planned removal</dt><dd>");
    AppendEscaped(&out, feature->removed->MajorMinorString());
    out.append("</dd>");
  }
  out.append("</dl><h2>History</h2>");
  const std::vector<TimelineSegment> segments =
      FeatureSegments(*feature, binary);
  TimelineAxis axis;
  axis.major = binary.major();
  axis.first_minor =
      segments.empty() || segments.front().from.major() != binary.major()
          ? binary.minor()
          : segments.front().from.minor();
  axis.last_minor = binary.minor();
  axis.release_width = 36;
  axis.height = 26;
  axis.labels = true;
  out.append("<div class=\"scroll\">");
  AppendTimelineSvg(&out, feature->name, segments, axis, *emulation);
  out.append("</div><p class=\"described\" id=\"history-text\">");
  AppendEscaped(&out, DescribeSegments(segments));
  out.append(
      "</p><div class=\"scroll\"><table class=\"list\" id=\"specs\"><thead><tr>"
      "<th scope=\"col\">version</th><th scope=\"col\">stage</th>"
      "<th scope=\"col\">default</th><th scope=\"col\">locked</th>"
      "<th scope=\"col\">min-compatibility</th></tr></thead><tbody>");
  for (const engine::FeatureSpec& spec : feature->specs) {
    absl::StrAppend(&out, "<tr><td>", spec.version.MajorMinorString(),
                    "</td><td><span class=\"badge st-",
                    StageClass(spec.pre_release), "\">",
                    StageTitle(spec.pre_release), "</span></td><td>",
                    spec.default_enabled ? "on" : "off", "</td><td>",
                    spec.lock_to_default ? "yes" : "no", "</td><td>",
                    spec.min_compatibility_version.has_value()
                        ? spec.min_compatibility_version->MajorMinorString()
                        : "",
                    "</td></tr>");
  }
  out.append("</tbody></table></div>");
  AppendLineHistories(&out, context, feature->name);
  AppendFoot(&out, &context);
  return out;
}

absl::StatusOr<std::string> RenderApis(const PageContext& context) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  v1::ListAPIVersionsResponse apis;
  if (absl::Status s = context.handlers->ListAPIVersions(
          *context.snapshot, v1::ListAPIVersionsRequest(), &apis);
      !s.ok()) {
    return s;
  }
  // The catalog's lifecycle of each group/version/resource.
  absl::flat_hash_map<std::string, const engine::APIResource*> lifecycle;
  for (const engine::APIGroupVersion& gv : catalog.apis) {
    for (const engine::APIResource& r : gv.resources) {
      lifecycle[absl::StrCat(gv.group, "/", gv.version, "/", r.resource)] = &r;
    }
  }
  std::string out;
  out.reserve(64 << 10);
  AppendHead(&out, "APIs", View::kApis, &context);
  out.append("<h1>APIs</h1><p>Served at emulation version ");
  AppendEscaped(&out, apis.versions().emulation_version());
  out.append(" (binary ");
  AppendEscaped(&out, apis.versions().binary_version());
  absl::StrAppend(
      &out,
      ", with the cluster's <code class=\"flag\">--runtime-config</code>): ",
      apis.group_versions_size(), " group-versions.</p>");
  out.append(
      "<div class=\"scroll\"><table class=\"list apis stack\" "
      "id=\"served\"><thead><tr>"
      "<th scope=\"col\">group/version</th><th scope=\"col\">resources</th>"
      "</tr></thead><tbody>");
  absl::flat_hash_set<std::string> served;
  for (const v1::APIGroupVersion& gv : apis.group_versions()) {
    const std::string group_version =
        gv.group().empty() ? gv.version()
                           : absl::StrCat(gv.group(), "/", gv.version());
    served.insert(absl::StrCat(gv.group(), "/", gv.version()));
    out.append("<tr data-group-version=\"");
    AppendEscaped(&out, group_version);
    out.append("\"><th scope=\"row\" title=\"");
    AppendEscaped(&out, gv.reason());
    out.append("\">");
    AppendEscaped(&out, group_version);
    out.append("</th><td><ul class=\"resources\">");
    for (const std::string& resource : gv.resources()) {
      auto it = lifecycle.find(
          absl::StrCat(gv.group(), "/", gv.version(), "/", resource));
      const engine::APIResource* r =
          it == lifecycle.end() ? nullptr : it->second;
      const bool deprecated = r != nullptr && r->deprecated.has_value();
      out.append(deprecated ? "<li class=\"deprecated\">" : "<li>");
      AppendEscaped(&out, resource);
      if (deprecated) {
        out.append(" <span class=\"note\">deprecated ");
        AppendEscaped(&out, r->deprecated->MajorMinorString());
        if (r->removed.has_value()) {
          out.append(", removed in ");
          AppendEscaped(&out, r->removed->MajorMinorString());
        }
        if (!r->replacement.empty()) {
          out.append("; use ");
          AppendEscaped(&out, r->replacement);
        }
        out.append("</span>");
      }
      out.append("</li>");
    }
    out.append("</ul></td></tr>");
  }
  out.append("</tbody></table></div>");

  out.append(
      "<h2>In the catalog, not served now</h2><div class=\"scroll\"><table "
      "class=\"list apis stack\" id=\"not-served\"><thead><tr><th "
      "scope=\"col\">group/version</th><th scope=\"col\">resources and their "
      "lifecycle</th></tr></thead><tbody>");
  size_t not_served = 0;
  for (const engine::APIGroupVersion& gv : catalog.apis) {
    if (served.contains(absl::StrCat(gv.group, "/", gv.version))) continue;
    ++not_served;
    const std::string group_version =
        gv.group.empty() ? gv.version : absl::StrCat(gv.group, "/", gv.version);
    out.append("<tr><th scope=\"row\">");
    AppendEscaped(&out, group_version);
    out.append("</th><td><ul class=\"resources\">");
    for (const engine::APIResource& r : gv.resources) {
      out.append("<li>");
      AppendEscaped(&out, r.resource);
      std::vector<std::string> notes;
      if (r.introduced.has_value()) {
        notes.push_back(
            absl::StrCat("introduced ", r.introduced->MajorMinorString()));
      }
      if (r.deprecated.has_value()) {
        notes.push_back(
            absl::StrCat("deprecated ", r.deprecated->MajorMinorString()));
      }
      if (r.removed.has_value()) {
        notes.push_back(
            absl::StrCat("removed ", r.removed->MajorMinorString()));
      }
      if (!r.replacement.empty()) {
        notes.push_back(absl::StrCat("use ", r.replacement));
      }
      if (!notes.empty()) {
        out.append(" <span class=\"note\">");
        for (size_t i = 0; i < notes.size(); ++i) {
          if (i > 0) out.append(", ");
          AppendEscaped(&out, notes[i]);
        }
        out.append("</span>");
      }
      out.append("</li>");
    }
    out.append("</ul></td></tr>");
  }
  out.append("</tbody></table></div>");
  absl::StrAppend(&out, "<p>", not_served,
                  " group-versions of the catalog are not served at these "
                  "versions (off by default, removed, or not yet "
                  "introduced).</p>");
  absl::StatusOr<std::optional<Target>> target = UpgradeTargetOf(context);
  if (!target.ok()) return target.status();
  if (target->has_value()) {
    v1::ListAPIVersionsRequest request;
    *request.mutable_versions() = (*target)->versions;
    v1::ListAPIVersionsResponse at_target;
    if (absl::Status s = context.handlers->ListAPIVersions(*context.snapshot,
                                                           request, &at_target);
        !s.ok()) {
      return s;
    }
    // group/version -> resources, now and at the target.
    auto index = [](const v1::ListAPIVersionsResponse& r) {
      std::map<std::string, std::vector<std::string>> by_group_version;
      for (const v1::APIGroupVersion& gv : r.group_versions()) {
        by_group_version[gv.group().empty()
                             ? gv.version()
                             : absl::StrCat(gv.group(), "/", gv.version())] = {
            gv.resources().begin(), gv.resources().end()};
      }
      return by_group_version;
    };
    const auto now = index(apis);
    const auto then = index(at_target);
    std::vector<std::pair<std::string, std::string>> stops, starts;
    for (const auto& [gv, resources] : now) {
      auto it = then.find(gv);
      for (const std::string& r : resources) {
        if (it == then.end() ||
            !std::binary_search(it->second.begin(), it->second.end(), r)) {
          stops.emplace_back(gv, r);
        }
      }
    }
    for (const auto& [gv, resources] : then) {
      auto it = now.find(gv);
      for (const std::string& r : resources) {
        if (it == now.end() ||
            !std::binary_search(it->second.begin(), it->second.end(), r)) {
          starts.emplace_back(gv, r);
        }
      }
    }
    out.append("<h2 id=\"at-target\">What changes at the upgrade target (");
    AppendEmulationAndMin(&out, at_target.versions());
    out.append(")</h2>");
    auto list =
        [&out](absl::string_view id, absl::string_view title,
               const std::vector<std::pair<std::string, std::string>>& items) {
          absl::StrAppend(&out, "<h3>", title, ": ", items.size(),
                          "</h3><ul class=\"changes\" id=\"", id, "\">");
          for (const auto& [gv, r] : items) {
            out.append("<li>");
            AppendEscaped(&out, gv);
            out.append(" ");
            AppendEscaped(&out, r);
            out.append("</li>");
          }
          out.append("</ul>");
        };
    list("stops-serving", "Stop being served", stops);
    list("starts-serving", "Start being served", starts);
  }
  AppendFoot(&out, &context);
  return out;
}

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
        "<code>/audit/v1/events</code> (README, \"Seeing the whole "
        "cluster\").</p>");
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

absl::StatusOr<std::string> RenderPlan(const PageContext& context) {
  absl::StatusOr<std::optional<Target>> target = UpgradeTargetOf(context);
  if (!target.ok()) return target.status();
  std::string out;
  out.reserve(32 << 10);
  AppendHead(&out, "Upgrade plan", View::kPlan, &context);
  out.append("<h1>Upgrade plan</h1>");
  if (!target->has_value()) {
    out.append(
        "<p class=\"empty\" id=\"no-target\">The catalog has no upgrade "
        "target. Set <code>cluster.upgradeTarget</code> (say "
        "<code>{emulationVersion: \"1.36\"}</code>) to see the plan from the "
        "cluster section's versions to it here; <code>PlanUpgrade</code> "
        "answers for any target.</p>");
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
    return s;
  }
  out.append("<p class=\"plan-summary\">From ");
  AppendEmulationAndMin(&out, plan.from());
  out.append(" to ");
  AppendEmulationAndMin(&out, plan.to());
  absl::StrAppend(&out, " (binary ");
  AppendEscaped(&out, plan.to().binary_version());
  absl::StrAppend(&out, "): ", plan.steps_size(),
                  " steps, <strong id=\"blockers\" class=\"",
                  plan.blockers() > 0 ? "bad" : "ok", "\">", plan.blockers(),
                  plan.blockers() == 1 ? " blocker" : " blockers",
                  "</strong>.</p><p class=\"note\">");
  AppendEscaped(&out, plan.reason());
  if (!absl::EndsWith(plan.reason(), ".")) out.append(".");
  out.append(" Clients checked: ");
  AppendEscaped(&out, plan.clients_checked());
  out.append(".</p><ul class=\"compact sections\" id=\"plan-index\">");
  const std::pair<absl::string_view, int> index[] = {
      {"flags", plan.flags_size()},
      {"feature-gates", plan.feature_gates_size()},
      {"apis", plan.apis_size()},
      {"storage", plan.storage_size()},
      {"rollback", plan.rollback_size()},
      {"clients", plan.clients_size()}};
  for (const auto& [id, count] : index) {
    absl::StrAppend(&out, "<li><a href=\"#plan-", id, "\">", id,
                    "</a> <span class=\"count\">", count, "</span></li>");
  }
  out.append("</ul>");

  out.append(
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
    absl::StrAppend(&out, "<tr", blocking > 0 ? " class=\"blocking\"" : "",
                    "><td data-label=\"#\">", step.number(),
                    "</td><th scope=\"row\">");
    AppendEscaped(&out, step.name());
    out.append("</th><td data-label=\"versions\">");
    AppendEscaped(&out, step.versions().binary_version());
    out.append(" / ");
    AppendEscaped(&out, step.versions().emulation_version());
    out.append(" / ");
    AppendEscaped(&out, step.versions().min_compatibility_version());
    out.append("</td><td data-label=\"what to do\">");
    AppendEscaped(&out, step.action());
    out.append("</td><td data-label=\"rollback to\">");
    AppendEscaped(&out, step.rollback_to());
    absl::StrAppend(&out, "</td><td class=\"num\" data-label=\"items\">",
                    step.items_size());
    if (blocking > 0) {
      absl::StrAppend(&out, " <span class=\"badge v-too-old\">", blocking,
                      " blocking</span>");
    }
    out.append("</td></tr>");
  }
  out.append("</tbody></table></div>");

  AppendPlanItems(
      &out,
      {"flags", "Flags",
       "Flags kube-apiserver would refuse to start with at a step."},
      plan.flags());
  AppendPlanItems(&out,
                  {"feature-gates", "Feature gates",
                   "Gates whose enabled state, default or stage changes."},
                  plan.feature_gates());
  AppendPlanItems(
      &out,
      {"apis", "APIs",
       "Group-versions whose resources stop or start being served."},
      plan.apis());
  AppendPlanItems(&out,
                  {"storage", "Storage",
                   "Storage version changes, and KEP-2339 disagreement while a "
                   "step rolls out."},
                  plan.storage());
  AppendPlanItems(&out,
                  {"rollback", "Rollback",
                   "The oldest release the cluster can roll back to after each "
                   "step."},
                  plan.rollback());
  AppendPlanItems(&out,
                  {"clients", "Clients",
                   "Clients (recorded by this replica, or the fleet's "
                   "through Prometheus: see Clients checked) outside the skew "
                   "allowance at a step."},
                  plan.clients());
  AppendFoot(&out, &context);
  return out;
}

}  // namespace compatd::ui
