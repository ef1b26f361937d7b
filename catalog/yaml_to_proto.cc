#include "catalog/yaml_to_proto.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "yaml.h"

namespace compatd::catalog {
namespace {

using ::google::protobuf::Descriptor;
using ::google::protobuf::EnumValueDescriptor;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;
using ::google::protobuf::Reflection;

// The text is read with libyaml's event parser (the C reference
// implementation, as PyYAML's and ruamel's fast paths): events straight into
// the message tree, with no node tree in between. yaml-cpp, used before,
// spent 75% of a reload of the 1.36 catalog in its scanner (9.5 ms); libyaml
// reads it several times faster, and a reload must stay well under 20 ms.

// Deepest nesting of sequences and mappings accepted. A catalog needs five
// levels (an unknown key's value is skipped however deep, up to this); the
// bound keeps a hostile file ("[[[[...") from building a stack
// of millions of frames.
constexpr int kMaxYamlDepth = 1000;

int LineOf(const yaml_mark_t& mark) { return static_cast<int>(mark.line) + 1; }

// One YAML node as the handler sees it: a scalar, a null, or the start of a
// container (whose children follow as further events).
struct NodeEvent {
  // kAlias: a YAML alias, reported when seen and otherwise ignored.
  enum Kind { kNull, kScalar, kSequence, kMapping, kAlias } kind;
  int line;
  // Plain (unquoted) scalars, and scalars with an explicit tag other than "!"
  // (as yaml-cpp reported them before).
  bool plain = true;
  const std::string* text = nullptr;  // kScalar
};

absl::string_view KindName(const NodeEvent& node) {
  switch (node.kind) {
    case NodeEvent::kNull:
      return "null";
    case NodeEvent::kScalar:
      return "a scalar";
    case NodeEvent::kSequence:
      return "a sequence";
    case NodeEvent::kMapping:
      return "a mapping";
    case NodeEvent::kAlias:
      return "an alias";
  }
  return "a node";
}

absl::string_view ExpectedName(const FieldDescriptor& field) {
  if (field.is_map()) return "a mapping";
  if (field.is_repeated()) return "a sequence";
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return "a boolean (true or false)";
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return "an integer";
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return "a number";
    case FieldDescriptor::CPPTYPE_STRING:
      return "a string";
    case FieldDescriptor::CPPTYPE_ENUM:
      return "an enum value name";
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return "a mapping";
  }
  return "a value";
}

// The element type of a repeated field, for messages about one element.
absl::string_view ElementName(const FieldDescriptor& field) {
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return "a boolean (true or false)";
    case FieldDescriptor::CPPTYPE_STRING:
      return "a string";
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return "a mapping";
    default:
      return "a number";
  }
}

// A decimal integer literal: an optional '-', then digits only (no 0x, no
// '_', no '+').
bool ParseDecimal(const std::string& text, int64_t min_value,
                  uint64_t max_value, int64_t* signed_out,
                  uint64_t* unsigned_out) {
  const size_t start = (!text.empty() && text[0] == '-') ? 1 : 0;
  if (start == text.size()) return false;
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  if (start == 1) {
    int64_t value = 0;
    if (min_value == 0 || !absl::SimpleAtoi(text, &value) ||
        value < min_value) {
      return false;
    }
    *signed_out = value;
    *unsigned_out = 0;
    return true;
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value > max_value) return false;
  *unsigned_out = value;
  *signed_out = static_cast<int64_t>(value);
  return true;
}

std::string AcceptedKeys(const Descriptor& descriptor) {
  std::vector<std::string> names;
  names.reserve(descriptor.field_count());
  for (int i = 0; i < descriptor.field_count(); ++i) {
    names.push_back(descriptor.field(i)->json_name());
  }
  std::sort(names.begin(), names.end());
  return absl::StrJoin(names, ", ");
}

const FieldDescriptor* FindByJsonName(const Descriptor& descriptor,
                                      const std::string& name) {
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const FieldDescriptor* field = descriptor.field(i);
    if (field->json_name() == name) return field;
  }
  return nullptr;
}

