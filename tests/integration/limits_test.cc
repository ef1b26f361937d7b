// Limits and bad input against the real compatd binary: every limit flag and
// every request validation answers with a status and a message, and the
// server keeps serving afterwards.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace compatd {
namespace {

using ::compatd::testing::Subprocess;
using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

class LimitsTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "--listen=127.0.0.1:0", "--metrics-listen=", "--shutdown-grace=2s"};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(server_.Start(COMPATD_BINARY, args));
    ASSERT_TRUE(server_.WaitForStderr("serving catalog", 20s))
        << server_.Stderr();
    std::smatch match;
    const std::string err = server_.Stderr();
    ASSERT_TRUE(std::regex_search(
        err, match, std::regex("gRPC listening on 127\\.0\\.0\\.1:([0-9]+)")));
    address_ = "127.0.0.1:" + std::string(match[1]);
    channel_ = NewChannel();
    stub_ = v1::CompatibilityPolicy::NewStub(channel_);
  }

  std::shared_ptr<grpc::Channel> NewChannel() {
    grpc::ChannelArguments args;
    // A separate connection per channel (gRPC would share one otherwise).
    args.SetInt("compatd.test.channel", ++channels_);
    args.SetMaxSendMessageSize(64 * 1024 * 1024);
    return grpc::CreateCustomChannel(address_,
                                     grpc::InsecureChannelCredentials(), args);
  }

  static void SetDeadline(grpc::ClientContext* context,
                          std::chrono::milliseconds timeout = 5000ms) {
    context->set_deadline(std::chrono::system_clock::now() + timeout);
  }

  // The server still answers.
  bool Alive() {
    grpc::ClientContext context;
    SetDeadline(&context);
    v1::GetCatalogResponse response;
    return stub_->GetCatalog(&context, v1::GetCatalogRequest(), &response).ok();
  }

  Subprocess server_;
  std::string address_;
  int channels_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
};

TEST_F(LimitsTest, OversizedMessageIsResourceExhausted) {
  StartServer({"--max-recv-message-bytes=1024"});
  v1::GetFeatureRequest request;
  request.set_name("WatchList");
  request.mutable_versions()->set_feature_gates(std::string(2000, 'A'));
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::GetFeatureResponse response;
  const grpc::Status status = stub_->GetFeature(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("1024"));
  EXPECT_TRUE(Alive());
}

TEST_F(LimitsTest, DefaultMessageLimitAcceptsALargeEvaluate) {
  StartServer();
  v1::EvaluateRequest request;
  for (int i = 0; i < 1000; ++i) {
    request.add_items()->mutable_get_feature()->set_name("WatchList");
  }
  grpc::ClientContext context;
  SetDeadline(&context, 20000ms);
  v1::EvaluateResponse response;
  const grpc::Status status = stub_->Evaluate(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.results_size(), 1000);
}

TEST_F(LimitsTest, EvaluateBatchOverTheLimitIsInvalidArgument) {
  StartServer({"--max-evaluate-items=2"});
  v1::EvaluateRequest request;
  for (int i = 0; i < 3; ++i) request.add_items()->mutable_resolve_versions();
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::EvaluateResponse response;
  const grpc::Status status = stub_->Evaluate(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              AllOf(HasSubstr("items: 3 items, over the limit of 2"),
                    HasSubstr("--max-evaluate-items")));
}

TEST_F(LimitsTest, EvaluateBatchAtTheLimitIsAnswered) {
  StartServer({"--max-evaluate-items=2"});
  v1::EvaluateRequest request;
  for (int i = 0; i < 2; ++i) request.add_items()->mutable_resolve_versions();
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::EvaluateResponse response;
  EXPECT_TRUE(stub_->Evaluate(&context, request, &response).ok());
  EXPECT_EQ(response.results_size(), 2);
}

