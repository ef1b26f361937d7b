#include "manifest/manifest_reader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "manifest/json_text.h"
#include "yaml.h"

namespace compatd::manifest {
namespace {

absl::string_view ScalarText(const yaml_event_t& event) {
  return absl::string_view(
      reinterpret_cast<const char*>(event.data.scalar.value),
      event.data.scalar.length);
}

// A plain scalar that YAML reads as null: empty, "~", "null".
bool IsNullScalar(const yaml_event_t& event) {
  if (event.type != YAML_SCALAR_EVENT) return false;
  if (event.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
  const absl::string_view value = ScalarText(event);
  return value.empty() || value == "~" || value == "null" || value == "Null" ||
         value == "NULL";
}

// YAML's true, as sigs.k8s.io/yaml (and so kubectl) reads a bool field.
bool IsTrue(const yaml_event_t& event) {
  if (event.type != YAML_SCALAR_EVENT) return false;
  const absl::string_view value = ScalarText(event);
  return value == "true" || value == "True" || value == "TRUE";
}

absl::string_view NodeName(yaml_event_type_t type) {
  switch (type) {
    case YAML_SCALAR_EVENT:
      return "a scalar";
    case YAML_SEQUENCE_START_EVENT:
      return "a sequence";
    case YAML_MAPPING_START_EVENT:
      return "a mapping";
    case YAML_ALIAS_EVENT:
      return "an alias";
    default:
      return "a node";
  }
}

// A line that starts a YAML document: "---" alone or followed by a space.
bool IsDocumentStart(absl::string_view line) {
  if (!absl::StartsWith(line, "---")) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' ||
         line[3] == '\r' || line[3] == '\n';
}

// libyaml over one piece of the input, and its current event.
class Parser final {
 public:
  explicit Parser(absl::string_view text) : text_(text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_) {
      yaml_parser_set_input_string(
          &parser_, reinterpret_cast<const unsigned char*>(text.data()),
          text.size());
    }
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;
  ~Parser() {
    if (have_event_) yaml_event_delete(&event_);
    if (ok_) yaml_parser_delete(&parser_);
  }

  bool initialized() const { return ok_; }

  // The next event, valid until the next call; null on a syntax error.
  const yaml_event_t* Next() {
    if (have_event_) yaml_event_delete(&event_);
    have_event_ = yaml_parser_parse(&parser_, &event_) != 0;
    return have_event_ ? &event_ : nullptr;
  }

  // The 0-based line of the syntax error within this piece.
  int ErrorLine() const {
    if (parser_.error == YAML_READER_ERROR) {
      const absl::string_view before =
          text_.substr(0, std::min(text_.size(), parser_.problem_offset));
      return static_cast<int>(std::count(before.begin(), before.end(), '\n'));
    }
    return static_cast<int>(parser_.problem_mark.line);
  }

  // libyaml's words: "did not find expected key while parsing a block
  // mapping".
  std::string ErrorMessage() const {
    std::string message = "not YAML: ";
    absl::StrAppend(&message, parser_.problem != nullptr ? parser_.problem
                                                         : "cannot be read");
    if (parser_.context != nullptr) {
      absl::StrAppend(&message, " ", parser_.context);
    }
    return message;
  }

 private:
  absl::string_view text_;
  yaml_parser_t parser_;
  yaml_event_t event_;
  bool ok_ = false;
  bool have_event_ = false;
};

bool IsKustomizeField(absl::string_view key);

// ---- Aliases and merge keys -------------------------------------------------
// kubectl decodes manifests with sigs.k8s.io/yaml, that is go-yaml v2: an
// alias is its anchor's node again, and a merge key (`<<`, plain) applies
// its mapping's entries (or, for a sequence of mappings, each one's, the
// first winning) where it stands. Events resolves both between libyaml and
// the Walker, which then never sees an alias or a merge key.

// An event kept for replay: what the Walker reads of one.
struct KeptEvent {
  yaml_event_type_t type = YAML_NO_EVENT;
  std::string value;  // scalars
  yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
  yaml_mark_t mark{};
  bool from_merge = false;  // added by a merge key
};

KeptEvent Keep(const yaml_event_t& event) {
  KeptEvent kept;
  kept.type = event.type;
  kept.mark = event.start_mark;
  if (event.type == YAML_SCALAR_EVENT) {
    kept.value = std::string(ScalarText(event));
    kept.style = event.data.scalar.style;
  }
  return kept;
}

const unsigned char* AnchorOf(const yaml_event_t& event) {
  switch (event.type) {
    case YAML_SCALAR_EVENT:
      return event.data.scalar.anchor;
    case YAML_SEQUENCE_START_EVENT:
      return event.data.sequence_start.anchor;
    case YAML_MAPPING_START_EVENT:
      return event.data.mapping_start.anchor;
    default:
      return nullptr;
  }
}

int DepthChange(yaml_event_type_t type) {
  switch (type) {
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
      return 1;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      return -1;
    default:
      return 0;
  }
}

class Events final {
 public:
  Events(Parser& parser, int line_offset)
      : parser_(parser), line_offset_(line_offset) {}

  // The next event with aliases and merge keys resolved, valid until the
  // next call; null on a syntax error (the parser's) or when an alias
  // cannot be resolved (failure()).
  const yaml_event_t* Next() {
    while (true) {
      const yaml_event_t* event = Resolved();
      if (event == nullptr) return nullptr;
      if (event->type == YAML_DOCUMENT_START_EVENT) {
        anchors_.clear();
        recordings_.clear();
        levels_.clear();
        expanded_ = 0;
      }
      Level* top = levels_.empty() ? nullptr : &levels_.back();
      if (top != nullptr && top->mapping && top->at_key &&
          event->type == YAML_SCALAR_EVENT &&
          event->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
          ScalarText(*event) == "<<") {
        if (!Merge(Line(*event))) return nullptr;
        continue;  // the mapping is at a key again
      }
      if (top != nullptr && top->mapping &&
          event->type != YAML_MAPPING_END_EVENT) {
        top->at_key = !top->at_key;
      }
      if (DepthChange(event->type) > 0) {
        levels_.push_back(Level{event->type == YAML_MAPPING_START_EVENT, true});
      } else if (DepthChange(event->type) < 0 && !levels_.empty()) {
        levels_.pop_back();
      }
      return event;
    }
  }

  // Whether the last event came from a merge key's mapping.
  bool from_merge() const { return from_merge_; }

  // Why Next() returned null when libyaml saw no error.
  const std::optional<ManifestProblem>& failure() const { return failure_; }

 private:
  struct Level {
    bool mapping = false;
    bool at_key = true;  // mappings: the next node is a key
  };
  struct Recording {
    std::string anchor;
    int depth = 0;
    std::vector<KeptEvent> events;
  };

  int Line(const yaml_event_t& event) const {
    return line_offset_ + static_cast<int>(event.start_mark.line) + 1;
  }

  bool Fail(int line, std::string message) {
    failure_ = ManifestProblem{line, std::move(message)};
    return false;
  }

  // Counts `events` more expanded events against the document's bound.
  bool Expand(size_t events, int line) {
    expanded_ += static_cast<int64_t>(events);
    if (expanded_ <= kMaxAliasExpansion) return true;
    return Fail(
        line, absl::StrFormat("aliases and merge keys expand this document to "
                              "more than %d nodes; it is not read",
                              kMaxAliasExpansion));
  }

  // The next event with aliases replaced by their anchors' events; records
  // anchored nodes as they pass.
  const yaml_event_t* Resolved() {
    while (true) {
      const yaml_event_t* event;
      if (!pending_.empty()) {
        current_ = std::move(pending_.front());
        pending_.pop_front();
        std::memset(&replayed_, 0, sizeof(replayed_));
        replayed_.type = current_.type;
        replayed_.start_mark = current_.mark;
        replayed_.end_mark = current_.mark;
        if (current_.type == YAML_SCALAR_EVENT) {
          replayed_.data.scalar.value = reinterpret_cast<yaml_char_t*>(
              const_cast<char*>(current_.value.data()));
          replayed_.data.scalar.length = current_.value.size();
          replayed_.data.scalar.style = current_.style;
          replayed_.data.scalar.plain_implicit = 1;
        }
        from_merge_ = current_.from_merge;
        event = &replayed_;
      } else {
        event = parser_.Next();
        if (event == nullptr) return nullptr;
        from_merge_ = false;
        if (event->type == YAML_ALIAS_EVENT) {
          if (!Replay(*event)) return nullptr;
          continue;
        }
      }
      // Events a merge key re-adds are not recorded: the anchor keeps the
      // merge key itself, which its replay resolves again.
      if (!from_merge_) Record(*event);
      return event;
    }
  }

  void Record(const yaml_event_t& event) {
    const unsigned char* anchor = AnchorOf(event);
    if (anchor != nullptr) {
      recordings_.push_back(
          Recording{reinterpret_cast<const char*>(anchor), 0, {}});
    }
    for (Recording& r : recordings_) {
      r.events.push_back(Keep(event));
      r.depth += DepthChange(event.type);
    }
    // Finished nodes (a scalar, or a closed collection) become anchors.
    while (!recordings_.empty() && recordings_.back().depth == 0) {
      Recording done = std::move(recordings_.back());
      recordings_.pop_back();
      anchors_[done.anchor] = std::make_shared<const std::vector<KeptEvent>>(
          std::move(done.events));
    }
  }

  // An alias: its anchor's events, next.
  bool Replay(const yaml_event_t& alias) {
    const std::string name(
        reinterpret_cast<const char*>(alias.data.alias.anchor));
    auto it = anchors_.find(name);
    if (it == anchors_.end()) {
      for (const Recording& r : recordings_) {
        if (r.anchor == name) {
          return Fail(Line(alias),
                      absl::StrFormat("alias *%s is inside its own anchor's "
                                      "node; kubectl refuses it too",
                                      name));
        }
      }
      return Fail(Line(alias),
                  absl::StrFormat("alias *%s names no anchor &%s before it "
                                  "in this document",
                                  name, name));
    }
    const std::vector<KeptEvent>& events = *it->second;
    if (!Expand(events.size(), Line(alias))) return false;
    for (auto e = events.rbegin(); e != events.rend(); ++e) {
      pending_.push_front(*e);
      pending_.front().mark = alias.start_mark;
      pending_.front().from_merge = false;
    }
    return true;
  }

  // One whole node from Resolved(), kept.
  bool TakeNode(std::vector<KeptEvent>* node) {
    int depth = 0;
    do {
      const yaml_event_t* event = Resolved();
      if (event == nullptr) return false;
      node->push_back(Keep(*event));
      depth += DepthChange(event->type);
    } while (depth > 0);
    return true;
  }

  // A merge key: its value, a mapping or a sequence of mappings, read whole;
  // their entries are replayed next as the mapping's own, the first mapping
  // of a sequence last (so that it wins, as go-yaml v2 applies them).
  bool Merge(int line) {
    std::vector<KeptEvent> value;
    if (!TakeNode(&value)) return false;
    std::vector<std::pair<size_t, size_t>> mappings;  // [begin, end) entries
    const auto want_map = [this, line] {
      return Fail(line,
                  "the merge key << takes a mapping or a sequence of "
                  "mappings (as kubectl's decoder does); this document is "
                  "not read");
    };
    if (value.front().type == YAML_MAPPING_START_EVENT) {
      mappings.emplace_back(1, value.size() - 1);
    } else if (value.front().type == YAML_SEQUENCE_START_EVENT) {
      size_t i = 1;
      while (i + 1 < value.size()) {
        if (value[i].type != YAML_MAPPING_START_EVENT) return want_map();
        const size_t begin = i;
        int depth = 0;
        do {
          depth += DepthChange(value[i].type);
          ++i;
        } while (depth > 0);
        mappings.emplace_back(begin + 1, i - 1);
      }
    } else {
      return want_map();
    }
    size_t added = 0;
    for (const auto& [begin, end] : mappings) added += end - begin;
    if (!Expand(added, line)) return false;
    std::vector<KeptEvent> entries;
    entries.reserve(added);
    for (auto m = mappings.rbegin(); m != mappings.rend(); ++m) {
      for (size_t i = m->first; i < m->second; ++i) {
        entries.push_back(std::move(value[i]));
        entries.back().from_merge = true;
      }
    }
    for (auto e = entries.rbegin(); e != entries.rend(); ++e) {
      pending_.push_front(std::move(*e));
    }
    return true;
  }

  Parser& parser_;
  int line_offset_;
  std::deque<KeptEvent> pending_;
  KeptEvent current_;
  yaml_event_t replayed_{};
  bool from_merge_ = false;
  std::map<std::string, std::shared_ptr<const std::vector<KeptEvent>>> anchors_;
  std::vector<Recording> recordings_;
  std::vector<Level> levels_;
  int64_t expanded_ = 0;
  std::optional<ManifestProblem> failure_;
};

// One object mapping as read, before its kind says whether it is a list.
struct ObjectRead {
  ManifestObject object;
  bool has_api_version = false;
  bool has_kind = false;
  bool items_seen = false;       // items: a sequence, or null
  bool kustomize_field = false;  // a field only kustomizations have
  CrdSpec crd;
  std::string legacy_version;   // spec.version (apiextensions v1beta1)
  std::vector<RbacRule> rules;  // rules (Role, ClusterRole)
  ManifestContents items;       // the items, flattened, with their problems
  std::vector<ManifestProblem> problems;
};

// Walks the events of one piece of the input. Every Read* function is called
// with the node's first event consumed and returns false on a syntax error
// (the walk then stops; the caller resumes at the next document).
class Walker final {
 public:
  Walker(Events& events, int line_offset, ManifestContents& out,
         const ReadLimits& limits)
      : events_(events),
        line_offset_(line_offset),
        out_(out),
        limits_(limits) {}

  // Set when a document nests deeper than kMaxYamlDepth: the walk stopped
  // there (Stream() returned false) though libyaml saw no error.
  const std::optional<ManifestProblem>& too_deep() const { return too_deep_; }
  // Set when a bound of ReadLimits stopped the walk (Stream() returned
  // false); the read ends there.
  const std::optional<ManifestProblem>& over_limit() const {
    return over_limit_;
  }

  // True at the end of the stream; false after a syntax error or a document
  // nested too deep.
  bool Stream() {
    const yaml_event_t* event;
    while ((event = Next()) != nullptr) {
      switch (event->type) {
        case YAML_STREAM_END_EVENT:
          return true;
        case YAML_DOCUMENT_START_EVENT:
          if (!Document()) return false;
          break;
        default:
          break;  // STREAM_START
      }
    }
    return false;
  }

 private:
  const yaml_event_t* Next() {
    if (++events_seen_ % kEventsPerBudgetLook == 0 &&
        limits_.budget != nullptr && limits_.budget->Exhausted()) {
      return OverLimit(last_line_,
                       limits_.budget->Cancelled()
                           ? "the read stopped here: the client went away"
                           : "the read stopped here: the call's work budget "
                             "(--max-heavy-work-time) is spent");
    }
    const yaml_event_t* event = events_.Next();
    if (event != nullptr) last_line_ = Line(*event);
    return event;
  }

  // Stops the walk at `line` (Next() and the readers return null/false).
  std::nullptr_t OverLimit(int line, std::string message) {
    if (!over_limit_.has_value()) {
      over_limit_ = ManifestProblem{line, std::move(message)};
    }
    return nullptr;
  }

  // One more object or problem entry (a document, a list item); false (the
  // walk stops) past ReadLimits::max_entries.
  bool CountEntry(int line) {
    if (++entries_ <= limits_.max_entries) return true;
    OverLimit(line, absl::StrFormat("more than %d objects and bad list items "
                                    "in one text; the rest is not read",
                                    limits_.max_entries));
    return false;
  }

  int Line(const yaml_event_t& event) const {
    return line_offset_ + static_cast<int>(event.start_mark.line) + 1;
  }

  // DOCUMENT_START consumed; reads the root node and DOCUMENT_END.
  bool Document() {
    const yaml_event_t* event = Next();
    if (event == nullptr) return false;
    if (!CountEntry(Line(*event))) return false;
    if (event->type == YAML_MAPPING_START_EVENT) {
      ++out_.documents;
      ObjectRead read;
      if (!ReadObject(Line(*event), 0, read)) return false;
      Finish(read, out_);
    } else if (!IsNullScalar(*event)) {
      ++out_.documents;
      out_.problems.push_back(ManifestProblem{
          Line(*event),
          absl::StrCat("the document is ", NodeName(event->type),
                       ", not a Kubernetes object (a mapping with apiVersion "
                       "and kind)")});
      if (!Skip(*event)) return false;
    }
    event = Next();  // DOCUMENT_END
    return event != nullptr;
  }

  // Skips the rest of a node whose first event is `first`. Every other
  // reader goes a fixed number of levels deep (lists: kMaxListNesting), so
  // bounding the depth here bounds it everywhere.
  bool Skip(const yaml_event_t& first) {
    if (first.type != YAML_SEQUENCE_START_EVENT &&
        first.type != YAML_MAPPING_START_EVENT) {
      return true;
    }
    int depth = 1;
    while (depth > 0) {
      const yaml_event_t* event = Next();
      if (event == nullptr) return false;
      switch (event->type) {
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
          if (++depth > kMaxYamlDepth) {
            too_deep_ = ManifestProblem{
                Line(*event),
                absl::StrFormat("the document nests more than %d sequences "
                                "and mappings; it is not read",
                                kMaxYamlDepth)};
            return false;
          }
          break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
          --depth;
          break;
        default:
          break;
      }
    }
    return true;
  }

  // Reads a mapping's entries, calling `on_entry(key, value_event)` for each
  // entry with a scalar key; `on_entry` must consume the value (Skip it at
  // least) and return false on a syntax error. Entries with other keys are
  // skipped.
  template <typename OnEntry>
  bool Mapping(OnEntry on_entry) {
    std::vector<std::pair<std::string, int>> seen;  // key, line
    while (true) {
      const yaml_event_t* event = Next();
      if (event == nullptr) return false;
      if (event->type == YAML_MAPPING_END_EVENT) return true;
      if (event->type != YAML_SCALAR_EVENT) {
        if (!Skip(*event)) return false;  // the key
        event = Next();
        if (event == nullptr || !Skip(*event)) return false;  // its value
        continue;
      }
      const std::string key(ScalarText(*event));
      // A merge key's entries may repeat a key: that is what merging is.
      if (!events_.from_merge()) NoteRepeatedKey(key, Line(*event), seen);
      event = Next();
      if (event == nullptr) return false;
      if (!on_entry(key, *event)) return false;
    }
  }

  // A key written twice in one mapping: go-yaml v2 (kubectl's decoder)
  // keeps the last value, and so does this reader; the warning names both
  // lines.
  void NoteRepeatedKey(const std::string& key, int line,
                       std::vector<std::pair<std::string, int>>& seen) {
    for (auto& [name, first] : seen) {
      if (name != key) continue;
      out_.warnings.push_back(ManifestProblem{
          line, absl::StrFormat("key \"%s\" appears twice in one mapping "
                                "(lines %d and %d); the last one counts, as "
                                "kubectl reads it",
                                key, first, line)});
      first = line;
      return;
    }
    seen.emplace_back(key, line);
  }

  // A scalar field's value into `out`; anything else is a problem.
  bool Scalar(const yaml_event_t& value, absl::string_view path,
              std::string* out, std::vector<ManifestProblem>& problems) {
    if (value.type == YAML_SCALAR_EVENT) {
      // null, written after a value, is what the key ends as.
      *out =
          IsNullScalar(value) ? std::string() : std::string(ScalarText(value));
      return true;
    }
    problems.push_back(ManifestProblem{
        Line(value), absl::StrCat(path, " is ", NodeName(value.type),
                                  "; expected a string")});
    return Skip(value);
  }

  // A key given twice counts with its last value (NoteRepeatedKey): every
  // field a key fills is emptied when the key comes again, as go-yaml's map
  // and encoding/json replace the first value.
  bool ReadObject(int line, int nesting, ObjectRead& read) {
    read.object.line = line;
    return Mapping([&](const std::string& key, const yaml_event_t& value) {
      if (key == "metadata") read.object.name = read.object.namespace_ = "";
      if (key == "items") {
        read.items = ManifestContents();
        read.items_seen = false;
      }
      if (key == "spec") {
        read.crd.group = read.crd.kind = read.crd.plural = "";
        read.crd.versions.clear();
        read.legacy_version.clear();
      }
      if (key == "rules") read.rules.clear();
      if (key == "status") read.crd.stored_versions.clear();
      if (key == "apiVersion") {
        read.has_api_version = true;
        return Scalar(value, "apiVersion", &read.object.api_version,
                      read.problems);
      }
      if (key == "kind") {
        read.has_kind = true;
        return Scalar(value, "kind", &read.object.kind, read.problems);
      }
      if (key == "metadata" && value.type == YAML_MAPPING_START_EVENT) {
        return Mapping([&](const std::string& field, const yaml_event_t& v) {
          if (field == "name") {
            return Scalar(v, "metadata.name", &read.object.name, read.problems);
          }
          if (field == "namespace") {
            return Scalar(v, "metadata.namespace", &read.object.namespace_,
                          read.problems);
          }
          return Skip(v);
        });
      }
      if (key == "items" && value.type == YAML_SEQUENCE_START_EVENT) {
        read.items_seen = true;
        return Items(Line(value), nesting, read.items);
      }
      if (key == "items" && IsNullScalar(value)) {
        // `items:` or `items: null`: an empty list, as kubectl reads one.
        read.items_seen = true;
        return true;
      }
      if (nesting == 0 && IsKustomizeField(key)) read.kustomize_field = true;
      if (key == "spec" && value.type == YAML_MAPPING_START_EVENT) {
        return Spec(read);
      }
      if (key == "rules" && value.type == YAML_SEQUENCE_START_EVENT) {
        return Rules(read.rules);
      }
      if (key == "status" && value.type == YAML_MAPPING_START_EVENT) {
        return Mapping([&](const std::string& field, const yaml_event_t& v) {
          if (field == "storedVersions") read.crd.stored_versions.clear();
          if (field != "storedVersions" ||
              v.type != YAML_SEQUENCE_START_EVENT) {
            return Skip(v);
          }
          return Strings(&read.crd.stored_versions);
        });
      }
      return Skip(value);
    });
  }

  // A sequence of scalars (status.storedVersions); other elements skipped.
  bool Strings(std::vector<std::string>* out) {
    while (true) {
      const yaml_event_t* event = Next();
      if (event == nullptr) return false;
      if (event->type == YAML_SEQUENCE_END_EVENT) return true;
      if (event->type == YAML_SCALAR_EVENT) {
        out->emplace_back(ScalarText(*event));
      } else if (!Skip(*event)) {
        return false;
      }
    }
  }

  // An RBAC role's rules (read on every object: the kind may come later):
  // each mapping's apiGroups and resources; other elements skipped.
  bool Rules(std::vector<RbacRule>& rules) {
    while (true) {
      const yaml_event_t* event = Next();
      if (event == nullptr) return false;
      if (event->type == YAML_SEQUENCE_END_EVENT) return true;
      if (event->type != YAML_MAPPING_START_EVENT) {
        if (!Skip(*event)) return false;
        continue;
      }
      RbacRule rule;
      rule.line = Line(*event);
      const bool ok =
          Mapping([&](const std::string& key, const yaml_event_t& value) {
            if (key == "apiGroups") rule.api_groups.clear();
            if (key == "resources") rule.resources.clear();
            if (value.type != YAML_SEQUENCE_START_EVENT) return Skip(value);
            if (key == "apiGroups") return Strings(&rule.api_groups);
            if (key == "resources") return Strings(&rule.resources);
            return Skip(value);
          });
      if (!ok) return false;
      rules.push_back(std::move(rule));
    }
  }

  // The CRD fields of spec; read on every object (the kind may come later),
  // at the cost of comparing spec's top-level keys.
  bool Spec(ObjectRead& read) {
    return Mapping([&](const std::string& key, const yaml_event_t& value) {
      if (key == "group" && value.type == YAML_SCALAR_EVENT) {
        read.crd.group = std::string(ScalarText(value));
        return true;
      }
      if (key == "version" && value.type == YAML_SCALAR_EVENT) {
        read.legacy_version = std::string(ScalarText(value));
        return true;
      }
      if (key == "group") read.crd.group.clear();
      if (key == "version") read.legacy_version.clear();
      if (key == "names") read.crd.kind = read.crd.plural = "";
      if (key == "versions") read.crd.versions.clear();
      if (key == "names" && value.type == YAML_MAPPING_START_EVENT) {
        return Mapping([&](const std::string& field, const yaml_event_t& v) {
          if (field == "kind" && v.type == YAML_SCALAR_EVENT) {
            read.crd.kind = std::string(ScalarText(v));
            return true;
          }
          if (field == "plural" && v.type == YAML_SCALAR_EVENT) {
            read.crd.plural = std::string(ScalarText(v));
            return true;
          }
          return Skip(v);
        });
      }
      if (key == "versions" && value.type == YAML_SEQUENCE_START_EVENT) {
        return CrdVersions(read.crd.versions);
      }
      return Skip(value);
    });
  }

  bool CrdVersions(std::vector<CrdVersion>& versions) {
    while (true) {
      const yaml_event_t* event = Next();
      if (event == nullptr) return false;
      if (event->type == YAML_SEQUENCE_END_EVENT) return true;
      if (event->type != YAML_MAPPING_START_EVENT) {
        if (!Skip(*event)) return false;
        continue;
      }
      if (static_cast<int>(versions.size()) >= limits_.max_crd_versions) {
        OverLimit(Line(*event),
                  absl::StrFormat("a CustomResourceDefinition lists more than "
                                  "%d versions; the rest is not read",
                                  limits_.max_crd_versions));
        return false;
      }
      CrdVersion version;
      const bool ok =
          Mapping([&](const std::string& key, const yaml_event_t& value) {
            if (key == "name" && value.type == YAML_SCALAR_EVENT) {
              version.name = std::string(ScalarText(value));
            } else if (key == "served") {
              version.served = IsTrue(value);
            } else if (key == "storage") {
              version.storage = IsTrue(value);
            } else if (key == "deprecated") {
              version.deprecated = IsTrue(value);
            }
            return Skip(value);
          });
      if (!ok) return false;
      versions.push_back(std::move(version));
    }
  }

  // SEQUENCE_START of `items` consumed: each item read as an object.
  bool Items(int line, int nesting, ManifestContents& items) {
    while (true) {
      const yaml_event_t* event = Next();
      if (event == nullptr) return false;
      if (event->type == YAML_SEQUENCE_END_EVENT) return true;
      if (!CountEntry(Line(*event))) return false;
      if (event->type != YAML_MAPPING_START_EVENT) {
        items.problems.push_back(ManifestProblem{
            Line(*event), absl::StrCat("a list item is ", NodeName(event->type),
                                       ", not a Kubernetes object")});
        if (!Skip(*event)) return false;
        continue;
      }
      if (nesting + 1 > kMaxListNesting) {
        items.problems.push_back(ManifestProblem{
            Line(*event),
            absl::StrFormat("lists nested more than %d deep (list at line "
                            "%d); this item is not read",
                            kMaxListNesting, line)});
        if (!Skip(*event)) return false;
        continue;
      }
      ObjectRead item;
      if (!ReadObject(Line(*event), nesting + 1, item)) return false;
      Finish(item, items);
    }
  }

  // Files a finished object (or a list's items) into `dest`.
  static void Finish(ObjectRead& read, ManifestContents& dest) {
    ManifestObject& object = read.object;
    const bool is_list =
        read.items_seen &&
        (object.kind == "List" ||
         (absl::EndsWith(object.kind, "List") && object.kind.size() > 4));
    for (ManifestProblem& problem : read.problems) {
      dest.problems.push_back(std::move(problem));
    }
    // Items read as objects of a kind that is not a list still warned.
    for (ManifestProblem& warning : read.items.warnings) {
      dest.warnings.push_back(std::move(warning));
    }
    if (is_list) {
      for (ManifestObject& item : read.items.objects) {
        dest.objects.push_back(std::move(item));
      }
      // A list's item must be an object.
      for (ManifestProblem& item : read.items.not_objects) {
        item.message = absl::StrCat("a list item: ", item.message);
        dest.problems.push_back(std::move(item));
      }
      for (ManifestProblem& problem : read.items.problems) {
        dest.problems.push_back(std::move(problem));
      }
      return;
    }
    if (object.api_version.empty() && read.kustomize_field &&
        (object.kind.empty() || object.kind == "Kustomization")) {
      // kustomize's old form (no apiVersion, no kind); Pluto skips it too.
      dest.warnings.push_back(ManifestProblem{
          object.line,
          "a kustomization without apiVersion (kustomize's old form) is not "
          "a Kubernetes object: skipped"});
      return;
    }
    if (object.kind.empty()) {
      // No kind: not a Kubernetes object of any API (a Helm values.yaml or
      // Chart.yaml, a CI workflow); kubectl-based tools and Pluto pass over
      // such documents.
      dest.not_objects.push_back(ManifestProblem{
          object.line,
          absl::StrCat("the document ",
                       object.api_version.empty()
                           ? std::string("has neither apiVersion nor kind")
                           : absl::StrCat("(apiVersion ", object.api_version,
                                          ") has no kind"),
                       ": not a Kubernetes object")});
      return;
    }
    if (object.api_version.empty()) {
      dest.problems.push_back(ManifestProblem{
          object.line,
          absl::StrCat("the object (kind ", object.kind,
                       ") has no apiVersion; every Kubernetes object needs "
                       "both")});
      return;
    }
    if (object.kind == "CustomResourceDefinition") {
      if (read.crd.versions.empty() && !read.legacy_version.empty()) {
        read.crd.versions.push_back(
            CrdVersion{read.legacy_version, true, true, false});
      }
      object.crd = std::move(read.crd);
    }
    if (object.kind == "Role" || object.kind == "ClusterRole") {
      object.rules = std::move(read.rules);
    }
    dest.objects.push_back(std::move(object));
  }

  // Events between two looks at the work budget (reading the clock).
  static constexpr int64_t kEventsPerBudgetLook = 4096;

  Events& events_;
  int line_offset_;
  ManifestContents& out_;
  const ReadLimits& limits_;
  std::optional<ManifestProblem> too_deep_;
  std::optional<ManifestProblem> over_limit_;
  int64_t events_seen_ = 0;
  int last_line_ = 0;
  int entries_ = 0;
};

// Top-level fields of a kustomization that no Kubernetes object has.
bool IsKustomizeField(absl::string_view key) {
  static constexpr absl::string_view kFields[] = {"bases",
                                                  "resources",
                                                  "patchesStrategicMerge",
                                                  "patchesJson6902",
                                                  "namePrefix",
                                                  "nameSuffix",
                                                  "commonLabels",
                                                  "commonAnnotations",
                                                  "configMapGenerator",
                                                  "secretGenerator",
                                                  "generatorOptions",
                                                  "images",
                                                  "vars",
                                                  "crds",
                                                  "components",
                                                  "replacements",
                                                  "helmCharts",
                                                  "openapi"};
  for (absl::string_view field : kFields) {
    if (key == field) return true;
  }
  return false;
}

// The text with a UTF-8 byte-order mark dropped where a later document
// starts (the line after a `---` line): files joined into one stream keep
// their marks, and kubectl, which decodes each document on its own, skips
// them. The marks' bytes are removed, never whole lines, so lines keep
// their numbers. Returns false (and leaves `out` alone) when there is none.
bool DropLaterByteOrderMarks(absl::string_view text, std::string* out) {
  constexpr absl::string_view kBom = "\xEF\xBB\xBF";
  bool after_start = false;  // the previous line starts a document
  size_t copied = 0;
  bool dropped = false;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    end = end == absl::string_view::npos ? text.size() : end + 1;
    absl::string_view line = text.substr(begin, end - begin);
    if (begin > 0 && absl::StartsWith(line, kBom) &&
        (after_start || IsDocumentStart(line.substr(kBom.size())))) {
      absl::StrAppend(out, text.substr(copied, begin - copied));
      copied = begin + kBom.size();
      line.remove_prefix(kBom.size());
      dropped = true;
    }
    after_start = IsDocumentStart(line);
    begin = end;
  }
  if (!dropped) return false;
  absl::StrAppend(out, text.substr(copied));
  return true;
}

// The byte offset of every line start, for resuming after a syntax error.
std::vector<size_t> LineStarts(absl::string_view text) {
  std::vector<size_t> starts = {0};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  return starts;
}

// The bounds of ReadLimits that are not the walk's: kept apart from it.

// The line (0-based) where more than `max` directive lines in a row start
// (a line starting with '%', blank and comment lines between them allowed),
// or -1. Only whole lines starting with '%' can be directives; in a document
// '%' cannot start a line of a plain or block value that kubectl accepts.
int DirectiveFlood(absl::string_view text, int max) {
  if (!absl::StartsWith(text, "%") &&
      text.find("\n%") == absl::string_view::npos) {
    return -1;  // the usual case: one pass of memchr-speed search
  }
  int line = 0;
  int run = 0;
  int run_start = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == absl::string_view::npos) end = text.size();
    const absl::string_view l = text.substr(at, end - at);
    if (absl::StartsWith(l, "%")) {
      if (run++ == 0) run_start = line;
      if (run > max) return run_start;
    } else if (!l.empty() && l[0] != '#' && l != "\r") {
      run = 0;
    }
    at = end + 1;
    ++line;
  }
  return -1;
}

