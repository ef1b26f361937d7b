#include "engine/upgrade_plan.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "engine/api_availability.h"
#include "engine/feature_gate_flags.h"
#include "engine/features.h"
#include "engine/skew.h"
#include "engine/storage_agreement.h"
#include "engine/storage_version.h"

namespace compatd::engine {
namespace {

// The fields of a VersionContext: an engine message that starts with one of
// them gets the end's prefix as a path ("from.emulation_version ..."), any
// other message the prefix and a colon.
absl::Status Prefixed(absl::string_view end, const absl::Status& status) {
  static constexpr absl::string_view kFields[] = {
      "binary_version", "emulation_version", "min_compatibility_version",
      "feature_gates", "runtime_config"};
  for (absl::string_view field : kFields) {
    if (absl::StartsWith(status.message(), field)) {
      return absl::Status(status.code(),
                          absl::StrCat(end, ".", status.message()));
    }
  }
  return absl::Status(status.code(), absl::StrCat(end, ": ", status.message()));
}

// One --feature-gates entry and where it was given.
struct GateFlag {
  bool value = false;
  std::string source;  // "cluster.featureGates", "from.feature_gates", ...
};
using GateFlags = std::map<std::string, GateFlag>;

absl::Status MergeGateFlags(absl::string_view end, absl::string_view text,
                            GateFlags* flags) {
  if (text.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<FeatureGateFlag>> parsed = ParseFeatureGates(text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.feature_gates \"%s\": %s; expected Name=true|false pairs "
        "separated by commas",
        end, text, parsed.status().message()));
  }
  for (const FeatureGateFlag& f : *parsed) {
    (*flags)[std::string(f.name)] =
        GateFlag{f.value, absl::StrCat(end, ".feature_gates")};
  }
  return absl::OkStatus();
}

std::vector<std::pair<std::string, bool>> AsList(const GateFlags& flags) {
  std::vector<std::pair<std::string, bool>> out;
  out.reserve(flags.size());
  for (const auto& [name, flag] : flags) out.emplace_back(name, flag.value);
  return out;
}

absl::string_view OnOff(bool b) { return b ? "on" : "off"; }
absl::string_view TrueFalse(bool b) { return b ? "true" : "false"; }

std::string JoinFlags(absl::string_view a, absl::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  return absl::StrCat(a, ",", b);
}

// The flags one step runs with.
struct StepFlags {
  GateFlags gates;
  std::string runtime_config;  // on top of the cluster section's
  std::optional<bool> efc;
  std::optional<bool> rcfc;
};

// One state of the cluster: its versions, flags and every decision the plan
// compares.
struct State {
  EffectiveVersions versions;
  // The --feature-gates entries in force; `features` borrows their names
  // (features.h), so they live on the heap, where copies and moves of the
  // State leave them.
  std::shared_ptr<const std::vector<std::pair<std::string, bool>>> gate_flags;
  std::vector<FeatureDecision> features;  // by name, one per catalog gate
  bool apis_known = false;
  // "group/version" -> served resources
  std::map<std::string, std::set<std::string>> served;
  // "group/resource" -> storage decision
  std::map<std::string, StorageVersionDecision> storage;
};

std::string GroupVersion(absl::string_view group, absl::string_view version) {
  return group.empty() ? std::string(version)
                       : absl::StrCat(group, "/", version);
}

std::string GroupResource(absl::string_view group, absl::string_view resource) {
  return group.empty() ? std::string(resource)
                       : absl::StrCat(resource, ".", group);
}

const APIResource* FindResource(const Catalog& catalog,
                                absl::string_view group_version,
                                absl::string_view resource) {
  for (const APIGroupVersion& gv : catalog.apis) {
    if (GroupVersion(gv.group, gv.version) != group_version) continue;
    for (const APIResource& r : gv.resources) {
      if (r.resource == resource) return &r;
    }
  }
  return nullptr;
}

std::string DescribeGate(const FeatureDecision& d) {
  if (d.spec == nullptr) return "not introduced, off";
  return absl::StrCat(PreReleaseName(d.stage), " ", OnOff(d.enabled),
                      " (default ", OnOff(d.default_enabled),
                      d.locked_to_default ? ", locked" : "", ")");
}

class Planner {
 public:
  Planner(const Catalog& catalog, const UpgradePlanQuery& query)
      : catalog_(catalog), query_(query) {}

  absl::StatusOr<UpgradePlan> Run();