TEST_F(LimitsTest, InvalidEvaluateItemFailsOnlyThatItem) {
  StartServer();
  v1::EvaluateRequest request;
  request.add_items()->mutable_get_feature()->set_name("WatchList");
  request.add_items()->mutable_get_feature()->set_name("Watch List");
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::EvaluateResponse response;
  ASSERT_TRUE(stub_->Evaluate(&context, request, &response).ok());
  ASSERT_EQ(response.results_size(), 2);
  EXPECT_TRUE(response.results(0).has_get_feature());
  ASSERT_TRUE(response.results(1).has_error());
  EXPECT_EQ(response.results(1).error().code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(1).error().message(),
              HasSubstr("name \"Watch List\""));
}

TEST_F(LimitsTest, ExtraStreamsOnAFullConnectionWaitForAFreeStream) {
  StartServer({"--max-concurrent-streams=1"});
  // The one stream this connection may have: an open WatchCatalog.
  grpc::ClientContext watch_context;
  auto watch = stub_->WatchCatalog(&watch_context, v1::WatchCatalogRequest());
  v1::GetCatalogResponse first;
  ASSERT_TRUE(watch->Read(&first));
  // A second call on the same connection waits (HTTP/2 queues it on the
  // client) and runs out of its deadline...
  grpc::ClientContext queued;
  SetDeadline(&queued, 1000ms);
  v1::GetCatalogResponse response;
  EXPECT_EQ(stub_->GetCatalog(&queued, v1::GetCatalogRequest(), &response)
                .error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  // ...while another connection is served.
  auto other = v1::CompatibilityPolicy::NewStub(NewChannel());
  grpc::ClientContext elsewhere;
  SetDeadline(&elsewhere);
  EXPECT_TRUE(
      other->GetCatalog(&elsewhere, v1::GetCatalogRequest(), &response).ok());
  // Once the watch ends, the connection takes calls again.
  watch_context.TryCancel();
  watch->Finish();
  EXPECT_TRUE(Alive());
}

TEST_F(LimitsTest, WatchCatalogEndsWithOkAtTheCallDurationCap) {
  StartServer({"--max-call-duration=1s"});
  grpc::ClientContext context;  // no deadline: clamped to the cap
  const auto start = std::chrono::steady_clock::now();
  auto watch = stub_->WatchCatalog(&context, v1::WatchCatalogRequest());
  v1::GetCatalogResponse message;
  ASSERT_TRUE(watch->Read(&message));
  while (watch->Read(&message)) {
  }
  const grpc::Status status = watch->Finish();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_GE(elapsed, 900ms);
  EXPECT_LT(elapsed, 10s);
}

TEST_F(LimitsTest, LongDeadlinesAreClampedNotRefused) {
  StartServer({"--max-call-duration=1s"});
  grpc::ClientContext context;
  SetDeadline(&context, std::chrono::hours(1));
  v1::GetFeatureRequest request;
  request.set_name("WatchList");
  v1::GetFeatureResponse response;
  EXPECT_TRUE(stub_->GetFeature(&context, request, &response).ok());
}

TEST_F(LimitsTest, ClientDeadlineShorterThanTheCapStillApplies) {
  StartServer({"--max-call-duration=1h"});
  grpc::ClientContext context;
  SetDeadline(&context, 500ms);
  auto watch = stub_->WatchCatalog(&context, v1::WatchCatalogRequest());
  v1::GetCatalogResponse message;
  while (watch->Read(&message)) {
  }
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
}

TEST_F(LimitsTest, GarbageBytesAreAnErrorNotACrash) {
  StartServer();
  grpc::GenericStub generic(channel_);
  const char garbage[] = "\xff\xff\xff\xff\x0f\x12\x34 not a protobuf";
  grpc::Slice slice(garbage, sizeof(garbage) - 1);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ClientContext context;
  SetDeadline(&context);
  grpc::ByteBuffer reply;
  grpc::Status status;
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  generic.UnaryCall(&context, "/compatd.v1.CompatibilityPolicy/GetFeature",
                    grpc::StubOptions(), &request, &reply, [&](grpc::Status s) {
                      std::lock_guard<std::mutex> lock(mu);
                      status = std::move(s);
                      done = true;
                      done_cv.notify_all();
                    });
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(done_cv.wait_for(lock, 10s, [&] { return done; }));
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.error_code(), grpc::StatusCode::UNKNOWN);
  lock.unlock();
  EXPECT_TRUE(Alive());
}

