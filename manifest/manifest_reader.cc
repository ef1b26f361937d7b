#include "manifest/manifest_reader.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

// One object mapping as read, before its kind says whether it is a list.
struct ObjectRead {
  ManifestObject object;
  bool has_api_version = false;
  bool has_kind = false;
  bool items_seen = false;
  CrdSpec crd;
  std::string legacy_version;  // spec.version (apiextensions v1beta1)
  ManifestContents items;      // the items, flattened, with their problems
  std::vector<ManifestProblem> problems;
};

// Walks the events of one piece of the input. Every Read* function is called
// with the node's first event consumed and returns false on a syntax error
// (the walk then stops; the caller resumes at the next document).
class Walker final {
 public:
  Walker(Parser& parser, int line_offset, ManifestContents& out,
         const ReadLimits& limits)
      : parser_(parser),
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
    if (++events_ % kEventsPerBudgetLook == 0 && limits_.budget != nullptr &&
        limits_.budget->Exhausted()) {
      return OverLimit(last_line_,
                       limits_.budget->Cancelled()
                           ? "the read stopped here: the client went away"
                           : "the read stopped here: the call's work budget "
                             "(--max-heavy-work-time) is spent");
    }
    const yaml_event_t* event = parser_.Next();
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
      event = Next();
      if (event == nullptr) return false;
      if (!on_entry(key, *event)) return false;
    }
  }

  // A scalar field's value into `out`; anything else is a problem.
  bool Scalar(const yaml_event_t& value, absl::string_view path,
              std::string* out, std::vector<ManifestProblem>& problems) {
    if (value.type == YAML_SCALAR_EVENT) {
      if (!IsNullScalar(value)) *out = std::string(ScalarText(value));
      return true;
    }
    problems.push_back(ManifestProblem{
        Line(value), absl::StrCat(path, " is ", NodeName(value.type),
                                  "; expected a string")});
    return Skip(value);
  }

  bool ReadObject(int line, int nesting, ObjectRead& read) {
    read.object.line = line;
    return Mapping([&](const std::string& key, const yaml_event_t& value) {
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
      if (key == "spec" && value.type == YAML_MAPPING_START_EVENT) {
        return Spec(read);
      }
      if (key == "status" && value.type == YAML_MAPPING_START_EVENT) {
        return Mapping([&](const std::string& field, const yaml_event_t& v) {
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
    if (is_list) {
      for (ManifestObject& item : read.items.objects) {
        dest.objects.push_back(std::move(item));
      }
      for (ManifestProblem& problem : read.items.problems) {
        dest.problems.push_back(std::move(problem));
      }
      return;
    }
    if (object.api_version.empty() || object.kind.empty()) {
      std::string what;
      if (object.api_version.empty() && object.kind.empty()) {
        what = "has neither apiVersion nor kind";
      } else if (object.api_version.empty()) {
        what = absl::StrCat("(kind ", object.kind, ") has no apiVersion");
      } else {
        what =
            absl::StrCat("(apiVersion ", object.api_version, ") has no kind");
      }
      dest.problems.push_back(ManifestProblem{
          object.line, absl::StrCat("the object ", what,
                                    "; every Kubernetes object needs both")});
      return;
    }
    if (object.kind == "CustomResourceDefinition") {
      if (read.crd.versions.empty() && !read.legacy_version.empty()) {
        read.crd.versions.push_back(
            CrdVersion{read.legacy_version, true, true, false});
      }
      object.crd = std::move(read.crd);
    }
    dest.objects.push_back(std::move(object));
  }

  // Events between two looks at the work budget (reading the clock).
  static constexpr int64_t kEventsPerBudgetLook = 4096;

  Parser& parser_;
  int line_offset_;
  ManifestContents& out_;
  const ReadLimits& limits_;
  std::optional<ManifestProblem> too_deep_;
  std::optional<ManifestProblem> over_limit_;
  int64_t events_ = 0;
  int last_line_ = 0;
  int entries_ = 0;
};

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

void StopRead(ManifestContents& out, ManifestProblem problem) {
  out.stopped = problem.message;
  out.problems.push_back(std::move(problem));
}

}  // namespace

ManifestContents ReadManifests(absl::string_view text) {
  return ReadManifests(text, ReadLimits());
}

ManifestContents ReadManifests(absl::string_view text,
                               const ReadLimits& limits) {
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
    Walker walker(parser, start_line, out, limits);
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
    if (walker.too_deep().has_value()) {
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
    int next = std::max(error_line, start_line + 1);
    const int lines = static_cast<int>(line_starts.size());
    while (next < lines) {
      const size_t begin = line_starts[static_cast<size_t>(next)];
      const size_t end = next + 1 < lines
                             ? line_starts[static_cast<size_t>(next + 1)]
                             : text.size();
      if (IsDocumentStart(text.substr(begin, end - begin))) break;
      ++next;
    }
    if (next >= lines) break;
    start_line = next;
  }
  if (directives.has_value() && out.stopped.empty()) {
    StopRead(out, *std::move(directives));
  }
  std::stable_sort(out.problems.begin(), out.problems.end(),
                   [](const ManifestProblem& a, const ManifestProblem& b) {
                     return a.line < b.line;
                   });
  return out;
}

}  // namespace compatd::manifest
