#include "cluster/profile.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/json_quote.h"
#include "cluster/yaml_tree.h"
#include "engine/effective_version.h"
#include "engine/feature_gate_flags.h"
#include "engine/version.h"

namespace compatd::cluster {
namespace {

using Kind = YamlNode::Kind;

constexpr absl::string_view kAcceptedInputs =
    "compatd's cluster profile (no apiVersion), a v1 Pod (kube-apiserver's "
    "static pod manifest), kubeadm.k8s.io/v1beta3 or v1beta4 "
    "ClusterConfiguration, the kubeadm-config ConfigMap, "
    "controlplane.cluster.x-k8s.io/v1beta1 or v1beta2 KubeadmControlPlane, or "
    "/version JSON";

// Where the text being read sits: its file, and the file line of its line 1
// minus one (a ClusterConfiguration inside a ConfigMap's literal block).
struct Where {
  std::string source;
  int line_offset = 0;
  bool lines_exact = true;
  std::string Origin(int line, absl::string_view field) const {
    if (!lines_exact) {
      return absl::StrCat(source, " (", field, ", line ", line,
                          " of data.ClusterConfiguration)");
    }
    return absl::StrCat(source, ":", line + line_offset, " (", field, ")");
  }
  absl::Status Error(int line, absl::string_view field, absl::string_view what,
                     absl::string_view accepted) const {
    return absl::InvalidArgumentError(absl::StrCat(
        lines_exact ? absl::StrCat(source, ":", line + line_offset)
                    : absl::StrCat(source, " (line ", line,
                                   " of data.ClusterConfiguration)"),
        ": field ", field, ": ", what, "; accepted: ", accepted));
  }
};

absl::Status PrefixYamlError(const absl::Status& status, const Where& where) {
  // ParseYamlDocuments says "N: what".
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(status.message(), absl::MaxSplits(':', 1));
  int line = 0;
  if (absl::SimpleAtoi(parts.first, &line)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where.source, ":", line + where.line_offset, ":", parts.second));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(where.source, ": ", status.message()));
}

const std::string* ScalarOf(const YamlNode& node, absl::string_view key) {
  const YamlNode* value = node.Find(key);
  if (value == nullptr || value->kind != Kind::kScalar) return nullptr;
  return &value->scalar;
}

absl::Status CheckBinaryVersion(const Where& where, int line,
                                absl::string_view field,
                                absl::string_view value) {
  absl::StatusOr<engine::Version> v = engine::Version::Parse(value);
  if (!v.ok() || v->major() != 1) {
    return where.Error(
        line, field,
        absl::StrCat("\"", value, "\" is not a Kubernetes version"),
        "a kube-apiserver version such as 1.35, 1.35.2 or v1.35.2");
  }
  return absl::OkStatus();
}

// "v1.35.2" -> "1.35.2" (compatd prints versions without the "v").
std::string WithoutV(absl::string_view value) {
  value = absl::StripAsciiWhitespace(value);
  absl::ConsumePrefix(&value, "v");
  return std::string(value);
}