 private:
  absl::StatusOr<EffectiveVersions> ResolveEnd(absl::string_view end,
                                               const VersionQuery& query) const;
  // The state at `versions` with `flags`, the items of its start-up checks
  // appended (step `step`, release `release`). At step 0 (from) a refused
  // flag is an error instead.
  absl::StatusOr<State> Evaluate(int step, absl::string_view release,
                                 const EffectiveVersions& versions,
                                 const StepFlags& flags);
  void CompareFeatures(int step, absl::string_view release, const State& before,
                       const State& after);
  void CompareAPIs(int step, absl::string_view release, const State& before,
                   const State& after);
  absl::Status CompareStorage(int step, absl::string_view release,
                              const State& before, const State& after);
  absl::Status CheckClients(int step, absl::string_view release,
                            const State& state, const EffectiveVersions& to);

  void Add(PlanSection section, int step, absl::string_view release,
           std::string subject, std::string rule, std::string reason,
           std::string action, bool blocking) {
    plan_.items.push_back(PlanItem{
        section, step, std::string(release), std::move(subject),
        std::move(rule), std::move(reason), std::move(action), blocking});
  }

  const Catalog& catalog_;
  const UpgradePlanQuery& query_;
  UpgradePlan plan_;
  // Gate flags the plan already told the user to remove.
  std::set<std::string> dropped_gates_;
  bool dropped_efc_ = false;
  bool dropped_rcfc_ = false;
  bool dropped_runtime_config_ = false;
  std::set<size_t> clients_reported_;
};

absl::StatusOr<EffectiveVersions> Planner::ResolveEnd(
    absl::string_view end, const VersionQuery& query) const {
  const Version& binary = catalog_.binary_version;
  const std::string accepted_emulation =
      absl::StrCat(KubeVersionFloor(binary).MajorMinorString(), " to ",
                   binary.MajorMinorString());
  absl::StatusOr<EffectiveVersions> versions =
      ResolveEffectiveVersions(catalog_, query);
  if (!versions.ok()) return Prefixed(end, versions.status());
  if (versions->binary.CompareMajorMinor(binary) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.binary_version \"%s\": this catalog (%s) describes kube-apiserver "
        "%s, and a plan answers between states of that binary only (any "
        "%s patch); give a cluster still on an older release as its "
        "emulation_version (%s are accepted), a newer target needs that "
        "release's catalog",
        end, query.binary_version, catalog_.source, binary.MajorMinorString(),
        binary.MajorMinorString(), accepted_emulation));
  }
  return versions;
}

