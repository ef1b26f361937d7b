#include "engine/runtime_config.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "base/go_strings.h"

namespace compatd::engine {
void MergeRuntimeConfigFlag(absl::string_view flag, RuntimeConfigMap* config) {
  // cliflag.ConfigurationMap.Set: strings.Split(value, ","), skip len(s) == 0
  // (before trimming: " " is an item with key ""), strings.SplitN(s, "=", 2).
  for (absl::string_view item : absl::StrSplit(flag, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    std::string key(base::TrimGoSpace(item.substr(0, eq)));
    std::string value;
    if (eq != absl::string_view::npos) {
      value = std::string(base::TrimGoSpace(item.substr(eq + 1)));
    }
    (*config)[std::move(key)] = std::move(value);
  }
}

RuntimeConfigMap ParseRuntimeConfigFlag(absl::string_view flag) {
  RuntimeConfigMap config;
  MergeRuntimeConfigFlag(flag, &config);
  return config;
}

void NormalizeLegacyRuntimeConfigKeys(RuntimeConfigMap* config) {
  std::vector<std::string> legacy;
  for (const auto& [key, value] : *config) {
    if (key == "v1" || absl::StartsWith(key, "v1/") || key == "api/v1" ||
        absl::StartsWith(key, "api/v1/") || key == "api/legacy") {
      legacy.push_back(key);
    }
  }
  for (const std::string& key : legacy) {
    auto it = config->find(key);
    std::string value = std::move(it->second);
    config->erase(it);
    if (key != "api/legacy") (*config)["/v1"] = std::move(value);
  }
}

std::optional<bool> ParseRuntimeConfigBool(absl::string_view value) {
  return base::ParseGoBool(value);
}

}  // namespace compatd::engine
