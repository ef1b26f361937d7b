#include "runtime/client_tracker.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <map>
#include <tuple>

#include "engine/query.h"
#include "engine/skew.h"

namespace compatd::runtime {
namespace {

// Adds one to `count` unless that would pass `limit`; false when full.
bool TakeSlot(std::atomic<size_t>& count, size_t limit) {
  size_t current = count.load(std::memory_order_relaxed);
  do {
    if (current >= limit) return false;
  } while (!count.compare_exchange_weak(current, current + 1,
                                        std::memory_order_relaxed));
  return true;
}

// A verdict packed into two bits of an entry's cached state.
using Verdict = std::optional<engine::SkewVerdict>;
uint64_t VerdictBits(Verdict verdict) {
  return verdict.has_value() ? static_cast<uint64_t>(*verdict) : 3;
}
Verdict VerdictFromBits(uint64_t bits) {
  if (bits == 3) return std::nullopt;
  return static_cast<engine::SkewVerdict>(bits);
}

constexpr absl::string_view kOther = "other";

bool ValidField(absl::string_view text) {
  if (text.empty() || text.size() > engine::kMaxClientFieldBytes) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c > 0x20 && c < 0x7f; });
}

bool OutOfAllowanceVerdict(Verdict verdict) {
  return verdict == engine::SkewVerdict::kTooOld ||
         verdict == engine::SkewVerdict::kTooNew;
}

// "major.minor" into `buffer`, without allocating.
absl::string_view FormatMajorMinor(uint64_t major, uint64_t minor,
                                   char (&buffer)[48]) {
  // Two uint64 (at most 20 digits each) and a dot always fit in 48 bytes.
  char* const end = buffer + sizeof(buffer);
  std::to_chars_result result = std::to_chars(buffer, end - 24, major);
  char* p = result.ptr;
  *p = '.';
  result = std::to_chars(p + 1, end, minor);
  return absl::string_view(buffer, result.ptr - buffer);
}

}  // namespace

ClientTracker::Entry::Entry(std::string component_in, std::string version_in,
                            bool major_minor, std::string metric_version_in,
                            absl::Time now)
    : component(std::move(component_in)),
      version(std::move(version_in)),
      has_major_minor(major_minor),
      metric_version(std::move(metric_version_in)),
      first_seen_ns(absl::ToUnixNanos(now)),
      last_seen_ns(absl::ToUnixNanos(now)) {}

ClientTracker::ClientTracker(const SnapshotStore* store,
                             runtime::ServiceMetrics* metrics, Options options)
    : store_(store), metrics_(metrics), options_(std::move(options)) {
  overflow_ = std::make_unique<Entry>(std::string(kOther), std::string(kOther),
                                      false, std::string(kOther), Now());
  if (metrics_ != nullptr) {
    metrics_->SetClientsOutOfAllowanceSource(
        [this]() -> std::vector<std::pair<std::string, int64_t>> {
          if (store_ == nullptr) return {};
          std::shared_ptr<const ServingSnapshot> snapshot = store_->Current();
          if (snapshot == nullptr) return {};
          return OutOfAllowance(*snapshot);
        });
    metrics_->SetUpgradeTargetSources(
        [this]() -> std::vector<std::pair<std::string, int64_t>> {
          if (store_ == nullptr) return {};
          std::shared_ptr<const ServingSnapshot> snapshot = store_->Current();
          if (snapshot == nullptr) return {};
          return OutOfAllowanceAtTarget(*snapshot);
        },
        [this]() -> std::vector<std::pair<std::string, int64_t>> {
          if (store_ == nullptr) return {};
          std::shared_ptr<const ServingSnapshot> snapshot = store_->Current();
          if (snapshot == nullptr ||
              snapshot->default_line().derived == nullptr ||
              snapshot->default_line().derived->UpgradeTargetVersions() ==
                  nullptr) {
            return {};
          }
          std::vector<std::pair<std::string, int64_t>> blockers =
              snapshot->default_line().derived->UpgradeBlockers();
          int64_t clients = 0;
          for (const auto& [component, count] :
               OutOfAllowanceAtTarget(*snapshot)) {
            clients += count;
          }
          blockers.emplace_back("clients", clients);
          std::sort(blockers.begin(), blockers.end());
          return blockers;
        });
  }
}

