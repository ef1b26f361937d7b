// PolicyHandlers computes ListAPIVersions' and ListFeatures' answer to a
// request without versions (or component) once per catalog snapshot and
// copies it into each reply. These check that the copied answer is the one a
// request with the same versions spelled out gets, and that it follows the
// catalog in force.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/handlers.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "runtime/catalog_pipeline.h"
#include "tests/testing/status_matchers.h"

namespace compatd::api {
namespace {

using google::protobuf::util::MessageDifferencer;

// The embedded catalog has no cluster section; this one turns batch/v1 and
// the WatchList gate off.
std::string TurnedOffYaml() {
  return absl::StrCat(catalog::EmbeddedCatalogYaml(),
                      "cluster:\n"
                      "  runtimeConfig: {\"batch/v1\": false}\n"
                      "  featureGates: {WatchList: false}\n");
}

std::unique_ptr<engine::Catalog> Parse(absl::string_view yaml) {
  absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
      catalog::ParseCatalog(yaml, "test");
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  if (!catalog.ok()) return nullptr;
  return *std::move(catalog);
}

runtime::CatalogPipeline::Options Deriving() {
  runtime::CatalogPipeline::Options options;
  options.derive = DeriveAnswers;
  return options;
}

bool ServesGroup(const v1::ListAPIVersionsResponse& response,
                 absl::string_view group) {
  for (const v1::APIGroupVersion& gv : response.group_versions()) {
    if (gv.group() == group) return true;
  }
  return false;
}

const v1::FeatureDecision* FindFeature(const v1::ListFeaturesResponse& response,
                                       absl::string_view name) {
  for (const v1::FeatureDecision& f : response.features()) {
    if (f.name() == name) return &f;
  }
  return nullptr;
}

// The embedded catalog's defaults, spelled out: the answer is computed per
// call for such a request.
v1::VersionContext ExplicitDefaults() {
  v1::VersionContext versions;
  versions.set_binary_version("1.36");
  versions.set_emulation_version("1.36");
  versions.set_min_compatibility_version("1.35");
  return versions;
}

class CatalogAnswersTest : public ::testing::Test {
 protected:
  // The snapshot now serving.
  const runtime::ServingSnapshot& Now() const { return *pipeline_.Current(); }

