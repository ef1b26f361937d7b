#include "metrics/text_format.h"

#include "prometheus/text_serializer.h"

namespace compatd::metrics {

std::string SerializeText(
    const std::vector<::prometheus::MetricFamily>& families) {
  return ::prometheus::TextSerializer().Serialize(families);
}

}  // namespace compatd::metrics