// The checks kube-apiserver makes of its KEP-4330 flags and --feature-gates at
// start-up, each failure as one sentence.
std::vector<std::string> StartupProblems(const ApiServerSettings& s,
                                         absl::string_view what) {
  std::vector<std::string> problems;
  auto problem = [&](const ProfileValue& v, absl::string_view message) {
    problems.push_back(absl::StrCat(what, ": ", v.origin, ": ", message));
  };
  if (s.feature_gates.given()) {
    absl::StatusOr<std::vector<engine::FeatureGateFlag>> gates =
        engine::ParseFeatureGates(s.feature_gates.value);
    if (!gates.ok()) {
      problem(s.feature_gates,
              absl::StrCat("kube-apiserver would refuse --feature-gates=\"",
                           s.feature_gates.value,
                           "\": ", gates.status().message()));
    }
  }
  for (const ProfileValue* flag :
       {&s.emulation_forward_compatible,
        &s.runtime_config_emulation_forward_compatible}) {
    if (!flag->given()) continue;
    if (absl::StatusOr<bool> b = engine::ParseGoBool(flag->value); !b.ok()) {
      problem(*flag, absl::StrCat("kube-apiserver would refuse \"", flag->value,
                                  "\": ", b.status().message()));
    }
  }
  absl::StatusOr<engine::Version> binary =
      engine::Version::Parse(s.binary_version.value);
  std::optional<engine::Version> emulation;
  std::optional<engine::Version> min_compat;
  if (s.emulation_version.given()) {
    absl::StatusOr<engine::Version> v =
        engine::ParseVersionFlag(s.emulation_version.value);
    if (!v.ok()) {
      problem(
          s.emulation_version,
          absl::StrCat("kube-apiserver would refuse --emulated-version=",
                       s.emulation_version.value, ": ", v.status().message()));
    } else {
      emulation = *v;
    }
  }
  if (s.min_compatibility_version.given()) {
    absl::StatusOr<engine::Version> v =
        engine::ParseVersionFlag(s.min_compatibility_version.value);
    if (!v.ok()) {
      problem(
          s.min_compatibility_version,
          absl::StrCat(
              "kube-apiserver would refuse --min-compatibility-version=",
              s.min_compatibility_version.value, ": ", v.status().message()));
    } else {
      min_compat = *v;
    }
  }
  if (binary.ok() && (emulation.has_value() || min_compat.has_value())) {
    const engine::Version e = emulation.value_or(binary->ToMajorMinor());
    // Without --min-compatibility-version only the emulation range is checked
    // here (its default follows the emulation version, so it is in range).
    const engine::Version m = min_compat.value_or(e);
    const engine::Version floor = engine::KubeVersionFloor(*binary);
    if (absl::Status range = engine::ValidateEffectiveVersionRange(
            *binary, e, m, floor, min_compat.has_value() ? floor : e);
        !range.ok()) {
      const ProfileValue& at = emulation.has_value()
                                   ? s.emulation_version
                                   : s.min_compatibility_version;
      problem(at, absl::StrCat("kube-apiserver ", s.binary_version.value,
                               " would refuse to start: ", range.message()));
    }
  }
  return problems;
}

// --- kube-apiserver flags -------------------------------------------------

bool IsModelledBoolFlag(absl::string_view name) {
  return name == "emulation-forward-compatible" ||
         name == "runtime-config-emulation-forward-compatible";
}

// Files one flag into the settings, or keeps it verbatim.
void ApplyFlag(absl::string_view name, absl::string_view value,
               absl::string_view verbatim, std::string origin,
               ApiServerSettings& s, ClusterProfile& profile) {
  ProfileValue* target = nullptr;
  if (name == "feature-gates") target = &s.feature_gates;
  if (name == "runtime-config") target = &s.runtime_config;
  if (name == "emulated-version") target = &s.emulation_version;
  if (name == "min-compatibility-version")
    target = &s.min_compatibility_version;
  if (name == "emulation-forward-compatible") {
    target = &s.emulation_forward_compatible;
  }
  if (name == "runtime-config-emulation-forward-compatible") {
    target = &s.runtime_config_emulation_forward_compatible;
  }
  if (target == nullptr) {
    profile.unmodelled_flags.push_back(
        {std::string(verbatim), std::move(origin)});
    return;
  }
  // kube-apiserver (pflag) takes the last --feature-gates and --runtime-config
  // item by item; compatd joins repeated ones the same way.
  if (target->given() &&
      (target == &s.feature_gates || target == &s.runtime_config)) {
    target->value = absl::StrCat(target->value, ",", value);
    target->origin = absl::StrCat(target->origin, ", ", origin);
    return;
  }
  target->value = std::string(value);
  target->origin = std::move(origin);
}

struct FlagToken {
  std::string text;
  std::string origin;
};

void ApplyFlagTokens(const std::vector<FlagToken>& tokens, ApiServerSettings& s,
                     ClusterProfile& profile) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    absl::string_view token = tokens[i].text;
    if (!absl::StartsWith(token, "-")) continue;  // the binary, or a stray word
    absl::string_view flag = token;
    absl::ConsumePrefix(&flag, "-");
    absl::ConsumePrefix(&flag, "-");
    const size_t eq = flag.find('=');
    if (eq != absl::string_view::npos) {
      ApplyFlag(flag.substr(0, eq), flag.substr(eq + 1), token,
                tokens[i].origin, s, profile);
      continue;
    }
    // "--flag value": pflag takes the next item as the value, except for bool
    // flags (those compatd models are bool; an unmodelled flag followed by
    // a word is taken with it).
    if (!IsModelledBoolFlag(flag) && i + 1 < tokens.size() &&
        !absl::StartsWith(tokens[i + 1].text, "-")) {
      ApplyFlag(flag, tokens[i + 1].text,
                absl::StrCat(token, " ", tokens[i + 1].text), tokens[i].origin,
                s, profile);
      ++i;
      continue;
    }
    ApplyFlag(flag, IsModelledBoolFlag(flag) ? "true" : "", token,
              tokens[i].origin, s, profile);
  }
}

