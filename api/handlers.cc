#include "api/handlers.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "api/catalog_answers.h"
#include "api/cel_check.h"
#include "api/convert.h"
#include "api/scan.h"
#include "base/status_macros.h"
#include "engine/api_availability.h"
#include "engine/api_names.h"
#include "engine/api_use.h"
#include "engine/catalog_lint.h"
#include "engine/catalog_set.h"
#include "engine/crd_removal.h"
#include "engine/effective_version.h"
#include "engine/features.h"
#include "engine/skew.h"
#include "engine/storage_agreement.h"
#include "engine/storage_version.h"
#include "engine/upgrade_plan.h"
#include "google/protobuf/timestamp.pb.h"

namespace compatd::api {
namespace {
// CheckCelExpression's Answer lives in api/cel_check.h; EvaluateItem below
// calls it too.
using ::compatd::api::Answer;

using engine::Catalog;
using engine::EffectiveVersions;
using engine::VersionQuery;

void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(t);
  out->set_seconds(nanos / 1000000000);
  out->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

absl::Status Required(absl::string_view field, absl::string_view example) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": required, e.g. ", example));
}

void FillDecision(const engine::FeatureDecision& d, v1::FeatureDecision* out) {
  out->set_name(d.feature->name);
  out->set_enabled(d.enabled);
  out->set_stage(ToProtoStage(d.stage));
  out->set_default_enabled(d.default_enabled);
  out->set_locked_to_default(d.locked_to_default);
  out->set_overridden(d.overridden);
  out->set_component(d.feature->component);
  if (d.spec != nullptr) out->set_since(d.spec->version.MajorMinorString());
  d.AppendReason(out->mutable_reason());
}

// What the reason adds about patches: a request naming a patch newer than
// every patch the catalog knows is told which patch answered; one naming an
// earlier patch whose form of this gate the catalog records is told it was
// answered as that patch, and one whose form the catalog has only as a phrase
// is told what that patch had.
void AppendPatchNote(const Catalog& catalog, const engine::Version& binary,
                     absl::string_view feature, std::string* reason) {
  if (std::string newer = engine::NewerPatchNote(catalog, binary);
      !newer.empty()) {
    absl::StrAppend(reason, "; note: ", newer);
    return;
  }
  if (catalog.patch_changes.empty() || binary.components().size() < 3 ||
      binary.CompareMajorMinor(catalog.binary_version) != 0) {
    return;
  }
  for (const engine::PatchChange& change : catalog.patch_changes) {
    if (change.feature != feature || binary >= change.since) continue;
    if (change.before_index >= 0 || !change.registered_before) {
      absl::StrAppend(reason, "; as kube-apiserver ", binary.ToString(),
                      " has it (", change.since.ToString(),
                      " changed this gate; earlier patches had it ",
                      change.before, ")");
    } else {
      absl::StrAppend(reason,
                      "; note: this answer is from the catalog of "
                      "kube-apiserver ",
                      catalog.binary_version.ToString(), ", and ",
                      change.since.ToString(),
                      " changed this gate: kube-apiserver ", binary.ToString(),
                      " had it ", change.before);
    }
    return;
  }
}

// Each RPC's logic against one snapshot and one (already merged) version
// context.

absl::Status Answer(const runtime::ServingLine& line, const VersionQuery& query,
                    const v1::GetFeatureRequest& request,
                    v1::GetFeatureResponse* response) {
  const Catalog& catalog = *line.catalog;
  if (request.name().empty()) {
    return Required("name", "\"WatchList\" (a gate's --feature-gates name)");
  }
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           engine::ResolveEffectiveVersions(catalog, query));
  COMPATD_ASSIGN_OR_RETURN(
      engine::FeatureDecision d,
      engine::DecideFeature(catalog, versions, query, request.name()));
  FillCommon(line, versions, response);
  d.AppendReason(response->mutable_reason());
  AppendPatchNote(catalog, versions.binary, d.feature->name,
                  response->mutable_reason());
  response->set_name(d.feature->name);
  response->set_enabled(d.enabled);
  response->set_stage(ToProtoStage(d.stage));
  response->set_default_enabled(d.default_enabled);
  response->set_locked_to_default(d.locked_to_default);
  response->set_overridden(d.overridden);
  response->set_component(d.feature->component);
  if (d.spec != nullptr) {
    response->set_since(d.spec->version.MajorMinorString());
  }
  return absl::OkStatus();
}

absl::Status Answer(const runtime::ServingLine& line, const VersionQuery& query,
                    const v1::ListFeaturesRequest& request,
                    v1::ListFeaturesResponse* response) {
  const Catalog& catalog = *line.catalog;
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           engine::ResolveEffectiveVersions(catalog, query));
  COMPATD_ASSIGN_OR_RETURN(
      std::vector<engine::FeatureDecision> decisions,
      engine::DecideFeatures(catalog, versions, query, request.component()));
  int enabled = 0;
  response->mutable_features()->Reserve(static_cast<int>(decisions.size()));
  for (const engine::FeatureDecision& d : decisions) {
    FillDecision(d, response->add_features());
    if (d.enabled) ++enabled;
  }
  FillCommon(
      line, versions,
      absl::StrFormat("%d feature gates%s at emulation version %s, %d enabled",
                      decisions.size(),
                      request.component().empty()
                          ? ""
                          : absl::StrCat(" of ", request.component()),
                      versions.emulation.MajorMinorString(), enabled),
      response);
  return absl::OkStatus();
}

