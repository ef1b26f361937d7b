// CheckCelExpression over the embedded catalog (binary 1.36) and the embedded
// CEL environments: the expected libraries and releases are base.go's at
// v0.36.0 and the older tags (tests/catalog/cel_environments_test.cc holds
// those); the handler, its Evaluate item and the validation.

#include "api/cel_check.h"

#include <memory>
#include <string>

#include "api/handlers.h"
#include "api/request_validation.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/catalog_pipeline.h"
#include "tests/api/embedded_snapshot.h"
#include "tests/testing/status_matchers.h"

namespace compatd::api {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::SizeIs;

class CelCheckTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    snapshot_ = new std::shared_ptr<const runtime::ServingSnapshot>(Embedded());
  }
  static void TearDownTestSuite() { delete snapshot_; }
  static const runtime::ServingSnapshot& Snapshot() { return **snapshot_; }

  static v1::CheckCelExpressionResponse Check(
      const std::string& expression, const std::string& min_compat,
      const std::string& emulation = "") {
    v1::CheckCelExpressionRequest request;
    request.set_expression(expression);
    request.mutable_versions()->set_binary_version("1.36");
    request.mutable_versions()->set_emulation_version(emulation);
    request.mutable_versions()->set_min_compatibility_version(min_compat);
    v1::CheckCelExpressionResponse response;
    const absl::Status status =
        PolicyHandlers().CheckCelExpression(Snapshot(), request, &response);
    EXPECT_TRUE(status.ok()) << status;
    return response;
  }

  static std::shared_ptr<const runtime::ServingSnapshot>* snapshot_;
};

std::shared_ptr<const runtime::ServingSnapshot>* CelCheckTest::snapshot_ =
    nullptr;

// A 1.36 binary runs at min-compatibility 1.33 at the lowest (its floor);
// ext.Lists v3 entered NewExpressions at 1.34 (base.go at v0.34.0+), SemverLib
// at 1.33 (v0.33.0+).
TEST_F(CelCheckTest, ListsAtMinCompatibility133CannotBeWritten) {
  const v1::CheckCelExpressionResponse r =
      Check("isSemver(object.spec.version) &&\n  lists.range(3).size() == 3",
            "1.33", "1.34");
  EXPECT_TRUE(r.parses());
  EXPECT_EQ(r.versions().min_compatibility_version(), "1.33");
  EXPECT_EQ(r.cel_environment(),
            "kubernetes/apiserver v0.36.0, cel-go v0.26.0");
  EXPECT_FALSE(r.writable());
  ASSERT_THAT(r.not_writable(), SizeIs(1));
  EXPECT_EQ(r.not_writable(0).name(), "range");
  EXPECT_EQ(r.not_writable(0).qualified_name(), "lists.range");
  EXPECT_EQ(r.not_writable(0).library(), "ext.Lists v3");
  EXPECT_EQ(r.not_writable(0).introduced(), "1.34");
  EXPECT_EQ(r.not_writable(0).line(), 2u);
  EXPECT_EQ(r.not_writable(0).column(), 9u);
  EXPECT_EQ(r.not_writable(0).offset(), 41u);
  // Rollbacks from 1.35 down to the floor 1.33: 1.33 lacks ext.Lists.
  ASSERT_THAT(r.rollbacks(), SizeIs(3));
  EXPECT_EQ(r.rollbacks(0).release(), "1.35");
  EXPECT_TRUE(r.rollbacks(0).readable());
  EXPECT_TRUE(r.rollbacks(1).readable());
  EXPECT_EQ(r.rollbacks(2).release(), "1.33");
  EXPECT_FALSE(r.rollbacks(2).readable());
  EXPECT_TRUE(r.rollbacks(2).known());
  ASSERT_THAT(r.rollbacks(2).missing(), SizeIs(1));
  EXPECT_EQ(r.rollbacks(2).missing(0).name(), "range");
  EXPECT_THAT(r.reason(),
              HasSubstr("cannot be written at min-compatibility 1.33: range "
                        "(line 2, column 9) is ext.Lists v3"));
  EXPECT_THAT(r.reason(),
              HasSubstr("cannot be read back after a rollback to 1.33"));
}

