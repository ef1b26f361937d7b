// Starts the real compatd binary on a free loopback port and talks to it as a
// client would: health, the policy service through a generated stub,
// reflection, and a graceful SIGTERM.

#include <signal.h>

#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace compatd {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using namespace std::chrono_literals;

class ServerTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> extra_args = {}) {
    std::vector<std::string> args = {"--listen=127.0.0.1:0",
                                     "--metrics-listen=127.0.0.1:0",
                                     "--shutdown-grace=5s"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    ASSERT_TRUE(server_.Start(COMPATD_BINARY, args));
    ASSERT_TRUE(server_.WaitForStderr("gRPC listening on 127.0.0.1:", 20s))
        << server_.Stderr();
    std::smatch match;
    const std::string err = server_.Stderr();
    ASSERT_TRUE(std::regex_search(
        err, match, std::regex("gRPC listening on 127\\.0\\.0\\.1:([0-9]+)")));
    port_ = std::stoi(match[1]);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::CompatibilityPolicy::NewStub(channel_);
  }

  // The health status of `service` ("" = the whole server), or an error code
  // name.
  std::string HealthStatus(const std::string& service) {
    auto health = grpc::health::v1::Health::NewStub(channel_);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 2s);
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    const grpc::Status status = health->Check(&context, request, &response);
    if (!status.ok()) return "error " + std::to_string(status.error_code());
    return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
        response.status());
  }

  void WaitServing() {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (HealthStatus("") == "SERVING") return;
      std::this_thread::sleep_for(20ms);
    }
    FAIL() << "compatd never reported SERVING; stderr:\n" << server_.Stderr();
  }

  testing::Subprocess server_;
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
};

TEST_F(ServerTest, ReportsServingForServerAndPolicyService) {
  StartServer();
  WaitServing();
  EXPECT_EQ(HealthStatus(""), "SERVING");
  EXPECT_EQ(HealthStatus("compatd.v1.CompatibilityPolicy"), "SERVING");
}