// apiServer.extraArgs: a map (kubeadm v1beta3, Cluster API v1beta1) or a list
// of {name, value} (kubeadm v1beta4, Cluster API v1beta2).
absl::Status ApplyExtraArgs(const YamlNode& args, bool as_list,
                            absl::string_view field, absl::string_view version,
                            const Where& where, ApiServerSettings& s,
                            ClusterProfile& profile) {
  if (!as_list) {
    if (args.kind != Kind::kMap) {
      return where.Error(
          args.line, field,
          absl::StrCat("is ", args.KindName(), " in ", version),
          "a map of flag name to value (name: value) in this apiVersion");
    }
    for (const auto& [k, v] : args.map) {
      if (v.kind != Kind::kScalar) {
        return where.Error(v.line, absl::StrCat(field, ".", k.scalar),
                           absl::StrCat("is ", v.KindName()), "a string");
      }
      ApplyFlag(k.scalar, v.scalar, absl::StrCat("--", k.scalar, "=", v.scalar),
                where.Origin(k.line, absl::StrCat(field, ".", k.scalar)), s,
                profile);
    }
    return absl::OkStatus();
  }
  if (args.kind != Kind::kSeq) {
    return where.Error(args.line, field,
                       absl::StrCat("is ", args.KindName(), " in ", version),
                       "a list of {name, value} in this apiVersion");
  }
  for (size_t i = 0; i < args.seq.size(); ++i) {
    const YamlNode& item = args.seq[i];
    const std::string item_field = absl::StrCat(field, "[", i, "]");
    const std::string* name =
        item.kind == Kind::kMap ? ScalarOf(item, "name") : nullptr;
    const std::string* value =
        item.kind == Kind::kMap ? ScalarOf(item, "value") : nullptr;
    if (name == nullptr || value == nullptr || item.map.size() != 2) {
      return where.Error(
          item.line, item_field, "is not a {name, value} pair",
          "\"- name: feature-gates\" and \"value: ...\" (strings)");
    }
    ApplyFlag(*name, *value, absl::StrCat("--", *name, "=", *value),
              where.Origin(item.line, item_field), s, profile);
  }
  return absl::OkStatus();
}

// --- the readers ----------------------------------------------------------

constexpr absl::string_view kProfileKeys =
    "binaryVersion, emulationVersion, minCompatibilityVersion, featureGates, "
    "runtimeConfig, emulationForwardCompatible, "
    "runtimeConfigEmulationForwardCompatible, upgradeTarget";

absl::Status ReadOwnSettings(const YamlNode& node, absl::string_view prefix,
                             bool allow_target, const Where& where,
                             ApiServerSettings& s, ClusterProfile& profile) {
  if (node.kind != Kind::kMap) {
    return where.Error(node.line, prefix.empty() ? "(document)" : prefix,
                       absl::StrCat("is ", node.KindName()),
                       absl::StrCat("a map of ", kProfileKeys));
  }
  for (const auto& [k, v] : node.map) {
    const std::string field =
        prefix.empty() ? k.scalar : absl::StrCat(prefix, ".", k.scalar);
    if (k.scalar == "upgradeTarget" && allow_target) {
      ApiServerSettings target;
      if (v.kind == Kind::kScalar) {
        target.binary_version = {WithoutV(v.scalar),
                                 where.Origin(v.line, field)};
      } else if (absl::Status st =
                     ReadOwnSettings(v, field, false, where, target, profile);
                 !st.ok()) {
        return st;
      }
      if (!target.binary_version.given()) {
        return where.Error(v.line, absl::StrCat(field, ".binaryVersion"),
                           "is missing",
                           "the target kube-apiserver version, e.g. \"1.36\"");
      }
      profile.upgrade_target = std::move(target);
      continue;
    }
    ProfileValue* value = nullptr;
    bool is_bool = false;
    if (k.scalar == "binaryVersion") value = &s.binary_version;
    if (k.scalar == "emulationVersion") value = &s.emulation_version;
    if (k.scalar == "minCompatibilityVersion") {
      value = &s.min_compatibility_version;
    }
    if (k.scalar == "featureGates") value = &s.feature_gates;
    if (k.scalar == "runtimeConfig") value = &s.runtime_config;
    if (k.scalar == "emulationForwardCompatible") {
      value = &s.emulation_forward_compatible;
      is_bool = true;
    }
    if (k.scalar == "runtimeConfigEmulationForwardCompatible") {
      value = &s.runtime_config_emulation_forward_compatible;
      is_bool = true;
    }
    if (value == nullptr) {
      return where.Error(
          k.line, field, "unknown key",
          allow_target
              ? std::string(kProfileKeys)
              : absl::StrReplaceAll(kProfileKeys, {{", upgradeTarget", ""}}));
    }
    if (v.kind != Kind::kScalar) {
      return where.Error(
          v.line, field, absl::StrCat("is ", v.KindName()),
          k.scalar == "featureGates"
              ? "a string in --feature-gates syntax, e.g. \"A=true,B=false\""
          : k.scalar == "runtimeConfig"
              ? "a string in --runtime-config syntax, e.g. \"api/beta=true\""
          : is_bool ? "true or false"
                    : "a version string");
    }
    if (is_bool) {
      if (absl::StatusOr<bool> b = engine::ParseGoBool(v.scalar); !b.ok()) {
        return where.Error(v.line, field,
                           absl::StrCat("\"", v.scalar, "\" is not a bool"),
                           "true or false");
      }
    }
    *value = {k.scalar == "binaryVersion" ? WithoutV(v.scalar) : v.scalar,
              where.Origin(v.line, field)};
  }
  return absl::OkStatus();
}

