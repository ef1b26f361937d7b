#include "api/scan.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "api/convert.h"
#include "api/object_check.h"
#include "api/scan_answer.h"
#include "api/scan_cel.h"
#include "base/status_macros.h"
#include "base/work_budget.h"
#include "catalog/cel_environments.h"
#include "engine/api_history.h"
#include "engine/api_names.h"
#include "engine/api_verdict.h"
#include "engine/crd_manifest.h"
#include "engine/effective_version.h"
#include "manifest/manifest_reader.h"

namespace compatd::api {
namespace {

using engine::APIHistoryEntry;
using engine::Version;

absl::StatusOr<Version> ResolveTarget(const engine::Catalog& catalog,
                                      const engine::VersionQuery& query,
                                      absl::string_view target) {
  // No target: the release the cluster is going to (the catalog's
  // cluster.upgradeTarget, whose empty emulation version is the binary's),
  // else the binary version.
  std::string text;
  if (!target.empty()) {
    text = std::string(target);
  } else if (!query.binary_version.empty()) {
    text = std::string(query.binary_version);
  } else if (catalog.cluster.upgrade_target.has_value() &&
             !catalog.cluster.upgrade_target->emulation_version.empty()) {
    text = catalog.cluster.upgrade_target->emulation_version;
  } else {
    text = catalog.binary_version.ToString();
  }
  absl::StatusOr<Version> parsed = Version::Parse(text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "target \"%s\": %s; expected a Kubernetes release like \"1.37\"", text,
        parsed.status().message()));
  }
  const Version release = parsed->ToMajorMinor();
  if (release.major() != 1 ||
      release.minor() < static_cast<uint64_t>(kScanOldestMinor)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "target %s: scans cover Kubernetes 1.%d and later (the releases the "
        "API history's removals start from)",
        release.MajorMinorString(), kScanOldestMinor));
  }
  return release;
}

// apiVersion "apps/v1" -> ("apps", "v1"); "v1" -> ("", "v1").
bool SplitApiVersion(absl::string_view api_version, absl::string_view* group,
                     absl::string_view* version) {
  const size_t slash = api_version.find('/');
  if (slash == absl::string_view::npos) {
    *group = "";
    *version = api_version;
  } else {
    *group = api_version.substr(0, slash);
    *version = api_version.substr(slash + 1);
    if (group->empty() || version->find('/') != absl::string_view::npos) {
      return false;
    }
  }
  return !version->empty();
}

void SetStatus(v1::ScanFinding* finding, v1::ScanStatus status,
               v1::ScanObjectsResponse* response) {
  finding->set_status(status);
  if (IsBlocking(status)) {
    response->set_blocking(response->blocking() + 1);
  } else {
    response->set_deprecated(response->deprecated() + 1);
  }
}

v1::ScanStatus FromVerdict(engine::ApiState state) {
  switch (state) {
    case engine::ApiState::kDeprecated:
      return v1::SCAN_STATUS_DEPRECATED;
    case engine::ApiState::kNotServed:
      return v1::SCAN_STATUS_NOT_SERVED;
    case engine::ApiState::kRemoved:
      return v1::SCAN_STATUS_REMOVED;
    case engine::ApiState::kNotYetIntroduced:
      return v1::SCAN_STATUS_NOT_YET_INTRODUCED;
    case engine::ApiState::kUnknown:
      return v1::SCAN_STATUS_UNKNOWN;
    case engine::ApiState::kServed:
      break;
  }
  return v1::SCAN_STATUS_UNSPECIFIED;
}

class Scanner {
 public:
  Scanner(const engine::Catalog& catalog, const Version& target,
          const engine::ApiStartUp* startup, bool strict, ScanAnswer& answer)
      : catalog_(catalog),
        target_(target),
        startup_(startup),
        strict_(strict),
        limits_(answer.limits()),
        answer_(answer),
        response_(answer.response()) {
    for (const engine::APIGroupVersion& gv : catalog.apis) {
      builtin_groups_.insert(gv.group);
    }
    for (const APIHistoryEntry& entry : catalog.api_history) {
      builtin_groups_.insert(entry.group);
    }
  }

