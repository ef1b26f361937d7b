#include "metrics/registry.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace compatd::metrics {
namespace {

// Adds `amount` to an atomic double (a CAS loop: std::atomic<double> has no
// fetch_add before C++20's library support, which libstdc++ 12 implements the
// same way).
void AtomicAdd(std::atomic<double>& target, double amount) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + amount,
                                       std::memory_order_relaxed)) {
  }
}

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A callback family: its samples are computed at scrape time.
class CallbackFamily final : public FamilyBase {
 public:
  CallbackFamily(std::string name, std::string help, MetricType type,
                 std::vector<std::string> label_names,
                 CallbackFunction function)
      : FamilyBase(std::move(name), std::move(help), type,
                   std::move(label_names)),
        function_(std::move(function)) {}

  FamilySnapshot Collect() const override {
    FamilySnapshot snapshot = EmptySnapshot();
    std::vector<CallbackSample> samples = function_();
    for (CallbackSample& sample : samples) {
      if (sample.label_values.size() != label_names_.size()) continue;
      if (!std::all_of(sample.label_values.begin(), sample.label_values.end(),
                       [](const std::string& v) { return IsValidUtf8(v); })) {
        continue;
      }
      snapshot.metrics.push_back(
          MetricSnapshot{std::move(sample.label_values), sample.value, {}});
    }
    std::sort(snapshot.metrics.begin(), snapshot.metrics.end(),
              [](const MetricSnapshot& a, const MetricSnapshot& b) {
                return a.label_values < b.label_values;
              });
    // Two samples with the same labels would be a duplicate series, which
    // Prometheus rejects: keep the first.
    snapshot.metrics.erase(
        std::unique(snapshot.metrics.begin(), snapshot.metrics.end(),
                    [](const MetricSnapshot& a, const MetricSnapshot& b) {
                      return a.label_values == b.label_values;
                    }),
        snapshot.metrics.end());
    return snapshot;
  }

 private:
  const CallbackFunction function_;
};

}  // namespace

absl::string_view MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

void Counter::Increment(double amount) {
  if (!(amount > 0)) return;  // negative, zero and NaN
  if (amount == std::floor(amount) && amount < 9007199254740992.0) {
    whole_.fetch_add(static_cast<uint64_t>(amount), std::memory_order_relaxed);
    return;
  }
  AtomicAdd(fraction_, amount);
}

double Counter::Value() const {
  return static_cast<double>(whole_.load(std::memory_order_relaxed)) +
         fraction_.load(std::memory_order_relaxed);
}

void Gauge::Increment(double amount) { AtomicAdd(value_, amount); }

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

HistogramSnapshot Histogram::Snapshot() const {
  HistogramSnapshot snapshot;
  snapshot.upper_bounds = upper_bounds_;
  snapshot.cumulative_counts.resize(upper_bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    snapshot.cumulative_counts[i] = total;
  }
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
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

bool IsValidMetricName(absl::string_view name) {
  if (name.empty()) return false;
  if (!IsNameStart(name[0]) && name[0] != ':') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return IsNameStart(c) || IsDigit(c) || c == ':';
  });
}

bool IsValidLabelName(absl::string_view name) {
  if (name.empty() || !IsNameStart(name[0])) return false;
  if (absl::StartsWith(name, "__")) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return IsNameStart(c) || IsDigit(c); });
}

