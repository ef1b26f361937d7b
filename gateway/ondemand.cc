#include "gateway/ondemand.h"

#include <algorithm>
#include <string_view>

namespace compatd::gateway {

namespace od = simdjson::ondemand;

simdjson::simdjson_result<od::document> Iterate(
    od::parser& parser, const simdjson::padded_string& json) {
  if (parser.max_depth() != kParserMaxDepth ||
      parser.capacity() < json.size()) {
    const size_t capacity =
        std::max({parser.capacity(), json.size(), size_t{64}});
    if (const auto error = parser.allocate(capacity, kParserMaxDepth); error) {
      return error;
    }
  }
  return parser.iterate(json);
}

simdjson::error_code SkipValue(simdjson::simdjson_result<od::value> result,
                               int depth) {
  od::value value;
  if (const auto error = std::move(result).get(value); error) return error;
  if (depth <= 0) return simdjson::DEPTH_ERROR;
  od::json_type type;
  if (const auto error = value.type().get(type); error) return error;
  switch (type) {
    case od::json_type::object: {
      od::object object;
      if (const auto error = value.get_object().get(object); error) {
        return error;
      }
      for (auto field : object) {
        std::string_view key;
        if (const auto error = field.unescaped_key().get(key); error) {
          return error;
        }
        if (const auto error = SkipValue(field.value(), depth - 1); error) {
          return error;
        }
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::array: {
      od::array array;
      if (const auto error = value.get_array().get(array); error) return error;
      for (auto element : array) {
        if (const auto error = SkipValue(std::move(element), depth - 1);
            error) {
          return error;
        }
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      // Stage 1 (Iterate) has checked the whole text's UTF-8 and that no
      // string holds a raw control character: only an escape can still be
      // wrong, and only get_string() reads escapes (into the parser's string
      // buffer). A string without a backslash is passed over as it is: in a
      // 10 KiB AdmissionReview the unescaping of skipped strings was a
      // twelfth of compatd's CPU per call (BENCHMARKS.md, issue 37).
      if (value.raw_json_token().find('\\') == std::string_view::npos) {
        od::raw_json_string raw;
        return value.get_raw_json_string().get(raw);
      }
      std::string_view text;
      return value.get_string().get(text);
    }
    case od::json_type::number: {
      od::number number;
      if (value.get_number().get(number) == simdjson::SUCCESS) {
        return simdjson::SUCCESS;
      }
      // 2^64 and beyond: valid JSON that simdjson 3.0 reads only as a double.
      double as_double = 0;
      return value.get_double().get(as_double);
    }
    case od::json_type::boolean: {
      bool flag = false;
      return value.get_bool().get(flag);
    }
    case od::json_type::null: {
      bool is_null = false;
      if (const auto error = value.is_null().get(is_null); error) return error;
      return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    }
  }
  return simdjson::TAPE_ERROR;
}

simdjson::error_code CheckEnd(od::document& document) {
  const char* location = nullptr;
  // Past the root value, simdjson reports OUT_OF_BOUNDS: nothing follows.
  if (document.current_location().get(location) == simdjson::OUT_OF_BOUNDS) {
    return simdjson::SUCCESS;
  }
  return simdjson::TRAILING_CONTENT;
}

}  // namespace compatd::gateway