absl::StatusOr<State> Planner::Evaluate(int step, absl::string_view release,
                                        const EffectiveVersions& versions,
                                        const StepFlags& flags) {
  State state;
  state.versions = versions;
  const std::string at =
      step == 0 ? std::string("at from")
                : absl::StrFormat(
                      "at step %d (emulation %s, "
                      "min-compatibility %s)",
                      step, versions.emulation.MajorMinorString(),
                      versions.min_compatibility.MajorMinorString());

  // --feature-gates, entry by entry (unsafeSetFromMap's checks).
  GateFlags gates;
  for (const auto& [name, flag] : flags.gates) {
    if (dropped_gates_.contains(name)) continue;
    const GateFlagCheck check =
        CheckFeatureGateFlag(catalog_, versions, name, flag.value);
    if (check.problem == GateFlagProblem::kNone) {
      gates.emplace(name, flag);
      continue;
    }
    if (step == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: kube-apiserver refuses the cluster's current flags %s: %s; "
          "from must describe flags the cluster runs with",
          flag.source, at, check.message));
    }
    dropped_gates_.insert(name);
    std::string rule, action;
    switch (check.problem) {
      case GateFlagProblem::kUnknown:
        rule = "feature-gate-unknown";
        action = absl::StrFormat("remove %s from --feature-gates", name);
        break;
      case GateFlagProblem::kLocked:
        rule = "feature-gate-locked";
        action = absl::StrFormat(
            "remove %s=%s from --feature-gates before this step; from here "
            "the gate is %s whatever the flag says",
            name, TrueFalse(flag.value), OnOff(!flag.value));
        break;
      case GateFlagProblem::kNotIntroduced:
        rule = "feature-gate-not-introduced";
        action = absl::StrFormat(
            "set %s only from the step whose emulation version introduces it",
            name);
        break;
      case GateFlagProblem::kNone:
        break;
    }
    Add(PlanSection::kFlags, step, release,
        absl::StrFormat("--feature-gates %s=%s (%s)", name,
                        TrueFalse(flag.value), flag.source),
        std::move(rule),
        absl::StrFormat("%s: kube-apiserver does not start %s "
                        "(component-base featuregate unsafeSetFromMap)",
                        check.message, at),
        std::move(action), true);
  }
  state.gate_flags =
      std::make_shared<const std::vector<std::pair<std::string, bool>>>(
          AsList(gates));
  COMPATD_ASSIGN_OR_RETURN(
      state.features,
      DecideFeaturesWithFlags(catalog_, versions, *state.gate_flags));

  // --runtime-config and the forward-compatibility flags.
  VersionQuery query;
  query.runtime_config =
      dropped_runtime_config_ ? absl::string_view() : flags.runtime_config;
  query.emulation_forward_compatible =
      dropped_efc_ ? std::optional<bool>(false) : flags.efc;
  query.runtime_config_emulation_forward_compatible =
      dropped_rcfc_ ? std::optional<bool>(false) : flags.rcfc;
  absl::StatusOr<std::vector<ServedGroupVersion>> served =
      ListServedAPIs(catalog_, versions, query);
  if (!served.ok() && step == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "from: kube-apiserver refuses the cluster's current --runtime-config "
        "or forward-compatibility flags at from: %s; from must describe "
        "flags the cluster runs with",
        served.status().message()));
  }
  if (!served.ok()) {
    const std::string refused(served.status().message());
    // Which flag: the forward-compatibility flags first (only valid while
    // emulating an older release), then --runtime-config.
    const bool efc = query.emulation_forward_compatible.value_or(
        catalog_.cluster.emulation_forward_compatible.value_or(false));
    const bool rcfc =
        query.runtime_config_emulation_forward_compatible.value_or(
            catalog_.cluster.runtime_config_emulation_forward_compatible
                .value_or(false));
    std::string subject = "--runtime-config";
    std::string action =
        "change --runtime-config as the message says before this step";
    if (efc || rcfc) {
      VersionQuery without = query;
      without.emulation_forward_compatible = false;
      without.runtime_config_emulation_forward_compatible = false;
      absl::StatusOr<std::vector<ServedGroupVersion>> retry =
          ListServedAPIs(catalog_, versions, without);
      if (retry.ok()) {
        std::vector<std::string> names;
        if (efc) names.push_back("--emulation-forward-compatible");
        if (rcfc)
          names.push_back("--runtime-config-emulation-forward-compatible");
        subject = absl::StrJoin(names, " ");
        action = absl::StrFormat(
            "drop %s at this step: the flags exist for emulating an older "
            "release only",
            subject);
        dropped_efc_ = efc;
        dropped_rcfc_ = rcfc;
        served = std::move(retry);
      }
    }
    if (!served.ok()) {
      dropped_runtime_config_ = true;
      VersionQuery without = query;
      without.runtime_config = {};
      served = ListServedAPIs(catalog_, versions, without);
    }
    Add(PlanSection::kFlags, step, release, std::move(subject),
        "apiserver-flags-refused",
        absl::StrFormat("kube-apiserver does not start %s: %s "
                        "(apiserver pkg/server/options, "
                        "docs/kubernetes-rules.md#api-availability)",
                        at, refused),
        std::move(action), true);
  }
  if (served.ok()) {
    state.apis_known = true;
    for (const ServedGroupVersion& gv : *served) {
      state.served[GroupVersion(gv.group, gv.version)].insert(
          gv.resources.begin(), gv.resources.end());
    }
  }

  // Storage versions of every persisted group-resource.
  for (const APIGroupVersion& gv : catalog_.apis) {
    for (const APIResource& r : gv.resources) {
      if (!r.persisted || absl::StrContains(r.resource, '/')) continue;
      const std::string key = GroupResource(gv.group, r.resource);
      if (state.storage.contains(key)) continue;
      absl::StatusOr<StorageVersionDecision> d =
          DecideStorageVersion(catalog_, versions, gv.group, r.resource);
      if (d.ok()) state.storage.emplace(key, *std::move(d));
    }
  }
  return state;
}

