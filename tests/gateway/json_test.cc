// gateway/json.h: grpc-gateway's status mapping, google.rpc.Status bodies,
// proto3 JSON requests (syntax and depth checked before protobuf), query
// strings as requests, and percent-decoding.

#include "gateway/json.h"

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "compatd/v1/compatd.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::gateway {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// grpc-gateway v2 runtime/errors.go HTTPStatusFromCode, code by code.
TEST(HttpStatusOfTest, IsGrpcGatewaysTable) {
  const std::pair<absl::StatusCode, int> table[] = {
      {absl::StatusCode::kOk, 200},
      {absl::StatusCode::kCancelled, 499},
      {absl::StatusCode::kUnknown, 500},
      {absl::StatusCode::kInvalidArgument, 400},
      {absl::StatusCode::kDeadlineExceeded, 504},
      {absl::StatusCode::kNotFound, 404},
      {absl::StatusCode::kAlreadyExists, 409},
      {absl::StatusCode::kPermissionDenied, 403},
      {absl::StatusCode::kUnauthenticated, 401},
      {absl::StatusCode::kResourceExhausted, 429},
      // Deliberately not 412 (grpc-gateway's comment says so).
      {absl::StatusCode::kFailedPrecondition, 400},
      {absl::StatusCode::kAborted, 409},
      {absl::StatusCode::kOutOfRange, 400},
      {absl::StatusCode::kUnimplemented, 501},
      {absl::StatusCode::kInternal, 500},
      {absl::StatusCode::kUnavailable, 503},
      {absl::StatusCode::kDataLoss, 500},
  };
  for (const auto& [code, http] : table) {
    EXPECT_EQ(HttpStatusOf(code), http) << absl::StatusCodeToString(code);
  }
  // An unknown code: 500, as grpc-gateway's default.
  EXPECT_EQ(HttpStatusOf(static_cast<absl::StatusCode>(42)), 500);
}

TEST(StatusJsonTest, IsGoogleRpcStatus) {
  EXPECT_EQ(StatusJson(absl::NotFoundError("no such feature \"X\"")),
            R"({"code":5,"message":"no such feature \"X\"","details":[]})");
}

TEST(StatusJsonTest, EscapesEverythingJsonNeeds) {
  const std::string message =
      std::string("q\" b\\ n\n r\r t\t c\x01 d\x1f del\x7f é ") + '\0';
  const std::string json = StatusJson(absl::InvalidArgumentError(message));
  EXPECT_THAT(json, HasSubstr(R"(q\" b\\ n\n r\r t\t c\u0001 d\u001f)"));
  EXPECT_THAT(json, HasSubstr("\\u0000"));
  // It is JSON, and the message round-trips.
  google::protobuf::Struct parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok())
      << json;
  EXPECT_EQ(parsed.fields().at("message").string_value(), message);
  EXPECT_EQ(parsed.fields().at("code").number_value(), 3);
  EXPECT_TRUE(parsed.fields().at("details").has_list_value());
}

TEST(JsonQuoteTest, QuotesAndEscapes) {
  EXPECT_EQ(JsonQuote(""), "\"\"");
  EXPECT_EQ(JsonQuote("a\"b"), R"("a\"b")");
  EXPECT_EQ(JsonQuote("\x02"), R"("\u0002")");
}