// "; did you mean \"preRelease\"?" when `name` matches a key but for case
// (or is a field's proto name: lock_to_default), else "".
std::string DidYouMean(const Descriptor& descriptor, const std::string& name) {
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const FieldDescriptor& field = *descriptor.field(i);
    if (absl::EqualsIgnoreCase(field.json_name(), name) ||
        field.name() == name) {
      return absl::StrFormat("; did you mean \"%s\"?", field.json_name());
    }
  }
  return "";
}

// Receives the parse events and fills the message tree, keeping a stack of the
// containers being read.
class ProtoEventHandler final {
 public:
  ProtoEventHandler(Message& root, SourceLines& lines,
                    std::vector<CatalogError>& errors)
      : root_(root), lines_(lines), errors_(errors) {}

  int documents() const { return documents_; }
  int second_document_line() const { return second_document_line_; }
  bool root_is_mapping() const { return root_is_mapping_; }
  bool saw_root() const { return saw_root_; }

  void OnDocumentStart(int line) {
    ++documents_;
    if (documents_ == 2) second_document_line_ = line;
  }

  void OnNull(int line) {
    if (documents_ != 1) return;
    OnNode(NodeEvent{NodeEvent::kNull, line});
  }

  void OnAlias(int line) {
    if (documents_ != 1) return;
    // Expanding aliases would let a small file describe an exponentially
    // large catalog ("billion laughs"); a catalog spells its values out.
    Error(line,
          "YAML aliases (*name) are not supported in a catalog; write the "
          "value out");
    OnNode(NodeEvent{NodeEvent::kAlias, line});
  }

  void OnScalar(int line, bool plain, const std::string& value) {
    if (documents_ != 1) return;
    NodeEvent node{NodeEvent::kScalar, line};
    node.plain = plain;
    node.text = &value;
    OnNode(node);
  }

  void OnSequenceStart(int line) {
    if (documents_ != 1) return;
    OnNode(NodeEvent{NodeEvent::kSequence, line});
  }

  void OnMapStart(int line) {
    if (documents_ != 1) return;
    OnNode(NodeEvent{NodeEvent::kMapping, line});
  }

  void OnSequenceEnd() { EndContainer(); }
  void OnMapEnd() { EndContainer(); }

 private:
  enum class FrameKind {
    kMessage,   // a mapping read into `message`
    kRepeated,  // a sequence read into repeated `field` of `message`
    kMapField,  // a mapping read into map `field` of `message`
    kSkip,      // a container being ignored (reported already)
  };

  struct Frame {
    explicit Frame(FrameKind frame_kind) : kind(frame_kind) {}
    FrameKind kind;
    Message* message = nullptr;
    const FieldDescriptor* field = nullptr;
    std::string path;  // "" is the top level
    // Mappings: whether the next node is the value of a key just read, and
    // what to do with it.
    bool have_key = false;
    bool skip_value = false;
    const FieldDescriptor* value_field = nullptr;  // kMessage
    std::string key;                               // kMapField
    int key_line = 0;
    // Keys seen so far (duplicate detection): field index -> line for
    // messages, key -> line for map fields.
    absl::InlinedVector<std::pair<int, int>, 8> seen_fields;
    absl::flat_hash_map<std::string, int> seen_keys;
    int next_index = 0;  // kRepeated
  };

  void Error(int line, std::string message) {
    errors_.push_back(CatalogError{line, std::move(message)});
  }

  std::string Where(const Frame& frame) const {
    return frame.path.empty() ? "the top level" : frame.path;
  }

  static std::string Join(const std::string& path, absl::string_view name) {
    return path.empty() ? std::string(name) : absl::StrCat(path, ".", name);
  }

  void EndContainer() {
    if (documents_ != 1) return;
    if (!stack_.empty()) stack_.pop_back();
  }

  void PushSkip() { stack_.push_back(Frame(FrameKind::kSkip)); }

