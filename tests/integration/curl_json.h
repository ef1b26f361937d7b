#pragma once

// The HTTP side of integration tests that talk to compatd's front door as a
// client would, with Debian's curl (HTTPS with a test CA included), and read
// its JSON answers as google.protobuf.Value: one copy for every test that
// needs it.
//
//   const CurlReply r = Curl({"--cacert", ca,
//   "https://127.0.0.1:8443/v1/..."}); EXPECT_EQ(r.status, 200); const
//   google::protobuf::Value v = ParseJson(r.body); EXPECT_EQ(JsonField(v,
//   "status").string_value(), "Success");

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"

namespace compatd::testing {

inline constexpr char kCurl[] = "/usr/bin/curl";

inline bool CurlPresent() { return access(kCurl, X_OK) == 0; }

struct CurlReply {
  int exit_code = -1;
  int status = 0;  // the HTTP status; 0 when curl got none
  std::string body;
  std::string err;
};

// curl -s -S --max-time <seconds> -w '\n%{http_code}' <args>: the body, then
// the status.
inline CurlReply Curl(std::vector<std::string> args, int max_seconds = 10) {
  args.insert(args.begin(),
              {"-s", "-S", "--max-time", std::to_string(max_seconds), "-w",
               "\n%{http_code}"});
  const RunResult run = RunCompatd(kCurl, args);
  CurlReply reply;
  reply.exit_code = run.exit_code;
  reply.err = run.err;
  const size_t newline = run.out.rfind('\n');
  if (newline != std::string::npos) {
    reply.body = run.out.substr(0, newline);
    reply.status = std::atoi(run.out.c_str() + newline + 1);
  }
  return reply;
}

// `text` as a google.protobuf.Value; a test failure (and a null value) when
// it is not JSON.
inline google::protobuf::Value ParseJson(const std::string& text) {
  google::protobuf::Value value;
  const auto status = google::protobuf::util::JsonStringToMessage(text, &value);
  EXPECT_TRUE(status.ok()) << status.ToString() << " in: " << text;
  return value;
}

// The field `name` of a JSON object; a null value when absent.
inline const google::protobuf::Value& JsonField(
    const google::protobuf::Value& object, const std::string& name) {
  static const google::protobuf::Value* const kNull =
      new google::protobuf::Value();
  const auto& fields = object.struct_value().fields();
  auto it = fields.find(name);
  return it == fields.end() ? *kNull : it->second;
}

}  // namespace compatd::testing
