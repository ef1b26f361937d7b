#include "runtime/api_usage.h"

#include <algorithm>
#include <random>
#include <tuple>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/api_names.h"
#include "engine/sha256.h"

namespace compatd::runtime {
namespace {

constexpr absl::string_view kOther = "other";

std::string RandomSecret() {
  std::random_device device;
  std::string secret(32, '\0');
  for (char& c : secret) c = static_cast<char>(device() & 0xff);
  return secret;
}

}  // namespace

absl::StatusOr<UserNames> ParseUserNames(absl::string_view text) {
  if (text == "all") return UserNames::kAll;
  if (text == "service-accounts") return UserNames::kServiceAccounts;
  if (text == "none") return UserNames::kNone;
  return absl::InvalidArgumentError(absl::StrCat(
      "--audit-user-names=", text,
      ": expected all, service-accounts (service accounts and Kubernetes' "
      "own identities by name, other users hashed; the default) or none"));
}

std::string UserLabel(absl::string_view username, UserNames mode,
                      absl::string_view secret) {
  constexpr absl::string_view kServiceAccount = "system:serviceaccount:";
  constexpr absl::string_view kNode = "system:node:";
  if (mode == UserNames::kAll) return std::string(username);
  const bool service_account = absl::StartsWith(username, kServiceAccount);
  const bool node = absl::StartsWith(username, kNode);
  const bool system = absl::StartsWith(username, "system:");
  if (mode == UserNames::kNone) {
    return service_account ? "serviceaccount"
           : node          ? "node"
           : system        ? "system"
                           : "user";
  }
  if (service_account) return std::string(username);
  // One row per node would be one row per machine: nodes are one identity.
  if (node) return "system:node:*";
  if (system) return std::string(username);
  const std::array<uint8_t, 32> digest =
      engine::Sha256(absl::StrCat(secret, username));
  return absl::StrCat("user:",
                      absl::BytesToHexString(absl::string_view(
                          reinterpret_cast<const char*>(digest.data()), 6)));
}

engine::ApiUseJudgement AnnotationJudgement(absl::string_view group,
                                            absl::string_view version,
                                            absl::string_view resource,
                                            absl::string_view removed_release) {
  engine::ApiUseJudgement judgement;
  judgement.verdict = engine::ApiUseVerdict::kDeprecated;
  judgement.release = std::string(removed_release);
  judgement.message = absl::StrCat(
      engine::GroupVersionString(group, version), " ", resource,
      " is marked deprecated by kube-apiserver (k8s.io/deprecated)",
      removed_release.empty() ? std::string()
                              : absl::StrCat(", removed in ", removed_release),
      "; the catalog does not know this API (a custom or aggregated one?)");
  return judgement;
}

ApiUsageTracker::ApiUsageTracker(const ServiceMetrics* metrics, Options options)
    : metrics_(metrics),
      options_(std::move(options)),
      user_secret_(RandomSecret()) {}

absl::Time ApiUsageTracker::Now() const {
  return options_.clock ? options_.clock() : absl::Now();
}

std::shared_ptr<const engine::ApiUseIndex> ApiUsageTracker::Index(
    const ServingSnapshot& snapshot) const {
  std::lock_guard<std::mutex> lock(index_mu_);
  if (index_ == nullptr || index_generation_ != snapshot.generation) {
    // The cluster's line now; its upgrade target on the target's line.
    const engine::Catalog& catalog = snapshot.default_catalog();
    const engine::Catalog* target = &catalog;
    if (catalog.cluster.upgrade_target.has_value() &&
        !catalog.cluster.upgrade_target->binary_version.empty()) {
      absl::StatusOr<size_t> line = snapshot.catalogs->ResolveIndex(
          catalog.cluster.upgrade_target->binary_version,
          "cluster.upgradeTarget.binaryVersion");
      if (line.ok()) target = snapshot.catalogs->lines()[*line].get();
    }
    index_ = std::make_shared<const engine::ApiUseIndex>(
        engine::ApiUseIndex::Build(catalog, target));
    index_generation_ = snapshot.generation;
  }
  return index_;
}

void ApiUsageTracker::Count(Row& row, const ApiCall& call,
                            const engine::ApiUseJudgement& judgement,
                            absl::Time now) {
  ++row.requests;
  if (call.denied) ++row.denied;
  if (call.succeeded) ++row.succeeded;
  row.last_seen = now;
  if (call.apiserver_deprecated) row.apiserver_deprecated = true;
  if (!call.apiserver_removed_release.empty() &&
      row.apiserver_removed_release.empty()) {
    row.apiserver_removed_release = std::string(call.apiserver_removed_release);
  }
  if (metrics_ == nullptr) return;
  const auto verdict = static_cast<size_t>(judgement.verdict);
  metrics::Counter*& counter = row.counters[verdict];
  if (counter == nullptr) {
    counter = metrics_->ApiRequestsAtRisk(
        row.component,
        row.component == kOther
            ? std::string(kOther)
            : engine::GroupVersionString(row.group, row.version),
        row.resource, judgement.verdict);
  }
  counter->Increment();
}

void ApiUsageTracker::Record(const ApiCall& call,
                             const engine::ApiUseJudgement& judgement) {
  const absl::Time now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  key_.clear();
  for (absl::string_view part :
       {call.component, call.client_version, call.user, call.user_agent,
        call.group, call.version, call.resource, call.subresource}) {
    absl::StrAppend(&key_, part, "\x1f");
  }
  auto it = rows_.find(key_);
  if (it != rows_.end()) {
    Count(*it->second, call, judgement, now);
    return;
  }
  if (now - last_sweep_ >= std::max(options_.idle_ttl / 4, absl::Seconds(1)) ||
      rows_.size() >= options_.max_rows) {
    // When full, at most once a second.
    if (now - last_sweep_ >= absl::Seconds(1)) {
      SweepLocked(now);
      last_sweep_ = now;
    }
  }
  if (rows_.size() >= options_.max_rows) {
    if (overflow_ == nullptr) {
      overflow_ = std::make_unique<Row>();
      for (std::string* field :
           {&overflow_->component, &overflow_->client_version, &overflow_->user,
            &overflow_->user_agent, &overflow_->group, &overflow_->version,
            &overflow_->resource}) {
        *field = std::string(kOther);
      }
      overflow_->first_seen = now;
    }
    if (!overflow_->judgement.has_value() ||
        judgement.verdict < overflow_->judgement->verdict) {
      overflow_->judgement = judgement;
    }
    Count(*overflow_, call, judgement, now);
    return;
  }
  auto row = std::make_unique<Row>();
  row->component = std::string(call.component);
  row->client_version = std::string(call.client_version);
  row->user = std::string(call.user);
  row->user_agent = std::string(call.user_agent);
  row->group = std::string(call.group);
  row->version = std::string(call.version);
  row->resource = std::string(call.resource);
  row->subresource = std::string(call.subresource);
  row->first_seen = now;
  Row& inserted = *rows_.emplace(key_, std::move(row)).first->second;
  Count(inserted, call, judgement, now);
}

size_t ApiUsageTracker::SweepLocked(absl::Time now) {
  size_t removed = 0;
  for (auto it = rows_.begin(); it != rows_.end();) {
    if (now - it->second->last_seen > options_.idle_ttl) {
      rows_.erase(it++);
      ++removed;
    } else {
      ++it;
    }
  }
  if (overflow_ != nullptr && now - overflow_->last_seen > options_.idle_ttl) {
    overflow_.reset();
  }
  return removed;
}

size_t ApiUsageTracker::Sweep() {
  const absl::Time now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  return SweepLocked(now);
}

size_t ApiUsageTracker::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rows_.size();
}