  void PushMessage(Message& message, std::string path, int line) {
    lines_.SetMessageLine(message, line);
    Frame frame(FrameKind::kMessage);
    frame.message = &message;
    frame.path = std::move(path);
    stack_.push_back(std::move(frame));
  }

  // Ignores a node: a container's contents are skipped.
  void Skip(const NodeEvent& node) {
    if (node.kind == NodeEvent::kSequence || node.kind == NodeEvent::kMapping) {
      PushSkip();
    }
  }

  void OnNode(const NodeEvent& node) {
    if (stack_.empty()) {
      OnRoot(node);
      return;
    }
    Frame& frame = stack_.back();
    if (node.kind == NodeEvent::kAlias) {
      // Reported already; an alias key's value is skipped with it.
      if ((frame.kind == FrameKind::kMessage ||
           frame.kind == FrameKind::kMapField) &&
          !frame.have_key) {
        frame.have_key = true;
        frame.skip_value = true;
      } else if (frame.kind == FrameKind::kMessage ||
                 frame.kind == FrameKind::kMapField) {
        frame.have_key = false;
      } else if (frame.kind == FrameKind::kRepeated) {
        ++frame.next_index;
      }
      return;
    }
    switch (frame.kind) {
      case FrameKind::kSkip:
        Skip(node);
        return;
      case FrameKind::kMessage:
        if (frame.have_key) {
          frame.have_key = false;
          OnMessageValue(node);
        } else {
          OnMessageKey(frame, node);
        }
        return;
      case FrameKind::kRepeated:
        OnElement(node);
        return;
      case FrameKind::kMapField:
        if (frame.have_key) {
          frame.have_key = false;
          OnMapValue(node);
        } else {
          OnMapKey(frame, node);
        }
        return;
    }
  }

  void OnRoot(const NodeEvent& node) {
    if (saw_root_) {
      Skip(node);
      return;
    }
    saw_root_ = true;
    if (node.kind == NodeEvent::kMapping) {
      root_is_mapping_ = true;
      PushMessage(root_, "", node.line);
      return;
    }
    if (node.kind != NodeEvent::kNull) {
      Error(node.line,
            absl::StrFormat("the top level must be a mapping, got %s",
                            KindName(node)));
    }
    Skip(node);
  }

  // A key that is not a scalar: report it; the key's contents and its value
  // are skipped.
  void BadKey(Frame& frame, const NodeEvent& node) {
    Error(node.line, absl::StrFormat("%s: a key must be a scalar, got %s",
                                     Where(frame), KindName(node)));
    frame.have_key = true;
    frame.skip_value = true;
    Skip(node);
  }

  void OnMessageKey(Frame& frame, const NodeEvent& node) {
    if (node.kind != NodeEvent::kScalar) {
      BadKey(frame, node);
      return;
    }
    frame.have_key = true;
    frame.skip_value = true;
    const std::string& name = *node.text;
    const Descriptor& descriptor = *frame.message->GetDescriptor();
    const FieldDescriptor* field = FindByJsonName(descriptor, name);
    if (field == nullptr) {
      Error(node.line,
            absl::StrFormat("unknown key \"%s\" in %s; accepted: %s%s", name,
                            Where(frame), AcceptedKeys(descriptor),
                            DidYouMean(descriptor, name)));
      return;
    }
    for (const auto& [index, line] : frame.seen_fields) {
      if (index == field->index()) {
        Error(node.line,
              absl::StrFormat("duplicate key \"%s\" in %s (first at line %d)",
                              name, Where(frame), line));
        return;
      }
    }
    frame.seen_fields.emplace_back(field->index(), node.line);
    lines_.SetFieldLine(*frame.message, field->number(), -1, node.line);
    frame.skip_value = false;
    frame.value_field = field;
    frame.key_line = node.line;
  }

