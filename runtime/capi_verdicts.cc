#include "runtime/capi_verdicts.h"

#include <algorithm>
#include <utility>

namespace compatd::runtime {

void CapiVerdicts::Record(CapiVerdict verdict) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string key = verdict.cluster;
  by_cluster_[std::move(key)] = std::move(verdict);
  while (by_cluster_.size() > max_clusters_) {
    // Linear, but only past the bound, over at most max_clusters_ + 1.
    auto oldest = std::min_element(
        by_cluster_.begin(), by_cluster_.end(),
        [](const auto& a, const auto& b) { return a.second.at < b.second.at; });
    by_cluster_.erase(oldest);
  }
}

std::vector<CapiVerdict> CapiVerdicts::List() const {
  std::vector<CapiVerdict> list;
  {
    std::lock_guard<std::mutex> lock(mu_);
    list.reserve(by_cluster_.size());
    for (const auto& [cluster, verdict] : by_cluster_) list.push_back(verdict);
  }
  std::stable_sort(
      list.begin(), list.end(),
      [](const CapiVerdict& a, const CapiVerdict& b) { return a.at > b.at; });
  return list;
}

}  // namespace compatd::runtime
