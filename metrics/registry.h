#pragma once

// A Prometheus metrics registry in prometheus-cpp's shape:
//
//   Registry registry;
//   COMPATD_ASSIGN_OR_RETURN(Family<Counter>* requests,
//       registry.AddCounterFamily("compatd_things_total", "Things done.",
//                                 {"kind"}));
//   COMPATD_ASSIGN_OR_RETURN(Counter* widgets, requests->Add({"widget"}));
//   widgets->Increment();  // hot path: one relaxed atomic add, no lock
//
// A family's name, help, label names (and a histogram's buckets) are fixed
// when it is created. Family::Add() returns a handle that stays valid for the
// registry's lifetime (metrics are never removed), so callers resolve their
// handles once, at startup, and only touch atomics afterwards.
//
// Callback families are evaluated at scrape time (process metrics, values
// owned by someone else).
//
// Thread-safety: everything is thread-safe. Increments, Set() and Observe()
// use relaxed atomics only; Add() and Collect() take a per-family mutex.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace compatd::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// "counter", "gauge", "histogram" (the TYPE line's spelling).
absl::string_view MetricTypeName(MetricType type);

// A point-in-time copy of one metric, for serialization.
struct HistogramSnapshot {
  std::vector<double> upper_bounds;  // finite, increasing; +Inf is implicit
  // Cumulative: cumulative_counts[i] = observations <= upper_bounds[i]; the
  // last element (size upper_bounds + 1) is the +Inf bucket = the count.
  std::vector<uint64_t> cumulative_counts;
  double sum = 0;
};

struct MetricSnapshot {
  std::vector<std::string> label_values;  // in the family's label order
  double value = 0;                       // counters and gauges
  HistogramSnapshot histogram;            // histograms
};

struct FamilySnapshot {
  std::string name;
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<std::string> label_names;
  std::vector<MetricSnapshot> metrics;  // sorted by label values
};

// A monotonically increasing value. Negative and NaN increments are ignored.
class Counter final {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // The hot path: one relaxed fetch_add on an integer.
  void Increment() { whole_.fetch_add(1, std::memory_order_relaxed); }
  void Increment(double amount);
  double Value() const;

 private:
  std::atomic<uint64_t> whole_{0};
  std::atomic<double> fraction_{0};  // non-integer increments
};

