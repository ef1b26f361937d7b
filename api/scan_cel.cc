#include "api/scan_cel.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/work_budget.h"
#include "catalog/cel_environments.h"
#include "engine/cel_environment.h"
#include "engine/cel_reader.h"
#include "engine/effective_version.h"
#include "manifest/cel_fields.h"

namespace compatd::api {
namespace {

using engine::CelEnvironment;
using engine::CelMissingUse;
using engine::Version;

v1::ScanFinding* AddFinding(const ScanText& text,
                            const manifest::CelObject& object,
                            const manifest::CelField& field,
                            const CelMissingUse& m, ScanAnswer& answer) {
  v1::ScanFinding* f = answer.NewFinding(text.name);
  const int use_line = static_cast<int>(m.use.position.line);
  f->set_line(field.lines_map ? field.line + use_line - 1 : field.line);
  f->set_api_version(object.api_version);
  f->set_kind(object.kind);
  f->set_namespace_(object.namespace_);
  f->set_name(object.name);
  if (m.kind != engine::CelMissingKind::kUnknown) {
    f->set_introduced(m.introduced.MajorMinorString());
  }
  f->set_cel_path(field.path);
  f->set_cel_line(use_line);
  f->set_cel_column(static_cast<int>(m.use.position.column));
  f->set_cel_function(m.use.name);
  f->set_cel_library(m.library);
  f->set_rule("cel-libraries");
  return f;
}

}  // namespace

absl::StatusOr<Version> CelScanMinCompatibility(const Version& target,
                                                absl::string_view requested) {
  // From 1.33 on, component-base's floor (engine::KubeVersionFloor); before,
  // one minor back.
  const Version floor = target.minor() >= 33 ? engine::KubeVersionFloor(target)
                                             : target.SubtractMinor(1);
  if (requested.empty()) {
    Version m = target.SubtractMinor(1);
    return m.CompareMajorMinor(floor) < 0 ? floor : m;
  }
  absl::StatusOr<Version> parsed = engine::ParseVersionFlag(requested);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cel_min_compatibility_version: ", parsed.status().message()));
  }
  if (parsed->CompareMajorMinor(floor) < 0 ||
      parsed->CompareMajorMinor(target) > 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cel_min_compatibility_version %s: kube-apiserver %s "
                        "accepts a min-compatibility "
                        "version between %s and %s",
                        parsed->MajorMinorString(), target.MajorMinorString(),
                        floor.MajorMinorString(), target.MajorMinorString()));
  }
  return Version::MajorMinor(parsed->major(), parsed->minor());
}

