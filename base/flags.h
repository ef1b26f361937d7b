#pragma once

// A small command-line flag table for main(): `--name=value` or
// `--name value`, booleans as `--name` or `--name=true|false`. Dashed names
// (--metrics-listen) as the README documents them; abseil's flags cannot have
// dashes. Libraries never read flags: main copies them into ServerOptions /
// EvalOptions.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace compatd::base {

// `text` wrapped at `width` columns at spaces, every line indented by
// `indent` spaces and ended by a newline (a word longer than a line stays
// whole).
std::string WrapText(absl::string_view text, size_t indent, size_t width);

class FlagTable final {
 public:
  // `help_command` is what an unknown flag's message sends the user to
  // ("compatd plan --help").
  explicit FlagTable(std::string help_command = "compatd --help")
      : help_command_(std::move(help_command)) {}

  void AddString(std::string name, std::string* value, std::string help);
  // A flag that may be given several times: each value is appended.
  void AddStringList(std::string name, std::vector<std::string>* values,
                     std::string help);
  void AddDuration(std::string name, absl::Duration* value, std::string help);
  void AddInt(std::string name, int* value, int min, int max, std::string help);
  void AddBool(std::string name, bool* value, std::string help);
  // `-short` (or `--short`) also sets the flag `name`, added before.
  void AddAlias(std::string short_name, std::string name);
  // A heading that Usage() prints before the flags added after it.
  void AddSection(std::string title);

  // Whether `name` (without dashes) is a flag or alias of this table.
  bool Has(absl::string_view name) const;

  // For a flag this table does not have: the message to give instead of
  // "unknown flag --NAME; run <help_command> for the flags", or nullopt
  // for that one.
  void SetUnknownFlagMessage(
      std::function<std::optional<std::string>(absl::string_view name)> f) {
    unknown_message_ = std::move(f);
  }

  // Sets the flags from argv[first..argc); other arguments go to `positional`.
  // INVALID_ARGUMENT naming the flag and what it accepts for an unknown flag or
  // a bad value.
  absl::Status Parse(int argc, char** argv, int first,
                     std::vector<std::string>* positional);

  // Every flag with its default and help (wrapped at 80 columns), under the
  // sections' headings, for --help.
  std::string Usage() const;

 private:
  struct Flag {
    std::string name;
    std::string help;
    std::string default_text;
    std::string value_name;  // "" for booleans
    std::function<absl::Status(absl::string_view)> set;
    std::string alias;  // "o" for --output
  };
  const Flag* Find(absl::string_view name) const;

  std::string help_command_;
  std::vector<Flag> flags_;
  // Index of the first flag under each heading.
  std::vector<std::pair<size_t, std::string>> sections_;
  std::function<std::optional<std::string>(absl::string_view)> unknown_message_;
};

}  // namespace compatd::base
