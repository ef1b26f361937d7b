// gateway::ToJson writes protobuf's proto3 JSON itself: it must be protobuf's
// output byte for byte, for every answer the API gives and every string.

#include <memory>
#include <string>

#include "api/handlers.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "compatd/v1/compatd.pb.h"
#include "gateway/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/catalog_pipeline.h"

namespace compatd::gateway {
namespace {

class ToJsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
        catalog::ParseCatalog(catalog::EmbeddedCatalogYaml(),
                              catalog::EmbeddedCatalogSource());
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    pipeline_.Publish(*std::move(catalog), /*initial=*/true);
  }

  // `walked`: the reflection walk must print it (not hand it to protobuf).
  void ExpectSame(const google::protobuf::Message& message,
                  bool walked = true) {
    EXPECT_EQ(ToJson(message), ToJsonByProtobuf(message))
        << message.GetDescriptor()->full_name();
    std::string text;
    EXPECT_EQ(ToJsonByReflection(message, &text), walked)
        << message.GetDescriptor()->full_name();
  }

  const runtime::ServingSnapshot& Snapshot() { return *pipeline_.Current(); }

  runtime::CatalogPipeline pipeline_{runtime::CatalogPipeline::Options()};
  api::PolicyHandlers handlers_;
};

TEST_F(ToJsonTest, EveryFeatureAtEveryEmulationVersion) {
  for (const char* emulation : {"", "1.33", "1.34", "1.35"}) {
    v1::ListFeaturesRequest request;
    request.mutable_versions()->set_emulation_version(emulation);
    v1::ListFeaturesResponse all;
    ASSERT_TRUE(handlers_.ListFeatures(Snapshot(), request, &all).ok());
    ExpectSame(all);
    for (const v1::FeatureDecision& f : all.features()) {
      v1::GetFeatureRequest one;
      one.set_name(f.name());
      *one.mutable_versions() = request.versions();
      v1::GetFeatureResponse response;
      ASSERT_TRUE(handlers_.GetFeature(Snapshot(), one, &response).ok());
      ExpectSame(response);
    }
  }
}

TEST_F(ToJsonTest, EveryOtherAnswer) {
  v1::ListAPIVersionsResponse apis;
  ASSERT_TRUE(
      handlers_.ListAPIVersions(Snapshot(), v1::ListAPIVersionsRequest(), &apis)
          .ok());
  ExpectSame(apis);
  for (const v1::APIGroupVersion& gv : apis.group_versions()) {
    for (const std::string& resource : gv.resources()) {
      v1::GetStorageVersionRequest request;
      request.set_group(gv.group());
      request.set_resource(resource);
      v1::GetStorageVersionResponse response;
      if (handlers_.GetStorageVersion(Snapshot(), request, &response).ok()) {
        ExpectSame(response);
      }
    }
  }
  for (const char* version : {"1.30.0", "1.33.1", "1.36.0", "1.40.0"}) {
    v1::CheckSkewRequest request;
    request.set_component("kubelet");
    request.set_client_version(version);
    v1::CheckSkewResponse response;
    ASSERT_TRUE(handlers_.CheckSkew(Snapshot(), request, &response).ok());
    ExpectSame(response);
  }
  v1::ResolveVersionsResponse resolved;
  ASSERT_TRUE(
      handlers_
          .ResolveVersions(Snapshot(), v1::ResolveVersionsRequest(), &resolved)
          .ok());
  ExpectSame(resolved);
  v1::LintCatalogResponse lint;
  ASSERT_TRUE(
      handlers_.LintCatalog(Snapshot(), v1::LintCatalogRequest(), &lint).ok());
  ExpectSame(lint);
  // GetCatalog carries a Timestamp: protobuf prints it (RFC 3339).
  v1::GetCatalogResponse catalog;
  ASSERT_TRUE(
      handlers_.GetCatalog(Snapshot(), v1::GetCatalogRequest(), &catalog).ok());
  ExpectSame(catalog, /*walked=*/false);
  v1::EvaluateRequest evaluate;
  evaluate.add_items()->mutable_get_feature()->set_name("WatchList");
  evaluate.add_items()->mutable_get_feature()->set_name("NoSuchGate");
  evaluate.add_items()->mutable_check_skew()->set_component("kubectl");
  v1::EvaluateResponse evaluated;
  ASSERT_TRUE(handlers_.Evaluate(Snapshot(), evaluate, &evaluated).ok());
  ExpectSame(evaluated);  // oneofs set and unset, errors as google.rpc.Status
}

