// CatalogPipeline::SetCluster: a cluster profile's settings put in force over
// the embedded lines of 1.35 and 1.36 (the default line becomes the cluster's,
// its catalog's facts stay as loaded, and a profile the lines cannot answer
// never replaces the one in force).

#include "runtime/catalog_pipeline.h"

#include <memory>
#include <string>
#include <utility>

#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::runtime {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<engine::Catalog> Embedded(const char* line) {
  const catalog::EmbeddedCatalog* embedded = catalog::FindEmbeddedCatalog(line);
  EXPECT_NE(embedded, nullptr) << line;
  if (embedded == nullptr) return nullptr;
  absl::StatusOr<std::unique_ptr<engine::Catalog>> c =
      catalog::ParseCatalog(embedded->bytes, embedded->name);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : nullptr;
}

std::shared_ptr<const engine::ClusterSettings> Cluster(const char* binary,
                                                       const char* gates = "") {
  auto s = std::make_shared<engine::ClusterSettings>();
  s->binary = *engine::Version::Parse(binary);
  s->source = "profile.yaml";
  s->binary_origin = "profile.yaml:1 (binaryVersion)";
  if (gates[0] != '\0') {
    s->feature_gates.emplace_back(gates, false);
    s->feature_gates_origin = "profile.yaml:2 (featureGates)";
  }
  return s;
}

class CatalogPipelineClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pipeline_.PublishLine(0, Embedded("1.35"), true).ok());
    ASSERT_TRUE(pipeline_.PublishLine(1, Embedded("1.36"), true).ok());
    ASSERT_NE(pipeline_.Current(), nullptr);
  }

  const engine::Catalog& DefaultCatalog() const {
    return pipeline_.Current()->catalogs->default_catalog();
  }

  static CatalogPipeline::Options TwoSources() {
    CatalogPipeline::Options options;
    options.sources = 2;
    return options;
  }

  CatalogPipeline pipeline_{TwoSources()};
};

TEST_F(CatalogPipelineClusterTest, TheClusterPicksTheDefaultLine) {
  // Without a cluster: the newest exact line.
  EXPECT_EQ(DefaultCatalog().binary_version.MajorMinorString(), "1.36");
  const uint64_t before = pipeline_.Current()->generation;
  ASSERT_TRUE(pipeline_.SetCluster(Cluster("1.35.2"), false).ok());
  EXPECT_GT(pipeline_.Current()->generation, before);
  EXPECT_EQ(DefaultCatalog().binary_version.MajorMinorString(), "1.35");
  ASSERT_TRUE(DefaultCatalog().cluster.binary.has_value());
  EXPECT_EQ(DefaultCatalog().cluster.binary->ToString(), "1.35.2");
  EXPECT_EQ(DefaultCatalog().cluster.source, "profile.yaml");
  // The other line keeps its catalog's own (empty) cluster section.
  const engine::Catalog* other =
      pipeline_.Current()->catalogs->Find(*engine::Version::Parse("1.36"));
  ASSERT_NE(other, nullptr);
  EXPECT_FALSE(other->cluster.binary.has_value());
}

TEST_F(CatalogPipelineClusterTest, AClusterOfNoLineServedIsRefused) {
  ASSERT_TRUE(pipeline_.SetCluster(Cluster("1.35.2"), false).ok());
  const uint64_t generation = pipeline_.Current()->generation;
  absl::StatusOr<std::shared_ptr<const ServingSnapshot>> set =
      pipeline_.SetCluster(Cluster("1.30.4"), false);
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(),
              HasSubstr("profile.yaml:1 (binaryVersion): the cluster's "
                        "kube-apiserver 1.30.4: no catalog describes "
                        "kube-apiserver 1.30; the release lines served are "
                        "1.35, 1.36"));
  // The good profile stays in force.
  EXPECT_EQ(pipeline_.Current()->generation, generation);
  EXPECT_EQ(pipeline_.cluster()->binary->ToString(), "1.35.2");
  EXPECT_EQ(DefaultCatalog().binary_version.MajorMinorString(), "1.35");
}

// kube-apiserver 1.36 refuses a --feature-gates entry it does not register
// (featuregate's unsafeSetFromMap: "unrecognized feature gate"): so does the
// pipeline, naming the profile's line.
TEST_F(CatalogPipelineClusterTest, AGateTheBinaryDoesNotRegisterIsRefused) {
  absl::StatusOr<std::shared_ptr<const ServingSnapshot>> set =
      pipeline_.SetCluster(Cluster("1.36", "NoSuchGate"), false);
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("profile.yaml:2"));
  EXPECT_THAT(set.status().message(),
              HasSubstr("unrecognized feature gate: NoSuchGate"));
  EXPECT_EQ(pipeline_.cluster(), nullptr);
}

TEST_F(CatalogPipelineClusterTest, ACatalogReloadKeepsTheClusterApplied) {
  ASSERT_TRUE(pipeline_.SetCluster(Cluster("1.35.2", "WatchList"), false).ok());
  ASSERT_TRUE(pipeline_.PublishLine(0, Embedded("1.35"), false).ok());
  EXPECT_EQ(DefaultCatalog().binary_version.MajorMinorString(), "1.35");
  ASSERT_EQ(DefaultCatalog().cluster.feature_gates.size(), 1u);
  EXPECT_EQ(DefaultCatalog().cluster.feature_gates[0].first, "WatchList");
}

TEST_F(CatalogPipelineClusterTest, ClearingTheClusterRestoresTheDefault) {
  ASSERT_TRUE(pipeline_.SetCluster(Cluster("1.35.2"), false).ok());
  ASSERT_TRUE(pipeline_.SetCluster(nullptr, false).ok());
  EXPECT_EQ(DefaultCatalog().binary_version.MajorMinorString(), "1.36");
  const engine::Catalog* old =
      pipeline_.Current()->catalogs->Find(*engine::Version::Parse("1.35"));
  ASSERT_NE(old, nullptr);
  EXPECT_FALSE(old->cluster.binary.has_value());
}

}  // namespace
}  // namespace compatd::runtime
