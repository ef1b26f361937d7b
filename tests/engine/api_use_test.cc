// engine::ApiUseIndex: each verdict of engine/api_use.h on a catalog whose
// lifecycle facts are Kubernetes 1.36's (tests/testdata/catalogs/good/
// audit_cluster.yaml says which), and the order of severity.

#include "engine/api_use.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "catalog/catalog_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::engine {
namespace {

using ::testing::HasSubstr;

std::string ReadTestdata(const std::string& name) {
  std::ifstream in(absl::StrCat(COMPATD_TESTDATA_DIR, "/", name));
  EXPECT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<Catalog> Parse(const std::string& yaml) {
  absl::StatusOr<std::unique_ptr<Catalog>> parsed =
      catalog::ParseCatalog(yaml, "audit_cluster.yaml");
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *std::move(parsed) : nullptr;
}

class ApiUseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    yaml_ = ReadTestdata("catalogs/good/audit_cluster.yaml");
    catalog_ = Parse(yaml_);
    ASSERT_NE(catalog_, nullptr);
    index_ = ApiUseIndex::Build(*catalog_);
  }
  std::string yaml_;
  std::unique_ptr<Catalog> catalog_;
  ApiUseIndex index_;
};

TEST_F(ApiUseTest, RemovedLongAgoIsNotServedNow) {
  // policy/v1beta1 PodDisruptionBudget: removed in 1.25.
  const ApiUseJudgement* j =
      index_.Find("policy", "v1beta1", "poddisruptionbudgets");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->verdict, ApiUseVerdict::kNotServed);
  EXPECT_EQ(j->kind, "PodDisruptionBudget");
  EXPECT_EQ(j->replacement, "policy/v1");
  EXPECT_EQ(j->message,
            "policy/v1beta1 PodDisruptionBudget is not served at emulation "
            "version 1.34 (removed in Kubernetes 1.25): the call fails now; "
            "use policy/v1 PodDisruptionBudget instead");
}

TEST_F(ApiUseTest, RemovedAtTheEmulationVersionIsNotServedNow) {
  // admissionregistration.k8s.io/v1beta1 ValidatingAdmissionPolicy: removed
  // in 1.34, the cluster's emulation version, --runtime-config or not.
  const ApiUseJudgement* j = index_.Find(
      "admissionregistration.k8s.io", "v1beta1", "validatingadmissionpolicies");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->verdict, ApiUseVerdict::kNotServed);
  EXPECT_EQ(j->release, "1.34");
}

TEST_F(ApiUseTest, IntroducedAfterTheFloorIsNotServedAtRollback) {
  // admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy:
  // introduced in 1.34; the floor (min-compatibility 1.33) predates it.
  const ApiUseJudgement* j = index_.Find(
      "admissionregistration.k8s.io", "v1beta1", "mutatingadmissionpolicies");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->verdict, ApiUseVerdict::kNotServedAtRollback);
  EXPECT_EQ(j->release, "1.33");
  EXPECT_THAT(j->message, HasSubstr("introduced in Kubernetes 1.34"));
}

TEST_F(ApiUseTest, DeprecatedAndServedEverywhereIsDeprecated) {
  // networking.k8s.io/v1beta1 IPAddress: deprecated 1.34, removed 1.37 (after
  // the target's 1.36), introduced 1.31 (before the floor).
  const ApiUseJudgement* j =
      index_.Find("networking.k8s.io", "v1beta1", "ipaddresses");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->verdict, ApiUseVerdict::kDeprecated);
  EXPECT_EQ(j->release, "1.34");
  EXPECT_EQ(j->message,
            "networking.k8s.io/v1beta1 IPAddress is deprecated since "
            "Kubernetes 1.34 and removed in 1.37");
}

TEST_F(ApiUseTest, TurnedOffByTheTargetIsNotServedThere) {
  const ApiUseJudgement* j =
      index_.Find("certificates.k8s.io", "v1alpha1", "clustertrustbundles");
  ASSERT_NE(j, nullptr);
  // Deprecated now as well; the more severe verdict wins.
  EXPECT_EQ(j->verdict, ApiUseVerdict::kNotServedAtTarget);
  EXPECT_EQ(j->release, "1.36");
  EXPECT_THAT(j->message, HasSubstr("not enabled there by default or by the "
                                    "target's --runtime-config"));
}

TEST_F(ApiUseTest, RemovedByTheTargetIsRemovedAtTarget) {
  // The same cluster at emulation 1.33: v1beta1 ValidatingAdmissionPolicy
  // is served (--runtime-config) and the target's 1.36 is past its 1.34
  // removal.
  std::unique_ptr<Catalog> older = Parse(absl::StrReplaceAll(
      yaml_, {{"emulationVersion: \"1.34\"", "emulationVersion: \"1.33\""}}));
  ASSERT_NE(older, nullptr);
  const ApiUseIndex index = ApiUseIndex::Build(*older);
  const ApiUseJudgement* j = index.Find(
      "admissionregistration.k8s.io", "v1beta1", "validatingadmissionpolicies");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->verdict, ApiUseVerdict::kRemovedAtTarget);
  EXPECT_EQ(j->message,
            "admissionregistration.k8s.io/v1beta1 ValidatingAdmissionPolicy "
            "is not served at the upgrade target (emulation 1.36): removed in "
            "Kubernetes 1.34");
}

TEST_F(ApiUseTest, ServedApisAndUnknownOnesHaveNoVerdict) {
  EXPECT_EQ(index_.Find("", "v1", "pods"), nullptr);
  EXPECT_EQ(index_.Find("apps", "v1", "deployments"), nullptr);
  EXPECT_EQ(index_.Find("policy", "v1", "poddisruptionbudgets"), nullptr);
  EXPECT_TRUE(index_.Knows("", "v1", "pods"));
  // A custom resource: the catalog does not know it.
  EXPECT_EQ(index_.Find("example.com", "v1", "widgets"), nullptr);
  EXPECT_FALSE(index_.Knows("example.com", "v1", "widgets"));
  // Names longer than any catalog's are not looked up.
  EXPECT_EQ(index_.Find(std::string(400, 'a'), "v1", "pods"), nullptr);
  EXPECT_EQ(index_.size(), 5u);
}

TEST_F(ApiUseTest, WithoutATargetOnlyNowAndTheFloorCount) {
  std::string yaml = yaml_;
  const size_t at = yaml.find("  upgradeTarget:");
  const size_t end = yaml.find("apis:");
  yaml.erase(at, end - at);
  std::unique_ptr<Catalog> catalog = Parse(yaml);
  ASSERT_NE(catalog, nullptr);
  const ApiUseIndex index = ApiUseIndex::Build(*catalog);
  EXPECT_FALSE(index.target().has_value());
  const ApiUseJudgement* j =
      index.Find("certificates.k8s.io", "v1alpha1", "clustertrustbundles");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->verdict, ApiUseVerdict::kDeprecated);
}

TEST(ApiUseVerdictTest, Names) {
  EXPECT_EQ(ApiUseVerdictName(ApiUseVerdict::kNotServed), "not_served");
  EXPECT_EQ(ApiUseVerdictName(ApiUseVerdict::kRemovedAtTarget),
            "removed_at_target");
  EXPECT_EQ(ApiUseVerdictName(ApiUseVerdict::kNotServedAtTarget),
            "not_served_at_target");
  EXPECT_EQ(ApiUseVerdictName(ApiUseVerdict::kNotServedAtRollback),
            "not_served_at_rollback");
  EXPECT_EQ(ApiUseVerdictName(ApiUseVerdict::kDeprecated), "deprecated");
}

}  // namespace
}  // namespace compatd::engine