TEST_F(ToJsonTest, EveryCharacterIsEscapedAsProtobufDoes) {
  std::string text;
  for (int c = 1; c < 128; ++c) text.push_back(static_cast<char>(c));
  text += "\xc3\xa9 \xe2\x80\xa8 \xe2\x80\xa9 \xf0\x9f\x98\x80 \xe4\xb8\xad";
  v1::GetFeatureResponse response;
  response.set_name(text);
  response.set_reason(std::string("nul\0inside", 10));
  ExpectSame(response);
}

// Beyond ASCII protobuf escapes C1 controls and invisible or format
// characters too (the gateway_query fuzz target found U+0092 printed raw);
// each range's ends, and the code points just outside them.
TEST_F(ToJsonTest, InvisibleCharactersAreEscapedAsProtobufDoes) {
  for (const char* text :
       {"\x7f \xc2\x80 \xc2\x92 \xc2\x9f \xc2\xa0",
        "\xc2\xac \xc2\xad \xc2\xae",
        "\xd8\x80 \xd8\x83 \xd8\x84 \xdb\x9d \xdc\x8f",
        "\xe1\x9e\xb4 \xe1\x9e\xb5 \xe1\x9e\xb6",
        "\xe2\x80\x8a \xe2\x80\x8b \xe2\x80\x8f \xe2\x80\x90",
        "\xe2\x80\xa7 \xe2\x80\xae \xe2\x80\xaf",
        "\xe2\x81\xa0 \xe2\x81\xa4 \xe2\x81\xa5 \xe2\x81\xaa \xe2\x81\xaf",
        "\xef\xbb\xbf \xef\xbf\xb8 \xef\xbf\xb9 \xef\xbf\xbb \xef\xbf\xbc",
        "\xf0\x9d\x85\xb2 \xf0\x9d\x85\xb3 \xf0\x9d\x85\xba \xf0\x9d\x85\xbb",
        "\xf3\xa0\x80\x80 \xf3\xa0\x80\x81 \xf3\xa0\x80\xa0 \xf3\xa0\x81\xbf "
        "\xf3\xa0\x82\x80"}) {
    v1::GetFeatureResponse response;
    response.set_name(text);
    ExpectSame(response);
  }
}

TEST_F(ToJsonTest, InvalidUtf8IsLeftToProtobuf) {
  for (const char* bad : {"\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80",
                          "\xc0\xaf", "\xf5\x80\x80\x80"}) {
    v1::GetFeatureResponse response;
    response.set_name(bad);
    ExpectSame(response, /*walked=*/false);
  }
}

TEST_F(ToJsonTest, DefaultsArePrintedAndUnsetMessagesAreNot) {
  v1::GetFeatureResponse empty;
  ExpectSame(empty);
  EXPECT_THAT(ToJson(empty), ::testing::HasSubstr("\"defaultEnabled\":false"));
  EXPECT_THAT(ToJson(empty), ::testing::Not(::testing::HasSubstr("versions")));
  // `enabled` has explicit presence: unset it is left out, as protobuf does;
  // the handlers always set it, and then false is printed.
  EXPECT_THAT(ToJson(empty),
              ::testing::Not(::testing::HasSubstr("enabled\":")));
  v1::GetFeatureResponse off;
  off.set_enabled(false);
  ExpectSame(off);
  EXPECT_THAT(ToJson(off), ::testing::HasSubstr("\"enabled\":false"));
}

}  // namespace
}  // namespace compatd::gateway
