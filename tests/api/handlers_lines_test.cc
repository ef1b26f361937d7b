// Every answer from the right binary (issue 21, section 2): a call resolves
// its kube-apiserver release line once from versions.binaryVersion and
// answers from that line's catalog, naming it in catalog_release and
// catalog_source. The catalogs are small ones of three lines, their gates as
// kubernetes/kubernetes pkg/features/kube_features.go has them at v1.32.5,
// v1.33.3 and v1.34.7 (tests/testdata/catalogs/lines/), plus the embedded
// 1.36 catalog.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/handlers.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/catalog_file.h"
#include "runtime/catalog_pipeline.h"
#include "tests/testing/status_matchers.h"

namespace compatd::api {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::HasSubstr;

std::string LinesDir() {
  return absl::StrCat(COMPATD_TESTDATA_DIR, "/catalogs/lines/");
}

std::unique_ptr<engine::Catalog> Load(absl::string_view file) {
  absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
      runtime::LoadCatalogFile(absl::StrCat(LinesDir(), file));
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return catalog.ok() ? *std::move(catalog) : nullptr;
}

class LinesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime::CatalogPipeline::Options options;
    options.derive = DeriveAnswers;
    options.sources = 4;
    pipeline_ = std::make_unique<runtime::CatalogPipeline>(std::move(options));
    ASSERT_OK(
        pipeline_->PublishLine(0, Load("kubernetes-1.33.yaml"), true).status());
    ASSERT_OK(
        pipeline_->PublishLine(1, Load("kubernetes-1.32.yaml"), true).status());
    ASSERT_OK(
        pipeline_->PublishLine(2, Load("kubernetes-1.34.yaml"), true).status());
    absl::StatusOr<std::unique_ptr<engine::Catalog>> embedded =
        catalog::ParseCatalog(catalog::EmbeddedCatalogYaml(),
                              catalog::EmbeddedCatalogSource());
    ASSERT_OK(embedded.status());
    ASSERT_OK(pipeline_->PublishLine(3, *std::move(embedded), true).status());
    ASSERT_NE(pipeline_->Current(), nullptr);
  }

  absl::StatusOr<v1::GetFeatureResponse> Feature(absl::string_view name,
                                                 absl::string_view binary) {
    v1::GetFeatureRequest request;
    request.set_name(std::string(name));
    request.mutable_versions()->set_binary_version(std::string(binary));
    v1::GetFeatureResponse response;
    absl::Status status =
        handlers_.GetFeature(*pipeline_->Current(), request, &response);
    if (!status.ok()) return status;
    return response;
  }

  std::unique_ptr<runtime::CatalogPipeline> pipeline_;
  PolicyHandlers handlers_;
};

TEST_F(LinesTest, TheSnapshotHoldsEveryLineOldestFirstAndTheNewestIsDefault) {
  const auto snapshot = pipeline_->Current();
  EXPECT_EQ(snapshot->catalogs->line_names(), "1.32, 1.33, 1.34, 1.36");
  ASSERT_EQ(snapshot->lines.size(), 4u);
  EXPECT_EQ(snapshot->lines[0].catalog->binary_version.ToString(), "1.32.5");
  EXPECT_EQ(snapshot->default_catalog().binary_version.MajorMinorString(),
            "1.36");
  for (const runtime::ServingLine& line : snapshot->lines) {
    EXPECT_EQ(line.generation, snapshot->generation);
    EXPECT_NE(line.derived, nullptr);
  }
}

// WatchList at v1.33.3: Beta, default off from 1.33; at v1.34.7: Beta,
// default on from 1.34 (kube_features.go at each tag).
TEST_F(LinesTest, WatchListIsAnsweredFromEachBinarysOwnSpecs) {
  ASSERT_OK_AND_ASSIGN(v1::GetFeatureResponse at33,
                       Feature("WatchList", "1.33"));
  EXPECT_FALSE(at33.enabled());
  EXPECT_EQ(at33.since(), "1.33");
  EXPECT_EQ(at33.catalog_release(), "1.33.3");
  EXPECT_EQ(at33.catalog_source(),
            absl::StrCat(LinesDir(), "kubernetes-1.33.yaml"));
  ASSERT_OK_AND_ASSIGN(v1::GetFeatureResponse at34,
                       Feature("WatchList", "v1.34.2"));
  EXPECT_TRUE(at34.enabled());
  EXPECT_EQ(at34.since(), "1.34");
  EXPECT_EQ(at34.catalog_release(), "1.34.7");
  // The binary is the request's line; the catalog says which patch its
  // facts are from.
  EXPECT_EQ(at34.versions().binary_version(), "1.34");
  EXPECT_NE(at33.catalog_digest(), at34.catalog_digest());
}