namespace {

// Fields between two looks at the work budget: reading one expression of
// up to 100,000 code points costs at most a few milliseconds.
constexpr int kFieldsPerBudgetLook = 16;

using Rollbacks = std::vector<std::pair<Version, const CelEnvironment*>>;

// The scope of a field (engine::kCelScopeMutations): MutatingAdmissionPolicy's
// spec.mutations[] expressions compile with the JSONPatch library too
// (apiserver pkg/admission/plugin/policy/mutating/compilation.go).
absl::string_view ScopeOf(const manifest::CelObject& object,
                          const manifest::CelField& field) {
  return object.kind == "MutatingAdmissionPolicy" &&
                 absl::StartsWith(field.path, "spec.mutations[")
             ? engine::kCelScopeMutations
             : "";
}

// Why one use cannot be written, and what to do about it.
std::string NotWritableMessage(const manifest::CelField& field,
                               const CelMissingUse& m,
                               const CelEnvironment& env,
                               const Version& min_compatibility) {
  const std::string where = absl::StrFormat(
      "%s (%s, line %d column %d of the expression)", field.path, m.use.name,
      m.use.position.line, m.use.position.column);
  const std::string introduced = m.introduced.MajorMinorString();
  switch (m.kind) {
    case engine::CelMissingKind::kNotInNewExpressions:
      return absl::StrFormat(
          "%s cannot be written at min-compatibility %s: %s is from %s, in "
          "NewExpressions from %s; raise --min-compatibility-version to %s or "
          "rewrite the expression without it",
          where, min_compatibility.MajorMinorString(), m.use.name, m.library,
          introduced, introduced);
    case engine::CelMissingKind::kUndeclared:
      return absl::StrCat(
          where, " ", engine::CelMissingSentence(m, env, min_compatibility),
          "; kube-apiserver ", env.line.MajorMinorString(),
          " refuses it (undeclared reference): upgrade to ", introduced,
          " before writing it or rewrite the expression without it");
    case engine::CelMissingKind::kGateOff:
      return absl::StrCat(
          where, " ", engine::CelMissingSentence(m, env, min_compatibility),
          "; turn the gate on or rewrite the expression without it");
    case engine::CelMissingKind::kUnknown:
      break;
  }
  return absl::StrCat(where, " ",
                      engine::CelMissingSentence(m, env, min_compatibility),
                      "; rewrite the expression without it");
}

// The findings of one expression: what min-compatibility cannot write, what
// a rollback cannot read.
void CheckField(const ScanText& text, const manifest::CelObject& object,
                const manifest::CelField& field,
                const engine::CelReading& reading, const CelEnvironment& env,
                const Version& min_compatibility, const Rollbacks& rollbacks,
                ScanAnswer& answer) {
  v1::ScanObjectsResponse* response = answer.response();
  const int first = answer.findings();
  const absl::string_view scope = ScopeOf(object, field);
  for (const CelMissingUse& m :
       engine::CelUsesNotWritable(reading, env, min_compatibility,
                                  catalog::EmbeddedCelEnvironments(), scope)) {
    v1::ScanFinding* f = AddFinding(text, object, field, m, answer);
    f->set_status(v1::SCAN_STATUS_CEL_NOT_WRITABLE);
    f->set_message(NotWritableMessage(field, m, env, min_compatibility));
    response->set_blocking(response->blocking() + 1);
  }
  for (const auto& [release, older] : rollbacks) {
    if (older == nullptr) continue;
    for (const CelMissingUse& m :
         engine::CelUsesNotReadable(reading, env, *older, scope)) {
      v1::ScanFinding* f = AddFinding(text, object, field, m, answer);
      f->set_status(v1::SCAN_STATUS_CEL_NOT_READABLE);
      f->set_rollback_release(release.MajorMinorString());
      f->set_message(absl::StrFormat(
          "%s (%s, line %d column %d of the expression) cannot be read back "
          "after a rollback to %s: kube-apiserver %s lacks %s (%s)",
          field.path, m.use.name, m.use.position.line, m.use.position.column,
          release.MajorMinorString(), release.MajorMinorString(), m.library,
          m.use.name));
      response->set_deprecated(response->deprecated() + 1);
    }
  }
  answer.SettleFindings(first);
}

}  // namespace