absl::Status Answer(const runtime::ServingLine& line, const VersionQuery& query,
                    const v1::GetStorageVersionRequest& request,
                    v1::GetStorageVersionResponse* response) {
  const Catalog& catalog = *line.catalog;
  if (request.resource().empty()) {
    return Required("resource", "\"deployments\" (plural, lowercase)");
  }
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           engine::ResolveEffectiveVersions(catalog, query));
  COMPATD_ASSIGN_OR_RETURN(
      engine::StorageVersionDecision d,
      engine::DecideStorageVersion(catalog, versions, request.group(),
                                   request.resource()));
  FillCommon(line, versions, std::move(d.reason), response);
  response->set_group(std::move(d.group));
  response->set_resource(std::move(d.resource));
  response->set_kind(std::move(d.kind));
  response->set_version(std::move(d.version));
  response->set_storage_version_hash(std::move(d.storage_version_hash));
  for (std::string& v : d.decodable_versions) {
    response->add_decodable_versions(std::move(v));
  }
  response->set_fallback(d.fallback);
  response->set_overridden(d.overridden);
  return absl::OkStatus();
}

absl::Status Answer(const runtime::ServingLine& line, const VersionQuery& query,
                    const v1::ListAPIVersionsRequest&,
                    v1::ListAPIVersionsResponse* response) {
  const Catalog& catalog = *line.catalog;
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           engine::ResolveEffectiveVersions(catalog, query));
  COMPATD_ASSIGN_OR_RETURN(std::vector<engine::ServedGroupVersion> served,
                           engine::ListServedAPIs(catalog, versions, query));
  size_t resources = 0;
  for (engine::ServedGroupVersion& gv : served) {
    v1::APIGroupVersion* out = response->add_group_versions();
    out->set_group(std::move(gv.group));
    out->set_version(std::move(gv.version));
    resources += gv.resources.size();
    for (std::string& r : gv.resources) out->add_resources(std::move(r));
    out->set_reason(std::move(gv.reason));
  }
  FillCommon(line, versions,
             absl::StrFormat("%d group-versions serving %d resources at "
                             "emulation version %s",
                             served.size(), resources,
                             versions.emulation.MajorMinorString()),
             response);
  return absl::OkStatus();
}

absl::Status Answer(const runtime::ServingLine& line, const VersionQuery& query,
                    const v1::CheckSkewRequest& request,
                    v1::CheckSkewResponse* response) {
  const Catalog& catalog = *line.catalog;
  if (request.component().empty()) {
    return Required("component", "\"kubelet\"");
  }
  if (request.client_version().empty()) {
    return Required("client_version", "\"1.34\" or \"v1.34.2\"");
  }
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           engine::ResolveEffectiveVersions(catalog, query));
  COMPATD_ASSIGN_OR_RETURN(
      engine::SkewDecision d,
      engine::CheckSkew(catalog, versions, request.component(),
                        request.client_version()));
  FillCommon(line, versions, response);
  d.AppendReason(response->mutable_reason());
  response->set_allowed(d.verdict == engine::SkewVerdict::kAllowed);
  response->set_verdict(ToProtoVerdict(d.verdict));
  response->set_min_version(d.min_version.MajorMinorString());
  response->set_max_version(d.max_version.MajorMinorString());
  return absl::OkStatus();
}

absl::Status Answer(const runtime::ServingLine& line, const VersionQuery& query,
                    const v1::ResolveVersionsRequest&,
                    v1::ResolveVersionsResponse* response) {
  const Catalog& catalog = *line.catalog;
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           engine::ResolveEffectiveVersions(catalog, query));
  FillCommon(line, versions,
             absl::StrFormat("binary %s emulating %s, compatible down to %s",
                             versions.binary.ToString(),
                             versions.emulation.MajorMinorString(),
                             versions.min_compatibility.MajorMinorString()),
             response);
  response->set_major(absl::StrCat(versions.binary.major()));
  response->set_minor(absl::StrCat(versions.binary.minor()));
  response->set_emulation_major(absl::StrCat(versions.emulation.major()));
  response->set_emulation_minor(absl::StrCat(versions.emulation.minor()));
  response->set_min_compatibility_major(
      absl::StrCat(versions.min_compatibility.major()));
  response->set_min_compatibility_minor(
      absl::StrCat(versions.min_compatibility.minor()));
  response->set_git_version(absl::StrCat("v", versions.binary.ToString()));
  return absl::OkStatus();
}

absl::Status Answer(const runtime::ServingLine& line, const VersionQuery& query,
                    const v1::ComputeStorageVersionAgreementRequest& request,
                    v1::ComputeStorageVersionAgreementResponse* response) {
  const Catalog& catalog = *line.catalog;
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           engine::ResolveEffectiveVersions(catalog, query));
  std::vector<engine::ServerStorageVersion> reports;
  reports.reserve(request.storage_versions_size());
  for (const v1::ServerStorageVersion& in : request.storage_versions()) {
    engine::ServerStorageVersion& r = reports.emplace_back();
    r.apiserver_id = in.apiserver_id();
    r.encoding_version = in.encoding_version();
    r.decodable_versions.assign(in.decodable_versions().begin(),
                                in.decodable_versions().end());
    r.served_versions.assign(in.served_versions().begin(),
                             in.served_versions().end());
  }
  const std::vector<std::string> participants(request.participants().begin(),
                                              request.participants().end());
  COMPATD_ASSIGN_OR_RETURN(
      engine::StorageVersionAgreement a,
      engine::ComputeStorageVersionAgreement(
          reports, participants, request.group(), request.resource()));
  FillCommon(line, versions, std::move(a.reason), response);
  response->set_common_encoding_version(a.common_encoding_version);
  v1::StorageVersionCondition* condition = response->mutable_condition();
  condition->set_type(a.condition_type);
  condition->set_status(a.condition_status);
  condition->set_reason(a.condition_reason);
  condition->set_message(a.condition_message);
  for (const engine::ServerStorageVersion& r : a.counted) {
    v1::ServerStorageVersion* out = response->add_storage_versions();
    out->set_apiserver_id(r.apiserver_id);
    out->set_encoding_version(r.encoding_version);
    for (const std::string& v : r.decodable_versions) {
      out->add_decodable_versions(v);
    }
    for (const std::string& v : r.served_versions) out->add_served_versions(v);
  }
  for (const std::string& id : a.ignored_apiserver_ids) {
    response->add_ignored_apiserver_ids(id);
  }
  response->set_object_name(a.object_name);
  return absl::OkStatus();
}

