#include "engine/crd_removal.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace compatd::engine {
namespace {

// Bounds that keep a plan cheap whatever the history says (the search walks
// every minor release from the first listed one to the earliest removal).
constexpr int64_t kMaxMinorRange = 1000;
constexpr int kMaxReleaseCount = 100;  // upgrade span, deprecation, buffer

// Why a release does not count as a cleanup release for an upgrade that
// starts there. Declared from most to least severe: a removal violation names
// the most severe one in its window.
enum class Blocker {
  kNone,
  kStorage,      // the version is the release's storage version
  kServed,       // the version is served
  kUnknown,      // not in the history (before it, or a gap in it)
  kDeprecation,  // before the deprecation period ended
  kBuffer,       // a revert buffer release
  kNoMigration,  // no storage version migration
  kNoCleanup,    // no managedFields cleanup
};

// The version's state in one release, as the history lists it or as the plan
// continues after the last listed release.
struct State {
  bool known = false;
  bool listed = false;  // the CRD lists the version
  bool served = false;
  bool storage = false;
  bool migration = false;
  bool cleanup = false;
};

absl::Status CheckBounds(const CRDHistory& h, absl::StatusCode code,
                         absl::string_view field) {
  auto count = [&](absl::string_view name, int value) -> absl::Status {
    if (value <= kMaxReleaseCount) return absl::OkStatus();
    return absl::Status(code,
                        absl::StrFormat("%s%s: %d is more than %d "
                                        "releases",
                                        field, name, value, kMaxReleaseCount));
  };
  COMPATD_RETURN_IF_ERROR(count("upgrade_span", h.upgrade_span));
  COMPATD_RETURN_IF_ERROR(
      count("deprecation_releases", h.deprecation_releases));
  COMPATD_RETURN_IF_ERROR(
      count("revert_buffer_releases", h.revert_buffer_releases));
  const int64_t range =
      h.releases.empty()
          ? 0
          : static_cast<int64_t>(h.releases.back().version.minor()) -
                static_cast<int64_t>(h.releases.front().version.minor());
  if (range > kMaxMinorRange) {
    return absl::Status(
        code, absl::StrFormat("%sreleases: %s to %s spans more than %d minor "
                              "releases",
                              field, h.releases.front().release,
                              h.releases.back().release, kMaxMinorRange));
  }
  return absl::OkStatus();
}

class Planner {
 public:
  Planner(const CRDHistory& history, std::string version)
      : h_(history), v_(std::move(version)) {}

