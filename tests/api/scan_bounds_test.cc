// api::ScanManifests' answer bounds (ScanLimits, issue 23): findings and
// problems within the answer's bytes, the rest counted and the answer marked
// partial; messages of bounded length; a CRD's versions named a bounded
// number of times; a spent work budget ends the scan with what it found.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/scan.h"
#include "base/work_budget.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/api/embedded_snapshot.h"

namespace compatd::api {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class ScanBoundsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    snapshot_ = new std::shared_ptr<const runtime::ServingSnapshot>(Embedded());
  }
  static void TearDownTestSuite() { delete snapshot_; }

  static v1::ScanObjectsResponse Scan(const std::vector<ScanText>& texts,
                                      const ScanLimits& limits = ScanLimits(),
                                      absl::string_view target = "1.30",
                                      absl::string_view cel_min = "") {
    v1::ScanObjectsResponse response;
    const absl::Status status =
        ScanManifests((*snapshot_)->default_line(), engine::VersionQuery{},
                      target, texts, &response, limits, cel_min);
    EXPECT_TRUE(status.ok()) << status;
    return response;
  }

  static std::shared_ptr<const runtime::ServingSnapshot>* snapshot_;
};

std::shared_ptr<const runtime::ServingSnapshot>* ScanBoundsTest::snapshot_ =
    nullptr;

std::string Ingresses(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    text +=
        "---\napiVersion: extensions/v1beta1\nkind: Ingress\n"
        "metadata: {name: i}\n";
  }
  return text;
}

TEST_F(ScanBoundsTest, FindingsPastTheAnswerBoundAreCountedNotListed) {
  // 94 KB of request made a 126 MB answer: a 4 KiB source name per item.
  const std::string source(4096, 's');
  ScanLimits limits;
  limits.max_answer_bytes = 64 * 1024;
  const v1::ScanObjectsResponse r =
      Scan({ScanText{source, Ingresses(1000)}}, limits);
  EXPECT_EQ(r.objects(), 1000u);
  EXPECT_EQ(r.blocking(), 1000u);  // the tallies count every finding
  EXPECT_TRUE(r.partial());
  EXPECT_THAT(r.partial_reason(), HasSubstr("--max-send-message-bytes"));
  EXPECT_EQ(r.findings_size() + static_cast<int>(r.omitted_findings()), 1000);
  EXPECT_GT(r.findings_size(), 0);
  EXPECT_LE(r.ByteSizeLong(), limits.max_answer_bytes + 4096);
}

TEST_F(ScanBoundsTest, ASourceIsNamedOncePerAnswer) {
  const std::string source(4096, 's');
  const v1::ScanObjectsResponse r =
      Scan({ScanText{"a.yaml", Ingresses(2)}, ScanText{source, Ingresses(1000)},
            ScanText{"b.yaml", "--- [\n"}});
  EXPECT_FALSE(r.partial()) << r.partial_reason();
  ASSERT_EQ(r.findings_size(), 1002);
  ASSERT_EQ(r.sources_size(), 3);
  EXPECT_EQ(r.sources(0), "a.yaml");
  EXPECT_EQ(r.sources(1), source);
  EXPECT_EQ(r.sources(2), "b.yaml");
  EXPECT_EQ(r.findings(0).source(), "a.yaml");
  EXPECT_EQ(r.findings(0).source_index(), 0u);
  for (int i = 2; i < r.findings_size(); ++i) {
    const v1::ScanFinding& f = r.findings(i);
    ASSERT_EQ(f.source_index(), 1u);
    // Cut to 256 bytes and marked; the whole name is sources(1).
    ASSERT_EQ(f.source(), std::string(256, 's') + "...");
    ASSERT_EQ(SourceName(r, f), source);
  }
  ASSERT_GE(r.problems_size(), 1);
  for (const v1::ScanProblem& p : r.problems()) {
    EXPECT_EQ(p.source_index(), 2u);
    EXPECT_EQ(SourceName(r, p), "b.yaml");
  }
  // The name once, not 1000 times: under 600 bytes a finding.
  EXPECT_LT(r.ByteSizeLong(), 1002u * 600);
}

TEST_F(ScanBoundsTest, CelFindingsAreWithinTheAnswerBound) {
  // Each validation calls isSemver (NewExpressions from 1.33): at
  // min-compatibility 1.32 it cannot be written, nor read after a rollback
  // to 1.32.
  std::string text =
      "apiVersion: admissionregistration.k8s.io/v1\n"
      "kind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n"
      "  validations:\n";
  for (int i = 0; i < 2000; ++i) {
    text += "  - expression: isSemver('1.0.0')\n";
  }
  ScanLimits limits;
  limits.max_answer_bytes = 32 * 1024;
  const v1::ScanObjectsResponse r =
      Scan({ScanText{"vap.yaml", text}}, limits, "1.35", "1.32");
  EXPECT_TRUE(r.partial());
  EXPECT_THAT(r.partial_reason(), HasSubstr("--max-send-message-bytes"));
  EXPECT_GT(r.findings_size(), 0);
  EXPECT_GT(r.omitted_findings(), 0u);
  // Each expression is one finding of each kind, listed or not.
  EXPECT_EQ(r.findings_size() + static_cast<int>(r.omitted_findings()),
            static_cast<int>(r.blocking() + r.deprecated()));
  EXPECT_GE(r.blocking(), 2000u);
  EXPECT_LE(r.ByteSizeLong(), limits.max_answer_bytes + 4096);
}

