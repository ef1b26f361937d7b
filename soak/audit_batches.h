#pragma once

// What compatd-soak's audit-hostile class posts to POST /audit/v1/events:
// kube-apiserver's audit webhook batches (audit.k8s.io/v1 EventLists, built
// with tests/testing/audit_events.h) of good events mixed with hostile items,
// each batch with the summary compatd must answer. Plain functions of a
// random engine, like soak/requests.h.

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "soak/requests.h"

namespace compatd::soak {

// The hostile items of a batch. The giant ones carry a field of
// kGiantMinBytes to kGiantMaxBytes; kept, each would hold that much in every
// row, label and answer (docs/limits.md, "Audit event fields": compatd keeps
// at most 256 bytes of each).
enum class HostileItem {
  kGiantUser,            // user.username "system:" + hundreds of KB
  kGiantServiceAccount,  // "system:serviceaccount:soak:" + hundreds of KB
  kGiantGroup,           // objectRef.apiGroup
  kGiantResource,        // objectRef.resource
  kGiantSubresource,     // objectRef.subresource
  kGiantRemovedRelease,  // annotations["k8s.io/removed-release"]
  kGiantUserAgent,       // userAgent
  kGiantMultibyte,       // objectRef.resource of 2-, 3- and 4-byte characters
  kOddText,              // U+FFFD, NUL, ESC, quotes, U+2028, BOM, C1, emoji
  kDeep,                 // a requestObject nested deeper than 1024 levels
  kNotAnEvent,           // a number, a string, null, an array
  kWrongType,            // a field of the wrong JSON type
};
inline constexpr int kHostileItemCount = 12;
extern const std::array<absl::string_view, kHostileItemCount> kHostileItemNames;

inline constexpr size_t kGiantMinBytes = 128 << 10;
inline constexpr size_t kGiantMaxBytes = 384 << 10;
// A giant field has one of this many lengths (kGiantMinBytes to
// kGiantMaxBytes), and odd text is one of a dozen snippets in one of six
// fields: the rows compatd keeps of them (one per field's kept value, "...(N
// bytes cut)" differing with the length) stay a few hundred, well under
// --max-api-usage-rows. A full table of such rows makes ListApiUsage an answer
// of ~0.8 MB (~1.1 MB of JSON over /v1), which the valid classes ask for at
// ~0.5% of their light calls: legitimate buffers and work, not what this
// class measures (a hostile field kept whole would pass its bound in every
// read-back, and hold hundreds of KB per row).
inline constexpr size_t kGiantLengths = 16;

// One batch and what compatd must answer to it.
struct AuditBatch {
  std::string body;
  // compatd refuses the whole document with 400 (it is not UTF-8, so not
  // JSON: RFC 8259 8.1); kube-apiserver never sends one (Go's encoding/json
  // writes U+FFFD for bytes that are not UTF-8).
  bool not_utf8 = false;
  // The 200's summary: {"events":E,"recorded":R,"skipped":S,"malformed":M}.
  size_t events = 0;
  size_t recorded = 0;
  size_t skipped = 0;  // stages other than ResponseComplete, and 401s
  size_t malformed = 0;
  std::vector<HostileItem> hostile;
  // For failure messages: "37 events; hostile: ...".
  std::string label;
};

// 10 to 49 good events of the clients of a cluster (kubelets, kube-proxy,
// the cluster autoscaler, an operator, a person's kubectl; some calling APIs
// at risk, some watches' ResponseStarted and some 401s, which compatd skips)
// and 1 to 3 hostile items, at most two of them giant: under 1 MiB.
AuditBatch RandomAuditBatch(Rng& rng);

// A few good events and one whose user name holds bytes that are not UTF-8:
// raw (a lone continuation byte, a cut sequence, 0xFF) or as a lone
// surrogate escape ("\ud800"), which is no character either.
AuditBatch NotUtf8AuditBatch(Rng& rng);

}  // namespace compatd::soak