absl::Status ReadOwnProfile(const YamlNode& doc, const Where& where,
                            ClusterProfile& profile) {
  profile.input_kind = "compatd cluster profile";
  return ReadOwnSettings(doc, "", true, where, profile.current, profile);
}

// registry.k8s.io/kube-apiserver:v1.35.2[@sha256:...] -> "1.35.2".
absl::StatusOr<std::string> VersionOfImage(const YamlNode& image,
                                           absl::string_view field,
                                           const Where& where) {
  absl::string_view ref = image.scalar;
  const size_t at = ref.find('@');
  absl::string_view name = ref.substr(0, at);
  const size_t slash = name.rfind('/');
  const size_t colon =
      name.find(':', slash == absl::string_view::npos ? 0 : slash);
  constexpr absl::string_view kAccepted =
      "an image tagged with the kube-apiserver version (e.g. "
      "registry.k8s.io/kube-apiserver:v1.35.2), or the binary version given "
      "with --cluster-version";
  if (colon == absl::string_view::npos) {
    return where.Error(
        image.line, field,
        absl::StrCat("image \"", ref, "\" has no tag",
                     at != absl::string_view::npos ? " (a digest only)" : "",
                     ", so it does not say the kube-apiserver version"),
        kAccepted);
  }
  absl::string_view tag = name.substr(colon + 1);
  absl::StatusOr<engine::Version> v = engine::Version::ParseSemantic(tag);
  if (!v.ok() || v->major() != 1) {
    return where.Error(image.line, field,
                       absl::StrCat("image tag \"", tag, "\" of \"", ref,
                                    "\" is not a kube-apiserver version"),
                       kAccepted);
  }
  return WithoutV(tag);
}