// The API's inline history as the engine's; errors name the field
// ("history.releases[2].release"). 0 means the default for the counts.
absl::StatusOr<engine::CRDHistory> HistoryFromProto(
    const v1::CRDVersionHistory& in, absl::string_view name) {
  engine::CRDHistory h;
  h.name = std::string(name);
  if (in.upgrade_span() != 0) h.upgrade_span = in.upgrade_span();
  if (in.deprecation_releases() != 0) {
    h.deprecation_releases = in.deprecation_releases();
  }
  h.revert_buffer_releases = in.revert_buffer_releases();
  h.releases.reserve(in.releases_size());
  for (int i = 0; i < in.releases_size(); ++i) {
    const v1::CRDReleaseVersions& r = in.releases(i);
    const std::string field = absl::StrFormat("history.releases[%d]", i);
    if (r.release().empty()) {
      return Required(absl::StrCat(field, ".release"), "\"v1.9\"");
    }
    absl::StatusOr<engine::Version> version =
        engine::Version::Parse(r.release());
    if (!version.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.release: %s; expected a project release like \"v1.9\" or "
          "\"1.10.2\"",
          field, version.status().message()));
    }
    engine::CRDRelease& out = h.releases.emplace_back();
    out.release = r.release();
    out.version = *std::move(version);
    out.storage_version_migration = r.storage_version_migration();
    out.managed_fields_cleanup = r.managed_fields_cleanup();
    for (const v1::CRDVersionState& v : r.versions()) {
      out.versions.push_back(engine::CRDVersion{v.name(), v.served(),
                                                v.storage(), v.deprecated()});
    }
  }
  COMPATD_RETURN_IF_ERROR(engine::ValidateCRDHistory(h, "history"));
  return h;
}

absl::Status Answer(const runtime::ServingLine& line, const VersionQuery& query,
                    const v1::PlanVersionRemovalRequest& request,
                    v1::PlanVersionRemovalResponse* response) {
  const Catalog& catalog = *line.catalog;
  if (request.version().empty()) {
    return Required("version", "\"v1beta1\" (the CRD version to retire)");
  }
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           engine::ResolveEffectiveVersions(catalog, query));
  engine::CRDHistory inline_history;
  const engine::CRDHistory* history = nullptr;
  if (request.has_history()) {
    const std::string& name = request.history().name();
    if (!name.empty() && !request.crd().empty() && name != request.crd()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "crd \"%s\" and history.name \"%s\" differ: an inline history is "
          "the CRD the question is about; give one name or the same in both",
          request.crd(), name));
    }
    COMPATD_ASSIGN_OR_RETURN(
        inline_history,
        HistoryFromProto(request.history(), !name.empty() ? name
                                            : !request.crd().empty()
                                                ? request.crd()
                                                : "(inline history)"));
    history = &inline_history;
  } else {
    if (request.crd().empty()) {
      return Required("crd",
                      "\"clusters.cluster.x-k8s.io\" (a name from the "
                      "catalog's crds), or give an inline history");
    }
    std::vector<absl::string_view> known;
    for (const engine::CRDHistory& h : catalog.crds) {
      if (h.name == request.crd()) history = &h;
      known.push_back(h.name);
    }
    if (history == nullptr) {
      return absl::NotFoundError(absl::StrFormat(
          "crd \"%s\" is not in the catalog's crds (%s); add it there or "
          "give an inline history",
          request.crd(),
          known.empty() ? std::string("it has none")
                        : absl::StrCat("known: ", absl::StrJoin(known, ", "))));
    }
  }
  COMPATD_ASSIGN_OR_RETURN(
      engine::CRDRemovalPlan plan,
      engine::PlanCRDVersionRemoval(*history, request.version()));
  FillCommon(line, versions, std::move(plan.reason), response);
  response->set_crd(plan.crd);
  response->set_version(plan.version);
  response->set_replacement(plan.replacement);
  response->set_earliest_unserve_release(plan.earliest_unserve_release);
  response->set_earliest_removal_release(plan.earliest_removal_release);
  for (engine::CRDRemovalStep& step : plan.steps) {
    v1::RemovalStep* out = response->add_steps();
    out->set_name(std::move(step.name));
    out->set_release(std::move(step.release));
    out->set_why(std::move(step.why));
  }
  for (const engine::CRDRemovalViolation& v : plan.violations) {
    response->add_violations(
        absl::StrCat(v.release, ": ", v.message, " (rule ", v.rule, ")"));
  }
  return absl::OkStatus();
}

// PlanUpgrade: `shared` (the request's versions, under an Evaluate batch's)
// is the base of both ends. The clients are the request's and those
// `clients` (may be null: offline) recorded, judged from the call's snapshot.
// "1,204".
std::string Thousands(uint64_t n) {
  std::string digits = absl::StrCat(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<size_t>(i), ",");
  }
  return digits;
}

// "service account kube-system/cluster-autoscaler", "user:3fa2...", ...
std::string DescribeUser(absl::string_view user) {
  constexpr absl::string_view kServiceAccount = "system:serviceaccount:";
  if (absl::ConsumePrefix(&user, kServiceAccount)) {
    const size_t colon = user.find(':');
    if (colon != absl::string_view::npos) {
      return absl::StrCat("service account ", user.substr(0, colon), "/",
                          user.substr(colon + 1));
    }
  }
  return std::string(user);
}

// "called 1,204 times since 08:01 UTC by cluster-autoscaler/1.28 (service
// account kube-system/cluster-autoscaler)".
std::string DescribeCalls(const runtime::ApiUsageInfo& info) {
  return absl::StrCat(
      "called ", Thousands(info.requests),
      info.requests == 1 ? " time" : " times", " since ",
      absl::FormatTime("%H:%M UTC", info.first_seen, absl::UTCTimeZone()),
      " by ", info.component, "/", info.client_version, " (",
      DescribeUser(info.user), ")");
}

