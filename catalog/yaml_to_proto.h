#pragma once

// Strict YAML (and so JSON) -> protobuf message, driven by the message's
// Descriptor: the schema is written once, in the .proto, and this walker
// enforces it. Used by the catalog loader (catalog/catalog_loader.cc).
//
//   - A mapping key must be a field's json_name (lowerCamel: binaryVersion,
//     versionedSpecs); anything else is an error naming the accepted keys.
//   - Duplicate keys in one mapping are errors (YAML parsers pass both on).
//   - Scalars are typed by the field: bool takes exactly true/True/TRUE/false/
//     False/FALSE unquoted (no YAML 1.1 yes/no/on/off); integers take a
//     decimal literal in range; strings take any scalar as written (`1.30`
//     stays "1.30"); enums take a value name.
//   - Repeated fields need sequences, map fields mappings, messages mappings.
//   - A YAML null (`~`, `null`, nothing) means "absent", as in protobuf JSON.
//
// It never stops at the first problem: every error is appended, the rest of
// the document is still read, and the value in error is left unset. YAML
// aliases (*name) are rejected (a catalog spells its values out; expanding
// them would let a small file describe a huge catalog). It never throws.

#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "catalog/catalog_loader.h"
#include "google/protobuf/message.h"

namespace compatd::catalog {

// Where each part of a message filled by YamlToProto was written in the YAML
// text: 1-based lines, 0 when the part was not in the text. Keyed by the
// address of the (sub)message, so it is valid as long as the message tree is
// alive and no repeated field of it is modified.
class SourceLines final {
 public:
  // The line of the mapping the message was read from.
  int MessageLine(const google::protobuf::Message& message) const;
  // The line of the key of field `field_number` of `message` (0: key absent).
  int FieldLine(const google::protobuf::Message& message,
                int field_number) const;
  // The line of element `index` of repeated field `field_number`.
  int ElementLine(const google::protobuf::Message& message, int field_number,
                  int index) const;
  // The line of key `key` of map field `field_number`.
  int MapKeyLine(const google::protobuf::Message& message, int field_number,
                 absl::string_view key) const;

  void SetMessageLine(const google::protobuf::Message& message, int line);
  void SetFieldLine(const google::protobuf::Message& message, int field_number,
                    int index, int line);
  void SetMapKeyLine(const google::protobuf::Message& message, int field_number,
                     absl::string_view key, int line);

 private:
  absl::flat_hash_map<const void*, int> message_lines_;
  // (message, field number, element index or -1 for the key) -> line.
  absl::flat_hash_map<std::tuple<const void*, int, int>, int> field_lines_;
  absl::flat_hash_map<std::tuple<const void*, int, std::string>, int>
      map_key_lines_;
};

// Parses `text` (one YAML document; JSON is YAML too) into `message`
// (expected empty). Errors go to `errors` with their line; `lines` records
// where everything came from. Returns true when the document's top level was a
// mapping, so that `message` holds everything that could be read (there may
// still be errors); false when the text is not YAML (then the parser's error
// is the only one), is empty, holds more than one document, or is not a
// mapping.
bool YamlToProto(absl::string_view text, google::protobuf::Message& message,
                 SourceLines& lines, std::vector<CatalogError>& errors);

// The number of lines of `text` as YAML counts them (and so every error line
// of YamlToProto): a line ends at LF, CR, CR LF, and the UTF-8 of NEL (U+0085),
// LS (U+2028) and PS (U+2029); a last line without a break counts. "" has 0.
int YamlLineCount(absl::string_view text);

}  // namespace compatd::catalog
