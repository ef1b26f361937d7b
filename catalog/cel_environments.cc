#include "catalog/cel_environments.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "catalog/catalog_loader.h"
#include "catalog/yaml_to_proto.h"
#include "compatd/v1/catalog.pb.h"

namespace compatd::catalog {

// cmake/embed.cmake's output (catalog/CMakeLists.txt).
extern const std::string_view kEmbeddedCelLibrariesJson;

namespace {

absl::StatusOr<engine::Version> MajorMinor(absl::string_view text,
                                           absl::string_view what) {
  absl::StatusOr<engine::Version> v = engine::Version::ParseGeneric(text);
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " \"", text, "\" is not a major.minor version"));
  }
  return engine::Version::MajorMinor(v->major(), v->minor());
}

}  // namespace

absl::StatusOr<std::vector<engine::CelEnvironment>> ParseCelEnvironments(
    absl::string_view json, absl::string_view source) {
  v1::CelLibrariesFile file;
  SourceLines lines;
  CatalogErrors errors;
  if (!YamlToProto(json, file, lines, errors.errors) ||
      !errors.errors.empty()) {
    if (errors.errors.empty())
      errors.errors.push_back({0, "not a JSON object"});
    return absl::InvalidArgumentError(errors.Format(source));
  }
  std::vector<engine::CelEnvironment> out;
  for (const v1::CelLine& line : file.lines()) {
    engine::CelEnvironment env;
    auto fail = [&](const google::protobuf::Message& m, const absl::Status& s) {
      errors.errors.push_back({lines.MessageLine(m), std::string(s.message())});
    };
    absl::StatusOr<engine::Version> v = MajorMinor(line.line(), "line");
    if (!v.ok()) {
      fail(line, v.status());
      continue;
    }
    env.line = *v;
    env.apiserver_tag = line.apiserver().tag();
    env.apiserver_commit = line.apiserver().commit();
    env.apiserver_prerelease = line.apiserver().prerelease();
    env.cel_go_version = line.cel_go().version();
    absl::StatusOr<engine::Version> epoch =
        MajorMinor(line.cel_epoch(), "celEpoch");
    if (!epoch.ok()) {
      fail(line, epoch.status());
      continue;
    }
    env.cel_epoch = *epoch;
    for (const v1::CelLibraryEntry& e : line.libraries()) {
      engine::CelLibrary lib;
      lib.name = e.name();
      if (e.has_version()) lib.version = e.version();
      absl::StatusOr<engine::Version> intro =
          MajorMinor(e.introduced(), "introduced");
      if (!intro.ok()) {
        fail(e, intro.status());
        continue;
      }
      lib.introduced = *intro;
      if (!e.removed().empty()) {
        absl::StatusOr<engine::Version> removed =
            MajorMinor(e.removed(), "removed");
        if (!removed.ok()) {
          fail(e, removed.status());
          continue;
        }
        lib.removed = *removed;
      }
      lib.feature_gate = e.gate();
      lib.gate_default = e.gate_default();
      lib.scope = e.scope();
      if (!lib.scope.empty() && lib.scope != engine::kCelScopeMutations) {
        fail(e, absl::InvalidArgumentError(
                    absl::StrCat("scope \"", lib.scope, "\": expected \"",
                                 engine::kCelScopeMutations, "\" or none")));
        continue;
      }
      for (const v1::CelFunctionEntry& f : e.functions()) {
        lib.functions.push_back(engine::CelFunctionDecl{
            f.name(), f.member(),
            std::vector<int>(f.args().begin(), f.args().end())});
      }
      for (const v1::CelMacroEntry& m : e.macros()) {
        lib.macros.push_back(
            engine::CelMacroDecl{m.name(), m.receiver(), m.args()});
      }
      lib.syntax.assign(e.syntax().begin(), e.syntax().end());
      env.libraries.push_back(std::move(lib));
    }
    out.push_back(std::move(env));
  }
  if (!errors.errors.empty())
    return absl::InvalidArgumentError(errors.Format(source));
  return out;
}

const std::vector<engine::CelEnvironment>& EmbeddedCelEnvironments() {
  static const std::vector<engine::CelEnvironment>* const kEnvironments = [] {
    absl::StatusOr<std::vector<engine::CelEnvironment>> parsed =
        ParseCelEnvironments(
            absl::string_view(kEmbeddedCelLibrariesJson.data(),
                              kEmbeddedCelLibrariesJson.size()),
            "embedded:cel_libraries.json");
    // The file is generated and checked (ctest catalog_cel_libraries_check); a
    // build whose embedded data does not parse is broken, and every test of
    // this file fails loudly.
    if (!parsed.ok()) return new std::vector<engine::CelEnvironment>();
    return new std::vector<engine::CelEnvironment>(*std::move(parsed));
  }();
  return *kEnvironments;
}

namespace {

// The releases from the oldest line's CEL epoch up to the line before it, read
// from that line's base.go history; built once.
const std::vector<engine::CelEnvironment>& HistoryEnvironments() {
  static const std::vector<engine::CelEnvironment>* const kHistory = [] {
    auto* out = new std::vector<engine::CelEnvironment>();
    const std::vector<engine::CelEnvironment>& lines =
        EmbeddedCelEnvironments();
    if (lines.empty()) return out;
    const engine::CelEnvironment& oldest = lines.front();
    for (engine::Version r = oldest.cel_epoch;
         r.CompareMajorMinor(oldest.line) < 0; r = r.AddMinor(1)) {
      out->push_back(engine::CelEnvironmentFromHistory(oldest, r));
    }
    return out;
  }();
  return *kHistory;
}

}  // namespace

const engine::CelEnvironment* CelEnvironmentFor(const engine::Version& binary) {
  for (const engine::CelEnvironment& env : EmbeddedCelEnvironments()) {
    if (env.line.CompareMajorMinor(binary) == 0) return &env;
  }
  for (const engine::CelEnvironment& env : HistoryEnvironments()) {
    if (env.line.CompareMajorMinor(binary) == 0) return &env;
  }
  return nullptr;
}

std::string CelEnvironmentsHeld() {
  const std::vector<engine::CelEnvironment>& lines = EmbeddedCelEnvironments();
  if (lines.empty()) return "no CEL environment";
  const engine::CelEnvironment& oldest = lines.front();
  return absl::StrCat("CEL environments for kube-apiserver ",
                      oldest.cel_epoch.MajorMinorString(), " to ",
                      lines.back().line.MajorMinorString(), " (before ",
                      oldest.line.MajorMinorString(),
                      ": from the history in base.go of ",
                      "kubernetes/apiserver ", oldest.apiserver_tag, ")");
}

}  // namespace compatd::catalog