absl::Status ReadStaticPod(const YamlNode& doc, const Where& where,
                           const ReadOptions& options,
                           ClusterProfile& profile) {
  profile.input_kind = "kube-apiserver static pod manifest";
  const YamlNode* spec = doc.Find("spec");
  const YamlNode* containers =
      spec != nullptr ? spec->Find("containers") : nullptr;
  if (containers == nullptr || containers->kind != Kind::kSeq) {
    return where.Error(spec != nullptr ? spec->line : doc.line,
                       "spec.containers", "is missing or not a list",
                       "a Pod with a container named kube-apiserver");
  }
  for (size_t i = 0; i < containers->seq.size(); ++i) {
    const YamlNode& c = containers->seq[i];
    const std::string* name =
        c.kind == Kind::kMap ? ScalarOf(c, "name") : nullptr;
    if (name == nullptr || *name != "kube-apiserver") continue;
    const std::string field = absl::StrCat("spec.containers[", i, "]");
    std::vector<FlagToken> tokens;
    for (absl::string_view list : {"command", "args"}) {
      const YamlNode* items = c.Find(list);
      if (items == nullptr) continue;
      if (items->kind != Kind::kSeq) {
        return where.Error(items->line, absl::StrCat(field, ".", list),
                           absl::StrCat("is ", items->KindName()),
                           "a list of strings");
      }
      for (size_t j = 0; j < items->seq.size(); ++j) {
        const YamlNode& item = items->seq[j];
        const std::string item_field =
            absl::StrCat(field, ".", list, "[", j, "]");
        if (item.kind != Kind::kScalar) {
          return where.Error(item.line, item_field,
                             absl::StrCat("is ", item.KindName()), "a string");
        }
        tokens.push_back({item.scalar, where.Origin(item.line, item_field)});
      }
    }
    ApplyFlagTokens(tokens, profile.current, profile);
    const YamlNode* image = c.Find("image");
    if (!options.binary_version.empty()) return absl::OkStatus();
    if (image == nullptr || image->kind != Kind::kScalar) {
      return where.Error(c.line, absl::StrCat(field, ".image"), "is missing",
                         "the kube-apiserver image with its version tag, or "
                         "--cluster-version");
    }
    absl::StatusOr<std::string> version =
        VersionOfImage(*image, absl::StrCat(field, ".image"), where);
    if (!version.ok()) return version.status();
    profile.current.binary_version = {
        *version, where.Origin(image->line, absl::StrCat(field, ".image"))};
    return absl::OkStatus();
  }
  return where.Error(containers->line, "spec.containers",
                     "no container is named kube-apiserver",
                     "a static pod manifest of kube-apiserver "
                     "(/etc/kubernetes/manifests/kube-apiserver.yaml)");
}

absl::Status ReadClusterConfiguration(const YamlNode& doc, const Where& where,
                                      ClusterProfile& profile,
                                      absl::string_view prefix) {
  const std::string* api_version = ScalarOf(doc, "apiVersion");
  const bool v1beta3 =
      api_version != nullptr && *api_version == "kubeadm.k8s.io/v1beta3";
  const bool v1beta4 =
      api_version != nullptr && *api_version == "kubeadm.k8s.io/v1beta4";
  if (!v1beta3 && !v1beta4) {
    const YamlNode* node = doc.Find("apiVersion");
    return where.Error(node != nullptr ? node->line : doc.line,
                       absl::StrCat(prefix, "apiVersion"),
                       absl::StrCat("ClusterConfiguration of apiVersion \"",
                                    api_version != nullptr ? *api_version : "",
                                    "\" is not one compatd reads"),
                       "kubeadm.k8s.io/v1beta3 or kubeadm.k8s.io/v1beta4");
  }
  if (const YamlNode* version = doc.Find("kubernetesVersion");
      version != nullptr) {
    const std::string field = absl::StrCat(prefix, "kubernetesVersion");
    if (absl::Status st =
            CheckBinaryVersion(where, version->line, field, version->scalar);
        !st.ok()) {
      return st;
    }
    profile.current.binary_version = {WithoutV(version->scalar),
                                      where.Origin(version->line, field)};
  }
  const YamlNode* api_server = doc.Find("apiServer");
  const YamlNode* args =
      api_server != nullptr ? api_server->Find("extraArgs") : nullptr;
  if (args == nullptr) return absl::OkStatus();
  return ApplyExtraArgs(*args, v1beta4,
                        absl::StrCat(prefix, "apiServer.extraArgs"),
                        *api_version, where, profile.current, profile);
}

absl::Status ReadKubeadmConfigMap(const YamlNode& doc, const Where& where,
                                  ClusterProfile& profile) {
  profile.input_kind = "kubeadm-config ConfigMap";
  const YamlNode* data = doc.Find("data");
  const YamlNode* config =
      data != nullptr ? data->Find("ClusterConfiguration") : nullptr;
  if (config == nullptr || config->kind != Kind::kScalar) {
    return where.Error(
        data != nullptr ? data->line : doc.line, "data.ClusterConfiguration",
        "is missing or not a string",
        "the kubeadm-config ConfigMap as kubectl get cm -n kube-system "
        "kubeadm-config -o yaml prints it");
  }
  Where inner = where;
  inner.line_offset = where.line_offset + config->line;
  inner.lines_exact = config->literal && where.lines_exact;
  absl::StatusOr<std::vector<YamlNode>> docs =
      ParseYamlDocuments(config->scalar);
  if (!docs.ok()) return PrefixYamlError(docs.status(), inner);
  if (docs->size() != 1 || (*docs)[0].kind != Kind::kMap) {
    return where.Error(config->line, "data.ClusterConfiguration",
                       "is not one YAML map",
                       "one kubeadm ClusterConfiguration");
  }
  return ReadClusterConfiguration((*docs)[0], inner, profile,
                                  "data.ClusterConfiguration.");
}

