#include "api/plan_text.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace compatd::api {
namespace {

using Items = google::protobuf::RepeatedPtrField<v1::UpgradeItem>;

// The plan's sections in the order --all and the summary name them.
struct Section {
  absl::string_view name;
  const Items* items;
  // What its items that need nothing are, for the summary's count line.
  absl::string_view nothing;
};

std::vector<Section> SectionsOf(const v1::PlanUpgradeResponse& plan) {
  return {
      {"flags", &plan.flags(), "flags every step still takes"},
      {"feature gates", &plan.feature_gates(),
       "same value; or a gate dropped, or new and off"},
      {"APIs", &plan.apis(), "group-versions that start being served"},
      {"storage", &plan.storage(), "no stored object to rewrite"},
      {"rollback", &plan.rollback(), "the ROLLBACK TO column above"},
      {"cel", &plan.cel(), "CEL libraries new expressions may use from a step"},
      {"clients", &plan.clients(), "clients inside the skew policy"},
  };
}

// ANSI SGR colours, only when the style asks for them.
class Paint {
 public:
  explicit Paint(bool on) : on_(on) {}
  std::string Bold(absl::string_view s) const { return Sgr("1", s); }
  std::string Red(absl::string_view s) const { return Sgr("1;31", s); }
  std::string Yellow(absl::string_view s) const { return Sgr("33", s); }
  std::string Green(absl::string_view s) const { return Sgr("32", s); }

 private:
  std::string Sgr(absl::string_view code, absl::string_view s) const {
    if (!on_) return std::string(s);
    return absl::StrCat("\033[", code, "m", s, "\033[0m");
  }
  bool on_;
};

// `text` wrapped at `width` columns at spaces after a prefix `prefix_width`
// columns wide, continuation lines indented by `indent` (included in them). A
// word longer than a line stays whole.
std::vector<std::string> WrapLines(size_t prefix_width, absl::string_view text,
                                   size_t indent, int width) {
  std::vector<std::string> lines(1);
  size_t column = prefix_width;
  bool first_word = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!first_word && column + 1 + word.size() > static_cast<size_t>(width)) {
      lines.emplace_back(indent, ' ');
      column = indent;
      first_word = true;
    }
    if (!first_word) {
      lines.back().push_back(' ');
      ++column;
    }
    absl::StrAppend(&lines.back(), word);
    column += word.size();
    first_word = false;
  }
  return lines;
}

// `prefix` (drawn `prefix_width` columns wide, escape codes aside), then
// `text` wrapped (WrapLines).
void PrintWrapped(std::ostream& out, absl::string_view prefix,
                  size_t prefix_width, absl::string_view text, size_t indent,
                  int width) {
  const std::vector<std::string> lines =
      WrapLines(prefix_width, text, indent, width);
  out << prefix << lines[0] << "\n";
  for (size_t i = 1; i < lines.size(); ++i) out << lines[i] << "\n";
}

bool IsRollback(const v1::UpgradeItem& item) {
  return item.rule() == "rollback-to-min-compatibility";
}

