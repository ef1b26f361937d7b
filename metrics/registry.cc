#include "metrics/registry.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/valid_utf8.h"
#include "prometheus/check_names.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_type.h"

namespace compatd::metrics {
namespace {

bool IsUtf8(absl::string_view text) { return base::ValidUtf8(text) == text; }

::prometheus::MetricType LibraryType(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return ::prometheus::MetricType::Counter;
    case MetricType::kGauge:
      return ::prometheus::MetricType::Gauge;
    case MetricType::kHistogram:
      return ::prometheus::MetricType::Histogram;
  }
  return ::prometheus::MetricType::Untyped;
}

// The library writes HELP as given; the text format wants \ and newline
// escaped (label values it escapes itself).
std::string EscapeHelp(absl::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The exception boundary: what the library throws becomes a status.
absl::Status LibraryError(absl::string_view name, const std::exception& e) {
  return absl::InvalidArgumentError(
      absl::StrCat("metric ", name, ": prometheus-cpp refused it: ", e.what()));
}

// A family whose samples are computed at scrape time.
class CallbackFamily final : public ::prometheus::Collectable {
 public:
  CallbackFamily(FamilyDescription description, CallbackFunction function)
      : description_(std::move(description)), function_(std::move(function)) {}

  std::vector<::prometheus::MetricFamily> Collect() const override {
    ::prometheus::MetricFamily family;
    family.name = description_.name;
    family.help = description_.help;
    family.type = LibraryType(description_.type);
    const std::vector<std::string>& names = description_.label_names;
    for (CallbackSample& sample : function_()) {
      if (sample.label_values.size() != names.size() ||
          !std::all_of(sample.label_values.begin(), sample.label_values.end(),
                       IsUtf8)) {
        continue;
      }
      ::prometheus::ClientMetric& metric = family.metric.emplace_back();
      for (size_t i = 0; i < names.size(); ++i) {
        metric.label.push_back({names[i], std::move(sample.label_values[i])});
      }
      if (description_.type == MetricType::kCounter) {
        metric.counter.value = sample.value;
      } else {
        metric.gauge.value = sample.value;
      }
    }
    if (family.metric.empty()) return {};
    return {std::move(family)};
  }

 private:
  const FamilyDescription description_;
  const CallbackFunction function_;
};

// Label values in the family's order, for sorting series.
bool LabelValuesLess(const ::prometheus::ClientMetric& a,
                     const ::prometheus::ClientMetric& b) {
  return std::lexicographical_compare(
      a.label.begin(), a.label.end(), b.label.begin(), b.label.end(),
      [](const auto& x, const auto& y) { return x.value < y.value; });
}
bool SameLabelValues(const ::prometheus::ClientMetric& a,
                     const ::prometheus::ClientMetric& b) {
  return std::equal(
      a.label.begin(), a.label.end(), b.label.begin(), b.label.end(),
      [](const auto& x, const auto& y) { return x.value == y.value; });
}

}  // namespace

template <typename T>
absl::StatusOr<T*> Family<T>::Add(
    const std::vector<std::string>& label_values) {
  if (label_values.size() != label_names_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric ", name_, " has ", label_names_.size(),
                     " labels, got ", label_values.size(), " values"));
  }
  for (const std::string& value : label_values) {
    if (!IsUtf8(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("label value for metric ", name_, " is not UTF-8"));
    }
  }
  if constexpr (std::is_same_v<T, Histogram>) {
    return store_->Add(label_values);
  } else {
    ::prometheus::Labels labels;
    for (size_t i = 0; i < label_names_.size(); ++i) {
      labels.emplace(label_names_[i], label_values[i]);
    }
    try {
      return &store_->Add(labels);
    } catch (const std::exception& e) {
      return LibraryError(name_, e);
    }
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

Registry::Registry()
    : library_(::prometheus::Registry::InsertBehavior::Throw) {}
Registry::~Registry() = default;

absl::Status Registry::Reserve(absl::string_view name, absl::string_view help,
                               MetricType type,
                               const std::vector<std::string>& label_names) {
  if (!::prometheus::CheckMetricName(std::string(name))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metric name \"", name,
        "\": expected [a-zA-Z_:][a-zA-Z0-9_:]* not starting with \"__\""));
  }
  if (!IsUtf8(help)) {
    return absl::InvalidArgumentError(
        absl::StrCat("help of metric ", name, " is not UTF-8"));
  }
  for (size_t i = 0; i < label_names.size(); ++i) {
    const std::string& label = label_names[i];
    if (!::prometheus::CheckLabelName(label)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "label name \"", label, "\" of metric ", name,
          ": expected [a-zA-Z_][a-zA-Z0-9_]* not starting with \"__\""));
    }
    if (type == MetricType::kHistogram && label == "le") {
      return absl::InvalidArgumentError(absl::StrCat(
          "histogram ", name, " may not have a label named \"le\""));
    }
    if (std::find(label_names.begin(), label_names.begin() + i, label) !=
        label_names.begin() + i) {
      return absl::InvalidArgumentError(
          absl::StrCat("label \"", label, "\" repeated in metric ", name));
    }
  }
  std::vector<std::string> samples = {std::string(name)};
  if (type == MetricType::kHistogram) {
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      samples.push_back(absl::StrCat(name, suffix));
    }
  }
  for (const std::string& sample : samples) {
    auto it = sample_names_.find(sample);
    if (it != sample_names_.end()) {
      return absl::AlreadyExistsError(absl::StrCat(
          "metric name ", sample, " is already used by metric ", it->second));
    }
  }
  for (const std::string& sample : samples) {
    sample_names_.emplace(sample, std::string(name));
  }
  declared_.emplace(std::string(name),
                    Declared{EscapeHelp(help), type, label_names});
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<Family<T>*> Registry::AddLibraryFamily(
    absl::string_view name, absl::string_view help, MetricType type,
    std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock(mu_);
  COMPATD_RETURN_IF_ERROR(Reserve(name, help, type, label_names));
  ::prometheus::Family<T>* store = nullptr;
  try {
    const std::string& escaped_help = declared_.find(name)->second.help;
    if constexpr (std::is_same_v<T, Counter>) {
      store = &::prometheus::BuildCounter()
                   .Name(std::string(name))
                   .Help(escaped_help)
                   .Register(library_);
    } else {
      store = &::prometheus::BuildGauge()
                   .Name(std::string(name))
                   .Help(escaped_help)
                   .Register(library_);
    }
  } catch (const std::exception& e) {
    sample_names_.erase(sample_names_.find(name));
    declared_.erase(declared_.find(name));
    return LibraryError(name, e);
  }
  auto family = std::make_unique<Family<T>>(store, std::string(name),
                                            std::move(label_names));
  Family<T>* raw = family.get();
  if constexpr (std::is_same_v<T, Counter>) {
    counters_.push_back(std::move(family));
  } else {
    gauges_.push_back(std::move(family));
  }
  return raw;
}

