#pragma once

// Who is calling: the client component and version, from the explicit
// metadata `x-kubernetes-component` / `x-kubernetes-version` or from the
// Kubernetes client User-Agent (kubernetes/client-go rest/config.go,
// DefaultKubernetesUserAgent; docs/kubernetes-rules.md#client-user-agent):
//
//   <component>/<version> (<os>/<arch>) kubernetes/<commit>[/<suffix>]
//
//   "kube-scheduler/v1.36.3 (linux/amd64) kubernetes/0123abc/leader-election"
//     -> component "kube-scheduler", version "v1.36.3", 1.36,
//        commit "0123abc", suffix "leader-election"
//
// gRPC libraries add their own tokens to the user-agent header
// ("kubelet/v1.31.0 (linux/amd64) kubernetes/abc grpc-c++/1.51.1 grpc-c/29.0.0
// (linux; chttp2)"): the Kubernetes-form token is found anywhere, grpc-* tokens
// and parenthesized comments are skipped. Without a Kubernetes-form token, the
// first other product token is taken ("grpcurl/1.8.7 grpc-go/1.57.0" ->
// grpcurl 1.8.7).
//
// Conventions of ours (Kubernetes itself does not parse these):
//  * major/minor are filled when the User-Agent version starts with "v" and
//    generic-parses (build metadata and pre-release ignored); metadata
//    versions may omit the "v" ("1.31", "v1.31.2").
//  * client-go's placeholder version "v0.0.0" (a binary built without
//    version ldflags) carries no version: no major/minor.
//  * a Windows binary's ".exe" is dropped from the component ("kubectl.exe").
//  * inputs are capped: the first 1024 bytes of a User-Agent are read, and a
//    component or version longer than 256 bytes, or with characters outside
//    printable ASCII (components: [A-Za-z0-9._+@:~-]), is not used.
//  * what cannot be read gives component / version "unknown".
//
// Pure; no allocation (the result's views point into the inputs or into
// static storage, so it lives no longer than they do).

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/base/attributes.h"
#include "absl/strings/string_view.h"

namespace compatd::engine {

inline constexpr absl::string_view kUnknownClient = "unknown";
inline constexpr size_t kMaxUserAgentBytes = 1024;
inline constexpr size_t kMaxClientFieldBytes = 256;

// Borrows from the text it was parsed from (engine/catalog.h, "Lifetimes"):
// component, version, commit and suffix point into it (or at kUnknownClient).
struct ClientIdentity {
  enum class Source { kNone, kMetadata, kUserAgent };

  absl::string_view component = kUnknownClient;
  absl::string_view version = kUnknownClient;  // raw, as sent
  std::optional<uint64_t> major;               // both set or both empty
  std::optional<uint64_t> minor;
  absl::string_view commit;  // User-Agent only; may be empty
  absl::string_view suffix;  // after kubernetes/<commit>/, may be empty
  Source source = Source::kNone;

  bool has_major_minor() const { return major.has_value(); }
};

// Parses a User-Agent header value.
ClientIdentity ParseUserAgent(
    absl::string_view user_agent ABSL_ATTRIBUTE_LIFETIME_BOUND);

// Metadata first, the User-Agent for what it lacks: a metadata component
// takes the User-Agent's version only when the User-Agent names the same
// component; a metadata version alone takes the User-Agent's component.
// Empty or invalid metadata values count as absent.
ClientIdentity IdentifyClient(
    absl::string_view component_metadata ABSL_ATTRIBUTE_LIFETIME_BOUND,
    absl::string_view version_metadata ABSL_ATTRIBUTE_LIFETIME_BOUND,
    absl::string_view user_agent ABSL_ATTRIBUTE_LIFETIME_BOUND);

}  // namespace compatd::engine
