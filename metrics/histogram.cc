#include "metrics/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "prometheus/metric_type.h"

namespace compatd::metrics {
namespace {

// Adds `amount` to an atomic double (a CAS loop: libstdc++ 12 has no
// fetch_add for std::atomic<double>).
void AtomicAdd(std::atomic<double>& target, double amount) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + amount,
                                       std::memory_order_relaxed)) {
  }
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      counts_(new std::atomic<uint64_t>[upper_bounds_.size() + 1]) {
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
    counts_[i].store(0, std::memory_order_relaxed);
  }
}

void Histogram::Observe(double value) {
  if (std::isnan(value)) return;
  // The first bucket whose upper bound is >= value ("le" is inclusive).
  const size_t bucket =
      std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) -
      upper_bounds_.begin();
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, value);
}

prometheus::ClientMetric Histogram::Collect() const {
  prometheus::ClientMetric metric;
  metric.histogram.bucket.resize(upper_bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    metric.histogram.bucket[i].cumulative_count = total;
    metric.histogram.bucket[i].upper_bound =
        i < upper_bounds_.size() ? upper_bounds_[i]
                                 : std::numeric_limits<double>::infinity();
  }
  metric.histogram.sample_count = total;
  metric.histogram.sample_sum = sum_.load(std::memory_order_relaxed);
  return metric;
}

absl::Status ValidateBuckets(const std::vector<double>& bounds) {
  if (bounds.empty()) {
    return absl::InvalidArgumentError(
        "histogram buckets: expected at least one finite upper bound");
  }
  for (size_t i = 0; i < bounds.size(); ++i) {
    const bool last = i + 1 == bounds.size();
    if (std::isnan(bounds[i]) ||
        (std::isinf(bounds[i]) && !(last && i > 0 && bounds[i] > 0))) {
      return absl::InvalidArgumentError(
          absl::StrCat("histogram bucket ", i, " is ", bounds[i],
                       ": expected a finite number (+Inf only last)"));
    }
    if (i > 0 && !(bounds[i] > bounds[i - 1])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "histogram buckets must increase strictly: ", bounds[i - 1],
          " is followed by ", bounds[i]));
    }
  }
  return absl::OkStatus();
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names,
                                 std::vector<double> upper_bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      upper_bounds_(std::move(upper_bounds)) {}

Histogram* HistogramFamily::Add(const std::vector<std::string>& label_values) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<Histogram>& histogram = histograms_[label_values];
  if (histogram == nullptr) {
    histogram = std::make_unique<Histogram>(upper_bounds_);
  }
  return histogram.get();
}

std::vector<prometheus::MetricFamily> HistogramFamily::Collect() const {
  prometheus::MetricFamily family;
  family.name = name_;
  family.help = help_;
  family.type = prometheus::MetricType::Histogram;
  std::lock_guard<std::mutex> lock(mu_);
  if (histograms_.empty()) return {};
  family.metric.reserve(histograms_.size());
  for (const auto& [values, histogram] : histograms_) {
    prometheus::ClientMetric& metric =
        family.metric.emplace_back(histogram->Collect());
    for (size_t i = 0; i < label_names_.size() && i < values.size(); ++i) {
      metric.label.push_back({label_names_[i], values[i]});
    }
  }
  return {std::move(family)};
}

}  // namespace compatd::metrics
