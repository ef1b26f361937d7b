#pragma once

// The --runtime-config flag as kube-apiserver reads it. Follows
// kubernetes/component-base cli/flag/configuration_map.go
// (ConfigurationMap.Set) at v0.36.0 for parsing, with Go's strconv.ParseBool
// for values and kubernetes/kubernetes pkg/controlplane/apiserver/options
// (Options.Complete) for the legacy core-group keys
// (docs/kubernetes-rules.md#runtime-config-merging).

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace compatd::engine {

// key -> value, as cliflag.ConfigurationMap holds them. Sorted by key so that
// everything computed from it is deterministic (Go iterates its map in random
// order).
using RuntimeConfigMap = std::map<std::string, std::string, std::less<>>;

// cliflag.ConfigurationMap.Set(flag) applied on top of `config`: the flag is
// split on ','; empty items are skipped; each item is split on the first '=';
// key and value are trimmed of white space (Go's strings.TrimSpace); an item
// without '=' sets the value "". A later key overwrites an earlier one. Never
// fails, exactly like Set.
//
//   "api/beta=true, batch/v1=false,apps/v1" ->
//       {"api/beta": "true", "apps/v1": "", "batch/v1": "false"}
void MergeRuntimeConfigFlag(absl::string_view flag, RuntimeConfigMap* config);

// Same, into an empty map.
RuntimeConfigMap ParseRuntimeConfigFlag(absl::string_view flag);

// kube-apiserver's Options.Complete(): the keys "v1", "v1/<x>", "api/v1" and
// "api/v1/<x>" all become "/v1" (the resource part is dropped, as the code
// does), and "api/legacy" is deleted. When several keys collapse onto "/v1"
// the last one in key order wins (Go's map order makes this random).
void NormalizeLegacyRuntimeConfigKeys(RuntimeConfigMap* config);

// A --runtime-config value: strconv.ParseBool (base/go_strings.h).
std::optional<bool> ParseRuntimeConfigBool(absl::string_view value);

}  // namespace compatd::engine