// Byte offset of 0-based `line`.
size_t OffsetOfLine(absl::string_view text, int line) {
  size_t at = 0;
  for (int i = 0; i < line && at < text.size(); ++i) {
    const size_t end = text.find('\n', at);
    if (end == absl::string_view::npos) return text.size();
    at = end + 1;
  }
  return at;
}

// The first line at or after `next` (0-based) that starts a document ("---"),
// or the number of lines when none does.
int NextDocumentStart(absl::string_view text,
                      const std::vector<size_t>& line_starts, int next) {
  const int lines = static_cast<int>(line_starts.size());
  while (next < lines) {
    const size_t begin = line_starts[static_cast<size_t>(next)];
    const size_t end = next + 1 < lines
                           ? line_starts[static_cast<size_t>(next + 1)]
                           : text.size();
    if (IsDocumentStart(text.substr(begin, end - begin))) break;
    ++next;
  }
  return next;
}

void StopRead(ManifestContents& out, ManifestProblem problem) {
  out.stopped = problem.message;
  out.problems.push_back(std::move(problem));
}

}  // namespace

ManifestContents ReadManifests(absl::string_view text) {
  return ReadManifests(text, ReadLimits());
}

absl::string_view BeforeDirectiveFlood(absl::string_view text,
                                       int max_directives, int* flood_line) {
  const int flood = DirectiveFlood(text, max_directives);
  *flood_line = flood + 1;
  return flood < 0 ? text : text.substr(0, OffsetOfLine(text, flood));
}

