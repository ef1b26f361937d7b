#include "cluster/yaml_tree.h"

#include <yaml.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace compatd::cluster {
namespace {

constexpr int kMaxDepth = 64;

class Parser final {
 public:
  explicit Parser(absl::string_view text) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(
        &parser_, reinterpret_cast<const unsigned char*>(text.data()),
        text.size());
  }
  ~Parser() {
    if (have_event_) yaml_event_delete(&event_);
    yaml_parser_delete(&parser_);
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  absl::StatusOr<std::vector<YamlNode>> Documents() {
    std::vector<YamlNode> documents;
    while (true) {
      if (absl::Status s = Next(); !s.ok()) return s;
      switch (event_.type) {
        case YAML_STREAM_END_EVENT:
          return documents;
        case YAML_DOCUMENT_START_EVENT: {
          if (absl::Status s = Next(); !s.ok()) return s;
          if (event_.type == YAML_DOCUMENT_END_EVENT) break;
          YamlNode node;
          if (absl::Status s = Node(0, node); !s.ok()) return s;
          if (absl::Status s = Next(); !s.ok()) return s;  // document end
          documents.push_back(std::move(node));
          break;
        }
        default:
          break;
      }
    }
  }

 private:
  absl::Status Next() {
    if (have_event_) {
      yaml_event_delete(&event_);
      have_event_ = false;
    }
    if (!yaml_parser_parse(&parser_, &event_)) {
      return absl::InvalidArgumentError(absl::StrCat(
          parser_.problem_mark.line + 1, ": not valid YAML: ",
          parser_.problem != nullptr ? parser_.problem : "parse error"));
    }
    have_event_ = true;
    return absl::OkStatus();
  }

  // Reads the node whose first event is the current one.
  absl::Status Node(int depth, YamlNode& out) {
    if (depth > kMaxDepth) {
      return absl::InvalidArgumentError(absl::StrCat(event_.start_mark.line + 1,
                                                     ": nested deeper than ",
                                                     kMaxDepth, " levels"));
    }
    out.line = static_cast<int>(event_.start_mark.line) + 1;
    switch (event_.type) {
      case YAML_ALIAS_EVENT:
        return absl::InvalidArgumentError(
            absl::StrCat(out.line, ": YAML aliases are not accepted here"));
      case YAML_SCALAR_EVENT:
        out.kind = YamlNode::Kind::kScalar;
        out.scalar.assign(
            reinterpret_cast<const char*>(event_.data.scalar.value),
            event_.data.scalar.length);
        out.quoted = event_.data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        out.literal = event_.data.scalar.style == YAML_LITERAL_SCALAR_STYLE;
        return absl::OkStatus();
      case YAML_SEQUENCE_START_EVENT:
        out.kind = YamlNode::Kind::kSeq;
        while (true) {
          if (absl::Status s = Next(); !s.ok()) return s;
          if (event_.type == YAML_SEQUENCE_END_EVENT) return absl::OkStatus();
          YamlNode item;
          if (absl::Status s = Node(depth + 1, item); !s.ok()) return s;
          out.seq.push_back(std::move(item));
        }
      case YAML_MAPPING_START_EVENT:
        out.kind = YamlNode::Kind::kMap;
        while (true) {
          if (absl::Status s = Next(); !s.ok()) return s;
          if (event_.type == YAML_MAPPING_END_EVENT) return absl::OkStatus();
          YamlNode key;
          if (absl::Status s = Node(depth + 1, key); !s.ok()) return s;
          if (key.kind != YamlNode::Kind::kScalar) {
            return absl::InvalidArgumentError(
                absl::StrCat(key.line, ": a map key must be a string"));
          }
          for (const auto& [k, v] : out.map) {
            if (k.scalar == key.scalar) {
              return absl::InvalidArgumentError(
                  absl::StrCat(key.line, ": duplicate key \"", key.scalar,
                               "\" (first on line ", k.line, ")"));
            }
          }
          if (absl::Status s = Next(); !s.ok()) return s;
          YamlNode value;
          if (absl::Status s = Node(depth + 1, value); !s.ok()) return s;
          out.map.push_back(YamlEntry{std::move(key), std::move(value)});
        }
      default:
        return absl::InvalidArgumentError(
            absl::StrCat(out.line, ": unexpected YAML event"));
    }
  }

  yaml_parser_t parser_;
  yaml_event_t event_;
  bool have_event_ = false;
};

}  // namespace

const YamlNode* YamlNode::Find(absl::string_view key) const {
  for (const auto& [k, v] : map) {
    if (k.scalar == key) return &v;
  }
  return nullptr;
}

const char* YamlNode::KindName() const {
  switch (kind) {
    case Kind::kMap:
      return "a map";
    case Kind::kSeq:
      return "a list";
    case Kind::kScalar:
      break;
  }
  return "a string";
}

absl::StatusOr<std::vector<YamlNode>> ParseYamlDocuments(
    absl::string_view text) {
  Parser parser(text);
  return parser.Documents();
}

}  // namespace compatd::cluster