TEST_F(ScanBoundsTest, ASpentBudgetStopsTheCelChecks) {
  std::string text;
  for (int i = 0; i < 200; ++i) {
    text +=
        "---\napiVersion: admissionregistration.k8s.io/v1\n"
        "kind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n"
        "spec: {validations: [{expression: \"isSemver('1.0.0')\"}]}\n";
  }
  base::ScopedWorkBudget budget(absl::Now() - absl::Seconds(1), nullptr);
  const v1::ScanObjectsResponse r =
      Scan({ScanText{"vap.yaml", text}}, ScanLimits(), "1.35", "1.32");
  EXPECT_TRUE(r.partial());
  EXPECT_THAT(r.partial_reason(), HasSubstr("--max-heavy-work-time"));
  EXPECT_LT(r.blocking(), 200u);
}

TEST_F(ScanBoundsTest, ProblemsPastTheAnswerBoundAreCountedNotListed) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "--- [\n";
  ScanLimits limits;
  limits.max_answer_bytes = 16 * 1024;
  const v1::ScanObjectsResponse r = Scan({ScanText{"bad", text}}, limits);
  EXPECT_TRUE(r.partial());
  EXPECT_GT(r.omitted_problems(), 0u);
  EXPECT_LE(r.ByteSizeLong(), limits.max_answer_bytes + 1024);
}

TEST_F(ScanBoundsTest, ACrdsVersionsAreNamedABoundedNumberOfTimes) {
  // A CRD of V versions and C custom resources of a version it does not
  // list made C findings naming all V: 615 KB -> 441 MB.
  std::string text =
      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
      "metadata: {name: widgets.example.com}\nspec:\n  group: example.com\n"
      "  names: {kind: Widget, plural: widgets}\n  versions:\n";
  for (int i = 0; i < 90; ++i) {
    absl::StrAppend(&text, "  - {name: v", i,
                    ", served: true, storage: ", i == 0 ? "true" : "false",
                    "}\n");
  }
  text +=
      "---\napiVersion: example.com/v999\nkind: Widget\nmetadata: {name: "
      "w}\n";
  const v1::ScanObjectsResponse r = Scan({ScanText{"crd", text}});
  ASSERT_EQ(r.findings_size(), 1);
  EXPECT_THAT(r.findings(0).message(),
              HasSubstr("it lists v0, v1, v2, v3, v4, v5, v6, v7 and 82 more"));
  EXPECT_FALSE(r.partial());
}

TEST_F(ScanBoundsTest, LongMessagesAreCut) {
  ScanLimits limits;
  limits.max_message_bytes = 64;
  const v1::ScanObjectsResponse r =
      Scan({ScanText{"x", "apiVersion: apps/v" + std::string(500, 'a') +
                              "\nkind: K\n"}},
           limits);
  ASSERT_EQ(r.findings_size(), 1);  // apps is built in: an unknown version
  for (const v1::ScanFinding& f : r.findings()) {
    EXPECT_LE(f.message().size(), 64u + 3);
  }
  for (const v1::ScanProblem& p : r.problems()) {
    EXPECT_LE(p.message().size(), 64u + 3);
  }
}

TEST_F(ScanBoundsTest, ASpentBudgetEndsTheScanWithAPartialAnswer) {
  base::ScopedWorkBudget budget(absl::Now() - absl::Seconds(1), nullptr);
  const v1::ScanObjectsResponse r = Scan({ScanText{"i", Ingresses(2000)}});
  EXPECT_TRUE(r.partial());
  EXPECT_THAT(r.partial_reason(), HasSubstr("--max-heavy-work-time"));
  EXPECT_LT(r.objects(), 2000u);
}

TEST_F(ScanBoundsTest, AnOrdinaryScanIsWhole) {
  const v1::ScanObjectsResponse r = Scan({ScanText{"i", Ingresses(10)}});
  EXPECT_FALSE(r.partial());
  EXPECT_THAT(r.partial_reason(), IsEmpty());
  EXPECT_EQ(r.findings_size(), 10);
  EXPECT_EQ(r.omitted_findings(), 0u);
}

}  // namespace
}  // namespace compatd::api