// AppArmor: GA and locked in 1.32; the gate is gone from 1.33.
TEST_F(LinesTest, AGateOneLineHasAndTheNextRemovedIsFoundOnlyOnTheFirst) {
  ASSERT_OK_AND_ASSIGN(v1::GetFeatureResponse at32,
                       Feature("AppArmor", "1.32"));
  EXPECT_TRUE(at32.enabled());
  EXPECT_TRUE(at32.locked_to_default());
  EXPECT_EQ(at32.stage(), v1::STAGE_GA);
  EXPECT_THAT(Feature("AppArmor", "1.33"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("AppArmor")));
}

// WindowsHostNetwork: Alpha default on in 1.32; Deprecated default off from
// 1.33.
TEST_F(LinesTest, ASpecHistoryRewrittenBetweenReleasesFollowsTheLine) {
  ASSERT_OK_AND_ASSIGN(v1::GetFeatureResponse at32,
                       Feature("WindowsHostNetwork", "1.32"));
  EXPECT_TRUE(at32.enabled());
  EXPECT_EQ(at32.stage(), v1::STAGE_ALPHA);
  ASSERT_OK_AND_ASSIGN(v1::GetFeatureResponse at33,
                       Feature("WindowsHostNetwork", "1.33"));
  EXPECT_FALSE(at33.enabled());
  EXPECT_EQ(at33.stage(), v1::STAGE_DEPRECATED);
}

TEST_F(LinesTest, ABinaryWithoutACatalogIsInvalidArgumentNamingTheLines) {
  for (const char* binary : {"1.30", "1.35.1", "1.37", "v1.31.0"}) {
    EXPECT_THAT(
        Feature("WatchList", binary),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 HasSubstr("the release lines it has are 1.32, 1.33, 1.34, "
                           "1.36")))
        << binary;
  }
  EXPECT_THAT(Feature("WatchList", "one.thirty"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("versions.binaryVersion \"one.thirty\" is "
                                 "not a kube-apiserver version")));
}

TEST_F(LinesTest, NoBinaryVersionIsTheDefaultLine) {
  ASSERT_OK_AND_ASSIGN(v1::GetFeatureResponse answer, Feature("WatchList", ""));
  EXPECT_EQ(answer.catalog_source(), catalog::EmbeddedCatalogSource());
  EXPECT_EQ(answer.versions().binary_version(),
            pipeline_->Current()
                ->default_catalog()
                .binary_version.MajorMinorString());
  // The derived (cached) ListFeatures answer names its catalog too.
  v1::ListFeaturesResponse list;
  ASSERT_OK(handlers_.ListFeatures(*pipeline_->Current(),
                                   v1::ListFeaturesRequest(), &list));
  EXPECT_EQ(list.catalog_source(), catalog::EmbeddedCatalogSource());
  EXPECT_EQ(list.catalog_generation(), pipeline_->Current()->generation);
}

