#include "gateway/json.h"

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gateway/ondemand.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "simdjson.h"

namespace compatd::gateway {

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

namespace {

using base::Utf8SequenceAt;

bool IsUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = Utf8SequenceAt(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

}  // namespace

std::string StatusJson(const absl::Status& status) {
  return absl::StrCat(R"({"code":)", static_cast<int>(status.code()),
                      R"(,"message":)", JsonQuote(status.message()),
                      R"(,"details":[]})");
}

namespace {

// Where malformed (but not too deep) JSON goes wrong, as a byte offset: the
// DOM parser that found it does not say, so On-Demand walks the document
// again and reports where it stopped (the end of the input when it ended
// early).
size_t ErrorOffset(const simdjson::padded_string& json) {
  thread_local simdjson::ondemand::parser parser;
  const ParserLease lease(parser);
  simdjson::ondemand::document document;
  if (Iterate(parser, json).get(document) != simdjson::SUCCESS) return 0;
  if (SkipValue(document.get_value()) == simdjson::SUCCESS &&
      CheckEnd(document) == simdjson::SUCCESS) {
    return 0;  // On-Demand saw nothing wrong
  }
  const char* location = nullptr;
  if (document.current_location().get(location) != simdjson::SUCCESS) {
    return json.size();
  }
  return static_cast<size_t>(location - json.data());
}

}  // namespace

namespace {

using FD = google::protobuf::FieldDescriptor;

// The DOM reader of ParseJsonRequest: proto3 JSON into `message` by
// reflection, for the forms whose meaning is beyond doubt. It declines
// (false, `message` then half-filled) whatever protobuf's parser might read
// otherwise or refuse with a message of its own: unknown or repeated keys,
// null, two members of a oneof, numbers that are not plain integers in range,
// quoted numbers, enum numbers, bytes, floating point, maps, well-known
// types, strings with control characters. What it accepts, protobuf's parser
// reads into the same message (tests/gateway/json_test.cc and the
// eval_request fuzzer hold it to that).
bool ReadObject(simdjson::dom::object object,
                google::protobuf::Message* message);

// A JSON integer into an int32 or int64 field: in range, not quoted.
bool ReadSigned(simdjson::dom::element value,
                google::protobuf::Message* message, const FD* field, bool add) {
  const google::protobuf::Reflection* r = message->GetReflection();
  int64_t v = 0;
  if (value.type() != simdjson::dom::element_type::INT64 ||
      value.get_int64().get(v) != simdjson::SUCCESS) {
    return false;
  }
  if (field->cpp_type() == FD::CPPTYPE_INT64) {
    add ? r->AddInt64(message, field, v) : r->SetInt64(message, field, v);
  } else if (v < INT32_MIN || v > INT32_MAX) {
    return false;
  } else {
    const auto v32 = static_cast<int32_t>(v);
    add ? r->AddInt32(message, field, v32) : r->SetInt32(message, field, v32);
  }
  return true;
}

// A JSON integer into a uint32 or uint64 field: not negative, in range.
bool ReadUnsigned(simdjson::dom::element value,
                  google::protobuf::Message* message, const FD* field,
                  bool add) {
  const google::protobuf::Reflection* r = message->GetReflection();
  int64_t v = 0;
  if (value.type() != simdjson::dom::element_type::INT64 ||
      value.get_int64().get(v) != simdjson::SUCCESS || v < 0) {
    return false;
  }
  const auto u = static_cast<uint64_t>(v);
  if (field->cpp_type() == FD::CPPTYPE_UINT64) {
    add ? r->AddUInt64(message, field, u) : r->SetUInt64(message, field, u);
  } else if (u > UINT32_MAX) {
    return false;
  } else {
    const auto u32 = static_cast<uint32_t>(u);
    add ? r->AddUInt32(message, field, u32) : r->SetUInt32(message, field, u32);
  }
  return true;
}

bool ReadOne(simdjson::dom::element value, google::protobuf::Message* message,
             const FD* field, bool add) {
  const google::protobuf::Reflection* r = message->GetReflection();
  switch (field->cpp_type()) {
    case FD::CPPTYPE_STRING: {
      std::string_view text;
      if (field->type() == FD::TYPE_BYTES ||
          value.get_string().get(text) != simdjson::SUCCESS) {
        return false;
      }
      for (const char c : text) {
        if (static_cast<unsigned char>(c) < 0x20) return false;
      }
      if (add) {
        r->AddString(message, field, std::string(text));
      } else {
        r->SetString(message, field, std::string(text));
      }
      return true;
    }
    case FD::CPPTYPE_BOOL: {
      bool b = false;
      if (value.get_bool().get(b) != simdjson::SUCCESS) return false;
      add ? r->AddBool(message, field, b) : r->SetBool(message, field, b);
      return true;
    }
    case FD::CPPTYPE_INT32:
    case FD::CPPTYPE_INT64:
      return ReadSigned(value, message, field, add);
    case FD::CPPTYPE_UINT32:
    case FD::CPPTYPE_UINT64:
      return ReadUnsigned(value, message, field, add);
    case FD::CPPTYPE_ENUM: {
      std::string_view name;
      if (value.get_string().get(name) != simdjson::SUCCESS) return false;
      const google::protobuf::EnumValueDescriptor* e =
          field->enum_type()->FindValueByName(std::string(name));
      if (e == nullptr) return false;
      add ? r->AddEnum(message, field, e) : r->SetEnum(message, field, e);
      return true;
    }
    case FD::CPPTYPE_MESSAGE: {
      simdjson::dom::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return false;
      return ReadObject(object, add ? r->AddMessage(message, field)
                                    : r->MutableMessage(message, field));
    }
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT:
      return false;
  }
  return false;
}

bool ReadObject(simdjson::dom::object object,
                google::protobuf::Message* message) {
  const google::protobuf::Descriptor* type = message->GetDescriptor();
  if (type->well_known_type() !=
      google::protobuf::Descriptor::WELLKNOWNTYPE_UNSPECIFIED) {
    return false;
  }
  // Fields and oneofs already given, by index.
  absl::InlinedVector<bool, 32> seen(
      static_cast<size_t>(type->field_count() + type->oneof_decl_count()));
  for (const simdjson::dom::key_value_pair member : object) {
    const FD* field = nullptr;
    for (int i = 0; i < type->field_count() && field == nullptr; ++i) {
      const FD* candidate = type->field(i);
      if (candidate->json_name() == member.key ||
          candidate->name() == member.key) {
        field = candidate;
      }
    }
    if (field == nullptr || field->is_map() || member.value.is_null() ||
        seen[static_cast<size_t>(field->index())]) {
      return false;
    }
    seen[static_cast<size_t>(field->index())] = true;
    if (const google::protobuf::OneofDescriptor* oneof =
            field->real_containing_oneof()) {
      const auto slot =
          static_cast<size_t>(type->field_count() + oneof->index());
      if (seen[slot]) return false;
      seen[slot] = true;
    }
    if (!field->is_repeated()) {
      if (!ReadOne(member.value, message, field, /*add=*/false)) return false;
      continue;
    }
    simdjson::dom::array array;
    if (member.value.get_array().get(array) != simdjson::SUCCESS) return false;
    for (const simdjson::dom::element item : array) {
      if (item.is_null() || !ReadOne(item, message, field, /*add=*/true)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

absl::Status ParseJsonRequest(absl::string_view json,
                              google::protobuf::Message* message) {
  if (json.find_first_not_of(" \t\r\n") == absl::string_view::npos) {
    json = "{}";  // an empty body is the empty request
  }
  // Syntax and depth first, with a parser that stops at the bound: protobuf
  // then only sees well-formed, shallow JSON.
  thread_local simdjson::dom::parser checker;
  const ParserLease lease(checker);
  if (checker.capacity() < json.size() ||
      checker.max_depth() != static_cast<size_t>(kMaxJsonDepth)) {
    if (checker.allocate(json.size(), kMaxJsonDepth) != simdjson::SUCCESS) {
      return absl::ResourceExhaustedError(
          "cannot allocate the JSON parser's buffers for the request body");
    }
  }
  simdjson::padded_string padded(json.data(), json.size());
  simdjson::dom::element root;
  if (const auto error = checker.parse(padded).get(root); error) {
    if (error == simdjson::DEPTH_ERROR) {
      return absl::InvalidArgumentError(
          absl::StrCat("the request body is not valid JSON: ",
                       simdjson::error_message(error), " (nesting deeper than ",
                       kMaxJsonDepth, ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "the request body is not valid JSON at byte ", ErrorOffset(padded),
        ": ", simdjson::error_message(error)));
  }
  // Most bodies are read straight from the DOM (ReadObject); protobuf's
  // parser (about 5 µs for a one-field request: a type resolver, a binary
  // round trip) reads those it declines, and words every error.
  if (root.is_object() &&
      ReadObject(root.get_object().value_unsafe(), message)) {
    return absl::OkStatus();
  }
  message->Clear();
  return ParseJsonByProtobuf(json, message);
}

absl::Status ParseJsonByProtobuf(absl::string_view json,
                                 google::protobuf::Message* message) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message,
      options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request body is not a valid ",
                     message->GetDescriptor()->full_name(), ": ",
                     parsed.message().as_string()));
  }
  return absl::OkStatus();
}

bool ParseJsonByReflection(absl::string_view json,
                           google::protobuf::Message* message) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.allocate(json.size(), kMaxJsonDepth) != simdjson::SUCCESS ||
      parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS) {
    return false;
  }
  return root.is_object() &&
         ReadObject(root.get_object().value_unsafe(), message);
}

bool PercentDecode(absl::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '+') {
      *out += ' ';
    } else if (c == '%') {
      int value = 0;
      if (i + 2 >= in.size() ||
          in.substr(i + 1, 2).find_first_not_of("0123456789abcdefABCDEF") !=
              absl::string_view::npos ||
          !absl::SimpleHexAtoi(in.substr(i + 1, 2), &value)) {
        return false;
      }
      *out += static_cast<char>(value);
      i += 2;
    } else {
      *out += c;
    }
  }
  return true;
}