TEST(JsonQuoteTest, KeepsUtf8AndReplacesWhatIsNot) {
  EXPECT_EQ(JsonQuote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  // A lone byte, a cut sequence, an overlong form, a surrogate, past
  // U+10FFFF: each byte that starts no well-formed sequence is U+FFFD.
  EXPECT_EQ(JsonQuote("/x\xff"), R"("/x\ufffd")");
  EXPECT_EQ(JsonQuote("\xe2\x82"), R"("\ufffd\ufffd")");
  EXPECT_EQ(JsonQuote("\xc0\xaf"), R"("\ufffd\ufffd")");
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");
  EXPECT_EQ(JsonQuote("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");
}

TEST(StatusJsonTest, AnEchoedPathOfAnyBytesIsStillJson) {
  const std::string json =
      StatusJson(absl::NotFoundError("/v1/\xff\xfe: no such RPC"));
  google::protobuf::Struct parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok())
      << json;
  EXPECT_EQ(parsed.fields().at("message").string_value(),
            "/v1/\xef\xbf\xbd\xef\xbf\xbd: no such RPC");
}

TEST(ParseJsonRequestTest, EmptyBodyIsTheEmptyRequest) {
  for (const char* body : {"", " ", "\r\n\t ", "{}"}) {
    v1::GetFeatureRequest request;
    request.set_name("stale");
    request.Clear();
    EXPECT_TRUE(ParseJsonRequest(body, &request).ok()) << '"' << body << '"';
    EXPECT_EQ(request.name(), "");
  }
}

TEST(ParseJsonRequestTest, ReadsJsonAndProtoNames) {
  v1::GetFeatureRequest request;
  ASSERT_OK(ParseJsonRequest(
      R"({"name":"WatchList","versions":{"emulationVersion":"1.34",)"
      R"("feature_gates":"A=true","emulationForwardCompatible":true}})",
      &request));
  EXPECT_EQ(request.name(), "WatchList");
  EXPECT_EQ(request.versions().emulation_version(), "1.34");
  EXPECT_EQ(request.versions().feature_gates(), "A=true");
  EXPECT_TRUE(request.versions().has_emulation_forward_compatible());
  EXPECT_TRUE(request.versions().emulation_forward_compatible());
}

// ParseJsonRequest reads most bodies itself (ParseJsonByReflection) and
// leaves the rest to protobuf. Whatever the reflection reader accepts,
// protobuf's parser must read into the same message; what it declines,
// protobuf decides.
template <typename Message>
void ExpectSameAsProtobuf(absl::string_view body, bool reflection_reads) {
  Message ours;
  Message theirs;
  const bool read = ParseJsonByReflection(body, &ours);
  EXPECT_EQ(read, reflection_reads) << body;
  const absl::Status protobuf = ParseJsonByProtobuf(body, &theirs);
  if (read) {
    ASSERT_TRUE(protobuf.ok()) << body << ": " << protobuf;
    EXPECT_TRUE(
        google::protobuf::util::MessageDifferencer::Equals(ours, theirs))
        << body << "\nreflection: " << ours.ShortDebugString()
        << "\nprotobuf: " << theirs.ShortDebugString();
  }
  // And ParseJsonRequest answers what protobuf does.
  Message request;
  const absl::Status status = ParseJsonRequest(body, &request);
  EXPECT_EQ(status.ok(), protobuf.ok()) << body << ": " << status;
  if (status.ok()) {
    EXPECT_TRUE(
        google::protobuf::util::MessageDifferencer::Equals(request, theirs))
        << body;
  }
}

TEST(ParseJsonRequestTest, ReflectionReadsTheCommonFormsAsProtobufDoes) {
  using v1::ComputeStorageVersionAgreementRequest;
  using v1::GetFeatureRequest;
  using v1::GetFeatureResponse;
  using v1::PlanVersionRemovalRequest;
  ExpectSameAsProtobuf<GetFeatureRequest>("{}", true);
  ExpectSameAsProtobuf<GetFeatureRequest>(R"({"name":"WatchList"})", true);
  ExpectSameAsProtobuf<GetFeatureRequest>(
      R"( { "name" : "Watch\u004cist\n\"" , "versions" : { } } )", false);
  ExpectSameAsProtobuf<GetFeatureRequest>(
      R"({"name":"Watch\u004cist\u00e9\/","versions":{}})", true);
  ExpectSameAsProtobuf<GetFeatureRequest>(
      R"({"versions":{"binaryVersion":"1.36","emulation_version":"1.34",)"
      R"("minCompatibilityVersion":"1.33","featureGates":"A=true,B=false",)"
      R"("runtime_config":"api/beta=true","emulationForwardCompatible":false,)"
      R"("runtimeConfigEmulationForwardCompatible":true},"name":"é中"})",
      true);
  ExpectSameAsProtobuf<ComputeStorageVersionAgreementRequest>(
      R"({"storageVersions":[{"apiserverId":"a","encodingVersion":"apps/v1",)"
      R"("decodableVersions":["apps/v1","apps/v1beta2"]},{}],)"
      R"("participants":["a","b"],"group":"apps","resource":"deployments"})",
      true);
  ExpectSameAsProtobuf<PlanVersionRemovalRequest>(
      R"({"crd":"c.x.io","version":"v1beta1","history":{"name":"c.x.io",)"
      R"("upgradeSpan":3,"deprecation_releases":-1,"revertBufferReleases":)"
      R"(2147483647,"releases":[{"release":"v1.5","versions":[{"name":"v1",)"
      R"("served":true,"storage":true,"deprecated":false}],)"
      R"("storageVersionMigration":true,"managedFieldsCleanup":false}]}})",
      true);
  ExpectSameAsProtobuf<v1::EvaluateRequest>(
      R"({"versions":{"emulationVersion":"1.35"},"items":[)"
      R"({"getFeature":{"name":"WatchList"}},)"
      R"({"check_skew":{"component":"kubelet","clientVersion":"1.33.2"}},{}]})",
      true);
  ExpectSameAsProtobuf<GetFeatureResponse>(
      R"({"stage":"STAGE_BETA","catalogGeneration":18446744073,)"
      R"("enabled":true,"defaultEnabled":false,"lockedToDefault":true})",
      true);
}

