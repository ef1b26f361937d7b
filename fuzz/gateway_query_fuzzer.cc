// Fuzzes the front door's query parameters: the version parameters of a
// webhook URL (gateway/url_query.h, ParseUrlVersions) and the GET form of an
// RPC (gateway/json.h, ParseQueryRequest: "name=WatchList&versions.
// emulationVersion=1.34" into the RPC's request message), with percent-
// decoding, and the proto3 JSON the answer is written in (ToJson).
//
// Input: "<RPC>\n<query>" ("GetFeature\nname=WatchList"); an unknown RPC
// name fuzzes ParseUrlVersions alone. Beyond "no crash, no sanitizer report":
//   - every error is INVALID_ARGUMENT naming a query parameter;
//   - ParseUrlVersions: mode is warn or enforce; the parameters it kept,
//     percent-encoded again, parse to the same values;
//   - ParseQueryRequest: ToJson of the request is byte for byte protobuf's
//     printer's, and that JSON parses back (ParseJsonRequest, the POST form)
//     into the same request, when protobuf can print it (valid UTF-8).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/rpcs.h"
#include "compatd/v1/compatd.pb.h"
#include "fuzz/fuzz_check.h"
#include "gateway/json.h"
#include "gateway/url_query.h"
#include "google/protobuf/util/message_differencer.h"

namespace {

namespace api = compatd::api;
namespace gateway = compatd::gateway;
namespace v1 = compatd::v1;

// The request message of a unary RPC.
std::unique_ptr<google::protobuf::Message> NewRequest(absl::string_view name) {
  const std::optional<api::Rpc> rpc = api::FindRpc(name);
  if (!rpc.has_value()) return nullptr;
  switch (*rpc) {
#define COMPATD_FUZZ_REQUEST(Name) \
  case api::Rpc::k##Name:          \
    return std::make_unique<v1::Name##Request>();
    COMPATD_UNARY_RPCS(COMPATD_FUZZ_REQUEST)
#undef COMPATD_FUZZ_REQUEST
    case api::Rpc::kWatchCatalog:
      return std::make_unique<v1::WatchCatalogRequest>();
  }
  return nullptr;
}

void CheckError(const absl::Status& status) {
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument,
             "a query error that is not INVALID_ARGUMENT");
  FUZZ_CHECK(absl::StrContains(status.message(), "query parameter"),
             "a query error that names no query parameter");
}

std::string Encode(absl::string_view value) {
  std::string out;
  for (const char c : value) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '.' || c == '_') {
      out += c;
    } else {
      absl::StrAppend(&out, "%", absl::Hex(u, absl::kZeroPad2));
    }
  }
  return out;
}

void CheckUrlVersions(absl::string_view query) {
  gateway::UrlVersions versions;
  const absl::Status status = gateway::ParseUrlVersions(query, &versions);
  if (!status.ok()) return CheckError(status);
  FUZZ_CHECK(versions.mode == "warn" || versions.mode == "enforce",
             "a mode other than warn or enforce");
  const std::string again = absl::StrCat(
      "emulationVersion=", Encode(versions.emulation_version),
      "&binaryVersion=", Encode(versions.binary_version),
      "&minCompatibilityVersion=", Encode(versions.min_compatibility_version),
      "&runtimeConfig=", Encode(versions.runtime_config),
      "&featureGates=", Encode(versions.feature_gates),
      "&mode=", Encode(versions.mode));
  gateway::UrlVersions reparsed;
  FUZZ_CHECK(gateway::ParseUrlVersions(again, &reparsed).ok(),
             "the parameters kept do not parse again");
  FUZZ_CHECK(reparsed.emulation_version == versions.emulation_version &&
                 reparsed.binary_version == versions.binary_version &&
                 reparsed.min_compatibility_version ==
                     versions.min_compatibility_version &&
                 reparsed.runtime_config == versions.runtime_config &&
                 reparsed.feature_gates == versions.feature_gates &&
                 reparsed.mode == versions.mode,
             "percent-encoding the parameters changes them");
  const compatd::engine::VersionQuery q = versions.Query();
  FUZZ_CHECK(q.emulation_version == versions.emulation_version &&
                 q.feature_gates == versions.feature_gates,
             "Query() does not carry the parameters");
}

void CheckQueryRequest(absl::string_view rpc, absl::string_view query) {
  std::unique_ptr<google::protobuf::Message> request = NewRequest(rpc);
  if (request == nullptr) return;
  const absl::Status status = gateway::ParseQueryRequest(query, request.get());
  if (!status.ok()) return CheckError(status);
  const std::string ours = gateway::ToJson(*request);
  const std::string protobufs = gateway::ToJsonByProtobuf(*request);
  if (protobufs.empty()) return;  // protobuf cannot print it (bad UTF-8)
  if (ours != protobufs) {
    std::fprintf(stderr, "ToJson:   %s\nprotobuf: %s\n", ours.c_str(),
                 protobufs.c_str());
  }
  FUZZ_CHECK(ours == protobufs, "ToJson differs from protobuf's printer");
  std::unique_ptr<google::protobuf::Message> back(request->New());
  const absl::Status parsed = gateway::ParseJsonRequest(ours, back.get());
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n%s\n", ours.c_str(), parsed.ToString().c_str());
  }
  FUZZ_CHECK(parsed.ok(), "the POST form of a GET request does not parse");
  FUZZ_CHECK(
      google::protobuf::util::MessageDifferencer::Equals(*request, *back),
      "the POST form of a GET request is another request");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const absl::string_view rpc = input.substr(0, newline);
  const absl::string_view query = newline == absl::string_view::npos
                                      ? absl::string_view()
                                      : input.substr(newline + 1);
  CheckUrlVersions(query);
  CheckQueryRequest(rpc, query);
  return 0;
}