absl::StatusOr<Family<Counter>*> Registry::AddCounterFamily(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  return AddLibraryFamily<Counter>(name, help, MetricType::kCounter,
                                   std::move(label_names));
}

absl::StatusOr<Family<Gauge>*> Registry::AddGaugeFamily(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  return AddLibraryFamily<Gauge>(name, help, MetricType::kGauge,
                                 std::move(label_names));
}

absl::StatusOr<Family<Histogram>*> Registry::AddHistogramFamily(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names, std::vector<double> buckets) {
  absl::Status valid = ValidateBuckets(buckets);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric ", name, ": ", valid.message()));
  }
  if (std::isinf(buckets.back())) buckets.pop_back();  // +Inf is implicit
  std::lock_guard<std::mutex> lock(mu_);
  COMPATD_RETURN_IF_ERROR(
      Reserve(name, help, MetricType::kHistogram, label_names));
  auto store = std::make_shared<HistogramFamily>(
      std::string(name), declared_.find(name)->second.help, label_names,
      std::move(buckets));
  auto family = std::make_unique<Family<Histogram>>(
      store.get(), std::string(name), std::move(label_names));
  Family<Histogram>* raw = family.get();
  collectables_.push_back(std::move(store));
  histograms_.push_back(std::move(family));
  return raw;
}