namespace {

// `text`, or `storage` holding it with what kubectl would not see as YAML
// rewritten: later documents' byte-order marks dropped, a JSON text's
// surrogate escapes joined (manifest/json_text.h).
absl::string_view AsKubectlReadsIt(absl::string_view text,
                                   std::string* storage) {
  std::string without_marks;
  if (DropLaterByteOrderMarks(text, &without_marks)) {
    *storage = std::move(without_marks);
    text = *storage;
  }
  std::string joined;
  if (JoinJsonSurrogates(text, &joined)) {
    *storage = std::move(joined);
    text = *storage;
  }
  return text;
}

}  // namespace

ManifestContents ReadManifests(absl::string_view text,
                               const ReadLimits& limits) {
  std::string rewritten;
  text = AsKubectlReadsIt(text, &rewritten);
  ManifestContents out;
  std::optional<ManifestProblem> directives;
  if (const int flood = DirectiveFlood(text, limits.max_directives);
      flood >= 0) {
    directives = ManifestProblem{
        flood + 1,
        absl::StrFormat("more than %d YAML directives (%%YAML, %%TAG) before "
                        "one document; the text is not read from here",
                        limits.max_directives)};
    text = text.substr(0, OffsetOfLine(text, flood));
  }
  std::vector<size_t> line_starts;  // computed on the first syntax error
  int start_line = 0;               // 0-based line the piece starts at
  int pieces = 0;
  while (true) {
    if (++pieces > limits.max_documents) {
      StopRead(out, ManifestProblem{
                        start_line + 1,
                        absl::StrFormat("more than %d documents and syntax "
                                        "errors in one text; the rest is not "
                                        "read",
                                        limits.max_documents)});
      break;
    }
    const size_t start_byte =
        start_line == 0 ? 0 : line_starts[static_cast<size_t>(start_line)];
    Parser parser(text.substr(start_byte));
    if (!parser.initialized()) {
      out.problems.push_back(
          ManifestProblem{start_line + 1, "cannot start the YAML parser"});
      break;
    }
    Events events(parser, start_line);
    Walker walker(events, start_line, out, limits);
    if (walker.Stream()) break;
    if (walker.over_limit().has_value()) {
      StopRead(out, *walker.over_limit());
      break;
    }
    if (out.documents > limits.max_documents) {
      StopRead(out, ManifestProblem{
                        start_line + 1,
                        absl::StrFormat("more than %d documents in one text; "
                                        "the rest is not read",
                                        limits.max_documents)});
      break;
    }
    int error_line;  // 0-based
    if (events.failure().has_value()) {
      error_line = events.failure()->line - 1;
      out.problems.push_back(*events.failure());
    } else if (walker.too_deep().has_value()) {
      error_line = walker.too_deep()->line - 1;
      out.problems.push_back(*walker.too_deep());
    } else {
      error_line = start_line + parser.ErrorLine();
      out.problems.push_back(
          ManifestProblem{error_line + 1, parser.ErrorMessage()});
    }
    // Resume at the next document start after the error (never at the
    // piece's own first line, so that every round moves on).
    if (line_starts.empty()) line_starts = LineStarts(text);
    const int next = NextDocumentStart(text, line_starts,
                                       std::max(error_line, start_line + 1));
    if (next >= static_cast<int>(line_starts.size())) break;
    start_line = next;
  }
  if (directives.has_value() && out.stopped.empty()) {
    StopRead(out, *std::move(directives));
  }
  const auto by_line = [](const ManifestProblem& a, const ManifestProblem& b) {
    return a.line < b.line;
  };
  std::stable_sort(out.problems.begin(), out.problems.end(), by_line);
  std::stable_sort(out.warnings.begin(), out.warnings.end(), by_line);
  return out;
}

}  // namespace compatd::manifest