  void OnMessageValue(const NodeEvent& node) {
    Frame& frame = stack_.back();
    if (frame.skip_value) {
      Skip(node);
      return;
    }
    if (node.kind == NodeEvent::kNull) return;  // as protobuf JSON: absent
    const FieldDescriptor& field = *frame.value_field;
    Message& message = *frame.message;
    std::string path = Join(frame.path, field.json_name());
    if (field.is_map()) {
      if (node.kind != NodeEvent::kMapping) {
        WrongKind(node, path, field);
        return;
      }
      Frame map(FrameKind::kMapField);
      map.message = &message;
      map.field = &field;
      map.path = std::move(path);
      stack_.push_back(std::move(map));
    } else if (field.is_repeated()) {
      if (node.kind != NodeEvent::kSequence) {
        WrongKind(node, path, field);
        return;
      }
      Frame repeated(FrameKind::kRepeated);
      repeated.message = &message;
      repeated.field = &field;
      repeated.path = std::move(path);
      stack_.push_back(std::move(repeated));
    } else if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (node.kind != NodeEvent::kMapping) {
        WrongKind(node, path, field);
        return;
      }
      Message* child =
          message.GetReflection()->MutableMessage(&message, &field);
      PushMessage(*child, std::move(path), node.line);
    } else if (node.kind == NodeEvent::kScalar) {
      SetScalar(node, path, message, field, /*repeated=*/false);
    } else {
      WrongKind(node, path, field);
    }
  }

  void WrongKind(const NodeEvent& node, const std::string& path,
                 const FieldDescriptor& field) {
    Error(node.line, absl::StrFormat("%s must be %s, got %s", path,
                                     ExpectedName(field), KindName(node)));
    Skip(node);
  }

  void OnElement(const NodeEvent& node) {
    Frame& frame = stack_.back();
    const int index = frame.next_index++;
    const std::string path = absl::StrCat(frame.path, "[", index, "]");
    Message& message = *frame.message;
    const FieldDescriptor& field = *frame.field;
    const bool is_message =
        field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    const bool fits = is_message ? node.kind == NodeEvent::kMapping
                                 : node.kind == NodeEvent::kScalar;
    if (!fits) {
      Error(node.line, absl::StrFormat("%s must be %s, got %s", path,
                                       ElementName(field), KindName(node)));
      Skip(node);
      return;
    }
    const Reflection& reflection = *message.GetReflection();
    const int slot = reflection.FieldSize(message, &field);
    if (is_message) {
      Message* child = reflection.AddMessage(&message, &field);
      lines_.SetFieldLine(message, field.number(), slot, node.line);
      PushMessage(*child, path, node.line);
    } else if (SetScalar(node, path, message, field, /*repeated=*/true)) {
      lines_.SetFieldLine(message, field.number(), slot, node.line);
    }
  }

  void OnMapKey(Frame& frame, const NodeEvent& node) {
    if (node.kind != NodeEvent::kScalar) {
      BadKey(frame, node);
      return;
    }
    frame.have_key = true;
    frame.key = *node.text;
    frame.key_line = node.line;
    auto [it, inserted] = frame.seen_keys.try_emplace(frame.key, node.line);
    frame.skip_value = !inserted;
    if (!inserted) {
      Error(node.line,
            absl::StrFormat("duplicate key \"%s\" in %s (first at line %d)",
                            frame.key, frame.path, it->second));
    }
  }

  void OnMapValue(const NodeEvent& node) {
    Frame& frame = stack_.back();
    if (frame.skip_value) {
      Skip(node);
      return;
    }
    const std::string path = absl::StrCat(frame.path, ".", frame.key);
    const Descriptor& entry_type = *frame.field->message_type();
    const FieldDescriptor& key_field = *entry_type.map_key();
    const FieldDescriptor& value_field = *entry_type.map_value();
    if (node.kind == NodeEvent::kNull) {
      Error(node.line, absl::StrFormat("%s has no value; expected %s", path,
                                       ExpectedName(value_field)));
      return;
    }
    const bool value_is_message =
        value_field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (node.kind !=
        (value_is_message ? NodeEvent::kMapping : NodeEvent::kScalar)) {
      WrongKind(node, path, value_field);
      return;
    }
    Message& message = *frame.message;
    const FieldDescriptor& field = *frame.field;
    const Reflection& reflection = *message.GetReflection();
    Message* entry = reflection.AddMessage(&message, &field);
    const std::string key = frame.key;  // `frame` may move when pushing
    NodeEvent key_node{NodeEvent::kScalar, frame.key_line};
    key_node.text = &key;
    bool ok = SetScalar(key_node, path, *entry, key_field, false);
    if (ok && value_is_message) {
      lines_.SetMapKeyLine(message, field.number(), key, key_node.line);
      PushMessage(*entry->GetReflection()->MutableMessage(entry, &value_field),
                  path, node.line);
      return;
    }
    ok = ok && SetScalar(node, path, *entry, value_field, false);
    if (!ok) {
      // A bad key or value adds nothing.
      reflection.RemoveLast(&message, &field);
      return;
    }
    lines_.SetMapKeyLine(message, field.number(), key, key_node.line);
  }

  // Reports a scalar of the wrong type; false.
  bool BadScalar(const NodeEvent& node, const std::string& path,
                 const FieldDescriptor& field, bool repeated,
                 absl::string_view extra) {
    Error(node.line,
          absl::StrFormat("%s must be %s, got \"%s\"%s", path,
                          repeated ? ElementName(field) : ExpectedName(field),
                          *node.text, extra));
    return false;
  }

  // SetScalar of an integer field: a decimal in the field's range.
  bool SetInteger(const NodeEvent& node, const std::string& path,
                  Message& message, const FieldDescriptor& field,
                  bool repeated) {
    const Reflection& reflection = *message.GetReflection();
    const std::string& text = *node.text;
    int64_t signed_value = 0;
    uint64_t unsigned_value = 0;
    auto bad = [&](absl::string_view extra) {
      return BadScalar(node, path, field, repeated, extra);
    };
    switch (field.cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        if (!ParseDecimal(text, std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max(), &signed_value,
                          &unsigned_value)) {
          return bad(" (a decimal in the 32-bit range)");
        }
        if (repeated) {
          reflection.AddInt32(&message, &field,
                              static_cast<int32_t>(signed_value));
        } else {
          reflection.SetInt32(&message, &field,
                              static_cast<int32_t>(signed_value));
        }
        return true;
      case FieldDescriptor::CPPTYPE_INT64:
        if (!ParseDecimal(text, std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max(), &signed_value,
                          &unsigned_value)) {
          return bad(" (a decimal in the 64-bit range)");
        }
        if (repeated) {
          reflection.AddInt64(&message, &field, signed_value);
        } else {
          reflection.SetInt64(&message, &field, signed_value);
        }
        return true;
      case FieldDescriptor::CPPTYPE_UINT32:
        if (!ParseDecimal(text, 0, std::numeric_limits<uint32_t>::max(),
                          &signed_value, &unsigned_value)) {
          return bad(" (a non-negative decimal in the 32-bit range)");
        }
        if (repeated) {
          reflection.AddUInt32(&message, &field,
                               static_cast<uint32_t>(unsigned_value));
        } else {
          reflection.SetUInt32(&message, &field,
                               static_cast<uint32_t>(unsigned_value));
        }
        return true;
      case FieldDescriptor::CPPTYPE_UINT64:
        if (!ParseDecimal(text, 0, std::numeric_limits<uint64_t>::max(),
                          &signed_value, &unsigned_value)) {
          return bad(" (a non-negative decimal in the 64-bit range)");
        }
        if (repeated) {
          reflection.AddUInt64(&message, &field, unsigned_value);
        } else {
          reflection.SetUInt64(&message, &field, unsigned_value);
        }
        return true;
      default:
        break;
    }
    return bad("");
  }

  // Sets (or adds, for a repeated field) one scalar. False on a type error,
  // which has then been reported.
  bool SetScalar(const NodeEvent& node, const std::string& path,
                 Message& message, const FieldDescriptor& field,
                 bool repeated) {
    const Reflection& reflection = *message.GetReflection();
    const std::string& text = *node.text;
    auto bad = [&](absl::string_view extra) {
      return BadScalar(node, path, field, repeated, extra);
    };
    switch (field.cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        if (repeated) {
          reflection.AddString(&message, &field, text);
        } else {
          reflection.SetString(&message, &field, text);
        }
        return true;
      case FieldDescriptor::CPPTYPE_BOOL: {
        // YAML 1.2's core schema; YAML 1.1's yes/no/on/off are not booleans.
        bool value = false;
        if (!node.plain) return bad(" (quoted; write it without quotes)");
        if (text == "true" || text == "True" || text == "TRUE") {
          value = true;
        } else if (text != "false" && text != "False" && text != "FALSE") {
          return bad("");
        }
        if (repeated) {
          reflection.AddBool(&message, &field, value);
        } else {
          reflection.SetBool(&message, &field, value);
        }
        return true;
      }
      case FieldDescriptor::CPPTYPE_INT32:
      case FieldDescriptor::CPPTYPE_INT64:
      case FieldDescriptor::CPPTYPE_UINT32:
      case FieldDescriptor::CPPTYPE_UINT64:
        return SetInteger(node, path, message, field, repeated);
      case FieldDescriptor::CPPTYPE_DOUBLE:
      case FieldDescriptor::CPPTYPE_FLOAT: {
        double value = 0;
        if (!absl::SimpleAtod(text, &value)) return bad("");
        if (field.cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
          if (repeated) {
            reflection.AddFloat(&message, &field, static_cast<float>(value));
          } else {
            reflection.SetFloat(&message, &field, static_cast<float>(value));
          }
        } else if (repeated) {
          reflection.AddDouble(&message, &field, value);
        } else {
          reflection.SetDouble(&message, &field, value);
        }
        return true;
      }
      case FieldDescriptor::CPPTYPE_ENUM: {
        const EnumValueDescriptor* value =
            field.enum_type()->FindValueByName(text);
        if (value == nullptr) {
          std::vector<std::string> names;
          for (int i = 0; i < field.enum_type()->value_count(); ++i) {
            names.push_back(field.enum_type()->value(i)->name());
          }
          return bad(absl::StrCat("; accepted: ", absl::StrJoin(names, ", ")));
        }
        if (repeated) {
          reflection.AddEnum(&message, &field, value);
        } else {
          reflection.SetEnum(&message, &field, value);
        }
        return true;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        break;
    }
    return bad("");
  }

  Message& root_;
  SourceLines& lines_;
  std::vector<CatalogError>& errors_;
  std::vector<Frame> stack_;
  int documents_ = 0;
  int second_document_line_ = 0;
  bool saw_root_ = false;
  bool root_is_mapping_ = false;
};

}  // namespace

