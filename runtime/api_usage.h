#pragma once

// Which clients of the cluster still call APIs at risk, from kube-apiserver's
// audit events (gateway/audit.h feeds it): one row per (client component and
// version, user, User-Agent, group/version/resource/subresource) whose API
// engine::ApiUseIndex judges at risk at the cluster's versions, its upgrade
// target or its rollback floor. Calls to APIs not at risk keep no row.
//
//   ApiCall call{...};   // views into the batch being read
//   usage.Record(index, call, *judgement);
//   usage.List(snapshot)  // ListApiUsage, the page, the plan
//
// Privacy: rows hold what the views need and nothing else: the component and
// version from the User-Agent, the User-Agent (at most 256 printable ASCII
// bytes), the API called, counts and times. Never bodies, tokens, object
// names, namespaces of the objects or source IPs. User names pass through
// UserLabel() first (--audit-user-names).
//
// Bounds: at most `max_rows` rows; past it, new rows go to one row of
// component, user and API "other" (counted under their own verdict in the
// metric). Rows idle for longer than `idle_ttl` expire. Record() sweeps at
// most every idle_ttl / 4.
//
// Metrics (optional): each recorded call increments
// compatd_api_requests_at_risk_total{component,group_version,resource,
// verdict} (bounded in ServiceMetrics).
//
// Thread-safe: one mutex over the rows; calls not at risk never reach it.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/api_use.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"

namespace compatd::runtime {

// --audit-user-names: which user names the rows keep.
enum class UserNames {
  // Every name as kube-apiserver authenticated it.
  kAll,
  // Service accounts ("kube-system/cluster-autoscaler") and Kubernetes'
  // own identities (system:kube-controller-manager, system:node:<name> as
  // system:node:*, ...) by name; any other user as "user:" and the first 12
  // hex digits of a SHA-256 keyed with a secret drawn at start-up: distinct
  // users stay distinct within a process, a name cannot be recovered or
  // matched across replicas or restarts. The default.
  kServiceAccounts,
  // Only the kind: "serviceaccount", "node", "system", "user".
  kNone,
};

// "all", "service-accounts", "none"; INVALID_ARGUMENT otherwise.
absl::StatusOr<UserNames> ParseUserNames(absl::string_view text);

// The user as a row keeps it. `secret` keys the hash of human users.
std::string UserLabel(absl::string_view username, UserNames mode,
                      absl::string_view secret);

// The judgement of a call to an API the catalog does not know that
// kube-apiserver annotated k8s.io/deprecated (a CRD version, an aggregated
// API): deprecated, by kube-apiserver's word.
engine::ApiUseJudgement AnnotationJudgement(absl::string_view group,
                                            absl::string_view version,
                                            absl::string_view resource,
                                            absl::string_view removed_release);

// One audited call, borrowed from the batch being read.
struct ApiCall {
  absl::string_view component;       // engine::ClientIdentity's
  absl::string_view client_version;  // "major.minor", or the raw value
  absl::string_view user;            // already UserLabel()'d
  absl::string_view user_agent;
  absl::string_view group;  // "" for core
  absl::string_view version;
  absl::string_view resource;
  absl::string_view subresource;
  bool denied = false;  // answered 403
  // Answered 2xx: an API the catalog says is not served was served (a
  // catalog mismatch, engine::ApiUseIndex::FindCall).
  bool succeeded = false;
  // kube-apiserver's own annotations, when it set them.
  bool apiserver_deprecated = false;
  absl::string_view apiserver_removed_release;
};

// One ListApiUsage row, judged against the snapshot listed with.
struct ApiUsageInfo {
  std::string component;
  std::string client_version;
  std::string user;
  std::string user_agent;
  std::string group;
  std::string version;
  std::string resource;
  std::string subresource;
  engine::ApiUseJudgement judgement;
  uint64_t requests = 0;
  uint64_t denied = 0;
  absl::Time first_seen;
  absl::Time last_seen;
  bool apiserver_deprecated = false;
  std::string apiserver_removed_release;
};

class ApiUsageTracker final {
 public:
  struct Options {
    size_t max_rows = 1000;
    absl::Duration idle_ttl = absl::Hours(1);
    // Defaults to absl::Now.
    std::function<absl::Time()> clock;
  };

  // `metrics` may be null; it must outlive the tracker.
  ApiUsageTracker(const ServiceMetrics* metrics, Options options);
  ApiUsageTracker(const ApiUsageTracker&) = delete;
  ApiUsageTracker& operator=(const ApiUsageTracker&) = delete;

  // The judgements of `snapshot`'s catalog, built once per generation (the
  // first caller after a reload builds it; others wait for it).
  std::shared_ptr<const engine::ApiUseIndex> Index(
      const ServingSnapshot& snapshot) const;

  // Records one call at risk (`judgement` is the index's for it).
  void Record(const ApiCall& call, const engine::ApiUseJudgement& judgement);

  // Live rows (of `component` only, unless empty) still at risk at
  // `snapshot` (or annotated deprecated by kube-apiserver, for APIs the
  // catalog does not know), most severe verdict first, then by requests (most
  // first).
  std::vector<ApiUsageInfo> List(const ServingSnapshot& snapshot,
                                 absl::string_view component = {}) const;

  // Drops expired rows; returns how many.
  size_t Sweep();

  size_t size() const;

  // The key of UserLabel's hash: random, drawn at construction.
  const std::string& user_secret() const { return user_secret_; }

 private:
  struct Row {
    std::string component;
    std::string client_version;
    std::string user;
    std::string user_agent;
    std::string group;
    std::string version;
    std::string resource;
    std::string subresource;
    bool apiserver_deprecated = false;
    std::string apiserver_removed_release;
    uint64_t requests = 0;
    uint64_t denied = 0;
    uint64_t succeeded = 0;  // answered 2xx
    absl::Time first_seen;
    absl::Time last_seen;
    // compatd_api_requests_at_risk_total handles, by verdict.
    std::array<metrics::Counter*, engine::kApiUseVerdictCount> counters{};
    // The overflow row's: the most severe judgement it took.
    std::optional<engine::ApiUseJudgement> judgement;
  };

  absl::Time Now() const;
  void Count(Row& row, const ApiCall& call,
             const engine::ApiUseJudgement& judgement, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t SweepLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ApiUsageInfo Describe(const Row& row,
                        const engine::ApiUseJudgement& judgement) const;

  const ServiceMetrics* const metrics_;
  const Options options_;
  const std::string user_secret_;

  mutable std::mutex mu_;
  // Keyed by the row's fields joined with '\x1f'.
  absl::flat_hash_map<std::string, std::unique_ptr<Row>> rows_
      ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Row> overflow_ ABSL_GUARDED_BY(mu_);
  absl::Time last_sweep_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::string key_ ABSL_GUARDED_BY(mu_);  // reused to build keys

  mutable std::mutex index_mu_;
  mutable uint64_t index_generation_ ABSL_GUARDED_BY(index_mu_) = 0;
  mutable std::shared_ptr<const engine::ApiUseIndex> index_
      ABSL_GUARDED_BY(index_mu_);
};

}  // namespace compatd::runtime
