#include "api/offline.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "api/convert.h"
#include "api/handlers.h"
#include "api/scan.h"
#include "api/scan_sarif.h"
#include "base/valid_utf8.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/skew.h"
#include "google/protobuf/util/json_util.h"
#include "runtime/catalog_file.h"
#include "runtime/catalog_pipeline.h"
#include "runtime/catalog_source.h"

namespace compatd::api {
namespace {

// `message` as indented proto3 JSON with default values on `out`; false,
// with an INTERNAL line naming `what` on `err`, if protobuf cannot print it.
bool PrintJson(const google::protobuf::Message& message, absl::string_view what,
               std::ostream& out, std::ostream& err) {
  std::string text;
  google::protobuf::util::JsonPrintOptions print_options;
  print_options.add_whitespace = true;
  print_options.always_print_primitive_fields = true;
  const auto printed = google::protobuf::util::MessageToJsonString(
      message, &text, print_options);
  if (!printed.ok()) {
    err << "ERROR: INTERNAL: cannot print the " << what
        << " as JSON: " << printed.ToString() << "\n";
    return false;
  }
  out << text;
  return true;
}

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
        return PrintJson(response, "response", out, err) ? kExitOk : kExitError;
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

// Loads one catalog for an offline command; prints errors like
// --check-catalog.
std::unique_ptr<engine::Catalog> LoadForOffline(absl::string_view source,
                                                absl::string_view yaml,
                                                const std::string& path,
                                                std::ostream& err) {
  catalog::CatalogErrors errors;
  absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
      path.empty() ? catalog::ParseCatalog(yaml, source, &errors)
                   : runtime::LoadCatalogFile(path, &errors);
  if (catalog.ok()) return *std::move(catalog);
  if (errors.errors.empty()) {
    err << catalog.status().message() << "\n";
  } else {
    err << errors.Format(path.empty() ? source : absl::string_view(path))
        << "\n";
    err << errors.Total() << (errors.Total() == 1 ? " error" : " errors")
        << "\n";
  }
  return nullptr;
}

// Every catalog an offline command answers from: the files (or directories)
// `paths` name, else the embedded ones. Empty after printing the errors.
std::vector<std::unique_ptr<engine::Catalog>> LoadAllForOffline(
    const std::vector<std::string>& paths, std::ostream& err) {
  std::vector<std::unique_ptr<engine::Catalog>> catalogs;
  bool ok = true;
  if (paths.empty()) {
    for (const catalog::EmbeddedCatalog& entry : catalog::EmbeddedCatalogs()) {
      auto c = LoadForOffline(entry.name, entry.bytes, "", err);
      if (c == nullptr) ok = false;
      catalogs.push_back(std::move(c));
    }
  }
  for (const std::string& path : paths) {
    absl::StatusOr<std::vector<std::string>> files =
        runtime::ListCatalogFiles(path);
    if (!files.ok()) {
      err << files.status().message() << "\n";
      ok = false;
      continue;
    }
    for (const std::string& file : *files) {
      auto c = LoadForOffline("", "", file, err);
      if (c == nullptr) ok = false;
      catalogs.push_back(std::move(c));
    }
  }
  if (!ok) catalogs.clear();
  return catalogs;
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
// process publishes through. Null after printing why the catalogs do not
// make a set (two of one line, an upgrade target's line missing).
std::shared_ptr<const runtime::ServingSnapshot> Serve(
    std::vector<std::unique_ptr<engine::Catalog>> catalogs, std::ostream& err) {
  if (catalogs.empty()) return nullptr;
  runtime::CatalogPipeline::Options options;
  options.derive = DeriveAnswers;
  options.sources = catalogs.size();
  runtime::CatalogPipeline pipeline(std::move(options));
  for (size_t i = 0; i < catalogs.size(); ++i) {
    absl::StatusOr<std::shared_ptr<const runtime::ServingSnapshot>> published =
        pipeline.PublishLine(i, std::move(catalogs[i]), /*initial=*/true);
    if (!published.ok()) {
      err << published.status().message() << "\n";
      return nullptr;
    }
  }
  return pipeline.Current();
}

std::shared_ptr<const runtime::ServingSnapshot> ServeOffline(
    const std::vector<std::string>& paths, std::ostream& err) {
  return Serve(LoadAllForOffline(paths, err), err);
}

// A manifest file of a scanned directory: *.yaml, *.yml, *.json, and files
// named just ".yaml" (which kubectl and Pluto read; std::filesystem sees no
// extension in a name that starts with its only dot).
bool IsManifestFile(const std::filesystem::path& path) {
  const std::string ext = absl::AsciiStrToLower(path.extension().string());
  const std::string name = absl::AsciiStrToLower(path.filename().string());
  const auto manifest = [](const std::string& e) {
    return e == ".yaml" || e == ".yml" || e == ".json";
  };
  return manifest(ext) || manifest(name);
}

// The texts `compatd scan` reads, in argument order (a directory's files
// sorted by path); read errors become problems with line 0.
struct ScanInputs {
  std::vector<std::string> names;
  std::vector<std::string> texts;
  std::vector<std::pair<std::string, std::string>> errors;  // path, message
};

// The length of the valid UTF-8 sequence at text[i] (1 to 4), or 0 for a
// byte that starts none (overlong forms, surrogates and code points past
// U+10FFFF are not valid); its code point into `code_point`.
size_t Utf8SequenceAt(absl::string_view text, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) {
    return static_cast<unsigned char>(text[i + k]);
  };
  const unsigned char lead = byte(0);
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  }
  size_t length = 0;
  uint32_t cp = 0, min = 0;
  if ((lead & 0xe0) == 0xc0) {
    length = 2, cp = lead & 0x1f, min = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3, cp = lead & 0x0f, min = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  *code_point = cp;
  return length;
}

// `text` with each byte that is not part of valid UTF-8 written \xNN, and,
// when it has one, each backslash written \\ (so that two file names never
// read alike): a file name as every output shows it, valid UTF-8 for the
// proto strings -o json prints.
std::string ShownFileName(absl::string_view text) {
  bool valid = true;
  uint32_t cp = 0;
  for (size_t i = 0, n = 0; i < text.size() && valid; i += n) {
    n = Utf8SequenceAt(text, i, &cp);
    valid = n != 0;
  }
  if (valid) return std::string(text);
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceAt(text, i, &cp);
    if (n == 0) {
      absl::StrAppendFormat(&out, "\\x%02x",
                            static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (cp == '\\') {
      out += "\\\\";
    } else {
      out.append(text.data() + i, n);
    }
    i += n;
  }
  return out;
}

// A YAML double-quoted scalar: every character YAML forbids raw in one (C0
// controls, DEL, the C1 block with NEL, U+2028/U+2029 which read as line
// breaks, the BOM, U+FFFE and U+FFFF) escaped \uXXXX; a byte that is not
// UTF-8 \xNN.
std::string YamlQuote(absl::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t n = Utf8SequenceAt(text, i, &cp);
    if (n == 0) {
      absl::StrAppendFormat(&out, "\\x%02x",
                            static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (cp == '"' || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 ||
               cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff) {
      absl::StrAppendFormat(&out, "\\u%04x", cp);
    } else {
      out.append(text.data() + i, n);
    }
    i += n;
  }
  out += "\"";
  return out;
}

// Text for the terminal: base::PrintableText (C0 controls as \n \r \t or
// \xNN, DEL, the C1 block with CSI as \u00NN, bytes that are not UTF-8 as
// \xNN), so that an object's name can neither drive the terminal nor start
// a row of its own.
std::string TableText(absl::string_view text) {
  return base::PrintableText(text);
}

void ReadScanFile(const std::string& path, ScanInputs& inputs) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::error_code ec(errno, std::generic_category());
    inputs.errors.emplace_back(ShownFileName(path),
                               absl::StrCat("cannot read: ", ec.message()));
    return;
  }
  std::string text((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  if (file.bad()) {
    inputs.errors.emplace_back(ShownFileName(path), "cannot read: I/O error");
    return;
  }
  inputs.names.push_back(ShownFileName(path));
  inputs.texts.push_back(std::move(text));
}

// `on_file` is told the number of files read so far after each.
ScanInputs ReadScanInputs(const std::vector<std::string>& paths,
                          std::istream& in,
                          const std::function<void(size_t)>& on_file) {
  ScanInputs inputs;
  for (const std::string& path : paths) {
    if (path == "-") {
      std::string text((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
      inputs.names.push_back("-");
      inputs.texts.push_back(std::move(text));
      continue;
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      ReadScanFile(path, inputs);
      on_file(inputs.names.size());
      continue;
    }
    std::vector<std::string> files;
    std::filesystem::recursive_directory_iterator it(
        path, std::filesystem::directory_options::skip_permission_denied, ec);
    for (; !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_regular_file(ec) && IsManifestFile(it->path())) {
        files.push_back(it->path().string());
      }
    }
    if (ec) {
      inputs.errors.emplace_back(ShownFileName(path),
                                 absl::StrCat("cannot list: ", ec.message()));
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) {
      ReadScanFile(file, inputs);
      on_file(inputs.names.size());
    }
  }
  return inputs;
}

// -o yaml: the response as YAML, keys as in -o json.
void PrintScanYaml(const v1::ScanObjectsResponse& r, std::ostream& out) {
  out << "target: " << YamlQuote(r.target()) << "\n"
      << "objects: " << r.objects() << "\n"
      << "deprecated: " << r.deprecated() << "\n"
      << "blocking: " << r.blocking() << "\n"
      << "unchecked: " << r.unchecked() << "\n"
      << "skippedDocuments: " << r.skipped_documents() << "\n"
      << "rbac: " << r.rbac() << "\n"
      << "reason: " << YamlQuote(r.reason()) << "\n"
      << "catalogDigest: " << YamlQuote(r.catalog_digest()) << "\n";
  out << "findings:" << (r.findings().empty() ? " []\n" : "\n");
  for (const v1::ScanFinding& f : r.findings()) {
    out << "  - source: " << YamlQuote(SourceName(r, f)) << "\n"
        << "    line: " << f.line() << "\n"
        << "    apiVersion: " << YamlQuote(f.api_version()) << "\n"
        << "    kind: " << YamlQuote(f.kind()) << "\n"
        << "    namespace: " << YamlQuote(f.namespace_()) << "\n"
        << "    name: " << YamlQuote(f.name()) << "\n"
        << "    status: " << v1::ScanStatus_Name(f.status()) << "\n"
        << "    introduced: " << YamlQuote(f.introduced()) << "\n"
        << "    deprecated: " << YamlQuote(f.deprecated()) << "\n"
        << "    removed: " << YamlQuote(f.removed()) << "\n"
        << "    replacement: " << YamlQuote(f.replacement()) << "\n"
        << "    rule: " << YamlQuote(f.rule()) << "\n"
        << "    message: " << YamlQuote(f.message()) << "\n";
  }
  out << "problems:" << (r.problems().empty() ? " []\n" : "\n");
  for (const v1::ScanProblem& p : r.problems()) {
    out << "  - source: " << YamlQuote(SourceName(r, p)) << "\n"
        << "    line: " << p.line() << "\n"
        << "    message: " << YamlQuote(p.message()) << "\n";
  }
  out << "warnings:" << (r.warnings().empty() ? " []\n" : "\n");
  for (const v1::ScanProblem& w : r.warnings()) {
    out << "  - source: " << YamlQuote(SourceName(r, w)) << "\n"
        << "    line: " << w.line() << "\n"
        << "    message: " << YamlQuote(w.message()) << "\n";
  }
}

// The table for people: one row per finding, then the summary.
void PrintScanTable(const v1::ScanObjectsResponse& r, std::ostream& out) {
  const std::vector<std::string> header = {
      "LOCATION",   "OBJECT",  "API VERSION", "STATUS",
      "DEPRECATED", "REMOVED", "REPLACEMENT"};
  std::vector<std::vector<std::string>> rows;
  for (const v1::ScanFinding& f : r.findings()) {
    std::string object = f.kind();
    if (!f.name().empty() || !f.namespace_().empty()) {
      absl::StrAppend(&object, " ",
                      f.namespace_().empty() ? "" : f.namespace_() + "/",
                      f.name().empty() ? "-" : f.name());
    }
    std::vector<std::string> row = {
        absl::StrCat(SourceName(r, f), ":", f.line()),
        object,
        f.api_version(),
        std::string(ScanStatusLabel(f.status())),
        f.deprecated().empty() ? "-" : f.deprecated(),
        f.removed().empty() ? "-" : f.removed(),
        f.replacement().empty() ? "-" : f.replacement()};
    for (std::string& cell : row) cell = TableText(cell);
    rows.push_back(std::move(row));
  }
  if (!rows.empty()) {
    std::vector<size_t> width(header.size());
    for (size_t c = 0; c < header.size(); ++c) {
      width[c] = header[c].size();
      for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
    }
    auto print = [&](const std::vector<std::string>& row) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        absl::StrAppend(&line, row[c]);
        if (c + 1 < row.size()) {
          line.append(width[c] - row[c].size() + 2, ' ');
        }
      }
      out << line << "\n";
    };
    print(header);
    for (const auto& row : rows) print(row);
    out << "\n";
    for (const v1::ScanFinding& f : r.findings()) {
      out << TableText(SourceName(r, f)) << ":" << f.line() << ": "
          << TableText(f.message()) << "\n";
    }
    out << "\n";
  }
  out << TableText(r.reason()) << "\n";
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
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      ServeOffline(options.catalog_paths, err);
  if (snapshot == nullptr) return kExitError;
  const PolicyHandlers handlers;
  return EvalRequest(handlers, *snapshot, options.rpc, options.request_json,
                     out, err);
}

int RunLint(const std::vector<std::string>& paths, std::ostream& out,
            std::ostream& err) {
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      ServeOffline(paths, err);
  if (snapshot == nullptr) return kExitError;
  const PolicyHandlers handlers;
  v1::LintCatalogResponse response;
  if (const absl::Status status =
          handlers.LintCatalog(*snapshot, v1::LintCatalogRequest(), &response);
      !status.ok()) {
    err << "ERROR: " << CodeName(status.code()) << ": " << status.message()
        << "\n";
    return kExitError;
  }
  for (const v1::LintFinding& f : response.findings()) {
    out << f.source();
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
  std::vector<absl::string_view> sources;
  for (const runtime::ServingLine& line : snapshot->lines) {
    sources.push_back(line.catalog->source);
  }
  out << absl::StrJoin(sources, ", ") << ": " << response.errors()
      << " error(s), " << response.warnings() << " warning(s), "
      << response.exceptions() << " documented exception(s)\n";
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
    out->set_binary_version(bare);  // a binary at its defaults
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

// --clients into `request`; false after printing a usage error.
bool ParseClients(const std::string& clients, v1::PlanUpgradeRequest* request,
                  std::ostream& err) {
  if (clients.empty()) return true;
  for (absl::string_view item : absl::StrSplit(clients, ',')) {
    std::pair<std::string, std::string> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.first.empty() || kv.second.empty()) {
      err << "ERROR: --clients item \"" << item
          << "\": expected component=version, e.g. "
             "--clients=kubelet=1.31,kubectl=1.35\n";
      return false;
    }
    v1::PlanClient* client = request->add_clients();
    client->set_component(kv.first);
    client->set_version(kv.second);
  }
  return true;
}

int PlanExitCode(const v1::PlanUpgradeResponse& plan) {
  switch (OutcomeOf(plan)) {
    case PlanOutcome::kBlockers:
      return kPlanExitBlockers;
    case PlanOutcome::kActions:
      return kPlanExitActions;
    case PlanOutcome::kNothingToDo:
      break;
  }
  return kPlanExitNothingToDo;
}

}  // namespace

namespace {

// -o migrations: every StorageVersionMigration of the plan as YAML documents
// (`compatd plan ... -o migrations | kubectl apply -f -`), each after a comment
// naming its step and what the cluster must enable first. Nothing on `out`
// when the plan changes no storage version (`err` says so).
void PrintMigrations(const v1::PlanUpgradeResponse& plan, std::ostream& out,
                     std::ostream& err) {
  if (plan.storage_migrations_size() == 0) {
    err << "no storage version changes on this path: no "
           "StorageVersionMigration to apply\n";
    return;
  }
  if (plan.catalog_exactness() == "PROVISIONAL") {
    out << "# PROVISIONAL data for kube-apiserver " << plan.catalog_release()
        << ": " << plan.catalog_exactness_reason() << "\n";
  }
  for (const v1::StorageMigration& m : plan.storage_migrations()) {
    out << "---\n# step " << m.step() << " (" << m.release() << "): "
        << (m.group().empty() ? m.resource()
                              : absl::StrCat(m.resource(), ".", m.group()))
        << " stored as " << m.to_version() << ", was " << m.from_version()
        << "; apply once every API server runs the step\n";
    if (!m.needs().empty()) out << "# needs " << m.needs() << "\n";
    out << m.manifest();
  }
}

}  // namespace

int RunPlan(const PlanOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.output.empty() && options.output != "text" &&
      options.output != "json" && options.output != "migrations") {
    err << "ERROR: -o \"" << options.output
        << "\": expected text (the default), json or migrations\n";
    return kPlanExitError;
  }
  if (options.all && !options.output.empty() && options.output != "text") {
    err << "ERROR: --all is for the text output; -o json always has every "
           "item\n";
    return kPlanExitError;
  }
  v1::PlanUpgradeRequest request;
  if (!ParseEnd("from", options.from, options.from_json, request.mutable_from(),
                err) ||
      !ParseEnd("to", options.to, options.to_json, request.mutable_to(), err) ||
      !ParseClients(options.clients, &request, err)) {
    return kPlanExitError;
  }
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      ServeOffline(options.catalog_paths, err);
  if (snapshot == nullptr) return kPlanExitError;
  const PolicyHandlers handlers;
  v1::PlanUpgradeResponse plan;
  if (const absl::Status status =
          handlers.PlanUpgrade(*snapshot, request, &plan);
      !status.ok()) {
    err << "ERROR: " << CodeName(status.code()) << ": " << status.message()
        << "\n";
    return kPlanExitError;
  }
  if (options.output == "json") {
    if (!PrintJson(plan, "plan", out, err)) return kPlanExitError;
  } else if (options.output == "migrations") {
    PrintMigrations(plan, out, err);
  } else if (options.all) {
    PrintPlanItems(plan, out);
  } else {
    PrintPlanSummary(plan, options.style, out);
  }
  return PlanExitCode(plan);
}

namespace {

// `compatd scan`'s progress on a terminal: one line on `err`, redrawn at most
// ten times a second (and once when the reading of files gives way to their
// parsing) ("\r" and erase to the end of the line), cleared at the
// end. Off: nothing at all.
class ProgressLine {
 public:
  ProgressLine(bool on, std::ostream& err) : on_(on), err_(err) {}
  ~ProgressLine() { Clear(); }