int SourceLines::MessageLine(const google::protobuf::Message& message) const {
  auto it = message_lines_.find(&message);
  return it == message_lines_.end() ? 0 : it->second;
}

int SourceLines::FieldLine(const google::protobuf::Message& message,
                           int field_number) const {
  auto it = field_lines_.find(
      std::make_tuple(static_cast<const void*>(&message), field_number, -1));
  return it == field_lines_.end() ? 0 : it->second;
}

int SourceLines::ElementLine(const google::protobuf::Message& message,
                             int field_number, int index) const {
  auto it = field_lines_.find(
      std::make_tuple(static_cast<const void*>(&message), field_number, index));
  return it == field_lines_.end() ? 0 : it->second;
}

int SourceLines::MapKeyLine(const google::protobuf::Message& message,
                            int field_number, absl::string_view key) const {
  auto it = map_key_lines_.find(std::make_tuple(
      static_cast<const void*>(&message), field_number, std::string(key)));
  return it == map_key_lines_.end() ? 0 : it->second;
}

void SourceLines::SetMessageLine(const google::protobuf::Message& message,
                                 int line) {
  message_lines_[&message] = line;
}

void SourceLines::SetFieldLine(const google::protobuf::Message& message,
                               int field_number, int index, int line) {
  field_lines_[std::make_tuple(static_cast<const void*>(&message), field_number,
                               index)] = line;
}

