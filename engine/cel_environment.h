#pragma once

// Kubernetes' CEL environments across releases (KEP-4330, "CEL Environment
// Compatibility Versioning"), and which of an expression's uses
// (engine/cel_reader.h) each can compile.
//
// kube-apiserver compiles an expression it is asked to write in the
// NewExpressions environment: the libraries of its base.go (k8s.io/apiserver
// pkg/cel/environment) whose IntroducedVersion is at or below the
// min-compatibility version, less those whose RemovedVersion is at or below it.
// It compiles an expression read back from storage in the StoredExpressions
// environment: every library of the binary. A CelEnvironment is one binary
// line's libraries (catalog/data/cel_libraries.json, generated from the tags;
// catalog/ cel_environments.h loads it).
//
// The rule for shared names (docs/kubernetes-rules.md#cel-libraries): a use is
// matched by the call's form alone (global or member, argument count; a member
// call on an identifier chain such as `sets.contains(a, b)` also by the chain's
// global name), never by argument types, which only a type checker knows. A use
// is reported missing only when some library of the environment it was written
// for matches it and no library of the environment asked about does; a use that
// matches nothing anywhere (a typo, a library of another environment) is never
// reported, and a use that several libraries match (`isGreaterThan`:
// Quantity 1.28 and Semver 1.33) counts as available as soon as one of them is.
// Feature-gated libraries (AuthzSelectors) count as present: a gate the answer
// cannot see never makes a report.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/cel_reader.h"
#include "engine/version.h"

namespace compatd::engine {

struct CelFunctionDecl {
  std::string name;  // "isSemver", "sets.contains", "format.dns1123Label"
  bool member = false;
  std::vector<int>
      args;  // accepted argument counts (receiver not counted); empty: any
};

struct CelMacroDecl {
  std::string name;
  bool receiver = false;
  int args = 0;
};

struct CelLibrary {
  std::string name;  // "kubernetes.SemverLib", "ext.Lists", "cel.stdlib"
  std::optional<int>
      version;         // the library version base.go asks for (ext.Lists: 3)
  Version introduced;  // IntroducedVersion (major.minor)
  std::optional<Version> removed;  // RemovedVersion
  std::string feature_gate;        // "" when none
  std::vector<CelFunctionDecl> functions;
  std::vector<CelMacroDecl> macros;
  std::vector<std::string> syntax;  // "?.", "[?", "?", "{?": the reader's names

  // "kubernetes.SemverLib v1", "ext.Sets".
  std::string DisplayName() const;
};

// One binary line's CEL base environment.
struct CelEnvironment {
  Version line;               // 1.36
  std::string apiserver_tag;  // "v0.36.0"
  std::string apiserver_commit;
  std::string cel_go_version;  // "v0.26.0"
  std::vector<CelLibrary> libraries;
};

// Does `library` declare something `use` can be?
bool CelLibraryMatches(const CelLibrary& library, const CelUse& use);

// The libraries of `env` that match `use`, in base.go's order; with
// `new_expressions_at`, only those in the NewExpressions environment at that
// min-compatibility version.
std::vector<const CelLibrary*> CelLibrariesFor(
    const CelEnvironment& env, const CelUse& use,
    const std::optional<Version>& new_expressions_at = std::nullopt);

// One use the environment asked about cannot compile.
struct CelMissingUse {
  CelUse use;
  // The earliest-introduced library of the environment written for that matches
  // the use, and the release it entered NewExpressions.
  std::string library;
  Version introduced;
};

// The uses of `reading` that `env`'s NewExpressions environment at
// `min_compatibility` lacks (the expression "cannot be written"): uses some
// library of `env` matches, none of those in NewExpressions.
std::vector<CelMissingUse> CelUsesNotWritable(const CelReading& reading,
                                              const CelEnvironment& env,
                                              const Version& min_compatibility);

// The uses of `reading`, written for `written_for` (matched there by some
// library), that `rollback`'s StoredExpressions environment lacks: the
// expression "cannot be read back after a rollback to" rollback's line.
std::vector<CelMissingUse> CelUsesNotReadable(const CelReading& reading,
                                              const CelEnvironment& written_for,
                                              const CelEnvironment& rollback);

// The libraries that enter NewExpressions when the min-compatibility version
// rises from `from` to `to` on `env`'s binary (from < introduced <= to, or
// leaving a removal).
std::vector<const CelLibrary*> CelLibrariesUnlocked(const CelEnvironment& env,
                                                    const Version& from,
                                                    const Version& to);

}  // namespace compatd::engine
