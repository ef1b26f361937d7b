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
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "engine/api_availability.h"
#include "engine/api_verdict.h"
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
  const Catalog* catalog = nullptr;  // the step's binary's
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

// engine::JudgeApi of a resource of `group_version` at a step: its line, its
// emulation version and its start-up there.
ApiVerdict JudgeStopped(const State& state, absl::string_view group_version,
                        absl::string_view resource) {
  absl::flat_hash_set<std::string> served;
  for (const auto& [gv, resources] : state.served) {
    const size_t slash = gv.find('/');
    for (const std::string& r : resources) {
      served.insert(
          slash == std::string::npos
              ? ServedApiKey("", gv, r)
              : ServedApiKey(gv.substr(0, slash), gv.substr(slash + 1), r));
    }
  }
  const size_t slash = group_version.find('/');
  const absl::string_view group =
      slash == absl::string_view::npos ? "" : group_version.substr(0, slash);
  const absl::string_view version = slash == absl::string_view::npos
                                        ? group_version
                                        : group_version.substr(slash + 1);
  const ApiStartUp startup{state.versions, &served};
  return JudgeApiResource(*state.catalog, &startup, state.versions.emulation,
                          group, version, resource);
}

std::string DescribeGate(const FeatureDecision& d) {
  if (d.spec == nullptr) return "not introduced, off";
  return absl::StrCat(PreReleaseName(d.stage), " ", OnOff(d.enabled),
                      " (default ", OnOff(d.default_enabled),
                      d.locked_to_default ? ", locked" : "", ")");
}

// The catalog of a step's binary, for texts: "embedded:kubernetes-1.34
// (kube-apiserver 1.34.7)".
std::string CatalogName(const Catalog& catalog) {
  return absl::StrCat(catalog.source, " (kube-apiserver ",
                      catalog.binary_version.ToString(), ")");
}

// Whether the binary has --min-compatibility-version: added to component-base
// compatibility/registry.go at v0.35.0 (docs/kubernetes-rules.md#
// min-compatibility-default). Before it the min-compatibility version
// follows the emulation version.
bool HasMinCompatibilityFlag(const Version& binary) {
  return binary.ToMajorMinor() >= Version::MajorMinor(1, 35);
}

// The lowest emulation version the binary accepts
// (docs/kubernetes-rules.md#emulation-version-floor): 1.31 only itself; 1.32
// N-1; from 1.33 max(N-3, 1.31).
Version EmulationFloor(const Version& binary) {
  const Version mm = binary.ToMajorMinor();
  const Version first = Version::MajorMinor(1, 31);
  if (mm <= first) return mm;
  Version floor = mm.SubtractMinor(mm >= Version::MajorMinor(1, 33) ? 3 : 1);
  return floor < first ? first : floor;
}

// The min-compatibility version a binary without the flag runs with at
// `emulation` (docs/kubernetes-rules.md#min-compatibility-default): 1.31 and
// 1.32 binary - 1 whatever the emulation; 1.33 and 1.34 binary - 1 without
// --emulated-version, else max(emulation - 1, floor).
Version DerivedMinCompatibility(const Version& binary,
                                const Version& emulation) {
  const Version mm = binary.ToMajorMinor();
  if (mm < Version::MajorMinor(1, 33) || emulation.CompareMajorMinor(mm) == 0) {
    return mm.SubtractMinor(1);
  }
  Version m = emulation.ToMajorMinor().SubtractMinor(1);
  const Version floor = KubeVersionFloor(binary);
  return m < floor ? floor : m;
}

// The effective versions of `binary` asked to run at `emulation` and (where
// the flag exists) `min_compat`, clamped into what the binary accepts.
EffectiveVersions StepVersions(const Version& binary, const Version& emulation,
                               const Version& min_compat) {
  if (!HasMinCompatibilityFlag(binary)) {
    return EffectiveVersions{binary, emulation,
                             DerivedMinCompatibility(binary, emulation)};
  }
  Version m = min_compat;
  const Version floor = KubeVersionFloor(binary);
  if (m < floor) m = floor;
  if (m > emulation) m = emulation;
  return EffectiveVersions{binary, emulation, m};
}

// A state's feature decision of `name`, or null when its binary does not
// register the gate.
const FeatureDecision* FindDecision(const std::vector<FeatureDecision>& list,
                                    absl::string_view name) {
  auto it = std::lower_bound(list.begin(), list.end(), name,
                             [](const FeatureDecision& d, absl::string_view n) {
                               return d.feature->name < n;
                             });
  return it != list.end() && it->feature->name == name ? &*it : nullptr;
}

// One step of a path before it is evaluated.
struct PlannedStep {
  UpgradeStep step;
  std::string release;  // the version the step moves to
  const Catalog* catalog = nullptr;
  bool hop = false;  // the first step on a new binary line
};

class Planner {
 public:
  Planner(const CatalogSet& lines, const UpgradePlanQuery& query)
      : lines_(lines), query_(query) {}

  absl::StatusOr<UpgradePlan> Run();