TEST(ParseJsonRequestTest, ReflectionLeavesTheRestToProtobuf) {
  using v1::GetFeatureRequest;
  using v1::GetFeatureResponse;
  using v1::PlanVersionRemovalRequest;
  for (const char* body : {
           R"({"name":null})",                        // null
           R"({"name":"a","name":"b"})",              // a key twice
           R"({"versions":{},"versions":{}})",        //
           R"({"name":"a","nmae":"b"})",              // unknown key
           R"({"name":7})",                           // wrong type
           R"({"name":true})",                        //
           R"({"name":["a"]})",                       // an array for a scalar
           R"({"versions":"1.34"})",                  // a string for a message
           R"({"versions":{"binaryVersion":1.34}})",  //
           R"({"versions":{"emulationForwardCompatible":"true"}})",
           R"({"versions":{"emulationForwardCompatible":1}})",
           R"({"name":"a\u0000b"})",  // control characters
           R"({"name":"a\tb"})",
           "[]",
           "1",
           "null",
       }) {
    ExpectSameAsProtobuf<GetFeatureRequest>(body, false);
  }
  // Two members of one oneof.
  ExpectSameAsProtobuf<v1::EvaluateRequest>(
      R"({"items":[{"getFeature":{},"checkSkew":{}}]})", false);
  // The same field by its JSON name and its proto name.
  ExpectSameAsProtobuf<GetFeatureRequest>(
      R"({"versions":{"binaryVersion":"1","binary_version":"2"}})", false);
  for (const char* body : {
           R"({"history":{"upgradeSpan":"3"}})",          // a quoted number
           R"({"history":{"upgradeSpan":3.0}})",          // not an integer
           R"({"history":{"upgradeSpan":3e0}})",          //
           R"({"history":{"upgradeSpan":2147483648}})",   // out of int32
           R"({"history":{"upgradeSpan":-2147483649}})",  //
           R"({"history":{"releases":[null]}})",          // null in an array
           R"({"history":{"releases":{}}})",              // not an array
           R"({"history":{"releases":[{"versions":[1]}]}})",
       }) {
    ExpectSameAsProtobuf<PlanVersionRemovalRequest>(body, false);
  }
  for (const char* body : {
           R"({"stage":3})",                // an enum by number
           R"({"stage":"STAGE_NOPE"})",     // an unknown enum name
           R"({"stage":"stage_beta"})",     //
           R"({"catalogGeneration":"7"})",  // a quoted 64-bit number
           R"({"catalogGeneration":-1})",   // negative for unsigned
           R"({"catalogGeneration":18446744073709551615})",  // past int64
       }) {
    ExpectSameAsProtobuf<GetFeatureResponse>(body, false);
  }
}