void Planner::CompareFeatures(int step, absl::string_view release,
                              const State& before, const State& after) {
  for (size_t i = 0; i < after.features.size() && i < before.features.size();
       ++i) {
    const FeatureDecision& a = before.features[i];
    const FeatureDecision& b = after.features[i];
    if (a.stage == b.stage && a.enabled == b.enabled &&
        a.default_enabled == b.default_enabled &&
        a.locked_to_default == b.locked_to_default) {
      continue;
    }
    const std::string& name = b.feature->name;
    std::string action;
    if (a.enabled != b.enabled) {
      if (b.locked_to_default) {
        action = absl::StrFormat(
            "%s turns %s and is locked: workloads must work with it %s "
            "before this step",
            name, OnOff(b.enabled), OnOff(b.enabled));
      } else {
        action = absl::StrFormat(
            "%s turns %s: check the workloads that depend on it, or keep it "
            "%s with --feature-gates=%s=%s until they are ready",
            name, OnOff(b.enabled), OnOff(a.enabled), name,
            TrueFalse(a.enabled));
      }
    } else if (b.overridden) {
      action = absl::StrFormat(
          "none: --feature-gates keeps it %s; its default is now %s",
          OnOff(b.enabled), OnOff(b.default_enabled));
    } else {
      action = absl::StrFormat("none: it stays %s", OnOff(b.enabled));
    }
    Add(PlanSection::kFeatureGates, step, release,
        absl::StrCat("feature gate ", name),
        a.enabled != b.enabled ? "feature-gate-enabled-changes"
                               : "feature-gate-spec-changes",
        absl::StrFormat("%s -> %s at emulation %s, min-compatibility %s (%s)",
                        DescribeGate(a), DescribeGate(b),
                        after.versions.emulation.MajorMinorString(),
                        after.versions.min_compatibility.MajorMinorString(),
                        b.Reason()),
        std::move(action), false);
  }
}

void Planner::CompareAPIs(int step, absl::string_view release,
                          const State& before, const State& after) {
  if (!before.apis_known || !after.apis_known) return;
  std::set<std::string> group_versions;
  for (const auto& [gv, unused] : before.served) group_versions.insert(gv);
  for (const auto& [gv, unused] : after.served) group_versions.insert(gv);
  static const std::set<std::string> kNone;
  for (const std::string& gv : group_versions) {
    auto b = before.served.find(gv);
    auto a = after.served.find(gv);
    const std::set<std::string>& was =
        b == before.served.end() ? kNone : b->second;
    const std::set<std::string>& now =
        a == after.served.end() ? kNone : a->second;
    std::vector<std::string> stopped, started;
    std::set<std::string> replacements;
    std::vector<std::string> why;
    for (const std::string& r : was) {
      if (now.contains(r)) continue;
      stopped.push_back(r);
      if (const APIResource* res = FindResource(catalog_, gv, r)) {
        if (!res->replacement.empty()) replacements.insert(res->replacement);
        if (res->removed.has_value() &&
            *res->removed <= after.versions.emulation) {
          why.push_back(absl::StrFormat("%s removed in %s", r,
                                        res->removed->MajorMinorString()));
        }
      }
    }
    for (const std::string& r : now) {
      if (!was.contains(r)) started.push_back(r);
    }
    const std::string at = absl::StrFormat(
        "at emulation %s", after.versions.emulation.MajorMinorString());
    if (!stopped.empty()) {
      std::string reason = absl::StrFormat("%s %s stop%s being served %s", gv,
                                           absl::StrJoin(stopped, ", "),
                                           stopped.size() == 1 ? "s" : "", at);
      if (!why.empty()) {
        absl::StrAppend(&reason, " (", absl::StrJoin(why, "; "),
                        "; apiserver pkg/server/deleted_kinds.go)");
      }
      std::string action =
          replacements.empty()
              ? std::string(
                    "stop using them before this step: nothing replaces them")
              : absl::StrFormat(
                    "move clients and manifests to %s before this step",
                    absl::StrJoin(replacements, ", "));
      Add(PlanSection::kAPIs, step, release, gv, "api-stops-serving",
          std::move(reason), std::move(action), true);
    }
    if (!started.empty()) {
      Add(PlanSection::kAPIs, step, release, gv, "api-starts-serving",
          absl::StrFormat("%s %s start%s being served %s", gv,
                          absl::StrJoin(started, ", "),
                          started.size() == 1 ? "s" : "", at),
          "none: available to clients from this step", false);
    }
  }
}

