// engine::JudgeApi, the one verdict (issue 35), over the embedded catalog of
// every release line (1.31-1.36), each judged at its own binary version with
// its own start-up (engine::ListServedAPIs with no flags).
//
// Expected values are Kubernetes': kubernetes/api's prerelease lifecycles at
// the staging tags (APILifecycleIntroduced/Deprecated/Removed and
// APILifecycleReplacement in zz_generated.prerelease-lifecycle.go) and the
// deprecated API migration guide (kubernetes.io/docs/reference/using-api/
// deprecation-guide): extensions/v1beta1 Ingress removed in 1.22 for
// networking.k8s.io/v1 Ingress; policy/v1beta1 PodSecurityPolicy removed in
// 1.25 (no replacement); autoscaling/v2beta2 HorizontalPodAutoscaler removed
// in 1.26 for autoscaling/v2; core v1 Endpoints deprecated in 1.33 for
// discovery.k8s.io/v1 EndpointSlice (KEP-4974, core/v1's hand-written
// lifecycle); apiextensions.k8s.io/v1 (GA 1.16), apiregistration.k8s.io/v1
// (GA 1.10) and policy/v1 Eviction (1.22) served throughout.

#include "engine/api_verdict.h"

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/api_availability.h"
#include "engine/effective_version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::engine {
namespace {

using ::testing::HasSubstr;

Version V(absl::string_view text) { return Version::Parse(text).value(); }

struct Line {
  std::unique_ptr<Catalog> catalog;
  EffectiveVersions versions;
  absl::flat_hash_set<std::string> served;
  ApiStartUp startup;
};

std::unique_ptr<Line> LoadLine(absl::string_view name) {
  const catalog::EmbeddedCatalog* embedded = catalog::FindEmbeddedCatalog(name);
  EXPECT_NE(embedded, nullptr) << name;
  if (embedded == nullptr) return nullptr;
  absl::StatusOr<std::unique_ptr<Catalog>> parsed =
      catalog::ParseCatalog(embedded->bytes, std::string(embedded->name));
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) return nullptr;
  auto line = std::make_unique<Line>();
  line->catalog = *std::move(parsed);
  line->versions = ResolveEffectiveVersions(*line->catalog, {}).value();
  absl::StatusOr<std::vector<ServedGroupVersion>> served =
      ListServedAPIs(*line->catalog, line->versions, {});
  EXPECT_TRUE(served.ok()) << served.status();
  if (!served.ok()) return nullptr;
  for (const ServedGroupVersion& gv : *served) {
    for (const std::string& r : gv.resources) {
      line->served.insert(ServedApiKey(gv.group, gv.version, r));
    }
  }
  line->startup = ApiStartUp{line->versions, &line->served};
  return line;
}

class EveryLine : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    line_ = LoadLine(GetParam());
    ASSERT_NE(line_, nullptr);
  }
  ApiVerdict Judge(absl::string_view group, absl::string_view version,
                   absl::string_view kind) const {
    return JudgeApi(*line_->catalog, &line_->startup, line_->versions.emulation,
                    group, version, kind);
  }
  std::unique_ptr<Line> line_;
};

TEST_P(EveryLine, GatekeeperBuiltInsOutsideTheStartUpAreServed) {
  for (const auto& [group, version, kind] :
       std::vector<std::tuple<const char*, const char*, const char*>>{
           {"apiextensions.k8s.io", "v1", "CustomResourceDefinition"},
           {"apiregistration.k8s.io", "v1", "APIService"},
           {"policy", "v1", "Eviction"},
           {"apps", "v1", "Deployment"}}) {
    const ApiVerdict v = Judge(group, version, kind);
    EXPECT_EQ(v.state, ApiState::kServed)
        << GetParam() << " " << group << "/" << version << " " << kind << ": "
        << v.message;
  }
  // Deployment is installed by kube-apiserver's start-up; the CRD by
  // apiextensions-apiserver, known from the history.
  EXPECT_EQ(Judge("apps", "v1", "Deployment").source, ApiSource::kStartUp);
  EXPECT_EQ(
      Judge("apiextensions.k8s.io", "v1", "CustomResourceDefinition").resource,
      "customresourcedefinitions");
}