  // Every object of every text; CRDs first collected, so that a custom
  // resource before its CRD (or in another file) is still checked.
  void Run(absl::Span<const ScanText> texts, const ScanProgress& progress) {
    std::vector<manifest::ManifestContents> contents;
    contents.reserve(texts.size());
    manifest::ReadLimits read_limits;
    read_limits.budget = base::CurrentWorkBudget();
    size_t objects_read = 0;
    for (const ScanText& text : texts) {
      if (Exhausted()) break;
      contents.push_back(manifest::ReadManifests(text.text, read_limits));
      objects_read += contents.back().objects.size();
      if (progress) progress(contents.size(), objects_read);
      if (!contents.back().stopped.empty()) {
        MarkPartial(absl::StrCat(text.name, ": ", contents.back().stopped));
      }
      for (const manifest::ManifestObject& object : contents.back().objects) {
        if (object.crd.has_value() && !object.crd->group.empty() &&
            !object.crd->kind.empty()) {
          AddCrd(text.name, object);
        }
      }
    }
    for (size_t i = 0; i < contents.size(); ++i) {
      const std::string& source = texts[i].name;
      // Documents that are not Kubernetes objects: counted, or (strict)
      // problems.
      std::vector<manifest::ManifestProblem>& problems = contents[i].problems;
      if (strict_ && !contents[i].not_objects.empty()) {
        for (manifest::ManifestProblem& p : contents[i].not_objects) {
          p.message += " (--strict: every document must be one)";
          problems.push_back(std::move(p));
        }
        std::stable_sort(
            problems.begin(), problems.end(),
            [](const manifest::ManifestProblem& a,
               const manifest::ManifestProblem& b) { return a.line < b.line; });
      } else {
        response_->set_skipped_documents(
            response_->skipped_documents() +
            static_cast<uint32_t>(contents[i].not_objects.size()));
      }
      // Problems and objects merged by line.
      const auto& objects = contents[i].objects;
      size_t p = 0;
      for (const manifest::ManifestObject& object : objects) {
        while (p < problems.size() && problems[p].line <= object.line) {
          AddProblem(source, problems[p].line, problems[p].message);
          ++p;
        }
        // A CRD's checks cost more than an object's: the budget is looked
        // at before each.
        if ((++checked_ % kObjectsPerBudgetLook == 0 || object.crd) &&
            Exhausted()) {
          return;
        }
        Check(source, object);
      }
      for (; p < problems.size(); ++p) {
        AddProblem(source, problems[p].line, problems[p].message);
      }
      for (const manifest::ManifestProblem& w : contents[i].warnings) {
        AddWarning(source, w.line, w.message);
      }
    }
    for (auto& [source, line, message] : crd_warnings_) {
      AddWarning(source, line, message);
    }
  }

 private:
  static std::string CrdKey(absl::string_view group, absl::string_view kind) {
    return absl::StrCat(group, "/", kind);
  }

  void MarkPartial(std::string reason) {
    answer_.MarkPartial(std::move(reason));
  }

  // The call's budget (base/work_budget.h) is spent: the scan stops and
  // says so.
  bool Exhausted() {
    return answer_.Exhausted(absl::StrCat(checked_, " object(s)"));
  }

  // A CRD of the scanned set, by its group and kind. Two of one name (or
  // of one group and kind): the later one is used, and the scan says so.
  void AddCrd(const std::string& source,
              const manifest::ManifestObject& object) {
    const std::string key = CrdKey(object.crd->group, object.crd->kind);
    const Located* earlier = nullptr;
    if (auto it = crd_names_.find(object.name);
        !object.name.empty() && it != crd_names_.end()) {
      earlier = &it->second;
    } else if (auto k = crd_at_.find(key); k != crd_at_.end()) {
      earlier = &k->second;
    }
    if (earlier != nullptr) {
      crd_warnings_.push_back(
          {source, object.line,
           absl::StrFormat("CustomResourceDefinition %s (%s %s) is defined "
                           "twice: at %s:%d and at %s:%d; the scan checks "
                           "custom resources against the one at %s:%d",
                           object.name, object.crd->group, object.crd->kind,
                           earlier->source, earlier->line, source, object.line,
                           source, object.line)});
    }
    const Located here{source, object.line};
    crd_names_[object.name] = here;
    crd_at_[key] = here;
    crds_[key] = &object;
  }