namespace {

const google::protobuf::FieldDescriptor* FindField(
    const google::protobuf::Descriptor* type, absl::string_view name) {
  const std::string key(name);
  if (const auto* f = type->FindFieldByName(key)) return f;
  for (int i = 0; i < type->field_count(); ++i) {
    if (type->field(i)->json_name() == key) return type->field(i);
  }
  return nullptr;
}

}  // namespace

namespace {

// The message and scalar field a query parameter's key ("versions.
// emulationVersion") names, with its JSON or proto field names;
// INVALID_ARGUMENT naming the parameter otherwise.
absl::Status ResolveQueryField(google::protobuf::Message* message,
                               const std::string& key,
                               google::protobuf::Message** target_out,
                               const FD** field_out) {
  google::protobuf::Message* target = message;
  const google::protobuf::FieldDescriptor* field = nullptr;
  const std::vector<absl::string_view> path = absl::StrSplit(key, '.');
  for (size_t i = 0; i < path.size(); ++i) {
    field = FindField(target->GetDescriptor(), path[i]);
    if (field == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("query parameter ", JsonQuote(key), ": ",
                       target->GetDescriptor()->full_name(), " has no field ",
                       JsonQuote(path[i])));
    }
    if (field->is_repeated()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "query parameter ", JsonQuote(key), ": ", field->full_name(),
          " is repeated; POST the request as JSON"));
    }
    const bool last = i + 1 == path.size();
    if (field->cpp_type() ==
        google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (last) {
        return absl::InvalidArgumentError(absl::StrCat(
            "query parameter ", JsonQuote(key), ": ", field->full_name(),
            " is a message; name one of its fields, e.g. ", key, ".",
            field->message_type()->field(0)->json_name()));
      }
      target = target->GetReflection()->MutableMessage(target, field);
    } else if (!last) {
      return absl::InvalidArgumentError(
          absl::StrCat("query parameter ", JsonQuote(key), ": ",
                       field->full_name(), " has no fields"));
    }
  }
  *target_out = target;
  *field_out = field;
  return absl::OkStatus();
}

