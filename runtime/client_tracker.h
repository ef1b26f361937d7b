#pragma once

// Remembers which client components and versions call the server, for the
// ListClients RPC and the skew metrics:
//
//   tracker.Record(*snapshot, engine::IdentifyClient(component_md, version_md,
//                                                    user_agent));
//
// Each (component, version) pair — version "major.minor" when it could be
// read, else the raw value — is one entry with first_seen, last_seen and a
// request count. Its verdict is engine::CheckSkew at the cluster's current
// versions (the catalog's cluster section: ResolveEffectiveVersions with an
// empty query), "unknown" when the version cannot be read or no skew rule
// names the component.
//
// Verdicts and catalog reloads: an entry caches its verdict together with the
// generation of the catalog it was computed against (one atomic word). A call
// carrying a catalog of another generation recomputes it (once per entry and
// generation) and from then on counts under the new verdict; List() and the
// out-of-allowance gauge always evaluate against the catalog they are given
// (the gauge: the store's current one, at scrape time). So a reload that
// moves the cluster's emulation or min-compatibility version re-classifies
// every live client at its next call, at the next scrape and in ListClients,
// without a sweep. Catalogs must carry distinct generations (CatalogStore
// publishers number them).
//
// Bounds: entries idle for longer than `idle_ttl` expire; at most
// `max_entries` entries exist. When full, new pairs are aggregated into one
// entry with component and version "other" (their calls still count under
// their own verdict in the metric). Pairs whose verdict is unknown
// (names no rule knows, unreadable versions: what a hostile caller can
// invent) may take at most half of the entries, so they cannot crowd out the
// components the skew policy is about.
//
// Metrics (optional): each call increments compatd_client_requests_total
// {component, version (major.minor or "unknown"), verdict}; the tracker is
// the source of compatd_clients_out_of_allowance{component} while it lives.
//
// The fleet (Options::fleet, set with --prometheus-url): View() answers from
// the fleet's list when FleetClients has a usable answer, merged with this
// replica's own live entries (so a client that called this replica since
// Prometheus last scraped it is not missing), and from this replica's
// entries alone otherwise; the view says which, since when and why. The
// out-of-allowance gauges follow View(), so with the fleet they count the
// fleet's clients in every replica (aggregate them with max, not sum). The
// seen gauges (compatd_client_{first,last}_seen_timestamp_seconds), which the
// fleet's answer is made of, are always this replica's own.
//
// Thread-safety: all methods are thread-safe. A call from a client already
// known, against a catalog generation already seen, takes one shard's reader
// lock (16 shards) and updates atomics: no exclusive lock, no allocation.

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/user_agent.h"
#include "runtime/fleet_clients.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"

namespace compatd::runtime {

// Where a client was seen: calling compatd itself, or in kube-apiserver's
// audit events (POST /audit/v1/events: every client of the cluster).
enum class ClientSeen : uint8_t { kDirect = 1, kAudit = 2 };

// One ListClients row.
struct ObservedClientInfo {
  std::string component;
  std::string version;  // "major.minor", or the raw value
  std::optional<engine::SkewVerdict> verdict;  // nullopt: unknown
  std::string min_version;  // "major.minor"; empty when the verdict is unknown
  std::string max_version;
  absl::Time first_seen;
  absl::Time last_seen;
  uint64_t requests = 0;
  bool seen_direct = false;  // called compatd
  bool seen_audit = false;   // in the audit events
};

// Whose clients a list shows.
enum class ClientScope {
  kReplica,  // the clients that reached this replica
  kFleet,    // every replica's, summed by Prometheus
};

// A list of clients and where it comes from (ListClients, PlanUpgrade, the
// status page).
struct ClientView {
  std::vector<ObservedClientInfo> clients;
  ClientScope scope = ClientScope::kReplica;
  // When the list was taken: the fleet answer's time, or now.
  absl::Time as_of;
  // Fleet: the replicas whose series Prometheus summed; 0: unknown.
  int64_t replicas = 0;
  // "this replica" or FleetClients' source ("Prometheus at http://...").
  std::string source;
  // One sentence on what the list covers, and why it is this replica's when
  // the fleet was asked for and is not available.
  std::string note;
};

class ClientTracker final {
 public:
  struct Options {
    size_t max_entries = metrics::kDefaultMaxLabelSets;
    absl::Duration idle_ttl = absl::Minutes(15);
    // Defaults to absl::Now.
    std::function<absl::Time()> clock;
    // The fleet's answers (may be null: this replica's view only). Must
    // outlive the tracker.
    const FleetClients* fleet = nullptr;
  };

  // `store` (may be null: no gauge values) is read at scrape time for the
  // out-of-allowance gauge; `metrics` may be null. Both must outlive the
  // tracker.
  ClientTracker(const SnapshotStore* store, runtime::ServiceMetrics* metrics,
                Options options);
  ~ClientTracker();
  ClientTracker(const ClientTracker&) = delete;
  ClientTracker& operator=(const ClientTracker&) = delete;

  // Records one call, judged against `catalog` (the snapshot the request
  // used), seen where `seen` says.
  void Record(const ServingSnapshot& snapshot,
              const engine::ClientIdentity& client,
              ClientSeen seen = ClientSeen::kDirect);

  // Live entries (of `component` only, unless empty), judged against
  // `catalog`, sorted by component then version.
  std::vector<ObservedClientInfo> List(const ServingSnapshot& snapshot,
                                       absl::string_view component = {}) const;