absl::Status Registry::AddCollectable(
    std::vector<FamilyDescription> families,
    std::shared_ptr<const ::prometheus::Collectable> collectable) {
  if (collectable == nullptr) {
    return absl::InvalidArgumentError("metrics collectable: none given");
  }
  std::lock_guard<std::mutex> lock(mu_);
  // All or none: a failure releases the names reserved before it (a
  // description repeated within `families` fails as taken).
  for (size_t i = 0; i < families.size(); ++i) {
    const FamilyDescription& family = families[i];
    absl::Status reserved =
        family.type == MetricType::kHistogram
            ? absl::InvalidArgumentError(absl::StrCat(
                  "metric ", family.name, ": expected a counter or a gauge"))
            : Reserve(family.name, family.help, family.type,
                      family.label_names);
    if (!reserved.ok()) {
      for (size_t j = 0; j < i; ++j) {
        sample_names_.erase(families[j].name);
        declared_.erase(families[j].name);
      }
      return reserved;
    }
  }
  collectables_.push_back(std::move(collectable));
  return absl::OkStatus();
}

absl::Status Registry::AddCallbackFamily(absl::string_view name,
                                         absl::string_view help,
                                         MetricType type,
                                         std::vector<std::string> label_names,
                                         CallbackFunction function) {
  if (function == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("callback metric ", name, ": no function"));
  }
  FamilyDescription description{std::string(name), std::string(help), type,
                                std::move(label_names)};
  auto collectable =
      std::make_shared<CallbackFamily>(description, std::move(function));
  return AddCollectable({std::move(description)}, std::move(collectable));
}

absl::Status Registry::AddCallbackValue(
    absl::string_view name, absl::string_view help, MetricType type,
    std::function<std::optional<double>()> value) {
  if (value == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("callback metric ", name, ": no function"));
  }
  return AddCallbackFamily(
      name, help, type, {},
      [value = std::move(value)]() -> std::vector<CallbackSample> {
        std::optional<double> v = value();
        if (!v.has_value()) return {};
        return {CallbackSample{{}, *v}};
      });
}

bool Registry::Normalize(::prometheus::MetricFamily& family) const {
  auto declared = declared_.find(family.name);
  if (declared == declared_.end()) return false;
  const Declared& d = declared->second;
  family.help = d.help;
  family.type = LibraryType(d.type);
  // Labels in the declared order (prometheus::Family writes them sorted by
  // name); a series without exactly the declared labels is dropped.
  std::vector<::prometheus::ClientMetric> kept;
  kept.reserve(family.metric.size());
  for (::prometheus::ClientMetric& metric : family.metric) {
    if (metric.label.size() != d.label_names.size()) continue;
    std::vector<::prometheus::ClientMetric::Label> ordered;
    ordered.reserve(d.label_names.size());
    for (const std::string& name : d.label_names) {
      auto it = std::find_if(metric.label.begin(), metric.label.end(),
                             [&](const auto& l) { return l.name == name; });
      if (it == metric.label.end()) break;
      ordered.push_back(std::move(*it));
    }
    if (ordered.size() != d.label_names.size()) continue;
    metric.label = std::move(ordered);
    kept.push_back(std::move(metric));
  }
  std::stable_sort(kept.begin(), kept.end(), LabelValuesLess);
  kept.erase(std::unique(kept.begin(), kept.end(), SameLabelValues),
             kept.end());
  family.metric = std::move(kept);
  return !family.metric.empty();
}

std::vector<::prometheus::MetricFamily> Registry::Collect() const {
  std::vector<std::shared_ptr<const ::prometheus::Collectable>> collectables;
  {
    std::lock_guard<std::mutex> lock(mu_);
    collectables = collectables_;
  }
  // Callbacks run without the registry's lock held.
  std::vector<::prometheus::MetricFamily> families = library_.Collect();
  for (const auto& collectable : collectables) {
    for (::prometheus::MetricFamily& family : collectable->Collect()) {
      families.push_back(std::move(family));
    }
  }
  std::vector<::prometheus::MetricFamily> out;
  out.reserve(families.size());
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (::prometheus::MetricFamily& family : families) {
      if (Normalize(family)) out.push_back(std::move(family));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace compatd::metrics