// Sets `field` of `target` from the parameter's decoded `value`, typed by
// the field; INVALID_ARGUMENT naming the parameter and what it takes.
absl::Status SetQueryValue(google::protobuf::Message* target, const FD* field,
                           const std::string& key, const std::string& value) {
  const google::protobuf::Reflection* r = target->GetReflection();
  auto bad = [&](absl::string_view expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("query parameter ", JsonQuote(key), "=", JsonQuote(value),
                     ": expected ", expected));
  };
  switch (field->cpp_type()) {
    case FD::CPPTYPE_STRING:
      // As the POST form (whose JSON must be UTF-8) and protobuf's binary
      // form over gRPC: a string field holds UTF-8 text.
      if (field->type() == FD::TYPE_STRING && !IsUtf8(value)) {
        return bad("UTF-8 text (the percent-decoded bytes are not UTF-8)");
      }
      r->SetString(target, field, value);
      break;
    case FD::CPPTYPE_BOOL:
      if (value == "true" || value.empty()) {
        r->SetBool(target, field, true);
      } else if (value == "false") {
        r->SetBool(target, field, false);
      } else {
        return bad("true or false");
      }
      break;
    case FD::CPPTYPE_INT32: {
      int32_t v = 0;
      if (!absl::SimpleAtoi(value, &v)) return bad("a 32-bit integer");
      r->SetInt32(target, field, v);
      break;
    }
    case FD::CPPTYPE_INT64: {
      int64_t v = 0;
      if (!absl::SimpleAtoi(value, &v)) return bad("a 64-bit integer");
      r->SetInt64(target, field, v);
      break;
    }
    case FD::CPPTYPE_UINT32: {
      uint32_t v = 0;
      if (!absl::SimpleAtoi(value, &v)) return bad("an unsigned integer");
      r->SetUInt32(target, field, v);
      break;
    }
    case FD::CPPTYPE_UINT64: {
      uint64_t v = 0;
      if (!absl::SimpleAtoi(value, &v)) return bad("an unsigned integer");
      r->SetUInt64(target, field, v);
      break;
    }
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT: {
      double v = 0;
      if (!absl::SimpleAtod(value, &v)) return bad("a number");
      if (field->cpp_type() == FD::CPPTYPE_DOUBLE) {
        r->SetDouble(target, field, v);
      } else {
        r->SetFloat(target, field, static_cast<float>(v));
      }
      break;
    }
    case FD::CPPTYPE_ENUM: {
      const auto* e = field->enum_type()->FindValueByName(value);
      if (e == nullptr) {
        return bad(absl::StrCat("a value of ", field->enum_type()->full_name(),
                                ", e.g. ",
                                field->enum_type()->value(0)->name()));
      }
      r->SetEnum(target, field, e);
      break;
    }
    case FD::CPPTYPE_MESSAGE:
      break;  // refused above
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<QueryPair>> SplitQuery(absl::string_view query) {
  std::vector<QueryPair> pairs;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const size_t equals = pair.find('=');
    QueryPair& out = pairs.emplace_back();
    out.raw = pair;
    if (!PercentDecode(pair.substr(0, equals), &out.key) ||
        (equals != absl::string_view::npos &&
         !PercentDecode(pair.substr(equals + 1), &out.value))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "query parameter ", JsonQuote(pair), ": bad percent-escape"));
    }
  }
  return pairs;
}

