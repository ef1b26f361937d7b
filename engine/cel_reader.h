#pragma once

// A reader of CEL expressions (google/cel-spec doc/langdef.md, the grammar
// cel-go's CEL.g4 implements): it parses an expression and lists the functions,
// member functions, macros and optional syntax it uses, each with its position.
// It does not evaluate or type-check.
//
//   absl::StatusOr<CelReading> r = ReadCel("object.spec.version.isSemver() && "
//                                          "semver(object.spec.version).major()
//                                          >= 2");
//   // r->uses: member function isSemver (args 0) at 1:21, function semver
//   (args 1) at 1:35,
//   //          member function major (args 0) at 1:62
//
// Bounds, as kube-apiserver parses CEL: kube-apiserver (k8s.io/apiserver
// pkg/cel/environment, v0.31.0-v0.36.0) sets no parser option, so cel-go's
// parser defaults apply (cel-go parser/parser.go, v0.20.1-v0.26.0): an
// expression of at most 100,000 code points (expressionSizeCodePointLimit) and
// a parse tree at most 250 deep (maxRecursionDepth: every operator of a chain
// such as `1 + 2 + 3`, every selection, index and call nests one level). The
// reader refuses what passes those bounds with the same limits, and costs time
// linear in the expression's length: one pass of a lexer, a recursive descent
// that never backtracks, the C++ recursion bounded by the depth limit.
//
// Pure: no I/O, no globals; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace compatd::engine {

// cel-go's defaults, which kube-apiserver keeps (see above).
inline constexpr int kCelMaxCodePoints = 100000;
inline constexpr int kCelMaxRecursionDepth = 250;

// Where a use is: byte offset into the expression, 1-based line, 1-based column
// counted in code points (cel-go counts columns in code points too). Lines end
// at \n, \r\n or \r.
struct CelPosition {
  uint32_t offset = 0;
  uint32_t line = 1;
  uint32_t column = 1;
  bool operator==(const CelPosition&) const = default;
};

enum class CelUseKind {
  kFunction,  // f(args): a global call, `sets.contains(a, b)` included (see
              // qualified_name)
  kMemberFunction,  // x.f(args)
  kMacro,  // has(x.f), x.all(v, p), x.exists(k, v, p), x.transformList(i, v,
           // e), ...
  kOptionalSelect,   // x.?f
  kOptionalIndex,    // x[?k]
  kOptionalElement,  // [?x, ...] in a list literal
  kOptionalEntry,    // {?k: v} in a map literal, Msg{?f: v} in a message
};

// "function", "member function", "macro", "optional select", ...
absl::string_view CelUseKindName(CelUseKind kind);

struct CelUse {
  CelUseKind kind = CelUseKind::kFunction;
  // The function or macro name as written: `contains` for `sets.contains(a, b)`
  // and for `s.contains(t)`; `?.`, `[?`, `{?` (or `?` for a list element) for
  // optional syntax.
  std::string name;
  // For a member call whose receiver is an identifier chain
  // (`sets.contains(...)`, `format.named(...)`, `a.b.f()`), the chain and the
  // name joined by dots ("sets.contains"): CEL resolves such a call to the
  // global function of that name when one is declared (namespaced functions),
  // else to the member function. Empty otherwise.
  std::string qualified_name;
  // Arguments inside the parentheses (a receiver is not counted); 0 for
  // optional syntax.
  int arg_count = 0;
  // Where the name starts (for optional syntax: where `?` is).
  CelPosition position;
};

struct CelReading {
  std::vector<CelUse> uses;  // in the order they appear in the expression
};

// Parses `expression` and returns its uses. INVALID_ARGUMENT, with line:column,
// for text that is not a CEL expression (a syntax error, a reserved word as an
// identifier, a bad escape or number, a macro whose variable is not a simple
// name, text that is not UTF-8) or that passes the bounds above.
absl::StatusOr<CelReading> ReadCel(absl::string_view expression);

}  // namespace compatd::engine