  void AddWarning(const std::string& source, int line,
                  const std::string& message) {
    answer_.AddWarning(source, line, message);
  }

  void AddProblem(const std::string& source, int line,
                  const std::string& message) {
    answer_.AddProblem(source, line, message);
  }

  v1::ScanFinding* NewFinding(const std::string& source,
                              const manifest::ManifestObject& object) {
    v1::ScanFinding* finding = answer_.NewFinding(source);
    finding->set_line(object.line);
    finding->set_api_version(object.api_version);
    finding->set_kind(object.kind);
    finding->set_namespace_(object.namespace_);
    finding->set_name(object.name);
    return finding;
  }

  void Check(const std::string& source,
             const manifest::ManifestObject& object) {
    const int first = answer_.findings();
    CheckObject(source, object);
    answer_.SettleFindings(first);
  }

  void CheckObject(const std::string& source,
                   const manifest::ManifestObject& object) {
    response_->set_objects(response_->objects() + 1);
    absl::string_view group;
    absl::string_view version;
    if (!SplitApiVersion(object.api_version, &group, &version)) {
      AddProblem(source, object.line,
                 absl::StrFormat("apiVersion \"%s\" (kind %s) is not "
                                 "\"group/version\" or \"version\"",
                                 object.api_version, object.kind));
      return;
    }
    CheckApi(source, object, group, version);
    if (object.crd.has_value() && group == "apiextensions.k8s.io") {
      CheckCrd(source, object);
    }
    if (!object.rules.empty() && group == "rbac.authorization.k8s.io") {
      CheckRbacRules(source, object);
    }
  }

  // An RBAC rule's group/resource that the line knows (its apis or history)
  // and that no version serves at the target because each version that had
  // it is removed: one finding per group/resource, at the rule's line.
  // Wildcards say nothing of one API; a subresource ("pods/log") is its
  // resource's.
  void CheckRbacRules(const std::string& source,
                      const manifest::ManifestObject& object) {
    absl::flat_hash_set<std::string> reported;
    for (const manifest::RbacRule& rule : object.rules) {
      for (const std::string& group : rule.api_groups) {
        if (group == "*") continue;
        for (const std::string& written : rule.resources) {
          const absl::string_view resource =
              absl::string_view(written).substr(0, written.find('/'));
          if (resource.empty() || resource == "*") continue;
          if (!reported.insert(absl::StrCat(group, "/", resource)).second) {
            continue;
          }
          CheckRbacGrant(source, object, rule.line, group, resource);
        }
      }
    }
  }

  void CheckRbacGrant(const std::string& source,
                      const manifest::ManifestObject& object, int line,
                      absl::string_view group, absl::string_view resource) {
    std::vector<std::string> versions;
    auto add = [&](const std::string& version) {
      if (std::find(versions.begin(), versions.end(), version) ==
          versions.end()) {
        versions.push_back(version);
      }
    };
    for (const engine::APIGroupVersion& gv : catalog_.apis) {
      if (gv.group != group) continue;
      for (const engine::APIResource& r : gv.resources) {
        if (r.resource == resource) add(gv.version);
      }
    }
    for (const APIHistoryEntry& entry : catalog_.api_history) {
      if (entry.group == group && entry.resource == resource) {
        add(entry.version);
      }
    }
    if (versions.empty()) return;
    std::vector<std::string> removed;
    std::string replacement;
    for (const std::string& version : versions) {
      const engine::ApiVerdict verdict = engine::JudgeApiResource(
          catalog_, startup_, target_, group, version, resource);
      if (verdict.state != engine::ApiState::kRemoved) return;
      removed.push_back(absl::StrCat(
          engine::GroupVersionString(group, version), " (",
          verdict.removed.empty() ? "removed" : verdict.removed, ")"));
      if (replacement.empty() && !verdict.replacement.empty()) {
        replacement =
            absl::StrCat(verdict.replacement, " ", verdict.replacement_kind);
      }
    }
    v1::ScanFinding* finding = NewFinding(source, object);
    finding->set_line(line);
    finding->set_status(v1::SCAN_STATUS_RBAC_REMOVED_API);
    response_->set_rbac(response_->rbac() + 1);
    finding->set_replacement(replacement);
    finding->set_message(absl::StrCat(
        object.kind, " ", object.name, " grants on ", resource, " in ",
        group.empty() ? "the core API group"
                      : absl::StrCat("API group ", group),
        ", which Kubernetes ", target_.MajorMinorString(),
        " does not serve in any version: ", absl::StrJoin(removed, ", "),
        replacement.empty()
            ? std::string()
            : absl::StrCat("; grant on ", replacement, " instead")));
    finding->set_rule("rbac-removed-api");
  }

