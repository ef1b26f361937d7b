#pragma once

// A small YAML node tree with the line of every node, for the cluster profile's
// readers (libyaml events). Anchors and aliases are refused; documents are
// bounded by their text.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace compatd::cluster {

struct YamlEntry;

struct YamlNode {
  enum class Kind { kScalar, kMap, kSeq };
  Kind kind = Kind::kScalar;
  int line = 0;  // 1-based
  std::string scalar;
  bool quoted = false;   // a quoted scalar (never null, always a string)
  bool literal = false;  // a "|" block: its text starts on the next line
  // In input order. (Not a std::pair: a pair of the incomplete YamlNode is
  // ill-formed, and clang's libstdc++ checks say so.)
  std::vector<YamlEntry> map;
  std::vector<YamlNode> seq;

  // The value of `key` in a map, or nullptr.
  const YamlNode* Find(absl::string_view key) const;
  // "a map", "a list", "a string".
  const char* KindName() const;
};

// A key and its value in a map.
struct YamlEntry {
  YamlNode first;
  YamlNode second;
};

// Every document of `text`. INVALID_ARGUMENT "N: <libyaml's problem>" on bad
// YAML.
absl::StatusOr<std::vector<YamlNode>> ParseYamlDocuments(
    absl::string_view text);

}  // namespace compatd::cluster