bool IsValidUtf8(absl::string_view text) {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length;
    uint32_t code_point;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      length = 2;
      code_point = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3;
      code_point = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      length = 4;
      code_point = c & 0x07;
    } else {
      return false;
    }
    if (i + length > n) return false;
    for (size_t k = 1; k < length; ++k) {
      const unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code_point = (code_point << 6) | (next & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid.
    static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < kMinForLength[length] || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

absl::Status Registry::Reserve(absl::string_view name, MetricType type,
                               const std::vector<std::string>& label_names) {
  if (!IsValidMetricName(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metric name \"", name, "\": expected [a-zA-Z_:][a-zA-Z0-9_:]*"));
  }
  std::vector<std::string> seen;
  for (const std::string& label : label_names) {
    if (!IsValidLabelName(label)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "label name \"", label, "\" of metric ", name,
          ": expected [a-zA-Z_][a-zA-Z0-9_]* not starting with \"__\""));
    }
    if (type == MetricType::kHistogram && label == "le") {
      return absl::InvalidArgumentError(absl::StrCat(
          "histogram ", name, " may not have a label named \"le\""));
    }
    if (std::find(seen.begin(), seen.end(), label) != seen.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("label \"", label, "\" repeated in metric ", name));
    }
    seen.push_back(label);
  }
  std::vector<std::string> samples = {std::string(name)};
  if (type == MetricType::kHistogram) {
    samples.push_back(absl::StrCat(name, "_bucket"));
    samples.push_back(absl::StrCat(name, "_sum"));
    samples.push_back(absl::StrCat(name, "_count"));
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
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<Family<T>*> Registry::AddFamily(
    absl::string_view name, absl::string_view help, MetricType type,
    std::vector<std::string> label_names, std::vector<double> buckets) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!IsValidUtf8(help)) {
    return absl::InvalidArgumentError(
        absl::StrCat("help of metric ", name, " is not valid UTF-8"));
  }
  absl::Status reserved = Reserve(name, type, label_names);
  if (!reserved.ok()) return reserved;
  auto family =
      std::make_unique<Family<T>>(std::string(name), std::string(help), type,
                                  std::move(label_names), std::move(buckets));
  Family<T>* raw = family.get();
  families_.emplace(std::string(name), std::move(family));
  return raw;
}

absl::StatusOr<Family<Counter>*> Registry::AddCounterFamily(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  return AddFamily<Counter>(name, help, MetricType::kCounter,
                            std::move(label_names), {});
}

absl::StatusOr<Family<Gauge>*> Registry::AddGaugeFamily(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  return AddFamily<Gauge>(name, help, MetricType::kGauge,
                          std::move(label_names), {});
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
  return AddFamily<Histogram>(name, help, MetricType::kHistogram,
                              std::move(label_names), std::move(buckets));
}

absl::Status Registry::AddCallbackFamily(absl::string_view name,
                                         absl::string_view help,
                                         MetricType type,
                                         std::vector<std::string> label_names,
                                         CallbackFunction function) {
  if (type == MetricType::kHistogram) {
    return absl::InvalidArgumentError(absl::StrCat(
        "callback metric ", name, ": expected a counter or a gauge"));
  }
  if (function == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("callback metric ", name, ": no function"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!IsValidUtf8(help)) {
    return absl::InvalidArgumentError(
        absl::StrCat("help of metric ", name, " is not valid UTF-8"));
  }
  absl::Status reserved = Reserve(name, type, label_names);
  if (!reserved.ok()) return reserved;
  families_.emplace(std::string(name),
                    std::make_unique<CallbackFamily>(
                        std::string(name), std::string(help), type,
                        std::move(label_names), std::move(function)));
  return absl::OkStatus();
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

std::vector<FamilySnapshot> Registry::Collect() const {
  std::vector<const FamilyBase*> families;
  {
    std::lock_guard<std::mutex> lock(mu_);
    families.reserve(families_.size());
    for (const auto& [name, family] : families_)
      families.push_back(family.get());
  }
  // Families are never removed, so the pointers stay valid outside the lock;
  // callbacks run without the registry lock held.
  std::vector<FamilySnapshot> snapshots;
  snapshots.reserve(families.size());
  for (const FamilyBase* family : families) {
    FamilySnapshot snapshot = family->Collect();
    if (snapshot.metrics.empty() &&
        dynamic_cast<const CallbackFamily*>(family)) {
      continue;
    }
    snapshots.push_back(std::move(snapshot));
  }
  return snapshots;
}

}  // namespace compatd::metrics
