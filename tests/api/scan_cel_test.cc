// The CEL part of a scan (api/scan_cel.h) through `compatd scan`'s own function
// (RunScan) and the ScanObjects handler, on
// tests/testdata/scan/cel/semver-policy.yaml: a ValidatingAdmissionPolicy
// calling isSemver() (SemverLib, in NewExpressions from 1.33 per base.go at
// v0.33.0+) and a CRD rule using a two-variable all()
// (TwoVarComprehensions, 1.32 per base.go at v0.32.0+).

#include "api/scan_cel.h"

#include <sstream>
#include <string>

#include "api/handlers.h"
#include "api/offline.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/catalog_pipeline.h"
#include "tests/testing/status_matchers.h"

namespace compatd::api {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

const char kPolicy[] =
    COMPATD_SOURCE_DIR "/tests/testdata/scan/cel/semver-policy.yaml";

struct ScanRun {
  int code = 0;
  std::string out;
  std::string err;
};

ScanRun Scan(const std::string& target, const std::string& min_compat,
             const std::string& output = "table") {
  ScanOptions options;
  options.target = target;
  options.cel_min_compatibility = min_compat;
  options.paths = {kPolicy};
  options.output = output;
  std::istringstream in;
  std::ostringstream out, err;
  ScanRun r;
  r.code = RunScan(options, in, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(ScanCelTest, SemverCannotBeWrittenAtMinCompatibility132) {
  const ScanRun r = Scan("1.35", "1.32");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  // The use's line in the file: the literal block's first line is line 19,
  // isSemver is on its third line (YAML strips the block's indentation: column
  // 3 of the expression).
  EXPECT_THAT(
      r.out,
      HasSubstr(
          ":21: spec.validations[1].expression (isSemver, line 3 column 3 "
          "of the expression) cannot be written at min-compatibility 1.32"));
  EXPECT_THAT(r.out, HasSubstr("isSemver is from kubernetes.SemverLib v1, in "
                               "NewExpressions from 1.33"));
  EXPECT_THAT(r.out, HasSubstr("cannot be read back after a rollback to 1.32"));
  // The two-variable all() entered NewExpressions at 1.32: writable at 1.32.
  EXPECT_THAT(r.out, Not(HasSubstr("x-kubernetes-validations[0].rule (all")));
  EXPECT_THAT(r.out, HasSubstr("CEL-NOT-WRITABLE"));
  EXPECT_THAT(
      r.out,
      HasSubstr("4 CEL expression(s) checked at min-compatibility 1.32"));
}

TEST(ScanCelTest, TwoVariableComprehensionAtMinCompatibility131) {
  const ScanRun r = Scan("1.34", "1.31");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(
      r.out,
      HasSubstr(
          ":47: spec.versions[0].schema.openAPIV3Schema.properties.spec."
          "properties.limits.x-kubernetes-validations[0].rule (all, line 1 "
          "column 6 of the expression) cannot be written at "
          "min-compatibility 1.31"));
}

// kube-apiserver 1.31 declares neither SemverLib (base.go: binary 1.33 on) nor
// TwoVarComprehensions (1.32 on): both are undeclared references there,
// whatever the min-compatibility version.
TEST(ScanCelTest, FunctionsTheTargetDoesNotDeclareAreErrors) {
  const ScanRun r = Scan("1.31", "");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("undeclared in kube-apiserver 1.31: isSemver is "
                               "kubernetes.SemverLib v1, which arrives in "
                               "1.33"));
  EXPECT_THAT(r.out,
              HasSubstr("undeclared in kube-apiserver 1.31: all (3 arguments) "
                        "is ext.TwoVarComprehensions, which arrives in 1.32"));
  EXPECT_THAT(r.out, HasSubstr("2 removed or not served"));
}

// No line for 1.29: base.go's history at v0.31.0 (the oldest line), said in
// the summary and in the JSON.
TEST(ScanCelTest, TargetsOlderThanEveryLineUseTheOldestLinesHistory) {
  ScanRun r = Scan("1.29", "");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("undeclared in kube-apiserver 1.29: isSemver"));
  EXPECT_THAT(r.out, HasSubstr("CEL environment: Kubernetes 1.29 from the "
                               "history in base.go of kubernetes/apiserver "
                               "v0.31.0"));
  r = Scan("1.29", "", "json");
  EXPECT_THAT(r.out, HasSubstr("\"celEnvironment\": \"Kubernetes 1.29 from the "
                               "history"));
}

TEST(ScanCelTest, TargetsWithoutCelDataSayCelNotChecked) {
  ScanRun r = Scan("1.22", "");
  EXPECT_THAT(r.out, HasSubstr("CEL not checked: compatd has no CEL "
                               "environment for Kubernetes 1.22"));
  EXPECT_THAT(r.out, Not(HasSubstr("CEL-NOT-WRITABLE")));
  r = Scan("1.22", "", "json");
  EXPECT_THAT(r.out, HasSubstr("\"celNotChecked\": \"CEL not checked"));
}

TEST(ScanCelTest, CleanOnceMinCompatibilityHasSemver) {
  const ScanRun r = Scan("1.36", "1.33");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST(ScanCelTest, MinCompatibilityBelowTheTargetsFloorIsRefused) {
  const ScanRun r = Scan("1.36", "1.32");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(
      r.err,
      HasSubstr("kube-apiserver 1.36 accepts a min-compatibility version "
                "between 1.33 and 1.36"));
}

TEST(ScanCelTest, MinCompatibilityDefaultsToTheTargetMinusOne) {
  absl::StatusOr<engine::Version> m =
      CelScanMinCompatibility(engine::Version::MajorMinor(1, 36), "");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->MajorMinorString(), "1.35");
  m = CelScanMinCompatibility(engine::Version::MajorMinor(1, 31), "");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->MajorMinorString(), "1.30");
}

}  // namespace
}  // namespace compatd::api