absl::Status Planner::CompareStorage(int step, absl::string_view release,
                                     const State& before, const State& after) {
  for (const auto& [key, now] : after.storage) {
    auto it = before.storage.find(key);
    if (it == before.storage.end() || it->second.version == now.version) {
      continue;
    }
    const StorageVersionDecision& was = it->second;
    std::string removal;
    if (const APIResource* old = FindResource(
            catalog_, GroupVersion(was.group, was.version), was.resource)) {
      if (old->removed.has_value()) {
        removal = absl::StrFormat(" (%s is removed in %s)",
                                  GroupVersion(was.group, was.version),
                                  old->removed->MajorMinorString());
      }
    }
    Add(PlanSection::kStorage, step, release, key, "storage-version-changes",
        absl::StrFormat("written as %s from this step, was %s: %s",
                        GroupVersion(now.group, now.version),
                        GroupVersion(was.group, was.version), now.reason),
        absl::StrFormat(
            "once every API server runs this step, rewrite the stored "
            "objects in %s (a StorageVersionMigration of %s) before %s stops "
            "being decodable%s",
            GroupVersion(now.group, now.version), key,
            GroupVersion(was.group, was.version), removal),
        false);

    // KEP-2339: while the step rolls out, servers of both steps report.
    std::vector<ServerStorageVersion> reports(2);
    reports[0].apiserver_id = absl::StrFormat("apiserver-step-%d", step - 1);
    reports[0].encoding_version = GroupVersion(was.group, was.version);
    reports[0].decodable_versions = was.decodable_versions;
    reports[1].apiserver_id = absl::StrFormat("apiserver-step-%d", step);
    reports[1].encoding_version = GroupVersion(now.group, now.version);
    reports[1].decodable_versions = now.decodable_versions;
    COMPATD_ASSIGN_OR_RETURN(
        StorageVersionAgreement agreement,
        ComputeStorageVersionAgreement(reports, {}, now.group, now.resource));
    Add(PlanSection::kStorage, step, release, key,
        "encoding-version-disagreement",
        absl::StrFormat(
            "while this step rolls out %s: StorageVersion %s has %s=%s (%s), "
            "no common encoding version (KEP-2339, apiserver "
            "pkg/storageversion)",
            agreement.reason, agreement.object_name, agreement.condition_type,
            agreement.condition_status, agreement.condition_reason),
        "finish the step on every API server before migrating: the storage "
        "version migrator waits for a common encoding version",
        false);
  }
  return absl::OkStatus();
}

absl::Status Planner::CheckClients(int step, absl::string_view release,
                                   const State& state,
                                   const EffectiveVersions& to) {
  for (size_t i = 0; i < query_.clients.size(); ++i) {
    if (clients_reported_.contains(i)) continue;
    const PlanClient& client = query_.clients[i];
    absl::StatusOr<SkewDecision> d =
        CheckSkew(catalog_, state.versions, client.component, client.version);
    if (!d.ok()) {
      if (client.required) {
        return absl::Status(
            d.status().code(),
            absl::StrCat(client.source, ": ", d.status().message()));
      }
      clients_reported_.insert(i);  // the policy cannot judge it
      continue;
    }
    if (d->verdict == SkewVerdict::kAllowed) continue;
    clients_reported_.insert(i);
    absl::StatusOr<SkewDecision> at_target =
        CheckSkew(catalog_, to, client.component, client.version);
    std::string target;
    if (at_target.ok()) {
      target = absl::StrFormat("; allowed at the target: %s to %s",
                               at_target->min_version.MajorMinorString(),
                               at_target->max_version.MajorMinorString());
    }
    Add(PlanSection::kClients, step, release,
        absl::StrFormat("%s %s (%s)", client.component, client.version,
                        client.source),
        d->verdict == SkewVerdict::kTooOld ? "client-too-old"
                                           : "client-too-new",
        absl::StrFormat("%s: allowed %s to %s at this step%s "
                        "(docs/kubernetes-rules.md#skew-policy)",
                        d->Reason(), d->min_version.MajorMinorString(),
                        d->max_version.MajorMinorString(), target),
        d->verdict == SkewVerdict::kTooOld
            ? absl::StrFormat(
                  "upgrade %s to %s or later before this step%s",
                  client.component, d->min_version.MajorMinorString(),
                  at_target.ok() && at_target->min_version > d->min_version
                      ? absl::StrCat(" (",
                                     at_target->min_version.MajorMinorString(),
                                     " or later for the target)")
                      : std::string())
            : absl::StrFormat("hold %s at %s or older until this step",
                              client.component,
                              d->max_version.MajorMinorString()),
        true);
  }
  return absl::OkStatus();
}