TEST_F(ServerTest, AnswersGetFeatureFromTheEmbeddedCatalog) {
  StartServer();
  WaitServing();
  grpc::ClientContext context;
  v1::GetFeatureRequest request;
  request.set_name("WatchList");
  request.mutable_versions()->set_emulation_version("1.33");
  v1::GetFeatureResponse response;
  const grpc::Status status = stub_->GetFeature(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  // WatchList went Beta default-on in 1.32, back to default-off in 1.33.
  EXPECT_EQ(response.name(), "WatchList");
  EXPECT_EQ(response.stage(), v1::STAGE_BETA);
  EXPECT_FALSE(response.enabled());
  EXPECT_EQ(response.versions().emulation_version(), "1.33");
  EXPECT_EQ(response.versions().binary_version(), "1.36");
  EXPECT_EQ(response.catalog_generation(), 1u);
  EXPECT_THAT(response.catalog_digest(), HasSubstr("sha256:"));
  EXPECT_FALSE(response.reason().empty());
}

TEST_F(ServerTest, UnknownFeatureIsNotFoundAndBadVersionIsInvalidArgument) {
  StartServer();
  WaitServing();
  {
    grpc::ClientContext context;
    v1::GetFeatureRequest request;
    request.set_name("NoSuchGate");
    v1::GetFeatureResponse response;
    const grpc::Status status = stub_->GetFeature(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(status.error_message(), HasSubstr("NoSuchGate"));
  }
  {
    grpc::ClientContext context;
    v1::ResolveVersionsRequest request;
    request.mutable_versions()->set_emulation_version("banana");
    v1::ResolveVersionsResponse response;
    const grpc::Status status =
        stub_->ResolveVersions(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("banana"));
  }
}

TEST_F(ServerTest, PlanVersionRemovalAnswersForAnInlineHistory) {
  StartServer();
  WaitServing();
  // The Cluster API issue's v1beta1 table
  // (docs/kubernetes-rules.md#crd-version-removal;
  // kubernetes-sigs/cluster-api#11894), given inline: the embedded catalog has
  // no crds.
  v1::PlanVersionRemovalRequest request;
  request.set_version("v1beta1");
  v1::CRDVersionHistory* history = request.mutable_history();
  history->set_name("clusters.cluster.x-k8s.io");
  history->set_upgrade_span(3);
  history->set_deprecation_releases(3);
  history->set_revert_buffer_releases(1);
  for (int minor = 10; minor <= 18; ++minor) {
    v1::CRDReleaseVersions* release = history->add_releases();
    release->set_release("v1." + std::to_string(minor));
    release->set_storage_version_migration(true);
    release->set_managed_fields_cleanup(true);
    if (minor < 18) {
      v1::CRDVersionState* beta1 = release->add_versions();
      beta1->set_name("v1beta1");
      beta1->set_served(minor < 14);
      beta1->set_storage(minor < 11);
    }
    if (minor >= 11) {
      v1::CRDVersionState* beta2 = release->add_versions();
      beta2->set_name("v1beta2");
      beta2->set_served(true);
      beta2->set_storage(true);
    }
  }
  grpc::ClientContext context;
  v1::PlanVersionRemovalResponse response;
  const grpc::Status status =
      stub_->PlanVersionRemoval(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.crd(), "clusters.cluster.x-k8s.io");
  EXPECT_EQ(response.earliest_unserve_release(), "v1.14");
  EXPECT_EQ(response.earliest_removal_release(), "v1.18");
  EXPECT_EQ(response.steps_size(), 4);
  EXPECT_EQ(response.violations_size(), 0);
  EXPECT_EQ(response.versions().binary_version(), "1.36");
}

TEST_F(ServerTest, ReflectionListsThePolicyHealthAndReflectionServices) {
  StartServer();
  WaitServing();
  auto reflection =
      grpc::reflection::v1alpha::ServerReflection::NewStub(channel_);
  grpc::ClientContext context;
  auto stream = reflection->ServerReflectionInfo(&context);
  grpc::reflection::v1alpha::ServerReflectionRequest request;
  request.set_list_services("");
  ASSERT_TRUE(stream->Write(request));
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  stream->WritesDone();
  std::vector<std::string> names;
  for (const auto& service : response.list_services_response().service()) {
    names.push_back(service.name());
  }
  EXPECT_THAT(names,
              ::testing::IsSupersetOf(
                  {"compatd.v1.CompatibilityPolicy", "grpc.health.v1.Health",
                   "grpc.reflection.v1alpha.ServerReflection"}));
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(ServerTest, WatchCatalogSendsTheCurrentCatalogAndEndsOnShutdown) {
  StartServer();
  WaitServing();
  grpc::ClientContext context;
  auto stream = stub_->WatchCatalog(&context, v1::WatchCatalogRequest());
  v1::GetCatalogResponse first;
  ASSERT_TRUE(stream->Read(&first));
  EXPECT_EQ(first.generation(), 1u);
  EXPECT_EQ(first.source(), "embedded:kubernetes-1.36");
  server_.Signal(SIGTERM);
  v1::GetCatalogResponse next;
  EXPECT_FALSE(stream->Read(&next));
  const grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_code() << " "
                           << status.error_message();
  EXPECT_EQ(server_.Wait(10s), 0);
}

TEST_F(ServerTest, SigtermExitsZeroWithinTheGracePeriod) {
  StartServer();
  WaitServing();
  const auto start = std::chrono::steady_clock::now();
  server_.Signal(SIGTERM);
  EXPECT_EQ(server_.Wait(10s), 0) << server_.Stderr();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 6s);
  EXPECT_THAT(server_.Stderr(), HasSubstr("NOT_SERVING"));
}

TEST_F(ServerTest, InvalidCatalogAtStartupIsFatal) {
  const std::string path = ::testing::TempDir() + "/bad_catalog.yaml";
  {
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs("binaryVersion: \"1.36\"\nnoSuchKey: 1\n", f);
    fclose(f);
  }
  ASSERT_TRUE(server_.Start(
      COMPATD_BINARY,
      {"--listen=127.0.0.1:0", "--metrics-listen=", "--catalog=" + path}));
  EXPECT_EQ(server_.Wait(20s), 1);
  EXPECT_THAT(server_.Stderr(), HasSubstr("bad_catalog.yaml:2"));
}

}  // namespace
}  // namespace compatd