// The plan's APIs items that stop serving a group-version: the audited calls
// to it (`usage`: ListApiUsage's rows), busiest first, in the reason; the
// rows themselves in the answer.
void AddApiUsageToPlan(const std::vector<runtime::ApiUsageInfo>& usage,
                       engine::UpgradePlan* plan,
                       v1::PlanUpgradeResponse* response) {
  constexpr size_t kNamed = 3;
  std::set<size_t> used;
  for (engine::PlanItem& item : plan->path.items) {
    if (item.section != engine::PlanSection::kAPIs ||
        item.rule != "api-stops-serving") {
      continue;
    }
    std::vector<size_t> rows;
    for (size_t i = 0; i < usage.size(); ++i) {
      if (engine::GroupVersionString(usage[i].group, usage[i].version) ==
          item.subject) {
        rows.push_back(i);
      }
    }
    if (rows.empty()) continue;
    std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
      return usage[a].requests > usage[b].requests;
    });
    std::vector<std::string> named;
    for (size_t k = 0; k < rows.size() && k < kNamed; ++k) {
      const runtime::ApiUsageInfo& info = usage[rows[k]];
      named.push_back(absl::StrCat(
          engine::GroupVersionString(info.group, info.version), " ",
          info.judgement.kind.empty() ? info.resource : info.judgement.kind,
          info.subresource.empty() ? "" : "/", info.subresource, " ",
          DescribeCalls(info)));
    }
    absl::StrAppend(
        &item.reason, "; in the audit events: ", absl::StrJoin(named, "; "),
        rows.size() > kNamed
            ? absl::StrFormat(" (and %d more clients: ListApiUsage)",
                              rows.size() - kNamed)
            : "");
    used.insert(rows.begin(), rows.end());
  }
  for (size_t i : used) FillApiUsage(usage[i], response->add_api_usage());
}

absl::Status AnswerPlan(const runtime::ServingSnapshot& snapshot,
                        const runtime::ClientTracker* clients,
                        const runtime::ApiUsageTracker* usage,
                        const v1::VersionContext& shared,
                        const v1::PlanUpgradeRequest& request,
                        v1::PlanUpgradeResponse* response) {
  v1::VersionContext from = shared;
  from.MergeFrom(request.from());
  v1::VersionContext to = shared;
  to.MergeFrom(request.to());
  engine::UpgradePlanQuery query;
  query.from = ToQuery(from);
  query.to = ToQuery(to);
  for (int i = 0; i < request.clients_size(); ++i) {
    query.clients.push_back(engine::PlanClient{
        request.clients(i).component(), request.clients(i).version(),
        absl::StrFormat("clients[%d]", i), true});
  }
  size_t recorded = 0;
  runtime::ClientView view;
  if (clients != nullptr) {
    view = clients->View(snapshot);
    for (const runtime::ObservedClientInfo& info : view.clients) {
      // A client the skew policy cannot judge has no allowance to leave.
      if (!info.verdict.has_value()) continue;
      query.clients.push_back(
          engine::PlanClient{info.component, info.version, "recorded", false});
      ++recorded;
    }
  }
  // Every line the snapshot serves: each step answers from its binary's
  // (engine/upgrade_plan.h); the response names the target's.
  COMPATD_ASSIGN_OR_RETURN(engine::UpgradePlan plan,
                           engine::PlanUpgrade(*snapshot.catalogs, query));
  COMPATD_ASSIGN_OR_RETURN(
      const runtime::ServingLine* line,
      snapshot.Line(to.binary_version(), "to.binary_version"));
  if (usage != nullptr) {
    AddApiUsageToPlan(usage->List(snapshot), &plan, response);
  }
  const engine::EffectiveVersions target = plan.to;
  std::string reason = plan.path.reason;
  FillUpgradePlan(std::move(plan), response);
  AddCelPlanItems(response);
  FillCommon(*line, target, std::move(reason), response);
  if (clients != nullptr) FillClientView(view, response->mutable_client_view());
  response->set_clients_checked(
      clients != nullptr
          ? absl::StrFormat(
                "%d recorded by %s (ListClients), %d from the request",
                recorded,
                view.scope == runtime::ClientScope::kFleet
                    ? absl::StrFormat("the fleet's %d replica(s) through %s",
                                      view.replicas, view.source)
                    : std::string("this replica"),
                request.clients_size())
          : absl::StrFormat("%d from the request; this process records no "
                            "clients (offline evaluation): ask a running "
                            "compatd to include the clients it has seen",
                            request.clients_size()));
  return absl::OkStatus();
}

v1::LintSeverity ToProtoSeverity(engine::LintSeverity severity) {
  return severity == engine::LintSeverity::kError ? v1::LINT_SEVERITY_ERROR
                                                  : v1::LINT_SEVERITY_WARNING;
}

// Every line's catalog is linted; the findings name their catalog.
absl::Status Answer(const runtime::ServingSnapshot& snapshot,
                    v1::LintCatalogResponse* response) {
  const runtime::ServingLine& default_line = snapshot.default_line();
  COMPATD_ASSIGN_OR_RETURN(
      EffectiveVersions versions,
      engine::ResolveEffectiveVersions(*default_line.catalog, VersionQuery{}));
  size_t errors = 0, warnings = 0, exceptions = 0;
  std::vector<absl::string_view> sources;
  for (const runtime::ServingLine& line : snapshot.lines) {
    const Catalog& catalog = *line.catalog;
    sources.push_back(catalog.source);
    engine::LintReport report = engine::LintCatalog(catalog);
    response->mutable_findings()->Reserve(
        response->findings_size() + static_cast<int>(report.findings.size()));
    for (engine::LintFinding& f : report.findings) {
      v1::LintFinding* out = response->add_findings();
      out->set_severity(ToProtoSeverity(f.severity));
      out->set_rule(std::move(f.rule));
      out->set_subject(std::move(f.subject));
      out->set_release(std::move(f.release));
      out->set_message(std::move(f.message));
      out->set_exception(std::move(f.exception));
      out->set_line(f.line);
      out->set_source(catalog.source);
    }
    errors += report.errors;
    warnings += report.warnings;
    exceptions += report.exceptions;
  }
  response->set_errors(static_cast<uint32_t>(errors));
  response->set_warnings(static_cast<uint32_t>(warnings));
  response->set_exceptions(static_cast<uint32_t>(exceptions));
  FillCommon(default_line, versions,
             absl::StrFormat(
                 "%s checked against Kubernetes' API change and feature gate "
                 "rules: %d error(s), %d warning(s), %d documented "
                 "exception(s)",
                 absl::StrJoin(sources, ", "), errors, warnings, exceptions),
             response);
  return absl::OkStatus();
}