void SourceLines::SetMapKeyLine(const google::protobuf::Message& message,
                                int field_number, absl::string_view key,
                                int line) {
  map_key_lines_[std::make_tuple(static_cast<const void*>(&message),
                                 field_number, std::string(key))] = line;
}

namespace {

// libyaml's parser and its current event, released on every path.
class LibYamlParser final {
 public:
  explicit LibYamlParser(absl::string_view text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_) {
      yaml_parser_set_input_string(
          &parser_, reinterpret_cast<const unsigned char*>(text.data()),
          text.size());
    }
  }
  LibYamlParser(const LibYamlParser&) = delete;
  LibYamlParser& operator=(const LibYamlParser&) = delete;
  ~LibYamlParser() {
    if (have_event_) yaml_event_delete(&event_);
    if (ok_) yaml_parser_delete(&parser_);
  }

  bool initialized() const { return ok_; }

  // The next event, or null on a syntax error (see Error()).
  const yaml_event_t* Next() {
    if (have_event_) yaml_event_delete(&event_);
    have_event_ = yaml_parser_parse(&parser_, &event_) != 0;
    return have_event_ ? &event_ : nullptr;
  }

  // libyaml's description of the syntax error: "did not find expected key
  // while parsing a block mapping (started on line 3)". `text` is the input,
  // to find the line of an encoding error (libyaml gives its byte offset).
  CatalogError Error(absl::string_view text) const {
    std::string message = "invalid YAML: ";
    absl::StrAppend(&message, parser_.problem != nullptr ? parser_.problem
                                                         : "cannot be read");
    if (parser_.error == YAML_READER_ERROR && parser_.problem_value != -1) {
      absl::StrAppendFormat(&message, " (byte 0x%02x at offset %d)",
                            parser_.problem_value, parser_.problem_offset);
    }
    if (parser_.context != nullptr) {
      absl::StrAppendFormat(&message, " %s (started on line %d)",
                            parser_.context, LineOf(parser_.context_mark));
    }
    int line = LineOf(parser_.problem_mark);
    if (parser_.error == YAML_READER_ERROR) {
      // The line the offending byte is on: lines before it, plus its own.
      const absl::string_view before =
          text.substr(0, std::min(text.size(), parser_.problem_offset));
      line = YamlLineCount(absl::StrCat(before, "x"));
    }
    // At the end of a file libyaml counts one more line than it has (it ends
    // the stream on a line of its own): name the file's last line instead.
    line = std::min(line, std::max(YamlLineCount(text), 1));
    return CatalogError{line, std::move(message)};
  }

