#pragma once

// Go's string helpers that Kubernetes' flag parsing relies on, once, to the
// letter: strconv.ParseBool and strings.TrimSpace.

#include <optional>

#include "absl/strings/string_view.h"

namespace compatd::base {

// strconv.ParseBool: "1", "t", "T", "TRUE", "true", "True" -> true; "0", "f",
// "F", "FALSE", "false", "False" -> false; anything else -> nullopt.
std::optional<bool> ParseGoBool(absl::string_view text);

// strings.TrimSpace: strips leading and trailing Unicode white space (ASCII
// \t \n \v \f \r and space, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028,
// U+2029, U+202F, U+205F, U+3000) from UTF-8 text. Returns a part of `text`.
absl::string_view TrimGoSpace(absl::string_view text);

}  // namespace compatd::base
