#include "manifest/cel_fields.h"

#include <yaml.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "manifest/manifest_reader.h"

namespace compatd::manifest {
namespace {

// One level of the path to the current node.
struct Frame {
  bool mapping = false;
  std::string key;  // mapping: the key whose value comes next ("" before a key)
  bool expect_key = true;  // mapping: the next scalar is a key
  int index = -1;          // sequence: the current element
};

std::string JoinPath(const std::vector<Frame>& stack, size_t from) {
  std::string path;
  for (size_t i = from; i < stack.size(); ++i) {
    const Frame& f = stack[i];
    if (f.mapping) {
      if (!path.empty()) path += '.';
      path += f.key;
    } else {
      absl::StrAppend(&path, "[", f.index, "]");
    }
  }
  return path;
}

bool IsCelKey(absl::string_view key) {
  return key == "expression" || key == "messageExpression" ||
         key == "valueExpression" || key == "rule";
}

// Does `path` (relative to an object) hold CEL in `kind`?
bool IsCelPath(absl::string_view kind, absl::string_view path) {
  auto in_list = [&](absl::string_view prefix, absl::string_view suffix) {
    // prefix[<n>].suffix
    if (!absl::StartsWith(path, prefix) || !absl::EndsWith(path, suffix))
      return false;
    absl::string_view mid =
        path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
    if (mid.size() < 3 || mid.front() != '[' || mid.back() != '.') return false;
    mid = mid.substr(1, mid.size() - 3);
    return !mid.empty() &&
           mid.find_first_not_of("0123456789") == absl::string_view::npos;
  };
  if (kind == "ValidatingAdmissionPolicy") {
    return in_list("spec.validations", "expression") ||
           in_list("spec.validations", "messageExpression") ||
           in_list("spec.variables", "expression") ||
           in_list("spec.auditAnnotations", "valueExpression") ||
           in_list("spec.matchConditions", "expression");
  }
  if (kind == "MutatingAdmissionPolicy") {
    return in_list("spec.variables", "expression") ||
           in_list("spec.matchConditions", "expression") ||
           in_list("spec.mutations", "applyConfiguration.expression") ||
           in_list("spec.mutations", "jsonPatch.expression");
  }
  if (kind == "ValidatingWebhookConfiguration" ||
      kind == "MutatingWebhookConfiguration") {
    // webhooks[i].matchConditions[j].expression
    if (!absl::StartsWith(path, "webhooks[")) return false;
    const size_t dot = path.find("].matchConditions[");
    return dot != absl::string_view::npos &&
           absl::EndsWith(path, "].expression") &&
           path.find('.', dot + 18) == path.size() - 11;
  }
  if (kind == "CustomResourceDefinition") {
    const bool in_schema =
        (absl::StartsWith(path, "spec.versions[") &&
         absl::StrContains(path, "].schema.openAPIV3Schema.")) ||
        absl::StartsWith(path, "spec.validation.openAPIV3Schema.");
    if (!in_schema) return false;
    const size_t at = path.rfind("x-kubernetes-validations[");
    if (at == absl::string_view::npos) return false;
    absl::string_view tail = path.substr(at + 25);
    const size_t close = tail.find("].");
    if (close == absl::string_view::npos) return false;
    tail = tail.substr(close + 2);
    return tail == "rule" || tail == "messageExpression";
  }
  return false;
}

class Reader {
 public:
  explicit Reader(absl::string_view text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_) {
      yaml_parser_set_input_string(
          &parser_, reinterpret_cast<const unsigned char*>(text.data()),
          text.size());
    }
  }
  ~Reader() {
    if (ok_) yaml_parser_delete(&parser_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  std::vector<CelObject> Read() {
    std::vector<CelObject> out;
    if (!ok_) return out;
    for (;;) {
      yaml_event_t event;
      if (yaml_parser_parse(&parser_, &event) == 0)
        break;  // a syntax error ends the read
      const yaml_event_type_t type = event.type;
      Handle(event, out);
      yaml_event_delete(&event);
      if (type == YAML_STREAM_END_EVENT) break;
    }
    return out;
  }

 private:
  // A candidate seen in the current document: the path and the scalar.
  struct Seen {
    std::vector<Frame> stack;  // copy of the path (short: a few frames)
    std::string value;
    int line = 0;
    int column = 0;
    bool lines_map = true;
  };

  void Handle(const yaml_event_t& e, std::vector<CelObject>& out) {
    switch (e.type) {
      case YAML_DOCUMENT_START_EVENT:
        seen_.clear();
        objects_.clear();
        stack_.clear();
        too_deep_ = false;
        break;
      case YAML_DOCUMENT_END_EVENT:
        if (!too_deep_) Finish(out);
        break;
      case YAML_MAPPING_START_EVENT:
      case YAML_SEQUENCE_START_EVENT: {
        BeginValue();
        if (stack_.size() >= static_cast<size_t>(kMaxYamlDepth))
          too_deep_ = true;
        Frame f;
        f.mapping = e.type == YAML_MAPPING_START_EVENT;
        if (f.mapping) {
          // Where an object (the document, or a List's item) starts.
          objects_.push_back(
              {JoinPath(stack_, 0), static_cast<int>(e.start_mark.line) + 1});
        }
        stack_.push_back(std::move(f));
        break;
      }
      case YAML_MAPPING_END_EVENT:
      case YAML_SEQUENCE_END_EVENT:
        if (!stack_.empty()) stack_.pop_back();
        EndValue();
        break;
      case YAML_SCALAR_EVENT: {
        absl::string_view value(
            reinterpret_cast<const char*>(e.data.scalar.value),
            e.data.scalar.length);
        if (!stack_.empty() && stack_.back().mapping &&
            stack_.back().expect_key) {
          stack_.back().key = std::string(value);
          stack_.back().expect_key = false;
          break;
        }
        BeginValue();
        const std::string& key = stack_.empty() || !stack_.back().mapping
                                     ? empty_
                                     : stack_.back().key;
        if (IsCelKey(key) || key == "kind" || key == "apiVersion" ||
            key == "name" || key == "namespace") {
          Seen s;
          s.stack = stack_;
          s.value = std::string(value);
          const yaml_scalar_style_t style = e.data.scalar.style;
          const bool block = style == YAML_LITERAL_SCALAR_STYLE ||
                             style == YAML_FOLDED_SCALAR_STYLE;
          s.line = static_cast<int>(e.start_mark.line) + 1 + (block ? 1 : 0);
          s.column = static_cast<int>(e.start_mark.column) + 1 +
                     (style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                              style == YAML_DOUBLE_QUOTED_SCALAR_STYLE
                          ? 1
                          : 0);
          // A block's trailing line breaks end it; any other break inside a
          // folded or flow scalar joins source lines.
          const absl::string_view body =
              absl::StripTrailingAsciiWhitespace(value);
          s.lines_map = style == YAML_LITERAL_SCALAR_STYLE ||
                        body.find('\n') == absl::string_view::npos;
          if (block)
            s.column = 0;  // the block's indentation: not known from the event
          seen_.push_back(std::move(s));
        }
        EndValue();
        break;
      }
      case YAML_ALIAS_EVENT:
        BeginValue();
        EndValue();
        break;
      default:
        break;
    }
  }

  // Before a value: a sequence advances to its next element.
  void BeginValue() {
    if (!stack_.empty() && !stack_.back().mapping) ++stack_.back().index;
  }
  // After a value: a mapping expects its next key.
  void EndValue() {
    if (!stack_.empty() && stack_.back().mapping)
      stack_.back().expect_key = true;
  }

  // The document's objects: the root, or a List's items.
  void Finish(std::vector<CelObject>& out) {
    // Object roots: "" (the document) and "items[i]" (nested
    // "items[i].items[j]" too).
    std::vector<std::pair<std::string, int>> roots;
    for (const auto& [path, line] : objects_) {
      if (path.empty()) {
        roots.push_back({path, line});
        continue;
      }
      // items[<n>] or <root>.items[<n>]
      const size_t at = path.rfind("items[");
      if (at != std::string::npos && (at == 0 || path[at - 1] == '.') &&
          path.back() == ']' && path.find('.', at) == std::string::npos) {
        roots.push_back({path, line});
      }
    }
    for (const auto& [root, line] : roots) {
      CelObject object;
      object.line = line;
      const size_t prefix = root.empty() ? 0 : root.size() + 1;
      for (const Seen& s : seen_) {
        const std::string path = JoinPath(s.stack, 0);
        if (!root.empty() &&
            (!absl::StartsWith(path, root) || path.size() <= root.size() ||
             path[root.size()] != '.')) {
          continue;
        }
        const std::string rel = path.substr(prefix);
        if (rel == "kind") object.kind = s.value;
        if (rel == "apiVersion") object.api_version = s.value;
        if (rel == "metadata.name") object.name = s.value;
        if (rel == "metadata.namespace") object.namespace_ = s.value;
      }
      for (const Seen& s : seen_) {
        if (!IsCelKey(s.stack.back().key)) continue;
        const std::string path = JoinPath(s.stack, 0);
        if (!root.empty() &&
            (!absl::StartsWith(path, root) || path.size() <= root.size() ||
             path[root.size()] != '.')) {
          continue;
        }
        const std::string rel = path.substr(prefix);
        if (!IsCelPath(object.kind, rel)) continue;
        object.fields.push_back(
            CelField{rel, s.value, s.line, s.column, s.lines_map});
      }
      if (!object.fields.empty()) out.push_back(std::move(object));
    }
  }

  yaml_parser_t parser_;
  bool ok_ = false;
  bool too_deep_ = false;
  std::vector<Frame> stack_;
  std::vector<Seen> seen_;
  std::vector<std::pair<std::string, int>> objects_;
  const std::string empty_;
};

}  // namespace

std::vector<CelObject> ReadCelFields(absl::string_view text) {
  Reader reader(text);
  return reader.Read();
}

}  // namespace compatd::manifest
