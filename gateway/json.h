#pragma once

// JSON for the front door: grpc-gateway's error mapping, proto3 JSON both
// ways with a depth and syntax check before protobuf sees untrusted bytes,
// query strings as requests, and a small writer for the documents compatd
// builds itself.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json_quote.h"
#include "google/protobuf/message.h"

namespace compatd::gateway {

// The HTTP status grpc-gateway (runtime.HTTPStatusFromCode) maps a code to:
// INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE 400; NOT_FOUND 404;
// RESOURCE_EXHAUSTED 429; UNAVAILABLE 503; ... OK 200.
int HttpStatusOf(absl::StatusCode code);

// {"code":3,"message":"...","details":[]} (google.rpc.Status as JSON).
std::string StatusJson(const absl::Status& status);

// Nesting deeper than this is refused before protobuf parses a body
// (protobuf's parser spends seconds on deeply nested input).
inline constexpr int kMaxJsonDepth = 64;

// Parses `json` into `message` (unknown fields are errors). INVALID_ARGUMENT
// naming the byte offset for malformed JSON, the depth bound, or what
// protobuf's JSON mapping refused.
absl::Status ParseJsonRequest(absl::string_view json,
                              google::protobuf::Message* message);
// The two readers ParseJsonRequest chooses between, for tests: the DOM walk
// by reflection (false when it declines, `message` then unspecified) and
// protobuf's parser (JsonStringToMessage, no syntax or depth check first).
bool ParseJsonByReflection(absl::string_view json,
                           google::protobuf::Message* message);
absl::Status ParseJsonByProtobuf(absl::string_view json,
                                 google::protobuf::Message* message);

// A URL query ("name=WatchList&versions.emulationVersion=1.34") into
// `message`: each key is a field path (JSON or proto names), each value
// percent-decoded and typed by the field (bool, number, enum, string).
// INVALID_ARGUMENT naming the parameter for an unknown field, a message or
// repeated field (those take POST), a value of the wrong type, or a repeated
// parameter.
absl::Status ParseQueryRequest(absl::string_view query,
                               google::protobuf::Message* message);

// proto3 JSON with default values present ("enabled": false is there), byte
// for byte what protobuf's MessageToJsonString prints with
// always_print_primitive_fields, written by a reflection walk (about 8x
// faster); protobuf prints what the walk does not (bytes, doubles, maps,
// well-known types, invalid UTF-8).
std::string ToJson(const google::protobuf::Message& message);
// The reflection walk alone: false (and `out` unspecified) for a message it
// leaves to protobuf.
bool ToJsonByReflection(const google::protobuf::Message& message,
                        std::string* out);
// ToJson(message) appended to `out`, without a string of its own.
void AppendJson(const google::protobuf::Message& message, std::string* out);
// protobuf's own printer with the same options (for tests).
std::string ToJsonByProtobuf(const google::protobuf::Message& message);

// `text` as a JSON string literal, quotes included; bytes that are not
// well-formed UTF-8 (echoed paths and parameters can hold any) are U+FFFD,
// so that the document stays UTF-8 (RFC 8259 8.1). base/json_quote.h.
using base::JsonQuote;

// Percent-decodes a URL query component ('+' is a space). False for a bad
// escape.
bool PercentDecode(absl::string_view in, std::string* out);

// One key=value pair of a URL query, percent-decoded ("key" alone: an empty
// value); `raw` is the pair as sent.
struct QueryPair {
  std::string key;
  std::string value;
  absl::string_view raw;
};

// The pairs of `query` in order, empty ones skipped; INVALID_ARGUMENT naming
// a pair with a bad percent-escape.
absl::StatusOr<std::vector<QueryPair>> SplitQuery(absl::string_view query);

}  // namespace compatd::gateway
