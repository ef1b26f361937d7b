#pragma once

// compatd's metrics, on prometheus-cpp core (docs/decisions/metrics.md):
//
//   Registry registry;
//   COMPATD_ASSIGN_OR_RETURN(Family<Counter>* requests,
//       registry.AddCounterFamily("compatd_things_total", "Things done.",
//                                 {"kind"}));
//   COMPATD_ASSIGN_OR_RETURN(Counter* widgets, requests->Add({"widget"}));
//   widgets->Increment();  // hot path: prometheus::Counter, no lock
//
// Counters and gauges are prometheus::Counter and prometheus::Gauge in
// prometheus::Family'ies of a prometheus::Registry; histograms are compatd's
// lock-free Histogram (metrics/histogram.h) in a prometheus::Collectable. The
// library's TextSerializer writes the scrape (metrics/text_format.h).
//
// What this file adds, because the library lacks it:
// - A family's label names are fixed when it is created; values are given in
//   that order and written in that order (prometheus::Family takes any
//   std::map of labels per child and writes them sorted by name).
// - Errors are absl::Status: names and buckets are checked here (with the
//   library's CheckMetricName/CheckLabelName), and whatever the library still
//   throws is caught at this boundary.
// - Sample names are reserved: a histogram's _bucket, _sum and _count cannot
//   collide with another family (the library checks family names only).
// - Callback families, evaluated at scrape time, and any other Collectable
//   (process metrics) whose families are declared here.
// - A deterministic scrape: families sorted by name, series by label values,
//   families without series left out.
//
// Family::Add() returns a handle that stays valid for the registry's lifetime
// (metrics are never removed), so callers resolve their handles once, at
// startup, and only touch atomics afterwards.
//
// Thread-safety: everything is thread-safe.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "metrics/histogram.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"

namespace compatd::metrics {

using Counter = ::prometheus::Counter;
using Gauge = ::prometheus::Gauge;
// Histogram: metrics/histogram.h.

enum class MetricType { kCounter, kGauge, kHistogram };

// A family with fixed label names, over the family that stores its children
// (prometheus::Family<T> for counters and gauges, HistogramFamily for
// histograms). Created by Registry.
template <typename T>
class Family final {
  static_assert(std::is_same_v<T, Counter> || std::is_same_v<T, Gauge> ||
                std::is_same_v<T, Histogram>);

 public:
  using Store = std::conditional_t<std::is_same_v<T, Histogram>,
                                   HistogramFamily, ::prometheus::Family<T>>;

  Family(Store* store, std::string name, std::vector<std::string> label_names)
      : store_(store),
        name_(std::move(name)),
        label_names_(std::move(label_names)) {}
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  // The metric for these label values (in label-name order), created on first
  // use. Never null on OK; stays valid for the registry's lifetime.
  // INVALID_ARGUMENT for the wrong number of values or a value that is not
  // UTF-8.
  absl::StatusOr<T*> Add(const std::vector<std::string>& label_values);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

 private:
  Store* const store_;
  const std::string name_;
  const std::vector<std::string> label_names_;
};

extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

// One sample of a callback family.
struct CallbackSample {
  std::vector<std::string> label_values;
  double value = 0;
};
// Evaluated at every scrape, on the scraping thread. Must be thread-safe and
// quick. Samples with the wrong number of label values or non-UTF-8 values
// are dropped, as are repeats of a label set (the first is kept); an empty
// result leaves the family out of the scrape.
using CallbackFunction = std::function<std::vector<CallbackSample>()>;

// A family that a Collectable given to Registry::AddCollectable produces.
struct FamilyDescription {
  std::string name;
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<std::string> label_names;
};

class Registry final {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // INVALID_ARGUMENT for a bad metric or label name, a help that is not
  // UTF-8 (or, for histograms, bad buckets or a label named "le");
  // ALREADY_EXISTS when the name, or a sample name it would produce (a
  // histogram's _bucket/_sum/_count), is taken.
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
  // A Collectable producing the counter or gauge families `families`
  // describes (each checked and reserved as above, all or none). Families it
  // produces that are not described are dropped; the help and type written
  // are the description's.
  absl::Status AddCollectable(
      std::vector<FamilyDescription> families,
      std::shared_ptr<const ::prometheus::Collectable> collectable);

  // Every family with at least one series, sorted by name; within a family,
  // series sorted by label values, labels in the family's label-name order.
  std::vector<::prometheus::MetricFamily> Collect() const;

 private:
  struct Declared {
    std::string help;  // escaped for the text format
    MetricType type;
    std::vector<std::string> label_names;
  };

  absl::Status Reserve(absl::string_view name, absl::string_view help,
                       MetricType type,
                       const std::vector<std::string>& label_names)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  template <typename T>
  absl::StatusOr<Family<T>*> AddLibraryFamily(
      absl::string_view name, absl::string_view help, MetricType type,
      std::vector<std::string> label_names);
  // Puts `family` in the declared order; false when it is not one of ours or
  // has no series left.
  bool Normalize(::prometheus::MetricFamily& family) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable std::mutex mu_;
  // Counters and gauges (thread-safe itself).
  ::prometheus::Registry library_;
  // Histogram families, callback families and AddCollectable's.
  std::vector<std::shared_ptr<const ::prometheus::Collectable>> collectables_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Family<Counter>>> counters_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Family<Gauge>>> gauges_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Family<Histogram>>> histograms_
      ABSL_GUARDED_BY(mu_);
  // By family name.
  std::map<std::string, Declared, std::less<>> declared_ ABSL_GUARDED_BY(mu_);
  // Every sample name in use (a histogram owns three more) -> its family.
  std::map<std::string, std::string, std::less<>> sample_names_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace compatd::metrics