absl::Status Answer(const runtime::ServingLine& line, const VersionQuery& query,
                    const v1::ScanObjectsRequest& request,
                    v1::ScanObjectsResponse* response,
                    const ScanLimits& limits = ScanLimits()) {
  std::vector<ScanText> texts;
  texts.reserve(static_cast<size_t>(request.sources_size()) + 1);
  if (!request.objects().empty()) {
    texts.push_back(ScanText{"objects", request.objects()});
  }
  for (const v1::ScanSource& source : request.sources()) {
    texts.push_back(
        ScanText{source.name().empty() ? std::string("objects") : source.name(),
                 source.text()});
  }
  return ScanManifests(line, query, request.target(), texts, response, limits,
                       request.cel_min_compatibility_version());
}

// Evaluate: one item against the batch's snapshot. The item's own versions
// override the batch's field by field (proto3 MergeFrom: set fields win).
// ListApiUsage (no versions: the rows are judged at the cluster's).
absl::Status AnswerApiUsage(const runtime::ServingSnapshot& snapshot,
                            const runtime::ApiUsageTracker* usage,
                            const v1::ListApiUsageRequest& request,
                            v1::ListApiUsageResponse* response) {
  COMPATD_RETURN_IF_ERROR(ValidateRequest(request));
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           engine::ResolveEffectiveVersions(
                               snapshot.default_catalog(), VersionQuery{}));
  std::string reason;
  if (usage != nullptr) {
    const std::shared_ptr<const engine::ApiUseIndex> index =
        usage->Index(snapshot);
    for (const runtime::ApiUsageInfo& info :
         usage->List(snapshot, request.component())) {
      FillApiUsage(info, response->add_usage());
    }
    reason = absl::StrFormat(
        "%d client/API pairs at risk in kube-apiserver's audit events "
        "(POST /audit/v1/events) seen by this replica, judged at the "
        "cluster's versions (emulation %s, rollback floor %s)%s",
        response->usage_size(), versions.emulation.MajorMinorString(),
        versions.min_compatibility.MajorMinorString(),
        index->target().has_value()
            ? absl::StrCat(" and the upgrade target (emulation ",
                           index->target()->emulation.MajorMinorString(), ")")
            : std::string("; the catalog names no upgrade target"));
  } else {
    reason =
        "this process reads no audit events (offline evaluation): ask a "
        "running compatd that kube-apiserver's audit webhook posts to";
  }
  FillCommon(snapshot.default_line(), versions, std::move(reason), response);
  return absl::OkStatus();
}

void EvaluateItem(const runtime::ServingSnapshot& snapshot,
                  const runtime::ClientTracker* clients,
                  const runtime::ApiUsageTracker* usage,
                  const v1::VersionContext& batch, const v1::EvaluateItem& item,
                  v1::EvaluateResult* result) {
  auto run = [&](const auto& request, auto* response) {
    v1::VersionContext merged = batch;
    merged.MergeFrom(request.versions());
    const VersionQuery query = ToQuery(merged);
    absl::Status status = ValidateRequest(request);
    if (!status.ok()) return ToRpcStatus(status, result->mutable_error());
    // Each item picks its own line (its binary version, else the batch's).
    absl::StatusOr<const runtime::ServingLine*> line =
        snapshot.Line(merged.binary_version());
    if constexpr (std::is_same_v<std::decay_t<decltype(request)>,
                                 v1::ScanObjectsRequest>) {
      // A scan's target picks the line when no binary version does.
      line = ScanLine(snapshot, merged.binary_version(), request.target());
    }
    if (!line.ok()) return ToRpcStatus(line.status(), result->mutable_error());
    status = Answer(**line, query, request, response);
    if (!status.ok()) ToRpcStatus(status, result->mutable_error());
  };
  switch (item.request_case()) {
    case v1::EvaluateItem::kGetFeature:
      return run(item.get_feature(), result->mutable_get_feature());
    case v1::EvaluateItem::kListFeatures:
      return run(item.list_features(), result->mutable_list_features());
    case v1::EvaluateItem::kGetStorageVersion:
      return run(item.get_storage_version(),
                 result->mutable_get_storage_version());
    case v1::EvaluateItem::kListApiVersions:
      return run(item.list_api_versions(), result->mutable_list_api_versions());
    case v1::EvaluateItem::kCheckSkew:
      return run(item.check_skew(), result->mutable_check_skew());
    case v1::EvaluateItem::kResolveVersions:
      return run(item.resolve_versions(), result->mutable_resolve_versions());
    case v1::EvaluateItem::kComputeStorageVersionAgreement:
      return run(item.compute_storage_version_agreement(),
                 result->mutable_compute_storage_version_agreement());
    case v1::EvaluateItem::kPlanVersionRemoval:
      return run(item.plan_version_removal(),
                 result->mutable_plan_version_removal());
    case v1::EvaluateItem::kPlanUpgrade: {
      const v1::PlanUpgradeRequest& request = item.plan_upgrade();
      absl::Status status = ValidateRequest(request);
      if (status.ok()) {
        v1::VersionContext shared = batch;
        shared.MergeFrom(request.versions());
        status = AnswerPlan(snapshot, clients, usage, shared, request,
                            result->mutable_plan_upgrade());
      }
      if (!status.ok()) ToRpcStatus(status, result->mutable_error());
      return;
    }
    case v1::EvaluateItem::kScanObjects:
      return run(item.scan_objects(), result->mutable_scan_objects());
    case v1::EvaluateItem::kListApiUsage: {
      const absl::Status status =
          AnswerApiUsage(snapshot, usage, item.list_api_usage(),
                         result->mutable_list_api_usage());
      if (!status.ok()) ToRpcStatus(status, result->mutable_error());
      return;
    }
    case v1::EvaluateItem::kCheckCelExpression:
      return run(item.check_cel_expression(),
                 result->mutable_check_cel_expression());
    case v1::EvaluateItem::REQUEST_NOT_SET:
      break;
  }
  ToRpcStatus(absl::InvalidArgumentError(
                  "items[]: empty item: set one of get_feature, "
                  "list_features, get_storage_version, list_api_versions, "
                  "check_skew, resolve_versions, "
                  "compute_storage_version_agreement, plan_version_removal, "
                  "scan_objects, plan_upgrade, list_api_usage, "
                  "check_cel_expression"),
              result->mutable_error());
}

}  // namespace

