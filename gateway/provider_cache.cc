#include "gateway/provider_cache.h"

namespace compatd::gateway {
namespace {

// A hash map node's bookkeeping beside the two strings' bytes, roughly.
constexpr size_t kEntryOverhead = 96;

}  // namespace

void ProviderCache::Lookup(uint64_t generation,
                           const std::vector<std::string>& keys,
                           std::vector<std::string>* items) const {
  if (max_bytes_ == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (generation != generation_ || items_.empty()) return;
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto it = items_.find(keys[i]);
    if (it != items_.end()) (*items)[i] = it->second;
  }
}

void ProviderCache::Insert(
    uint64_t generation,
    std::vector<std::pair<std::string, std::string>> computed) {
  if (max_bytes_ == 0 || computed.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (generation < generation_) return;  // answered from an older snapshot
  if (generation > generation_) {
    items_.clear();
    bytes_ = 0;
    generation_ = generation;
  }
  for (auto& [key, item] : computed) {
    if (key.size() > kMaxKeyBytes) continue;
    const size_t size = key.size() + item.size() + kEntryOverhead;
    if (size > max_bytes_) continue;
    if (bytes_ + size > max_bytes_) {
      items_.clear();  // full: start over rather than keep an LRU order
      bytes_ = 0;
    }
    if (items_.try_emplace(std::move(key), std::move(item)).second) {
      bytes_ += size;
    }
  }
}

size_t ProviderCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

}  // namespace compatd::gateway