TEST(ParseJsonRequestTest, UnknownFieldIsAnError) {
  v1::GetFeatureRequest request;
  EXPECT_THAT(ParseJsonRequest(R"({"name":"WatchList","nmae":"x"})", &request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("compatd.v1.GetFeatureRequest"),
                             HasSubstr("nmae"))));
}

TEST(ParseJsonRequestTest, WrongTypeIsAnError) {
  v1::GetFeatureRequest request;
  EXPECT_THAT(ParseJsonRequest(R"({"name":7})", &request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not a valid compatd.v1.GetFeatureRequest")));
}

TEST(ParseJsonRequestTest, MalformedJsonIsAnError) {
  for (const char* body :
       {"{", "{\"name\":}", "[1,2", "nul", "{\"name\":\"x\"} trailing",
        "{\"name\":\"\xff\"}", "'single'"}) {
    v1::GetFeatureRequest request;
    EXPECT_THAT(ParseJsonRequest(body, &request),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("not valid JSON")))
        << body;
  }
}

TEST(ParseJsonRequestTest, MalformedJsonNamesTheByteOffset) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"name":})", "at byte 8:"},
      {R"({"name":"x",,"b":1})", "at byte 12:"},
      {R"({"a":[1,2})", "at byte 9:"},
      {R"({"name":"x"}})", "at byte 12:"},
      {R"({"name")", "at byte 7:"},
  };
  for (const auto& [body, where] : cases) {
    v1::GetFeatureRequest request;
    EXPECT_THAT(ParseJsonRequest(body, &request),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(where)))
        << body;
  }
}

TEST(ParseJsonRequestTest, NotAnObjectIsAnError) {
  for (const char* body : {"[]", "1", "\"name\"", "null", "true"}) {
    v1::GetFeatureRequest request;
    EXPECT_THAT(ParseJsonRequest(body, &request),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("")))
        << body;
  }
}

TEST(ParseJsonRequestTest, DepthOverTheBoundIsRefusedQuickly) {
  // 64 levels pass the check (protobuf then refuses the unknown field).
  std::string shallow;
  for (int i = 0; i < kMaxJsonDepth - 1; ++i) shallow += "{\"a\":";
  shallow += "1";
  for (int i = 0; i < kMaxJsonDepth - 1; ++i) shallow += "}";
  v1::GetFeatureRequest request;
  EXPECT_THAT(ParseJsonRequest(shallow, &request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::Not(HasSubstr("nesting deeper"))));

  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(100000, '}');
  for (const std::string& deep :
       {std::string(100000, '[') + std::string(100000, ']'), objects}) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THAT(ParseJsonRequest(deep, &request),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("nesting deeper than 64")));
    EXPECT_LT(std::chrono::steady_clock::now() - start,
              std::chrono::milliseconds(200));
  }
  // Unbalanced as well: refused as malformed, as quickly.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(ParseJsonRequest(std::string(100000, '['), &request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not valid JSON")));
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(200));
}

// A string field holds UTF-8 text, as the POST form's JSON and gRPC's
// binary form require; the GET form once took any bytes, so its request
// differed from the same request POSTed. Found by the gateway_query fuzz
// target (fuzz/regressions/gateway_query/).
TEST(ParseQueryRequestTest, StringsMustBeUtf8) {
  v1::CheckSkewRequest request;
  const absl::Status status =
      ParseQueryRequest("component=kube%FFproxy&clientVersion=1.31", &request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("query parameter \"component\""));
  EXPECT_THAT(status.message(), HasSubstr("UTF-8"));
  EXPECT_OK(ParseQueryRequest("component=caf%C3%A9", &request));
  EXPECT_EQ(request.component(), "caf\xc3\xa9");
}

