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

// Binary 1.37 (v0.37.0-beta.0's base.go, through AnswerCelCheck: the snapshot
// here holds only the default line): Lists v1 enters NewExpressions at 1.37.
TEST(CelCheckLinesTest, AtBinary137ListsIncludesNeedsMinCompatibility137) {
  engine::EffectiveVersions versions;
  versions.binary = engine::Version::MajorMinor(1, 37);
  versions.emulation = versions.binary;
  versions.min_compatibility = engine::Version::MajorMinor(1, 36);
  v1::CheckCelExpressionRequest request;
  request.set_expression("object.spec.models.includes('a')");
  v1::CheckCelExpressionResponse r;
  ASSERT_TRUE(AnswerCelCheck(versions, request, &r).ok());
  EXPECT_EQ(r.cel_environment(),
            "kubernetes/apiserver v0.37.0-beta.0 (pre-release tag, not a "
            "release), cel-go v0.27.0");
  EXPECT_FALSE(r.writable());
  EXPECT_THAT(r.reason(), HasSubstr("cannot be written at min-compatibility "
                                    "1.36: includes (line 1, column 20) is "
                                    "kubernetes.Lists v1, in NewExpressions "
                                    "from 1.37"));
  versions.min_compatibility = versions.binary;
  r.Clear();
  ASSERT_TRUE(AnswerCelCheck(versions, request, &r).ok());
  EXPECT_TRUE(r.writable()) << r.reason();
}

// Binary 1.31 at min-compatibility 1.30: the rollback to 1.30 is judged from
// base.go's history, and a two-variable comprehension is undeclared.
TEST(CelCheckLinesTest, AtBinary131TheRollbackTo130IsJudged) {
  engine::EffectiveVersions versions;
  versions.binary = engine::Version::MajorMinor(1, 31);
  versions.emulation = versions.binary;
  versions.min_compatibility = engine::Version::MajorMinor(1, 30);
  v1::CheckCelExpressionRequest request;
  request.set_expression(
      "self.all(k, v, v > 0) && format.named('uuid') != null");
  v1::CheckCelExpressionResponse r;
  ASSERT_TRUE(AnswerCelCheck(versions, request, &r).ok());
  EXPECT_FALSE(r.writable());
  EXPECT_THAT(r.reason(),
              HasSubstr("undeclared in kube-apiserver 1.31: all (3 arguments) "
                        "(line 1, column 6) is ext.TwoVarComprehensions, which "
                        "arrives in 1.32"));
  ASSERT_THAT(r.rollbacks(), SizeIs(1));
  EXPECT_TRUE(r.rollbacks(0).known());
  EXPECT_FALSE(r.rollbacks(0).readable());
  EXPECT_THAT(r.rollbacks(0).cel_environment(),
              HasSubstr("Kubernetes 1.30 from the history in base.go"));
  ASSERT_THAT(r.rollbacks(0).missing(), SizeIs(1));
  EXPECT_EQ(r.rollbacks(0).missing(0).library(), "kubernetes.Format");
}

TEST_F(CelCheckTest, AFunctionBinary136DoesNotDeclareIsUndeclared) {
  const v1::CheckCelExpressionResponse r =
      Check("object.spec.models.includes('a')", "1.35");
  EXPECT_FALSE(r.writable());
  ASSERT_THAT(r.not_writable(), SizeIs(1));
  EXPECT_EQ(r.not_writable(0).library(), "kubernetes.Lists v1");
  EXPECT_EQ(r.not_writable(0).introduced(), "1.37");
  EXPECT_THAT(r.reason(), HasSubstr("undeclared in kube-apiserver 1.36: "
                                    "includes (line 1, column 20) is "
                                    "kubernetes.Lists v1, which arrives in "
                                    "1.37"));
}

// cel.bind (ext.Bindings) is in no base.go; jsonpatch.escapeKey only in a
// MutatingAdmissionPolicy mutation (compile.go hasPatchTypes).
TEST_F(CelCheckTest, NoEnvironmentDeclaresBindAndJsonPatchIsForMutations) {
  v1::CheckCelExpressionResponse r = Check("cel.bind(x, 1, x) == 1", "1.35");
  EXPECT_FALSE(r.writable());
  EXPECT_THAT(r.reason(), HasSubstr("undeclared reference to cel.bind"));
  r = Check("jsonpatch.escapeKey('a/b') == 'a~1b'", "1.35");
  EXPECT_FALSE(r.writable());
  v1::CheckCelExpressionRequest request;
  request.set_expression("jsonpatch.escapeKey('a/b') == 'a~1b'");
  request.set_mutation(true);
  r.Clear();
  ASSERT_TRUE(
      PolicyHandlers().CheckCelExpression(Snapshot(), request, &r).ok());
  EXPECT_TRUE(r.writable()) << r.reason();
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
