#include "fleet/prometheus_answer.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/valid_utf8.h"
#include "simdjson.h"

namespace compatd::fleet {
namespace {

constexpr size_t kMaxDepth = 16;
constexpr size_t kMaxLabelBytes = 256;
constexpr size_t kMaxQuoted = 300;

absl::Status Garbage(absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("Prometheus' answer is not an instant vector: ", what));
}

// Prometheus' text in a message that is logged and reaches ListClients'
// view.note (a proto3 string): cut, and on one printable line of valid UTF-8
// (an error answer's newlines, ESC or invalid bytes cannot forge log lines or
// break a strict client's decoder).
std::string Quote(std::string_view text) {
  return base::PrintableText(
      absl::string_view(text.data(), std::min(text.size(), kMaxQuoted)));
}

bool PrintableAscii(std::string_view text) {
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

absl::StatusOr<VectorSample> ReadSample(simdjson::dom::element element,
                                        const std::vector<std::string>& labels,
                                        size_t index) {
  const std::string where = absl::StrCat("data.result[", index, "]");
  simdjson::dom::object sample;
  if (element.get_object().get(sample) != simdjson::SUCCESS) {
    return Garbage(absl::StrCat(where, " is not an object"));
  }
  simdjson::dom::object metric;
  if (sample["metric"].get_object().get(metric) != simdjson::SUCCESS) {
    return Garbage(absl::StrCat(where, ".metric is missing or not an object"));
  }
  VectorSample out;
  for (const std::string& name : labels) {
    std::string_view value;
    if (metric[name].get_string().get(value) != simdjson::SUCCESS) {
      return Garbage(
          absl::StrCat(where, ".metric has no string label \"", name, "\""));
    }
    if (value.empty() || value.size() > kMaxLabelBytes ||
        !PrintableAscii(value)) {
      return Garbage(absl::StrCat(
          where, ".metric.", name, " = \"", Quote(value),
          "\": a label value must be 1..256 bytes of printable ASCII"));
    }
    out.labels.emplace_back(value);
  }
  simdjson::dom::array pair;
  if (sample["value"].get_array().get(pair) != simdjson::SUCCESS ||
      pair.size() != 2) {
    return Garbage(
        absl::StrCat(where, ".value is not a [timestamp, \"value\"] pair"));
  }
  double timestamp = 0;
  std::string_view text;
  if (pair.at(0).get_double().get(timestamp) != simdjson::SUCCESS ||
      pair.at(1).get_string().get(text) != simdjson::SUCCESS) {
    return Garbage(
        absl::StrCat(where, ".value is not a [timestamp, \"value\"] pair"));
  }
  if (!absl::SimpleAtod(absl::string_view(text.data(), text.size()),
                        &out.value) ||
      !std::isfinite(out.value)) {
    return Garbage(absl::StrCat(where, ".value[1] = \"", Quote(text),
                                "\" is not a finite number"));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<VectorSample>> ParseInstantVector(
    absl::string_view absl_body, const std::vector<std::string>& labels,
    size_t max_series) {
  const std::string_view body(absl_body.data(), absl_body.size());
  simdjson::dom::parser parser;
  if (parser.allocate(std::max<size_t>(body.size(), 64), kMaxDepth) !=
      simdjson::SUCCESS) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate a JSON parser for ", body.size(), " bytes"));
  }
  const simdjson::padded_string padded(body.data(), body.size());
  simdjson::dom::element root;
  if (simdjson::error_code error = parser.parse(padded).get(root);
      error != simdjson::SUCCESS) {
    return Garbage(absl::StrCat("not JSON (", simdjson::error_message(error),
                                "): ", Quote(body)));
  }
  simdjson::dom::object top;
  if (root.get_object().get(top) != simdjson::SUCCESS) {
    return Garbage(absl::StrCat("not a JSON object: ", Quote(body)));
  }
  std::string_view status;
  if (top["status"].get_string().get(status) != simdjson::SUCCESS) {
    return Garbage(absl::StrCat("no \"status\": ", Quote(body)));
  }
  if (status == "error") {
    std::string_view type = "?", error = "?";
    // Either may be missing: "?" then.
    simdjson::error_code ignored = top["errorType"].get_string().get(type);
    ignored = top["error"].get_string().get(error);
    (void)ignored;
    return absl::FailedPreconditionError(
        absl::StrCat("Prometheus answered ", Quote(type), ": ", Quote(error)));
  }
  if (status != "success") {
    return Garbage(absl::StrCat("status \"", Quote(status), "\""));
  }
  simdjson::dom::object data;
  if (top["data"].get_object().get(data) != simdjson::SUCCESS) {
    return Garbage("no \"data\" object");
  }
  std::string_view type;
  if (data["resultType"].get_string().get(type) != simdjson::SUCCESS) {
    return Garbage("no data.resultType");
  }
  if (type != "vector") {
    return Garbage(absl::StrCat("data.resultType is \"", Quote(type),
                                "\", not \"vector\""));
  }
  simdjson::dom::array result;
  if (data["result"].get_array().get(result) != simdjson::SUCCESS) {
    return Garbage("data.result is missing or not an array");
  }
  if (result.size() > max_series) {
    return absl::ResourceExhaustedError(
        absl::StrCat("Prometheus answered ", result.size(), " series; at most ",
                     max_series, " are read (--prometheus-max-series)"));
  }
  std::vector<VectorSample> samples;
  samples.reserve(result.size());
  size_t index = 0;
  for (simdjson::dom::element element : result) {
    absl::StatusOr<VectorSample> sample = ReadSample(element, labels, index);
    if (!sample.ok()) return sample.status();
    samples.push_back(*std::move(sample));
    ++index;
  }
  return samples;
}

}  // namespace compatd::fleet