absl::StatusOr<UpgradePlan> Planner::Run() {
  // An empty to.emulation_version is the binary version: a full upgrade.
  VersionQuery to_query = query_.to;
  const std::string binary_mm = catalog_.binary_version.MajorMinorString();
  if (to_query.emulation_version.empty()) {
    to_query.emulation_version = binary_mm;
  }
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions from,
                           ResolveEnd("from", query_.from));
  COMPATD_ASSIGN_OR_RETURN(EffectiveVersions to, ResolveEnd("to", to_query));
  if (to.emulation < from.emulation) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "to.emulation_version %s is older than from's %s: a plan goes "
        "forward (to roll back, lower --emulated-version, no further than "
        "the min-compatibility version %s)",
        to.emulation.MajorMinorString(), from.emulation.MajorMinorString(),
        from.min_compatibility.MajorMinorString()));
  }
  if (to.min_compatibility < from.min_compatibility) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "to.min_compatibility_version %s is older than from's %s: a plan "
        "goes forward; to keep rollback to %s, give to.min_compatibility_"
        "version %s",
        to.min_compatibility.MajorMinorString(),
        from.min_compatibility.MajorMinorString(),
        from.min_compatibility.MajorMinorString(),
        from.min_compatibility.MajorMinorString()));
  }
  plan_.from = from;
  plan_.to = to;

  // The flags: the cluster section's, from's on top; to's on top of those
  // once the emulation version reaches to's.
  StepFlags from_flags;
  for (const auto& [name, value] : catalog_.cluster.feature_gates) {
    from_flags.gates[name] = GateFlag{value, "cluster.featureGates"};
  }
  COMPATD_RETURN_IF_ERROR(
      MergeGateFlags("from", query_.from.feature_gates, &from_flags.gates));
  from_flags.runtime_config = std::string(query_.from.runtime_config);
  from_flags.efc = query_.from.emulation_forward_compatible;
  from_flags.rcfc = query_.from.runtime_config_emulation_forward_compatible;
  StepFlags to_flags = from_flags;
  COMPATD_RETURN_IF_ERROR(
      MergeGateFlags("to", query_.to.feature_gates, &to_flags.gates));
  to_flags.runtime_config =
      JoinFlags(query_.from.runtime_config, query_.to.runtime_config);
  if (query_.to.emulation_forward_compatible.has_value()) {
    to_flags.efc = query_.to.emulation_forward_compatible;
  }
  if (query_.to.runtime_config_emulation_forward_compatible.has_value()) {
    to_flags.rcfc = query_.to.runtime_config_emulation_forward_compatible;
  }

  // The steps, in KEP-4330's order.
  auto versions_at = [&](const Version& emulation, const Version& min_compat) {
    return EffectiveVersions{to.binary, emulation, min_compat};
  };
  std::vector<std::pair<UpgradeStep, std::string>> steps;  // with release
  {
    UpgradeStep s;
    s.name = "binaries";
    s.versions = versions_at(from.emulation, from.min_compatibility);
    s.action = absl::StrFormat(
        "run kube-apiserver %s on every control-plane node, one at a time, "
        "with --emulated-version=%s --min-compatibility-version=%s, before "
        "any other component: what clients see stays %s's",
        to.binary.ToString(), from.emulation.MajorMinorString(),
        from.min_compatibility.MajorMinorString(),
        from.emulation.MajorMinorString());
    steps.emplace_back(std::move(s), to.binary.MajorMinorString());
  }
  for (Version e = from.emulation.AddMinor(1); e <= to.emulation;
       e = e.AddMinor(1)) {
    UpgradeStep s;
    s.name = absl::StrCat("emulation ", e.MajorMinorString());
    s.versions = versions_at(e, from.min_compatibility);
    s.action = absl::StrFormat(
        "restart every kube-apiserver with --emulated-version=%s "
        "(--min-compatibility-version stays %s), then check the cluster",
        e.MajorMinorString(), from.min_compatibility.MajorMinorString());
    steps.emplace_back(std::move(s), e.MajorMinorString());
  }
  for (Version m = from.min_compatibility.AddMinor(1);
       m <= to.min_compatibility; m = m.AddMinor(1)) {
    UpgradeStep s;
    s.name = absl::StrCat("min-compatibility ", m.MajorMinorString());
    s.versions = versions_at(to.emulation, m);
    s.action = absl::StrFormat(
        "restart every kube-apiserver with --min-compatibility-version=%s "
        "(--emulated-version %s): rollback below %s is no longer possible",
        m.MajorMinorString(), to.emulation.MajorMinorString(),
        m.MajorMinorString());
    steps.emplace_back(std::move(s), m.MajorMinorString());
  }

  COMPATD_ASSIGN_OR_RETURN(State previous, Evaluate(0, "", from, from_flags));
  for (size_t i = 0; i < steps.size(); ++i) {
    UpgradeStep& step = steps[i].first;
    const std::string& release = steps[i].second;
    step.number = static_cast<int>(i) + 1;
    step.rollback_to = step.versions.min_compatibility.MajorMinorString();
    const StepFlags& flags =
        step.versions.emulation == to.emulation ? to_flags : from_flags;
    COMPATD_ASSIGN_OR_RETURN(
        State state, Evaluate(step.number, release, step.versions, flags));
    CompareFeatures(step.number, release, previous, state);
    CompareAPIs(step.number, release, previous, state);
    COMPATD_RETURN_IF_ERROR(
        CompareStorage(step.number, release, previous, state));
    Add(PlanSection::kRollback, step.number, release,
        absl::StrCat("step ", step.number, " (", step.name, ")"),
        "rollback-to-min-compatibility",
        absl::StrFormat(
            "after this step the oldest release the cluster can roll back to "
            "is %s, its min-compatibility version: data and behaviour stay "
            "readable by %s (KEP-4330 --min-compatibility-version)",
            step.rollback_to, step.rollback_to),
        absl::StrFormat("to roll back below %s, do it before this step; "
                        "after it, lower --emulated-version no further than %s",
                        step.rollback_to, step.rollback_to),
        false);
    COMPATD_RETURN_IF_ERROR(CheckClients(step.number, release, state, to));
    previous = std::move(state);
  }

  std::stable_sort(plan_.items.begin(), plan_.items.end(),
                   [](const PlanItem& a, const PlanItem& b) {
                     if (a.step != b.step) return a.step < b.step;
                     return a.section < b.section;
                   });
  for (const PlanItem& item : plan_.items) {
    if (item.blocking) ++plan_.blockers;
  }
  for (auto& [step, unused] : steps) plan_.steps.push_back(std::move(step));
  plan_.reason = absl::StrFormat(
      "%d steps from emulation %s/min-compatibility %s to %s/%s on "
      "kube-apiserver %s (KEP-4330: binaries, then emulation, then "
      "min-compatibility); %d items, %d blocking",
      plan_.steps.size(), from.emulation.MajorMinorString(),
      from.min_compatibility.MajorMinorString(),
      to.emulation.MajorMinorString(), to.min_compatibility.MajorMinorString(),
      to.binary.ToString(), plan_.items.size(), plan_.blockers);
  return std::move(plan_);
}

}  // namespace