  // engine::JudgeApi at the target: the target line's start-up when the
  // target is inside its emulation window, then its API history.
  void CheckApi(const std::string& source,
                const manifest::ManifestObject& object, absl::string_view group,
                absl::string_view version) {
    const engine::ApiVerdict verdict = engine::JudgeApi(
        catalog_, startup_, target_, group, version, object.kind);
    if (verdict.state == engine::ApiState::kUnknown) {
      if (builtin_groups_.contains(group)) {
        v1::ScanFinding* finding = NewFinding(source, object);
        SetStatus(finding, v1::SCAN_STATUS_UNKNOWN, response_);
        finding->set_message(absl::StrCat(
            object.api_version, " ", object.kind, " is not a Kubernetes API: ",
            group.empty() ? "the core group" : absl::StrCat("group ", group),
            " is built in, and ",
            catalog_.api_history.empty()
                ? "the catalog's apis do not have this version and kind (the "
                  "catalog has no apiHistory)"
                : "no Kubernetes release had this version and kind"));
        finding->set_rule("api-history");
        return;
      }
      return CheckCustomResource(source, object, group, version);
    }
    if (verdict.served() && verdict.state != engine::ApiState::kDeprecated) {
      return;
    }
    v1::ScanFinding* finding = NewFinding(source, object);
    SetStatus(finding, FromVerdict(verdict.state), response_);
    finding->set_introduced(verdict.introduced);
    finding->set_deprecated(verdict.deprecated);
    finding->set_removed(verdict.removed);
    if (!verdict.replacement.empty()) {
      finding->set_replacement(
          absl::StrCat(verdict.replacement, " ", verdict.replacement_kind));
    }
    finding->set_message(verdict.message);
    finding->set_rule(verdict.source == engine::ApiSource::kStartUp
                          ? "emulation-window"
                          : "api-history");
  }

  void CheckCustomResource(const std::string& source,
                           const manifest::ManifestObject& object,
                           absl::string_view group, absl::string_view version) {
    auto it = crds_.find(CrdKey(group, object.kind));
    if (it == crds_.end()) {
      response_->set_unchecked(response_->unchecked() + 1);
      return;
    }
    const manifest::ManifestObject& crd = *it->second;
    // At most max_listed_names versions named, the rest counted: a CRD of
    // V versions and C such objects cost C * V before (issue 23).
    std::vector<absl::string_view> listed;
    size_t unlisted = 0;
    for (const manifest::CrdVersion& v : crd.crd->versions) {
      if (v.name != version) {
        if (listed.size() < static_cast<size_t>(limits_.max_listed_names)) {
          listed.push_back(v.name);
        } else {
          ++unlisted;
        }
        continue;
      }
      if (v.served) return;
      v1::ScanFinding* finding = NewFinding(source, object);
      SetStatus(finding, v1::SCAN_STATUS_NOT_SERVED, response_);
      finding->set_message(
          absl::StrFormat("%s %s: CRD %s lists version %s as not served",
                          object.api_version, object.kind, crd.name, version));
      finding->set_rule("crd");
      return;
    }
    v1::ScanFinding* finding = NewFinding(source, object);
    SetStatus(finding, v1::SCAN_STATUS_UNKNOWN, response_);
    finding->set_message(absl::StrFormat(
        "%s %s: CRD %s has no version %s (it lists %s)", object.api_version,
        object.kind, crd.name, version,
        listed.empty()
            ? std::string("none")
            : absl::StrCat(absl::StrJoin(listed, ", "),
                           unlisted == 0
                               ? ""
                               : absl::StrCat(" and ", unlisted, " more"))));
    finding->set_rule("crd");
  }