absl::Status ReadKubeadmControlPlane(const YamlNode& doc, const Where& where,
                                     ClusterProfile& profile) {
  profile.input_kind = "Cluster API KubeadmControlPlane";
  const std::string* api_version = ScalarOf(doc, "apiVersion");
  const bool v1beta1 = *api_version == "controlplane.cluster.x-k8s.io/v1beta1";
  const bool v1beta2 = *api_version == "controlplane.cluster.x-k8s.io/v1beta2";
  if (!v1beta1 && !v1beta2) {
    return where.Error(
        doc.Find("apiVersion")->line, "apiVersion",
        absl::StrCat("KubeadmControlPlane of apiVersion \"", *api_version,
                     "\" is not one compatd reads"),
        "controlplane.cluster.x-k8s.io/v1beta1 or v1beta2");
  }
  const YamlNode* spec = doc.Find("spec");
  const YamlNode* version = spec != nullptr ? spec->Find("version") : nullptr;
  if (version == nullptr || version->kind != Kind::kScalar) {
    return where.Error(spec != nullptr ? spec->line : doc.line, "spec.version",
                       "is missing",
                       "the control plane's Kubernetes version, e.g. v1.35.2");
  }
  if (absl::Status st = CheckBinaryVersion(where, version->line, "spec.version",
                                           version->scalar);
      !st.ok()) {
    return st;
  }
  profile.current.binary_version = {
      WithoutV(version->scalar), where.Origin(version->line, "spec.version")};
  const YamlNode* config = spec->Find("kubeadmConfigSpec");
  config = config != nullptr ? config->Find("clusterConfiguration") : nullptr;
  const YamlNode* api_server =
      config != nullptr ? config->Find("apiServer") : nullptr;
  const YamlNode* args =
      api_server != nullptr ? api_server->Find("extraArgs") : nullptr;
  if (args == nullptr) return absl::OkStatus();
  return ApplyExtraArgs(
      *args, v1beta2,
      "spec.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs",
      *api_version, where, profile.current, profile);
}

absl::Status ReadVersionJson(const YamlNode& doc, const Where& where,
                             ClusterProfile& profile) {
  profile.input_kind = "/version JSON";
  const YamlNode* git = doc.Find("gitVersion");
  if (absl::Status st =
          CheckBinaryVersion(where, git->line, "gitVersion", git->scalar);
      !st.ok()) {
    return st;
  }
  profile.current.binary_version = {WithoutV(git->scalar),
                                    where.Origin(git->line, "gitVersion")};
  auto pair = [&](absl::string_view major, absl::string_view minor,
                  ProfileValue& out) -> absl::Status {
    const YamlNode* ma = doc.Find(major);
    const YamlNode* mi = doc.Find(minor);
    if (ma == nullptr && mi == nullptr) return absl::OkStatus();
    uint64_t a = 0;
    uint64_t b = 0;
    if (ma == nullptr || mi == nullptr || !absl::SimpleAtoi(ma->scalar, &a) ||
        !absl::SimpleAtoi(mi->scalar, &b)) {
      return where.Error((ma != nullptr ? ma : mi)->line,
                         absl::StrCat(major, "/", minor),
                         "is not a pair of numbers",
                         "both fields, as strings of digits (\"1\", \"34\")");
    }
    out = {absl::StrCat(a, ".", b),
           where.Origin(ma->line, absl::StrCat(major, "/", minor))};
    return absl::OkStatus();
  };
  if (absl::Status st = pair("emulationMajor", "emulationMinor",
                             profile.current.emulation_version);
      !st.ok()) {
    return st;
  }
  return pair("minCompatibilityMajor", "minCompatibilityMinor",
              profile.current.min_compatibility_version);
}

absl::Status ApplyTargetFlag(const ReadOptions& options,
                             ClusterProfile& profile) {
  if (options.upgrade_target.empty()) return absl::OkStatus();
  ApiServerSettings target;
  target.binary_version = {WithoutV(options.upgrade_target),
                           "--upgrade-target"};
  profile.upgrade_target = std::move(target);
  return absl::OkStatus();
}

