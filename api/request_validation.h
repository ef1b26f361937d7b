#pragma once

// Bounds and grammar checks for every request, before any engine work. The
// handlers (and so the gRPC service, Evaluate and `compatd eval`) run these
// first: a request that passes is small and made of names Kubernetes itself
// could accept. Errors are INVALID_ARGUMENT naming the field (proto path, e.g.
// `storage_versions[2].apiserver_id`), the limit or grammar, and an example:
//
//   group "Apps": not a DNS-1123 subdomain: lowercase letters, digits, '-'
//   and '.', starting and ending with a letter or digit, at most 253 bytes
//   (e.g. "apps", "networking.k8s.io"); "" is the core group
//
// The grammars are Kubernetes' own (k8s.io/apimachinery/pkg/util/validation):
// - API groups: DNS-1123 subdomains (IsDNS1123Subdomain; CRD spec.group).
// - resources: DNS-1035 labels (apiextensions ValidateCustomResourceDefinition-
//   Names: names.plural; every built-in resource is one too).
// - CRD names: DNS-1123 subdomains ("<plural>.<group>"); CRD versions and
//   the version part of an apiVersion: DNS-1035 labels.
// - apiserver ids: DNS-1123 subdomains, apiVersions `[group/]version`
//   (apiserverinternal validation of StorageVersion, isValidAPIVersion).
// - feature gate names: Kubernetes' featuregate accepts any name it knows, as
//   parsed from `--feature-gates` (no ',', '=' or surrounding spaces); every
//   gate Kubernetes defines is a Go identifier in CamelCase ("WatchList",
//   "AllAlpha"), so compatd accepts an ASCII letter followed by letters and
//   digits.
// - components: lowercase letters, digits, '-', '.', '/' ("kubelet",
//   "kube-apiserver", the catalog's "component-base/logs").
// Version strings and the --feature-gates / --runtime-config strings are
// only length-checked here; the engine parses them with their own messages.
//
// Pure functions, thread-safe.

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "compatd/v1/compatd.pb.h"

namespace compatd::api {

// Byte limits of string fields.
inline constexpr size_t kMaxNameBytes = 256;    // names, ids, components
inline constexpr size_t kMaxVersionBytes = 64;  // "v1.36.2-alpha.1+abc"
inline constexpr size_t kMaxPathBytes = 4096;   // ScanSource names
inline constexpr size_t kMaxFlagStringBytes =
    4096;  // feature_gates, runtime_config
// Entries of any repeated field (storage_versions, participants, releases,
// decodable_versions, ...). Evaluate's items have their own limit.
inline constexpr int kMaxRepeatedEntries = 1000;

// Limits that are flags of the server (service/main.cc).
struct RequestLimits {
  // Evaluate items per call; more is INVALID_ARGUMENT (split the batch).
  int max_evaluate_items = 1000;
  // Bytes of one Evaluate answer: the batch stops at the item that passes it
  // (RESOURCE_EXHAUSTED, split the batch), so that a small request cannot
  // make the server build a huge answer. --max-send-message-bytes.
  size_t max_answer_bytes = 4 * 1024 * 1024;
  // A call's deadline is clamped to this: only WatchCatalog can run that long
  // (unary handlers never block), and its stream then ends with OK.
  absl::Duration max_call_duration = absl::Minutes(30);
};

// Kubernetes' grammars (k8s.io/apimachinery/pkg/util/validation).
bool IsDns1123Subdomain(absl::string_view value);  // <= 253 bytes
bool IsDns1123Label(absl::string_view value);      // <= 63 bytes
bool IsDns1035Label(absl::string_view value);      // <= 63 bytes
// `[group/]version` as StorageVersion's isValidAPIVersion accepts it.
bool IsApiVersion(absl::string_view value);
// An ASCII letter followed by ASCII letters and digits.
bool IsFeatureGateName(absl::string_view value);
// Lowercase letters, digits, '-', '.', '/', starting and ending with a letter
// or digit.
bool IsComponentName(absl::string_view value);

absl::Status ValidateVersionContext(const v1::VersionContext& versions,
                                    absl::string_view field = "versions");

absl::Status ValidateRequest(const v1::GetFeatureRequest& request);
absl::Status ValidateRequest(const v1::ListFeaturesRequest& request);
absl::Status ValidateRequest(const v1::GetStorageVersionRequest& request);
absl::Status ValidateRequest(const v1::ListAPIVersionsRequest& request);
absl::Status ValidateRequest(const v1::CheckSkewRequest& request);
absl::Status ValidateRequest(const v1::ResolveVersionsRequest& request);
absl::Status ValidateRequest(
    const v1::ComputeStorageVersionAgreementRequest& request);
absl::Status ValidateRequest(const v1::PlanVersionRemovalRequest& request);
absl::Status ValidateRequest(const v1::PlanUpgradeRequest& request);
// ScanObjects: versions, target and source names bounded, something to scan.
// The text itself is bounded by the transport (--max-recv-message-bytes).
absl::Status ValidateRequest(const v1::ScanObjectsRequest& request);
absl::Status ValidateRequest(const v1::GetCatalogRequest& request);
absl::Status ValidateRequest(const v1::ListClientsRequest& request);
absl::Status ValidateRequest(const v1::ListApiUsageRequest& request);
// The expression: not empty, at most kMaxCelExpressionBytes (kube-apiserver's
// CEL parser takes 100,000 code points, at most 4 bytes each; the reader checks
// the code points).
inline constexpr size_t kMaxCelExpressionBytes = 400000;
absl::Status ValidateRequest(const v1::CheckCelExpressionRequest& request);
// The batch only: its size and shared versions. Each item is validated on its
// own (a bad item is that item's error, not the batch's).
absl::Status ValidateRequest(const v1::EvaluateRequest& request,
                             const RequestLimits& limits);

}  // namespace compatd::api
