#pragma once

// JSON manifests read through libyaml. kubectl reads a stream whose first
// non-blank byte is "{" with Go's encoding/json (apimachinery's
// YAMLOrJSONDecoder), and YAML's double-quoted scalars are JSON's strings with
// one difference: a \u escape of a UTF-16 surrogate. encoding/json joins a
// high and a low surrogate into one code point ("\ud83d\ude00" is U+1F600)
// and reads any other surrogate escape as U+FFFD; libyaml refuses them all
// ("found invalid Unicode character escape code"), so a valid JSON manifest
// would be a bad document.

#include <string>

#include "absl/strings/string_view.h"

namespace compatd::manifest {

// When `text` is JSON (its first non-blank byte is "{") and a string in it
// holds a surrogate escape, writes to `out` the same text with each pair
// spelled as one YAML \U escape ("\U0001F600") and each other surrogate escape
// as "\uFFFD", what encoding/json decodes them to, and returns true. Lines
// keep their numbers, and a pair's two saved bytes are written as blanks after
// the string's closing quote, so everything after a string keeps its column.
// Returns false (and leaves `out` alone) otherwise.
bool JoinJsonSurrogates(absl::string_view text, std::string* out);

}  // namespace compatd::manifest
