#include "base/flags.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace compatd::base {

void FlagTable::AddString(std::string name, std::string* value,
                          std::string help) {
  std::string default_text = value->empty() ? "\"\"" : *value;
  flags_.push_back(Flag{std::move(name), std::move(help),
                        std::move(default_text), "STRING",
                        [value](absl::string_view text) {
                          *value = std::string(text);
                          return absl::OkStatus();
                        },
                        ""});
}

void FlagTable::AddStringList(std::string name,
                              std::vector<std::string>* values,
                              std::string help) {
  flags_.push_back(Flag{std::move(name), std::move(help), "none",
                        "STRING (repeatable)",
                        [values](absl::string_view text) {
                          values->push_back(std::string(text));
                          return absl::OkStatus();
                        },
                        ""});
}

void FlagTable::AddDuration(std::string name, absl::Duration* value,
                            std::string help) {
  const std::string flag_name = name;
  flags_.push_back(
      Flag{std::move(name), std::move(help), absl::FormatDuration(*value),
           "DURATION",
           [value, flag_name](absl::string_view text) {
             absl::Duration d;
             if (!absl::ParseDuration(text, &d) || d < absl::ZeroDuration()) {
               return absl::InvalidArgumentError(absl::StrFormat(
                   "--%s=%s: expected a duration such as 30s, 500ms, 2m or 0",
                   flag_name, text));
             }
             *value = d;
             return absl::OkStatus();
           },
           ""});
}

void FlagTable::AddInt(std::string name, int* value, int min, int max,
                       std::string help) {
  const std::string flag_name = name;
  flags_.push_back(
      Flag{std::move(name), std::move(help), absl::StrCat(*value), "INT",
           [value, flag_name, min, max](absl::string_view text) {
             int n = 0;
             if (!absl::SimpleAtoi(text, &n) || n < min || n > max) {
               return absl::InvalidArgumentError(absl::StrFormat(
                   "--%s=%s: expected a whole number from %d to %d", flag_name,
                   text, min, max));
             }
             *value = n;
             return absl::OkStatus();
           },
           ""});
}

void FlagTable::AddBool(std::string name, bool* value, std::string help) {
  const std::string flag_name = name;
  flags_.push_back(
      Flag{std::move(name), std::move(help), *value ? "true" : "false", "",
           [value, flag_name](absl::string_view text) {
             if (text == "true" || text == "1") {
               *value = true;
             } else if (text == "false" || text == "0") {
               *value = false;
             } else {
               return absl::InvalidArgumentError(absl::StrFormat(
                   "--%s=%s: expected true or false", flag_name, text));
             }
             return absl::OkStatus();
           },
           ""});
}

void FlagTable::AddAlias(std::string short_name, std::string name) {
  for (Flag& flag : flags_) {
    if (flag.name == name) flag.alias = std::move(short_name);
  }
}

void FlagTable::AddSection(std::string title) {
  sections_.emplace_back(flags_.size(), std::move(title));
}

bool FlagTable::Has(absl::string_view name) const {
  return Find(name) != nullptr;
}

const FlagTable::Flag* FlagTable::Find(absl::string_view name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name || (!flag.alias.empty() && flag.alias == name)) {
      return &flag;
    }
  }
  return nullptr;
}

absl::Status FlagTable::Parse(int argc, char** argv, int first,
                              std::vector<std::string>* positional) {
  for (int i = first; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") {
      for (++i; i < argc; ++i) positional->emplace_back(argv[i]);
      break;
    }
    if (!absl::StartsWith(arg, "-") || arg == "-") {
      positional->emplace_back(arg);
      continue;
    }
    absl::string_view body = arg.substr(absl::StartsWith(arg, "--") ? 2 : 1);
    absl::string_view name = body;
    absl::string_view value;
    bool has_value = false;
    if (const size_t eq = body.find('='); eq != absl::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    const Flag* flag = Find(name);
    if (flag == nullptr) {
      std::optional<std::string> message;
      if (unknown_message_) message = unknown_message_(name);
      return absl::InvalidArgumentError(
          message.has_value() ? *message
                              : absl::StrCat("unknown flag --", name, "; run ",
                                             help_command_, " for the flags"));
    }
    if (!has_value) {
      if (flag->value_name.empty()) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "--", name, " needs a value (", flag->value_name, ")"));
      }
    }
    if (absl::Status s = flag->set(value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string WrapText(absl::string_view text, size_t indent, size_t width) {
  std::string out(indent, ' ');
  size_t column = indent;
  bool first = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!first && column + 1 + word.size() > width) {
      out.append("\n");
      out.append(indent, ' ');
      column = indent;
      first = true;
    }
    if (!first) {
      out.push_back(' ');
      ++column;
    }
    absl::StrAppend(&out, word);
    column += word.size();
    first = false;
  }
  out.append("\n");
  return out;
}

std::string FlagTable::Usage() const {
  std::string out;
  size_t section = 0;
  for (size_t i = 0; i < flags_.size(); ++i) {
    for (; section < sections_.size() && sections_[section].first == i;
         ++section) {
      absl::StrAppend(&out, i == 0 ? "" : "\n", sections_[section].second,
                      ":\n");
    }
    const Flag& flag = flags_[i];
    absl::StrAppend(
        &out, "  ",
        flag.alias.empty() ? "" : absl::StrCat("-", flag.alias, ", "), "--",
        flag.name,
        flag.value_name.empty() ? "" : absl::StrCat("=", flag.value_name),
        " (default: ", flag.default_text, ")\n");
    absl::StrAppend(&out, WrapText(flag.help, 6, 80));
  }
  return out;
}

}  // namespace compatd::base