TEST(ParseQueryRequestTest, ReadsScalarsAndNestedVersions) {
  v1::GetFeatureRequest request;
  ASSERT_OK(
      ParseQueryRequest("name=WatchList&versions.emulationVersion=1.34"
                        "&versions.feature_gates=A%3Dtrue%2CB%3Dfalse"
                        "&versions.runtimeConfig=api%2Fbeta%3Dtrue",
                        &request));
  EXPECT_EQ(request.name(), "WatchList");
  EXPECT_EQ(request.versions().emulation_version(), "1.34");
  EXPECT_EQ(request.versions().feature_gates(), "A=true,B=false");
  EXPECT_EQ(request.versions().runtime_config(), "api/beta=true");
}

TEST(ParseQueryRequestTest, JsonAndProtoNamesAreBothAccepted) {
  v1::CheckSkewRequest by_json, by_proto;
  ASSERT_OK(
      ParseQueryRequest("component=kubelet&clientVersion=v1.31.0"
                        "&versions.minCompatibilityVersion=1.35",
                        &by_json));
  ASSERT_OK(
      ParseQueryRequest("component=kubelet&client_version=v1.31.0"
                        "&versions.min_compatibility_version=1.35",
                        &by_proto));
  EXPECT_EQ(by_json.SerializeAsString(), by_proto.SerializeAsString());
  EXPECT_EQ(by_json.client_version(), "v1.31.0");
}

TEST(ParseQueryRequestTest, Booleans) {
  v1::GetFeatureRequest request;
  ASSERT_OK(
      ParseQueryRequest("versions.emulationForwardCompatible=true", &request));
  EXPECT_TRUE(request.versions().has_emulation_forward_compatible());
  EXPECT_TRUE(request.versions().emulation_forward_compatible());
  request.Clear();
  ASSERT_OK(
      ParseQueryRequest("versions.emulationForwardCompatible=false", &request));
  EXPECT_TRUE(request.versions().has_emulation_forward_compatible());
  EXPECT_FALSE(request.versions().emulation_forward_compatible());
  request.Clear();
  // A bare key is true (as grpc-gateway's ?flag).
  ASSERT_OK(ParseQueryRequest("versions.emulationForwardCompatible", &request));
  EXPECT_TRUE(request.versions().emulation_forward_compatible());
  EXPECT_THAT(
      ParseQueryRequest("versions.emulationForwardCompatible=yes", &request),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("expected true or false")));
}

TEST(ParseQueryRequestTest, NumbersAndEnums) {
  v1::LintFinding finding;
  ASSERT_OK(ParseQueryRequest("severity=LINT_SEVERITY_WARNING&line=42&rule=x",
                              &finding));
  EXPECT_EQ(finding.severity(), v1::LINT_SEVERITY_WARNING);
  EXPECT_EQ(finding.line(), 42);
  EXPECT_THAT(ParseQueryRequest("severity=LOUD", &finding),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("compatd.v1.LintSeverity"),
                             HasSubstr("LINT_SEVERITY_UNSPECIFIED"))));
  EXPECT_THAT(ParseQueryRequest("line=4x", &finding),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("a 32-bit integer")));
  EXPECT_THAT(ParseQueryRequest("line=99999999999", &finding),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("a 32-bit integer")));
  v1::CatalogCounts counts;
  ASSERT_OK(ParseQueryRequest("features=240", &counts));
  EXPECT_EQ(counts.features(), 240u);
  EXPECT_THAT(ParseQueryRequest("features=-1", &counts),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("an unsigned integer")));
  v1::PlanVersionRemovalRequest plan;
  ASSERT_OK(
      ParseQueryRequest("crd=x.example.com&history.upgradeSpan=3", &plan));
  EXPECT_EQ(plan.history().upgrade_span(), 3);
}