 private:
  yaml_parser_t parser_;
  yaml_event_t event_;
  bool ok_ = false;
  bool have_event_ = false;
};

// A plain scalar that YAML's core schema reads as null: empty, "~", "null".
bool IsNullScalar(const yaml_event_t& event) {
  const auto& scalar = event.data.scalar;
  if (scalar.tag != nullptr || scalar.style != YAML_PLAIN_SCALAR_STYLE) {
    return false;
  }
  const absl::string_view value(reinterpret_cast<const char*>(scalar.value),
                                scalar.length);
  return value.empty() || value == "~" || value == "null" || value == "Null" ||
         value == "NULL";
}

// Plain for the walker's purposes: unquoted, or explicitly tagged with a tag
// other than the non-specific "!".
bool IsPlainScalar(const yaml_event_t& event) {
  const auto& scalar = event.data.scalar;
  if (scalar.tag != nullptr) {
    return absl::string_view(reinterpret_cast<const char*>(scalar.tag)) != "!";
  }
  return scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

}  // namespace

int YamlLineCount(absl::string_view text) {
  int breaks = 0;
  bool ends_with_break = false;
  for (size_t i = 0; i < text.size();) {
    size_t width = 0;  // bytes of a line break starting at i, or 0
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      width = 1;
    } else if (c == '\r') {
      width = (i + 1 < text.size() && text[i + 1] == '\n') ? 2 : 1;
    } else if (c == 0xC2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x85) {
      width = 2;  // NEL
    } else if (c == 0xE2 && i + 2 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(text[i + 2]) == 0xA8 ||
                static_cast<unsigned char>(text[i + 2]) == 0xA9)) {
      width = 3;  // LS, PS
    }
    if (width > 0) {
      ++breaks;
      i += width;
      ends_with_break = true;
    } else {
      ++i;
      ends_with_break = false;
    }
  }
  return breaks + (text.empty() || ends_with_break ? 0 : 1);
}

