#include "api/scan_sarif.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "api/scan.h"
#include "base/json_quote.h"

namespace compatd::api {
namespace {

// A JSON string literal (file names and messages can hold any bytes).
std::string Json(absl::string_view text) { return base::JsonQuote(text); }

// A file path as a URI reference: '/' kept, every byte outside RFC 3986's
// unreserved set percent-encoded.
std::string PathUri(absl::string_view path) {
  while (path.substr(0, 2) == "./") path.remove_prefix(2);
  std::string out;
  for (const char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' ||
        c == '~' || c == '/') {
      out += ch;
    } else {
      absl::StrAppendFormat(&out, "%%%02X", c);
    }
  }
  return out;
}

struct Rule {
  v1::ScanStatus status;  // UNSPECIFIED: bad documents
  const char* id;
  const char* name;
  const char* level;
  const char* short_text;
  const char* full_text;
};

constexpr Rule kRules[] = {
    {v1::SCAN_STATUS_DEPRECATED, "compatd/deprecated", "DeprecatedApi",
     "warning", "API deprecated at the target release",
     "The object's apiVersion and kind are deprecated at the target "
     "Kubernetes release: still served, but removal is announced. Move to "
     "the replacement before the removal release."},
    {v1::SCAN_STATUS_REMOVED, "compatd/removed", "RemovedApi", "error",
     "API removed at the target release",
     "The object's apiVersion and kind are no longer served at the target "
     "Kubernetes release: applying it fails. Use the replacement."},
    {v1::SCAN_STATUS_NOT_SERVED, "compatd/not-served", "NotServedApi", "error",
     "API not served by default at the target release",
     "The object's apiVersion and kind exist at the target release but are "
     "not enabled by default (an alpha or a new beta API): applying it fails "
     "unless the cluster enables it with --runtime-config."},
    {v1::SCAN_STATUS_NOT_YET_INTRODUCED, "compatd/not-yet-introduced",
     "NotYetIntroducedApi", "error", "API not yet introduced at the target",
     "The object's apiVersion and kind are introduced after the target "
     "Kubernetes release."},
    {v1::SCAN_STATUS_UNKNOWN, "compatd/unknown", "UnknownApi", "error",
     "Not a known version or kind of its group",
     "The object's group is built into Kubernetes (or its CRD is scanned), "
     "but no release (or the CRD) has this version and kind."},
    {v1::SCAN_STATUS_CRD_VIOLATION, "compatd/crd-violation", "CrdViolation",
     "error", "CustomResourceDefinition breaks a version rule",
     "A CustomResourceDefinition drops a version still in "
     "status.storedVersions, or breaks the catalog's version removal "
     "rules."},
    {v1::SCAN_STATUS_RBAC_REMOVED_API, "compatd/rbac-removed-api",
     "RbacRuleOnRemovedApi", "note",
     "RBAC rule grants on an API removed at the target",
     "A Role or ClusterRole rule grants on a resource of an API group that "
     "no version serves at the target Kubernetes release (every version "
     "that had it is removed): the rule grants nothing there. Grant on the "
     "replacement."},
    {v1::SCAN_STATUS_UNSPECIFIED, "compatd/bad-document", "BadDocument",
     "error", "Document not read",
     "A document that is not YAML, not a Kubernetes object, or an object "
     "without apiVersion or kind: compatd could not check it."},
};

size_t RuleIndex(v1::ScanStatus status) {
  for (size_t i = 0; i < std::size(kRules); ++i) {
    if (kRules[i].status == status) return i;
  }
  return std::size(kRules) - 1;
}

// One result: its rule, message, location and properties.
void AppendResult(size_t rule, const std::string& message,
                  absl::string_view source, int line,
                  const std::string& properties, const std::string& fingerprint,
                  bool first, std::string* out) {
  const bool relative = !source.empty() && source.front() != '/';
  absl::StrAppend(
      out, first ? "" : ",", "\n        {\"ruleId\": ", Json(kRules[rule].id),
      ", \"ruleIndex\": ", rule, ", \"level\": ", Json(kRules[rule].level),
      ",\n         \"message\": {\"text\": ", Json(message), "},",
      "\n         \"locations\": [{\"physicalLocation\": "
      "{\"artifactLocation\": "
      "{\"uri\": ",
      Json(PathUri(source)), relative ? ", \"uriBaseId\": \"%SRCROOT%\"" : "",
      "}, \"region\": {\"startLine\": ", std::max(line, 1), "}}}],",
      "\n         \"partialFingerprints\": {\"compatdObject/v1\": ",
      Json(fingerprint), "},", "\n         \"properties\": {", properties,
      "}}");
}

}  // namespace

