#pragma once

// The CEL expressions of Kubernetes manifests, with where they are: every field
// kube-apiserver compiles as CEL in the kinds that carry one (k8s.io/api at
// v0.36.0):
//   ValidatingAdmissionPolicy   spec.validations[].expression,
//   .messageExpression;
//                               spec.variables[].expression;
//                               spec.auditAnnotations[].valueExpression;
//                               spec.matchConditions[].expression
//   MutatingAdmissionPolicy     spec.variables[].expression;
//   spec.matchConditions[].expression;
//                               spec.mutations[].applyConfiguration.expression,
//                               spec.mutations[].jsonPatch.expression
//   Validating/MutatingWebhookConfiguration
//   webhooks[].matchConditions[].expression CustomResourceDefinition
//   x-kubernetes-validations[].rule and .messageExpression at any
//                               depth of spec.versions[].schema.openAPIV3Schema
//                               (and v1beta1's spec.validation.openAPIV3Schema)
// at every version of those kinds (admissionregistration.k8s.io v1, v1beta1,
// v1alpha1; apiextensions.k8s.io v1, v1beta1). `kind: List` items are read one
// by one.
//
// Separate from manifest_reader.h (which keeps only what the API scan needs) so
// that a scan for CEL costs nothing to a scan that does not ask for it. libyaml
// events, no node tree, one pass; documents deeper than kMaxYamlDepth are
// skipped. Bounded as ReadManifests is (ReadLimits: its directives, documents,
// objects and work budget) and by the CEL fields of one text: a hostile text
// cannot cost more than linear time and memory. Pure and thread-safe.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "manifest/manifest_reader.h"

namespace compatd::manifest {

struct CelField {
  std::string path;        // "spec.validations[0].expression"
  std::string expression;  // the scalar's value
  // Where the value starts in the text (1-based): for a block scalar (| or >),
  // the line after its indicator, where the expression's first line is.
  int line = 0;
  int column = 0;
  // True when the expression's line k is the text's line `line + k - 1` (a
  // literal block scalar, or a one-line value); false for folded or multi-line
  // flow scalars, whose lines YAML joins.
  bool lines_map = true;
};

struct CelObject {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string namespace_;
  int line = 0;  // where the object's mapping starts
  std::vector<CelField> fields;
};

// CEL fields (values under a CEL key: expression, messageExpression,
// valueExpression, rule) read from one text, whatever their kind; past it the
// read stops. Real manifests are far below: the largest CRDs carry a few
// hundred x-kubernetes-validations.
inline constexpr int kMaxCelFields = 20000;
// A CEL field's path within its object; a longer path is not a field any kind
// has and is not read.
inline constexpr size_t kMaxCelPathBytes = 2048;

struct CelFields {
  // The objects that hold at least one CEL field, in input order.
  std::vector<CelObject> objects;
  // Empty, or why the read stopped before the end at kMaxCelFields, and the
  // line (1-based) where. The bounds ReadManifests shares (directives,
  // documents, objects), the work budget and a syntax error end the read
  // silently: ReadManifests (or the scan) reports them.
  std::string stopped;
  int stopped_line = 0;
};

CelFields ReadCelFields(absl::string_view text,
                        const ReadLimits& limits = ReadLimits());

}  // namespace compatd::manifest