int ScanCelExpressions(absl::Span<const ScanText> texts, const Version& target,
                       const Version& min_compatibility, ScanAnswer& answer) {
  const CelEnvironment* env = catalog::CelEnvironmentFor(target);
  if (env == nullptr) {
    answer.response()->set_cel_not_checked(absl::StrCat(
        "CEL not checked: compatd has no CEL environment for Kubernetes ",
        target.MajorMinorString(), " (it has ", catalog::CelEnvironmentsHeld(),
        ")"));
    return 0;
  }
  answer.response()->set_cel_environment(env->Source());
  // The releases a rollback may reach: target - 1 down to the min-compatibility
  // version.
  Rollbacks rollbacks;
  for (Version r = target.SubtractMinor(1);
       r.CompareMajorMinor(min_compatibility) >= 0 &&
       r.CompareMajorMinor(target) < 0;
       r = r.SubtractMinor(1)) {
    rollbacks.push_back({r, catalog::CelEnvironmentFor(r)});
    if (r.minor() == 0) break;
  }
  manifest::ReadLimits limits;
  limits.budget = base::CurrentWorkBudget();
  int checked = 0;
  const auto done = [&] { return absl::StrCat(checked, " CEL expression(s)"); };
  for (const ScanText& text : texts) {
    if (answer.Exhausted(done())) return checked;
    const manifest::CelFields read = manifest::ReadCelFields(text.text, limits);
    if (!read.stopped.empty()) {
      answer.AddProblem(text.name, read.stopped_line,
                        absl::StrCat("CEL expressions: ", read.stopped));
      answer.MarkPartial(
          absl::StrCat(text.name, ": CEL expressions: ", read.stopped));
    }
    for (const manifest::CelObject& object : read.objects) {
      for (const manifest::CelField& field : object.fields) {
        if (++checked % kFieldsPerBudgetLook == 0 && answer.Exhausted(done())) {
          return checked;
        }
        absl::StatusOr<engine::CelReading> reading =
            engine::ReadCel(field.expression);
        if (!reading.ok()) {
          answer.AddProblem(
              text.name, field.line,
              absl::StrCat(object.kind, " ", object.name, " ", field.path, ": ",
                           reading.status().message()));
          continue;
        }
        CheckField(text, object, field, *reading, *env, min_compatibility,
                   rollbacks, answer);
      }
    }
  }
  return checked;
}

std::vector<std::string> CelNotReadableAfterRollback(
    absl::string_view object, absl::string_view old_object,
    const Version& binary, const Version& min_compatibility, size_t max,
    bool* stopped) {
  std::vector<std::string> out;
  manifest::ReadLimits limits;
  limits.budget = base::CurrentWorkBudget();
  const auto spent = [&] {
    const bool spent = limits.budget != nullptr && limits.budget->Exhausted();
    if (spent && stopped != nullptr) *stopped = true;
    return spent;
  };
  if (stopped != nullptr) *stopped = false;
  const CelEnvironment* env = catalog::CelEnvironmentFor(binary);
  if (env == nullptr || max == 0) return out;
  // An UPDATE's expressions that the stored object already has.
  absl::flat_hash_set<std::pair<std::string, std::string>> stored;
  if (!old_object.empty()) {
    for (const manifest::CelObject& old :
         manifest::ReadCelFields(old_object, limits).objects) {
      for (const manifest::CelField& field : old.fields) {
        stored.insert({field.path, field.expression});
      }
    }
  }
  const manifest::CelFields written_fields =
      manifest::ReadCelFields(object, limits);
  if (spent()) return out;
  for (const manifest::CelObject& written : written_fields.objects) {
    for (const manifest::CelField& field : written.fields) {
      if (stored.contains(std::make_pair(field.path, field.expression))) {
        continue;
      }
      // One expression can cost milliseconds (100 KB: 23 ms): look at the
      // budget before each.
      if (spent()) return out;
      absl::StatusOr<engine::CelReading> reading =
          engine::ReadCel(field.expression);
      // kube-apiserver compiled it before the webhook was called; what this
      // reader cannot read is never reported (no proof, no finding).
      if (!reading.ok()) continue;
      // The oldest release the rollback reaches that cannot read it.
      for (Version r = min_compatibility; r.CompareMajorMinor(binary) < 0;
           r = r.AddMinor(1)) {
        const CelEnvironment* older = catalog::CelEnvironmentFor(r);
        if (older == nullptr) continue;
        const std::vector<CelMissingUse> missing = engine::CelUsesNotReadable(
            *reading, *env, *older, ScopeOf(written, field));
        if (missing.empty()) continue;
        const CelMissingUse& m = missing.front();
        out.push_back(absl::StrFormat(
            "%s %s %s uses %s (%s, Kubernetes %s): kube-apiserver %s cannot "
            "read it back after a rollback",
            written.kind, written.name, field.path, m.use.name, m.library,
            m.introduced.MajorMinorString(), r.MajorMinorString()));
        if (out.size() >= max) return out;
        break;
      }
    }
  }
  return out;
}

}  // namespace compatd::api
