#include "metrics/text_format.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace compatd::metrics {
namespace {

// 2^53: every integer of smaller magnitude is exactly representable.
constexpr double kMaxExactInteger = 9007199254740992.0;

void AppendLabels(const std::vector<std::string>& names,
                  const std::vector<std::string>& values,
                  absl::string_view extra_name, absl::string_view extra_value,
                  std::string* out) {
  if (names.empty() && extra_name.empty()) return;
  out->push_back('{');
  bool first = true;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (!first) out->push_back(',');
    first = false;
    absl::StrAppend(out, names[i], "=\"");
    AppendEscapedLabelValue(values[i], out);
    out->push_back('"');
  }
  if (!extra_name.empty()) {
    if (!first) out->push_back(',');
    absl::StrAppend(out, extra_name, "=\"");
    AppendEscapedLabelValue(extra_value, out);
    out->push_back('"');
  }
  out->push_back('}');
}

void AppendSample(absl::string_view name, const std::vector<std::string>& names,
                  const std::vector<std::string>& values,
                  absl::string_view extra_name, absl::string_view extra_value,
                  double value, std::string* out) {
  out->append(name.data(), name.size());
  AppendLabels(names, values, extra_name, extra_value, out);
  out->push_back(' ');
  AppendDouble(value, out);
  out->push_back('\n');
}

}  // namespace

void AppendDouble(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
    return;
  }
  if (value == std::floor(value) && std::fabs(value) < kMaxExactInteger) {
    if (value == 0) {
      out->push_back('0');  // also for -0
      return;
    }
    absl::StrAppend(out, static_cast<int64_t>(value));
    return;
  }
  // The shortest round-trip digits, in scientific form: "d.ddde[+-]XX".
  char buffer[64];
  const std::to_chars_result result = std::to_chars(
      buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  const absl::string_view scientific(buffer, result.ptr - buffer);
  const size_t e = scientific.find('e');
  const int exponent = std::atoi(std::string(scientific.substr(e + 1)).c_str());
  if (exponent < -4 || exponent >= 21) {
    out->append(scientific.data(), scientific.size());
    return;
  }
  std::string digits;
  bool negative = false;
  for (char c : scientific.substr(0, e)) {
    if (c == '-') {
      negative = true;
    } else if (c != '.') {
      digits.push_back(c);
    }
  }
  if (negative) out->push_back('-');
  if (exponent < 0) {
    out->append("0.");
    out->append(static_cast<size_t>(-exponent - 1), '0');
    out->append(digits);
    return;
  }
  const size_t integer_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= integer_digits) {
    out->append(digits);
    out->append(integer_digits - digits.size(), '0');
    return;
  }
  out->append(digits, 0, integer_digits);
  out->push_back('.');
  out->append(digits, integer_digits, std::string::npos);
}

std::string FormatDouble(double value) {
  std::string out;
  AppendDouble(value, &out);
  return out;
}

void AppendEscapedLabelValue(absl::string_view value, std::string* out) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '"':
        out->append("\\\"");
        break;
      case '\n':
        out->append("\\n");
        break;
      default:
        out->push_back(c);
    }
  }
}

void AppendEscapedHelp(absl::string_view help, std::string* out) {
  for (char c : help) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      default:
        out->push_back(c);
    }
  }
}

std::string SerializeText(absl::Span<const FamilySnapshot> families) {
  std::string out;
  for (const FamilySnapshot& family : families) {
    absl::StrAppend(&out, "# HELP ", family.name, " ");
    AppendEscapedHelp(family.help, &out);
    absl::StrAppend(&out, "\n# TYPE ", family.name, " ",
                    MetricTypeName(family.type), "\n");
    for (const MetricSnapshot& metric : family.metrics) {
      if (family.type != MetricType::kHistogram) {
        AppendSample(family.name, family.label_names, metric.label_values, "",
                     "", metric.value, &out);
        continue;
      }
      const HistogramSnapshot& histogram = metric.histogram;
      const std::string bucket_name = absl::StrCat(family.name, "_bucket");
      for (size_t i = 0; i < histogram.upper_bounds.size() &&
                         i < histogram.cumulative_counts.size();
           ++i) {
        AppendSample(bucket_name, family.label_names, metric.label_values, "le",
                     FormatDouble(histogram.upper_bounds[i]),
                     static_cast<double>(histogram.cumulative_counts[i]), &out);
      }
      const double count =
          histogram.cumulative_counts.empty()
              ? 0
              : static_cast<double>(histogram.cumulative_counts.back());
      AppendSample(bucket_name, family.label_names, metric.label_values, "le",
                   "+Inf", count, &out);
      AppendSample(absl::StrCat(family.name, "_sum"), family.label_names,
                   metric.label_values, "", "", histogram.sum, &out);
      AppendSample(absl::StrCat(family.name, "_count"), family.label_names,
                   metric.label_values, "", "", count, &out);
    }
  }
  return out;
}

}  // namespace compatd::metrics
