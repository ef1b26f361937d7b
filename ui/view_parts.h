#pragma once

// What the status page's views share (ui/view_*.cc): the page's head and
// foot, the verdict and stage names, the upgrade target, small SVG and text
// helpers. Internal to ui/.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/version.h"
#include "ui/views.h"

namespace compatd::ui {

// Which entry of the navigation a page is (kNone: an error page).
enum class View {
  kOverview,
  kClients,
  kFeatures,
  kApis,
  kApiUse,
  kPlan,
  kNone
};

absl::Time ToTime(const google::protobuf::Timestamp& ts);
// "2026-01-02 03:04:05 UTC".
std::string WallTime(absl::Time t);
// <time> "3m 12s ago", its title the wall time.
void AppendAgo(std::string* out, absl::Time now, absl::Time then);
// "sha256:0123456789ab" of "sha256:<64 hex>".
absl::string_view ShortDigest(absl::string_view digest);
// The page's chrome: the document's head, the navigation (`active` marked),
// the binary picker and the generation; and the footer. `context` may be null
// (an error before a snapshot).
void AppendHead(std::string* out, absl::string_view title, View active,
                const PageContext* context);
void AppendFoot(std::string* out, const PageContext* context);

// A verdict's CSS class ("too-old") and text ("too old").
absl::string_view VerdictClass(v1::SkewVerdict verdict);
absl::string_view VerdictText(v1::SkewVerdict verdict);
// "PRE-ALPHA", "ALPHA", "BETA", "GA", "DEPRECATED" ("UNSPECIFIED").
absl::string_view ProtoStageName(v1::Stage stage);
engine::PreRelease ProtoStageToEngine(v1::Stage stage);

// The three versions as <dt>/<dd> pairs of an open <dl class="kv">.
void AppendVersionsList(std::string* out, const v1::EffectiveVersion& v);

// The catalog's cluster.upgradeTarget (GetCatalog's upgrade_target) with its
// effective versions (ResolveVersions at it); nullopt when it has none.
struct Target {
  v1::VersionContext versions;
  v1::EffectiveVersion effective;
};
absl::StatusOr<std::optional<Target>> UpgradeTargetOf(
    const PageContext& context);

// "emulation 1.36, min-compatibility 1.35".
void AppendEmulationAndMin(std::string* out, const v1::EffectiveVersion& v);
// A CamelCase gate name, escaped, with a <wbr> where a lower-case letter or
// digit is followed by an upper-case one: long names wrap at their words.
void AppendWithCamelBreaks(std::string* out, absl::string_view name);
// part/whole in whole percent, rounded (0 of nothing).
uint64_t Percent(uint64_t part, uint64_t whole);
// A horizontal stacked bar (inline SVG) of counts with a class each.
void AppendStackedBar(
    std::string* out,
    const std::vector<std::pair<std::string, uint64_t>>& parts,
    absl::string_view label);

// Whose clients the page shows: the fleet's through Prometheus, or this
// replica's alone (and why), in one line under the heading.
void AppendClientScope(std::string* out, const PageContext& context,
                       const v1::ClientView& view);

}  // namespace compatd::ui
