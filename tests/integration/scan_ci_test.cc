// `compatd scan` in CI (issue 35), run as a CI job runs it on a repository:
// Helm's values.yaml and Chart.yaml and a GitHub Actions workflow beside the
// manifests are skipped and counted in every output, not errors (--strict
// makes them errors); a --target inside a line compatd has is judged by that
// line; RBAC rules granting on removed API groups/resources are findings of
// their own that leave the exit code alone unless --fail-on-rbac.
//
// Expected values: the files under tests/testdata/scan/ci-repo and rbac, and
// Kubernetes' removals (the deprecated API migration guide:
// extensions/v1beta1 Ingress in 1.22, policy/v1beta1 PodSecurityPolicy in
// 1.25).

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"

namespace compatd {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunCompatd;
using testing::RunResult;

const std::string kScan = std::string(COMPATD_TESTDATA_DIR) + "/scan";

RunResult Scan(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"scan"};
  all.insert(all.end(), args.begin(), args.end());
  return RunCompatd(COMPATD_BINARY, all);
}

TEST(ScanCiTest, NonKubernetesDocumentsAreSkippedAndCountedInEveryOutput) {
  const std::string repo = kScan + "/ci-repo";
  RunResult r = Scan({repo});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 object(s) checked"));
  EXPECT_THAT(r.out, HasSubstr("; 3 non-Kubernetes documents skipped"));
  EXPECT_THAT(r.err, Not(HasSubstr("needs both")));
  r = Scan({"-o", "json", repo});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("\"skippedDocuments\": 3"),
                           HasSubstr("3 non-Kubernetes documents skipped")));
  r = Scan({"-o", "yaml", repo});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("skippedDocuments: 3\n"),
                           HasSubstr("3 non-Kubernetes documents skipped")));
  r = Scan({"-o", "sarif", repo});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("\"skippedDocuments\": 3"),
                           HasSubstr("3 non-Kubernetes documents skipped")));
}

TEST(ScanCiTest, StrictMakesThemErrors) {
  const RunResult r = Scan({"--strict", kScan + "/ci-repo"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("chart/values.yaml:2: the document has "
                                     "neither apiVersion nor kind"),
                           HasSubstr("chart/Chart.yaml:2: the document "
                                     "(apiVersion v2) has no kind"),
                           HasSubstr("workflows/ci.yaml:2:")));
  EXPECT_THAT(r.out, Not(HasSubstr("skipped")));
}

// kube-apiserver 1.32 has its own line: a 1.32 target is judged by it (its
// start-up at emulation 1.32), not by the default 1.36 binary's history
// (1.32 is outside 1.36's emulation window, 1.33-1.36).
TEST(ScanCiTest, ATargetWithALineIsJudgedByThatLine) {
  const std::string ingress = kScan + "/old-chart/templates/ingress.yaml";
  RunResult r = Scan({"--target=1.32", "-o", "json", ingress});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("\"catalogRelease\": \"1.32."),
                           HasSubstr("\"target\": \"1.32\""),
                           HasSubstr("inside the emulation window of binary "
                                     "1.32"),
                           HasSubstr("\"removed\": \"1.22\"")));
  // A target no line has: the default line's history, as before.
  r = Scan({"--target=1.29", "-o", "json", ingress});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("\"catalogRelease\": \"1.36"),
                           HasSubstr("outside the emulation window")));
}

TEST(ScanCiTest, RbacRulesOnRemovedApisAreTheirOwnFindings) {
  const std::string roles = kScan + "/rbac/roles.yaml";
  RunResult r = Scan({roles});
  // Printed, without changing the exit code.
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("roles.yaml:11"), HasSubstr("RBAC-REMOVED-API"),
                    HasSubstr("ClusterRole legacy-ingress-reader grants on "
                              "ingresses in API group extensions"),
                    HasSubstr("extensions/v1beta1 (1.22)"),
                    HasSubstr("grant on networking.k8s.io/v1 Ingress instead"),
                    HasSubstr("roles.yaml:24"),
                    HasSubstr("Role psp-user grants on podsecuritypolicies in "
                              "API group policy"),
                    HasSubstr("policy/v1beta1 (1.25)"),
                    HasSubstr("2 RBAC rule grant(s) on APIs removed")));
  // networking.k8s.io/v1 Ingress, apps/v1 Deployment and core pods are
  // served at 1.36: no finding.
  EXPECT_THAT(r.out, Not(HasSubstr("in API group networking.k8s.io")));
  EXPECT_THAT(r.out, Not(HasSubstr("deployments in")));
  EXPECT_THAT(r.out, Not(HasSubstr("pods in")));
  r = Scan({"--fail-on-rbac", roles});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  r = Scan({"-o", "json", roles});
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("\"status\": "
                              "\"SCAN_STATUS_RBAC_REMOVED_API\""),
                    HasSubstr("\"rbac\": 2"), HasSubstr("\"blocking\": 0")));
  // At 1.21 extensions/v1beta1 Ingress and policy/v1beta1 PodSecurityPolicy
  // were still served: nothing to say.
  r = Scan({"--target=1.21", roles});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("RBAC-REMOVED-API")));
}

}  // namespace
}  // namespace compatd