std::string Plural(size_t n, absl::string_view one, absl::string_view many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

// Blockers and actions per step (1-based), for the table's NEEDS column.
// Encoding-version disagreements go with their storage migration.
std::map<uint32_t, std::pair<size_t, size_t>> CountPerStep(
    const v1::PlanUpgradeResponse& plan) {
  std::map<uint32_t, std::pair<size_t, size_t>> counts;
  for (const Section& section : SectionsOf(plan)) {
    for (const v1::UpgradeItem& item : *section.items) {
      if (item.blocking()) {
        ++counts[item.step()].first;
      } else if (!NeedsNothing(item) &&
                 item.rule() != "encoding-version-disagreement") {
        ++counts[item.step()].second;
      }
    }
  }
  return counts;
}

std::string NeedsText(size_t blockers, size_t actions) {
  std::vector<std::string> parts;
  if (blockers > 0) parts.push_back(Plural(blockers, "blocker", "blockers"));
  if (actions > 0) parts.push_back(Plural(actions, "action", "actions"));
  return parts.empty() ? "-" : absl::StrJoin(parts, ", ");
}

// One row per step, after the cluster as it is now.
void PrintStepTable(const v1::PlanUpgradeResponse& plan, const Paint& paint,
                    std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"STEP", "WHAT", "BINARY", "EMULATION", "MIN-COMPAT",
                  "ROLLBACK TO", "NEEDS"});
  rows.push_back({"now", "", plan.from().binary_version(),
                  plan.from().emulation_version(),
                  plan.from().min_compatibility_version(), "", ""});
  const auto counts = CountPerStep(plan);
  for (const v1::UpgradeStep& step : plan.steps()) {
    const auto it = counts.find(step.number());
    const std::string binary = step.versions().binary_version().empty()
                                   ? plan.to().binary_version()
                                   : step.versions().binary_version();
    rows.push_back(
        {absl::StrCat(step.number()), step.name(), binary,
         step.versions().emulation_version(),
         step.versions().min_compatibility_version(), step.rollback_to(),
         it == counts.end() ? "-"
                            : NeedsText(it->second.first, it->second.second)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    for (size_t c = 0; c < rows[r].size(); ++c) {
      absl::StrAppend(&line, rows[r][c]);
      if (c + 1 < rows[r].size()) {
        line.append(width[c] - rows[r][c].size() + 2, ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << (r == 0 ? paint.Bold(line) : line) << "\n";
  }
}

std::string StepTag(uint32_t step) { return absl::StrCat("step ", step); }

constexpr size_t kTagWidth = 10;  // "  step 12 " and continuation lines
// Lines of one step's gates and storage in the summary (--all: every item).
constexpr size_t kMaxGateLines = 5;
constexpr size_t kMaxStorageLines = 4;

std::string PaddedTag(uint32_t step) {
  std::string tag = absl::StrCat("  ", StepTag(step));
  if (tag.size() < kTagWidth) tag.append(kTagWidth - tag.size(), ' ');
  return tag;
}

// Blockers, each once (a client too old at every step: the first step, and
// the others named).
void PrintBlockers(const v1::PlanUpgradeResponse& plan, const Paint& paint,
                   int width, std::ostream& out) {
  struct Blocker {
    const v1::UpgradeItem* first;
    std::vector<uint32_t> later_steps;
  };
  std::vector<Blocker> blockers;
  std::map<std::string, size_t> seen;  // subject and rule -> index
  for (const Section& section : SectionsOf(plan)) {
    for (const v1::UpgradeItem& item : *section.items) {
      if (!item.blocking()) continue;
      const std::string key = absl::StrCat(item.subject(), "\n", item.rule());
      const auto [it, added] = seen.emplace(key, blockers.size());
      if (added) {
        blockers.push_back(Blocker{&item, {}});
      } else {
        blockers[it->second].later_steps.push_back(item.step());
      }
    }
  }
  if (blockers.empty()) {
    out << paint.Bold("Blockers:") << " " << paint.Green("none") << "\n";
    return;
  }
  out << paint.Red(absl::StrCat("Blockers (", blockers.size(), "):")) << "\n";
  for (const Blocker& b : blockers) {
    std::string text =
        absl::StrCat(b.first->subject(), ": ", b.first->action());
    if (!b.later_steps.empty()) {
      absl::StrAppend(&text, " [also step",
                      b.later_steps.size() == 1 ? "" : "s", " ",
                      absl::StrJoin(b.later_steps, ", "), "]");
    }
    const std::string tag = PaddedTag(b.first->step());
    PrintWrapped(out, paint.Red(tag), tag.size(), text, kTagWidth, width);
  }
}

// The actions, grouped: gates that turn on, gates that turn off, storage to
// migrate (per step and group-version), then any other item one by one.
struct Actions {
  // step -> gates that turn on, or off (marked " (off)")
  std::map<uint32_t, std::vector<std::string>> gates;
  // step -> group/version -> resources
  std::map<uint32_t, std::map<std::string, std::vector<std::string>>> storage;
  std::vector<const v1::UpgradeItem*> other;
  size_t count = 0;
};

// "feature gate WatchList" -> "WatchList", with " (off)" when it turns off
// and " (locked)" when the action says the new value cannot be opted out of
// (engine/upgrade_plan.cc's "turns off", "is locked").
std::string GateName(const v1::UpgradeItem& item) {
  std::string name(absl::StripPrefix(item.subject(), "feature gate "));
  if (absl::StrContains(item.action(), " turns off")) {
    absl::StrAppend(&name, " (off)");
  }
  if (absl::StrContains(item.action(), "is locked")) {
    absl::StrAppend(&name, " (locked)");
  }
  return name;
}

// A storage-version-changes item: its group/version is the reason's
// "written as <group>/<version> from this step" (engine/upgrade_plan.cc),
// its resource the subject's first label.
void AddStorage(const v1::UpgradeItem& item, Actions& actions) {
  absl::string_view reason = item.reason();
  std::string gv = "?";
  if (absl::ConsumePrefix(&reason, "written as ")) {
    gv = std::string(reason.substr(0, reason.find(' ')));
  }
  const std::string resource(
      item.subject().substr(0, item.subject().find('.')));
  actions.storage[item.step()][gv].push_back(resource);
}

Actions CollectActions(const v1::PlanUpgradeResponse& plan) {
  Actions actions;
  for (const Section& section : SectionsOf(plan)) {
    for (const v1::UpgradeItem& item : *section.items) {
      if (item.blocking() || NeedsNothing(item) ||
          item.rule() == "encoding-version-disagreement") {
        continue;
      }
      ++actions.count;
      const bool gate = item.rule() == "feature-gate-enabled-changes" ||
                        item.rule() == "feature-gate-added";
      if (gate) {
        actions.gates[item.step()].push_back(GateName(item));
      } else if (item.rule() == "storage-version-changes") {
        AddStorage(item, actions);
      } else {
        actions.other.push_back(&item);
      }
    }
  }
  return actions;
}

// One entry per step: `texts` joined by `separator`, wrapped under the tag,
// in at most `max_lines` lines: past them, "... and N more (--all)".
void PrintPerStep(const std::map<uint32_t, std::vector<std::string>>& texts,
                  absl::string_view separator, size_t max_lines, int width,
                  std::ostream& out) {
  for (const auto& [step, list] : texts) {
    const std::string tag = PaddedTag(step);
    std::string text = absl::StrJoin(list, separator);
    for (size_t shown = list.size();
         WrapLines(tag.size(), text, kTagWidth, width).size() > max_lines &&
         shown > 1;) {
      --shown;
      text = absl::StrCat(
          absl::StrJoin(list.begin(), list.begin() + shown, separator),
          separator, "... and ", list.size() - shown, " more (--all)");
    }
    PrintWrapped(out, tag, tag.size(), text, kTagWidth, width);
  }
}

// Gates that cannot be kept as they were (locked) first, then those that
// turn off, then the others, each group in the plan's order.
void SortGates(std::vector<std::string>& gates) {
  const auto rank = [](const std::string& g) {
    if (absl::EndsWith(g, "(locked)")) return 0;
    return absl::StrContains(g, " (off)") ? 1 : 2;
  };
  std::stable_sort(gates.begin(), gates.end(),
                   [&](const std::string& a, const std::string& b) {
                     return rank(a) < rank(b);
                   });
}

void PrintActions(const v1::PlanUpgradeResponse& plan, const Paint& paint,
                  int width, std::ostream& out) {
  const Actions actions = CollectActions(plan);
  if (actions.count == 0) {
    out << paint.Bold("Actions:") << " " << paint.Green("none") << "\n";
    return;
  }
  out << paint.Yellow(absl::StrCat("Actions (", actions.count, "):")) << "\n";
  if (!actions.gates.empty()) {
    PrintWrapped(out, "  ", 2,
                 "Gates that turn on (or off) at the step; keep the old value "
                 "until ready with --feature-gates:",
                 4, width);
    std::map<uint32_t, std::vector<std::string>> gates = actions.gates;
    for (auto& [step, names] : gates) SortGates(names);
    PrintPerStep(gates, ", ", kMaxGateLines, width, out);
  }
  if (!actions.storage.empty()) {
    PrintWrapped(out, "  ", 2,
                 "Storage to migrate once the step runs on every API server "
                 "(a StorageVersionMigration each):",
                 4, width);
    std::map<uint32_t, std::vector<std::string>> storage;
    for (const auto& [step, by_gv] : actions.storage) {
      for (const auto& [gv, resources] : by_gv) {
        storage[step].push_back(
            absl::StrCat(gv, ": ", absl::StrJoin(resources, ", ")));
      }
    }
    PrintPerStep(storage, "; ", kMaxStorageLines, width, out);
  }
  for (const v1::UpgradeItem* item : actions.other) {
    const std::string tag = PaddedTag(item->step());
    PrintWrapped(out, tag, tag.size(),
                 absl::StrCat(item->subject(), ": ", item->action()), kTagWidth,
                 width);
  }
}

void PrintNothingCounts(const v1::PlanUpgradeResponse& plan, const Paint& paint,
                        int width, std::ostream& out) {
  std::vector<std::pair<const Section*, size_t>> counts;
  const std::vector<Section> sections = SectionsOf(plan);
  for (const Section& section : sections) {
    size_t n = 0;
    for (const v1::UpgradeItem& item : *section.items) {
      if (!item.blocking() && NeedsNothing(item)) ++n;
    }
    if (n > 0) counts.emplace_back(&section, n);
  }
  out << paint.Bold("Nothing to do") << " (--all: every item with its "
      << "reason and action; -o json: the whole plan)"
      << (counts.empty() ? ": none" : ":") << "\n";
  for (const auto& [section, n] : counts) {
    PrintWrapped(out, "  ", 2,
                 absl::StrCat(section->name, ": ", Plural(n, "item", "items"),
                              " (", section->nothing, ")"),
                 4, width);
  }
}

void PrintTrailer(const v1::PlanUpgradeResponse& plan, int width,
                  std::ostream& out) {
  for (const v1::UpgradePath& path : plan.alternatives()) {
    size_t blocking = 0;
    for (const v1::UpgradeStep& step : path.steps()) {
      for (const v1::UpgradeItem& item : step.items()) {
        if (item.blocking()) ++blocking;
      }
    }
    PrintWrapped(out, "", 0,
                 absl::StrCat("Also: ", path.name(), " (",
                              path.supported() ? "supported" : "not supported",
                              " by Kubernetes): ",
                              Plural(path.steps_size(), "step", "steps"), ", ",
                              Plural(blocking, "blocker", "blockers")),
                 2, width);
  }
  PrintWrapped(out, "", 0,
               absl::StrCat("Clients checked: ", plan.clients_checked()), 2,
               width);
}

// "--feature-gates AppArmor=true (from.feature_gates)" (flags) or
// "BLOCKING kubelet 1.31 (clients[0])": one item of --all.
void PrintItem(const v1::UpgradeItem& item, absl::string_view section,
               std::ostream& out) {
  out << "  [" << section << "] " << (item.blocking() ? "BLOCKING " : "")
      << item.subject() << " (" << item.rule() << ")\n      " << item.reason()
      << "\n      do: " << item.action() << "\n";
}

absl::string_view SectionOf(const v1::UpgradeItem& item,
                            const v1::PlanUpgradeResponse& plan) {
  for (const Section& section : SectionsOf(plan)) {
    for (const v1::UpgradeItem& i : *section.items) {
      if (i.step() == item.step() && i.subject() == item.subject() &&
          i.rule() == item.rule()) {
        return section.name;
      }
    }
  }
  return "clients";
}

void PrintStep(const v1::UpgradeStep& step, bool across, std::ostream& out) {
  out << "\nStep " << step.number() << ": " << step.name() << " (";
  if (across) {
    out << "kube-apiserver " << step.versions().binary_version() << ", ";
  }
  out << "emulation " << step.versions().emulation_version()
      << ", min-compatibility " << step.versions().min_compatibility_version()
      << "; rollback to " << step.rollback_to() << " after it)\n  "
      << step.action() << "\n";
}

void PrintItemsHeader(const v1::PlanUpgradeResponse& plan, bool across,
                      std::ostream& out) {
  if (across) {
    out << "Upgrade plan from kube-apiserver " << plan.from().binary_version()
        << " to " << plan.to().binary_version() << " (each step on its "
        << "binary's catalog): ";
  } else {
    out << "Upgrade plan on kube-apiserver " << plan.to().binary_version()
        << " (" << plan.catalog_source() << "): ";
  }
  out << "emulation " << plan.from().emulation_version() << " -> "
      << plan.to().emulation_version() << ", min-compatibility "
      << plan.from().min_compatibility_version() << " -> "
      << plan.to().min_compatibility_version() << "\n";
  out << "Path: " << plan.path().name() << " ("
      << (plan.path().supported() ? "supported" : "not supported")
      << " by Kubernetes)\n"
      << plan.reason() << "\n";
  if (plan.catalog_exactness() == "PROVISIONAL") {
    out << "Data: PROVISIONAL for kube-apiserver " << plan.catalog_release()
        << ": " << plan.catalog_exactness_reason() << "\n";
  }
}

}  // namespace

bool NeedsNothing(const v1::UpgradeItem& item) {
  if (item.blocking()) return false;
  return IsRollback(item) || absl::StartsWith(item.action(), "none");
}

PlanOutcome OutcomeOf(const v1::PlanUpgradeResponse& plan) {
  PlanOutcome outcome = PlanOutcome::kNothingToDo;
  for (const Section& section : SectionsOf(plan)) {
    for (const v1::UpgradeItem& item : *section.items) {
      if (item.blocking()) return PlanOutcome::kBlockers;
      if (!NeedsNothing(item)) outcome = PlanOutcome::kActions;
    }
  }
  return plan.blockers() > 0 ? PlanOutcome::kBlockers : outcome;
}

void PrintPlanSummary(const v1::PlanUpgradeResponse& plan,
                      const PlanTextStyle& style, std::ostream& out) {
  const Paint paint(style.color);
  const bool across = plan.path().name() != "one binary";
  const std::string title =
      across ? absl::StrCat("Upgrade kube-apiserver ",
                            plan.from().binary_version(), " -> ",
                            plan.to().binary_version())
             : absl::StrCat("Upgrade on kube-apiserver ",
                            plan.to().binary_version());
  PrintWrapped(
      out, paint.Bold(title), title.size(),
      absl::StrCat(": ", plan.path().name(), " (",
                   plan.path().supported() ? "supported" : "not supported",
                   " by Kubernetes), ",
                   Plural(plan.steps_size(), "step", "steps")),
      2, style.width);
  // A provisional line says so under the title (as the --all header does).
  if (plan.catalog_exactness() == "PROVISIONAL") {
    const std::string data = absl::StrCat(
        "Data: PROVISIONAL for kube-apiserver ", plan.catalog_release());
    PrintWrapped(out, data, data.size(),
                 absl::StrCat(": ", plan.catalog_exactness_reason()), 2,
                 style.width);
  }
  out << "\n";
  PrintStepTable(plan, paint, out);
  out << "\n";
  PrintBlockers(plan, paint, style.width, out);
  PrintActions(plan, paint, style.width, out);
  out << "\n";
  PrintNothingCounts(plan, paint, style.width, out);
  PrintTrailer(plan, style.width, out);
}

void PrintPlanItems(const v1::PlanUpgradeResponse& plan, std::ostream& out) {
  const bool across = plan.path().name() != "one binary";
  PrintItemsHeader(plan, across, out);
  for (const v1::UpgradeStep& step : plan.steps()) {
    PrintStep(step, across, out);
    for (const v1::UpgradeItem& item : step.items()) {
      PrintItem(item, SectionOf(item, plan), out);
    }
  }
  for (const v1::UpgradePath& path : plan.alternatives()) {
    out << "\nAlternative path: " << path.name() << " ("
        << (path.supported() ? "supported" : "not supported")
        << " by Kubernetes: " << path.support() << ")\n"
        << path.reason() << "; its blocking items (-o json for all):\n";
    for (const v1::UpgradeStep& step : path.steps()) {
      PrintStep(step, across, out);
      for (const v1::UpgradeItem& item : step.items()) {
        if (item.blocking()) PrintItem(item, item.rule(), out);
      }
    }
  }
  out << "\nClients checked: " << plan.clients_checked() << "\n"
      << plan.blockers() << " blocking item(s)\n";
}

}  // namespace compatd::api
