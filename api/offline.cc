#include "api/offline.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "api/convert.h"
#include "api/handlers.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/skew.h"
#include "google/protobuf/util/json_util.h"
#include "runtime/catalog_file.h"
#include "runtime/catalog_pipeline.h"

namespace compatd::api {
namespace {

using UnaryRunner =
    std::function<int(const PolicyHandlers&, const runtime::ServingSnapshot&,
                      const std::string&, std::ostream&, std::ostream&)>;

template <typename Request, typename Response>
UnaryRunner Runner(absl::Status (PolicyHandlers::*handler)(
    const runtime::ServingSnapshot&, const Request&, Response*) const) {
  return
      [handler](const PolicyHandlers& handlers,
                const runtime::ServingSnapshot& snapshot,
                const std::string& json, std::ostream& out, std::ostream& err) {
        Request request;
        google::protobuf::util::JsonParseOptions parse_options;
        parse_options.ignore_unknown_fields = false;
        const auto parsed = google::protobuf::util::JsonStringToMessage(
            json.empty() ? "{}" : json, &request, parse_options);
        if (!parsed.ok()) {
          err << "ERROR: --request is not a valid "
              << Request::descriptor()->full_name()
              << " in JSON: " << parsed.ToString() << "\n";
          return kExitUsage;
        }
        Response response;
        const absl::Status status =
            (handlers.*handler)(snapshot, request, &response);
        if (!status.ok()) {
          err << "ERROR: " << CodeName(status.code()) << ": "
              << status.message() << "\n";
          return kExitError;
        }
        std::string text;
        google::protobuf::util::JsonPrintOptions print_options;
        print_options.add_whitespace = true;
        print_options.always_print_primitive_fields = true;
        const auto printed = google::protobuf::util::MessageToJsonString(
            response, &text, print_options);
        if (!printed.ok()) {
          err << "ERROR: INTERNAL: cannot print the response as JSON: "
              << printed.ToString() << "\n";
          return kExitError;
        }
        out << text;
        return kExitOk;
      };
}

// Every unary RPC's runner, indexed by api::Rpc.
const std::vector<UnaryRunner>& UnaryRunners() {
  static const auto* const runners = new std::vector<UnaryRunner>{
#define COMPATD_RUNNER(Name) Runner(&PolicyHandlers::Name),
      COMPATD_UNARY_RPCS(COMPATD_RUNNER)
#undef COMPATD_RUNNER
  };
  return *runners;
}

// Loads the catalog for an offline command; prints errors like --check-catalog.
std::unique_ptr<engine::Catalog> LoadForOffline(const std::string& path,
                                                std::ostream& err) {
  catalog::CatalogErrors errors;
  absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
      path.empty() ? catalog::ParseCatalog(
                         compatd::catalog::EmbeddedCatalogYaml(),
                         compatd::catalog::EmbeddedCatalogSource(), &errors)
                   : runtime::LoadCatalogFile(path, &errors);
  if (catalog.ok()) return *std::move(catalog);
  if (errors.errors.empty()) {
    err << catalog.status().message() << "\n";
  } else {
    err << errors.Format(path.empty()
                             ? compatd::catalog::EmbeddedCatalogSource()
                             : absl::string_view(path))
        << "\n";
    err << errors.errors.size()
        << (errors.errors.size() == 1 ? " error" : " errors") << "\n";
  }
  return nullptr;
}

// The runner of `rpc`, or null after printing the usage error on `err`.
const UnaryRunner* FindRunner(absl::string_view rpc, std::ostream& err) {
  if (rpc.empty()) {
    err << "ERROR: eval needs --rpc=NAME, e.g. --rpc=GetFeature "
           "--request='{\"name\":\"WatchList\"}'\n";
    return nullptr;
  }
  const std::optional<Rpc> found = FindRpc(rpc);
  if (found.has_value() && !IsServerStreaming(*found)) {
    return &UnaryRunners()[static_cast<size_t>(*found)];
  }
  if (found == Rpc::kWatchCatalog) {
    err << "ERROR: WatchCatalog is a stream; eval runs unary RPCs (use "
           "GetCatalog)\n";
  } else {
    std::vector<absl::string_view> names;
    for (int i = 0; i < kRpcCount; ++i) {
      if (!IsServerStreaming(static_cast<Rpc>(i))) {
        names.push_back(RpcName(static_cast<Rpc>(i)));
      }
    }
    err << "ERROR: unknown --rpc \"" << rpc
        << "\"; accepted: " << absl::StrJoin(names, ", ") << "\n";
  }
  return nullptr;
}

// The snapshot an offline command answers from: the one pipeline every
// process publishes through.
std::shared_ptr<const runtime::ServingSnapshot> Serve(
    std::unique_ptr<engine::Catalog> catalog) {
  runtime::CatalogPipeline::Options options;
  options.derive = DeriveAnswers;
  runtime::CatalogPipeline pipeline(std::move(options));
  pipeline.Publish(std::move(catalog), /*initial=*/true);
  return pipeline.Current();
}

}  // namespace

int EvalRequest(const PolicyHandlers& handlers,
                const runtime::ServingSnapshot& snapshot, absl::string_view rpc,
                const std::string& request_json, std::ostream& out,
                std::ostream& err) {
  const UnaryRunner* runner = FindRunner(rpc, err);
  if (runner == nullptr) return kExitUsage;
  return (*runner)(handlers, snapshot, request_json, out, err);
}

int RunEval(const EvalOptions& options, std::ostream& out, std::ostream& err) {
  // An unknown RPC is a usage error whatever the catalog: check it first.
  if (FindRunner(options.rpc, err) == nullptr) return kExitUsage;
  std::unique_ptr<engine::Catalog> catalog =
      LoadForOffline(options.catalog_path, err);
  if (catalog == nullptr) return kExitError;
  const PolicyHandlers handlers;
  return EvalRequest(handlers, *Serve(std::move(catalog)), options.rpc,
                     options.request_json, out, err);
}

int RunLint(const std::string& path, std::ostream& out, std::ostream& err) {
  std::unique_ptr<engine::Catalog> catalog = LoadForOffline(path, err);
  if (catalog == nullptr) return kExitError;
  const std::string source =
      path.empty() ? std::string(compatd::catalog::EmbeddedCatalogSource())
                   : path;
  const PolicyHandlers handlers;
  v1::LintCatalogResponse response;
  if (const absl::Status status = handlers.LintCatalog(
          *Serve(std::move(catalog)), v1::LintCatalogRequest(), &response);
      !status.ok()) {
    err << "ERROR: " << CodeName(status.code()) << ": " << status.message()
        << "\n";
    return kExitError;
  }
  for (const v1::LintFinding& f : response.findings()) {
    out << source;
    if (f.line() > 0) out << ":" << f.line();
    out << ": "
        << (!f.exception().empty()
                ? "exception"
                : (f.severity() == v1::LINT_SEVERITY_ERROR ? "error"
                                                           : "warning"))
        << ": " << f.rule() << ": " << f.subject() << " (" << f.release()
        << "): " << f.message();
    if (!f.exception().empty()) {
      out << " [documented exception: " << f.exception() << "]";
    }
    out << "\n";
  }
  out << source << ": " << response.errors() << " error(s), "
      << response.warnings() << " warning(s), " << response.exceptions()
      << " documented exception(s)\n";
  return response.errors() > 0 ? kExitError : kExitOk;
}

namespace {

// --from / --from-json (or --to / --to-json) into `out`; false after printing
// a usage error.
bool ParseEnd(absl::string_view end, const std::string& bare,
              const std::string& json, v1::VersionContext* out,
              std::ostream& err) {
  if (!bare.empty() && !json.empty()) {
    err << "ERROR: give --" << end << " or --" << end << "-json, not both\n";
    return false;
  }
  if (!bare.empty()) {
    out->set_emulation_version(bare);
    return true;
  }
  if (json.empty()) return true;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto parsed =
      google::protobuf::util::JsonStringToMessage(json, out, options);
  if (!parsed.ok()) {
    err << "ERROR: --" << end
        << "-json is not a valid compatd.v1.VersionContext in JSON: "
        << parsed.ToString()
        << " (e.g. '{\"emulationVersion\":\"1.33\",\"featureGates\":"
           "\"WatchList=false\"}')\n";
    return false;
  }
  return true;
}

void PrintItem(const v1::UpgradeItem& item, absl::string_view section,
               std::ostream& out) {
  out << "  [" << section << "] " << (item.blocking() ? "BLOCKING " : "")
      << item.subject() << " (" << item.rule() << ")\n      " << item.reason()
      << "\n      do: " << item.action() << "\n";
}

absl::string_view SectionOf(const v1::UpgradeItem& item,
                            const v1::PlanUpgradeResponse& plan) {
  auto in = [&](const auto& list) {
    for (const v1::UpgradeItem& i : list) {
      if (i.step() == item.step() && i.subject() == item.subject() &&
          i.rule() == item.rule()) {
        return true;
      }
    }
    return false;
  };
  if (in(plan.flags())) return "flags";
  if (in(plan.feature_gates())) return "feature gates";
  if (in(plan.apis())) return "APIs";
  if (in(plan.storage())) return "storage";
  if (in(plan.rollback())) return "rollback";
  return "clients";
}

}  // namespace

int RunPlan(const PlanOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.output.empty() && options.output != "text" &&
      options.output != "json") {
    err << "ERROR: -o \"" << options.output
        << "\": expected text (the default) or json\n";
    return kExitUsage;
  }
  v1::PlanUpgradeRequest request;
  if (!ParseEnd("from", options.from, options.from_json, request.mutable_from(),
                err) ||
      !ParseEnd("to", options.to, options.to_json, request.mutable_to(), err)) {
    return kExitUsage;
  }
  if (!options.clients.empty()) {
    for (absl::string_view item : absl::StrSplit(options.clients, ',')) {
      std::pair<std::string, std::string> kv =
          absl::StrSplit(item, absl::MaxSplits('=', 1));
      if (kv.first.empty() || kv.second.empty()) {
        err << "ERROR: --clients item \"" << item
            << "\": expected component=version, e.g. "
               "--clients=kubelet=1.31,kubectl=1.35\n";
        return kExitUsage;
      }
      v1::PlanClient* client = request.add_clients();
      client->set_component(kv.first);
      client->set_version(kv.second);
    }
  }
  std::unique_ptr<engine::Catalog> catalog =
      LoadForOffline(options.catalog_path, err);
  if (catalog == nullptr) return kExitError;
  const std::string source = catalog->source;
  const PolicyHandlers handlers;
  v1::PlanUpgradeResponse plan;
  if (const absl::Status status =
          handlers.PlanUpgrade(*Serve(std::move(catalog)), request, &plan);
      !status.ok()) {
    err << "ERROR: " << CodeName(status.code()) << ": " << status.message()
        << "\n";
    return kExitError;
  }
  if (options.output == "json") {
    std::string text;
    google::protobuf::util::JsonPrintOptions print_options;
    print_options.add_whitespace = true;
    print_options.always_print_primitive_fields = true;
    const auto printed =
        google::protobuf::util::MessageToJsonString(plan, &text, print_options);
    if (!printed.ok()) {
      err << "ERROR: INTERNAL: cannot print the plan as JSON: "
          << printed.ToString() << "\n";
      return kExitError;
    }
    out << text;
    return kExitOk;
  }
  out << "Upgrade plan on kube-apiserver " << plan.to().binary_version() << " ("
      << source << "): emulation " << plan.from().emulation_version() << " -> "
      << plan.to().emulation_version() << ", min-compatibility "
      << plan.from().min_compatibility_version() << " -> "
      << plan.to().min_compatibility_version() << "\n"
      << plan.reason() << "\n";
  for (const v1::UpgradeStep& step : plan.steps()) {
    out << "\nStep " << step.number() << ": " << step.name() << " (emulation "
        << step.versions().emulation_version() << ", min-compatibility "
        << step.versions().min_compatibility_version() << "; rollback to "
        << step.rollback_to() << " after it)\n  " << step.action() << "\n";
    for (const v1::UpgradeItem& item : step.items()) {
      PrintItem(item, SectionOf(item, plan), out);
    }
  }
  out << "\nClients checked: " << plan.clients_checked() << "\n"
      << plan.blockers() << " blocking item(s)\n";
  return kExitOk;
}

int RunCheckCatalog(const std::string& path, std::ostream& out,
                    std::ostream& err) {
  std::unique_ptr<engine::Catalog> catalog = LoadForOffline(path, err);
  if (catalog == nullptr) return kExitError;
  size_t resources = 0;
  for (const engine::APIGroupVersion& gv : catalog->apis) {
    resources += gv.resources.size();
  }
  out << path << ": OK: binaryVersion " << catalog->binary_version.ToString()
      << ", " << catalog->features.size() << " features, "
      << catalog->apis.size() << " group-versions, " << resources
      << " resources, " << catalog->storage_overrides.size()
      << " storage overrides, " << engine::SkewRulesInForce(*catalog).size()
      << " skew rules, " << catalog->crds.size() << " CRDs; digest "
      << catalog->digest << "\n";
  return kExitOk;
}

}  // namespace compatd::api