ClientTracker::~ClientTracker() {
  // Waits for a scrape that is calling OutOfAllowance().
  if (metrics_ != nullptr) {
    metrics_->SetClientsOutOfAllowanceSource(nullptr);
    metrics_->SetUpgradeTargetSources(nullptr, nullptr);
  }
}

absl::Time ClientTracker::Now() const {
  return options_.clock ? options_.clock() : absl::Now();
}

bool ClientTracker::Live(const Entry& entry, absl::Time now) const {
  const absl::Time last_seen =
      absl::FromUnixNanos(entry.last_seen_ns.load(std::memory_order_relaxed));
  return now - last_seen <= options_.idle_ttl;
}

absl::StatusOr<engine::EffectiveVersions> ClientTracker::ClusterVersions(
    const ServingSnapshot& snapshot) const {
  std::lock_guard<std::mutex> lock(versions_mu_);
  if (!versions_valid_ || versions_generation_ != snapshot.generation) {
    // An empty query: the catalog's cluster section, then Kubernetes'
    // defaults.
    versions_ = engine::ResolveEffectiveVersions(snapshot.default_catalog(),
                                                 engine::VersionQuery{});
    versions_generation_ = snapshot.generation;
    versions_valid_ = true;
  }
  return versions_;
}

ClientTracker::Judgement ClientTracker::Judge(const ServingSnapshot& snapshot,
                                              absl::string_view component,
                                              absl::string_view version,
                                              bool has_major_minor) const {
  Judgement judgement;
  if (!has_major_minor) return judgement;
  absl::StatusOr<engine::EffectiveVersions> versions =
      ClusterVersions(snapshot);
  if (!versions.ok()) return judgement;
  // INVALID_ARGUMENT (no rule names the component) means "unknown".
  absl::StatusOr<engine::SkewDecision> decision = engine::CheckSkew(
      snapshot.default_catalog(), *versions, component, version);
  if (!decision.ok()) return judgement;
  judgement.verdict = decision->verdict;
  judgement.min_version = decision->min_version.MajorMinorString();
  judgement.max_version = decision->max_version.MajorMinorString();
  return judgement;
}

Verdict ClientTracker::VerdictOf(const ServingSnapshot& snapshot,
                                 Entry& entry) const {
  const uint64_t generation = snapshot.generation + 1;
  const uint64_t state = entry.state.load(std::memory_order_acquire);
  if ((state >> 2) == generation) return VerdictFromBits(state & 3);
  const Verdict verdict =
      Judge(snapshot, entry.component, entry.version, entry.has_major_minor)
          .verdict;
  entry.state.store((generation << 2) | VerdictBits(verdict),
                    std::memory_order_release);
  return verdict;
}

void ClientTracker::Count(Entry& entry, Verdict verdict, absl::Time now) {
  entry.requests.fetch_add(1, std::memory_order_relaxed);
  entry.last_seen_ns.store(absl::ToUnixNanos(now), std::memory_order_relaxed);
  if (metrics_ == nullptr) return;
  std::atomic<metrics::Counter*>& slot = entry.counters[VerdictBits(verdict)];
  metrics::Counter* counter = slot.load(std::memory_order_acquire);
  if (counter == nullptr) {
    // Once per entry and verdict; the table hands out the same handle to
    // racing callers.
    counter = metrics_->ClientRequests(entry.component, entry.metric_version,
                                       verdict);
    slot.store(counter, std::memory_order_release);
  }
  counter->Increment();
}

