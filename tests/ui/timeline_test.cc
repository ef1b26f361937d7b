#include "ui/timeline.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::ui {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

engine::Version V(uint64_t minor) {
  return engine::Version::MajorMinor(1, minor);
}

engine::FeatureSpec Spec(uint64_t minor, engine::PreRelease stage, bool on,
                         bool locked = false) {
  engine::FeatureSpec spec;
  spec.version = V(minor);
  spec.pre_release = stage;
  spec.default_enabled = on;
  spec.lock_to_default = locked;
  return spec;
}

// WatchList in the Kubernetes 1.36 catalog.
engine::Feature WatchList() {
  engine::Feature f;
  f.name = "WatchList";
  f.specs = {Spec(27, engine::PreRelease::kAlpha, false),
             Spec(32, engine::PreRelease::kBeta, true),
             Spec(33, engine::PreRelease::kBeta, false),
             Spec(34, engine::PreRelease::kBeta, true)};
  return f;
}

TEST(FeatureSegmentsTest, OneSegmentPerSpecUpToTheLastRelease) {
  const std::vector<TimelineSegment> s = FeatureSegments(WatchList(), V(36));
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].stage, engine::PreRelease::kAlpha);
  EXPECT_EQ(s[0].from, V(27));
  EXPECT_EQ(s[0].to, V(31));
  EXPECT_FALSE(s[0].default_enabled);
  EXPECT_EQ(s[1].from, V(32));
  EXPECT_EQ(s[1].to, V(32));
  EXPECT_EQ(s[2].to, V(33));
  EXPECT_EQ(s[3].from, V(34));
  EXPECT_EQ(s[3].to, V(36));
  EXPECT_TRUE(s[3].default_enabled);
}

TEST(FeatureSegmentsTest, SpecsAfterTheLastReleaseAreLeftOut) {
  const std::vector<TimelineSegment> s = FeatureSegments(WatchList(), V(32));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].from, V(32));
  EXPECT_EQ(s[1].to, V(32));
}

TEST(FeatureSegmentsTest, SpecsThatReadTheSameMerge) {
  // Two GA specs differing only in their min-compatibility version.
  engine::Feature f;
  f.name = "G";
  f.specs = {Spec(30, engine::PreRelease::kBeta, true),
             Spec(33, engine::PreRelease::kGA, true, true),
             Spec(35, engine::PreRelease::kGA, true, true)};
  f.specs[2].min_compatibility_version = V(35);
  const std::vector<TimelineSegment> s = FeatureSegments(f, V(36));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].from, V(33));
  EXPECT_EQ(s[1].to, V(36));
  EXPECT_TRUE(s[1].locked);
}

TEST(DescribeSegmentsTest, TheSameFactsAsText) {
  EXPECT_EQ(DescribeSegments(FeatureSegments(WatchList(), V(36))),
            "Alpha 1.27 (off) \xC2\xB7 Beta 1.32 (on) \xC2\xB7 Beta 1.33 (off) "
            "\xC2\xB7 Beta 1.34 (on)");
}

TEST(TimelineSvgTest, SegmentsCarryTheirFacts) {
  TimelineAxis axis;
  axis.first_minor = 24;
  axis.last_minor = 36;
  std::string svg;
  AppendTimelineSvg(&svg, "WatchList", FeatureSegments(WatchList(), V(36)),
                    axis, V(36));
  EXPECT_THAT(svg, HasSubstr("<svg class=\"tl\""));
  EXPECT_THAT(svg, HasSubstr("data-stage=\"Alpha\" data-from=\"1.27\" "
                             "data-to=\"1.31\" data-default=\"off\""));
  EXPECT_THAT(svg, HasSubstr("data-stage=\"Beta\" data-from=\"1.34\" "
                             "data-to=\"1.36\" data-default=\"on\""));
  EXPECT_THAT(svg,
              HasSubstr("<title>1.27-1.31: Alpha, off by default</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>1.32: Beta, on by default</title>"));
  // Alpha starts at release 27: (27 - 24) * 18 + 8 px.
  EXPECT_THAT(svg, HasSubstr("<rect x=\"62\""));
  // The emulation version's marker, in the middle of release 36.
  EXPECT_THAT(svg, HasSubstr("<line class=\"now\" x1=\"233\""));
  EXPECT_THAT(svg, HasSubstr("aria-label=\"WatchList: Alpha 1.27 (off)"));
  // Nothing before the axis: no '<' mark.
  EXPECT_THAT(svg, Not(HasSubstr("class=\"more\"")));
  EXPECT_THAT(svg, Not(HasSubstr("locked\"")));
}

TEST(TimelineSvgTest, HistoryBeforeTheAxisIsMarkedAndClipped) {
  TimelineAxis axis;
  axis.first_minor = 30;
  axis.last_minor = 36;
  std::string svg;
  AppendTimelineSvg(&svg, "WatchList", FeatureSegments(WatchList(), V(36)),
                    axis, V(35));
  EXPECT_THAT(svg, HasSubstr("class=\"more\""));
  // The alpha segment starts at the axis' first release, its data keeps 1.27.
  EXPECT_THAT(svg, HasSubstr("data-from=\"1.27\""));
  EXPECT_THAT(svg, HasSubstr("<rect x=\"8\""));
}

TEST(TimelineSvgTest, LockedSegmentsHaveTheirBase) {
  engine::Feature f;
  f.name = "G";
  f.specs = {Spec(33, engine::PreRelease::kGA, true, true)};
  TimelineAxis axis;
  axis.first_minor = 30;
  axis.last_minor = 36;
  std::string svg;
  AppendTimelineSvg(&svg, "G", FeatureSegments(f, V(36)), axis, V(36));
  EXPECT_THAT(svg, HasSubstr("class=\"seg st-ga on locked\""));
  EXPECT_THAT(svg, HasSubstr("data-locked=\"true\""));
  EXPECT_THAT(svg, HasSubstr("<rect class=\"lock\""));
}

TEST(TimelineSvgTest, TheGateNameIsEscaped) {
  TimelineAxis axis;
  axis.first_minor = 30;
  axis.last_minor = 36;
  std::string svg;
  AppendTimelineSvg(&svg, "\"><script>", {}, axis, V(36));
  EXPECT_THAT(svg, HasSubstr("aria-label=\"&quot;&gt;&lt;script&gt;: \""));
  EXPECT_THAT(svg, Not(HasSubstr("<script>")));
}

}  // namespace
}  // namespace compatd::ui
