#include "ui/timeline.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ui/html.h"

namespace compatd::ui {
namespace {

absl::string_view StageShort(engine::PreRelease stage) {
  switch (stage) {
    case engine::PreRelease::kPreAlpha:
      return "pre";
    case engine::PreRelease::kAlpha:
      return "A";
    case engine::PreRelease::kBeta:
      return "B";
    case engine::PreRelease::kGA:
      return "GA";
    case engine::PreRelease::kDeprecated:
      return "D";
  }
  return "?";
}

std::string SegmentTitle(const TimelineSegment& segment) {
  std::string range = segment.from.MajorMinorString();
  if (segment.to != segment.from) {
    absl::StrAppend(&range, "-", segment.to.MajorMinorString());
  }
  return absl::StrCat(
      range, ": ", StageTitle(segment.stage),
      segment.default_enabled ? ", on by default" : ", off by default",
      segment.locked ? ", locked" : "");
}

// The axis position of major.minor, clamped to the axis (other majors: to
// either end).
int64_t Position(const TimelineAxis& axis, const engine::Version& version) {
  if (version.major() < axis.major) return 0;
  if (version.major() > axis.major) {
    return static_cast<int64_t>(axis.last_minor - axis.first_minor) + 1;
  }
  return static_cast<int64_t>(version.minor()) -
         static_cast<int64_t>(axis.first_minor);
}

}  // namespace

absl::string_view StageTitle(engine::PreRelease stage) {
  switch (stage) {
    case engine::PreRelease::kPreAlpha:
      return "Pre-alpha";
    case engine::PreRelease::kAlpha:
      return "Alpha";
    case engine::PreRelease::kBeta:
      return "Beta";
    case engine::PreRelease::kGA:
      return "GA";
    case engine::PreRelease::kDeprecated:
      return "Deprecated";
  }
  return "?";
}

absl::string_view StageClass(engine::PreRelease stage) {
  switch (stage) {
    case engine::PreRelease::kPreAlpha:
      return "prealpha";
    case engine::PreRelease::kAlpha:
      return "alpha";
    case engine::PreRelease::kBeta:
      return "beta";
    case engine::PreRelease::kGA:
      return "ga";
    case engine::PreRelease::kDeprecated:
      return "deprecated";
  }
  return "prealpha";
}

std::vector<TimelineSegment> FeatureSegments(const engine::Feature& feature,
                                             const engine::Version& last) {
  std::vector<TimelineSegment> segments;
  const engine::Version end = last.ToMajorMinor();
  for (size_t i = 0; i < feature.specs.size(); ++i) {
    const engine::FeatureSpec& spec = feature.specs[i];
    const engine::Version from = spec.version.ToMajorMinor();
    if (from > end) break;
    engine::Version to = end;
    if (i + 1 < feature.specs.size()) {
      const engine::Version next = feature.specs[i + 1].version.ToMajorMinor();
      if (next <= end) to = next.OffsetMinor(-1);
    }
    if (to < from) to = from;
    // Specs that differ only in their min-compatibility version read the same
    // on a release timeline: one segment.
    if (!segments.empty() && segments.back().stage == spec.pre_release &&
        segments.back().default_enabled == spec.default_enabled &&
        segments.back().locked == spec.lock_to_default) {
      segments.back().to = to;
      continue;
    }
    segments.push_back(TimelineSegment{spec.pre_release, spec.default_enabled,
                                       spec.lock_to_default, from, to});
  }
  return segments;
}

std::string DescribeSegments(const std::vector<TimelineSegment>& segments) {
  std::string out;
  for (const TimelineSegment& segment : segments) {
    if (!out.empty()) out.append(" \xC2\xB7 ");  // U+00B7 middle dot
    absl::StrAppend(&out, StageTitle(segment.stage), " ",
                    segment.from.MajorMinorString(),
                    segment.default_enabled ? " (on" : " (off",
                    segment.locked ? ", locked)" : ")");
  }
  return out;
}

namespace {

// One segment's bar, [x, x + w), with its lock, stage label and version.
void AppendSegment(std::string* out, const TimelineAxis& axis,
                   const TimelineSegment& segment, int64_t x, int64_t w,
                   int64_t bar_y) {
  absl::StrAppend(
      out, "<g class=\"seg st-", StageClass(segment.stage),
      segment.default_enabled ? " on" : " off", segment.locked ? " locked" : "",
      "\" data-stage=\"", StageTitle(segment.stage), "\" data-from=\"",
      segment.from.MajorMinorString(), "\" data-to=\"",
      segment.to.MajorMinorString(), "\" data-default=\"",
      segment.default_enabled ? "on" : "off", "\" data-locked=\"",
      segment.locked ? "true" : "false", "\"><title>", SegmentTitle(segment),
      "</title><rect x=\"", x, "\" y=\"", bar_y, "\" width=\"", w,
      "\" height=\"", axis.height, "\" rx=\"2\"/>");
  if (segment.locked) {
    absl::StrAppend(out, "<rect class=\"lock\" x=\"", x, "\" y=\"",
                    bar_y + axis.height - 3, "\" width=\"", w,
                    "\" height=\"3\"/>");
  }
  const absl::string_view label = StageShort(segment.stage);
  if (w >= static_cast<int64_t>(label.size()) * 7 + 2) {
    absl::StrAppend(out, "<text x=\"", x + w / 2, "\" y=\"",
                    bar_y + axis.height / 2 + 4, "\">", label, "</text>");
  }
  if (axis.labels) {
    absl::StrAppend(out, "<text class=\"ver\" x=\"", x + 1, "\" y=\"",
                    bar_y + axis.height + 13, "\">",
                    segment.from.MajorMinorString(), "</text>");
  }
  out->append("</g>");
}

}  // namespace

void AppendTimelineSvg(std::string* out, absl::string_view gate,
                       const std::vector<TimelineSegment>& segments,
                       const TimelineAxis& axis, const engine::Version& now,
                       const engine::Version* target) {
  const int64_t releases =
      static_cast<int64_t>(axis.last_minor - axis.first_minor) + 1;
  const int64_t rw = axis.release_width;
  const int64_t pad = 8;  // room for the '<' mark
  const int64_t width = pad + releases * rw + 2;
  const int64_t bar_y = 2;
  const int64_t height = bar_y + axis.height + (axis.labels ? 16 : 4);
  absl::StrAppend(out, "<svg class=\"tl\" xmlns=\"http://www.w3.org/2000/svg\"",
                  " viewBox=\"0 0 ", width, " ", height, "\" width=\"", width,
                  "\" height=\"", height, "\" role=\"img\" aria-label=\"");
  AppendEscaped(out, gate);
  out->append(": ");
  AppendEscaped(out, DescribeSegments(segments));
  // The axis, so that releases before the gate existed read as empty.
  absl::StrAppend(out, "\"><rect class=\"axis\" x=\"", pad, "\" y=\"",
                  bar_y + axis.height / 2 - 1, "\" width=\"", releases * rw,
                  "\" height=\"2\"/>");
  bool clipped = false;
  for (const TimelineSegment& segment : segments) {
    int64_t from = Position(axis, segment.from);
    int64_t to = Position(axis, segment.to);
    if (to < 0 || from >= releases) {
      clipped = clipped || to < 0;
      continue;
    }
    if (from < 0) {
      clipped = true;
      from = 0;
    }
    to = std::min(to, releases - 1);
    const int64_t x = pad + from * rw;
    const int64_t w = (to - from + 1) * rw - 1;
    AppendSegment(out, axis, segment, x, w, bar_y);
  }
  if (clipped) {
    absl::StrAppend(out, "<text class=\"more\" x=\"0\" y=\"",
                    bar_y + axis.height / 2 + 4, "\">\xE2\x80\xB9</text>");
  }
  if (target != nullptr && *target != now) {
    const int64_t at = Position(axis, *target);
    if (target->major() == axis.major && at >= 0 && at < releases) {
      const int64_t x = pad + at * rw + rw / 2;
      absl::StrAppend(out, "<line class=\"target\" x1=\"", x, "\" x2=\"", x,
                      "\" y1=\"0\" y2=\"", bar_y + axis.height + 2,
                      "\"><title>upgrade target ", target->MajorMinorString(),
                      "</title></line>");
    }
  }
  const int64_t now_at = Position(axis, now);
  if (now.major() == axis.major && now_at >= 0 && now_at < releases) {
    const int64_t x = pad + now_at * rw + rw / 2;
    absl::StrAppend(out, "<line class=\"now\" x1=\"", x, "\" x2=\"", x,
                    "\" y1=\"0\" y2=\"", bar_y + axis.height + 2,
                    "\"><title>emulation version ", now.MajorMinorString(),
                    "</title></line>");
  }
  out->append("</svg>");
}

}  // namespace compatd::ui