ClientTracker::Entry* ClientTracker::Insert(Shard& shard, const KeyView& key,
                                            bool has_major_minor,
                                            Verdict verdict, absl::Time now) {
  // One slot of the bound is the overflow entry's. Slots are taken with a
  // compare-and-swap: callers inserting into different shards hold different
  // locks, and a plain check-then-add let two of them take the last slot
  // (ListClients then showed bound + 1 rows; seen under ASan load).
  const size_t limit = std::max<size_t>(options_.max_entries, 2) - 1;
  if (!TakeSlot(entries_, limit)) return nullptr;
  const bool unknown = !verdict.has_value();
  if (unknown && !TakeSlot(unknown_entries_, std::max<size_t>(limit / 2, 1))) {
    entries_.fetch_sub(1, std::memory_order_relaxed);
    return nullptr;
  }
  auto entry = std::make_unique<Entry>(
      std::string(key.component), std::string(key.version), has_major_minor,
      has_major_minor ? std::string(key.version)
                      : std::string(engine::kUnknownClient),
      now);
  entry->counted_unknown = unknown;
  Entry* raw = entry.get();
  shard.entries.emplace(Key{raw->component, raw->version}, std::move(entry));
  return raw;
}

void ClientTracker::Record(const ServingSnapshot& snapshot,
                           const engine::ClientIdentity& client) {
  const absl::Time now = Now();
  char buffer[48];
  const bool has_major_minor =
      client.major.has_value() && client.minor.has_value();
  KeyView key;
  key.component =
      ValidField(client.component) ? client.component : engine::kUnknownClient;
  if (has_major_minor) {
    key.version = FormatMajorMinor(*client.major, *client.minor, buffer);
  } else {
    key.version =
        ValidField(client.version) ? client.version : engine::kUnknownClient;
  }
  // The map hashes with the same function: take the shard from high bits so
  // each shard's map still sees well-spread low bits.
  Shard& shard = shards_[(KeyHash{}(key) >> 40) % kShards];
  {
    std::shared_lock<std::shared_mutex> lock(shard.mu);
    auto it = shard.entries.find(key);
    if (it != shard.entries.end()) {
      Entry& entry = *it->second;
      Count(entry, VerdictOf(snapshot, entry), now);
      return;
    }
  }

  // A new pair: sweep if due, judge it outside any lock, insert.
  const size_t limit = std::max<size_t>(options_.max_entries, 2) - 1;
  MaybeSweep(now, entries_.load(std::memory_order_relaxed) >= limit);
  const Verdict verdict =
      Judge(snapshot, key.component, key.version, has_major_minor).verdict;
  Entry* entry = nullptr;
  {
    std::unique_lock<std::shared_mutex> lock(shard.mu);
    auto it = shard.entries.find(key);
    if (it != shard.entries.end()) {  // another caller inserted it meanwhile
      entry = it->second.get();
      Count(*entry, VerdictOf(snapshot, *entry), now);
      return;
    }
    entry = Insert(shard, key, has_major_minor, verdict, now);
    if (entry != nullptr) {
      entry->state.store(
          ((snapshot.generation + 1) << 2) | VerdictBits(verdict),
          std::memory_order_release);
      Count(*entry, verdict, now);
      return;
    }
  }
  // Past the bound the pair is "other", but the call keeps the verdict just
  // judged: an out-of-allowance client must not pass as "unknown".
  Count(*overflow_, verdict, now);
}

void ClientTracker::MaybeSweep(absl::Time now, bool table_full) {
  const int64_t now_ns = absl::ToUnixNanos(now);
  // Every idle_ttl / 4 (at least a second); when the table is full, as often
  // as once a second, so expired entries make room without a sweep storm.
  const absl::Duration gap =
      table_full ? absl::Seconds(1)
                 : std::max(options_.idle_ttl / 4, absl::Seconds(1));
  int64_t last = last_sweep_ns_.load(std::memory_order_relaxed);
  if (now_ns - last < absl::ToInt64Nanoseconds(gap)) return;
  if (!last_sweep_ns_.compare_exchange_strong(last, now_ns)) return;
  Sweep();
}

size_t ClientTracker::Sweep() {
  const absl::Time now = Now();
  size_t removed = 0;
  for (Shard& shard : shards_) {
    std::unique_lock<std::shared_mutex> lock(shard.mu);
    for (auto it = shard.entries.begin(); it != shard.entries.end();) {
      if (Live(*it->second, now)) {
        ++it;
        continue;
      }
      if (it->second->counted_unknown) {
        unknown_entries_.fetch_sub(1, std::memory_order_relaxed);
      }
      entries_.fetch_sub(1, std::memory_order_relaxed);
      shard.entries.erase(it++);
      ++removed;
    }
  }
  return removed;
}

