#include "manifest/cel_fields.h"

#include <yaml.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/work_budget.h"
#include "manifest/json_text.h"
#include "manifest/manifest_reader.h"

namespace compatd::manifest {
namespace {

// One level of the path to the current node.
struct Frame {
  bool mapping = false;
  bool expect_key = true;  // mapping: the next scalar is a key
  int index = -1;          // sequence: the current element
  // The reader's path before this frame's segment (".key" or "[index]").
  size_t path_base = 0;
  // A mapping that is an object (the document's, or a List's item): its
  // index among the document's pending objects; -1 otherwise.
  int object = -1;
};

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
  Reader(absl::string_view text, const ReadLimits& limits) : limits_(limits) {
    // ReadManifests stops there too, and says so.
    int flood_line = 0;
    text = BeforeDirectiveFlood(text, limits.max_directives, &flood_line);
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

  CelFields Read() {
    if (!ok_) return std::move(out_);
    for (int64_t events = 1; !halted_; ++events) {
      yaml_event_t event;
      if (yaml_parser_parse(&parser_, &event) == 0) break;  // a syntax error
      const yaml_event_type_t type = event.type;
      line_ = static_cast<int>(event.start_mark.line) + 1;
      Handle(event);
      yaml_event_delete(&event);
      if (type == YAML_STREAM_END_EVENT) break;
      // Every kEventsPerBudgetLook events, and every kBytesPerBudgetLook
      // bytes read (a few long scalars, as 130 CEL expressions of 100 KB,
      // are few events and much work).
      if (limits_.budget != nullptr &&
          (events % kEventsPerBudgetLook == 0 ||
           parser_.mark.index - looked_at_ >= kBytesPerBudgetLook)) {
        looked_at_ = parser_.mark.index;
        if (limits_.budget->Exhausted()) {
          halted_ = true;  // the scan says so (api/scan_answer.h)
        }
      }
    }
    return std::move(out_);
  }

 private:
  static constexpr int64_t kEventsPerBudgetLook = 4096;
  static constexpr size_t kBytesPerBudgetLook = 64 * 1024;
  size_t looked_at_ = 0;  // parser_.mark.index at the last look

  // A value under a CEL key, before its object's kind is known.
  struct Candidate {
    std::string path;  // relative to the object
    std::string value;
    int line = 0;
    int column = 0;
    bool lines_map = true;
  };
  struct Pending {
    CelObject object;
    std::vector<Candidate> candidates;
    size_t path_bytes = 0;  // the object's own path in path_
  };

  // The read ends here; `why` is reported unless empty (a bound
  // ReadManifests shares, and reports itself).
  void Stop(std::string why) {
    halted_ = true;
    if (why.empty() || !out_.stopped.empty()) return;
    out_.stopped = std::move(why);
    out_.stopped_line = line_;
  }

  void Handle(const yaml_event_t& e) {
    switch (e.type) {
      case YAML_DOCUMENT_START_EVENT:
        if (++documents_ > limits_.max_documents) Stop("");
        pending_.clear();
        objects_open_.clear();
        stack_.clear();
        path_.clear();
        too_deep_ = false;
        break;
      case YAML_DOCUMENT_END_EVENT:
        if (!too_deep_) Finish();
        pending_.clear();
        break;
      case YAML_MAPPING_START_EVENT:
      case YAML_SEQUENCE_START_EVENT:
        Open(e.type == YAML_MAPPING_START_EVENT);
        break;
      case YAML_MAPPING_END_EVENT:
      case YAML_SEQUENCE_END_EVENT:
        Close();
        break;
      case YAML_SCALAR_EVENT:
        Scalar(e);
        break;
      case YAML_ALIAS_EVENT:
        BeginValue();
        EndValue();
        break;
      default:
        break;
    }
  }

  // A mapping is an object when it is the document's or a List's item
  // ("items[<n>]" at any depth).
  bool StartsObject() const {
    if (stack_.empty()) return true;
    if (stack_.size() < 2 || stack_.back().mapping) return false;
    const Frame& above = stack_[stack_.size() - 2];
    return above.mapping && key_of(stack_.size() - 2) == "items";
  }

  void Open(bool mapping) {
    BeginValue();
    if (stack_.size() >= static_cast<size_t>(kMaxYamlDepth)) too_deep_ = true;
    Frame f;
    f.mapping = mapping;
    f.path_base = path_.size();
    if (mapping && StartsObject()) {
      if (++objects_ > limits_.max_entries) Stop("");
      f.object = static_cast<int>(pending_.size());
      Pending p;
      p.object.line = line_;
      p.path_bytes = path_.size();
      pending_.push_back(std::move(p));
      objects_open_.push_back(f.object);
    }
    keys_.emplace_back();
    stack_.push_back(f);
  }

  void Close() {
    if (stack_.empty()) return;
    const Frame f = stack_.back();
    stack_.pop_back();
    keys_.pop_back();
    path_.resize(f.path_base);
    if (f.object >= 0) {
      objects_open_.pop_back();
      // An object without CEL candidates cannot gain any: not kept (a List of
      // a million items holds one at a time).
      if (pending_[static_cast<size_t>(f.object)].candidates.empty() &&
          static_cast<size_t>(f.object) + 1 == pending_.size()) {
        pending_.pop_back();
      }
    }
    EndValue();
  }

  const std::string& key_of(size_t frame) const { return keys_[frame]; }

  void Scalar(const yaml_event_t& e) {
    const absl::string_view value(
        reinterpret_cast<const char*>(e.data.scalar.value),
        e.data.scalar.length);
    if (!stack_.empty() && stack_.back().mapping && stack_.back().expect_key) {
      Frame& f = stack_.back();
      keys_.back() = std::string(value);
      f.expect_key = false;
      path_.resize(f.path_base);
      if (f.path_base > 0) path_ += '.';
      path_.append(value.data(), value.size());
      return;
    }
    BeginValue();
    if (!stack_.empty() && stack_.back().mapping && !objects_open_.empty() &&
        !too_deep_) {
      Record(e, value);
    }
    EndValue();
  }

  // A scalar value under a mapping key: the object's kind, apiVersion, name,
  // namespace, or a CEL candidate.
  void Record(const yaml_event_t& e, absl::string_view value) {
    const std::string& key = keys_.back();
    const bool cel = IsCelKey(key);
    if (!cel && key != "kind" && key != "apiVersion" && key != "name" &&
        key != "namespace") {
      return;
    }
    Pending& p = pending_[static_cast<size_t>(objects_open_.back())];
    const size_t skip = p.path_bytes == 0 ? 0 : p.path_bytes + 1;
    if (path_.size() < skip || path_.size() - skip > kMaxCelPathBytes) {
      return;
    }
    const absl::string_view rel = absl::string_view(path_).substr(skip);
    if (!cel) {
      if (rel == "kind") p.object.kind = std::string(value);
      if (rel == "apiVersion") p.object.api_version = std::string(value);
      if (rel == "metadata.name") p.object.name = std::string(value);
      if (rel == "metadata.namespace") p.object.namespace_ = std::string(value);
      return;
    }
    // Every kind's CEL fields are under spec or webhooks (IsCelPath).
    if (!absl::StartsWith(rel, "spec.") &&
        !absl::StartsWith(rel, "webhooks[")) {
      return;
    }
    if (++cel_fields_ > kMaxCelFields) {
      Stop(
          absl::StrFormat("more than %d CEL fields in one text; the rest is "
                          "not read",
                          kMaxCelFields));
      return;
    }
    Candidate c;
    c.path = std::string(rel);
    c.value = std::string(value);
    const yaml_scalar_style_t style = e.data.scalar.style;
    const bool block =
        style == YAML_LITERAL_SCALAR_STYLE || style == YAML_FOLDED_SCALAR_STYLE;
    c.line = static_cast<int>(e.start_mark.line) + 1 + (block ? 1 : 0);
    c.column = static_cast<int>(e.start_mark.column) + 1 +
               (style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                        style == YAML_DOUBLE_QUOTED_SCALAR_STYLE
                    ? 1
                    : 0);
    // A block's trailing line breaks end it; any other break inside a
    // folded or flow scalar joins source lines.
    const absl::string_view body = absl::StripTrailingAsciiWhitespace(value);
    c.lines_map = style == YAML_LITERAL_SCALAR_STYLE ||
                  body.find('\n') == absl::string_view::npos;
    if (block) c.column = 0;  // the block's indentation: not in the event
    p.candidates.push_back(std::move(c));
  }

  // Before a value: a sequence advances to its next element.
  void BeginValue() {
    if (stack_.empty() || stack_.back().mapping) return;
    Frame& f = stack_.back();
    ++f.index;
    path_.resize(f.path_base);
    absl::StrAppend(&path_, "[", f.index, "]");
  }
  // After a value: a mapping expects its next key.
  void EndValue() {
    if (!stack_.empty() && stack_.back().mapping) {
      stack_.back().expect_key = true;
    }
  }

  // The document's objects with a CEL field of their kind, in the order they
  // start.
  void Finish() {
    for (Pending& p : pending_) {
      for (Candidate& c : p.candidates) {
        if (!IsCelPath(p.object.kind, c.path)) continue;
        p.object.fields.push_back(CelField{std::move(c.path),
                                           std::move(c.value), c.line, c.column,
                                           c.lines_map});
      }
      if (!p.object.fields.empty()) out_.objects.push_back(std::move(p.object));
    }
  }

  const ReadLimits& limits_;
  yaml_parser_t parser_;
  bool ok_ = false;
  bool halted_ = false;
  int line_ = 0;  // of the event being read
  int documents_ = 0;
  int objects_ = 0;
  int cel_fields_ = 0;
  bool too_deep_ = false;
  std::vector<Frame> stack_;
  std::vector<std::string> keys_;  // each frame's current key (mappings)
  std::string path_;               // the path of the current node
  std::vector<int> objects_open_;  // pending_ indexes, innermost last
  std::vector<Pending> pending_;   // the document's objects
  CelFields out_;
};

}  // namespace

CelFields ReadCelFields(absl::string_view text, const ReadLimits& limits) {
  std::string joined;  // a JSON text's surrogate escapes, as Go reads them
  if (JoinJsonSurrogates(text, &joined)) text = joined;
  Reader reader(text, limits);
  return reader.Read();
}

}  // namespace compatd::manifest
