// api/lanes.h: the one lane table of both ports.

#include "api/lanes.h"

#include "gtest/gtest.h"

namespace compatd::api {
namespace {

TEST(LanesTest, DecisionsAreLightScansPlansAndLintsHeavy) {
  for (Rpc rpc :
       {Rpc::kGetFeature, Rpc::kListFeatures, Rpc::kCheckSkew,
        Rpc::kGetStorageVersion, Rpc::kListAPIVersions, Rpc::kResolveVersions,
        Rpc::kComputeStorageVersionAgreement, Rpc::kPlanVersionRemoval,
        Rpc::kGetCatalog, Rpc::kListClients}) {
    EXPECT_EQ(LaneOf(rpc), Lane::kLight) << RpcName(rpc);
  }
  for (Rpc rpc : {Rpc::kScanObjects, Rpc::kPlanUpgrade, Rpc::kLintCatalog}) {
    EXPECT_EQ(LaneOf(rpc), Lane::kHeavy) << RpcName(rpc);
  }
  // HTTP routes without a row are light.
  EXPECT_EQ(LaneOf("/admission/v1/validate"), Lane::kLight);
  EXPECT_EQ(LaneOf("/gatekeeper/v1"), Lane::kLight);
  EXPECT_EQ(LaneOf("/healthz"), Lane::kLight);
}

TEST(LanesTest, EvaluateIsHeavyWithAHeavyItemOrManyItems) {
  v1::EvaluateRequest request;
  request.add_items()->mutable_get_feature()->set_name("WatchList");
  request.add_items()->mutable_check_skew()->set_component("kubelet");
  EXPECT_EQ(LaneOf(request), Lane::kLight);
  request.add_items()->mutable_scan_objects()->set_objects("kind: Pod");
  EXPECT_EQ(LaneOf(request), Lane::kHeavy);

  v1::EvaluateRequest plan;
  plan.add_items()->mutable_plan_upgrade();
  EXPECT_EQ(LaneOf(plan), Lane::kHeavy);

  v1::EvaluateRequest many;
  for (int i = 0; i <= kLightEvaluateItems; ++i) {
    many.add_items()->mutable_get_feature()->set_name("WatchList");
  }
  EXPECT_EQ(LaneOf(many), Lane::kHeavy);
  many.mutable_items()->RemoveLast();
  EXPECT_EQ(LaneOf(many), Lane::kLight);
}

TEST(LanesTest, TheRefusalNamesTheFlags) {
  base::WorkPool pool({"heavy", 1, 0});
  EXPECT_EQ(LaneFullMessage(pool),
            "the heavy lane is full (0 running, 0 waiting; "
            "--heavy-workers=1, --heavy-queue=0): retry in a few seconds");
}

}  // namespace
}  // namespace compatd::api