  // The clients to show: the fleet's (merged with this replica's) when
  // Options::fleet has a usable answer, else this replica's List(); judged
  // against `snapshot`, of `component` only unless empty, sorted.
  ClientView View(const ServingSnapshot& snapshot,
                  absl::string_view component = {}) const;

  // This replica's live (component, version label) pairs for the seen
  // gauges: entries whose version is not major.minor share the "unknown"
  // label (the earliest first_seen, the latest last_seen), sorted.
  struct Seen {
    std::string component;
    std::string version;
    absl::Time first_seen;
    absl::Time last_seen;
  };
  std::vector<Seen> SeenPairs() const;

  // Live out-of-allowance versions per component (View()'s clients), judged
  // against `catalog`:
  // every component a skew rule names (0 when none), sorted.
  std::vector<std::pair<std::string, int64_t>> OutOfAllowance(
      const ServingSnapshot& snapshot) const;

  // The same at the snapshot's upgrade target
  // (DerivedAnswers::UpgradeTargetVersions): every component a skew rule
  // names, sorted; empty when the snapshot has no target.
  std::vector<std::pair<std::string, int64_t>> OutOfAllowanceAtTarget(
      const ServingSnapshot& snapshot) const;

  // Drops expired entries; returns how many. Record() also sweeps on its
  // slow path, at most every idle_ttl / 4.
  size_t Sweep();

  // Entries now held (expired ones not yet swept included; the overflow entry
  // excluded).
  size_t size() const { return entries_.load(std::memory_order_relaxed); }

 private:
  struct Key {
    std::string component;
    std::string version;
  };
  struct KeyView {
    absl::string_view component;
    absl::string_view version;
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(const KeyView& key) const {
      return absl::HashOf(key.component, key.version);
    }
    size_t operator()(const Key& key) const {
      return (*this)(KeyView{key.component, key.version});
    }
  };
  struct KeyEq {
    using is_transparent = void;
    static KeyView View(const Key& key) { return {key.component, key.version}; }
    static KeyView View(const KeyView& key) { return key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const KeyView x = View(a), y = View(b);
      return x.component == y.component && x.version == y.version;
    }
  };

  struct Entry {
    Entry(std::string component_in, std::string version_in, bool major_minor,
          std::string metric_version_in, absl::Time now);
    const std::string component;
    const std::string version;
    const bool has_major_minor;
    // The metric's version label: "major.minor", "unknown" or "other".
    const std::string metric_version;
    bool counted_unknown = false;  // guarded by the shard's lock
    std::atomic<int64_t> first_seen_ns;
    std::atomic<int64_t> last_seen_ns;
    std::atomic<uint64_t> requests{0};
    // ClientSeen bits.
    std::atomic<uint8_t> seen{0};
    // ((catalog generation + 1) << 2) | verdict; 0 = never judged.
    std::atomic<uint64_t> state{0};
    // compatd_client_requests_total handles, by verdict, resolved lazily.
    std::array<std::atomic<metrics::Counter*>, 4> counters{};
  };

  static constexpr size_t kShards = 16;
  struct Shard {
    mutable std::shared_mutex mu;
    absl::flat_hash_map<Key, std::unique_ptr<Entry>, KeyHash, KeyEq> entries
        ABSL_GUARDED_BY(mu);
  };

  struct Judgement {
    std::optional<engine::SkewVerdict> verdict;  // nullopt: unknown
    std::string min_version;
    std::string max_version;
  };

  absl::Time Now() const;
  bool Live(const Entry& entry, absl::Time now) const;
  // The cluster's effective versions for this catalog, cached per generation.
  absl::StatusOr<engine::EffectiveVersions> ClusterVersions(
      const ServingSnapshot& snapshot) const;
  Judgement Judge(const ServingSnapshot& snapshot, absl::string_view component,
                  absl::string_view version, bool has_major_minor) const;
  // The entry's verdict at this catalog: cached, or judged and cached.
  std::optional<engine::SkewVerdict> VerdictOf(const ServingSnapshot& snapshot,
                                               Entry& entry) const;
  void Count(Entry& entry, std::optional<engine::SkewVerdict> verdict,
             absl::Time now, ClientSeen seen);
  Entry* Insert(Shard& shard, const KeyView& key, bool has_major_minor,
                std::optional<engine::SkewVerdict> verdict, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  void MaybeSweep(absl::Time now, bool table_full);
  ObservedClientInfo Describe(const ServingSnapshot& snapshot,
                              const Entry& entry) const;
  // View() from a fleet answer merged with this replica's entries.
  ClientView FleetView(const ServingSnapshot& snapshot,
                       absl::string_view component, const FleetAnswer& answer,
                       absl::Time now) const;

  const SnapshotStore* const store_;
  runtime::ServiceMetrics* const metrics_;
  const Options options_;

  std::array<Shard, kShards> shards_;
  std::atomic<size_t> entries_{0};
  std::atomic<size_t> unknown_entries_{0};
  std::atomic<int64_t> last_sweep_ns_{0};
  // Where calls go when the table is full.
  std::unique_ptr<Entry> overflow_;

  mutable std::mutex versions_mu_;
  mutable uint64_t versions_generation_ ABSL_GUARDED_BY(versions_mu_) = 0;
  mutable bool versions_valid_ ABSL_GUARDED_BY(versions_mu_) = false;
  mutable absl::StatusOr<engine::EffectiveVersions> versions_
      ABSL_GUARDED_BY(versions_mu_);
};

}  // namespace compatd::runtime