std::shared_ptr<const runtime::DerivedAnswers> DeriveAnswers(
    const engine::CatalogSet& set, const engine::Catalog& catalog) {
  // The answers need a line only for its generation, which FillCommon
  // writes; each call overwrites it with the caller's (CopyDerived).
  runtime::ServingLine unborn;
  unborn.catalog =
      std::shared_ptr<const Catalog>(&catalog, [](const Catalog*) {});
  auto answers = std::make_shared<CatalogAnswers>();
  answers->served_status = [&]() -> absl::Status {
    COMPATD_ASSIGN_OR_RETURN(
        answers->versions,
        engine::ResolveEffectiveVersions(catalog, VersionQuery{}));
    COMPATD_ASSIGN_OR_RETURN(
        std::vector<engine::ServedGroupVersion> served,
        engine::ListServedAPIs(catalog, answers->versions, VersionQuery{}));
    for (const engine::ServedGroupVersion& gv : served) {
      for (const std::string& resource : gv.resources) {
        answers->served.insert(ServedKey(gv.group, gv.version, resource));
      }
    }
    return absl::OkStatus();
  }();
  answers->target = DeriveUpgradeTarget(set, catalog);
  answers->list_api_versions_status =
      Answer(unborn, VersionQuery{}, v1::ListAPIVersionsRequest(),
             &answers->list_api_versions);
  answers->list_features_status =
      Answer(unborn, VersionQuery{}, v1::ListFeaturesRequest(),
             &answers->list_features);
  return answers;
}

absl::Status CheckServing(const runtime::ServingSnapshot* snapshot) {
  if (snapshot != nullptr) return absl::OkStatus();
  return absl::UnavailableError(
      "no catalog is loaded yet; retry once grpc.health.v1 reports SERVING");
}

PolicyHandlers::PolicyHandlers(const runtime::CatalogEvents* events,
                               const runtime::ClientTracker* clients,
                               RequestLimits limits,
                               const runtime::ApiUsageTracker* usage)
    : events_(events), clients_(clients), limits_(limits), usage_(usage) {}

#define COMPATD_UNARY_HANDLER(Name)                                           \
  absl::Status PolicyHandlers::Name(const runtime::ServingSnapshot& snapshot, \
                                    const v1::Name##Request& request,         \
                                    v1::Name##Response* response) const {     \
    COMPATD_RETURN_IF_ERROR(ValidateRequest(request));                        \
    COMPATD_ASSIGN_OR_RETURN(                                                 \
        const runtime::ServingLine* line,                                     \
        snapshot.Line(request.versions().binary_version()));                  \
    return Answer(*line, ToQuery(request.versions()), request, response);     \
  }

COMPATD_UNARY_HANDLER(GetFeature)
COMPATD_UNARY_HANDLER(GetStorageVersion)
COMPATD_UNARY_HANDLER(CheckSkew)
COMPATD_UNARY_HANDLER(ResolveVersions)
COMPATD_UNARY_HANDLER(ComputeStorageVersionAgreement)
COMPATD_UNARY_HANDLER(PlanVersionRemoval)
COMPATD_UNARY_HANDLER(CheckCelExpression)

#undef COMPATD_UNARY_HANDLER

absl::Status PolicyHandlers::ScanObjects(
    const runtime::ServingSnapshot& snapshot,
    const v1::ScanObjectsRequest& request,
    v1::ScanObjectsResponse* response) const {
  COMPATD_RETURN_IF_ERROR(ValidateRequest(request));
  // The findings' and problems' share of the answer: room is left for the
  // rest of it (common fields, counts, the reason).
  ScanLimits limits;
  limits.max_answer_bytes =
      limits_.max_answer_bytes -
      std::min(limits_.max_answer_bytes / 2, size_t{64 * 1024});
  COMPATD_ASSIGN_OR_RETURN(
      const runtime::ServingLine* line,
      ScanLine(snapshot, request.versions().binary_version(),
               request.target()));
  return Answer(*line, ToQuery(request.versions()), request, response, limits);
}

namespace {

// A derived answer copied into the reply, with the caller's generation.
template <typename Response>
absl::Status CopyDerived(const runtime::ServingLine& snapshot,
                         const absl::Status& status, const Response& answer,
                         Response* response) {
  COMPATD_RETURN_IF_ERROR(status);
  *response = answer;
  response->set_catalog_generation(snapshot.generation);
  return absl::OkStatus();
}

}  // namespace