  void CheckCrd(const std::string& source,
                const manifest::ManifestObject& object) {
    std::vector<engine::CRDVersion> versions;
    versions.reserve(object.crd->versions.size());
    for (const manifest::CrdVersion& v : object.crd->versions) {
      versions.push_back(
          engine::CRDVersion{v.name, v.served, v.storage, v.deprecated});
    }
    for (engine::CRDManifestFinding& f : engine::CheckCRDManifest(
             catalog_, object.name, versions, object.crd->stored_versions)) {
      v1::ScanFinding* finding = NewFinding(source, object);
      SetStatus(finding, v1::SCAN_STATUS_CRD_VIOLATION, response_);
      finding->set_message(std::move(f.message));
      finding->set_rule(std::move(f.rule));
    }
  }

  // Objects between two looks at the work budget (reading the clock).
  static constexpr int kObjectsPerBudgetLook = 256;

  const engine::Catalog& catalog_;
  const Version& target_;
  const engine::ApiStartUp* startup_;
  const bool strict_;
  const ScanLimits& limits_;
  ScanAnswer& answer_;
  v1::ScanObjectsResponse* response_;
  int64_t checked_ = 0;
  absl::flat_hash_set<std::string> builtin_groups_;
  // CrdKey(spec.group, spec.names.kind) -> the CRD object (in `contents`).
  absl::flat_hash_map<std::string, const manifest::ManifestObject*> crds_;
  struct Located {
    std::string source;
    int line = 0;
  };
  // Where each CRD name and each CrdKey was last defined.
  absl::flat_hash_map<std::string, Located> crd_names_;
  absl::flat_hash_map<std::string, Located> crd_at_;
  struct Warning {
    std::string source;
    int line = 0;
    std::string message;
  };
  std::vector<Warning> crd_warnings_;
};

}  // namespace

absl::StatusOr<const runtime::ServingLine*> ScanLine(
    const runtime::ServingSnapshot& snapshot, absl::string_view binary_version,
    absl::string_view target) {
  if (binary_version.empty() && !target.empty()) {
    absl::StatusOr<Version> release = Version::Parse(target);
    if (release.ok()) {
      const engine::Catalog* line = snapshot.catalogs->Find(*release);
      for (const runtime::ServingLine& candidate : snapshot.lines) {
        if (line != nullptr && candidate.catalog.get() == line) {
          return &candidate;
        }
      }
    }
  }
  return snapshot.Line(binary_version);
}

absl::string_view ScanStatusLabel(v1::ScanStatus status) {
  switch (status) {
    case v1::SCAN_STATUS_DEPRECATED:
      return "DEPRECATED";
    case v1::SCAN_STATUS_REMOVED:
      return "REMOVED";
    case v1::SCAN_STATUS_NOT_SERVED:
      return "NOT-SERVED";
    case v1::SCAN_STATUS_NOT_YET_INTRODUCED:
      return "NOT-YET-INTRODUCED";
    case v1::SCAN_STATUS_UNKNOWN:
      return "UNKNOWN";
    case v1::SCAN_STATUS_CRD_VIOLATION:
      return "CRD-VIOLATION";
    case v1::SCAN_STATUS_CEL_NOT_WRITABLE:
      return "CEL-NOT-WRITABLE";
    case v1::SCAN_STATUS_CEL_NOT_READABLE:
      return "CEL-NOT-READABLE";
    case v1::SCAN_STATUS_RBAC_REMOVED_API:
      return "RBAC-REMOVED-API";
    default:
      return "-";
  }
}

bool IsBlocking(v1::ScanStatus status) {
  return status != v1::SCAN_STATUS_DEPRECATED &&
         status != v1::SCAN_STATUS_CEL_NOT_READABLE &&
         status != v1::SCAN_STATUS_RBAC_REMOVED_API &&
         status != v1::SCAN_STATUS_UNSPECIFIED;
}

