#pragma once

// The answers of Gatekeeper external-data keys (gateway/gatekeeper.h) for the
// catalog snapshot now serving. A key's item is a function of the snapshot
// alone, and Gatekeeper asks the same keys again and again: its audit sends
// one key per object of the cluster (a thousand Deployments, one
// "api:apps/v1/Deployment") every audit interval, and each Gatekeeper pod
// keeps a cache of its own that expires. The cache holds the items of one
// snapshot generation; a newer snapshot starts it afresh, an older one (a
// request that took its snapshot before a reload) neither reads nor fills
// it. Bounded in bytes (--gatekeeper-cache-bytes): a full cache starts over.
// Thread-safe.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace compatd::gateway {

class ProviderCache {
 public:
  // 0: nothing is kept.
  explicit ProviderCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // For each key cached for `generation`, sets (*items)[i] to its item's
  // text; leaves the others empty (an item is never empty). `items` has
  // keys.size() elements.
  void Lookup(uint64_t generation, const std::vector<std::string>& keys,
              std::vector<std::string>* items) const;

  // Keeps (key, item) pairs computed from `generation`'s snapshot.
  void Insert(uint64_t generation,
              std::vector<std::pair<std::string, std::string>> computed);

  // Bytes held now (keys, items and a per-entry overhead).
  size_t bytes() const;

  // Keys longer than this are answered but not kept.
  static constexpr size_t kMaxKeyBytes = 512;

 private:
  const size_t max_bytes_;
  mutable std::mutex mu_;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::string> items_ ABSL_GUARDED_BY(mu_);
};

}  // namespace compatd::gateway