ApiUsageInfo ApiUsageTracker::Describe(
    const Row& row, const engine::ApiUseJudgement& judgement) const {
  ApiUsageInfo info;
  info.component = row.component;
  info.client_version = row.client_version;
  info.user = row.user;
  info.user_agent = row.user_agent;
  info.group = row.group;
  info.version = row.version;
  info.resource = row.resource;
  info.subresource = row.subresource;
  info.judgement = judgement;
  info.requests = row.requests;
  info.denied = row.denied;
  info.first_seen = row.first_seen;
  info.last_seen = row.last_seen;
  info.apiserver_deprecated = row.apiserver_deprecated;
  info.apiserver_removed_release = row.apiserver_removed_release;
  return info;
}

std::vector<ApiUsageInfo> ApiUsageTracker::List(
    const ServingSnapshot& snapshot, absl::string_view component) const {
  const std::shared_ptr<const engine::ApiUseIndex> index = Index(snapshot);
  const absl::Time now = Now();
  std::vector<ApiUsageInfo> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, row] : rows_) {
      if (!component.empty() && row->component != component) continue;
      if (now - row->last_seen > options_.idle_ttl) continue;
      // A row with successful calls: the API was served (FindCall).
      const engine::ApiUseJudgement* judgement =
          index->FindCall(row->group, row->version, row->resource,
                          row->succeeded > 0 ? 200 : 0);
      if (judgement != nullptr) {
        out.push_back(Describe(*row, *judgement));
      } else if (row->apiserver_deprecated &&
                 !index->Knows(row->group, row->version, row->resource)) {
        out.push_back(Describe(
            *row, AnnotationJudgement(row->group, row->version, row->resource,
                                      row->apiserver_removed_release)));
      }  // else no longer at risk
    }
    if (overflow_ != nullptr && overflow_->judgement.has_value() &&
        (component.empty() || component == kOther) &&
        now - overflow_->last_seen <= options_.idle_ttl) {
      out.push_back(Describe(*overflow_, *overflow_->judgement));
    }
  }
  std::sort(
      out.begin(), out.end(), [](const ApiUsageInfo& a, const ApiUsageInfo& b) {
        return std::make_tuple(a.judgement.verdict,
                               -static_cast<int64_t>(a.requests), a.component,
                               a.group, a.version, a.resource, a.subresource,
                               a.user, a.user_agent) <
               std::make_tuple(b.judgement.verdict,
                               -static_cast<int64_t>(b.requests), b.component,
                               b.group, b.version, b.resource, b.subresource,
                               b.user, b.user_agent);
      });
  return out;
}

}  // namespace compatd::runtime
