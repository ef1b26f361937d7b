// engine::DecideFromHistory: each rule of engine/api_history.h at the release
// it starts to apply and the release before, on entries written as the
// embedded catalog's apiHistory has them.

#include "engine/api_history.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::engine {
namespace {

using ::testing::HasSubstr;

Version V(uint64_t minor) { return Version::MajorMinor(1, minor); }

// extensions/v1beta1 Deployment: introduced 1.1, deprecated 1.8, removed
// 1.16, replacement apps/v1; types deleted from k8s.io/api in 1.27.
APIHistoryEntry ExtensionsDeployment() {
  APIHistoryEntry e;
  e.group = "extensions";
  e.version = "v1beta1";
  e.kind = "Deployment";
  e.resource = "deployments";
  e.introduced = V(1);
  e.deprecated = V(8);
  e.removed = V(16);
  e.replacement = "apps/v1";
  e.types_deleted = V(27);
  return e;
}

TEST(ApiHistoryTest, RemovedFromItsRemovalRelease) {
  const HistoryVerdict verdict =
      DecideFromHistory(ExtensionsDeployment(), V(16));
  EXPECT_EQ(verdict.state, HistoryState::kRemoved);
  EXPECT_EQ(verdict.release, "1.16");
  EXPECT_EQ(verdict.message,
            "extensions/v1beta1 Deployment is removed in Kubernetes 1.16 "
            "(deprecated in 1.8); use apps/v1 Deployment instead");
  EXPECT_EQ(DecideFromHistory(ExtensionsDeployment(), V(37)).state,
            HistoryState::kRemoved);
}

TEST(ApiHistoryTest, BetaServedBefore124IsDeprecatedBeforeItsRemoval) {
  const HistoryVerdict verdict =
      DecideFromHistory(ExtensionsDeployment(), Version::MajorMinor(1, 15));
  EXPECT_EQ(verdict.state, HistoryState::kDeprecated);
  EXPECT_EQ(verdict.release, "1.8");
  EXPECT_THAT(verdict.message, HasSubstr("deprecated since Kubernetes 1.8 and "
                                         "removed in 1.16"));
}

TEST(ApiHistoryTest, DeprecatedFromItsDeprecationRelease) {
  APIHistoryEntry e = ExtensionsDeployment();
  EXPECT_EQ(DecideFromHistory(e, V(8)).state, HistoryState::kDeprecated);
  EXPECT_EQ(DecideFromHistory(e, V(7)).state, HistoryState::kServed);
}

TEST(ApiHistoryTest, NotYetIntroducedBeforeItsIntroduction) {
  APIHistoryEntry e;
  e.group = "resource.k8s.io";
  e.version = "v1";
  e.kind = "ResourceClaim";
  e.introduced = V(34);
  const HistoryVerdict verdict = DecideFromHistory(e, V(33));
  EXPECT_EQ(verdict.state, HistoryState::kNotYetIntroduced);
  EXPECT_EQ(verdict.release, "1.34");
  EXPECT_EQ(DecideFromHistory(e, V(34)).state, HistoryState::kServed);
}

TEST(ApiHistoryTest, TypesDeletedEndsAKindWithoutARemovalRelease) {
  // extensions/v1beta1 ThirdPartyResource: no lifecycle, types gone in 1.9.
  APIHistoryEntry e;
  e.group = "extensions";
  e.version = "v1beta1";
  e.kind = "ThirdPartyResource";
  e.types_deleted = V(9);
  const HistoryVerdict verdict = DecideFromHistory(e, V(16));
  EXPECT_EQ(verdict.state, HistoryState::kRemoved);
  EXPECT_EQ(verdict.release, "1.9");
  EXPECT_THAT(verdict.message, HasSubstr("k8s.io/api 1.9 no longer has its "
                                         "types"));
}

TEST(ApiHistoryTest, AlphaIsNeverServedByDefault) {
  APIHistoryEntry e;
  e.group = "storage.k8s.io";
  e.version = "v1alpha1";
  e.kind = "VolumeAttributesClass";
  e.introduced = V(29);
  e.deprecated = V(32);
  e.removed = V(35);
  const HistoryVerdict verdict = DecideFromHistory(e, V(30));
  EXPECT_EQ(verdict.state, HistoryState::kNotServedByDefault);
  EXPECT_THAT(verdict.message,
              HasSubstr("--runtime-config=storage.k8s.io/v1alpha1=true"));
  // Past its removal, removed wins.
  EXPECT_EQ(DecideFromHistory(e, V(35)).state, HistoryState::kRemoved);
}

TEST(ApiHistoryTest, NewBetaIsOffByDefaultFrom124) {
  // admissionregistration.k8s.io/v1beta1 ValidatingAdmissionPolicy: 1.28.
  APIHistoryEntry e;
  e.group = "admissionregistration.k8s.io";
  e.version = "v1beta1";
  e.kind = "ValidatingAdmissionPolicy";
  e.introduced = V(28);
  e.deprecated = V(31);
  e.removed = V(34);
  e.replacement = "admissionregistration.k8s.io/v1";
  const HistoryVerdict verdict = DecideFromHistory(e, V(29));
  EXPECT_EQ(verdict.state, HistoryState::kNotServedByDefault);
  EXPECT_THAT(verdict.message, HasSubstr("off by default since 1.24"));
  // Off by default wins over deprecated: the object cannot be applied.
  EXPECT_EQ(DecideFromHistory(e, V(32)).state,
            HistoryState::kNotServedByDefault);
}

TEST(ApiHistoryTest, LegacyBetaStaysOnAfter124) {
  // batch/v1beta1 CronJob: on by default until its removal in 1.25
  // (legacyBetaEnabledByDefaultResources).
  APIHistoryEntry e;
  e.group = "batch";
  e.version = "v1beta1";
  e.kind = "CronJob";
  e.introduced = V(8);
  e.deprecated = V(21);
  e.removed = V(25);
  e.replacement = "batch/v1";
  e.enabled_by_default = true;
  EXPECT_EQ(DecideFromHistory(e, V(24)).state, HistoryState::kDeprecated);
  EXPECT_EQ(DecideFromHistory(e, V(25)).state, HistoryState::kRemoved);
  e.enabled_by_default.reset();
  EXPECT_EQ(DecideFromHistory(e, V(24)).state,
            HistoryState::kNotServedByDefault);
  EXPECT_EQ(DecideFromHistory(e, V(23)).state, HistoryState::kDeprecated);
}

TEST(ApiHistoryTest, ReplacementKindWhenItDiffers) {
  APIHistoryEntry e;
  e.group = "";
  e.version = "v1";
  e.kind = "Endpoints";
  e.introduced = V(0);
  e.deprecated = V(33);
  e.replacement = "discovery.k8s.io/v1";
  e.replacement_kind = "EndpointSlice";
  EXPECT_EQ(HistoryReplacement(e), "discovery.k8s.io/v1 EndpointSlice");
  const HistoryVerdict verdict = DecideFromHistory(e, V(36));
  EXPECT_EQ(verdict.state, HistoryState::kDeprecated);
  EXPECT_EQ(verdict.message,
            "v1 Endpoints is deprecated since Kubernetes 1.33; use "
            "discovery.k8s.io/v1 EndpointSlice instead");
}

TEST(ApiHistoryTest, StateNames) {
  EXPECT_EQ(HistoryStateName(HistoryState::kNotServedByDefault),
            "not-served-by-default");
  EXPECT_EQ(HistoryStateName(HistoryState::kNotYetIntroduced),
            "not-yet-introduced");
}

}  // namespace
}  // namespace compatd::engine