  absl::StatusOr<CRDRemovalPlan> Plan() {
    if (h_.releases.empty()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "CRD \"%s\" has no releases; list its versions per release, oldest "
          "first",
          h_.name));
    }
    COMPATD_RETURN_IF_ERROR(Index());
    COMPATD_RETURN_IF_ERROR(
        CheckBounds(h_, absl::StatusCode::kFailedPrecondition,
                    absl::StrFormat("CRD \"%s\": ", h_.name)));
    plan_.crd = h_.name;
    plan_.version = v_;
    const std::string last_storage = StorageOf(h_.releases.back());
    if (last_storage == v_) return PlanStillStorage();
    plan_.replacement = last_storage;
    ScanHistory();
    ComputeDeprecation();
    ComputeBlockers();
    ComputeRemoval();
    FindViolations();
    BuildSteps();
    BuildReason();
    return std::move(plan_);
  }

 private:
  absl::Status Index() {
    const uint64_t major = h_.releases.front().version.major();
    absl::flat_hash_set<std::string> seen;
    std::vector<std::string> names;
    for (size_t i = 0; i < h_.releases.size(); ++i) {
      const CRDRelease& r = h_.releases[i];
      if (r.version.major() != major) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "CRD \"%s\": releases %s and %s differ in major version; the "
            "upgrade span counts minor releases of one major version",
            h_.name, h_.releases.front().release, r.release));
      }
      auto [it, inserted] = by_minor_.try_emplace(r.version.minor(), i);
      if (!inserted) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "CRD \"%s\": releases %s and %s are the same minor release; list "
            "one entry per minor release",
            h_.name, h_.releases[it->second].release, r.release));
      }
      for (const CRDVersion& version : r.versions) {
        if (seen.insert(version.name).second) names.push_back(version.name);
        if (version.name == v_) found_ = true;
      }
    }
    if (!found_) {
      return absl::NotFoundError(absl::StrFormat(
          "CRD \"%s\" has no version \"%s\" in any release; its versions: %s",
          h_.name, v_, absl::StrJoin(names, ", ")));
    }
    major_ = major;
    first_ = static_cast<int64_t>(h_.releases.front().version.minor());
    last_ = static_cast<int64_t>(h_.releases.back().version.minor());
    // "v1.9" histories name computed releases "v1.14", "1.9" ones "1.14".
    with_v_ = absl::StartsWith(h_.releases.front().release, "v");
    return absl::OkStatus();
  }

  static std::string StorageOf(const CRDRelease& r) {
    for (const CRDVersion& version : r.versions) {
      if (version.storage) return version.name;
    }
    return "";
  }

  const CRDVersion* Find(const CRDRelease& r) const {
    for (const CRDVersion& version : r.versions) {
      if (version.name == v_) return &version;
    }
    return nullptr;
  }

  static int64_t Minor(const CRDRelease& r) {
    return static_cast<int64_t>(r.version.minor());
  }

  // The release's name: as the history writes it, or in its style.
  std::string Name(int64_t minor) const {
    auto it = by_minor_.find(static_cast<uint64_t>(minor));
    if (minor >= 0 && it != by_minor_.end()) {
      return h_.releases[it->second].release;
    }
    return absl::StrCat(with_v_ ? "v" : "", major_, ".", minor);
  }

  std::string Span(int64_t from, int64_t to) const {
    from = std::max<int64_t>(from, 0);
    if (from == to) return Name(from);
    return absl::StrCat(Name(from), " to ", Name(to));
  }

  std::string Upgrade() const { return absl::StrCat("n-", h_.upgrade_span); }

  // What the history itself does: the last time it stops serving the
  // version, and the release that removes it.
  void ScanHistory() {
    for (size_t i = 1; i < h_.releases.size(); ++i) {
      const CRDVersion* before = Find(h_.releases[i - 1]);
      const CRDVersion* now = Find(h_.releases[i]);
      if (before != nullptr && before->served && now != nullptr &&
          !now->served) {
        history_unserves_ = Minor(h_.releases[i]);
      }
      if (before != nullptr && now == nullptr) {
        history_removes_ = Minor(h_.releases[i]);
      }
    }
    const CRDVersion* at_first = Find(h_.releases.front());
    unserved_at_start_ = at_first != nullptr && !at_first->served;
    // The first release from which the version is not the storage version
    // any more (the first listed release if it never was).
    storage_until_ = first_ - 1;
    for (const CRDRelease& r : h_.releases) {
      const CRDVersion* version = Find(r);
      if (version != nullptr && version->storage) storage_until_ = Minor(r);
    }
    // The first release from which the history runs both migration and
    // cleanup without interruption to its end.
    for (const CRDRelease& r : h_.releases) {
      if (r.storage_version_migration && r.managed_fields_cleanup) {
        if (!migrator_since_.has_value()) migrator_since_ = Minor(r);
      } else {
        migrator_since_.reset();
      }
    }
  }

  // The deprecation clock: the release that added the version that took over
  // as storage version after this one (or marked this one deprecated, if
  // later), and the earliest release that may stop serving it.
  void ComputeDeprecation() {
    size_t j = 0;  // the first release after the version's last as storage
    for (size_t i = 0; i < h_.releases.size(); ++i) {
      if (Minor(h_.releases[i]) == storage_until_) j = i + 1;
    }
    successor_ = StorageOf(h_.releases[j]);
    auto serves_successor = [&](const CRDRelease& r) {
      for (const CRDVersion& version : r.versions) {
        if (version.name == successor_ && version.served) return true;
      }
      return false;
    };
    // Back along the successor's served run that reaches release j.
    size_t added = j;
    while (added > 0 && serves_successor(h_.releases[added - 1]) &&
           Minor(h_.releases[added - 1]) + 1 == Minor(h_.releases[added])) {
      --added;
    }
    successor_added_ = Minor(h_.releases[added]);
    successor_added_known_ = added > 0;
    clock_ = successor_added_;
    for (const CRDRelease& r : h_.releases) {
      const CRDVersion* version = Find(r);
      if (version != nullptr && version->deprecated) {
        deprecated_at_ = Minor(r);
        break;
      }
    }
    if (deprecated_at_.has_value() && *deprecated_at_ > clock_) {
      clock_ = *deprecated_at_;
    }
    earliest_unserve_ = clock_ + h_.deprecation_releases;
    plan_.earliest_unserve_release =
        unserved_at_start_ ? Name(first_) : Name(earliest_unserve_);
    // After the last listed release, the plan stops serving the version at
    // the earliest allowed release (or keeps it unserved).
    const CRDVersion* at_last = Find(h_.releases.back());
    continuation_unserve_ = at_last != nullptr && at_last->served
                                ? std::max(earliest_unserve_, last_ + 1)
                                : last_ + 1;
    bound_ = std::max(continuation_unserve_, last_ + 1) +
             h_.revert_buffer_releases + h_.upgrade_span;
  }

  State StateAt(int64_t minor) const {
    State s;
    if (minor > last_) {
      // The plan after the history: the version unserved from
      // continuation_unserve_ (or as the last release has it), never the
      // storage version, migration and cleanup in every release.
      const CRDVersion* at_last = Find(h_.releases.back());
      s.known = true;
      s.listed = at_last != nullptr;
      s.served = s.listed && at_last->served && minor < continuation_unserve_;
      s.migration = true;
      s.cleanup = true;
      return s;
    }
    auto it = by_minor_.find(static_cast<uint64_t>(minor));
    if (minor < first_ || it == by_minor_.end()) return s;
    const CRDRelease& r = h_.releases[it->second];
    s.known = true;
    s.migration = r.storage_version_migration;
    s.cleanup = r.managed_fields_cleanup;
    if (const CRDVersion* version = Find(r); version != nullptr) {
      s.listed = true;
      s.served = version->served;
      s.storage = version->storage;
    }
    return s;
  }

  // blockers_[m - lo_] for every release an upgrade may start from, from the
  // first window that may reach before the history to the search bound.
  void ComputeBlockers() {
    lo_ = first_ - h_.upgrade_span;
    blockers_.assign(static_cast<size_t>(bound_ - lo_), Blocker::kNone);
    int64_t run_start = 0;  // of the unserved run containing m
    bool in_run = false;
    for (int64_t m = lo_; m < bound_; ++m) {
      Blocker& b = blockers_[static_cast<size_t>(m - lo_)];
      if (m < 0) continue;  // no such release: no upgrade starts there
      const State s = StateAt(m);
      if (!s.known) {
        in_run = false;
        b = Blocker::kUnknown;
        continue;
      }
      if (s.served) {
        in_run = false;
      } else if (!in_run) {
        in_run = true;
        // A version already unserved in the first release listed stopped
        // being served before the history: its revert buffer is over, like
        // its deprecation period.
        run_start = m == first_ && unserved_at_start_
                        ? m - h_.revert_buffer_releases
                        : m;
      }
      if (s.storage) {
        b = Blocker::kStorage;
      } else if (s.served) {
        b = Blocker::kServed;
      } else if (!unserved_at_start_ && m < earliest_unserve_) {
        b = Blocker::kDeprecation;
      } else if (m < run_start + h_.revert_buffer_releases) {
        b = Blocker::kBuffer;
      } else if (!s.migration) {
        b = Blocker::kNoMigration;
      } else if (!s.cleanup) {
        b = Blocker::kNoCleanup;
      }
    }
  }

  // The most severe blocker among the releases an upgrade to `removal` can
  // start from, with its release; kNone when removal there is allowed.
  std::pair<Blocker, int64_t> WindowBlocker(int64_t removal) const {
    std::pair<Blocker, int64_t> worst{Blocker::kNone, 0};
    for (int64_t m = removal - h_.upgrade_span; m < removal; ++m) {
      const Blocker b = blockers_[static_cast<size_t>(m - lo_)];
      if (b == Blocker::kNone) continue;
      if (worst.first == Blocker::kNone || b < worst.first) worst = {b, m};
    }
    return worst;
  }

  void ComputeRemoval() {
    // Every release from continuation_unserve_ + buffer on counts, so the
    // search ends at bound_ at the latest.
    earliest_removal_ = bound_;
    for (int64_t n = first_ + 1; n < bound_; ++n) {
      if (WindowBlocker(n).first == Blocker::kNone) {
        earliest_removal_ = n;
        break;
      }
    }
    plan_.earliest_removal_release = Name(earliest_removal_);
  }

  void Violate(int64_t minor, absl::string_view rule, std::string message) {
    plan_.violations.push_back(CRDRemovalViolation{
        Name(minor), std::string(rule), std::move(message)});
  }

  std::string DeprecationCause() const {
    if (deprecated_at_.has_value() && *deprecated_at_ == clock_ &&
        clock_ != successor_added_) {
      return absl::StrFormat("%s marked %s deprecated", Name(clock_), v_);
    }
    return absl::StrFormat(
        "%s was added in %s%s", successor_, Name(successor_added_),
        successor_added_known_ ? ""
                               : " (the first release listed; it may be "
                                 "older)");
  }

  void FindViolations() {
    for (size_t i = 1; i < h_.releases.size(); ++i) {
      const CRDRelease& r = h_.releases[i];
      const int64_t minor = Minor(r);
      const CRDVersion* before = Find(h_.releases[i - 1]);
      const CRDVersion* now = Find(r);
      if (before != nullptr && before->served && now != nullptr &&
          !now->served && minor < earliest_unserve_) {
        Violate(minor, "unserved-during-deprecation",
                absl::StrFormat(
                    "%s stops serving %s %d release(s) after %s; "
                    "deprecationReleases %d keeps it served through %s "
                    "(earliest: %s)",
                    r.release, v_, minor - clock_, DeprecationCause(),
                    h_.deprecation_releases, Name(earliest_unserve_ - 1),
                    Name(earliest_unserve_)));
      }
      if (before != nullptr && now == nullptr && minor < earliest_removal_) {
        ReportEarlyRemoval(r, minor);
      }
    }
  }

  void ReportEarlyRemoval(const CRDRelease& r, int64_t minor) {
    const auto [blocker, at] = WindowBlocker(minor);
    const std::string removes = absl::StrFormat(
        "%s removes %s while %s, a release an %s upgrade to %s can start "
        "from (%s),",
        r.release, v_, Name(at), Upgrade(), r.release,
        Span(minor - h_.upgrade_span, minor - 1));
    const std::string earliest =
        absl::StrCat("; earliest removal: ", Name(earliest_removal_));
    switch (blocker) {
      case Blocker::kStorage:
        Violate(minor, "removed-while-storage",
                absl::StrCat(removes,
                             " still has it as its storage version: "
                             "objects written there are stored as ",
                             v_, " and cannot be read after the upgrade",
                             earliest));
        return;
      case Blocker::kServed:
        Violate(
            minor, "removed-while-served",
            absl::StrCat(removes, " still serves it: clients can write ", v_,
                         " managedFields entries there, and after the "
                         "upgrade server-side apply fails on them "
                         "(kubernetes/kubernetes#111937)",
                         earliest));
        return;
      case Blocker::kDeprecation:
        Violate(minor, "removed-before-deprecation-ended",
                absl::StrCat(removes, " is within its deprecation period (", v_,
                             " must be served through ",
                             Name(earliest_unserve_ - 1), " because ",
                             DeprecationCause(), ")", earliest));
        return;
      case Blocker::kBuffer:
        Violate(
            minor, "removed-during-revert-buffer",
            absl::StrCat(removes,
                         " is a revert buffer release "
                         "(revertBufferReleases ",
                         h_.revert_buffer_releases, "): it may serve ", v_,
                         " again, so its cleanup does not count", earliest));
        return;
      case Blocker::kNoMigration:
      case Blocker::kNoCleanup:
        Violate(minor, "removed-before-cleanup",
                absl::StrCat(removes, " runs no ",
                             blocker == Blocker::kNoMigration
                                 ? "storage version migration"
                                 : "managedFields cleanup",
                             ": objects or managedFields entries in ", v_,
                             " may be left when the upgrade starts there",
                             earliest));
        return;
      case Blocker::kUnknown:
        Violate(minor, "removed-with-unknown-release",
                absl::StrCat(removes,
                             " is not in the history, so nothing shows "
                             "that it migrated and cleaned up ",
                             v_, earliest));
        return;
      case Blocker::kNone:
        return;
    }
  }

  void BuildSteps() {
    const int64_t window_from = earliest_removal_ - h_.upgrade_span;
    const int64_t window_to = earliest_removal_ - 1;
    const std::string window = absl::StrFormat(
        "every release an %s upgrade to %s can start from (%s)", Upgrade(),
        Name(earliest_removal_), Span(window_from, window_to));
    const std::string history_runs =
        migrator_since_.has_value()
            ? absl::StrCat("the history runs it from ", Name(*migrator_since_))
            : absl::StrCat("the history's last release, ", Name(last_),
                           ", does not run it: add it");

    std::string stop_why;
    if (unserved_at_start_) {
      stop_why = absl::StrFormat(
          "%s is already not served in %s, the first release listed; %s took "
          "over before that",
          v_, Name(first_), successor_);
    } else {
      stop_why = absl::StrFormat(
          "the Kubernetes deprecation policy keeps a version served while "
          "clients move to its replacement: %d release(s) after %s, so from "
          "%s on",
          h_.deprecation_releases, DeprecationCause(), Name(earliest_unserve_));
      if (history_unserves_.has_value()) {
        absl::StrAppend(&stop_why, "; the history stops serving it in ",
                        Name(*history_unserves_));
      }
    }
    plan_.steps.push_back(CRDRemovalStep{
        "stop-serving", plan_.earliest_unserve_release, std::move(stop_why)});

    const int64_t migrate_from = storage_until_ + 1;
    plan_.steps.push_back(CRDRemovalStep{
        "storage-version-migration", Name(migrate_from),
        absl::StrFormat(
            "rewrite every object in its release's storage version (%s, "
            "the last listed, stores %s) so that none is left in %s and "
            "status.storedVersions can drop %s (apiextensions-apiserver "
            "rejects storedVersions that name a version the CRD no longer "
            "lists); run it from %s, the first release where %s is not the "
            "storage version, and in %s; %s",
            Name(last_), plan_.replacement, v_, v_, Name(migrate_from), v_,
            window, history_runs)});

    const int64_t unserved_from =
        unserved_at_start_
            ? first_
            : std::max(history_unserves_.value_or(earliest_unserve_),
                       earliest_unserve_);
    std::string cleanup_why = absl::StrFormat(
        "remove %s's entries from every object's managedFields: "
        "kube-apiserver keeps them and has no cleanup of its own, and once "
        "%s is removed server-side apply fails on them (\"request to convert "
        "CR to an invalid group/version\", kubernetes/kubernetes#111937); it "
        "only holds once %s is not served (from %s), and must run in %s; %s",
        v_, v_, v_, Name(unserved_from), window, history_runs);
    if (h_.revert_buffer_releases > 0) {
      absl::StrAppend(
          &cleanup_why,
          absl::StrFormat("; the first %d release(s) after %s stops being "
                          "served may serve it again (revertBufferReleases) "
                          "and do not count",
                          h_.revert_buffer_releases, v_));
    }
    plan_.steps.push_back(CRDRemovalStep{
        "managed-fields-cleanup", Name(unserved_from), std::move(cleanup_why)});

    std::string remove_why = absl::StrFormat(
        "each of %s neither serves nor stores %s and runs migration and "
        "cleanup, so every %s upgrade to %s finds nothing left in %s",
        Span(window_from, window_to), v_, Upgrade(), Name(earliest_removal_),
        v_);
    if (history_removes_.has_value()) {
      absl::StrAppend(&remove_why, "; the history removes it in ",
                      Name(*history_removes_));
    } else if (earliest_removal_ > last_) {
      absl::StrAppend(&remove_why, "; releases after ", Name(last_),
                      " (the last listed) are assumed to follow this plan");
    }
    plan_.steps.push_back(CRDRemovalStep{
        "remove", plan_.earliest_removal_release, std::move(remove_why)});
  }

  void BuildReason() {
    std::string reason = absl::StrFormat(
        "%s %s: stop serving from %s, remove from %s (%s upgrades, %d "
        "deprecation release(s), %d revert buffer release(s))",
        h_.name, v_, plan_.earliest_unserve_release,
        plan_.earliest_removal_release, Upgrade(), h_.deprecation_releases,
        h_.revert_buffer_releases);
    if (plan_.violations.empty()) {
      absl::StrAppend(&reason, "; the history follows the rules");
    } else {
      absl::StrAppend(&reason, "; the history breaks them in ",
                      plan_.violations.size(), " place(s), first ",
                      plan_.violations.front().release, " (",
                      plan_.violations.front().rule, ")");
    }
    plan_.reason = std::move(reason);
  }

  CRDRemovalPlan PlanStillStorage() {
    plan_.steps.push_back(CRDRemovalStep{
        "stop-serving", "",
        absl::StrFormat(
            "%s is the storage version of %s, the last release listed: add "
            "its replacement and make that the storage version (in %s at the "
            "earliest); the deprecation period counts from the release that "
            "adds it",
            v_, Name(last_), Name(last_ + 1))});
    plan_.reason = absl::StrFormat(
        "%s %s is still the storage version of %s: nothing can be planned "
        "until another version takes over",
        h_.name, v_, Name(last_));
    return std::move(plan_);
  }

  const CRDHistory& h_;
  const std::string v_;
  CRDRemovalPlan plan_;
  absl::flat_hash_map<uint64_t, size_t> by_minor_;
  bool found_ = false;
  uint64_t major_ = 0;
  int64_t first_ = 0;
  int64_t last_ = 0;
  bool with_v_ = false;
  // What the history does.
  std::optional<int64_t> history_unserves_;
  std::optional<int64_t> history_removes_;
  std::optional<int64_t> migrator_since_;
  bool unserved_at_start_ = false;
  int64_t storage_until_ = 0;  // last release with the version as storage
  // The deprecation clock.
  std::string successor_;
  int64_t successor_added_ = 0;
  bool successor_added_known_ = false;
  std::optional<int64_t> deprecated_at_;
  int64_t clock_ = 0;
  int64_t earliest_unserve_ = 0;
  int64_t continuation_unserve_ = 0;
  // The removal search.
  int64_t bound_ = 0;
  int64_t lo_ = 0;
  std::vector<Blocker> blockers_;
  int64_t earliest_removal_ = 0;
};

}  // namespace