TEST_F(LinesTest, EveryRpcNamesTheLineThatAnswered) {
  const auto snapshot = pipeline_->Current();
  v1::ResolveVersionsRequest resolve;
  resolve.mutable_versions()->set_binary_version("1.32.1");
  v1::ResolveVersionsResponse resolved;
  ASSERT_OK(handlers_.ResolveVersions(*snapshot, resolve, &resolved));
  EXPECT_EQ(resolved.catalog_release(), "1.32.5");
  EXPECT_EQ(resolved.minor(), "32");

  v1::CheckSkewRequest skew;
  skew.mutable_versions()->set_binary_version("1.33");
  skew.set_component("kubelet");
  skew.set_client_version("1.30");
  v1::CheckSkewResponse skewed;
  ASSERT_OK(handlers_.CheckSkew(*snapshot, skew, &skewed));
  EXPECT_EQ(skewed.catalog_release(), "1.33.3");

  v1::ListFeaturesRequest list;
  list.mutable_versions()->set_binary_version("1.34");
  v1::ListFeaturesResponse listed;
  ASSERT_OK(handlers_.ListFeatures(*snapshot, list, &listed));
  EXPECT_EQ(listed.catalog_release(), "1.34.7");
  EXPECT_EQ(listed.features_size(), 1);

  v1::ListAPIVersionsRequest apis;
  apis.mutable_versions()->set_binary_version("1.37");
  v1::ListAPIVersionsResponse served;
  EXPECT_THAT(handlers_.ListAPIVersions(*snapshot, apis, &served),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no catalog describes kube-apiserver 1.37")));
}

TEST_F(LinesTest, EvaluateItemsEachPickTheirLine) {
  v1::EvaluateRequest request;
  request.mutable_versions()->set_binary_version("1.33");
  v1::EvaluateItem* batch_line = request.add_items();
  batch_line->mutable_get_feature()->set_name("WatchList");
  v1::EvaluateItem* own_line = request.add_items();
  own_line->mutable_get_feature()->set_name("WatchList");
  own_line->mutable_get_feature()->mutable_versions()->set_binary_version(
      "1.34");
  v1::EvaluateItem* no_line = request.add_items();
  no_line->mutable_get_feature()->set_name("WatchList");
  no_line->mutable_get_feature()->mutable_versions()->set_binary_version(
      "1.30");
  v1::EvaluateResponse response;
  ASSERT_OK(handlers_.Evaluate(*pipeline_->Current(), request, &response));
  ASSERT_EQ(response.results_size(), 3);
  EXPECT_EQ(response.catalog_release(), "1.33.3");
  EXPECT_EQ(response.results(0).get_feature().catalog_release(), "1.33.3");
  EXPECT_FALSE(response.results(0).get_feature().enabled());
  EXPECT_EQ(response.results(1).get_feature().catalog_release(), "1.34.7");
  EXPECT_TRUE(response.results(1).get_feature().enabled());
  EXPECT_EQ(response.results(2).error().code(),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(response.results(2).error().message(),
              HasSubstr("no catalog describes kube-apiserver 1.30"));
}

TEST_F(LinesTest, GetCatalogListsEveryLineAndKeepsTheDefaultLinesFields) {
  v1::GetCatalogResponse response;
  ASSERT_OK(handlers_.GetCatalog(*pipeline_->Current(), v1::GetCatalogRequest(),
                                 &response));
  EXPECT_EQ(response.source(), catalog::EmbeddedCatalogSource());
  EXPECT_EQ(response.catalog_source(), catalog::EmbeddedCatalogSource());
  ASSERT_EQ(response.lines_size(), 4);
  EXPECT_EQ(response.lines(0).line(), "1.32");
  EXPECT_EQ(response.lines(0).release(), "1.32.5");
  EXPECT_FALSE(response.lines(0).default_line());
  EXPECT_EQ(response.lines(0).counts().features(), 3u);
  EXPECT_EQ(response.lines(3).line(), "1.36");
  EXPECT_TRUE(response.lines(3).default_line());
  EXPECT_EQ(response.lines(3).digest(), response.digest());
}

TEST_F(LinesTest, LintCoversEveryLineAndNamesTheFile) {
  v1::LintCatalogResponse response;
  ASSERT_OK(handlers_.LintCatalog(*pipeline_->Current(),
                                  v1::LintCatalogRequest(), &response));
  EXPECT_THAT(response.reason(), HasSubstr("kubernetes-1.32.yaml"));
  EXPECT_THAT(response.reason(), HasSubstr("embedded:kubernetes-1.36"));
  for (const v1::LintFinding& f : response.findings()) {
    EXPECT_FALSE(f.source().empty());
  }
}

TEST(LinesPipelineTest, TheDefaultLineIsTheOperatorsChoice) {
  runtime::CatalogPipeline::Options options;
  options.sources = 2;
  options.default_line = engine::Version::MajorMinor(1, 33);
  runtime::CatalogPipeline pipeline(std::move(options));
  ASSERT_OK(
      pipeline.PublishLine(0, Load("kubernetes-1.33.yaml"), true).status());
  ASSERT_OK(
      pipeline.PublishLine(1, Load("kubernetes-1.34.yaml"), true).status());
  EXPECT_EQ(pipeline.Current()->default_catalog().binary_version.ToString(),
            "1.33.3");
}

TEST(LinesPipelineTest, TwoCatalogsOfOneLineAreRefusedAndTheFirstKeepsServing) {
  runtime::CatalogPipeline::Options options;
  options.sources = 2;
  runtime::CatalogPipeline pipeline(std::move(options));
  ASSERT_OK(
      pipeline.PublishLine(0, Load("kubernetes-1.33.yaml"), true).status());
  ASSERT_OK(
      pipeline.PublishLine(1, Load("kubernetes-1.34.yaml"), true).status());
  const uint64_t generation = pipeline.Current()->generation;
  EXPECT_THAT(
      pipeline.PublishLine(1, Load("kubernetes-1.33.yaml"), false).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("two catalogs describe kube-apiserver 1.33")));
  EXPECT_EQ(pipeline.Current()->generation, generation);
  EXPECT_EQ(pipeline.Current()->catalogs->line_names(), "1.33, 1.34");
}

TEST(LinesPipelineTest, AnUpgradeTargetOfALineNotServedIsRefused) {
  runtime::CatalogPipeline::Options options;
  options.sources = 2;
  runtime::CatalogPipeline pipeline(std::move(options));
  ASSERT_OK(
      pipeline.PublishLine(0, Load("kubernetes-1.33.yaml"), true).status());
  std::unique_ptr<engine::Catalog> aiming = Load("kubernetes-1.34.yaml");
  ASSERT_NE(aiming, nullptr);
  engine::UpgradeTarget target;
  target.binary_version = "1.37";
  target.line = 7;
  aiming->cluster.upgrade_target = target;
  EXPECT_THAT(
      pipeline.PublishLine(1, std::move(aiming), true).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("kubernetes-1.34.yaml:7: "
                         "cluster.upgradeTarget.binaryVersion \"1.37\": no "
                         "catalog describes kube-apiserver 1.37")));
  EXPECT_EQ(pipeline.Current(), nullptr);
}

}  // namespace
}  // namespace compatd::api
