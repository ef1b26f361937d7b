// manifest::ReadManifests' bounds (ReadLimits, issue 23): each hostile input
// that cost seconds of CPU or gigabytes of memory stops at its bound, with a
// problem at the line where it stopped; real manifests are far below them.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/work_budget.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manifest/manifest_reader.h"

namespace compatd::manifest {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using Clock = std::chrono::steady_clock;

auto Elapsed(Clock::time_point start) { return Clock::now() - start; }

TEST(ManifestBoundsTest, DirectiveFloodStopsBeforeLibyamlSeesIt) {
  // 1.68 MB of %TAG directives took libyaml 28.7 s (each compared with all
  // before it).
  std::string text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n";
  const int directives_line = 4;
  std::string flood;
  for (int i = 0; i < 60000; ++i) {
    absl::StrAppend(&flood, "%TAG !t", i, "! tag:example.com,2000:\n");
  }
  text += "...\n" + flood + "---\napiVersion: v1\nkind: Secret\n";
  const auto start = Clock::now();
  const ManifestContents c = ReadManifests(text);
  EXPECT_LT(Elapsed(start), std::chrono::seconds(1));
  ASSERT_THAT(c.objects, SizeIs(1));
  EXPECT_EQ(c.objects[0].kind, "Pod");
  EXPECT_THAT(c.stopped, HasSubstr("more than 16 YAML directives"));
  ASSERT_THAT(c.problems, SizeIs(1));
  EXPECT_EQ(c.problems[0].line, directives_line + 1);
}

TEST(ManifestBoundsTest, AFewDirectivesAreRead) {
  const ManifestContents c = ReadManifests(
      "%YAML 1.1\n%TAG !e! tag:example.com,2000:\n---\napiVersion: v1\n"
      "kind: Pod\n");
  EXPECT_THAT(c.objects, SizeIs(1));
  EXPECT_THAT(c.problems, IsEmpty());
  EXPECT_THAT(c.stopped, IsEmpty());
}

TEST(ManifestBoundsTest, BrokenDocumentsStopAtTheDocumentBound) {
  ReadLimits limits;
  limits.max_documents = 100;
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "--- [\n";
  const ManifestContents c = ReadManifests(text, limits);
  EXPECT_THAT(c.stopped, HasSubstr("more than 100 documents"));
  // Each broken document is two problems here (a sequence, then the
  // syntax error at the next "---"), plus the bound's.
  EXPECT_LE(c.problems.size(), 2u * 101 + 1);
}

TEST(ManifestBoundsTest, EmptyListItemsStopAtTheEntryBound) {
  // 3 MB of `{}` items were 1.5 million problems (2 GB in the CLI).
  std::string text = "apiVersion: v1\nkind: List\nitems:\n";
  for (int i = 0; i < 300000; ++i) text += "- {}\n";
  const auto start = Clock::now();
  const ManifestContents c = ReadManifests(text);
  EXPECT_LT(Elapsed(start), std::chrono::seconds(5));
  EXPECT_THAT(c.stopped, HasSubstr("more than 100000 objects"));
  EXPECT_LE(c.problems.size(), 100001u);
}

TEST(ManifestBoundsTest, CrdVersionsStopAtTheirBound) {
  std::string text =
      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
      "metadata: {name: w.example.com}\nspec:\n  group: example.com\n"
      "  names: {kind: W, plural: ws}\n  versions:\n";
  for (int i = 0; i < 150; ++i) {
    absl::StrAppend(&text, "  - {name: v", i, ", served: true}\n");
  }
  const ManifestContents c = ReadManifests(text);
  EXPECT_THAT(c.stopped, HasSubstr("more than 100 versions"));
  EXPECT_THAT(c.objects, IsEmpty());
}

TEST(ManifestBoundsTest, AnExhaustedBudgetStopsTheRead) {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
  }
  std::atomic<bool> cancelled{true};
  base::WorkBudget budget(absl::InfiniteFuture(), &cancelled);
  ReadLimits limits;
  limits.budget = &budget;
  const ManifestContents c = ReadManifests(text, limits);
  EXPECT_THAT(c.stopped, HasSubstr("the client went away"));
  EXPECT_LT(c.objects.size(), 20000u);

  base::WorkBudget spent(absl::Now() - absl::Seconds(1), nullptr);
  limits.budget = &spent;
  EXPECT_THAT(ReadManifests(text, limits).stopped,
              HasSubstr("--max-heavy-work-time"));
}

// The bounds are far above real manifests: every manifest of the
// repository's test data and examples reads without reaching one.
TEST(ManifestBoundsTest, RealManifestsReachNoBound) {
  int files = 0;
  for (const char* dir : {COMPATD_TESTDATA_DIR, COMPATD_SOURCE_DIR "/examples",
                          COMPATD_SOURCE_DIR "/k8s"}) {
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(dir)) {
      const std::string path = entry.path().string();
      if (!entry.is_regular_file() || (entry.path().extension() != ".yaml" &&
                                       entry.path().extension() != ".yml")) {
        continue;
      }
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      EXPECT_THAT(ReadManifests(text.str()).stopped, IsEmpty()) << path;
      ++files;
    }
  }
  EXPECT_GT(files, 10);
}

}  // namespace
}  // namespace compatd::manifest