 private:
  // The end's catalog and versions.
  absl::StatusOr<std::pair<const Catalog*, EffectiveVersions>> ResolveEnd(
      absl::string_view end, const VersionQuery& query) const;
  // The steps of the one-minor path (hops through every line from from's to
  // to's; on one line, the single-binary plan) or the skip-level one.
  absl::StatusOr<std::vector<PlannedStep>> Steps(bool skip_level) const;
  // Evaluates `steps` into `path`.
  absl::Status RunPath(std::vector<PlannedStep> steps, UpgradePath* path);
  // The state at `versions` on `catalog` with `flags`, the items of its
  // start-up checks appended (step `step`, release `release`). At step 0
  // (from) a refused flag is an error instead.
  absl::StatusOr<State> Evaluate(int step, absl::string_view release,
                                 const Catalog& catalog,
                                 const EffectiveVersions& versions,
                                 const StepFlags& flags);
  // The --runtime-config entries kube-apiserver refuses at `versions`, each
  // reported and dropped; the query without them.
  void DropRefusedRuntimeConfig(int step, absl::string_view release,
                                const Catalog& catalog,
                                const EffectiveVersions& versions,
                                absl::string_view at,
                                std::string* runtime_config);
  void CompareFeatures(int step, absl::string_view release, const State& before,
                       const State& after);
  void CompareAPIs(int step, absl::string_view release, const State& before,
                   const State& after);
  absl::Status CompareStorage(int step, absl::string_view release,
                              const State& before, const State& after);
  absl::Status CheckClients(int step, absl::string_view release,
                            const State& state, UpgradeStep* out);

  void Add(PlanSection section, int step, absl::string_view release,
           std::string subject, std::string rule, std::string reason,
           std::string action, bool blocking) {
    items_->push_back(PlanItem{section, step, std::string(release),
                               std::move(subject), std::move(rule),
                               std::move(reason), std::move(action), blocking});
  }

  const CatalogSet& lines_;
  const UpgradePlanQuery& query_;
  const Catalog* from_catalog_ = nullptr;
  const Catalog* to_catalog_ = nullptr;
  EffectiveVersions from_;
  EffectiveVersions to_;
  StepFlags from_flags_;
  StepFlags to_flags_;

  // Per path.
  std::vector<PlanItem>* items_ = nullptr;
  std::vector<StorageMigration>* migrations_ = nullptr;
  // Gate flags and --runtime-config entries the plan already told the user
  // to remove.
  std::set<std::string> dropped_gates_;
  std::set<std::string> dropped_runtime_config_entries_;
  bool dropped_efc_ = false;
  bool dropped_rcfc_ = false;
  bool dropped_runtime_config_ = false;
  // Clients reported out of allowance in the current hop.
  std::set<size_t> clients_reported_;
};

absl::StatusOr<std::pair<const Catalog*, EffectiveVersions>>
Planner::ResolveEnd(absl::string_view end, const VersionQuery& query) const {
  const std::string field = absl::StrCat(end, ".binary_version");
  absl::StatusOr<const Catalog*> catalog =
      lines_.Resolve(query.binary_version, field);
  if (!catalog.ok()) {
    std::string message(catalog.status().message());
    if (end == "from" && lines_.lines().size() == 1) {
      const Catalog& only = lines_.default_catalog();
      absl::StrAppend(
          &message, "; on the ", only.binary_version.MajorMinorString(),
          " binary a cluster of an older release is given by its "
          "emulation_version (",
          EmulationFloor(only.binary_version).MajorMinorString(), " to ",
          only.binary_version.MajorMinorString(), " are accepted)");
    }
    return absl::InvalidArgumentError(message);
  }
  absl::StatusOr<EffectiveVersions> versions =
      ResolveEffectiveVersions(**catalog, query);
  if (!versions.ok()) return Prefixed(end, versions.status());
  return std::make_pair(*catalog, *std::move(versions));
}

