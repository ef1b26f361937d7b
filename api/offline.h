#pragma once

// The offline commands: `compatd eval` (any unary RPC through the server's own
// handlers), `compatd lint` and `compatd --check-catalog`. They print to the
// given streams and return the exit code.

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "api/handlers.h"
#include "api/plan_text.h"

namespace compatd::api {

// Exit codes shared by the offline commands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError =
    1;  // an RPC error, or a catalog that does not load
inline constexpr int kExitUsage =
    2;  // bad usage: unknown RPC, bad JSON, missing flag

struct EvalOptions {
  // Catalog files or directories of them, one release line per file (as
  // --catalog); empty: the embedded catalogs.
  std::vector<std::string> catalog_paths;
  std::string
      rpc;  // "GetFeature" (or "compatd.v1.CompatibilityPolicy/GetFeature")
  std::string request_json;  // the request message as JSON; empty = {}
};

// Prints the JSON response on `out` (exit 0); "ERROR: <CODE>: <message>" on
// `err` for an RPC error (exit 1); catalog errors like --check-catalog (exit
// 1); usage errors (exit 2).
int RunEval(const EvalOptions& options, std::ostream& out, std::ostream& err);

// RunEval's work with the caller's handlers and snapshot: finds
// `rpc`, parses `request_json`, calls the handler and prints like RunEval,
// returning the same exit codes. The eval fuzzer calls it.
int EvalRequest(const PolicyHandlers& handlers,
                const runtime::ServingSnapshot& snapshot, absl::string_view rpc,
                const std::string& request_json, std::ostream& out,
                std::ostream& err);

// `compatd lint`: checks a catalog (empty path: the embedded one) against
// Kubernetes' API change rules (engine/catalog_lint.h) through the LintCatalog
// handler. Prints one line per finding, "<file>:<line>: error|warning|
// exception: <rule>: <subject> (<release>): <message>", then a summary, on
// `out`. Exit 0 without errors (warnings and documented exceptions allowed),
// 1 with errors or a catalog that does not load.
// Several catalogs (one per release line): each line's findings, under its
// own file name.
int RunLint(const std::vector<std::string>& paths, std::ostream& out,
            std::ostream& err);

struct PlanOptions {
  // Catalog files or directories of them, one release line per file (as
  // --catalog); empty: the embedded catalogs.
  std::vector<std::string> catalog_paths;
  // A bare version: a kube-apiserver binary at its defaults ("1.33"); each
  // binary's line answers from its catalog.
  std::string from;
  std::string to;
  // A whole compatd.v1.VersionContext in JSON (instead of from / to).
  std::string from_json;
  std::string to_json;
  // "component=version,..." clients to check ("kubelet=1.31,kubectl=1.35").
  std::string clients;
  // "text" (or empty) or "json" (the PlanUpgradeResponse, as eval prints it).
  std::string output;
  // Text: every item with its reason (--all) instead of the summary.
  bool all = false;
  // Text: colour and width of the summary (a terminal's, else plain, 100).
  PlanTextStyle style;
};

// Exit codes of `compatd plan`: those of `compatd scan` (below), so that a CI
// job gates an upgrade as it gates manifests. Whatever the output format.
inline constexpr int kPlanExitNothingToDo = 0;
inline constexpr int kPlanExitError = 1;  // bad usage, a catalog that does not
                                          // load, an RPC error
inline constexpr int kPlanExitActions = 2;   // actions, no blocker
inline constexpr int kPlanExitBlockers = 3;  // at least one blocking item

// `compatd plan`: PlanUpgrade through the server's handler, offline (so no
// recorded clients; the output says so). Prints the plan on `out` (the
// summary of api/plan_text.h, every item with `all`, or JSON) and returns
// its outcome's exit code above; an RPC error "ERROR: <CODE>: <message>", a
// catalog that does not load or bad usage on `err` (exit 1).
int RunPlan(const PlanOptions& options, std::ostream& out, std::ostream& err);

// Exit codes of `compatd scan`, Pluto's convention (CI users know it): the
// highest applies.
inline constexpr int kScanExitClean = 0;
inline constexpr int kScanExitError = 1;  // bad usage, unreadable input or
                                          // catalog, bad documents
inline constexpr int kScanExitDeprecated = 2;
inline constexpr int kScanExitRemoved = 3;  // removed, not served, not yet
                                            // introduced, unknown, CRD rules

struct ScanOptions {
  // Catalog files or directories of them, one release line per file (as
  // --catalog); empty: the embedded catalogs.
  std::vector<std::string> catalog_paths;
  std::string target;  // empty: the catalog's binary version
  // --min-compatibility-version for the CEL checks (api/scan_cel.h); empty:
  // the target's default.
  std::string cel_min_compatibility;
  // Files, directories (read recursively: *.yaml, *.yml, *.json) and "-"
  // (stdin).
  std::vector<std::string> paths;
  std::string output = "table";  // table, json, yaml or sarif
  // Pluto's flags: leave deprecated (exit 2) or removed (exit 3) findings
  // out of the exit code; they are still printed.
  bool ignore_deprecations = false;
  bool ignore_removals = false;
  // Documents without a kind (values files, Chart.yaml, workflows) are
  // errors (exit 1) instead of skipped and counted.
  bool strict = false;
  // RBAC rules granting on removed APIs count as removals (exit 3); by
  // default they are printed and leave the exit code alone.
  bool fail_on_rbac = false;
  // Progress (files and objects so far) on `err`, for a terminal: a line
  // redrawn at most ten times a second and cleared at the end.
  bool progress = false;
};

// `compatd scan`: reads every path, scans the objects through the
// ScanObjects handler's own function (api/scan.h) in one set, prints the
// findings (table, json or yaml) on `out`, bad documents and read errors on
// `err` (the table) or in the output (json, yaml), and returns the exit code
// above.
int RunScan(const ScanOptions& options, std::istream& in, std::ostream& out,
            std::ostream& err);

// Validates catalog files (or directories of them): on success prints each
// one's counts and digest on `out` (exit 0); otherwise every error,
// "<file>:<line>: <message>", on `err` (exit 1). Several files must make one
// set: one file per kube-apiserver release line.
int RunCheckCatalog(const std::vector<std::string>& paths, std::ostream& out,
                    std::ostream& err);

}  // namespace compatd::api
