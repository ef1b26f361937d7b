#include "engine/cel_environment.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

namespace compatd::engine {
namespace {

bool ArgsMatch(const std::vector<int>& accepted, int count) {
  return accepted.empty() ||
         std::find(accepted.begin(), accepted.end(), count) != accepted.end();
}

// A name as declared: CEL resolves `.a.b` from the root namespace, which is
// where every library declares its functions.
absl::string_view Unrooted(absl::string_view name) {
  if (!name.empty() && name.front() == '.') name.remove_prefix(1);
  return name;
}

bool MatchesFunction(const CelLibrary& library, absl::string_view name,
                     bool member, int args) {
  for (const CelFunctionDecl& f : library.functions) {
    if (f.member == member && f.name == name && ArgsMatch(f.args, args))
      return true;
  }
  return false;
}

// environment.go's filterAndBuildOpts: a gated library by its gate alone, any
// other by its IntroducedVersion and RemovedVersion.
bool InNewExpressions(const CelLibrary& library,
                      const Version& min_compatibility) {
  if (!library.feature_gate.empty()) return library.gate_default;
  if (library.introduced.CompareMajorMinor(min_compatibility) > 0) return false;
  return !library.removed.has_value() ||
         library.removed->CompareMajorMinor(min_compatibility) > 0;
}

const CelLibrary* Earliest(const std::vector<const CelLibrary*>& libraries) {
  const CelLibrary* best = nullptr;
  for (const CelLibrary* l : libraries) {
    if (best == nullptr ||
        l->introduced.CompareMajorMinor(best->introduced) < 0)
      best = l;
  }
  return best;
}

bool InScope(const CelLibrary& library, absl::string_view scope) {
  return library.scope.empty() || library.scope == scope;
}

// What compatd knows of a use no environment declares in its form and scope.
std::string UnknownDetail(const CelEnvironment& newest, const CelUse& use,
                          absl::string_view scope) {
  for (const CelLibrary& library : newest.libraries) {
    if (!InScope(library, scope) && CelLibraryMatches(library, use)) {
      return absl::StrCat(
          "only a MutatingAdmissionPolicy's spec.mutations[] "
          "expressions declare it (",
          library.DisplayName(), ")");
    }
  }
  const bool member = use.kind == CelUseKind::kMemberFunction;
  for (const CelLibrary& library : newest.libraries) {
    if (!InScope(library, scope)) continue;
    for (const CelFunctionDecl& f : library.functions) {
      if (f.name != use.name && f.name != use.qualified_name) continue;
      if (member && !f.member) {
        return absl::StrCat(f.name, " is a global function of ",
                            library.DisplayName(), " (", f.name,
                            "(x)), never a member");
      }
      if (!member && f.member) {
        return absl::StrCat(f.name, " is a member function of ",
                            library.DisplayName(), " (x.", f.name,
                            "()), never a global one");
      }
      if (f.member == member) {
        return absl::StrCat(library.DisplayName(), " declares ", f.name,
                            " with other argument counts");
      }
    }
  }
  return "";
}

// kUndeclared: the first line after `env` that declares `use`, and the release
// it arrives in: that line's binary, or, when the first is the oldest line (its
// history standing in for older releases), the library's IntroducedVersion.
std::optional<CelMissingUse> FirstLineDeclaring(
    absl::Span<const CelEnvironment> lines, const CelEnvironment& env,
    const CelUse& use, absl::string_view scope) {
  for (const CelEnvironment& line : lines) {
    if (line.line.CompareMajorMinor(env.line) <= 0) continue;
    const std::vector<const CelLibrary*> found =
        CelLibrariesFor(line, use, std::nullopt, scope);
    if (found.empty()) continue;
    const CelLibrary* first = Earliest(found);
    const bool oldest = &line == &lines.front();
    return CelMissingUse{use, CelMissingKind::kUndeclared, first->DisplayName(),
                         oldest ? first->introduced : line.line, ""};
  }
  return std::nullopt;
}

// A macro with its argument count (`all` with 2 or 3); a use no environment
// declares by the name as written (`cel.bind`, not `bind`); else the name.
std::string UseName(const CelMissingUse& m) {
  if (m.use.kind == CelUseKind::kMacro) {
    return absl::StrCat(m.use.name, " (", m.use.arg_count, " arguments)");
  }
  if (m.kind == CelMissingKind::kUnknown && !m.use.qualified_name.empty()) {
    return m.use.qualified_name;
  }
  return m.use.name;
}

}  // namespace

std::string CelEnvironment::Source() const {
  const std::string tag =
      apiserver_prerelease
          ? absl::StrCat(apiserver_tag, " (pre-release tag, not a release)")
          : apiserver_tag;
  if (history_of.has_value()) {
    return absl::StrCat("Kubernetes ", line.MajorMinorString(),
                        " from the history in base.go of kubernetes/apiserver ",
                        tag, ", cel-go ", cel_go_version);
  }
  return absl::StrCat("kubernetes/apiserver ", tag, ", cel-go ",
                      cel_go_version);
}

CelEnvironment CelEnvironmentFromHistory(const CelEnvironment& oldest,
                                         const Version& release) {
  CelEnvironment env = oldest;
  env.line = Version::MajorMinor(release.major(), release.minor());
  env.history_of = oldest.line;
  env.libraries.clear();
  for (const CelLibrary& library : oldest.libraries) {
    if (library.introduced.CompareMajorMinor(release) > 0) continue;
    CelLibrary copy = library;
    copy.gate_default = false;
    env.libraries.push_back(std::move(copy));
  }
  return env;
}

std::string CelLibrary::DisplayName() const {
  return version.has_value() ? absl::StrCat(name, " v", *version) : name;
}

bool CelLibraryMatches(const CelLibrary& library, const CelUse& use) {
  switch (use.kind) {
    case CelUseKind::kFunction:
      return MatchesFunction(library, Unrooted(use.name), /*member=*/false,
                             use.arg_count);
    case CelUseKind::kMemberFunction:
    case CelUseKind::kMacro:
      if (use.kind == CelUseKind::kMacro) {
        // The reader marks only global has(x.f) and receiver shapes as macros.
        const bool receiver = use.name != "has";
        for (const CelMacroDecl& m : library.macros) {
          if (m.name == use.name && m.args == use.arg_count &&
              m.receiver == receiver) {
            return true;
          }
        }
        if (!receiver) {
          return MatchesFunction(library, use.name, /*member=*/false,
                                 use.arg_count);
        }
      }
      if (!use.qualified_name.empty() &&
          MatchesFunction(library, Unrooted(use.qualified_name),
                          /*member=*/false, use.arg_count)) {
        return true;
      }
      return MatchesFunction(library, use.name, /*member=*/true, use.arg_count);
    case CelUseKind::kOptionalSelect:
    case CelUseKind::kOptionalIndex:
    case CelUseKind::kOptionalElement:
    case CelUseKind::kOptionalEntry:
      return std::find(library.syntax.begin(), library.syntax.end(),
                       use.name) != library.syntax.end();
  }
  return false;
}

std::vector<const CelLibrary*> CelLibrariesFor(
    const CelEnvironment& env, const CelUse& use,
    const std::optional<Version>& new_expressions_at, absl::string_view scope) {
  std::vector<const CelLibrary*> out;
  for (const CelLibrary& library : env.libraries) {
    if (!InScope(library, scope)) continue;
    if (new_expressions_at.has_value() &&
        !InNewExpressions(library, *new_expressions_at)) {
      continue;
    }
    if (CelLibraryMatches(library, use)) out.push_back(&library);
  }
  return out;
}

std::vector<CelMissingUse> CelUsesNotWritable(
    const CelReading& reading, const CelEnvironment& env,
    const Version& min_compatibility, absl::Span<const CelEnvironment> lines,
    absl::string_view scope) {
  std::vector<CelMissingUse> out;
  for (const CelUse& use : reading.uses) {
    const std::vector<const CelLibrary*> stored =
        CelLibrariesFor(env, use, std::nullopt, scope);
    if (!stored.empty()) {
      if (!CelLibrariesFor(env, use, min_compatibility, scope).empty())
        continue;
      const CelLibrary* first = Earliest(stored);
      bool gated = true;
      for (const CelLibrary* l : stored) {
        gated = gated && !l->feature_gate.empty();
      }
      out.push_back(CelMissingUse{use,
                                  gated ? CelMissingKind::kGateOff
                                        : CelMissingKind::kNotInNewExpressions,
                                  first->DisplayName(), first->introduced,
                                  gated ? first->feature_gate : std::string()});
      continue;
    }
    if (lines.empty()) continue;  // nothing to name it by
    std::optional<CelMissingUse> later =
        FirstLineDeclaring(lines, env, use, scope);
    if (later.has_value()) {
      out.push_back(*std::move(later));
      continue;
    }
    out.push_back(CelMissingUse{use, CelMissingKind::kUnknown, "", Version(),
                                UnknownDetail(lines.back(), use, scope)});
  }
  return out;
}

std::vector<CelMissingUse> CelUsesNotReadable(const CelReading& reading,
                                              const CelEnvironment& written_for,
                                              const CelEnvironment& rollback,
                                              absl::string_view scope) {
  std::vector<CelMissingUse> out;
  for (const CelUse& use : reading.uses) {
    const std::vector<const CelLibrary*> written =
        CelLibrariesFor(written_for, use, std::nullopt, scope);
    if (written.empty()) continue;
    if (!CelLibrariesFor(rollback, use, std::nullopt, scope).empty()) continue;
    const CelLibrary* first = Earliest(written);
    out.push_back(CelMissingUse{use, CelMissingKind::kUndeclared,
                                first->DisplayName(), first->introduced, ""});
  }
  return out;
}

std::string CelMissingSentence(const CelMissingUse& m,
                               const CelEnvironment& env,
                               const Version& min_compatibility,
                               absl::string_view where) {
  const std::string binary = env.line.MajorMinorString();
  const std::string name =
      where.empty() ? UseName(m) : absl::StrCat(UseName(m), " ", where);
  switch (m.kind) {
    case CelMissingKind::kNotInNewExpressions:
      return absl::StrCat("cannot be written at min-compatibility ",
                          min_compatibility.MajorMinorString(), ": ", name,
                          " is ", m.library, ", in NewExpressions from ",
                          m.introduced.MajorMinorString());
    case CelMissingKind::kGateOff:
      return absl::StrCat("undeclared in kube-apiserver ", binary,
                          "'s NewExpressions: ", name, " is ", m.library,
                          ", which needs --feature-gates=", m.detail,
                          "=true (off by default in ", binary, ")");
    case CelMissingKind::kUndeclared:
      return absl::StrCat("undeclared in kube-apiserver ", binary, ": ", name,
                          " is ", m.library, ", which arrives in ",
                          m.introduced.MajorMinorString());
    case CelMissingKind::kUnknown:
      return absl::StrCat(
          "undeclared reference to ", name, " in kube-apiserver ", binary, ": ",
          m.detail.empty()
              ? "no kube-apiserver CEL environment declares it (base.go "
                "enables no library with it)"
              : m.detail);
  }
  return "";
}

std::vector<const CelLibrary*> CelLibrariesUnlocked(const CelEnvironment& env,
                                                    const Version& from,
                                                    const Version& to) {
  std::vector<const CelLibrary*> out;
  for (const CelLibrary& library : env.libraries) {
    if (!InNewExpressions(library, from) && InNewExpressions(library, to)) {
      out.push_back(&library);
    }
  }
  return out;
}

}  // namespace compatd::engine