absl::Status ParseQueryRequest(absl::string_view query,
                               google::protobuf::Message* message) {
  absl::StatusOr<std::vector<QueryPair>> pairs = SplitQuery(query);
  if (!pairs.ok()) return pairs.status();
  std::set<std::string> seen;
  for (const auto& [key, value, raw] : *pairs) {
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("query parameter ", JsonQuote(key),
                       " is given twice; a GET request takes scalar fields "
                       "once each (POST the JSON for repeated fields)"));
    }
    google::protobuf::Message* target = nullptr;
    const FD* field = nullptr;
    if (absl::Status s = ResolveQueryField(message, key, &target, &field);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = SetQueryValue(target, field, key, value); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

namespace {

// The code points above U+007F protobuf's JSON printer writes as \u escapes
// (protobuf 3.21, util/internal/json_escaping.cc; measured against
// MessageToJsonString for every code point): C1 controls, format and
// invisible characters, U+2028 and U+2029, tags.
bool ProtobufEscapes(uint32_t code) {
  return (code >= 0x80 && code <= 0x9f) || code == 0xad ||
         (code >= 0x600 && code <= 0x603) || code == 0x6dd || code == 0x70f ||
         code == 0x17b4 || code == 0x17b5 ||
         (code >= 0x200b && code <= 0x200f) ||
         (code >= 0x2028 && code <= 0x202e) ||
         (code >= 0x2060 && code <= 0x2064) ||
         (code >= 0x206a && code <= 0x206f) || code == 0xfeff ||
         (code >= 0xfff9 && code <= 0xfffb) ||
         (code >= 0x1d173 && code <= 0x1d17a) || code == 0xe0001 ||
         (code >= 0xe0020 && code <= 0xe007f);
}

// True for the ASCII characters AppendEscaped copies as they are.
inline bool PlainJsonChar(unsigned char c) {
  return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>';
}

// Appends `text` as protobuf's JSON printer escapes it (util/internal/
// json_escaping.cc): '"' '\\' and control characters, '<' '>' and U+007F as
// \u00XX, the code points of ProtobufEscapes as \uXXXX (a surrogate pair
// beyond U+FFFF); other UTF-8 as is. False for invalid UTF-8 (the caller then
// lets protobuf print the message).
bool AppendEscaped(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < text.size(); ++i) {
    // Runs of characters that need no escaping are copied at once.
    size_t plain = i;
    while (plain < text.size() &&
           PlainJsonChar(static_cast<unsigned char>(text[plain]))) {
      ++plain;
    }
    if (plain > i) {
      out->append(text.data() + i, plain - i);
      i = plain;
      if (i == text.size()) break;
    }
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out->append("\\\"");
          break;
        case '\\':
          out->append("\\\\");
          break;
        case '\b':
          out->append("\\b");
          break;
        case '\f':
          out->append("\\f");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        default:
          if (c < 0x20 || c == '<' || c == '>' || c == 0x7f) {
            absl::StrAppend(out, "\\u00", absl::Hex(c, absl::kZeroPad2));
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      continue;
    }
    // A multi-byte sequence: check it, copy it (U+2028/9 escaped).
    const int length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (length == 0 || c > 0xf4 || i + length > text.size()) return false;
    uint32_t code = c & (0xff >> (length + 1));
    for (int k = 1; k < length; ++k) {
      const unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    if ((length == 2 && code < 0x80) || (length == 3 && code < 0x800) ||
        (length == 4 && (code < 0x10000 || code > 0x10ffff)) ||
        (code >= 0xd800 && code <= 0xdfff)) {
      return false;
    }
    if (ProtobufEscapes(code)) {
      if (code > 0xffff) {  // as a UTF-16 surrogate pair
        const uint32_t v = code - 0x10000;
        absl::StrAppend(out, "\\u", absl::Hex(0xd800 + (v >> 10)), "\\u",
                        absl::Hex(0xdc00 + (v & 0x3ff)));
      } else {
        absl::StrAppend(out, "\\u", absl::Hex(code, absl::kZeroPad4));
      }
    } else {
      out->append(text.data() + i, static_cast<size_t>(length));
    }
    i += length - 1;
  }
  out->push_back('"');
  return true;
}

// One value of `field` (the `index`th when repeated). False for what this
// printer leaves to protobuf.
bool AppendValue(const google::protobuf::Message& message,
                 const google::protobuf::Reflection* r, const FD* field,
                 int index, std::string* out);

// How a message type is printed, worked out once per type and thread: its
// fields in order with their keys ("\"jsonName\":") already written.
struct JsonPlan {
  struct Field {
    const FD* field;
    std::string key;
    // Unset message, oneof member or optional: omitted.
    bool omit_unless_set;
  };
  // False for what protobuf prints: well-known types (Timestamp, Duration,
  // Struct, ...: protobuf's forms) and messages with a map field.
  bool printable = true;
  std::vector<Field> fields;
};

const JsonPlan& PlanFor(const google::protobuf::Descriptor* type) {
  // Descriptors of generated messages live as long as the process.
  thread_local absl::flat_hash_map<const google::protobuf::Descriptor*,
                                   std::unique_ptr<JsonPlan>>
      plans;
  std::unique_ptr<JsonPlan>& plan = plans[type];
  if (plan != nullptr) return *plan;
  plan = std::make_unique<JsonPlan>();
  plan->printable = type->well_known_type() ==
                    google::protobuf::Descriptor::WELLKNOWNTYPE_UNSPECIFIED;
  // protobuf's printer (3.21) writes proto3 `optional` fields (each in a
  // synthetic oneof) after the others, each group in declaration order.
  for (const bool optional_fields : {false, true}) {
    for (int i = 0; i < type->field_count() && plan->printable; ++i) {
      const FD* field = type->field(i);
      const google::protobuf::OneofDescriptor* oneof =
          field->containing_oneof();
      if ((oneof != nullptr && oneof->is_synthetic()) != optional_fields) {
        continue;
      }
      if (field->is_map()) plan->printable = false;
      plan->fields.push_back(
          {field, absl::StrCat("\"", field->json_name(), "\":"),
           !field->is_repeated() && (field->cpp_type() == FD::CPPTYPE_MESSAGE ||
                                     field->has_presence())});
    }
  }
  return *plan;
}

bool AppendMessage(const google::protobuf::Message& message, std::string* out) {
  const JsonPlan& plan = PlanFor(message.GetDescriptor());
  if (!plan.printable) return false;
  const google::protobuf::Reflection* r = message.GetReflection();
  out->push_back('{');
  bool first = true;
  for (const JsonPlan::Field& f : plan.fields) {
    if (f.omit_unless_set && !r->HasField(message, f.field)) continue;
    if (!first) out->push_back(',');
    first = false;
    out->append(f.key);
    if (f.field->is_repeated()) {
      out->push_back('[');
      const int size = r->FieldSize(message, f.field);
      for (int k = 0; k < size; ++k) {
        if (k > 0) out->push_back(',');
        if (!AppendValue(message, r, f.field, k, out)) return false;
      }
      out->push_back(']');
    } else if (!AppendValue(message, r, f.field, -1, out)) {
      return false;
    }
  }
  out->push_back('}');
  return true;
}

bool AppendValue(const google::protobuf::Message& message,
                 const google::protobuf::Reflection* r, const FD* field,
                 int index, std::string* out) {
  const bool repeated = index >= 0;
  switch (field->cpp_type()) {
    case FD::CPPTYPE_INT32:
      absl::StrAppend(out, repeated ? r->GetRepeatedInt32(message, field, index)
                                    : r->GetInt32(message, field));
      return true;
    case FD::CPPTYPE_UINT32:
      absl::StrAppend(out, repeated
                               ? r->GetRepeatedUInt32(message, field, index)
                               : r->GetUInt32(message, field));
      return true;
    case FD::CPPTYPE_INT64:
      absl::StrAppend(out, "\"",
                      repeated ? r->GetRepeatedInt64(message, field, index)
                               : r->GetInt64(message, field),
                      "\"");
      return true;
    case FD::CPPTYPE_UINT64:
      absl::StrAppend(out, "\"",
                      repeated ? r->GetRepeatedUInt64(message, field, index)
                               : r->GetUInt64(message, field),
                      "\"");
      return true;
    case FD::CPPTYPE_BOOL:
      out->append((repeated ? r->GetRepeatedBool(message, field, index)
                            : r->GetBool(message, field))
                      ? "true"
                      : "false");
      return true;
    case FD::CPPTYPE_ENUM: {
      const google::protobuf::EnumValueDescriptor* value =
          repeated ? r->GetRepeatedEnum(message, field, index)
                   : r->GetEnum(message, field);
      if (value == nullptr) return false;
      out->push_back('"');
      out->append(value->name());
      out->push_back('"');
      return true;
    }
    case FD::CPPTYPE_STRING: {
      if (field->type() == FD::TYPE_BYTES) return false;  // base64
      std::string scratch;
      const std::string& text =
          repeated
              ? r->GetRepeatedStringReference(message, field, index, &scratch)
              : r->GetStringReference(message, field, &scratch);
      return AppendEscaped(text, out);
    }
    case FD::CPPTYPE_MESSAGE:
      return AppendMessage(repeated
                               ? r->GetRepeatedMessage(message, field, index)
                               : r->GetMessage(message, field),
                           out);
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT:
      return false;  // protobuf's shortest round-trip formatting
  }
  return false;
}

}  // namespace

std::string ToJson(const google::protobuf::Message& message) {
  // protobuf's printer converts through the binary form and a type resolver
  // (about 8 µs for a GetFeature answer); this one walks the message with
  // reflection and writes the same bytes (tests/gateway/to_json_test.cc
  // holds it to protobuf's output), leaving to protobuf what it does not
  // print itself.
  std::string text;
  if (ToJsonByReflection(message, &text)) return text;
  text.clear();
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = false;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return text;
}

bool ToJsonByReflection(const google::protobuf::Message& message,
                        std::string* out) {
  out->clear();
  out->reserve(512);
  return AppendMessage(message, out);
}

void AppendJson(const google::protobuf::Message& message, std::string* out) {
  const size_t size = out->size();
  if (AppendMessage(message, out)) return;
  out->resize(size);
  out->append(ToJson(message));
}

// protobuf's printer, for the test that holds ToJson to it.
std::string ToJsonByProtobuf(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = false;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return text;
}

}  // namespace compatd::gateway