// Checks the binary versions and the target, and records the start-up findings.
absl::Status Finish(const ReadOptions& options, bool own_format,
                    ClusterProfile& profile) {
  if (!options.binary_version.empty()) {
    profile.current.binary_version = {WithoutV(options.binary_version),
                                      "--cluster-version"};
  }
  if (absl::Status st = ApplyTargetFlag(options, profile); !st.ok()) return st;
  if (!profile.current.binary_version.given()) {
    return absl::InvalidArgumentError(absl::StrCat(
        profile.source, ": field ",
        own_format ? "binaryVersion" : "kube-apiserver version",
        ": is missing; accepted: the cluster's kube-apiserver version (e.g. "
        "1.35.2) in the file or by --cluster-version"));
  }
  auto check = [&](const ProfileValue& v,
                   absl::string_view what) -> absl::StatusOr<engine::Version> {
    absl::StatusOr<engine::Version> parsed = engine::Version::Parse(v.value);
    if (!parsed.ok() || parsed->major() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          v.origin, ": ", what, " \"", v.value,
          "\" is not a Kubernetes version; accepted: a kube-apiserver version "
          "such as 1.35, 1.35.2 or v1.35.2"));
    }
    return parsed;
  };
  absl::StatusOr<engine::Version> current =
      check(profile.current.binary_version, "binary version");
  if (!current.ok()) return current.status();
  std::vector<std::string> problems =
      StartupProblems(profile.current, "cluster");
  if (profile.upgrade_target.has_value()) {
    absl::StatusOr<engine::Version> target =
        check(profile.upgrade_target->binary_version, "upgrade target");
    if (!target.ok()) return target.status();
    if (target->CompareMajorMinor(*current) < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          profile.upgrade_target->binary_version.origin, ": upgrade target ",
          profile.upgrade_target->binary_version.value,
          " is older than the cluster's kube-apiserver ",
          profile.current.binary_version.value, " (",
          profile.current.binary_version.origin,
          "); accepted: the cluster's release line or a later one"));
    }
    std::vector<std::string> more =
        StartupProblems(*profile.upgrade_target, "upgrade target");
    problems.insert(problems.end(), more.begin(), more.end());
  }
  if (own_format && !problems.empty()) {
    // compatd's own file is written for compatd: what kube-apiserver would
    // refuse is an error there, not a finding.
    return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
  }
  profile.findings = std::move(problems);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClusterProfile> ReadClusterProfile(absl::string_view text,
                                                  absl::string_view source,
                                                  const ReadOptions& options) {
  ClusterProfile profile;
  profile.source = std::string(source);
  Where where{std::string(source)};
  absl::StatusOr<std::vector<YamlNode>> docs = ParseYamlDocuments(text);
  if (!docs.ok()) return PrefixYamlError(docs.status(), where);
  if (docs->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ":1: the file is empty; accepted: ", kAcceptedInputs));
  }
  const YamlNode* chosen = nullptr;
  for (const YamlNode& doc : *docs) {
    if (doc.kind != Kind::kMap) {
      return where.Error(doc.line, "(document)",
                         absl::StrCat("is ", doc.KindName()), kAcceptedInputs);
    }
    const std::string* kind = ScalarOf(doc, "kind");
    // kubeadm's config files hold InitConfiguration, KubeletConfiguration...
    // beside the ClusterConfiguration: it is the one read.
    if (kind != nullptr && *kind == "ClusterConfiguration") chosen = &doc;
  }
  bool own_format = false;
  absl::Status status;
  if (chosen != nullptr) {
    profile.input_kind = "kubeadm ClusterConfiguration";
    status = ReadClusterConfiguration(*chosen, where, profile, "");
  } else if (docs->size() != 1) {
    return where.Error(
        (*docs)[1].line, "(document)",
        "several documents and none is a kubeadm ClusterConfiguration",
        kAcceptedInputs);
  } else {
    const YamlNode& doc = (*docs)[0];
    const std::string* api_version = ScalarOf(doc, "apiVersion");
    const std::string* kind = ScalarOf(doc, "kind");
    if (api_version == nullptr && kind == nullptr) {
      if (doc.Find("gitVersion") != nullptr) {
        status = ReadVersionJson(doc, where, profile);
      } else {
        own_format = true;
        status = ReadOwnProfile(doc, where, profile);
      }
    } else if (kind != nullptr && api_version != nullptr && *kind == "Pod" &&
               *api_version == "v1") {
      status = ReadStaticPod(doc, where, options, profile);
    } else if (kind != nullptr && api_version != nullptr &&
               *kind == "ConfigMap" && *api_version == "v1") {
      status = ReadKubeadmConfigMap(doc, where, profile);
    } else if (kind != nullptr && api_version != nullptr &&
               *kind == "KubeadmControlPlane") {
      status = ReadKubeadmControlPlane(doc, where, profile);
    } else {
      const YamlNode* at = doc.Find(kind != nullptr ? "kind" : "apiVersion");
      return where.Error(
          at->line, kind != nullptr ? "kind" : "apiVersion",
          absl::StrCat("\"", api_version != nullptr ? *api_version : "",
                       "\" \"", kind != nullptr ? *kind : "",
                       "\" is not an input compatd reads"),
          kAcceptedInputs);
    }
  }
  if (!status.ok()) return status;
  if (absl::Status st = Finish(options, own_format, profile); !st.ok())
    return st;
  return profile;
}