// The CEL part of the summary line: what was checked, from which environment
// when it is a history, or that CEL was not checked at all.
namespace {

std::string CelSummary(const v1::ScanObjectsResponse& response, int checked,
                       const Version& target,
                       const Version& min_compatibility) {
  if (!response.cel_not_checked().empty()) {
    return absl::StrCat("; ", response.cel_not_checked());
  }
  if (checked == 0) return "";
  const engine::CelEnvironment* env = catalog::CelEnvironmentFor(target);
  const bool history = env != nullptr && env->history_of.has_value();
  return absl::StrFormat(
      "; %d CEL expression(s) checked at min-compatibility %s (one that "
      "cannot be written counts as removed, one a rollback cannot read as "
      "deprecated)%s",
      checked, min_compatibility.MajorMinorString(),
      history ? absl::StrCat(", CEL environment: ", response.cel_environment())
              : "");
}

}  // namespace

absl::Status ScanManifests(const runtime::ServingLine& snapshot,
                           const engine::VersionQuery& base,
                           absl::string_view target,
                           absl::Span<const ScanText> texts,
                           v1::ScanObjectsResponse* response,
                           const ScanLimits& limits,
                           absl::string_view cel_min_compatibility,
                           const ScanProgress& progress, bool strict) {
  const engine::Catalog& catalog = *snapshot.catalog;
  COMPATD_ASSIGN_OR_RETURN(engine::EffectiveVersions effective,
                           engine::ResolveEffectiveVersions(catalog, base));
  COMPATD_ASSIGN_OR_RETURN(Version release,
                           ResolveTarget(catalog, base, target));
  const std::string release_text = release.MajorMinorString();
  // Inside the emulation window: the target as --emulated-version (and as
  // --min-compatibility-version, which every emulation accepts and which
  // does not change what is served).
  engine::VersionQuery at_target = base;
  at_target.emulation_version = release_text;
  at_target.min_compatibility_version = release_text;
  bool in_window = engine::ResolveEffectiveVersions(catalog, at_target).ok();
  if (!in_window) {
    // A binary without --min-compatibility-version (before 1.33) takes the
    // emulation version alone.
    at_target.min_compatibility_version = base.min_compatibility_version;
    in_window = engine::ResolveEffectiveVersions(catalog, at_target).ok();
  }
  ObjectApiContext window;
  if (in_window) {
    COMPATD_RETURN_IF_ERROR(
        ResolveObjectApiContext(snapshot, at_target, &window));
  }
  COMPATD_ASSIGN_OR_RETURN(
      const Version cel_min_compat,
      CelScanMinCompatibility(release, cel_min_compatibility));
  ScanAnswer answer(limits, response);
  const engine::ApiStartUp startup = StartUpOf(window);
  Scanner(catalog, release, in_window ? &startup : nullptr, strict, answer)
      .Run(texts, progress);
  const int cel_checked =
      ScanCelExpressions(texts, release, cel_min_compat, answer);
  response->set_target(release_text);
  FillCommon(
      snapshot, effective,
      absl::StrFormat(
          "%d object(s) checked against Kubernetes %s (%s): %d deprecated, %d "
          "removed or not served, %d custom resource(s) not checked, %d bad "
          "document(s)%s%s%s",
          response->objects(), release_text,
          in_window ? absl::StrCat("inside the emulation window of binary ",
                                   effective.binary.MajorMinorString(),
                                   ": its API start-up, then the API history")
                    : absl::StrCat("outside the emulation window of binary ",
                                   effective.binary.MajorMinorString(),
                                   ": the API history"),
          response->deprecated(), response->blocking(), response->unchecked(),
          response->problems_size(),
          response->skipped_documents() == 0
              ? std::string()
              : absl::StrFormat(
                    "; %d non-Kubernetes document%s skipped (no kind: values "
                    "files, Chart.yaml, workflows; --strict refuses them)",
                    response->skipped_documents(),
                    response->skipped_documents() == 1 ? "" : "s"),
          response->rbac() == 0
              ? std::string()
              : absl::StrFormat("; %d RBAC rule grant(s) on APIs removed at "
                                "the target",
                                response->rbac()),
          CelSummary(*response, cel_checked, release, cel_min_compat)),
      response);
  if (catalog.exactness == engine::Exactness::kProvisional) {
    absl::StrAppend(response->mutable_reason(), "; PROVISIONAL data for ",
                    "kube-apiserver ", catalog.binary_version.ToString(), ": ",
                    catalog.exactness_reason);
  }
  return absl::OkStatus();
}

}  // namespace compatd::api
