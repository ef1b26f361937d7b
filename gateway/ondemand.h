#pragma once

// Reading untrusted JSON with simdjson On-Demand (AdmissionReview,
// ProviderRequest) without building a DOM. On-Demand checks only what is
// read: a value a reader does not need is skipped by counting brackets, so
// `{"spec":{"a":}}` or bytes after the root value would pass unnoticed and a
// malformed review could be answered. The readers walk what they do not need
// with SkipValue (every token checked, nothing kept) and end with CheckEnd.

#include "simdjson.h"

namespace compatd::gateway {

// As simdjson's own default bound on nesting.
inline constexpr int kMaxSkipDepth = 1024;

// Consumes `value` whole, checking its syntax as a full parse would: keys and
// strings are unescaped, numbers parsed (integers beyond 64 bits as doubles,
// as Kubernetes' decoder does), atoms matched. DEPTH_ERROR past `depth`
// levels; the first error otherwise.
simdjson::error_code SkipValue(
    simdjson::simdjson_result<simdjson::ondemand::value> value,
    int depth = kMaxSkipDepth);

// The nesting bound the parsers that feed SkipValue are allocated with:
// simdjson counts the root as level 1 and an opened array or object as one
// more, and SkipValue opens up to kMaxSkipDepth + 1 levels below the value it
// is given, which its callers reach through levels of their own
// (request.object.spec... in an AdmissionReview: at most a dozen). Past the
// parser's bound simdjson's development checks (the Debug and sanitizer
// builds) assert rather than answer DEPTH_ERROR, so the bound leaves room
// for those levels.
inline constexpr size_t kCallerLevels = 32;
inline constexpr size_t kParserMaxDepth = kMaxSkipDepth + 2 + kCallerLevels;

// parser.iterate(json) on a parser allocated for kParserMaxDepth levels and
// at least json's size.
simdjson::simdjson_result<simdjson::ondemand::document> Iterate(
    simdjson::ondemand::parser& parser, const simdjson::padded_string& json);

// SUCCESS when `document` was read to its end; TRAILING_CONTENT when
// anything but whitespace follows the root value.
simdjson::error_code CheckEnd(simdjson::ondemand::document& document);

// The readers keep one parser per thread and reuse it; its buffers grow to
// the largest body it has read, about 6 bytes a byte in simdjson 3.0.1 (a 16
// MiB AdmissionReview left about 91 MiB with the thread for its life,
// outside --max-http-memory-bytes). Buffers sized for more than this are
// given back after the call; smaller ones stay, so the usual bodies (an
// object is at most etcd's 1.5 MiB) parse without allocating.
inline constexpr size_t kKeptParserBytes = 2 * 1024 * 1024;

// Declared after a thread's reused parser and before the document read with
// it (so that it ends after the document): at its end, a parser whose
// capacity passed kKeptParserBytes is replaced by a fresh one, which
// allocates again on its next use. Parser: simdjson::ondemand::parser or
// simdjson::dom::parser.
template <class Parser>
class ParserLease {
 public:
  explicit ParserLease(Parser& parser) : parser_(parser) {}
  ~ParserLease() {
    if (parser_.capacity() > kKeptParserBytes) parser_ = Parser();
  }
  ParserLease(const ParserLease&) = delete;
  ParserLease& operator=(const ParserLease&) = delete;

 private:
  Parser& parser_;
};

}  // namespace compatd::gateway