absl::StatusOr<ClusterProfile> ProfileFromFlags(const ReadOptions& options) {
  ClusterProfile profile;
  profile.source = "command line";
  profile.input_kind = "flags";
  if (absl::Status st = Finish(options, false, profile); !st.ok()) return st;
  return profile;
}

std::string VersionContextJson(const ApiServerSettings& s) {
  std::vector<std::string> fields;
  auto text = [&](absl::string_view name, const ProfileValue& v) {
    if (v.given())
      fields.push_back(
          absl::StrCat("\"", name, "\":", base::JsonQuote(v.value)));
  };
  auto flag = [&](absl::string_view name, const ProfileValue& v) {
    absl::StatusOr<bool> b = engine::ParseGoBool(v.value);
    if (v.given() && b.ok()) {
      fields.push_back(absl::StrCat("\"", name, "\":", *b ? "true" : "false"));
    }
  };
  text("binaryVersion", s.binary_version);
  text("emulationVersion", s.emulation_version);
  text("minCompatibilityVersion", s.min_compatibility_version);
  text("featureGates", s.feature_gates);
  text("runtimeConfig", s.runtime_config);
  flag("emulationForwardCompatible", s.emulation_forward_compatible);
  flag("runtimeConfigEmulationForwardCompatible",
       s.runtime_config_emulation_forward_compatible);
  return absl::StrCat("{", absl::StrJoin(fields, ","), "}");
}

std::string FormatClusterProfile(const ClusterProfile& profile) {
  std::string out =
      absl::StrCat("source: ", profile.source, " (", profile.input_kind, ")\n");
  auto settings = [&](absl::string_view title, const ApiServerSettings& s) {
    absl::StrAppend(&out, title, ":\n");
    const std::pair<absl::string_view, const ProfileValue*> rows[] = {
        {"binaryVersion", &s.binary_version},
        {"emulationVersion", &s.emulation_version},
        {"minCompatibilityVersion", &s.min_compatibility_version},
        {"featureGates", &s.feature_gates},
        {"runtimeConfig", &s.runtime_config},
        {"emulationForwardCompatible", &s.emulation_forward_compatible},
        {"runtimeConfigEmulationForwardCompatible",
         &s.runtime_config_emulation_forward_compatible},
    };
    for (const auto& [name, value] : rows) {
      if (!value->given()) {
        absl::StrAppend(&out, "  ", name, ": (not set: Kubernetes' default)\n");
      } else {
        absl::StrAppend(&out, "  ", name, ": \"", value->value, "\"  <- ",
                        value->origin, "\n");
      }
    }
  };
  settings("cluster", profile.current);
  if (profile.upgrade_target.has_value()) {
    settings("upgradeTarget", *profile.upgrade_target);
  } else {
    absl::StrAppend(&out, "upgradeTarget: (none)\n");
  }
  absl::StrAppend(&out, "unmodelled flags (kept, not used):",
                  profile.unmodelled_flags.empty() ? " (none)" : "", "\n");
  for (const UnmodelledFlag& flag : profile.unmodelled_flags) {
    absl::StrAppend(&out, "  ", flag.flag, "  <- ", flag.origin, "\n");
  }
  absl::StrAppend(&out, "findings (kube-apiserver would refuse these):",
                  profile.findings.empty() ? " (none)" : "", "\n");
  for (const std::string& finding : profile.findings) {
    absl::StrAppend(&out, "  ", finding, "\n");
  }
  return out;
}

}  // namespace compatd::cluster