absl::Status PolicyHandlers::PlanUpgrade(
    const runtime::ServingSnapshot& snapshot,
    const v1::PlanUpgradeRequest& request,
    v1::PlanUpgradeResponse* response) const {
  COMPATD_RETURN_IF_ERROR(ValidateRequest(request));
  return AnswerPlan(snapshot, clients_, usage_, request.versions(), request,
                    response);
}

absl::Status PolicyHandlers::ListAPIVersions(
    const runtime::ServingSnapshot& snapshot,
    const v1::ListAPIVersionsRequest& request,
    v1::ListAPIVersionsResponse* response) const {
  COMPATD_RETURN_IF_ERROR(ValidateRequest(request));
  if (request.versions().ByteSizeLong() == 0 &&
      snapshot.default_line().derived != nullptr) {
    const runtime::ServingLine& line = snapshot.default_line();
    const auto& answers = static_cast<const CatalogAnswers&>(*line.derived);
    return CopyDerived(line, answers.list_api_versions_status,
                       answers.list_api_versions, response);
  }
  COMPATD_ASSIGN_OR_RETURN(const runtime::ServingLine* line,
                           snapshot.Line(request.versions().binary_version()));
  return Answer(*line, ToQuery(request.versions()), request, response);
}

absl::Status PolicyHandlers::ListFeatures(
    const runtime::ServingSnapshot& snapshot,
    const v1::ListFeaturesRequest& request,
    v1::ListFeaturesResponse* response) const {
  COMPATD_RETURN_IF_ERROR(ValidateRequest(request));
  if (request.versions().ByteSizeLong() == 0 && request.component().empty() &&
      snapshot.default_line().derived != nullptr) {
    const runtime::ServingLine& line = snapshot.default_line();
    const auto& answers = static_cast<const CatalogAnswers&>(*line.derived);
    return CopyDerived(line, answers.list_features_status,
                       answers.list_features, response);
  }
  COMPATD_ASSIGN_OR_RETURN(const runtime::ServingLine* line,
                           snapshot.Line(request.versions().binary_version()));
  return Answer(*line, ToQuery(request.versions()), request, response);
}

// The request has no fields to check: the lint runs on the whole snapshot.
absl::Status PolicyHandlers::LintCatalog(
    const runtime::ServingSnapshot& snapshot, const v1::LintCatalogRequest&,
    v1::LintCatalogResponse* response) const {
  return Answer(snapshot, response);
}

absl::Status PolicyHandlers::Evaluate(const runtime::ServingSnapshot& snapshot,
                                      const v1::EvaluateRequest& request,
                                      v1::EvaluateResponse* response) const {
  COMPATD_RETURN_IF_ERROR(ValidateRequest(request, limits_));
  COMPATD_ASSIGN_OR_RETURN(const runtime::ServingLine* batch_line,
                           snapshot.Line(request.versions().binary_version()));
  COMPATD_ASSIGN_OR_RETURN(
      EffectiveVersions versions,
      engine::ResolveEffectiveVersions(*batch_line->catalog,
                                       ToQuery(request.versions())));
  int failed = 0;
  size_t answer_bytes = 0;
  response->mutable_results()->Reserve(request.items_size());
  for (const v1::EvaluateItem& item : request.items()) {
    v1::EvaluateResult* result = response->add_results();
    EvaluateItem(snapshot, clients_, usage_, request.versions(), item, result);
    if (result->has_error()) ++failed;
    // A result's share of the answer: its bytes and its field's tag and
    // length (at most 6 bytes).
    answer_bytes += result->ByteSizeLong() + 6;
    if (answer_bytes > limits_.max_answer_bytes) {
      const int index = response->results_size() - 1;
      response->Clear();
      return absl::ResourceExhaustedError(absl::StrFormat(
          "items[%d]: the answer reached %d bytes, over the limit of %d bytes "
          "per answer (--max-send-message-bytes); split the batch",
          index, answer_bytes, limits_.max_answer_bytes));
    }
  }
  FillCommon(*batch_line, versions,
             absl::StrFormat("%d items answered from one catalog snapshot, %d "
                             "with an error",
                             request.items_size(), failed),
             response);
  return absl::OkStatus();
}

namespace {

void FillCounts(const Catalog& catalog, v1::CatalogCounts* counts) {
  counts->set_features(static_cast<uint32_t>(catalog.features.size()));
  counts->set_group_versions(static_cast<uint32_t>(catalog.apis.size()));
  uint32_t resources = 0;
  for (const engine::APIGroupVersion& gv : catalog.apis) {
    resources += static_cast<uint32_t>(gv.resources.size());
  }
  counts->set_resources(resources);
  counts->set_storage_overrides(
      static_cast<uint32_t>(catalog.storage_overrides.size()));
  counts->set_skew_rules(
      static_cast<uint32_t>(engine::SkewRulesInForce(catalog).size()));
  counts->set_crds(static_cast<uint32_t>(catalog.crds.size()));
  counts->set_api_history(static_cast<uint32_t>(catalog.api_history.size()));
}

void FillTarget(const engine::UpgradeTarget& t, v1::VersionContext* target) {
  target->set_binary_version(t.binary_version);
  target->set_emulation_version(t.emulation_version);
  target->set_min_compatibility_version(t.min_compatibility_version);
  target->set_feature_gates(t.feature_gates);
  target->set_runtime_config(t.runtime_config);
  if (t.emulation_forward_compatible.has_value()) {
    target->set_emulation_forward_compatible(*t.emulation_forward_compatible);
  }
  if (t.runtime_config_emulation_forward_compatible.has_value()) {
    target->set_runtime_config_emulation_forward_compatible(
        *t.runtime_config_emulation_forward_compatible);
  }
}

// One served line's identity, counts, versions and target.
void FillCatalogLine(const runtime::ServingLine& line, v1::CatalogLine* out) {
  const Catalog& c = *line.catalog;
  out->set_line(c.binary_version.MajorMinorString());
  out->set_release(c.binary_version.ToString());
  out->set_source(c.source);
  out->set_digest(c.digest);
  out->set_exactness(std::string(engine::ExactnessName(c.exactness)));
  out->set_exactness_reason(c.exactness_reason);
  if (c.patches_known_through.has_value()) {
    out->set_patches_known_through(c.patches_known_through->ToString());
  }
  SetTimestamp(line.loaded_at, out->mutable_loaded_at());
  FillCounts(c, out->mutable_counts());
  absl::StatusOr<EffectiveVersions> line_versions =
      engine::ResolveEffectiveVersions(c, VersionQuery{});
  if (line_versions.ok()) FillVersions(*line_versions, out->mutable_versions());
  if (c.cluster.upgrade_target.has_value()) {
    FillTarget(*c.cluster.upgrade_target, out->mutable_upgrade_target());
  }
}

}  // namespace