void PrintScanSarif(const v1::ScanObjectsResponse& r, std::ostream& out) {
  std::string text = absl::StrCat(
      "{\n  \"$schema\": "
      "\"https://json.schemastore.org/sarif-2.1.0.json\",\n"
      "  \"version\": \"2.1.0\",\n  \"runs\": [\n    {\n"
      "      \"tool\": {\"driver\": {\"name\": \"compatd\", "
      "\"informationUri\": "
      "\"https://kubernetes.io/docs/reference/using-api/"
      "deprecation-guide/\", \"rules\": [");
  for (size_t i = 0; i < std::size(kRules); ++i) {
    const Rule& rule = kRules[i];
    absl::StrAppend(
        &text, i == 0 ? "" : ",", "\n        {\"id\": ", Json(rule.id),
        ", \"name\": ", Json(rule.name),
        ", \"shortDescription\": {\"text\": ", Json(rule.short_text),
        "}, \"fullDescription\": {\"text\": ", Json(rule.full_text),
        "}, \"defaultConfiguration\": {\"level\": ", Json(rule.level),
        "}, \"help\": {\"text\": ", Json(rule.full_text), "}}");
  }
  absl::StrAppend(
      &text,
      "]}},\n      \"properties\": {\"targetRelease\": ", Json(r.target()),
      ", \"skippedDocuments\": ", r.skipped_documents(),
      ", \"summary\": ", Json(r.reason()), "},\n      \"results\": [");
  bool first = true;
  for (const v1::ScanFinding& f : r.findings()) {
    const size_t rule = RuleIndex(f.status());
    const std::string properties =
        absl::StrCat("\"targetRelease\": ", Json(r.target()),
                     ", \"apiVersion\": ", Json(f.api_version()),
                     ", \"kind\": ", Json(f.kind()),
                     ", \"namespace\": ", Json(f.namespace_()),
                     ", \"name\": ", Json(f.name()),
                     ", \"deprecated\": ", Json(f.deprecated()),
                     ", \"removed\": ", Json(f.removed()),
                     ", \"replacement\": ", Json(f.replacement()),
                     ", \"rule\": ", Json(f.rule()));
    AppendResult(
        rule,
        absl::StrCat(f.message(), " (target Kubernetes ", r.target(), ")"),
        SourceName(r, f), f.line(), properties,
        absl::StrCat(kRules[rule].id, ":", f.api_version(), "/", f.kind(), "/",
                     f.namespace_(), "/", f.name()),
        first, &text);
    first = false;
  }
  for (const v1::ScanProblem& p : r.problems()) {
    const size_t rule = RuleIndex(v1::SCAN_STATUS_UNSPECIFIED);
    AppendResult(rule, p.message(), SourceName(r, p), p.line(),
                 absl::StrCat("\"targetRelease\": ", Json(r.target())),
                 absl::StrCat(kRules[rule].id, ":", p.message()), first, &text);
    first = false;
  }
  absl::StrAppend(&text, first ? "" : "\n      ", "]\n    }\n  ]\n}\n");
  out << text;
}

}  // namespace compatd::api
