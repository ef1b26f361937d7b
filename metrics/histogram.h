#pragma once

// The one metric type compatd does not take from prometheus-cpp: a histogram
// whose Observe() is lock-free. prometheus::Histogram takes a mutex on every
// Observe(), and grpc_server_handling_seconds is observed on every request;
// measured, that put the request's metrics over their 30 ns budget with two
// threads (docs/decisions/metrics.md has the numbers). The family is a
// prometheus::Collectable, so the library's TextSerializer writes it like its
// own histograms.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "prometheus/client_metric.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace compatd::metrics {

// Counts observations into buckets fixed at creation. Observe() is a relaxed
// atomic add on the bucket and a CAS loop on the sum; no lock. NaN
// observations are ignored (they would poison the sum forever).
class Histogram final {
 public:
  // `upper_bounds` must already be validated (ValidateBuckets) and without a
  // trailing +Inf.
  explicit Histogram(std::vector<double> upper_bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Observe(double value);
  // prometheus-cpp's shape: cumulative buckets, the last one +Inf (whose
  // count is the sample count), and the sum. Labels are the caller's.
  prometheus::ClientMetric Collect() const;

 private:
  const std::vector<double> upper_bounds_;
  // Non-cumulative; one more than upper_bounds_ (the +Inf bucket). The count
  // is derived from these at scrape time so that it always equals the +Inf
  // bucket, as the exposition format requires.
  const std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

// OK when `bounds` is non-empty, finite (a trailing +Inf is allowed: the
// registry drops it) and strictly increasing.
absl::Status ValidateBuckets(const std::vector<double>& bounds);

// The histograms of one name, one per distinct set of label values (given in
// label-name order). Histograms are never removed: Add()'s pointer stays
// valid for the family's lifetime. Thread-safe.
class HistogramFamily final : public prometheus::Collectable {
 public:
  HistogramFamily(std::string name, std::string help,
                  std::vector<std::string> label_names,
                  std::vector<double> upper_bounds);

  // The histogram of these label values, created on first use. The caller
  // checks the arity and the values (metrics::Family does).
  Histogram* Add(const std::vector<std::string>& label_values);

  // One MetricFamily, labels in label-name order; nothing when empty.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> upper_bounds_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Histogram>> histograms_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace compatd::metrics
