#include "api/offline.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
