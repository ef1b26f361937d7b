#include "api/cel_check.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/convert.h"
#include "base/status_macros.h"
#include "catalog/cel_environments.h"

namespace compatd::api {
namespace {

using engine::CelEnvironment;
using engine::CelLibrary;
using engine::CelMissingUse;
using engine::Version;

const CelLibrary* EarliestFor(const CelEnvironment& env,
                              const engine::CelUse& use,
                              absl::string_view scope) {
  const CelLibrary* best = nullptr;
  for (const CelLibrary* l :
       engine::CelLibrariesFor(env, use, std::nullopt, scope)) {
    if (best == nullptr ||
        l->introduced.CompareMajorMinor(best->introduced) < 0)
      best = l;
  }
  return best;
}

// `missing`, uses of an expression written for `env`, missing from `missing_in`
// (NewExpressions at `min_compatibility`, or a rollback's StoredExpressions).
void FillMissing(
    const CelEnvironment& env, const CelEnvironment& missing_in,
    const Version& min_compatibility, const std::vector<CelMissingUse>& missing,
    absl::string_view scope,
    google::protobuf::RepeatedPtrField<v1::CelExpressionUse>* out) {
  for (const CelMissingUse& m : missing) {
    v1::CelExpressionUse* use = out->Add();
    FillCelUse(m.use, EarliestFor(env, m.use, scope), use);
    if (m.kind == engine::CelMissingKind::kUndeclared) {
      // Not in this binary: the library a later line declares it in.
      use->set_library(m.library);
      use->set_introduced(m.introduced.MajorMinorString());
    }
    use->set_reason(
        engine::CelMissingSentence(m, missing_in, min_compatibility));
  }
}

// The rollbacks of AnswerCelCheck: each release below the binary down to the
// min-compatibility version; the first sentence of one that cannot read it.
std::string CheckRollbacks(const engine::EffectiveVersions& versions,
                           const CelEnvironment& env,
                           const engine::CelReading& reading,
                           absl::string_view scope,
                           v1::CheckCelExpressionResponse* response) {
  std::string unreadable;
  for (Version r =
           Version::MajorMinor(versions.binary.major(), versions.binary.minor())
               .SubtractMinor(1);
       r.CompareMajorMinor(versions.min_compatibility) >= 0 &&
       r.CompareMajorMinor(versions.binary) < 0;
       r = r.SubtractMinor(1)) {
    v1::CelRollbackCheck* check = response->add_rollbacks();
    check->set_release(r.MajorMinorString());
    const CelEnvironment* older = catalog::CelEnvironmentFor(r);
    check->set_known(older != nullptr);
    if (older == nullptr) {
      check->set_readable(true);
      check->set_cel_environment(absl::StrCat("CEL not checked: compatd has ",
                                              catalog::CelEnvironmentsHeld()));
    } else {
      check->set_cel_environment(older->Source());
      const std::vector<CelMissingUse> missing =
          engine::CelUsesNotReadable(reading, env, *older, scope);
      check->set_readable(missing.empty());
      FillMissing(env, *older, r, missing, scope, check->mutable_missing());
      if (!missing.empty() && unreadable.empty()) {
        unreadable =
            absl::StrCat("; cannot be read back after a rollback to ",
                         r.MajorMinorString(), " (", missing.front().use.name,
                         " is ", missing.front().library, ")");
      }
    }
    if (r.minor() == 0) break;
  }
  return unreadable;
}

}  // namespace

void FillCelUse(const engine::CelUse& use, const CelLibrary* library,
                v1::CelExpressionUse* out) {
  out->set_kind(std::string(engine::CelUseKindName(use.kind)));
  out->set_name(use.name);
  out->set_qualified_name(use.qualified_name);
  out->set_arg_count(use.arg_count);
  out->set_offset(use.position.offset);
  out->set_line(use.position.line);
  out->set_column(use.position.column);
  if (library != nullptr) {
    out->set_library(library->DisplayName());
    out->set_introduced(library->introduced.MajorMinorString());
  }
}

void AddCelPlanItems(v1::PlanUpgradeResponse* plan) {
  absl::StatusOr<Version> previous =
      Version::ParseGeneric(plan->from().min_compatibility_version());
  for (v1::UpgradeStep& step : *plan->mutable_steps()) {
    absl::StatusOr<Version> binary =
        Version::Parse(step.versions().binary_version());
    absl::StatusOr<Version> now =
        Version::ParseGeneric(step.versions().min_compatibility_version());
    if (!binary.ok() || !now.ok()) continue;
    const CelEnvironment* env = catalog::CelEnvironmentFor(*binary);
    if (env != nullptr && previous.ok() &&
        now->CompareMajorMinor(*previous) > 0) {
      for (const CelLibrary* library :
           engine::CelLibrariesUnlocked(*env, *previous, *now)) {
        std::vector<std::string> names;
        for (const engine::CelFunctionDecl& f : library->functions) {
          if (names.empty() || names.back() != f.name) names.push_back(f.name);
        }
        for (const engine::CelMacroDecl& m : library->macros) {
          names.push_back(absl::StrCat(m.name, " (", m.args, " arguments)"));
        }
        v1::UpgradeItem item;
        item.set_step(step.number());
        item.set_release(now->MajorMinorString());
        item.set_subject(absl::StrCat("CEL library ", library->DisplayName()));
        item.set_rule("cel-library-unlocked");
        item.set_reason(absl::StrCat(
            "min-compatibility ", now->MajorMinorString(), " puts ",
            library->DisplayName(), " (introduced ",
            library->introduced.MajorMinorString(), ": ",
            absl::StrJoin(names, ", "),
            ") into the NewExpressions environment (kubernetes/apiserver ",
            env->apiserver_tag,
            " pkg/cel/environment/base.go): policies, CRD rules and "
            "matchConditions may use it "
            "from this step; a rollback can no longer go below ",
            now->MajorMinorString()));
        item.set_action(
            absl::StrCat("none; before this step, expressions using it are "
                         "refused (compatd scan "
                         "--min-compatibility-version=",
                         previous->MajorMinorString(), " finds them)"));
        *step.add_items() = item;
        *plan->add_cel() = std::move(item);
      }
    }
    previous = now;
  }
}

absl::Status AnswerCelCheck(const engine::EffectiveVersions& versions,
                            const v1::CheckCelExpressionRequest& request,
                            v1::CheckCelExpressionResponse* response) {
  const CelEnvironment* env = catalog::CelEnvironmentFor(versions.binary);
  if (env == nullptr || env->history_of.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "versions.binary_version ", versions.binary.MajorMinorString(),
        ": compatd holds the "
        "CEL environments of kube-apiserver lines ",
        catalog::EmbeddedCelEnvironments().front().line.MajorMinorString(),
        " to ",
        catalog::EmbeddedCelEnvironments().back().line.MajorMinorString()));
  }
  response->set_cel_environment(env->Source());
  absl::StatusOr<engine::CelReading> reading =
      engine::ReadCel(request.expression());
  if (!reading.ok()) {
    response->set_parses(false);
    response->set_parse_error(std::string(reading.status().message()));
    response->set_reason(absl::StrCat("the expression does not parse: ",
                                      reading.status().message()));
    return absl::OkStatus();
  }
  const absl::string_view scope =
      request.mutation() ? engine::kCelScopeMutations : "";
  response->set_parses(true);
  for (const engine::CelUse& use : reading->uses) {
    FillCelUse(use, EarliestFor(*env, use, scope), response->add_uses());
  }
  const std::vector<CelMissingUse> not_writable =
      engine::CelUsesNotWritable(*reading, *env, versions.min_compatibility,
                                 catalog::EmbeddedCelEnvironments(), scope);
  response->set_writable(not_writable.empty());
  FillMissing(*env, *env, versions.min_compatibility, not_writable, scope,
              response->mutable_not_writable());

  std::string reason =
      not_writable.empty()
          ? absl::StrCat("kube-apiserver ", versions.binary.MajorMinorString(),
                         " can write it at min-compatibility ",
                         versions.min_compatibility.MajorMinorString())
          : engine::CelMissingSentence(
                not_writable.front(), *env, versions.min_compatibility,
                absl::StrCat("(line ", not_writable.front().use.position.line,
                             ", column ",
                             not_writable.front().use.position.column, ")"));
  response->set_reason(
      reason + CheckRollbacks(versions, *env, *reading, scope, response));
  return absl::OkStatus();
}

absl::Status Answer(const runtime::ServingLine& line,
                    const engine::VersionQuery& query,
                    const v1::CheckCelExpressionRequest& request,
                    v1::CheckCelExpressionResponse* response) {
  COMPATD_ASSIGN_OR_RETURN(
      engine::EffectiveVersions versions,
      engine::ResolveEffectiveVersions(*line.catalog, query));
  FillCommon(line, versions, response);
  return AnswerCelCheck(versions, request, response);
}

}  // namespace compatd::api
