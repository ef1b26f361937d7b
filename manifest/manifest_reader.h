#pragma once

// Reads Kubernetes manifests: what `kubectl apply -f`, `helm template` and
// `kubectl kustomize` produce. A stream of YAML documents separated by `---`
// (JSON is YAML too, so `kubectl get -o json` output reads the same), each a
// Kubernetes object, or a list (`kind: List`, or any kind ending in "List"
// with `items`, as kubectl's resource builder flattens them) whose items are
// taken one by one, nested lists included.
//
// Only what a scan needs is kept: apiVersion, kind, metadata.name and
// .namespace, and for CustomResourceDefinitions spec.group, spec.names,
// spec.versions (name, served, storage, deprecated), the legacy spec.version
// and status.storedVersions. Everything else is skipped event by event
// (libyaml's parser, no node tree), so reading costs little more than
// parsing.
//
// Bad input never stops the read: a document that is not a mapping, an
// object without apiVersion or kind, or a field of the wrong shape is a
// problem with its line, and the next object is read. A YAML syntax error
// ends libyaml's parse; reading resumes at the next line that starts a
// document (`---`), so one broken document costs only itself. Empty
// documents (a template that rendered nothing) are skipped silently.
//
// Pure and thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/work_budget.h"

namespace compatd::manifest {

struct CrdVersion {
  std::string name;
  bool served = false;
  bool storage = false;
  bool deprecated = false;
};

// The parts of a CustomResourceDefinition a scan checks.
struct CrdSpec {
  std::string group;   // spec.group
  std::string kind;    // spec.names.kind
  std::string plural;  // spec.names.plural
  // spec.versions; apiextensions.k8s.io/v1beta1's single spec.version reads
  // as one served storage version.
  std::vector<CrdVersion> versions;
  std::vector<std::string> stored_versions;  // status.storedVersions
};

// One rule of an RBAC Role or ClusterRole (rbac.authorization.k8s.io/v1
// PolicyRule): the API groups and resources it grants on, as written ("*",
// "pods/log" included).
struct RbacRule {
  std::vector<std::string> api_groups;
  std::vector<std::string> resources;
  int line = 0;  // 1-based: where the rule starts
};

struct ManifestObject {
  std::string api_version;  // as written ("apps/v1", "v1")
  std::string kind;
  std::string name;             // metadata.name; may be empty (generateName)
  std::string namespace_;       // metadata.namespace; empty when not written
  int line = 0;                 // 1-based: where the object's mapping starts
  std::optional<CrdSpec> crd;   // kind CustomResourceDefinition only
  std::vector<RbacRule> rules;  // kinds Role and ClusterRole only
};

struct ManifestProblem {
  int line = 0;  // 1-based
  std::string message;
};

struct ManifestContents {
  std::vector<ManifestObject> objects;  // in input order, lists flattened
  std::vector<ManifestProblem> problems;
  // What was read, but not as written: a key given twice (the last counts),
  // an old kustomization skipped. Not bad input: a scan goes on clean.
  std::vector<ManifestProblem> warnings;
  // Documents that are mappings without a `kind` (a Helm values.yaml or
  // Chart.yaml, a CI workflow): not Kubernetes objects. Not problems here; a
  // scan skips and counts them (problems with --strict).
  std::vector<ManifestProblem> not_objects;
  int documents = 0;  // non-empty documents read
  // Set when a bound of ReadLimits stopped the read before the end of the
  // text: what stopped it (also one of `problems`, at its line).
  std::string stopped;
};

// Nesting of lists within lists followed; deeper items are a problem.
inline constexpr int kMaxListNesting = 8;
// Deepest nesting of sequences and mappings read. libyaml's cost grows with
// the square of the depth (every level is a possible simple key), so a
// hostile "[[[[..." would take minutes; a document deeper than this is a
// problem and reading resumes at the next document.
inline constexpr int kMaxYamlDepth = 1000;

// What bounds one read (issue 23; docs/limits.md), far above
// what real manifests reach: the repository's test data and examples, and
// rendered charts, have at most 1 directive, a few hundred documents and
// objects, and CRDs of at most a dozen versions. Past a bound the read stops
// with a problem at the line where it stopped (ManifestContents::stopped).
struct ReadLimits {
  // YAML directives (%YAML, %TAG lines) in a row before one document:
  // libyaml compares every %TAG with all those before it (1.7 MB of them
  // took 29 s).
  int max_directives = 16;
  // Documents read and syntax errors resumed after (each restarts libyaml).
  int max_documents = 20000;
  // Objects (list items one by one) and problems, over the whole text: 3 MB
  // of `{}` list items were 1.5 million problems.
  int max_entries = 100000;
  // Versions of one CustomResourceDefinition (apiextensions allows any
  // number; the checks of a CRD's history grow with their square).
  int max_crd_versions = 100;
  // Looked at every few thousand events: once exhausted the read stops
  // (the client went away, or the call's budget is spent). Null: none.
  const base::WorkBudget* budget = nullptr;
};

// YAML aliases (`apiVersion: *v`) and merge keys (`<<: *base`, `<<: [*a,
// *b]`) are resolved as kubectl resolves them (sigs.k8s.io/yaml decodes with
// go-yaml v2): an alias stands for its anchor's node; a merge key's
// mappings are applied where the key stands, in document order with the
// mapping's own keys (the later one counts), the first of a list of
// mappings winning over the ones after it. Each event an alias or a merge
// key adds counts against this bound per document, so a few lines of nested
// aliases (a "billion laughs") cannot expand without bound: past it the
// document is a problem.
inline constexpr int64_t kMaxAliasExpansion = 100000;

ManifestContents ReadManifests(absl::string_view text);
ManifestContents ReadManifests(absl::string_view text,
                               const ReadLimits& limits);

// `text` up to the line where more than `max_directives` directive lines in a
// row start (ReadLimits::max_directives), and that line (1-based) in
// `*flood_line`; all of `text` and 0 when there is no such run. Another reader
// of the same text (manifest/cel_fields.h) stops where ReadManifests does.
absl::string_view BeforeDirectiveFlood(absl::string_view text,
                                       int max_directives, int* flood_line);

}  // namespace compatd::manifest
