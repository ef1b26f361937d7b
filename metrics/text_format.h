#pragma once

// The Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/), written by
// prometheus-cpp's TextSerializer:
//
//   # HELP compatd_catalog_reloads_total Catalog reload attempts by result.
//   # TYPE compatd_catalog_reloads_total counter
//   compatd_catalog_reloads_total{result="loaded"} 3
//   # HELP grpc_server_handling_seconds Histogram of response latency ...
//   # TYPE grpc_server_handling_seconds histogram
//   grpc_server_handling_seconds_count{grpc_method="CheckSkew"} 7
//   grpc_server_handling_seconds_sum{grpc_method="CheckSkew"} 0.0021
//   grpc_server_handling_seconds_bucket{grpc_method="CheckSkew",le="5e-05"} 1
//   ...
//   grpc_server_handling_seconds_bucket{grpc_method="CheckSkew",le="+Inf"} 7
//
// Families and series appear in the order given (Registry::Collect() sorts
// them). Values are written with 16 significant digits ("%.16g"), NaN as
// "Nan"; no timestamps. HELP is written as given (Registry escapes it).

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "prometheus/metric_family.h"

namespace compatd::metrics {

// The Content-Type of the format.
inline constexpr absl::string_view kTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

std::string SerializeText(
    const std::vector<::prometheus::MetricFamily>& families);

}  // namespace compatd::metrics
