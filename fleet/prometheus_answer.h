#pragma once

// Reading Prometheus' answer to an instant query (GET /api/v1/query) strictly
// and within bounds, with simdjson's DOM (every byte checked):
//
//   {"status":"success","data":{"resultType":"vector","result":[
//     {"metric":{"component":"kubelet","version":"1.33"},
//      "value":[1764230400.123,"1764230399.5"]}]}}
//
//   COMPATD_ASSIGN_OR_RETURN(std::vector<VectorSample> samples,
//       ParseInstantVector(body, {"component", "version"}, 10000));
//
// Prometheus' own errors ({"status":"error","errorType":"bad_data",
// "error":"..."}) are FAILED_PRECONDITION quoting them. Anything else that is
// not that shape is DATA_LOSS naming what was wrong: not JSON, nesting deeper
// than 16, another resultType, more than `max_series` samples, a sample
// without one of `labels` (other labels are ignored), a label value that is
// empty, longer than 256 bytes or not printable ASCII, a value that is not a
// finite number in a string.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace compatd::fleet {

struct VectorSample {
  std::vector<std::string> labels;  // in the order asked for
  double value = 0;
};

absl::StatusOr<std::vector<VectorSample>> ParseInstantVector(
    absl::string_view body, const std::vector<std::string>& labels,
    size_t max_series);

}  // namespace compatd::fleet
