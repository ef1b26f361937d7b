#pragma once

// A small command-line flag table for main(): `--name=value` or
// `--name value`, booleans as `--name` or `--name=true|false`. Dashed names
// (--metrics-listen) as the README documents them; abseil's flags cannot have
// dashes. Libraries never read flags: main copies them into ServerOptions /
// EvalOptions.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace compatd::base {

class FlagTable final {
 public:
  void AddString(std::string name, std::string* value, std::string help);
  // A flag that may be given several times: each value is appended.
  void AddStringList(std::string name, std::vector<std::string>* values,
                     std::string help);
  void AddDuration(std::string name, absl::Duration* value, std::string help);
  void AddInt(std::string name, int* value, int min, int max, std::string help);
  void AddBool(std::string name, bool* value, std::string help);

  // Sets the flags from argv[first..argc); other arguments go to `positional`.
  // INVALID_ARGUMENT naming the flag and what it accepts for an unknown flag or
  // a bad value.
  absl::Status Parse(int argc, char** argv, int first,
                     std::vector<std::string>* positional);

  // Every flag with its default and help, for --help.
  std::string Usage() const;

 private:
  struct Flag {
    std::string name;
    std::string help;
    std::string default_text;
    std::string value_name;  // "" for booleans
    std::function<absl::Status(absl::string_view)> set;
  };
  const Flag* Find(absl::string_view name) const;

  std::vector<Flag> flags_;
};

}  // namespace compatd::base