TEST(ParseQueryRequestTest, RepeatedFieldIsRefused) {
  v1::ComputeStorageVersionAgreementRequest request;
  EXPECT_THAT(ParseQueryRequest("participants=a", &request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("is repeated"),
                             HasSubstr("POST the request as JSON"))));
  v1::PlanVersionRemovalRequest plan;
  EXPECT_THAT(
      ParseQueryRequest("history.releases.release=1.30", &plan),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is repeated")));
}

TEST(ParseQueryRequestTest, RepeatedParameterIsRefused) {
  v1::GetFeatureRequest request;
  EXPECT_THAT(ParseQueryRequest("name=A&name=B", &request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"name\" is given twice")));
  // Also when the two spellings decode to one key.
  EXPECT_THAT(
      ParseQueryRequest("name=A&na%6De=B", &request),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("given twice")));
}

TEST(ParseQueryRequestTest, UnknownFieldsAndMessagesAreRefused) {
  v1::GetFeatureRequest request;
  EXPECT_THAT(ParseQueryRequest("nmae=A", &request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("compatd.v1.GetFeatureRequest"),
                             HasSubstr("no field \"nmae\""))));
  EXPECT_THAT(ParseQueryRequest("versions.emulation=1.34", &request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("compatd.v1.VersionContext has no field")));
  EXPECT_THAT(ParseQueryRequest("versions=1.34", &request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("is a message"),
                             HasSubstr("versions.binaryVersion"))));
  EXPECT_THAT(
      ParseQueryRequest("name.first=A", &request),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has no fields")));
  EXPECT_THAT(
      ParseQueryRequest("=A", &request),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no field \"\"")));
}

TEST(ParseQueryRequestTest, BadPercentEscapeIsRefused) {
  v1::GetFeatureRequest request;
  for (const char* query : {"name=%", "name=%4", "name=%zz", "na%g1me=x",
                            "name=a%2", "name=%%41"}) {
    EXPECT_THAT(ParseQueryRequest(query, &request),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("bad percent-escape")))
        << query;
  }
}

TEST(ParseQueryRequestTest, EmptyPiecesAreSkipped) {
  v1::GetFeatureRequest request;
  ASSERT_OK(ParseQueryRequest("", &request));
  ASSERT_OK(ParseQueryRequest("&&name=WatchList&", &request));
  EXPECT_EQ(request.name(), "WatchList");
}

TEST(PercentDecodeTest, DecodesEscapesAndPlus) {
  std::string out;
  ASSERT_TRUE(PercentDecode("a+b%20c%2B%2b%41%7e", &out));
  EXPECT_EQ(out, "a b c++A~");
  ASSERT_TRUE(PercentDecode("", &out));
  EXPECT_EQ(out, "");
  ASSERT_TRUE(PercentDecode("%00", &out));
  EXPECT_EQ(out, std::string(1, '\0'));
  ASSERT_TRUE(PercentDecode("%C3%A9", &out));
  EXPECT_EQ(out, "é");
  ASSERT_TRUE(PercentDecode("plain", &out));
  EXPECT_EQ(out, "plain");
}

TEST(PercentDecodeTest, RefusesBadEscapes) {
  std::string out;
  for (const char* in : {"%", "%4", "a%", "%G0", "%0G", "%-1", "%+1", "% 1"}) {
    EXPECT_FALSE(PercentDecode(in, &out)) << in;
  }
}

TEST(ToJsonTest, PrintsDefaultsWithJsonNames) {
  v1::GetFeatureResponse response;
  response.set_name("WatchList");
  response.set_enabled(false);  // explicit presence: the handlers always set it
  const std::string json = ToJson(response);
  EXPECT_THAT(json, HasSubstr("\"enabled\":false"));
  EXPECT_THAT(json, HasSubstr("\"defaultEnabled\":false"));
  EXPECT_THAT(json, HasSubstr("\"name\":\"WatchList\""));
}

}  // namespace
}  // namespace compatd::gateway
