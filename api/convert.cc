#include "api/convert.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace compatd::api {

engine::VersionQuery ToQuery(const v1::VersionContext& context) {
  engine::VersionQuery query;
  query.binary_version = context.binary_version();
  query.emulation_version = context.emulation_version();
  query.min_compatibility_version = context.min_compatibility_version();
  query.feature_gates = context.feature_gates();
  query.runtime_config = context.runtime_config();
  if (context.has_emulation_forward_compatible()) {
    query.emulation_forward_compatible = context.emulation_forward_compatible();
  }
  if (context.has_runtime_config_emulation_forward_compatible()) {
    query.runtime_config_emulation_forward_compatible =
        context.runtime_config_emulation_forward_compatible();
  }
  return query;
}

void FillVersions(const engine::EffectiveVersions& versions,
                  v1::EffectiveVersion* out) {
  out->set_binary_version(versions.binary.MajorMinorString());
  out->set_emulation_version(versions.emulation.MajorMinorString());
  out->set_min_compatibility_version(
      versions.min_compatibility.MajorMinorString());
}

v1::Stage ToProtoStage(engine::PreRelease stage) {
  switch (stage) {
    case engine::PreRelease::kPreAlpha:
      return v1::STAGE_PRE_ALPHA;
    case engine::PreRelease::kAlpha:
      return v1::STAGE_ALPHA;
    case engine::PreRelease::kBeta:
      return v1::STAGE_BETA;
    case engine::PreRelease::kGA:
      return v1::STAGE_GA;
    case engine::PreRelease::kDeprecated:
      return v1::STAGE_DEPRECATED;
  }
  return v1::STAGE_UNSPECIFIED;
}

v1::SkewVerdict ToProtoVerdict(std::optional<engine::SkewVerdict> verdict) {
  if (!verdict.has_value()) return v1::SKEW_VERDICT_UNKNOWN;
  switch (*verdict) {
    case engine::SkewVerdict::kAllowed:
      return v1::SKEW_VERDICT_ALLOWED;
    case engine::SkewVerdict::kTooOld:
      return v1::SKEW_VERDICT_TOO_OLD;
    case engine::SkewVerdict::kTooNew:
      return v1::SKEW_VERDICT_TOO_NEW;
  }
  return v1::SKEW_VERDICT_UNSPECIFIED;
}