absl::Status ValidateCRDHistory(const CRDHistory& history,
                                absl::string_view field) {
  if (history.upgrade_span < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.upgrade_span: %d must be at least 1 (3: an "
                        "upgrade to N may start from N-3)",
                        field, history.upgrade_span));
  }
  if (history.deprecation_releases < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.deprecation_releases: %d must not be negative",
                        field, history.deprecation_releases));
  }
  if (history.revert_buffer_releases < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.revert_buffer_releases: %d must not be negative",
                        field, history.revert_buffer_releases));
  }
  if (history.releases.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.releases: at least one release is required, e.g. {release: "
        "\"v1.9\", versions: [{name: \"v1beta1\", served: true, storage: "
        "true}]}",
        field));
  }
  const uint64_t major = history.releases.front().version.major();
  for (size_t i = 0; i < history.releases.size(); ++i) {
    const CRDRelease& r = history.releases[i];
    const std::string at = absl::StrFormat("%s.releases[%d]", field, i);
    if (r.version.major() != major) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.release: %s is not in major version %d like %s; the upgrade "
          "span counts minor releases of one major version",
          at, r.release, major, history.releases.front().release));
    }
    if (i > 0 && r.version.minor() <= history.releases[i - 1].version.minor()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.release: %s is not a later minor release than %s; list one "
          "release per minor version, oldest first",
          at, r.release, history.releases[i - 1].release));
    }
    absl::flat_hash_set<std::string> names;
    int storage = 0;
    for (size_t j = 0; j < r.versions.size(); ++j) {
      const CRDVersion& version = r.versions[j];
      if (version.name.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s.versions[%d].name: required, e.g. \"v1beta2\"", at, j));
      }
      if (!names.insert(version.name).second) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s.versions[%d].name: duplicate version \"%s\"",
                            at, j, version.name));
      }
      if (version.storage) ++storage;
    }
    if (!r.versions.empty() && storage != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.versions: %d versions are marked storage; a CRD has exactly "
          "one storage version",
          at, storage));
    }
  }
  return CheckBounds(history, absl::StatusCode::kInvalidArgument,
                     absl::StrCat(field, "."));
}

absl::StatusOr<CRDRemovalPlan> PlanCRDVersionRemoval(
    const CRDHistory& history, absl::string_view version) {
  Planner planner(history, std::string(version));
  return planner.Plan();
}

}  // namespace compatd::engine
