// manifest::ReadCelFields' bounds (issue 23): the CEL reader of a scan reads
// the same hostile texts as ReadManifests and must stop where it stops, in
// linear time and memory. Before: a 2.5 MB %TAG flood took 4.8 s of CPU
// after ReadManifests had stopped at its 17th directive, and 185 KB of
// "name" keys at depth 900 held 868 MB (each copied the whole path).

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/work_budget.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manifest/cel_fields.h"
#include "tests/testing/count_allocations.h"

namespace compatd::manifest {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using Clock = std::chrono::steady_clock;

constexpr char kPolicyHead[] =
    "apiVersion: admissionregistration.k8s.io/v1\n"
    "kind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n";

TEST(CelFieldsBoundsTest, ADirectiveFloodIsNotRead) {
  std::string text = absl::StrCat(
      kPolicyHead, "spec:\n  validations:\n  - expression: a\n...\n");
  for (int i = 0; i < 60000; ++i) {
    absl::StrAppend(&text, "%TAG !t", i, "! tag:example.com,2000:\n");
  }
  absl::StrAppend(&text, "---\n", kPolicyHead,
                  "spec:\n  validations:\n  - expression: b\n");
  const auto start = Clock::now();
  const CelFields read = ReadCelFields(text);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(1));
  // The first document only; ReadManifests reports the flood.
  ASSERT_THAT(read.objects, SizeIs(1));
  EXPECT_EQ(read.objects[0].fields[0].expression, "a");
  EXPECT_THAT(read.stopped, IsEmpty());
}

TEST(CelFieldsBoundsTest, DeepKeysTakeLinearMemory) {
  const int depth = 900;
  std::string text = absl::StrCat(kPolicyHead, "spec: ");
  for (int i = 0; i < depth; ++i) text += "{a: ";
  text += "{";
  for (int i = 0; i < 20000; ++i) text += "name: x, rule: y, ";
  text += "b: c}";
  for (int i = 0; i < depth; ++i) text += "}";
  text += "\n";
  testing::ResetPeakBytes();
  const CelFields read = ReadCelFields(text);
  // No field of a ValidatingAdmissionPolicy is that deep. The reader holds
  // one path; each CEL candidate its own (at most kMaxCelPathBytes, for at
  // most kMaxCelFields: 40 MB), where a copy of the 900-frame path for each
  // of these keys held 868 MB (39 MB measured now).
  EXPECT_THAT(read.objects, IsEmpty());
  EXPECT_LT(testing::PeakBytes(), 64L << 20) << testing::PeakBytes();
}

TEST(CelFieldsBoundsTest, CelFieldsPastTheBoundStopTheRead) {
  std::string text = absl::StrCat(kPolicyHead, "spec:\n  validations:\n");
  for (int i = 0; i < kMaxCelFields + 10; ++i) {
    absl::StrAppend(&text, "  - expression: e", i, "\n");
  }
  const CelFields read = ReadCelFields(text);
  EXPECT_THAT(read.stopped, HasSubstr("more than 20000 CEL fields"));
  EXPECT_GT(read.stopped_line, kMaxCelFields);
  // The document did not end: nothing of it is returned.
  EXPECT_THAT(read.objects, IsEmpty());
}

TEST(CelFieldsBoundsTest, AListOfManyItemsKeepsOnlyThoseWithCel) {
  std::string text = "apiVersion: v1\nkind: List\nitems:\n";
  for (int i = 0; i < 200000; ++i) text += "- {}\n";
  absl::StrAppend(&text,
                  "- apiVersion: admissionregistration.k8s.io/v1\n"
                  "  kind: ValidatingAdmissionPolicy\n  metadata: {name: p}\n"
                  "  spec: {validations: [{expression: a}]}\n");
  testing::ResetPeakBytes();
  ReadLimits limits;
  limits.max_entries = 1000000;
  const CelFields read = ReadCelFields(text, limits);
  ASSERT_THAT(read.objects, SizeIs(1));
  EXPECT_EQ(read.objects[0].name, "p");
  EXPECT_EQ(read.objects[0].fields[0].path, "spec.validations[0].expression");
  EXPECT_LT(testing::PeakBytes(), 8L << 20);
}

TEST(CelFieldsBoundsTest, ObjectsPastTheBoundStopTheReadSilently) {
  std::string text = "apiVersion: v1\nkind: List\nitems:\n";
  for (int i = 0; i < 200; ++i) text += "- {}\n";
  ReadLimits limits;
  limits.max_entries = 100;  // ReadManifests reports the same bound
  const CelFields read = ReadCelFields(text, limits);
  EXPECT_THAT(read.stopped, IsEmpty());
}

TEST(CelFieldsBoundsTest, ASpentBudgetStopsTheRead) {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    absl::StrAppend(&text, "---\n", kPolicyHead,
                    "spec: {validations: [{expression: a}]}\n");
  }
  const base::WorkBudget spent(absl::Now() - absl::Seconds(1), nullptr);
  ReadLimits limits;
  limits.budget = &spent;
  const CelFields read = ReadCelFields(text, limits);
  EXPECT_GT(read.objects.size(), 0u);
  EXPECT_LT(read.objects.size(), 5000u);
  EXPECT_EQ(ReadCelFields(text).objects.size(), 5000u);
}

}  // namespace
}  // namespace compatd::manifest