TEST_F(CelCheckTest, WritableAtTheDefaultsAndReadableDownToTheFloor) {
  // Binary 1.36's defaults: emulation 1.36, min-compatibility 1.35.
  const v1::CheckCelExpressionResponse r =
      Check("isSemver(object.spec.version)", "");
  EXPECT_TRUE(r.writable());
  EXPECT_EQ(r.versions().min_compatibility_version(), "1.35");
  ASSERT_THAT(r.rollbacks(), SizeIs(1));
  EXPECT_EQ(r.rollbacks(0).release(), "1.35");
  EXPECT_TRUE(r.rollbacks(0).readable());
  ASSERT_THAT(r.uses(), SizeIs(1));
  EXPECT_EQ(r.uses(0).kind(), "function");
  EXPECT_EQ(r.uses(0).library(), "kubernetes.SemverLib v1");
}

TEST_F(CelCheckTest, StandardLibraryUsesNameTheirLibrary) {
  const v1::CheckCelExpressionResponse r =
      Check("self.all(x, x.startsWith('a'))", "1.35");
  ASSERT_THAT(r.uses(), SizeIs(2));
  EXPECT_EQ(r.uses(0).kind(), "macro");
  EXPECT_EQ(r.uses(0).library(), "cel.stdlib");
  EXPECT_EQ(r.uses(0).introduced(), "1.0");
  EXPECT_TRUE(r.writable());
}

TEST_F(CelCheckTest, AnExpressionThatDoesNotParseIsAnAnswer) {
  const v1::CheckCelExpressionResponse r = Check("a &&", "1.35");
  EXPECT_FALSE(r.parses());
  EXPECT_THAT(r.parse_error(), HasSubstr("1:5"));
  EXPECT_FALSE(r.writable());
}

TEST_F(CelCheckTest, EvaluateItemGivesTheSameAnswer) {
  v1::EvaluateRequest request;
  request.mutable_versions()->set_min_compatibility_version("1.33");
  request.add_items()->mutable_check_cel_expression()->set_expression(
      "lists.range(3).size() == 3");
  v1::EvaluateResponse response;
  ASSERT_TRUE(PolicyHandlers().Evaluate(Snapshot(), request, &response).ok());
  ASSERT_THAT(response.results(), SizeIs(1));
  const v1::CheckCelExpressionResponse& r =
      response.results(0).check_cel_expression();
  EXPECT_FALSE(r.writable());
  EXPECT_EQ(r.not_writable(0).library(), "ext.Lists v3");
  EXPECT_EQ(r.not_writable(0).introduced(), "1.34");
}

// base.go at v0.36.0: ext.Lists(ListsVersion(3)) enters NewExpressions at 1.34;
// Semver at 1.33.
TEST_F(CelCheckTest, PlanListsTheLibrariesRaisingMinCompatibilityUnlocks) {
  v1::PlanUpgradeRequest request;
  request.mutable_from()->set_emulation_version("1.33");
  request.mutable_from()->set_min_compatibility_version("1.33");
  request.mutable_to()->set_emulation_version("1.36");
  v1::PlanUpgradeResponse plan;
  const absl::Status status =
      PolicyHandlers().PlanUpgrade(Snapshot(), request, &plan);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_THAT(plan.cel(), SizeIs(1));
  EXPECT_EQ(plan.cel(0).subject(), "CEL library ext.Lists v3");
  EXPECT_EQ(plan.cel(0).rule(), "cel-library-unlocked");
  EXPECT_THAT(plan.cel(0).reason(), HasSubstr("lists.range"));
  EXPECT_THAT(plan.cel(0).reason(), HasSubstr("sortBy (2 arguments)"));
  bool in_step = false;
  for (const v1::UpgradeStep& step : plan.steps()) {
    for (const v1::UpgradeItem& item : step.items()) {
      if (item.rule() == "cel-library-unlocked") {
        in_step = true;
        EXPECT_EQ(step.number(), plan.cel(0).step());
      }
    }
  }
  EXPECT_TRUE(in_step);
}

TEST_F(CelCheckTest, BadRequests) {
  v1::CheckCelExpressionRequest request;
  v1::CheckCelExpressionResponse response;
  EXPECT_THAT(
      PolicyHandlers().CheckCelExpression(Snapshot(), request, &response),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("expression: required")));
  request.set_expression(std::string(kMaxCelExpressionBytes + 1, 'a'));
  EXPECT_THAT(
      PolicyHandlers().CheckCelExpression(Snapshot(), request, &response),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expression")));
}

}  // namespace
}  // namespace compatd::api