namespace {

void SetTimestamp(absl::Time t, google::protobuf::Timestamp* ts) {
  const int64_t nanos = absl::ToUnixNanos(t);
  ts->set_seconds(nanos / 1000000000);
  ts->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

}  // namespace

void FillObservedClient(const runtime::ObservedClientInfo& info,
                        v1::ObservedClient* out) {
  const auto timestamp = SetTimestamp;
  out->set_component(info.component);
  out->set_version(info.version);
  out->set_verdict(ToProtoVerdict(info.verdict));
  out->set_min_version(info.min_version);
  out->set_max_version(info.max_version);
  timestamp(info.first_seen, out->mutable_first_seen());
  timestamp(info.last_seen, out->mutable_last_seen());
  out->set_requests(info.requests);
  if (info.seen_direct) out->add_seen_via(v1::CLIENT_SEEN_VIA_DIRECT);
  if (info.seen_audit) out->add_seen_via(v1::CLIENT_SEEN_VIA_AUDIT);
}

v1::ApiUseVerdict ToProtoApiUseVerdict(engine::ApiUseVerdict verdict) {
  switch (verdict) {
    case engine::ApiUseVerdict::kNotServed:
      return v1::API_USE_VERDICT_NOT_SERVED;
    case engine::ApiUseVerdict::kRemovedAtTarget:
      return v1::API_USE_VERDICT_REMOVED_AT_TARGET;
    case engine::ApiUseVerdict::kNotServedAtTarget:
      return v1::API_USE_VERDICT_NOT_SERVED_AT_TARGET;
    case engine::ApiUseVerdict::kNotServedAtRollback:
      return v1::API_USE_VERDICT_NOT_SERVED_AT_ROLLBACK;
    case engine::ApiUseVerdict::kCatalogMismatch:
      return v1::API_USE_VERDICT_CATALOG_MISMATCH;
    case engine::ApiUseVerdict::kDeprecated:
      return v1::API_USE_VERDICT_DEPRECATED;
  }
  return v1::API_USE_VERDICT_UNSPECIFIED;
}

void FillApiUsage(const runtime::ApiUsageInfo& info, v1::ApiUsage* out) {
  out->set_component(info.component);
  out->set_client_version(info.client_version);
  out->set_user(info.user);
  out->set_user_agent(info.user_agent);
  out->set_group(info.group);
  out->set_version(info.version);
  out->set_resource(info.resource);
  out->set_subresource(info.subresource);
  out->set_kind(info.judgement.kind);
  out->set_verdict(ToProtoApiUseVerdict(info.judgement.verdict));
  out->set_release(info.judgement.release);
  out->set_replacement(info.judgement.replacement);
  out->set_message(info.judgement.message);
  out->set_requests(info.requests);
  out->set_denied(info.denied);
  SetTimestamp(info.first_seen, out->mutable_first_seen());
  SetTimestamp(info.last_seen, out->mutable_last_seen());
  out->set_apiserver_deprecated(info.apiserver_deprecated);
  out->set_apiserver_removed_release(info.apiserver_removed_release);
}

void FillClientView(const runtime::ClientView& view, v1::ClientView* out) {
  const int64_t nanos = absl::ToUnixNanos(view.as_of);
  out->set_scope(view.scope == runtime::ClientScope::kFleet
                     ? v1::CLIENT_SCOPE_FLEET
                     : v1::CLIENT_SCOPE_REPLICA);
  out->mutable_as_of()->set_seconds(nanos / 1000000000);
  out->mutable_as_of()->set_nanos(static_cast<int32_t>(nanos % 1000000000));
  out->set_replicas(static_cast<uint32_t>(std::max<int64_t>(view.replicas, 0)));
  out->set_source(view.source);
  out->set_note(view.note);
}

namespace {

void FillStep(const engine::UpgradeStep& step, v1::UpgradeStep* s) {
  s->set_number(static_cast<uint32_t>(step.number));
  s->set_name(step.name);
  FillVersions(step.versions, s->mutable_versions());
  s->set_action(step.action);
  s->set_rollback_to(step.rollback_to);
  s->set_catalog(step.catalog);
  for (const engine::PlanClientVerdict& c : step.clients) {
    v1::PlanClientVerdict* v = s->add_client_verdicts();
    v->set_component(c.component);
    v->set_version(c.version);
    v->set_source(c.source);
    v->set_verdict(c.verdict);
    v->set_min_version(c.min_version);
    v->set_max_version(c.max_version);
  }
}

void FillItem(engine::PlanItem& item, v1::UpgradeItem* out) {
  out->set_step(static_cast<uint32_t>(item.step));
  out->set_release(std::move(item.release));
  out->set_subject(std::move(item.subject));
  out->set_rule(std::move(item.rule));
  out->set_reason(std::move(item.reason));
  out->set_action(std::move(item.action));
  out->set_blocking(item.blocking);
}

void FillMigration(engine::StorageMigration& m, v1::StorageMigration* out) {
  out->set_step(static_cast<uint32_t>(m.step));
  out->set_release(std::move(m.release));
  out->set_group(std::move(m.group));
  out->set_resource(std::move(m.resource));
  out->set_from_version(std::move(m.from_version));
  out->set_to_version(std::move(m.to_version));
  out->set_api_version(std::move(m.api_version));
  out->set_name(std::move(m.name));
  out->set_needs(std::move(m.needs));
  out->set_manifest(std::move(m.manifest));
}

void FillPathLabel(const engine::UpgradePath& path, v1::UpgradePath* out) {
  out->set_name(path.name);
  out->set_supported(path.supported);
  out->set_support(path.support);
  out->set_reason(path.reason);
  out->set_blockers(static_cast<uint32_t>(path.blockers));
}

}  // namespace

void FillUpgradePlan(engine::UpgradePlan plan, v1::PlanUpgradeResponse* out) {
  FillVersions(plan.from, out->mutable_from());
  FillVersions(plan.to, out->mutable_to());
  for (const engine::UpgradeStep& step : plan.path.steps) {
    FillStep(step, out->add_steps());
  }
  for (engine::PlanItem& item : plan.path.items) {
    v1::UpgradeItem* section = nullptr;
    switch (item.section) {
      case engine::PlanSection::kFlags:
        section = out->add_flags();
        break;
      case engine::PlanSection::kFeatureGates:
        section = out->add_feature_gates();
        break;
      case engine::PlanSection::kAPIs:
        section = out->add_apis();
        break;
      case engine::PlanSection::kStorage:
        section = out->add_storage();
        break;
      case engine::PlanSection::kRollback:
        section = out->add_rollback();
        break;
      case engine::PlanSection::kClients:
        section = out->add_clients();
        break;
    }
    FillItem(item, section);
    if (item.step >= 1 && item.step <= out->steps_size()) {
      *out->mutable_steps(item.step - 1)->add_items() = *section;
    }
  }
  out->set_blockers(static_cast<uint32_t>(plan.path.blockers));
  FillPathLabel(plan.path, out->mutable_path());
  for (engine::StorageMigration& m : plan.path.migrations) {
    FillMigration(m, out->add_storage_migrations());
  }
  for (engine::UpgradePath& path : plan.alternatives) {
    v1::UpgradePath* alternative = out->add_alternatives();
    FillPathLabel(path, alternative);
    for (const engine::UpgradeStep& step : path.steps) {
      FillStep(step, alternative->add_steps());
    }
    for (engine::PlanItem& item : path.items) {
      if (item.step >= 1 && item.step <= alternative->steps_size()) {
        FillItem(item, alternative->mutable_steps(item.step - 1)->add_items());
      }
    }
    for (engine::StorageMigration& m : path.migrations) {
      FillMigration(m, alternative->add_storage_migrations());
    }
  }
}

void ToRpcStatus(const absl::Status& status, google::rpc::Status* out) {
  out->set_code(static_cast<int32_t>(status.code()));
  out->set_message(std::string(status.message()));
}

std::string CodeName(absl::StatusCode code) {
  // absl's names are "INVALID_ARGUMENT" style already.
  return absl::StatusCodeToString(code);
}

}  // namespace compatd::api
