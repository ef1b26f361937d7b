#pragma once

// The text of `compatd plan` (a PlanUpgradeResponse for people).
//
// By default a summary that fits a screen: one row per step with its
// versions, then the blockers with what to do about each, then the actions
// (gates that turn on or off by default, storage to migrate, APIs, CEL,
// clients), then one line per section counting the items that need nothing.
// `--all` prints every item with its reason and action instead.

#include <ostream>

#include "compatd/v1/compatd.pb.h"

namespace compatd::api {

// How the summary is drawn: colour (ANSI SGR) only for a terminal; lines
// wrapped at `width` columns (escape codes do not count).
struct PlanTextStyle {
  bool color = false;
  int width = 100;
};

// What a plan asks of its user, the most serious first; `compatd plan`'s exit
// code follows it as `compatd scan`'s does (0, 2, 3).
enum class PlanOutcome { kNothingToDo, kActions, kBlockers };

// Blockers: items with `blocking` set. Actions: the others whose action is
// more than "none..." (engine/upgrade_plan.cc and api/cel_check.cc start the
// action of an item that needs nothing with "none"), except the rollback
// items, which the step table's ROLLBACK TO column shows. Alternative paths do
// not count: the plan follows its own path.
PlanOutcome OutcomeOf(const v1::PlanUpgradeResponse& plan);

// True when `item` needs nothing from the user (see OutcomeOf).
bool NeedsNothing(const v1::UpgradeItem& item);

// The default text (at most a screen for a plan of a few hops).
void PrintPlanSummary(const v1::PlanUpgradeResponse& plan,
                      const PlanTextStyle& style, std::ostream& out);

// `--all`: every step with every item, its reason and action, and each
// alternative path's blocking items.
void PrintPlanItems(const v1::PlanUpgradeResponse& plan, std::ostream& out);

}  // namespace compatd::api