namespace {

// After the walk: one document, a mapping at its root; the walk's errors
// after those.
bool CheckDocument(ProtoEventHandler& handler,
                   std::vector<CatalogError>& walk_errors,
                   std::vector<CatalogError>& errors) {
  if (handler.documents() > 1) {
    errors.push_back(CatalogError{
        handler.second_document_line(),
        "more than one YAML document (\"---\"); a catalog is one document"});
    return false;
  }
  if (!handler.saw_root() ||
      (!handler.root_is_mapping() && walk_errors.empty())) {
    errors.push_back(CatalogError{
        0, "empty catalog: expected a mapping with at least binaryVersion"});
    return false;
  }
  errors.insert(errors.end(), std::make_move_iterator(walk_errors.begin()),
                std::make_move_iterator(walk_errors.end()));
  return handler.root_is_mapping();
}

}  // namespace

bool YamlToProto(absl::string_view text, google::protobuf::Message& message,
                 SourceLines& lines, std::vector<CatalogError>& errors) {
  std::vector<CatalogError> walk_errors;
  ProtoEventHandler handler(message, lines, walk_errors);
  LibYamlParser parser(text);
  if (!parser.initialized()) {
    errors.push_back(CatalogError{0, "invalid YAML: out of memory"});
    return false;
  }
  int depth = 0;
  std::string value;
  // The first document, then up to the start of a second one, if any (which
  // is an error; its contents are not read).
  for (bool done = false; !done;) {
    const yaml_event_t* event = parser.Next();
    if (event == nullptr) {
      errors.push_back(parser.Error(text));
      return false;
    }
    const int line = LineOf(event->start_mark);
    switch (event->type) {
      case YAML_STREAM_END_EVENT:
        done = true;
        break;
      case YAML_DOCUMENT_START_EVENT:
        handler.OnDocumentStart(line);
        done = handler.documents() > 1;
        break;
      case YAML_ALIAS_EVENT:
        handler.OnAlias(line);
        break;
      case YAML_SCALAR_EVENT:
        if (IsNullScalar(*event)) {
          handler.OnNull(line);
        } else {
          value.assign(reinterpret_cast<const char*>(event->data.scalar.value),
                       event->data.scalar.length);
          handler.OnScalar(line, IsPlainScalar(*event), value);
        }
        break;
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT:
        if (++depth > kMaxYamlDepth) {
          errors.push_back(CatalogError{
              line, absl::StrFormat("invalid YAML: nested deeper than %d "
                                    "sequences and mappings",
                                    kMaxYamlDepth)});
          return false;
        }
        if (event->type == YAML_SEQUENCE_START_EVENT) {
          handler.OnSequenceStart(line);
        } else {
          handler.OnMapStart(line);
        }
        break;
      case YAML_SEQUENCE_END_EVENT:
        --depth;
        handler.OnSequenceEnd();
        break;
      case YAML_MAPPING_END_EVENT:
        --depth;
        handler.OnMapEnd();
        break;
      case YAML_STREAM_START_EVENT:
      case YAML_DOCUMENT_END_EVENT:
      case YAML_NO_EVENT:
        break;
    }
  }
  return CheckDocument(handler, walk_errors, errors);
}

}  // namespace compatd::catalog
