#pragma once

// Caps the number of series a family can grow to when its label values come
// from untrusted input (client names and versions):
//
//   BoundedLabelTable<Counter> table(family, {.max_label_sets = 256,
//                                             .overflow_labels = {0, 1}});
//   table.Get({component, version, "allowed"})->Increment();
//
// The first label sets seen are admitted as they are. Once the table is full,
// a new label set has the values at `overflow_labels` replaced by "other"
// (all of them when the list is empty), so hostile input can grow neither
// memory nor the scrape. Labels not in `overflow_labels` must come from a
// small closed set (e.g. a verdict); `overflow_reserve` slots are kept free
// for the distinct "other" label sets this produces. The family never holds
// more than `max_label_sets` series created through the table: past the
// reserve, further overflow goes to the first overflow label set.
//
// Get() is for the slow path (it takes a lock and may allocate); callers
// cache the returned handle. Thread-safe.

#include <cstddef>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "metrics/registry.h"

namespace compatd::metrics {

inline constexpr size_t kDefaultMaxLabelSets = 256;
inline constexpr absl::string_view kOverflowLabelValue = "other";

struct BoundedLabelTableOptions {
  size_t max_label_sets = kDefaultMaxLabelSets;
  // Indexes of the labels replaced by "other" on overflow; empty = all.
  std::vector<size_t> overflow_labels;
  // Slots kept for overflow label sets (at least 1, less than max).
  size_t overflow_reserve = 1;
};

template <typename T>
class BoundedLabelTable final {
 public:
  // `family` must outlive the table.
  BoundedLabelTable(Family<T>* family, BoundedLabelTableOptions options)
      : family_(family), options_(std::move(options)) {
    if (options_.max_label_sets < 2) options_.max_label_sets = 2;
    if (options_.overflow_reserve < 1) options_.overflow_reserve = 1;
    if (options_.overflow_reserve >= options_.max_label_sets) {
      options_.overflow_reserve = options_.max_label_sets - 1;
    }
  }
  BoundedLabelTable(const BoundedLabelTable&) = delete;
  BoundedLabelTable& operator=(const BoundedLabelTable&) = delete;

  // The handle for these label values, or for their overflow label set.
  // Errors are the family's (wrong arity, non-UTF-8 values).
  absl::StatusOr<T*> Get(const std::vector<std::string>& label_values) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = admitted_.find(label_values);
    if (it != admitted_.end()) return it->second;
    if (admitted_.size() <
        options_.max_label_sets - options_.overflow_reserve) {
      absl::StatusOr<T*> metric = family_->Add(label_values);
      if (!metric.ok()) return metric.status();
      admitted_.emplace(label_values, *metric);
      return *metric;
    }
    std::vector<std::string> overflow = label_values;
    for (size_t i = 0; i < overflow.size(); ++i) {
      if (Overflows(i)) overflow[i] = std::string(kOverflowLabelValue);
    }
    auto existing = overflow_.find(overflow);
    if (existing != overflow_.end()) return existing->second;
    if (overflow_.size() >= options_.overflow_reserve) {
      return first_overflow_;
    }
    absl::StatusOr<T*> metric = family_->Add(overflow);
    if (!metric.ok()) return metric.status();
    if (overflow_.empty()) first_overflow_ = *metric;
    overflow_.emplace(std::move(overflow), *metric);
    return *metric;
  }

  // Label sets created through the table (admitted + overflow).
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return admitted_.size() + overflow_.size();
  }

 private:
  bool Overflows(size_t index) const {
    if (options_.overflow_labels.empty()) return true;
    for (size_t i : options_.overflow_labels) {
      if (i == index) return true;
    }
    return false;
  }

  Family<T>* const family_;
  BoundedLabelTableOptions options_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::vector<std::string>, T*> admitted_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::vector<std::string>, T*> overflow_
      ABSL_GUARDED_BY(mu_);
  T* first_overflow_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace compatd::metrics
