#pragma once

// The Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/):
//
//   # HELP compatd_catalog_reloads_total Catalog reload attempts by result.
//   # TYPE compatd_catalog_reloads_total counter
//   compatd_catalog_reloads_total{result="loaded"} 3
//   # HELP grpc_server_handling_seconds Histogram of response latency ...
//   # TYPE grpc_server_handling_seconds histogram
//   grpc_server_handling_seconds_bucket{grpc_method="CheckSkew",le="5e-05"} 1
//   ...
//   grpc_server_handling_seconds_bucket{grpc_method="CheckSkew",le="+Inf"} 7
//   grpc_server_handling_seconds_sum{grpc_method="CheckSkew"} 0.0021
//   grpc_server_handling_seconds_count{grpc_method="CheckSkew"} 7
//
// Families appear in the order given (Registry::Collect() sorts them by
// name), metrics in their snapshot order (sorted by label values). No
// timestamps.

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "metrics/registry.h"

namespace compatd::metrics {

// The Content-Type of the format.
inline constexpr absl::string_view kTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

std::string SerializeText(absl::Span<const FamilySnapshot> families);

// "+Inf", "-Inf", "NaN"; integral values up to 2^53 in plain decimal
// ("1234567", "-3"); anything else in the shortest form that reads back to the
// same double, fixed notation for exponents -4..20 ("0.0001", "0.25") and
// scientific otherwise ("5e-05", "1.5e+21"), as Go's strconv 'g' does.
std::string FormatDouble(double value);
void AppendDouble(double value, std::string* out);

// Label values: \ -> \\, " -> \", newline -> \n.
void AppendEscapedLabelValue(absl::string_view value, std::string* out);
// HELP text: \ -> \\, newline -> \n.
void AppendEscapedHelp(absl::string_view help, std::string* out);

}  // namespace compatd::metrics