// A value that goes up and down.
class Gauge final {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Increment(double amount = 1);
  void Decrement(double amount = 1) { Increment(-amount); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Counts observations into buckets fixed at creation. NaN observations are
// ignored (they would poison the sum forever).
class Histogram final {
 public:
  // `upper_bounds` must already be validated (ValidateBuckets).
  explicit Histogram(std::vector<double> upper_bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Observe(double value);
  HistogramSnapshot Snapshot() const;

 private:
  const std::vector<double> upper_bounds_;
  // Non-cumulative; one more than upper_bounds_ (the +Inf bucket). The count
  // is derived from these at scrape time so that it always equals the +Inf
  // bucket, as the exposition format requires.
  const std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

// OK when `bounds` is non-empty, finite (a trailing +Inf is allowed and
// dropped by the registry) and strictly increasing.
absl::Status ValidateBuckets(const std::vector<double>& bounds);

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidMetricName(absl::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__".
bool IsValidLabelName(absl::string_view name);
bool IsValidUtf8(absl::string_view text);

class FamilyBase {
 public:
  virtual ~FamilyBase() = default;
  virtual FamilySnapshot Collect() const = 0;
  const std::string& name() const { return name_; }

 protected:
  FamilyBase(std::string name, std::string help, MetricType type,
             std::vector<std::string> label_names)
      : name_(std::move(name)),
        help_(std::move(help)),
        type_(type),
        label_names_(std::move(label_names)) {}

  FamilySnapshot EmptySnapshot() const {
    return FamilySnapshot{name_, help_, type_, label_names_, {}};
  }

  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
};

// The metrics of one name, one per distinct set of label values.
template <typename T>
class Family final : public FamilyBase {
  static_assert(std::is_same_v<T, Counter> || std::is_same_v<T, Gauge> ||
                std::is_same_v<T, Histogram>);

 public:
  Family(std::string name, std::string help, MetricType type,
         std::vector<std::string> label_names, std::vector<double> buckets)
      : FamilyBase(std::move(name), std::move(help), type,
                   std::move(label_names)),
        buckets_(std::move(buckets)) {}

  // The metric for these label values (in label-name order), created on first
  // use. The pointer is never null on OK and stays valid for the registry's
  // lifetime. INVALID_ARGUMENT for the wrong number of values or a value that
  // is not UTF-8.
  absl::StatusOr<T*> Add(const std::vector<std::string>& label_values) {
    if (label_values.size() != label_names_.size()) {
      return absl::InvalidArgumentError(
          "metric " + name_ + " has " + std::to_string(label_names_.size()) +
          " labels, got " + std::to_string(label_values.size()) + " values");
    }
    for (const std::string& value : label_values) {
      if (!IsValidUtf8(value)) {
        return absl::InvalidArgumentError("label value for metric " + name_ +
                                          " is not valid UTF-8");
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = metrics_.find(label_values);
    if (it != metrics_.end()) return it->second.get();
    std::unique_ptr<T> metric;
    if constexpr (std::is_same_v<T, Histogram>) {
      metric = std::make_unique<T>(buckets_);
    } else {
      metric = std::make_unique<T>();
    }
    T* raw = metric.get();
    metrics_.emplace(label_values, std::move(metric));
    return raw;
  }

  // The number of label sets (series) created so far.
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return metrics_.size();
  }

  const std::vector<std::string>& label_names() const { return label_names_; }

  FamilySnapshot Collect() const override {
    FamilySnapshot snapshot = EmptySnapshot();
    std::lock_guard<std::mutex> lock(mu_);
    snapshot.metrics.reserve(metrics_.size());
    for (const auto& [labels, metric] : metrics_) {  // std::map: sorted
      MetricSnapshot& out = snapshot.metrics.emplace_back();
      out.label_values = labels;
      if constexpr (std::is_same_v<T, Histogram>) {
        out.histogram = metric->Snapshot();
      } else {
        out.value = metric->Value();
      }
    }
    return snapshot;
  }

 private:
  const std::vector<double> buckets_;  // histograms only
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> metrics_
      ABSL_GUARDED_BY(mu_);
};

// One sample of a callback family.
struct CallbackSample {
  std::vector<std::string> label_values;
  double value = 0;
};
// Evaluated at every scrape, on the scraping thread. Must be thread-safe and
// quick. Samples with the wrong number of label values or non-UTF-8 values
// are dropped; an empty result leaves the family out of the scrape.
using CallbackFunction = std::function<std::vector<CallbackSample>()>;

class Registry final {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // INVALID_ARGUMENT for a bad metric or label name (or, for histograms, bad
  // buckets or a label named "le"); ALREADY_EXISTS when the name, or a sample
  // name it would produce (a histogram's _bucket/_sum/_count), is taken.
  absl::StatusOr<Family<Counter>*> AddCounterFamily(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names);
  absl::StatusOr<Family<Gauge>*> AddGaugeFamily(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names);
  absl::StatusOr<Family<Histogram>*> AddHistogramFamily(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names, std::vector<double> buckets);
  // A counter or gauge family whose samples `function` computes at scrape
  // time. Same errors; INVALID_ARGUMENT for kHistogram.
  absl::Status AddCallbackFamily(absl::string_view name, absl::string_view help,
                                 MetricType type,
                                 std::vector<std::string> label_names,
                                 CallbackFunction function);
  // A single unlabelled value; std::nullopt leaves it out of the scrape (e.g.
  // /proc unreadable).
  absl::Status AddCallbackValue(absl::string_view name, absl::string_view help,
                                MetricType type,
                                std::function<std::optional<double>()> value);

  // Every family, sorted by name; within a family, metrics sorted by label
  // values. Callback families that produced nothing are left out.
  std::vector<FamilySnapshot> Collect() const;

 private:
  absl::Status Reserve(absl::string_view name, MetricType type,
                       const std::vector<std::string>& label_names)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  template <typename T>
  absl::StatusOr<Family<T>*> AddFamily(absl::string_view name,
                                       absl::string_view help, MetricType type,
                                       std::vector<std::string> label_names,
                                       std::vector<double> buckets);

  mutable std::mutex mu_;
  // By family name, so Collect() is sorted.
  std::map<std::string, std::unique_ptr<FamilyBase>, std::less<>> families_
      ABSL_GUARDED_BY(mu_);
  // Every sample name in use (a histogram owns three).
  std::map<std::string, std::string, std::less<>> sample_names_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace compatd::metrics