TEST_F(LimitsTest, NonPositiveCallDurationFailsStartup) {
  Subprocess bad;
  ASSERT_TRUE(bad.Start(
      COMPATD_BINARY,
      {"--listen=127.0.0.1:0", "--metrics-listen=", "--max-call-duration=0"}));
  EXPECT_EQ(bad.Wait(20s), 1);
  EXPECT_THAT(bad.Stderr(), HasSubstr("--max-call-duration=0"));
}

TEST_F(LimitsTest, OutOfRangeLimitFlagIsAUsageError) {
  Subprocess bad;
  ASSERT_TRUE(bad.Start(COMPATD_BINARY, {"--max-evaluate-items=0"}));
  EXPECT_EQ(bad.Wait(20s), 2);
  EXPECT_THAT(bad.Stderr(), HasSubstr("--max-evaluate-items"));
}

// One request per validated field: the call fails with INVALID_ARGUMENT and
// a message naming the field and what is accepted. The grammars are
// Kubernetes' own (api/request_validation.h cites them).
struct BadRequestCase {
  std::string name;
  std::function<grpc::Status(v1::CompatibilityPolicy::Stub*,
                             grpc::ClientContext*)>
      call;
  std::vector<std::string> message_parts;
};

template <typename Request, typename Response>
std::function<grpc::Status(v1::CompatibilityPolicy::Stub*,
                           grpc::ClientContext*)>
Calls(grpc::Status (v1::CompatibilityPolicy::Stub::*method)(
          grpc::ClientContext*, const Request&, Response*),
      std::function<void(Request*)> fill) {
  return [method, fill](v1::CompatibilityPolicy::Stub* stub,
                        grpc::ClientContext* context) {
    Request request;
    fill(&request);
    Response response;
    return (stub->*method)(context, request, &response);
  };
}

using Stub = v1::CompatibilityPolicy::Stub;