void PolicyHandlers::DescribeCatalog(const runtime::ServingSnapshot& snapshot,
                                     v1::GetCatalogResponse* response) const {
  const runtime::ServingLine& default_line = snapshot.default_line();
  const Catalog& catalog = *default_line.catalog;
  // The cluster section was validated when the catalog was loaded.
  absl::StatusOr<EffectiveVersions> versions =
      engine::ResolveEffectiveVersions(catalog, VersionQuery{});
  if (versions.ok()) {
    FillVersions(*versions, response->mutable_versions());
  }
  response->set_catalog_generation(snapshot.generation);
  response->set_catalog_digest(catalog.digest);
  FillCatalogIdentity(catalog, catalog.binary_version, response);
  response->set_generation(snapshot.generation);
  response->set_digest(catalog.digest);
  response->set_source(catalog.source);
  response->set_binary_version(catalog.binary_version.ToString());
  SetTimestamp(default_line.loaded_at, response->mutable_loaded_at());
  FillCounts(catalog, response->mutable_counts());
  if (catalog.cluster.upgrade_target.has_value()) {
    FillTarget(*catalog.cluster.upgrade_target,
               response->mutable_upgrade_target());
  }
  response->set_cluster_source(catalog.cluster.source);
  if (catalog.cluster.binary.has_value()) {
    response->set_cluster_binary_version(catalog.cluster.binary->ToString());
  }
  std::vector<std::string> rejected;
  for (const runtime::ServingLine& line : snapshot.lines) {
    const Catalog& c = *line.catalog;
    v1::CatalogLine* out = response->add_lines();
    FillCatalogLine(line, out);
    out->set_default_line(&line == &default_line);
    if (events_ != nullptr) {
      runtime::CatalogEvents::Error error = events_->LastError(c.source);
      // A rejection older than the catalog being served was superseded by its
      // load (see below).
      if (!error.message.empty() && error.at >= line.loaded_at) {
        out->set_last_error(error.message);
        SetTimestamp(error.at, out->mutable_last_error_at());
        rejected.push_back(c.source);
      }
    }
  }
  std::string reason = absl::StrFormat(
      "catalog generation %d: %d release line(s) (%s), default %s from %s, "
      "loaded %s",
      snapshot.generation, snapshot.lines.size(),
      snapshot.catalogs->line_names(),
      catalog.binary_version.MajorMinorString(), catalog.source,
      absl::FormatTime(absl::RFC3339_sec, default_line.loaded_at,
                       absl::UTCTimeZone()));
  if (events_ != nullptr) {
    runtime::CatalogEvents::Error error = events_->LastError();
    // A rejection older than the catalog being served was superseded by its
    // load: the store publishes a reloaded catalog just before the events
    // clear the error, and a call in between must not report both.
    if (!error.message.empty() && error.at >= snapshot.loaded_at) {
      absl::StrAppend(&reason,
                      "; the last reload was rejected and the catalog "
                      "before it keeps serving");
      response->set_last_error(error.message);
      SetTimestamp(error.at, response->mutable_last_error_at());
    } else if (!rejected.empty()) {
      absl::StrAppend(&reason, "; a reload of ", absl::StrJoin(rejected, ", "),
                      " was rejected and the catalog before it keeps serving");
    }
  }
  response->set_reason(std::move(reason));
}

absl::Status PolicyHandlers::GetCatalog(
    const runtime::ServingSnapshot& snapshot,
    const v1::GetCatalogRequest& request,
    v1::GetCatalogResponse* response) const {
  COMPATD_RETURN_IF_ERROR(ValidateRequest(request));
  DescribeCatalog(snapshot, response);
  return absl::OkStatus();
}

absl::Status PolicyHandlers::ListClients(
    const runtime::ServingSnapshot& snapshot,
    const v1::ListClientsRequest& request,
    v1::ListClientsResponse* response) const {
  COMPATD_RETURN_IF_ERROR(ValidateRequest(request));
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions versions,
                           engine::ResolveEffectiveVersions(
                               snapshot.default_catalog(), VersionQuery{}));
  runtime::ClientView view;
  if (clients_ != nullptr) {
    view = clients_->View(snapshot, request.component());
    for (const runtime::ObservedClientInfo& info : view.clients) {
      FillObservedClient(info, response->add_clients());
    }
    FillClientView(view, response->mutable_view());
  }
  FillCommon(
      snapshot.default_line(), versions,
      clients_ != nullptr
          ? absl::StrFormat("%d client component/version pairs seen by %s, "
                            "verdicts at the cluster's versions",
                            response->clients_size(),
                            view.scope == runtime::ClientScope::kFleet
                                ? absl::StrFormat("the fleet's %d replica(s)",
                                                  view.replicas)
                                : std::string("this replica"))
          : std::string("this process records no clients (offline "
                        "evaluation)"),
      response);
  return absl::OkStatus();
}

absl::Status PolicyHandlers::ListApiUsage(
    const runtime::ServingSnapshot& snapshot,
    const v1::ListApiUsageRequest& request,
    v1::ListApiUsageResponse* response) const {
  return AnswerApiUsage(snapshot, usage_, request, response);
}

}  // namespace compatd::api