ObservedClientInfo ClientTracker::Describe(const ServingSnapshot& snapshot,
                                           const Entry& entry) const {
  Judgement judgement =
      Judge(snapshot, entry.component, entry.version, entry.has_major_minor);
  ObservedClientInfo info;
  info.component = entry.component;
  info.version = entry.version;
  info.verdict = judgement.verdict;
  info.min_version = std::move(judgement.min_version);
  info.max_version = std::move(judgement.max_version);
  info.first_seen =
      absl::FromUnixNanos(entry.first_seen_ns.load(std::memory_order_relaxed));
  info.last_seen =
      absl::FromUnixNanos(entry.last_seen_ns.load(std::memory_order_relaxed));
  info.requests = entry.requests.load(std::memory_order_relaxed);
  return info;
}

std::vector<ObservedClientInfo> ClientTracker::List(
    const ServingSnapshot& snapshot, absl::string_view component) const {
  const absl::Time now = Now();
  std::vector<ObservedClientInfo> clients;
  for (const Shard& shard : shards_) {
    std::shared_lock<std::shared_mutex> lock(shard.mu);
    for (const auto& [key, entry] : shard.entries) {
      if (!component.empty() && entry->component != component) continue;
      if (!Live(*entry, now)) continue;
      clients.push_back(Describe(snapshot, *entry));
    }
  }
  if ((component.empty() || component == kOther) &&
      overflow_->requests.load(std::memory_order_relaxed) > 0 &&
      Live(*overflow_, now)) {
    clients.push_back(Describe(snapshot, *overflow_));
  }
  std::sort(clients.begin(), clients.end(),
            [](const ObservedClientInfo& a, const ObservedClientInfo& b) {
              return std::tie(a.component, a.version) <
                     std::tie(b.component, b.version);
            });
  return clients;
}

std::vector<std::pair<std::string, int64_t>> ClientTracker::OutOfAllowance(
    const ServingSnapshot& snapshot) const {
  const absl::Time now = Now();
  std::map<std::string, int64_t, std::less<>> counts;
  for (const engine::SkewRule& rule :
       engine::SkewRulesInForce(snapshot.default_catalog())) {
    for (const std::string& name : rule.components) counts.emplace(name, 0);
  }
  for (const Shard& shard : shards_) {
    std::shared_lock<std::shared_mutex> lock(shard.mu);
    for (const auto& [key, entry] : shard.entries) {
      if (!Live(*entry, now)) continue;
      if (OutOfAllowanceVerdict(VerdictOf(snapshot, *entry))) {
        ++counts[entry->component];
      }
    }
  }
  return {counts.begin(), counts.end()};
}

std::vector<std::pair<std::string, int64_t>>
ClientTracker::OutOfAllowanceAtTarget(const ServingSnapshot& snapshot) const {
  const DerivedAnswers* derived = snapshot.default_line().derived.get();
  if (derived == nullptr) return {};
  const engine::EffectiveVersions* target = derived->UpgradeTargetVersions();
  if (target == nullptr) return {};
  // The target's binary version picked its line: its skew rules judge there.
  const engine::Catalog& target_catalog =
      *snapshot.lines[derived->UpgradeTargetLine()].catalog;
  const absl::Time now = Now();
  std::map<std::string, int64_t, std::less<>> counts;
  for (const engine::SkewRule& rule :
       engine::SkewRulesInForce(target_catalog)) {
    for (const std::string& name : rule.components) counts.emplace(name, 0);
  }
  for (const Shard& shard : shards_) {
    std::shared_lock<std::shared_mutex> lock(shard.mu);
    for (const auto& [key, entry] : shard.entries) {
      if (!Live(*entry, now) || !entry->has_major_minor) continue;
      // Only components a skew rule names: the label set stays the rules'.
      auto it = counts.find(entry->component);
      if (it == counts.end()) continue;
      absl::StatusOr<engine::SkewDecision> d = engine::CheckSkew(
          target_catalog, *target, entry->component, entry->version);
      if (d.ok() && d->verdict != engine::SkewVerdict::kAllowed) ++it->second;
    }
  }
  return {counts.begin(), counts.end()};
}

}  // namespace compatd::runtime