  runtime::CatalogPipeline pipeline_{Deriving()};
  PolicyHandlers handlers_;
};

TEST_F(CatalogAnswersTest, ListAPIVersionsEqualsTheComputedAnswer) {
  pipeline_.Publish(Parse(catalog::EmbeddedCatalogYaml()));
  v1::ListAPIVersionsResponse first, second, computed;
  ASSERT_OK(
      handlers_.ListAPIVersions(Now(), v1::ListAPIVersionsRequest(), &first));
  ASSERT_OK(
      handlers_.ListAPIVersions(Now(), v1::ListAPIVersionsRequest(), &second));
  v1::ListAPIVersionsRequest explicit_request;
  *explicit_request.mutable_versions() = ExplicitDefaults();
  ASSERT_OK(handlers_.ListAPIVersions(Now(), explicit_request, &computed));
  EXPECT_GT(first.group_versions_size(), 10);
  EXPECT_TRUE(MessageDifferencer::Equals(first, computed))
      << first.ShortDebugString() << "\nvs\n"
      << computed.ShortDebugString();
  EXPECT_TRUE(MessageDifferencer::Equals(first, second));
}

TEST_F(CatalogAnswersTest, ListFeaturesEqualsTheComputedAnswer) {
  pipeline_.Publish(Parse(catalog::EmbeddedCatalogYaml()));
  v1::ListFeaturesResponse cached, computed;
  ASSERT_OK(handlers_.ListFeatures(Now(), v1::ListFeaturesRequest(), &cached));
  v1::ListFeaturesRequest explicit_request;
  *explicit_request.mutable_versions() = ExplicitDefaults();
  ASSERT_OK(handlers_.ListFeatures(Now(), explicit_request, &computed));
  EXPECT_EQ(cached.features_size(), 240);
  EXPECT_TRUE(MessageDifferencer::Equals(cached, computed));
}

TEST_F(CatalogAnswersTest, ListFeaturesOfOneComponentIsNotTheWholeList) {
  pipeline_.Publish(Parse(catalog::EmbeddedCatalogYaml()));
  v1::ListFeaturesResponse all, apiserver;
  ASSERT_OK(handlers_.ListFeatures(Now(), v1::ListFeaturesRequest(), &all));
  v1::ListFeaturesRequest request;
  request.set_component("kube-apiserver");
  ASSERT_OK(handlers_.ListFeatures(Now(), request, &apiserver));
  ASSERT_GT(apiserver.features_size(), 0);
  EXPECT_LT(apiserver.features_size(), all.features_size());
  for (const v1::FeatureDecision& f : apiserver.features()) {
    EXPECT_EQ(f.component(), "kube-apiserver") << f.name();
  }
}

TEST_F(CatalogAnswersTest, AnswersFollowAReload) {
  pipeline_.Publish(Parse(catalog::EmbeddedCatalogYaml()));
  v1::ListAPIVersionsResponse before, after;
  v1::ListFeaturesResponse features_before, features_after;
  ASSERT_OK(
      handlers_.ListAPIVersions(Now(), v1::ListAPIVersionsRequest(), &before));
  ASSERT_OK(handlers_.ListFeatures(Now(), v1::ListFeaturesRequest(),
                                   &features_before));
  pipeline_.Publish(Parse(TurnedOffYaml()));
  ASSERT_OK(
      handlers_.ListAPIVersions(Now(), v1::ListAPIVersionsRequest(), &after));
  ASSERT_OK(handlers_.ListFeatures(Now(), v1::ListFeaturesRequest(),
                                   &features_after));

  EXPECT_TRUE(ServesGroup(before, "batch"));
  EXPECT_FALSE(ServesGroup(after, "batch"));
  EXPECT_EQ(after.catalog_generation(), 2u);
  ASSERT_NE(FindFeature(features_before, "WatchList"), nullptr);
  ASSERT_NE(FindFeature(features_after, "WatchList"), nullptr);
  EXPECT_TRUE(FindFeature(features_before, "WatchList")->enabled());
  EXPECT_FALSE(FindFeature(features_after, "WatchList")->enabled());
}

// `enabled` has explicit presence: a gate that is off is `"enabled": false`
// in the JSON grpcurl and every protobuf JSON client print (proto3 drops an
// implicit false). The catalog's cluster section turns WatchList off.
TEST_F(CatalogAnswersTest, AGateThatIsOffSaysEnabledFalse) {
  pipeline_.Publish(Parse(TurnedOffYaml()));
  v1::GetFeatureRequest request;
  request.set_name("WatchList");
  v1::GetFeatureResponse feature;
  ASSERT_OK(handlers_.GetFeature(Now(), request, &feature));
  EXPECT_TRUE(feature.has_enabled());
  EXPECT_FALSE(feature.enabled());
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(feature, &json).ok());
  EXPECT_NE(json.find("\"enabled\":false"), std::string::npos) << json;

  v1::ListFeaturesResponse features;
  ASSERT_OK(
      handlers_.ListFeatures(Now(), v1::ListFeaturesRequest(), &features));
  const v1::FeatureDecision* watch_list = FindFeature(features, "WatchList");
  ASSERT_NE(watch_list, nullptr);
  EXPECT_TRUE(watch_list->has_enabled());
  ASSERT_TRUE(
      google::protobuf::util::MessageToJsonString(*watch_list, &json).ok());
  EXPECT_NE(json.find("\"enabled\":false"), std::string::npos) << json;
}

// A snapshot answers from its own derived answers, whatever is published
// after it was taken: a call that holds it is not affected by a reload.
TEST_F(CatalogAnswersTest, AHeldSnapshotKeepsItsOwnAnswers) {
  pipeline_.Publish(Parse(catalog::EmbeddedCatalogYaml()));
  const std::shared_ptr<const runtime::ServingSnapshot> held =
      pipeline_.Current();
  pipeline_.Publish(Parse(TurnedOffYaml()));
  v1::ListAPIVersionsResponse first;
  ASSERT_OK(
      handlers_.ListAPIVersions(*held, v1::ListAPIVersionsRequest(), &first));
  v1::ListAPIVersionsResponse second;
  ASSERT_OK(
      handlers_.ListAPIVersions(Now(), v1::ListAPIVersionsRequest(), &second));
  EXPECT_TRUE(ServesGroup(first, "batch"));
  EXPECT_FALSE(ServesGroup(second, "batch"));
  EXPECT_EQ(first.catalog_generation(), 1u);
  EXPECT_EQ(second.catalog_generation(), 2u);
}

}  // namespace
}  // namespace compatd::api
