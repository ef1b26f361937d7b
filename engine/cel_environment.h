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
// that several libraries match (`isGreaterThan`: Quantity 1.28 and Semver 1.33)
// counts as available as soon as one of them is.
//
// What kube-apiserver refuses to write ("undeclared reference", "found no
// matching overload"), by CelMissingKind: a use the binary has but not in
// NewExpressions at the min-compatibility version; a feature-gated library
// (AuthzSelectors) whose gate is off by default at the binary (NewExpressions
// holds a gated library exactly when its gate is on, whatever the
// min-compatibility version; StoredExpressions always: environment.go,
// filterAndBuildOpts); a use the binary does not declare at all but a later
// line does (`isSemver` at 1.31); a use no environment declares in that form
// (`cel.bind`, `math.abs`, `base64.encode`, `q.sign()`, `jsonpatch.escapeKey`
// outside a MutatingAdmissionPolicy mutation). Rollbacks (CelUsesNotReadable)
// report only what the expression's own environment proves.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
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
  bool gate_default = false;  // the gate's default at the line's binary version
  // "" for base.go's libraries; "mutations": MutatingAdmissionPolicy's
  // mutations only (JSONPatch).
  std::string scope;
  std::vector<CelFunctionDecl> functions;
  std::vector<CelMacroDecl> macros;
  std::vector<std::string> syntax;  // "?.", "[?", "?", "{?": the reader's names

  // "kubernetes.SemverLib v1", "ext.Sets".
  std::string DisplayName() const;
};

// One binary line's CEL base environment, or an older release's read from the
// history of the oldest line's base.go.
struct CelEnvironment {
  Version line;               // 1.36
  std::string apiserver_tag;  // "v0.36.0", "v0.37.0-beta.0"
  std::string apiserver_commit;
  // True when apiserver_tag is a pre-release tag read for want of the release.
  bool apiserver_prerelease = false;
  std::string cel_go_version;  // "v0.26.0"
  // The release base.go names as CEL's real start (1.23).
  Version cel_epoch;
  // For a release older than every line (1.30): the line whose base.go history
  // it is read from (1.31). Unset for a line's own environment.
  std::optional<Version> history_of;
  std::vector<CelLibrary> libraries;

  // Where the data comes from, as answers name it: "kubernetes/apiserver
  // v0.36.0, cel-go v0.26.0"; "kubernetes/apiserver v0.37.0-beta.0
  // (pre-release tag, not a release), cel-go v0.27.0"; "Kubernetes 1.30 from
  // the history in base.go of kubernetes/apiserver v0.31.0, cel-go v0.20.1".
  std::string Source() const;
};

// The environment of `release` (cel_epoch <= release < oldest.line) from the
// history in `oldest`'s base.go: every library introduced at or before
// `release` (what that binary's StoredExpressions held), its gate treated as
// off (no gated library predates 1.31).
CelEnvironment CelEnvironmentFromHistory(const CelEnvironment& oldest,
                                         const Version& release);

// Does `library` declare something `use` can be?
bool CelLibraryMatches(const CelLibrary& library, const CelUse& use);

// Which expressions a scoped library serves: "" (any kind of expression: only
// base.go's libraries) or "mutations" (a MutatingAdmissionPolicy's
// spec.mutations[] expressions: base.go's and JSONPatch).
inline constexpr absl::string_view kCelScopeMutations = "mutations";

// The libraries of `env` that match `use` in an expression of `scope`, in
// base.go's order; with `new_expressions_at`, only those in the NewExpressions
// environment at that min-compatibility version.
std::vector<const CelLibrary*> CelLibrariesFor(
    const CelEnvironment& env, const CelUse& use,
    const std::optional<Version>& new_expressions_at = std::nullopt,
    absl::string_view scope = "");

enum class CelMissingKind {
  kNotInNewExpressions,  // the binary has it, NewExpressions at M does not
  kGateOff,              // a gated library, gate off by default at the binary
  kUndeclared,           // not in the binary; `introduced` says when it comes
  kUnknown,              // no environment compatd knows declares it so
};

// One use the environment asked about cannot compile.
struct CelMissingUse {
  CelUse use;
  CelMissingKind kind = CelMissingKind::kNotInNewExpressions;
  // The earliest-introduced library that matches the use and the release it
  // entered NewExpressions (kUndeclared: of the first later line declaring it,
  // and the release it arrives in); empty and unset for kUnknown.
  std::string library;
  Version introduced;
  // For kGateOff, the gate; for kUnknown, what compatd knows of the name
  // ("sign is a global function of kubernetes.Quantity (sign(x)), never a
  // member"), or empty.
  std::string detail;
};

// The uses of `reading`, an expression of `scope`, that `env`'s NewExpressions
// environment at `min_compatibility` lacks (the expression "cannot be
// written"). `lines` are the lines' own environments, oldest first: a use
// `env` does not declare is kUndeclared when a later line declares it
// (`introduced`: the release it arrives in), else kUnknown (the newest line's
// base.go keeps every library ever added). With `lines` empty, only what `env`
// declares is judged.
std::vector<CelMissingUse> CelUsesNotWritable(
    const CelReading& reading, const CelEnvironment& env,
    const Version& min_compatibility, absl::Span<const CelEnvironment> lines,
    absl::string_view scope = "");

// The uses of `reading`, an expression of `scope` written for `written_for`
// (matched there by some library), that `rollback`'s StoredExpressions
// environment lacks: the expression "cannot be read back after a rollback to"
// rollback's line.
std::vector<CelMissingUse> CelUsesNotReadable(const CelReading& reading,
                                              const CelEnvironment& written_for,
                                              const CelEnvironment& rollback,
                                              absl::string_view scope = "");

// "undeclared in kube-apiserver 1.31: isSemver is kubernetes.SemverLib v1,
// which arrives in 1.33": one sentence for `m`, missing from `env` at
// `min_compatibility`; `where` ("(line 1, column 4)") follows the use's name.
std::string CelMissingSentence(const CelMissingUse& m,
                               const CelEnvironment& env,
                               const Version& min_compatibility,
                               absl::string_view where = "");

// The libraries that enter NewExpressions when the min-compatibility version
// rises from `from` to `to` on `env`'s binary (from < introduced <= to, or
// leaving a removal).
std::vector<const CelLibrary*> CelLibrariesUnlocked(const CelEnvironment& env,
                                                    const Version& from,
                                                    const Version& to);

}  // namespace compatd::engine