absl::StatusOr<std::vector<PlannedStep>> Planner::Steps(bool skip_level) const {
  std::vector<PlannedStep> out;
  const Catalog* current = from_catalog_;
  EffectiveVersions now = from_;
  auto add = [&](std::string name, const Catalog& catalog,
                 EffectiveVersions versions, std::string action,
                 std::string release, bool hop) {
    PlannedStep p;
    p.step.name = std::move(name);
    p.step.versions = std::move(versions);
    p.step.action = std::move(action);
    p.step.catalog = CatalogName(catalog);
    p.release = std::move(release);
    p.catalog = &catalog;
    p.hop = hop;
    now = p.step.versions;
    current = &catalog;
    out.push_back(std::move(p));
  };
  auto emulation_step = [&](const Catalog& catalog, const Version& e) {
    const EffectiveVersions v =
        StepVersions(now.binary, e, now.min_compatibility);
    add(absl::StrCat("emulation ", e.MajorMinorString()), catalog, v,
        HasMinCompatibilityFlag(v.binary)
            ? absl::StrFormat("restart every kube-apiserver with "
                              "--emulated-version=%s "
                              "(--min-compatibility-version stays %s), then "
                              "check the cluster",
                              e.MajorMinorString(),
                              v.min_compatibility.MajorMinorString())
            : absl::StrFormat(
                  "restart every kube-apiserver with --emulated-version=%s%s "
                  "(kube-apiserver %s has no --min-compatibility-version: "
                  "it is %s here), then check the cluster",
                  e.MajorMinorString(),
                  e.CompareMajorMinor(v.binary) == 0 ? " (or without it)" : "",
                  v.binary.MajorMinorString(),
                  v.min_compatibility.MajorMinorString()),
        e.MajorMinorString(), false);
  };
  // One binary line `catalog` (binary `binary`) from `now` to emulation
  // `emulation`, min-compatibility `min_compat`.
  auto segment = [&](const Catalog& catalog, const Version& binary,
                     const Version& emulation,
                     const Version& min_compat) -> absl::Status {
    const bool new_line =
        binary.CompareMajorMinor(now.binary) != 0 || out.empty();
    if (new_line) {
      // Emulation the new binary does not accept is raised on the old one
      // first.
      const Version floor = EmulationFloor(binary);
      for (Version e = now.emulation.AddMinor(1); now.emulation < floor;
           e = e.AddMinor(1)) {
        emulation_step(*current, e);
      }
      const EffectiveVersions v =
          StepVersions(binary, now.emulation, now.min_compatibility);
      const bool hop = binary.CompareMajorMinor(now.binary) != 0;
      const bool emulating = v.emulation.CompareMajorMinor(binary) != 0;
      std::string flags =
          emulating ? absl::StrCat("--emulated-version=",
                                   v.emulation.MajorMinorString())
                    : std::string("no --emulated-version (it is the binary's)");
      if (HasMinCompatibilityFlag(binary)) {
        absl::StrAppend(&flags, " --min-compatibility-version=",
                        v.min_compatibility.MajorMinorString());
      } else {
        absl::StrAppend(&flags, " (min-compatibility ",
                        v.min_compatibility.MajorMinorString(),
                        ": kube-apiserver ", binary.MajorMinorString(),
                        " has no --min-compatibility-version)");
      }
      add(hop ? absl::StrCat("binaries ", binary.MajorMinorString())
              : std::string("binaries"),
          catalog, v,
          absl::StrFormat(
              "run kube-apiserver %s on every control-plane node, one at a "
              "time, with %s, before any other component: what clients see "
              "stays %s's",
              binary.ToString(), flags, v.emulation.MajorMinorString()),
          binary.MajorMinorString(), hop);
      now.binary = binary;
    }
    if (emulation < now.emulation) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "to.emulation_version %s is older than %s, the emulation version "
          "the plan reaches on kube-apiserver %s: a plan goes forward",
          emulation.MajorMinorString(), now.emulation.MajorMinorString(),
          binary.MajorMinorString()));
    }
    for (Version e = now.emulation.AddMinor(1); e <= emulation;
         e = e.AddMinor(1)) {
      emulation_step(catalog, e);
    }
    if (!HasMinCompatibilityFlag(binary)) return absl::OkStatus();
    if (min_compat < now.min_compatibility) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "to.min_compatibility_version %s is older than %s, the "
          "min-compatibility version the plan reaches on kube-apiserver %s: "
          "a plan goes forward; to keep rollback to %s, give "
          "to.min_compatibility_version %s",
          min_compat.MajorMinorString(),
          now.min_compatibility.MajorMinorString(), binary.MajorMinorString(),
          now.min_compatibility.MajorMinorString(),
          now.min_compatibility.MajorMinorString()));
    }
    for (Version m = now.min_compatibility.AddMinor(1); m <= min_compat;
         m = m.AddMinor(1)) {
      add(absl::StrCat("min-compatibility ", m.MajorMinorString()), catalog,
          EffectiveVersions{now.binary, now.emulation, m},
          absl::StrFormat(
              "restart every kube-apiserver with "
              "--min-compatibility-version=%s "
              "(--emulated-version %s): rollback below %s is no longer "
              "possible",
              m.MajorMinorString(), now.emulation.MajorMinorString(),
              m.MajorMinorString()),
          m.MajorMinorString(), false);
    }
    return absl::OkStatus();
  };

  const Version to_line = to_.binary.ToMajorMinor();
  if (!skip_level) {
    // Every line after from's up to to's, one minor at a time, each ending
    // at its binary's defaults (emulation the binary, min-compatibility its
    // default, never past to's), the last at to.
    for (Version line = from_.binary.ToMajorMinor().AddMinor(1); line < to_line;
         line = line.AddMinor(1)) {
      const Catalog* catalog = lines_.Find(line);  // checked in Run
      Version m = line.SubtractMinor(1);
      if (to_.min_compatibility < m) m = to_.min_compatibility;
      if (m < now.min_compatibility) m = now.min_compatibility;
      COMPATD_RETURN_IF_ERROR(
          segment(*catalog, catalog->binary_version, line, m));
    }
  }
  COMPATD_RETURN_IF_ERROR(
      segment(*to_catalog_, to_.binary, to_.emulation, to_.min_compatibility));
  return out;
}

