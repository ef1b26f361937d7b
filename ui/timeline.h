#pragma once

// A feature gate's history as an inline SVG timeline, written by the server
// (the status page's feature gate view): one bar per release on a fixed axis,
// coloured by stage, solid where the gate is on by default and pale where it
// is off, with a dark base line where it is locked to its default; a marker
// at the emulation version. Each segment is a <g> carrying data-stage,
// data-from, data-to, data-default and data-locked and a <title> tooltip
// ("1.32-1.33: Beta, on by default"); the whole has an aria-label with the
// same facts, so the chart reads without a mouse and without CSS.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/catalog.h"
#include "engine/version.h"

namespace compatd::ui {

struct TimelineAxis {
  uint64_t major = 1;
  uint64_t first_minor = 0;  // inclusive
  uint64_t last_minor = 0;   // inclusive
  int release_width = 18;    // px per release
  int height = 16;           // px of the bar
  bool labels = false;       // version numbers under each stage change
};

// One stretch of releases with the same spec.
struct TimelineSegment {
  engine::PreRelease stage = engine::PreRelease::kAlpha;
  bool default_enabled = false;
  bool locked = false;
  engine::Version from;  // major.minor of its spec
  engine::Version to;    // the last release it covers (inclusive)
};

// The gate's specs as segments up to `last` (the binary version, or the
// release before `removed`), oldest first. Specs newer than `last` are left
// out.
std::vector<TimelineSegment> FeatureSegments(const engine::Feature& feature,
                                             const engine::Version& last);

// "Alpha 1.27 · Beta 1.32 (on) · GA 1.34 (on, locked)": the same facts as
// text.
std::string DescribeSegments(const std::vector<TimelineSegment>& segments);

// The SVG; `now` (the emulation version) and `target` (the upgrade target's
// emulation version; may be null) are marked when on the axis. Segments
// before the axis start are drawn from its first release with a '<' mark.
void AppendTimelineSvg(std::string* out, absl::string_view gate,
                       const std::vector<TimelineSegment>& segments,
                       const TimelineAxis& axis, const engine::Version& now,
                       const engine::Version* target = nullptr);

// "Alpha", "Beta", "GA", "Deprecated", "Pre-alpha".
absl::string_view StageTitle(engine::PreRelease stage);
// "alpha", "beta", "ga", "deprecated", "prealpha": CSS class suffixes.
absl::string_view StageClass(engine::PreRelease stage);

}  // namespace compatd::ui