std::vector<BadRequestCase> BadRequests() {
  return {
      {"FeatureNameTooLong",
       Calls<v1::GetFeatureRequest, v1::GetFeatureResponse>(
           &Stub::GetFeature,
           [](auto* r) { r->set_name(std::string(300, 'A')); }),
       {"name: 300 bytes", "limit of 256 bytes"}},
      {"FeatureNameWithSeparator",
       Calls<v1::GetFeatureRequest, v1::GetFeatureResponse>(
           &Stub::GetFeature,
           [](auto* r) { r->set_name("WatchList,AllBeta"); }),
       {"name \"WatchList,AllBeta\"", "feature gate name"}},
      {"FeatureGatesTooLong",
       Calls<v1::GetFeatureRequest, v1::GetFeatureResponse>(
           &Stub::GetFeature,
           [](auto* r) {
             r->set_name("WatchList");
             r->mutable_versions()->set_feature_gates(std::string(5000, 'A'));
           }),
       {"versions.feature_gates: 5000 bytes", "limit of 4096 bytes"}},
      {"RuntimeConfigTooLong",
       Calls<v1::ListAPIVersionsRequest, v1::ListAPIVersionsResponse>(
           &Stub::ListAPIVersions,
           [](auto* r) {
             r->mutable_versions()->set_runtime_config(std::string(5000, 'a'));
           }),
       {"versions.runtime_config: 5000 bytes", "--runtime-config syntax"}},
      {"EmulationVersionTooLong",
       Calls<v1::ResolveVersionsRequest, v1::ResolveVersionsResponse>(
           &Stub::ResolveVersions,
           [](auto* r) {
             r->mutable_versions()->set_emulation_version(
                 std::string(100, '1'));
           }),
       {"versions.emulation_version: 100 bytes", "limit of 64 bytes"}},
      {"GroupNotDnsSubdomain",
       Calls<v1::GetStorageVersionRequest, v1::GetStorageVersionResponse>(
           &Stub::GetStorageVersion,
           [](auto* r) {
             r->set_group("Apps");
             r->set_resource("deployments");
           }),
       {"group \"Apps\"", "DNS-1123 subdomain"}},
      {"ResourceIsAKind",
       Calls<v1::GetStorageVersionRequest, v1::GetStorageVersionResponse>(
           &Stub::GetStorageVersion,
           [](auto* r) {
             r->set_group("apps");
             r->set_resource("Deployment");
           }),
       {"resource \"Deployment\"", "not kinds"}},
      {"SkewComponentUppercase",
       Calls<v1::CheckSkewRequest, v1::CheckSkewResponse>(
           &Stub::CheckSkew,
           [](auto* r) {
             r->set_component("Kubelet");
             r->set_client_version("1.35");
           }),
       {"component \"Kubelet\"", "component name"}},
      {"ClientVersionTooLong",
       Calls<v1::CheckSkewRequest, v1::CheckSkewResponse>(
           &Stub::CheckSkew,
           [](auto* r) {
             r->set_component("kubelet");
             r->set_client_version(std::string(65, '1'));
           }),
       {"client_version: 65 bytes"}},
      {"ListFeaturesComponentWithSpace",
       Calls<v1::ListFeaturesRequest, v1::ListFeaturesResponse>(
           &Stub::ListFeatures,
           [](auto* r) { r->set_component("kube apiserver"); }),
       {"component \"kube apiserver\""}},
      {"ApiserverIdNotDnsSubdomain",
       Calls<v1::ComputeStorageVersionAgreementRequest,
             v1::ComputeStorageVersionAgreementResponse>(
           &Stub::ComputeStorageVersionAgreement,
           [](auto* r) {
             v1::ServerStorageVersion* s = r->add_storage_versions();
             s->set_apiserver_id("API_SERVER");
             s->set_encoding_version("apps/v1");
           }),
       {"storage_versions[0].apiserver_id \"API_SERVER\""}},
      {"EncodingVersionNotAnApiVersion",
       Calls<v1::ComputeStorageVersionAgreementRequest,
             v1::ComputeStorageVersionAgreementResponse>(
           &Stub::ComputeStorageVersionAgreement,
           [](auto* r) {
             v1::ServerStorageVersion* s = r->add_storage_versions();
             s->set_apiserver_id("a");
             s->set_encoding_version("apps/v1/x");
           }),
       {"storage_versions[0].encoding_version", "apiVersion"}},
      {"CrdVersionNotDns1035",
       Calls<v1::PlanVersionRemovalRequest, v1::PlanVersionRemovalResponse>(
           &Stub::PlanVersionRemoval,
           [](auto* r) {
             r->set_crd("clusters.cluster.x-k8s.io");
             r->set_version("V1Beta1");
           }),
       {"version \"V1Beta1\"", "DNS-1035 label"}},
      {"CrdNameNotDnsSubdomain",
       Calls<v1::PlanVersionRemovalRequest, v1::PlanVersionRemovalResponse>(
           &Stub::PlanVersionRemoval,
           [](auto* r) {
             r->set_crd("Clusters");
             r->set_version("v1beta1");
           }),
       {"crd \"Clusters\""}},
      {"ListClientsComponentWithSpace",
       Calls<v1::ListClientsRequest, v1::ListClientsResponse>(
           &Stub::ListClients, [](auto* r) { r->set_component("a b"); }),
       {"component \"a b\"", "client component"}},
  };
}

class BadRequestTest : public LimitsTest,
                       public ::testing::WithParamInterface<BadRequestCase> {};

TEST_P(BadRequestTest, IsInvalidArgumentNamingTheField) {
  StartServer();
  grpc::ClientContext context;
  SetDeadline(&context);
  const grpc::Status status = GetParam().call(stub_.get(), &context);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_message();
  for (const std::string& part : GetParam().message_parts) {
    EXPECT_THAT(status.error_message(), HasSubstr(part));
  }
  EXPECT_TRUE(Alive());
}

INSTANTIATE_TEST_SUITE_P(
    EveryField, BadRequestTest, ::testing::ValuesIn(BadRequests()),
    [](const ::testing::TestParamInfo<BadRequestCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace compatd
