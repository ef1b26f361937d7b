#include "service/commands.h"

#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/offline.h"
#include "base/bounded_file.h"
#include "base/flags.h"
#include "cluster/profile.h"
#include "service/server_flags.h"

namespace compatd::service {
namespace {

constexpr char kServerUsage[] =
    "compatd answers Kubernetes compatibility-version questions (KEP-4330)\n"
    "over gRPC and HTTPS/JSON.\n\n"
    "Usage:\n"
    "  compatd [flags]                serve (gRPC; --http-listen: HTTPS/JSON)\n"
    "  compatd --check-catalog=FILE   validate a catalog file and exit\n"
    "  compatd COMMAND [flags]        run one command offline and exit:\n"
    "    cluster show FILE  print the cluster profile compatd reads from FILE\n"
    "    eval   answer one RPC (JSON on stdout)\n"
    "    lint   check a catalog against Kubernetes' API change rules\n"
    "    plan   plan an upgrade (PlanUpgrade): steps, blockers, actions\n"
    "    scan   check manifests (files, directories, stdin) against a "
    "release\n\n"
    "compatd COMMAND --help prints a command's flags, examples and exit "
    "codes.\n\n"
    "The server's flags, by section:\n\n";

// What every subcommand takes, and what each one's flags set.
struct CommandOptions {
  api::EvalOptions eval;
  api::PlanOptions plan;
  api::ScanOptions scan;
  std::vector<std::string> catalog;
  std::string output;            // -o / --output, for plan and scan
  cluster::ReadOptions cluster;  // --cluster-version, --upgrade-target
  std::string from_manifest;     // plan --from-manifest
  bool help = false;
};

void AddCatalogFlag(base::FlagTable* flags, CommandOptions* c) {
  flags->AddStringList(
      "catalog", &c->catalog,
      "catalog file (YAML or JSON) or directory of them, one kube-apiserver "
      "release line per file; repeat it for several. None: the embedded "
      "catalogs of every release line compatd ships");
}

void AddEvalFlags(base::FlagTable* flags, CommandOptions* c) {
  flags->AddString("rpc", &c->eval.rpc,
                   "the RPC to run, e.g. GetFeature (or "
                   "compatd.v1.CompatibilityPolicy/GetFeature)");
  flags->AddString("request", &c->eval.request_json,
                   "the request message as JSON, e.g. "
                   "'{\"name\":\"WatchList\"}'; empty: {}");
  AddCatalogFlag(flags, c);
}

void AddLintFlags(base::FlagTable* flags, CommandOptions* c) {
  AddCatalogFlag(flags, c);
}

void AddPlanFlags(base::FlagTable* flags, CommandOptions* c) {
  flags->AddString("from", &c->plan.from,
                   "the cluster's kube-apiserver binary now, at its defaults, "
                   "e.g. 1.33; empty: the default line's cluster section");
  flags->AddString("to", &c->plan.to,
                   "the target kube-apiserver binary, at its defaults, e.g. "
                   "1.36; empty: the default line (the newest)");
  flags->AddString("from-json", &c->plan.from_json,
                   "the cluster now as a whole compatd.v1.VersionContext in "
                   "JSON (instead of --from), e.g. "
                   "'{\"binaryVersion\":\"1.33\",\"featureGates\":"
                   "\"WatchList=false\"}'");
  flags->AddString("to-json", &c->plan.to_json,
                   "the target as a whole VersionContext in JSON (instead of "
                   "--to)");
  flags->AddString("clients", &c->plan.clients,
                   "clients to check against the skew policy at every step, "
                   "component=version,... e.g. kubelet=1.31,kubectl=1.35");
  flags->AddString("from-manifest", &c->from_manifest,
                   "the cluster now, read from what it runs: a kube-apiserver "
                   "static pod manifest, a kubeadm ClusterConfiguration, a "
                   "Cluster API KubeadmControlPlane, /version JSON or a "
                   "compatd cluster profile (docs/cluster-profile.md); its "
                   "upgrade target is the default of --to");
  flags->AddString("cluster-version", &c->cluster.binary_version,
                   "with --from-manifest: the kube-apiserver binary when the "
                   "file does not say it (a digest-only image)");
  flags->AddBool("all", &c->plan.all,
                 "print every item of every step with its reason and action "
                 "instead of the summary");
  flags->AddString("output", &c->output,
                   "text (a summary for people; --all for every item) or "
                   "json (the PlanUpgradeResponse)");
  flags->AddAlias("o", "output");
  AddCatalogFlag(flags, c);
}

void AddClusterReadFlags(base::FlagTable* flags, CommandOptions* c) {
  flags->AddString("cluster-version", &c->cluster.binary_version,
                   "the cluster's kube-apiserver binary, e.g. 1.35.2, when the "
                   "file does not say it (a digest-only image) or to override "
                   "it");
  flags->AddString("upgrade-target", &c->cluster.upgrade_target,
                   "the kube-apiserver binary the cluster is going to, e.g. "
                   "1.36");
}

void AddClusterFlags(base::FlagTable* flags, CommandOptions* c) {
  AddClusterReadFlags(flags, c);
}

// The profile of `path` (docs/cluster-profile.md), or the error on stderr.
std::optional<cluster::ClusterProfile> ReadProfileFile(
    const std::string& path, const cluster::ReadOptions& options) {
  absl::StatusOr<std::string> text =
      base::ReadBoundedFile(path, {.max_bytes = 4 << 20,
                                   .what = "the cluster profile",
                                   .refuse_while_written = false});
  if (!text.ok()) {
    std::cerr << "ERROR: " << text.status().message() << "\n";
    return std::nullopt;
  }
  absl::StatusOr<cluster::ClusterProfile> profile =
      cluster::ReadClusterProfile(*text, path, options);
  if (!profile.ok()) {
    std::cerr << "ERROR: " << profile.status().message() << "\n";
    return std::nullopt;
  }
  return *std::move(profile);
}

int RunClusterCommand(CommandOptions& c,
                      const std::vector<std::string>& positional) {
  if (positional.size() != 2 || positional[0] != "show") {
    std::cerr << "usage: compatd cluster show FILE [--cluster-version=1.35.2] "
                 "[--upgrade-target=1.36]\n";
    return api::kExitUsage;
  }
  std::optional<cluster::ClusterProfile> profile =
      ReadProfileFile(positional[1], c.cluster);
  if (!profile.has_value()) return 1;
  std::cout << cluster::FormatClusterProfile(*profile);
  return 0;
}

void AddScanFlags(base::FlagTable* flags, CommandOptions* c) {
  flags->AddString("target", &c->scan.target,
                   "the Kubernetes release to check against (1.16 or later); "
                   "empty: the catalog's upgrade target, else its binary "
                   "version");
  flags->AddString("min-compatibility-version", &c->scan.cel_min_compatibility,
                   "the min-compatibility version the target's kube-apiserver "
                   "runs with, for the CEL checks (default: the target minus "
                   "one, not below its floor)");
  flags->AddString("output", &c->output,
                   "table, json, yaml or sarif (SARIF 2.1.0, for code "
                   "scanning); default: table");
  flags->AddAlias("o", "output");
  flags->AddBool("ignore-deprecations", &c->scan.ignore_deprecations,
                 "deprecated findings do not set the exit code (2)");
  flags->AddBool("ignore-removals", &c->scan.ignore_removals,
                 "removed, not served and unknown findings do not set the "
                 "exit code (3)");
  flags->AddBool("strict", &c->scan.strict,
                 "documents without a kind (a Helm values.yaml or Chart.yaml, "
                 "a CI workflow) are errors (exit 1); default: skipped and "
                 "counted");
  flags->AddBool("fail-on-rbac", &c->scan.fail_on_rbac,
                 "RBAC rules granting on APIs removed at the target set the "
                 "exit code (3); default: printed only");
  AddCatalogFlag(flags, c);
}

// Colour and width for the plan's summary: a terminal's (at most 100
// columns), unless NO_COLOR or TERM=dumb; plain text at 100 for a pipe.
api::PlanTextStyle PlanStyle() {
  api::PlanTextStyle style;
  if (isatty(STDOUT_FILENO) != 1) return style;
  const char* no_color = getenv("NO_COLOR");
  const char* term = getenv("TERM");
  style.color = (no_color == nullptr || no_color[0] == '\0') &&
                (term == nullptr || absl::string_view(term) != "dumb");
  struct winsize size = {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 60) {
    style.width = std::min<int>(size.ws_col, 100);
  }
  return style;
}

int RunEvalCommand(CommandOptions& c, const std::vector<std::string>&) {
  c.eval.catalog_paths = c.catalog;
  return api::RunEval(c.eval, std::cout, std::cerr);
}

int RunLintCommand(CommandOptions& c, const std::vector<std::string>&) {
  return api::RunLint(c.catalog, std::cout, std::cerr);
}

int RunPlanCommand(CommandOptions& c, const std::vector<std::string>&) {
  if (!c.from_manifest.empty()) {
    if (!c.plan.from.empty() || !c.plan.from_json.empty()) {
      std::cerr << "ERROR: --from-manifest replaces --from and --from-json; "
                   "give one of them\n";
      return api::kPlanExitError;
    }
    std::optional<cluster::ClusterProfile> profile =
        ReadProfileFile(c.from_manifest, c.cluster);
    if (!profile.has_value()) return api::kPlanExitError;
    for (const std::string& finding : profile->findings) {
      std::cerr << "warning: " << finding << "\n";
    }
    c.plan.from_json = cluster::VersionContextJson(profile->current);
    if (c.plan.to.empty() && c.plan.to_json.empty() &&
        profile->upgrade_target.has_value()) {
      c.plan.to_json = cluster::VersionContextJson(*profile->upgrade_target);
    }
  }
  c.plan.catalog_paths = c.catalog;
  c.plan.output = c.output;
  if (c.output.empty() || c.output == "text") c.plan.style = PlanStyle();
  return api::RunPlan(c.plan, std::cout, std::cerr);
}

int RunScanCommand(CommandOptions& c,
                   const std::vector<std::string>& positional) {
  c.scan.catalog_paths = c.catalog;
  if (!c.output.empty()) c.scan.output = c.output;
  c.scan.paths = positional;
  c.scan.progress = isatty(STDERR_FILENO) == 1;
  return api::RunScan(c.scan, std::cin, std::cout, std::cerr);
}

struct Command {
  absl::string_view name;
  absl::string_view synopsis;
  absl::string_view about;
  absl::string_view examples;
  absl::string_view exit_codes;
  int usage_exit;        // the exit code of a usage error
  bool takes_arguments;  // paths (scan)
  void (*add_flags)(base::FlagTable*, CommandOptions*);
  int (*run)(CommandOptions&, const std::vector<std::string>&);
};

constexpr Command kCommands[] = {
    {"cluster",
     "compatd cluster show FILE [--cluster-version=1.35.2] "
     "[--upgrade-target=1.36]",
     "Prints the cluster profile compatd reads from FILE (a kube-apiserver "
     "static pod manifest, a kubeadm ClusterConfiguration or the "
     "kubeadm-config ConfigMap, a Cluster API KubeadmControlPlane, /version "
     "JSON, or compatd's own profile): every value and where it came from, "
     "the flags compatd keeps but does not model, and what kube-apiserver "
     "would refuse at start-up.",
     "  compatd cluster show /etc/kubernetes/manifests/kube-apiserver.yaml\n"
     "  kubectl get cm -n kube-system kubeadm-config -o yaml > kc.yaml && "
     "compatd cluster show kc.yaml\n",
     "  0  the profile is on stdout\n"
     "  1  the file cannot be read or is not an input compatd reads "
     "(ERROR on stderr)\n"
     "  2  bad usage\n",
     api::kExitUsage, true, AddClusterFlags, RunClusterCommand},
    {"eval", "compatd eval --rpc=NAME [--request=JSON] [--catalog=FILE]",
     "Answers one unary RPC of compatd.v1.CompatibilityPolicy offline, "
     "through the server's own handlers, and prints the response as JSON.",
     "  compatd eval --rpc=GetFeature --request='{\"name\":\"WatchList\"}'\n"
     "  compatd eval --rpc=ResolveVersions "
     "--request='{\"versions\":{\"binaryVersion\":\"1.35\"}}'\n"
     "  compatd eval --rpc=GetCatalog --catalog=my-catalog.yaml\n",
     "  0  the response is on stdout\n"
     "  1  the RPC failed (\"ERROR: CODE: message\" on stderr), or a "
     "catalog\n     does not load\n"
     "  2  bad usage: unknown flag or RPC, a request that is not its JSON\n",
     api::kExitUsage, false, AddEvalFlags, RunEvalCommand},
    {"lint", "compatd lint [--catalog=FILE]",
     "Checks catalogs against Kubernetes' API change rules (LintCatalog): one "
     "line per finding, then a summary.",
     "  compatd lint\n"
     "  compatd lint --catalog=my-catalog.yaml\n",
     "  0  no errors (warnings and documented exceptions allowed)\n"
     "  1  errors, or a catalog that does not load\n"
     "  2  bad usage\n",
     api::kExitUsage, false, AddLintFlags, RunLintCommand},
    {"plan",
     "compatd plan --from=1.33 --to=1.36 [--clients=...] [--all] "
     "[-o text|json|migrations]",
     "Plans an upgrade of kube-apiserver (PlanUpgrade) offline: one row per "
     "step with its versions, then what blocks the upgrade and what to do "
     "about it, then the actions, then a count of the items that need "
     "nothing (--all lists every item). Colour on a terminal only.",
     "  compatd plan --from=1.33 --to=1.36\n"
     "  compatd plan --from=1.35 --to=1.36 --clients=kubelet=1.33 --all\n"
     "  compatd plan --to=1.33 -o json \\\n"
     "    --from-json='{\"binaryVersion\":\"1.32\","
     "\"featureGates\":\"AppArmor=true\"}'\n",
     "  0  nothing to do\n"
     "  1  bad usage, a catalog that does not load, or a plan compatd "
     "refuses\n     (ERROR on stderr)\n"
     "  2  actions to take, no blocker\n"
     "  3  at least one blocker\n",
     api::kPlanExitError, false, AddPlanFlags, RunPlanCommand},
    {"scan",
     "compatd scan [--target=1.37] [-o table|json|yaml|sarif] PATH...|-",
     "Checks manifests (files, directories read recursively for *.yaml, "
     "*.yml and *.json, or - for stdin) against a Kubernetes release, as the "
     "ScanObjects RPC does. Progress on stderr when it is a terminal.",
     "  compatd scan chart/ --target=1.36\n"
     "  helm template . | compatd scan -o json -\n"
     "  compatd scan -o sarif manifests/ > compatd.sarif\n",
     "  0  nothing found\n"
     "  1  an error: bad usage, unreadable input or catalog, bad documents\n"
     "  2  deprecated APIs found\n"
     "  3  removed, not served, not yet introduced or unknown APIs, CRD "
     "or CEL\n     violations\n",
     api::kScanExitError, true, AddScanFlags, RunScanCommand},
};

const Command* FindCommand(absl::string_view name) {
  for (const Command& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

// The top-level table: the server's flags, --check-catalog, --version, --help.
struct TopLevel {
  explicit TopLevel(ServerOptions* s) : server(s) {}
  ServerOptions* server;
  std::vector<std::string> check_catalog;
  bool help = false;
  bool version = false;
};

void AddTopLevelFlags(base::FlagTable* flags, TopLevel* top) {
  AddServerFlags(flags, top->server);
  flags->AddSection("Other");
  flags->AddStringList(
      "check-catalog", &top->check_catalog,
      "validate this catalog file (or directory of them; repeat it for "
      "several, one release line per file), print every error or the counts "
      "and digests, and exit (0 valid, 1 invalid)");
  flags->AddBool("version", &top->version, "print the version and exit");
  flags->AddBool("help", &top->help, "print this help and exit");
  flags->AddAlias("h", "help");
}

bool IsServerFlag(absl::string_view name) {
  ServerOptions server;
  TopLevel top(&server);
  base::FlagTable flags;
  AddTopLevelFlags(&flags, &top);
  return flags.Has(name);
}

// The subcommand other than `self` that has the flag `name`, if any.
const Command* CommandWithFlag(absl::string_view name, const Command* self) {
  for (const Command& command : kCommands) {
    if (&command == self) continue;
    CommandOptions options;
    base::FlagTable flags;
    command.add_flags(&flags, &options);
    if (flags.Has(name)) return &command;
  }
  return nullptr;
}

std::string CommandHelp(const Command& command, const base::FlagTable& flags) {
  return absl::StrCat("Usage: ", command.synopsis, "\n\n",
                      base::WrapText(command.about, 0, 80), "\nFlags:\n",
                      flags.Usage(), "\nExamples:\n", command.examples,
                      "\nExit codes:\n", command.exit_codes);
}

int RunSubcommand(const Command& command, int argc, char** argv) {
  CommandOptions options;
  const std::string help_command =
      absl::StrCat("compatd ", command.name, " --help");
  base::FlagTable flags(help_command);
  command.add_flags(&flags, &options);
  flags.AddBool("help", &options.help, "print this help and exit");
  flags.AddAlias("h", "help");
  flags.SetUnknownFlagMessage(
      [&](absl::string_view name) -> std::optional<std::string> {
        const std::string self = absl::StrCat("compatd ", command.name);
        if (IsServerFlag(name)) {
          return absl::StrCat("--", name, " is a server flag that ", self,
                              " does not use; ", help_command,
                              " lists its flags");
        }
        if (const Command* other = CommandWithFlag(name, &command)) {
          return absl::StrCat("--", name, " is a flag of compatd ", other->name,
                              ", not of ", self, "; ", help_command,
                              " lists its flags");
        }
        return std::nullopt;
      });
  std::vector<std::string> positional;
  if (absl::Status s = flags.Parse(argc, argv, 2, &positional); !s.ok()) {
    std::cerr << "compatd " << command.name << ": " << s.message() << "\n";
    return command.usage_exit;
  }
  if (options.help) {
    std::cout << CommandHelp(command, flags);
    return 0;
  }
  if (!command.takes_arguments && !positional.empty()) {
    std::cerr << "compatd " << command.name << ": unexpected argument \""
              << positional[0] << "\" (" << help_command << ")\n";
    return command.usage_exit;
  }
  return command.run(options, positional);
}

// A top-level flag the server does not have: a subcommand's, named.
std::optional<std::string> TopLevelUnknownFlag(absl::string_view name) {
  const Command* command = CommandWithFlag(name, nullptr);
  if (command == nullptr) return std::nullopt;
  return absl::StrCat("--", name, " is a flag of compatd ", command->name,
                      ", not of the server: compatd ", command->name, " --",
                      name, "=... (compatd ", command->name,
                      " --help lists its flags)");
}

std::optional<int> RunTopLevel(int argc, char** argv, ServerOptions* server) {
  TopLevel top(server);
  base::FlagTable flags;
  AddTopLevelFlags(&flags, &top);
  flags.SetUnknownFlagMessage(TopLevelUnknownFlag);
  std::vector<std::string> positional;
  if (absl::Status s = flags.Parse(argc, argv, 1, &positional); !s.ok()) {
    std::cerr << "compatd: " << s.message() << "\n";
    return api::kExitUsage;
  }
  if (!positional.empty()) {
    std::cerr << "compatd: unexpected argument \"" << positional[0] << "\"; "
              << (FindCommand(positional[0]) != nullptr
                      ? "put the command first: compatd " + positional[0] +
                            " [flags]"
                      : std::string("the commands are eval, lint, plan and "
                                    "scan (see compatd --help)"))
              << "\n";
    return api::kExitUsage;
  }
  if (top.help) {
    std::cout << kServerUsage << flags.Usage();
    return 0;
  }
  if (top.version) {
    std::cout << "compatd " << COMPATD_VERSION << " (" << COMPATD_REVISION
              << ")\n";
    return 0;
  }
  if (!top.check_catalog.empty()) {
    return api::RunCheckCatalog(top.check_catalog, std::cout, std::cerr);
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> RunCommandLine(int argc, char** argv,
                                  ServerOptions* server) {
  // The container image's ENTRYPOINT is `compatd --listen=... --metrics-
  // listen=...` (Dockerfile), so `docker run IMAGE scan ...` reaches here as
  // `compatd --listen=... --metrics-listen=... scan ...`: listen addresses
  // before a command are the image's server defaults, which no command uses,
  // and are passed over. Any other flag before a command is refused below.
  int first = 1;
  while (first < argc && (absl::StartsWith(argv[first], "--listen=") ||
                          absl::StartsWith(argv[first], "--metrics-listen="))) {
    ++first;
  }
  if (first < argc) {
    if (const Command* command = FindCommand(argv[first])) {
      std::vector<char*> rest = {argv[0]};
      rest.insert(rest.end(), argv + first, argv + argc);
      return RunSubcommand(*command, static_cast<int>(rest.size()),
                           rest.data());
    }
  }
  return RunTopLevel(argc, argv, server);
}

}  // namespace compatd::service
