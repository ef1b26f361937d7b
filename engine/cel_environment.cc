#include "engine/cel_environment.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

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

bool InNewExpressions(const CelLibrary& library,
                      const Version& min_compatibility) {
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

}  // namespace

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
    const std::optional<Version>& new_expressions_at) {
  std::vector<const CelLibrary*> out;
  for (const CelLibrary& library : env.libraries) {
    if (new_expressions_at.has_value() && library.feature_gate.empty() &&
        !InNewExpressions(library, *new_expressions_at)) {
      continue;
    }
    if (CelLibraryMatches(library, use)) out.push_back(&library);
  }
  return out;
}

std::vector<CelMissingUse> CelUsesNotWritable(
    const CelReading& reading, const CelEnvironment& env,
    const Version& min_compatibility) {
  std::vector<CelMissingUse> out;
  for (const CelUse& use : reading.uses) {
    const std::vector<const CelLibrary*> all = CelLibrariesFor(env, use);
    if (all.empty()) continue;  // matched nowhere: never reported
    if (!CelLibrariesFor(env, use, min_compatibility).empty()) continue;
    const CelLibrary* first = Earliest(all);
    out.push_back(CelMissingUse{use, first->DisplayName(), first->introduced});
  }
  return out;
}

std::vector<CelMissingUse> CelUsesNotReadable(const CelReading& reading,
                                              const CelEnvironment& written_for,
                                              const CelEnvironment& rollback) {
  std::vector<CelMissingUse> out;
  for (const CelUse& use : reading.uses) {
    const std::vector<const CelLibrary*> written =
        CelLibrariesFor(written_for, use);
    if (written.empty()) continue;
    if (!CelLibrariesFor(rollback, use).empty()) continue;
    const CelLibrary* first = Earliest(written);
    out.push_back(CelMissingUse{use, first->DisplayName(), first->introduced});
  }
  return out;
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
