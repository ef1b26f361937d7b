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

// CheckSkew's allowance for `component` at `versions` (null: the cluster's),
// widening [*lo, *hi] to the minor versions it allows on the binary's major.
absl::Status Allowance(const PageContext& context,
                       const v1::VersionContext* versions,
                       const std::string& component,
                       v1::CheckSkewResponse* response, uint64_t* lo,
                       uint64_t* hi) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  v1::CheckSkewRequest request;
  if (versions != nullptr) *request.mutable_versions() = *versions;
  request.set_component(component);
  request.set_client_version(catalog.binary_version.MajorMinorString());
  if (absl::Status s =
          context.handlers->CheckSkew(*context.snapshot, request, response);
      !s.ok()) {
    return s;
  }
  const uint64_t major = catalog.binary_version.major();
  uint64_t mj = 0, mn = 0;
  if (engine::Version::ParseMajorMinorNoAlloc(response->min_version(), &mj,
                                              &mn) &&
      mj == major) {
    *lo = std::min(*lo, mn);
  }
  if (engine::Version::ParseMajorMinorNoAlloc(response->max_version(), &mj,
                                              &mn) &&
      mj == major) {
    *hi = std::max(*hi, mn);
  }
  return absl::OkStatus();
}

// The lowest and highest minor version any skew rule allows at `versions`
// (null: the cluster's): the columns a client matrix needs.
absl::Status AllowedSpan(const PageContext& context,
                         const v1::VersionContext* versions, uint64_t* lo,
                         uint64_t* hi) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  for (const engine::SkewRule& rule : engine::SkewRulesInForce(catalog)) {
    for (const std::string& component : rule.components) {
      v1::CheckSkewResponse response;
      if (absl::Status s =
              Allowance(context, versions, component, &response, lo, hi);
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

// The matrix's rows and its columns: the minor versions [first, last] of
// `major`, between the two edge columns.
struct Matrix {
  uint64_t major = 0;
  uint64_t first = 0;
  uint64_t last = 0;
  size_t columns = 0;
  std::vector<Row> rows;
};

// Every component a skew rule names (`known`), then every other one seen.
std::vector<std::string> MatrixComponents(
    const engine::Catalog& catalog, const v1::ListClientsResponse& clients,
    absl::flat_hash_set<std::string>* known) {
  std::vector<std::string> components;
  for (const engine::SkewRule& rule : engine::SkewRulesInForce(catalog)) {
    for (const std::string& component : rule.components) {
      if (known->insert(component).second) components.push_back(component);
    }
  }
  absl::flat_hash_set<std::string> seen_components;
  for (const v1::ObservedClient& client : clients.clients()) {
    if (!known->contains(client.component()) &&
        seen_components.insert(client.component()).second) {
      components.push_back(client.component());
    }
  }
  return components;
}

// One row per component with its allowed range, and the columns: three
// releases below the lowest allowed minimum to two above the highest allowed
// maximum.
absl::Status MatrixRows(const PageContext& context,
                        const v1::ListClientsResponse& clients,
                        const v1::VersionContext* versions, uint64_t span_lo,
                        uint64_t span_hi, Matrix* matrix) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  const uint64_t major = catalog.binary_version.major();
  absl::flat_hash_set<std::string> known;
  uint64_t lo = span_lo, hi = span_hi;
  for (const std::string& component :
       MatrixComponents(catalog, clients, &known)) {
    Row row;
    row.component = component;
    if (known.contains(component)) {
      v1::CheckSkewResponse response;
      if (absl::Status s =
              Allowance(context, versions, component, &response, &lo, &hi);
          !s.ok()) {
        return s;
      }
      row.has_rule = true;
      row.min_version = response.min_version();
      row.max_version = response.max_version();
    }
    matrix->rows.push_back(std::move(row));
  }
  if (lo == UINT64_MAX || hi < lo) {
    lo = hi = catalog.binary_version.minor();
  }
  matrix->major = major;
  matrix->first = lo >= 3 ? lo - 3 : 0;
  matrix->last = hi + 2;
  matrix->columns = static_cast<size_t>(matrix->last - matrix->first + 1);
  return absl::OkStatus();
}

// Every cell's verdict: CheckSkew of each column's version.
absl::Status MatrixVerdicts(const PageContext& context,
                            const v1::VersionContext* versions,
                            Matrix* matrix) {
  const uint64_t major = matrix->major, first = matrix->first;
  const size_t columns = matrix->columns;
  std::vector<Row>& rows = matrix->rows;
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
  return absl::OkStatus();
}

// The clients seen, counted into their version's cell (older and newer ones
// into the edges, which list their versions).
void PlaceClients(const v1::ListClientsResponse& clients, Matrix* matrix) {
  const uint64_t major = matrix->major, first = matrix->first;
  const uint64_t last = matrix->last;
  const size_t columns = matrix->columns;
  std::vector<Row>& rows = matrix->rows;
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
}

void AppendMatrixHead(std::string* out, const Matrix& matrix,
                      absl::string_view id) {
  const uint64_t major = matrix.major, first = matrix.first;
  absl::StrAppend(out, "<div class=\"scroll\"><table class=\"matrix\" id=\"",
                  id, "\">");
  out->append(
      "<thead><tr><th scope=\"col\">component</th>"
      "<th scope=\"col\">allowed</th>");
  absl::StrAppend(out, "<th scope=\"col\">&lt;",
                  engine::Version::MajorMinor(major, first).MajorMinorString(),
                  "</th>");
  for (size_t i = 0; i < matrix.columns; ++i) {
    absl::StrAppend(
        out, "<th scope=\"col\">",
        engine::Version::MajorMinor(major, first + i).MajorMinorString(),
        "</th>");
  }
  absl::StrAppend(
      out, "<th scope=\"col\">&gt;",
      engine::Version::MajorMinor(major, matrix.last).MajorMinorString(),
      "</th></tr></thead><tbody>");
}

// Cell `c` of `row` (0 and the last: the edges).
void AppendMatrixCell(std::string* out, const PageContext& context,
                      const Matrix& matrix, const Row& row, size_t c) {
  const uint64_t major = matrix.major, first = matrix.first;
  const Cell& cell = row.cells[c];
  const bool edge = c == 0 || c == row.cells.size() - 1;
  std::string version = edge ? std::string()
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
}

void AppendMatrixRow(std::string* out, const PageContext& context,
                     const Matrix& matrix, const Row& row) {
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
    AppendMatrixCell(out, context, matrix, row, c);
    out->append("</td>");
  }
  out->append("</tr>");
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
  Matrix matrix;
  if (absl::Status s =
          MatrixRows(context, clients, versions, span_lo, span_hi, &matrix);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = MatrixVerdicts(context, versions, &matrix); !s.ok()) {
    return s;
  }
  PlaceClients(clients, &matrix);
  AppendMatrixHead(out, matrix, id);
  for (const Row& row : matrix.rows) AppendMatrixRow(out, context, matrix, row);
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

// The client's verdict at the target: CheckSkew there, for the versions it
// can read.
void AppendTargetVerdict(std::string* out, const PageContext& context,
                         const v1::ObservedClient& client,
                         const Target& target) {
  v1::SkewVerdict at_target = v1::SKEW_VERDICT_UNKNOWN;
  std::string range;
  uint64_t major = 0, minor = 0;
  if (client.verdict() != v1::SKEW_VERDICT_UNKNOWN &&
      client.verdict() != v1::SKEW_VERDICT_UNSPECIFIED &&
      engine::Version::ParseMajorMinorNoAlloc(client.version(), &major,
                                              &minor)) {
    v1::CheckSkewRequest request;
    *request.mutable_versions() = target.versions;
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
    if (target.has_value()) AppendTargetVerdict(out, context, client, *target);
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

}  // namespace

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

}  // namespace compatd::ui