  void Show(size_t files, size_t total_files, size_t objects) {
    if (!on_) return;
    const int64_t now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now().time_since_epoch())
            .count();
    // A new phase (reading, then parsing of `total_files`) shows at once.
    if (shown_ && total_files == last_total_ && now_ms - last_ms_ < 100) {
      return;
    }
    shown_ = true;
    last_ms_ = now_ms;
    last_total_ = total_files;
    err_ << "\r\033[Kcompatd scan: " << files;
    if (total_files > 0) err_ << "/" << total_files;
    err_ << " file(s), " << objects << " object(s)" << std::flush;
  }

  void Clear() {
    if (!shown_) return;
    err_ << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  const bool on_;
  std::ostream& err_;
  bool shown_ = false;
  int64_t last_ms_ = 0;  // steady clock
  size_t last_total_ = 0;
};

// Reads and scans every path into `response`; false after printing an error
// on `err`.
bool ScanPaths(const ScanOptions& options,
               const runtime::ServingSnapshot& snapshot, std::istream& in,
               std::ostream& err, v1::ScanObjectsResponse* response) {
  ProgressLine progress(options.progress, err);
  const ScanInputs inputs = ReadScanInputs(
      options.paths, in, [&](size_t files) { progress.Show(files, 0, 0); });
  std::vector<ScanText> texts;
  texts.reserve(inputs.texts.size());
  for (size_t i = 0; i < inputs.texts.size(); ++i) {
    texts.push_back(ScanText{inputs.names[i], inputs.texts[i]});
  }
  const ScanProgress on_read = [&](size_t read, size_t objects) {
    progress.Show(read, texts.size(), objects);
  };
  absl::StatusOr<const runtime::ServingLine*> line =
      ScanLine(snapshot, "", options.target);
  if (!line.ok()) {
    err << "ERROR: " << CodeName(line.status().code()) << ": "
        << line.status().message() << "\n";
    return false;
  }
  const absl::Status status = ScanManifests(
      **line, engine::VersionQuery{}, options.target, texts, response,
      ScanLimits(), options.cel_min_compatibility,
      options.progress ? on_read : ScanProgress(), options.strict);
  progress.Clear();
  if (!status.ok()) {
    err << "ERROR: " << CodeName(status.code()) << ": " << status.message()
        << "\n";
    return false;
  }
  for (const auto& [path, message] : inputs.errors) {
    v1::ScanProblem* problem = response->add_problems();
    problem->set_source(path);
    problem->set_source_index(static_cast<uint32_t>(response->sources_size()));
    response->add_sources(path);
    problem->set_message(message);
  }
  return true;
}

// Problems, the partial mark and warnings, on `err`, beside the table.
void PrintScanNotes(const v1::ScanObjectsResponse& response,
                    absl::string_view output, std::ostream& err) {
  if (output == "table") {
    for (const v1::ScanProblem& p : response.problems()) {
      err << TableText(SourceName(response, p));
      if (p.line() > 0) err << ":" << p.line();
      err << ": " << TableText(p.message()) << "\n";
    }
    if (response.partial()) {
      err << "partial answer: " << response.partial_reason() << " ("
          << response.omitted_findings() << " finding(s) and "
          << response.omitted_problems() << " problem(s) not listed)\n";
    }
  }
  if (output != "json" && output != "yaml") {
    for (const v1::ScanProblem& w : response.warnings()) {
      err << TableText(SourceName(response, w));
      if (w.line() > 0) err << ":" << w.line();
      err << ": warning: " << TableText(w.message()) << "\n";
    }
  }
}

int ScanExitCode(const v1::ScanObjectsResponse& response,
                 const ScanOptions& options) {
  int code = kScanExitClean;
  if (response.problems_size() > 0 || response.omitted_problems() > 0) {
    code = kScanExitError;
  }
  if (response.deprecated() > 0 && !options.ignore_deprecations) {
    code = kScanExitDeprecated;
  }
  if (response.blocking() > 0 && !options.ignore_removals) {
    code = kScanExitRemoved;
  }
  if (response.rbac() > 0 && options.fail_on_rbac) code = kScanExitRemoved;
  return code;
}

}  // namespace

int RunScan(const ScanOptions& options, std::istream& in, std::ostream& out,
            std::ostream& err) {
  if (options.output != "table" && options.output != "json" &&
      options.output != "yaml" && options.output != "sarif") {
    err << "compatd scan: -o \"" << options.output
        << "\": accepted: table, json, yaml, sarif\n";
    return kScanExitError;
  }
  if (options.paths.empty()) {
    err << "compatd scan: nothing to scan: give files, directories or - "
           "(stdin), e.g. compatd scan chart/ or helm template . | compatd "
           "scan -\n";
    return kScanExitError;
  }
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      ServeOffline(options.catalog_paths, err);
  if (snapshot == nullptr) return kScanExitError;
  v1::ScanObjectsResponse response;
  if (!ScanPaths(options, *snapshot, in, err, &response)) {
    return kScanExitError;
  }
  if (options.output == "json") {
    if (!PrintJson(response, "response", out, err)) return kScanExitError;
  } else if (options.output == "yaml") {
    PrintScanYaml(response, out);
  } else if (options.output == "sarif") {
    PrintScanSarif(response, out);
  } else {
    PrintScanTable(response, out);
  }
  PrintScanNotes(response, options.output, err);
  return ScanExitCode(response, options);
}

int RunCheckCatalog(const std::vector<std::string>& paths, std::ostream& out,
                    std::ostream& err) {
  std::vector<std::unique_ptr<engine::Catalog>> catalogs =
      LoadAllForOffline(paths, err);
  if (catalogs.empty()) return kExitError;
  for (const auto& catalog : catalogs) {
    size_t resources = 0;
    for (const engine::APIGroupVersion& gv : catalog->apis) {
      resources += gv.resources.size();
    }
    out << catalog->source << ": OK: binaryVersion "
        << catalog->binary_version.ToString() << ", "
        << catalog->features.size() << " features, " << catalog->apis.size()
        << " group-versions, " << resources << " resources, "
        << catalog->storage_overrides.size() << " storage overrides, "
        << engine::SkewRulesInForce(*catalog).size() << " skew rules, "
        << catalog->crds.size() << " CRDs, " << catalog->api_history.size()
        << " API history entries; digest " << catalog->digest << "\n";
  }
  // The files must make one set (one per release line), whose upgrade
  // targets name lines it has and can be planned to: as the server would.
  const size_t files = catalogs.size();
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      Serve(std::move(catalogs), err);
  if (snapshot == nullptr) return kExitError;
  if (files > 1) {
    out << "OK: " << snapshot->lines.size() << " release lines ("
        << snapshot->catalogs->line_names() << "); default "
        << snapshot->default_catalog().binary_version.MajorMinorString()
        << "\n";
  }
  return kExitOk;
}

}  // namespace compatd::api