absl::string_view PlanSectionName(PlanSection section) {
  switch (section) {
    case PlanSection::kFlags:
      return "flags";
    case PlanSection::kFeatureGates:
      return "feature_gates";
    case PlanSection::kAPIs:
      return "apis";
    case PlanSection::kStorage:
      return "storage";
    case PlanSection::kRollback:
      return "rollback";
    case PlanSection::kClients:
      return "clients";
  }
  return "";
}

UpgradePlanQuery UpgradeTargetQuery(const Catalog& catalog) {
  UpgradePlanQuery query;
  const UpgradeTarget& t = *catalog.cluster.upgrade_target;
  query.to.binary_version = t.binary_version;
  query.to.emulation_version = t.emulation_version;
  query.to.min_compatibility_version = t.min_compatibility_version;
  query.to.feature_gates = t.feature_gates;
  query.to.runtime_config = t.runtime_config;
  query.to.emulation_forward_compatible = t.emulation_forward_compatible;
  query.to.runtime_config_emulation_forward_compatible =
      t.runtime_config_emulation_forward_compatible;
  return query;
}

absl::StatusOr<UpgradePlan> PlanUpgrade(const Catalog& catalog,
                                        const UpgradePlanQuery& query) {
  return Planner(catalog, query).Run();
}

}  // namespace compatd::engine