absl::StatusOr<State> Planner::Evaluate(int step, absl::string_view release,
                                        const Catalog& catalog,
                                        const EffectiveVersions& versions,
                                        const StepFlags& flags) {
  State state;
  state.catalog = &catalog;
  state.versions = versions;
  const std::string at =
      step == 0 ? std::string("at from")
                : absl::StrFormat(
                      "at step %d (kube-apiserver %s, emulation %s, "
                      "min-compatibility %s)",
                      step, versions.binary.MajorMinorString(),
                      versions.emulation.MajorMinorString(),
                      versions.min_compatibility.MajorMinorString());

  // --feature-gates, entry by entry (unsafeSetFromMap's checks).
  GateFlags gates;
  for (const auto& [name, flag] : flags.gates) {
    if (dropped_gates_.contains(name)) continue;
    const GateFlagCheck check =
        CheckFeatureGateFlag(catalog, versions, name, flag.value);
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
        action = absl::StrFormat(
            "remove %s from --feature-gates before this step: kube-apiserver "
            "%s does not register it",
            name, versions.binary.MajorMinorString());
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
      DecideFeaturesWithFlags(catalog, versions, *state.gate_flags));

  // --runtime-config and the forward-compatibility flags.
  std::string runtime_config;
  for (absl::string_view entry : absl::StrSplit(flags.runtime_config, ',')) {
    if (entry.empty() ||
        dropped_runtime_config_entries_.contains(std::string(entry))) {
      continue;
    }
    if (!runtime_config.empty()) runtime_config.push_back(',');
    absl::StrAppend(&runtime_config, entry);
  }
  VersionQuery query;
  query.runtime_config =
      dropped_runtime_config_ ? absl::string_view() : runtime_config;
  query.emulation_forward_compatible =
      dropped_efc_ ? std::optional<bool>(false) : flags.efc;
  query.runtime_config_emulation_forward_compatible =
      dropped_rcfc_ ? std::optional<bool>(false) : flags.rcfc;
  absl::StatusOr<std::vector<ServedGroupVersion>> served =
      ListServedAPIs(catalog, versions, query);
  if (!served.ok() && step == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "from: kube-apiserver refuses the cluster's current --runtime-config "
        "or forward-compatibility flags at from: %s; from must describe "
        "flags the cluster runs with",
        served.status().message()));
  }
  if (!served.ok()) {
    // Entries of --runtime-config the binary refuses on their own (a
    // group-version it does not register), each with the entry to drop.
    if (!dropped_runtime_config_) {
      DropRefusedRuntimeConfig(step, release, catalog, versions, at,
                               &runtime_config);
      query.runtime_config = runtime_config;
      served = ListServedAPIs(catalog, versions, query);
    }
  }
  if (!served.ok()) {
    const std::string refused(served.status().message());
    // Which flag: the forward-compatibility flags first (only valid while
    // emulating an older release), then --runtime-config.
    const bool efc = query.emulation_forward_compatible.value_or(
        catalog.cluster.emulation_forward_compatible.value_or(false));
    const bool rcfc =
        query.runtime_config_emulation_forward_compatible.value_or(
            catalog.cluster.runtime_config_emulation_forward_compatible
                .value_or(false));
    std::string subject = "--runtime-config";
    std::string action =
        "change --runtime-config as the message says before this step";
    if (efc || rcfc) {
      VersionQuery without = query;
      without.emulation_forward_compatible = false;
      without.runtime_config_emulation_forward_compatible = false;
      absl::StatusOr<std::vector<ServedGroupVersion>> retry =
          ListServedAPIs(catalog, versions, without);
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
      served = ListServedAPIs(catalog, versions, without);
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
  for (const APIGroupVersion& gv : catalog.apis) {
    for (const APIResource& r : gv.resources) {
      if (!r.persisted || absl::StrContains(r.resource, '/')) continue;
      const std::string key = GroupResource(gv.group, r.resource);
      if (state.storage.contains(key)) continue;
      absl::StatusOr<StorageVersionDecision> d =
          DecideStorageVersion(catalog, versions, gv.group, r.resource);
      if (d.ok()) state.storage.emplace(key, *std::move(d));
    }
  }
  return state;
}

void Planner::DropRefusedRuntimeConfig(int step, absl::string_view release,
                                       const Catalog& catalog,
                                       const EffectiveVersions& versions,
                                       absl::string_view at,
                                       std::string* runtime_config) {
  if (runtime_config->empty()) return;
  // Judged alone, without the forward-compatibility flags, so that only the
  // entry's own refusal counts.
  std::vector<std::string> kept;
  for (absl::string_view entry : absl::StrSplit(*runtime_config, ',')) {
    if (entry.empty()) continue;
    VersionQuery alone;
    alone.runtime_config = entry;
    alone.emulation_forward_compatible = false;
    alone.runtime_config_emulation_forward_compatible = false;
    absl::StatusOr<std::vector<ServedGroupVersion>> served =
        ListServedAPIs(catalog, versions, alone);
    if (served.ok()) {
      kept.emplace_back(entry);
      continue;
    }
    dropped_runtime_config_entries_.insert(std::string(entry));
    Add(PlanSection::kFlags, step, release,
        absl::StrCat("--runtime-config ", entry), "runtime-config-refused",
        absl::StrFormat("kube-apiserver %s does not start %s: %s (apiserver "
                        "pkg/server/resourceconfig/helpers.go, "
                        "docs/kubernetes-rules.md#runtime-config-merging)",
                        versions.binary.MajorMinorString(), at,
                        served.status().message()),
        absl::StrFormat("remove %s from --runtime-config before this step",
                        entry),
        true);
  }
  *runtime_config = absl::StrJoin(kept, ",");
}

void Planner::CompareFeatures(int step, absl::string_view release,
                              const State& before, const State& after) {
  const std::string at = absl::StrFormat(
      "at kube-apiserver %s, emulation %s, min-compatibility %s",
      after.versions.binary.MajorMinorString(),
      after.versions.emulation.MajorMinorString(),
      after.versions.min_compatibility.MajorMinorString());
  // Gates the new binary no longer registers.
  for (const FeatureDecision& a : before.features) {
    if (FindDecision(after.features, a.feature->name) != nullptr) continue;
    const std::string& name = a.feature->name;
    Add(PlanSection::kFeatureGates, step, release,
        absl::StrCat("feature gate ", name), "feature-gate-removed",
        absl::StrFormat("%s on kube-apiserver %s -> not registered by "
                        "kube-apiserver %s",
                        DescribeGate(a),
                        before.versions.binary.MajorMinorString(),
                        after.versions.binary.MajorMinorString()),
        a.enabled
            ? absl::StrFormat(
                  "none to set: what %s gated is the new binary's own "
                  "behaviour now; keep %s out of --feature-gates",
                  name, name)
            : absl::StrFormat("none: keep %s out of --feature-gates", name),
        false);
  }
  for (const FeatureDecision& b : after.features) {
    const std::string& name = b.feature->name;
    const FeatureDecision* found = FindDecision(before.features, name);
    if (found == nullptr) {
      // A gate the old binary did not register: an item only when it is in
      // force at this step.
      if (b.spec == nullptr) continue;
      Add(PlanSection::kFeatureGates, step, release,
          absl::StrCat("feature gate ", name), "feature-gate-added",
          absl::StrFormat("not registered by kube-apiserver %s -> %s %s (%s)",
                          before.versions.binary.MajorMinorString(),
                          DescribeGate(b), at, b.Reason()),
          b.enabled ? absl::StrFormat("%s is on from this step: check the "
                                      "workloads that depend on it%s",
                                      name,
                                      b.locked_to_default
                                          ? ""
                                          : absl::StrCat(", or set ", name,
                                                         "=false until they "
                                                         "are ready"))
                    : std::string("none: off unless set"),
          false);
      continue;
    }
    const FeatureDecision& a = *found;
    if (a.stage == b.stage && a.enabled == b.enabled &&
        a.default_enabled == b.default_enabled &&
        a.locked_to_default == b.locked_to_default) {
      continue;
    }
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
      const APIResource* res = FindResource(*after.catalog, gv, r);
      if (res == nullptr) {
        res = FindResource(*before.catalog, gv, r);
        if (after.catalog != before.catalog) {
          why.push_back(
              absl::StrFormat("kube-apiserver %s has no %s %s",
                              after.versions.binary.MajorMinorString(), gv, r));
        }
      }
      if (res != nullptr) {
        // Why, by the one verdict (engine/api_verdict.h) at the step.
        const ApiVerdict verdict = JudgeStopped(after, gv, r);
        if (!verdict.replacement.empty()) {
          replacements.insert(verdict.replacement);
        }
        if (verdict.state == ApiState::kRemoved) {
          why.push_back(
              absl::StrFormat("%s removed in %s", r, verdict.removed));
        }
      }
    }
    for (const std::string& r : now) {
      if (!was.contains(r)) started.push_back(r);
    }
    const std::string at =
        absl::StrFormat("at kube-apiserver %s, emulation %s",
                        after.versions.binary.MajorMinorString(),
                        after.versions.emulation.MajorMinorString());
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
                    "stop using them before this step, and rewrite or delete "
                    "their stored objects: nothing replaces them")
              : absl::StrFormat(
                    "move clients and manifests to %s and rewrite the stored "
                    "objects through it before this step",
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

// Whether `resource` of `gv` exists at the emulation version: introduced at
// or before it (or with no introduced version) and not removed by it.
bool AtEmulation(const APIGroupVersion& gv, absl::string_view resource,
                 const EffectiveVersions& versions) {
  for (const APIResource& r : gv.resources) {
    if (r.resource != resource) continue;
    if (r.introduced.has_value() &&
        r.introduced->CompareMajorMinor(versions.emulation) > 0) {
      return false;
    }
    return !r.removed.has_value() ||
           r.removed->CompareMajorMinor(versions.emulation) > 0;
  }
  return false;
}

// The StorageVersionMigration of one group-resource at a step: in the
// highest-priority storagemigration.k8s.io version of the step's binary that
// serves storageversionmigrations at the step; else in the highest-priority
// one the step's emulation version has (introduced at or before it, not
// removed by it), with what must be enabled first: a version introduced after
// the emulation version cannot be enabled (apiserver
// pkg/server/resourceconfig/helpers.go, unintroduced kinds), so a 1.37 binary
// still emulating 1.36 migrates in v1beta1 and v1 comes with emulation 1.37.
// v1alpha1's spec names the version too (GroupVersionResource); v1beta1 and
// v1 name the group and resource (metav1.GroupResource), kubernetes/api
// storagemigration/*/types.go.
StorageMigration MigrationFor(int step, absl::string_view release,
                              const State& state, absl::string_view group,
                              absl::string_view resource,
                              absl::string_view from_version,
                              absl::string_view to_version) {
  constexpr absl::string_view kGroup = "storagemigration.k8s.io";
  constexpr absl::string_view kResource = "storageversionmigrations";
  StorageMigration m;
  m.step = step;
  m.release = std::string(release);
  m.group = std::string(group);
  m.resource = std::string(resource);
  m.from_version = std::string(from_version);
  m.to_version = std::string(to_version);
  std::string served_version;
  std::string first_version;
  for (const APIGroupVersion& gv : state.catalog->apis) {
    if (gv.group != kGroup) continue;
    bool has = false;
    for (const APIResource& r : gv.resources) has |= r.resource == kResource;
    if (!has) continue;
    if (first_version.empty() && AtEmulation(gv, kResource, state.versions)) {
      first_version = gv.version;
    }
    auto it = state.served.find(GroupVersion(gv.group, gv.version));
    if (served_version.empty() && it != state.served.end() &&
        it->second.contains(std::string(kResource))) {
      served_version = gv.version;
    }
  }
  const std::string version = !served_version.empty() ? served_version
                              : !first_version.empty()
                                  ? first_version
                                  : std::string("v1alpha1");
  m.api_version = absl::StrCat(kGroup, "/", version);
  if (served_version.empty()) {
    m.needs =
        first_version.empty()
            ? absl::StrCat("kube-apiserver ", release, " at emulation version ",
                           state.versions.emulation.MajorMinorString(),
                           " has no storagemigration.k8s.io API: rewrite "
                           "the objects another way (a no-op update of "
                           "each)")
            : absl::StrCat("--runtime-config=", kGroup, "/", version, "=true");
  }
  for (const FeatureDecision& d : state.features) {
    if (d.feature->name == "StorageVersionMigrator" && !d.enabled &&
        !first_version.empty()) {
      absl::StrAppend(&m.needs, m.needs.empty() ? "" : " and ",
                      "--feature-gates=StorageVersionMigrator=true");
    }
  }
  m.name = absl::StrCat("compatd-step-", step, "-", resource,
                        group.empty() ? "" : ".", group);
  std::string spec = absl::StrCat("    group: \"", group, "\"\n");
  if (version == "v1alpha1") {
    absl::StrAppend(&spec, "    version: ", to_version, "\n");
  }
  absl::StrAppend(&spec, "    resource: ", resource, "\n");
  m.manifest = absl::StrCat(
      "apiVersion: ", m.api_version,
      "\nkind: StorageVersionMigration\nmetadata:\n  name: ", m.name,
      "\n  labels:\n    app.kubernetes.io/managed-by: compatd\nspec:\n  "
      "resource:\n",
      spec);
  return m;
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
    if (const APIResource* old =
            FindResource(*after.catalog, GroupVersion(was.group, was.version),
                         was.resource)) {
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
    migrations_->push_back(MigrationFor(step, release, after, now.group,
                                        now.resource, was.version,
                                        now.version));

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
                                   const State& state, UpgradeStep* out) {
  for (size_t i = 0; i < query_.clients.size(); ++i) {
    const PlanClient& client = query_.clients[i];
    absl::StatusOr<SkewDecision> d = CheckSkew(
        *state.catalog, state.versions, client.component, client.version);
    if (!d.ok()) {
      if (client.required) {
        return absl::Status(
            d.status().code(),
            absl::StrCat(client.source, ": ", d.status().message()));
      }
      continue;  // the policy cannot judge it
    }
    out->clients.push_back(PlanClientVerdict{
        client.component, client.version, client.source,
        d->verdict == SkewVerdict::kAllowed
            ? "allowed"
            : (d->verdict == SkewVerdict::kTooOld ? "too-old" : "too-new"),
        d->min_version.MajorMinorString(), d->max_version.MajorMinorString()});
    if (d->verdict == SkewVerdict::kAllowed) continue;
    // Reported once per hop: at the first step of each binary that leaves
    // the allowance.
    if (!clients_reported_.insert(i).second) continue;
    absl::StatusOr<SkewDecision> at_target =
        CheckSkew(*to_catalog_, to_, client.component, client.version);
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

absl::Status Planner::RunPath(std::vector<PlannedStep> steps,
                              UpgradePath* path) {
  items_ = &path->items;
  migrations_ = &path->migrations;
  dropped_gates_.clear();
  dropped_runtime_config_entries_.clear();
  dropped_efc_ = dropped_rcfc_ = dropped_runtime_config_ = false;
  clients_reported_.clear();

  COMPATD_ASSIGN_OR_RETURN(State previous,
                           Evaluate(0, "", *from_catalog_, from_, from_flags_));
  for (size_t i = 0; i < steps.size(); ++i) {
    UpgradeStep& step = steps[i].step;
    const std::string& release = steps[i].release;
    const Catalog& catalog = *steps[i].catalog;
    step.number = static_cast<int>(i) + 1;
    step.rollback_to = step.versions.min_compatibility.MajorMinorString();
    if (steps[i].hop) clients_reported_.clear();
    const bool at_target =
        step.versions.binary.CompareMajorMinor(to_.binary) == 0 &&
        step.versions.emulation == to_.emulation;
    const StepFlags& flags = at_target ? to_flags_ : from_flags_;
    COMPATD_ASSIGN_OR_RETURN(
        State state,
        Evaluate(step.number, release, catalog, step.versions, flags));
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
            "readable by %s (KEP-4330 --min-compatibility-version)%s",
            step.rollback_to, step.rollback_to,
            steps[i].hop
                ? absl::StrFormat(
                      "; kube-apiserver %s binaries are the oldest to go "
                      "back to, or --emulated-version=%s on these",
                      step.rollback_to, step.rollback_to)
                : std::string()),
        absl::StrFormat("to roll back below %s, do it before this step; "
                        "after it, lower --emulated-version no further than %s",
                        step.rollback_to, step.rollback_to),
        false);
    COMPATD_RETURN_IF_ERROR(CheckClients(step.number, release, state, &step));
    previous = std::move(state);
  }

  std::stable_sort(path->items.begin(), path->items.end(),
                   [](const PlanItem& a, const PlanItem& b) {
                     if (a.step != b.step) return a.step < b.step;
                     return a.section < b.section;
                   });
  for (const PlanItem& item : path->items) {
    if (item.blocking) ++path->blockers;
  }
  for (PlannedStep& p : steps) path->steps.push_back(std::move(p.step));
  items_ = nullptr;
  migrations_ = nullptr;
  return absl::OkStatus();
}

absl::StatusOr<UpgradePlan> Planner::Run() {
  // An empty to.emulation_version is to's binary version: a full upgrade.
  VersionQuery to_query = query_.to;
  std::string to_emulation;
  if (to_query.emulation_version.empty()) {
    absl::StatusOr<const Catalog*> catalog =
        lines_.Resolve(to_query.binary_version, "to.binary_version");
    if (catalog.ok()) {
      absl::StatusOr<Version> binary =
          to_query.binary_version.empty()
              ? absl::StatusOr<Version>((*catalog)->binary_version)
              : Version::Parse(to_query.binary_version);
      if (binary.ok()) {
        to_emulation = binary->MajorMinorString();
        to_query.emulation_version = to_emulation;
      }
    }
  }
  COMPATD_ASSIGN_OR_RETURN(auto from, ResolveEnd("from", query_.from));
  COMPATD_ASSIGN_OR_RETURN(auto to, ResolveEnd("to", to_query));
  from_catalog_ = from.first;
  from_ = from.second;
  to_catalog_ = to.first;
  to_ = to.second;
  const Version from_line = from_.binary.ToMajorMinor();
  const Version to_line = to_.binary.ToMajorMinor();
  if (to_line < from_line) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "to.binary_version \"%s\" is older than from's binary %s: a plan "
        "goes forward (kube-apiserver %s or later are accepted as to); a "
        "binary rollback is the reverse of the hop that made it, to a "
        "release no older than the min-compatibility version",
        query_.to.binary_version, from_line.MajorMinorString(),
        from_line.MajorMinorString()));
  }
  std::vector<std::string> missing;
  for (Version line = from_line.AddMinor(1); line < to_line;
       line = line.AddMinor(1)) {
    if (lines_.Find(line) == nullptr) {
      missing.push_back(line.MajorMinorString());
    }
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "to.binary_version \"%s\": from's binary %s to %s goes one minor at a "
        "time through kube-apiserver %s, and no catalog describes %s; the "
        "release lines compatd has are %s (plan to a line whose hops it has)",
        query_.to.binary_version, from_line.MajorMinorString(),
        to_line.MajorMinorString(), absl::StrJoin(missing, ", "),
        absl::StrJoin(missing, ", "), lines_.line_names()));
  }
  if (to_.emulation < from_.emulation) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "to.emulation_version %s is older than from's %s: a plan goes "
        "forward (to roll back, lower --emulated-version, no further than "
        "the min-compatibility version %s)",
        to_.emulation.MajorMinorString(), from_.emulation.MajorMinorString(),
        from_.min_compatibility.MajorMinorString()));
  }
  if (to_.min_compatibility < from_.min_compatibility) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "to.min_compatibility_version %s is older than from's %s: a plan "
        "goes forward; to keep rollback to %s, give to.min_compatibility_"
        "version %s",
        to_.min_compatibility.MajorMinorString(),
        from_.min_compatibility.MajorMinorString(),
        from_.min_compatibility.MajorMinorString(),
        from_.min_compatibility.MajorMinorString()));
  }

  // The flags: from's line's cluster section, from's on top; to's on top of
  // those once the plan reaches to's binary and emulation version.
  const std::string& cluster_origin =
      from_catalog_->cluster.feature_gates_origin;
  for (const auto& [name, value] : from_catalog_->cluster.feature_gates) {
    from_flags_.gates[name] =
        GateFlag{value, cluster_origin.empty() ? "cluster.featureGates"
                                               : cluster_origin};
  }
  COMPATD_RETURN_IF_ERROR(
      MergeGateFlags("from", query_.from.feature_gates, &from_flags_.gates));
  from_flags_.runtime_config = std::string(query_.from.runtime_config);
  from_flags_.efc = query_.from.emulation_forward_compatible;
  from_flags_.rcfc = query_.from.runtime_config_emulation_forward_compatible;
  to_flags_ = from_flags_;
  COMPATD_RETURN_IF_ERROR(
      MergeGateFlags("to", query_.to.feature_gates, &to_flags_.gates));
  to_flags_.runtime_config =
      JoinFlags(query_.from.runtime_config, query_.to.runtime_config);
  if (query_.to.emulation_forward_compatible.has_value()) {
    to_flags_.efc = query_.to.emulation_forward_compatible;
  }
  if (query_.to.runtime_config_emulation_forward_compatible.has_value()) {
    to_flags_.rcfc = query_.to.runtime_config_emulation_forward_compatible;
  }

  UpgradePlan plan;
  plan.from = from_;
  plan.to = to_;
  const bool one_binary = from_line == to_line;
  plan.path.name = one_binary ? "one binary" : "one minor at a time";
  plan.path.supported = true;
  plan.path.support =
      one_binary
          ? "KEP-4330: binaries with the emulation version held, then the "
            "emulation version, then the min-compatibility version, one "
            "minor at a time on one binary"
          : "Kubernetes' version skew policy: kube-apiserver is upgraded one "
            "minor version at a time (a 1.x binary to 1.x+1), every hop in "
            "KEP-4330's order on its own binary (binaries with the emulation "
            "version held, then emulation, then min-compatibility)";
  COMPATD_ASSIGN_OR_RETURN(std::vector<PlannedStep> steps, Steps(false));
  COMPATD_RETURN_IF_ERROR(RunPath(std::move(steps), &plan.path));
  plan.path.reason =
      one_binary
          ? absl::StrFormat(
                "%d steps from emulation %s/min-compatibility %s to %s/%s on "
                "kube-apiserver %s (KEP-4330: binaries, then emulation, then "
                "min-compatibility); %d items, %d blocking",
                plan.path.steps.size(), from_.emulation.MajorMinorString(),
                from_.min_compatibility.MajorMinorString(),
                to_.emulation.MajorMinorString(),
                to_.min_compatibility.MajorMinorString(), to_.binary.ToString(),
                plan.path.items.size(), plan.path.blockers)
          : absl::StrFormat(
                "%d steps from kube-apiserver %s (emulation %s, "
                "min-compatibility %s) to %s (%s, %s), one binary minor at a "
                "time (%d hop%s), each hop in KEP-4330's order; %d items, "
                "%d blocking",
                plan.path.steps.size(), from_.binary.ToString(),
                from_.emulation.MajorMinorString(),
                from_.min_compatibility.MajorMinorString(),
                to_.binary.ToString(), to_.emulation.MajorMinorString(),
                to_.min_compatibility.MajorMinorString(),
                to_line.minor() - from_line.minor(),
                to_line.minor() - from_line.minor() == 1 ? "" : "s",
                plan.path.items.size(), plan.path.blockers);

  // KEP-4330's skip-level binary upgrade: straight to B emulating from's
  // release, where B's emulation range reaches back to it (and the path
  // differs from the hops: two or more minors).
  if (to_line.minor() >= from_line.minor() + 2 &&
      to_line.major() == from_line.major() &&
      from_.emulation >= EmulationFloor(to_.binary)) {
    UpgradePath skip;
    skip.name = "skip-level through --emulated-version";
    skip.supported = false;
    skip.support = absl::StrFormat(
        "KEP-4330 \"Motivation\" describes it (\"upgrade binary-version ... "
        "emulation-version stays ... this is our skip-level binary "
        "upgrade\", then the emulation version one minor at a time), and "
        "kube-apiserver %s accepts --emulated-version back to %s (KEP-4330 "
        "beta: binary - 3, never below 1.31); Kubernetes' version skew "
        "policy still supports kube-apiserver upgrades of one minor version "
        "only, so this path is the KEP's design, not a supported upgrade",
        to_line.MajorMinorString(),
        EmulationFloor(to_.binary).MajorMinorString());
    COMPATD_ASSIGN_OR_RETURN(std::vector<PlannedStep> skip_steps, Steps(true));
    COMPATD_RETURN_IF_ERROR(RunPath(std::move(skip_steps), &skip));
    skip.reason = absl::StrFormat(
        "%d steps: kube-apiserver %s straight to %s emulating %s, then the "
        "emulation version one minor at a time; %d items, %d blocking",
        skip.steps.size(), from_.binary.ToString(), to_.binary.ToString(),
        from_.emulation.MajorMinorString(), skip.items.size(), skip.blockers);
    plan.alternatives.push_back(std::move(skip));
  }
  return plan;
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

absl::StatusOr<UpgradePlan> PlanUpgrade(const CatalogSet& lines,
                                        const UpgradePlanQuery& query) {
  return Planner(lines, query).Run();
}

absl::StatusOr<UpgradePlan> PlanUpgrade(const Catalog& catalog,
                                        const UpgradePlanQuery& query) {
  // The set borrows the catalog for the call (an aliasing shared_ptr that
  // owns nothing).
  const std::shared_ptr<const CatalogSet> lines = CatalogSet::Single(
      std::shared_ptr<const Catalog>(std::shared_ptr<const void>(), &catalog));
  return Planner(*lines, query).Run();
}

}  // namespace compatd::engine