TEST_P(EveryLine, RemovedBuiltInsAreRemovedWithTheirRelease) {
  const ApiVerdict psp = Judge("policy", "v1beta1", "PodSecurityPolicy");
  EXPECT_EQ(psp.state, ApiState::kRemoved) << psp.message;
  EXPECT_EQ(psp.removed, "1.25");
  EXPECT_EQ(psp.replacement, "");
  const ApiVerdict hpa =
      Judge("autoscaling", "v2beta2", "HorizontalPodAutoscaler");
  EXPECT_EQ(hpa.state, ApiState::kRemoved) << hpa.message;
  EXPECT_EQ(hpa.removed, "1.26");
  EXPECT_EQ(hpa.replacement, "autoscaling/v2");
  EXPECT_EQ(hpa.replacement_kind, "HorizontalPodAutoscaler");
  // Every line alike, whether its start-up lists the group (1.36) or not
  // (1.31-1.35).
  const ApiVerdict ingress = Judge("extensions", "v1beta1", "Ingress");
  EXPECT_EQ(ingress.state, ApiState::kRemoved) << ingress.message;
  EXPECT_EQ(ingress.removed, "1.22");
  EXPECT_EQ(ingress.deprecated, "1.14");
  EXPECT_EQ(ingress.replacement, "networking.k8s.io/v1");
  EXPECT_EQ(ingress.replacement_kind, "Ingress");
  EXPECT_THAT(ingress.message, HasSubstr("1.22"));
}

TEST_P(EveryLine, EndpointsAreDeprecatedFrom133ForEndpointSlice) {
  const ApiVerdict v = Judge("", "v1", "Endpoints");
  EXPECT_EQ(v.source, ApiSource::kStartUp);
  if (line_->versions.emulation.CompareMajorMinor(V("1.33")) >= 0) {
    EXPECT_EQ(v.state, ApiState::kDeprecated) << v.message;
    EXPECT_EQ(v.deprecated, "1.33");
    EXPECT_EQ(v.replacement, "discovery.k8s.io/v1");
    EXPECT_EQ(v.replacement_kind, "EndpointSlice");
    EXPECT_THAT(v.message,
                HasSubstr("use discovery.k8s.io/v1 EndpointSlice instead"));
  } else {
    EXPECT_EQ(v.state, ApiState::kServed) << v.message;
  }
}

TEST_P(EveryLine, CustomResourcesAreUnknown) {
  const ApiVerdict v = Judge("example.com", "v1", "Widget");
  EXPECT_EQ(v.state, ApiState::kUnknown);
  EXPECT_EQ(v.source, ApiSource::kNone);
  EXPECT_THAT(v.message, HasSubstr("custom or aggregated"));
}

TEST_P(EveryLine, ByResourceIsByItsKind) {
  const ApiVerdict v = JudgeApiResource(*line_->catalog, &line_->startup,
                                        line_->versions.emulation, "extensions",
                                        "v1beta1", "ingresses");
  EXPECT_EQ(v.kind, "Ingress");
  EXPECT_EQ(v.state, ApiState::kRemoved);
  EXPECT_EQ(JudgeApiResource(*line_->catalog, &line_->startup,
                             line_->versions.emulation, "example.com", "v1",
                             "widgets")
                .state,
            ApiState::kUnknown);
}

INSTANTIATE_TEST_SUITE_P(Lines, EveryLine,
                         ::testing::Values("1.31", "1.32", "1.33", "1.34",
                                           "1.35", "1.36", "1.37"));

TEST(JudgeApi, OutsideTheStartUpTheHistoryDecides) {
  std::unique_ptr<Line> line = LoadLine("1.36");
  ASSERT_NE(line, nullptr);
  // 1.20: extensions/v1beta1 Ingress was deprecated (1.14), still served.
  const ApiVerdict at_120 = JudgeApi(*line->catalog, &line->startup, V("1.20"),
                                     "extensions", "v1beta1", "Ingress");
  EXPECT_EQ(at_120.state, ApiState::kDeprecated) << at_120.message;
  EXPECT_EQ(at_120.source, ApiSource::kHistory);
  // The same without a start-up at all.
  EXPECT_EQ(JudgeApi(*line->catalog, nullptr, V("1.20"), "extensions",
                     "v1beta1", "Ingress")
                .state,
            ApiState::kDeprecated);
  // policy/v1 Eviction was introduced in 1.22.
  EXPECT_EQ(
      JudgeApi(*line->catalog, nullptr, V("1.21"), "policy", "v1", "Eviction")
          .state,
      ApiState::kNotYetIntroduced);
}

TEST(JudgeApi, TheStartUpDecidesWhatItInstalls) {
  std::unique_ptr<Line> line = LoadLine("1.36");
  ASSERT_NE(line, nullptr);
  // A start-up that serves nothing: every kind it installs is not served
  // (the history would call apps/v1 served).
  const absl::flat_hash_set<std::string> none;
  const ApiStartUp empty{line->versions, &none};
  const ApiVerdict v =
      JudgeApi(*line->catalog, &empty, line->versions.emulation, "apps", "v1",
               "Deployment");
  EXPECT_EQ(v.state, ApiState::kNotServed) << v.message;
  EXPECT_EQ(v.source, ApiSource::kStartUp);
  EXPECT_THAT(v.message, HasSubstr("--runtime-config=apps/v1=true"));
}

}  // namespace
}  // namespace compatd::engine
