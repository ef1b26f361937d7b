#pragma once

// POST /audit/v1/events: kube-apiserver's audit webhook backend
// (--audit-webhook-config-file; k8s.io/apiserver plugin/pkg/audit/webhook at
// v0.36.3) as a source of every client of the cluster and every API it calls.
//
// What kube-apiserver sends: a POST with Content-Type application/json of an
// audit.k8s.io/v1 EventList ({"kind":"EventList","apiVersion":
// "audit.k8s.io/v1","metadata":{},"items":[Event...]}), by default up to 400
// events a batch (--audit-webhook-batch-max-size), never compressed. It
// retries a batch on *any* error, 4xx included (the webhook backend's
// retryOnError replaces the generic webhook's 429/5xx rule), with backoff
// (--audit-webhook-initial-backoff 10s, x1.5, 5 tries), then drops it. A single
// Event document is accepted too (what curl or a log shipper may send).
//
// Of each event only these are read; everything else (request and response
// objects, source IPs, user groups and extra, object names) is skipped
// unkept, though checked to be JSON:
//
//   stage                          only ResponseComplete and Panic count: one
//                                  event per request (watches send
//                                  ResponseStarted first; RequestReceived is
//                                  omitted by k8s/audit/policy.yaml)
//   user.username                  through runtime::UserLabel
//   userAgent                      the client: component and version as for
//                                  direct callers (engine/user_agent.h)
//   objectRef.apiGroup, apiVersion, resource, subresource
//   responseStatus.code            401: skipped (anyone can send any
//                                  User-Agent without credentials); 403:
//                                  counted as denied
//   annotations["k8s.io/deprecated"], ["k8s.io/removed-release"]
//
// An event that is JSON but not an audit event (not an object, a field of
// the wrong type, no stage) is skipped and counted (compatd_audit_events_total
// {result="malformed"}); the rest of the batch is read. A document that is
// not JSON, or not an audit.k8s.io/v1 EventList or Event, is refused whole
// (400). Batches past `max_batch_events` or `max_batch_bytes` (or the front
// door's --max-http-body-bytes, refused before they are read) get 413,
// counted as too_large and logged with their size; while
// `max_concurrent_batches` are being read, a batch waits its turn in a queue
// of `max_queued_batches` (Schedule), and past it gets 429 with Retry-After:
// 1 (so the front door's threads are never all taken by audit batches).
// Accepted batches get 200 with a summary
// ({"events":N,"recorded":R,"skipped":S, "malformed":M}), which kube-apiserver
// does not read.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "http/server.h"
#include "runtime/api_usage.h"
#include "runtime/client_tracker.h"
#include "runtime/service_metrics.h"
#include "runtime/serving_snapshot.h"

namespace compatd::gateway {

inline constexpr char kAuditPath[] = "/audit/v1/events";

// The most bytes of one event's field (user name, API group, version,
// resource, subresource, removed-release annotation) compatd keeps; a longer
// one is cut and marked "...(N bytes cut)". The user agent has its own bound
// (engine::kMaxClientFieldBytes).
inline constexpr size_t kMaxAuditFieldBytes = 256;

// The fields of one event compatd reads: views into the batch being read,
// valid during the callback only.
struct AuditEvent {
  absl::string_view stage;
  absl::string_view verb;
  absl::string_view username;
  absl::string_view user_agent;
  bool has_object_ref = false;
  absl::string_view api_group;
  absl::string_view api_version;
  absl::string_view resource;
  absl::string_view subresource;
  int64_t code = 0;                    // responseStatus.code; 0 when absent
  bool deprecated_annotation = false;  // k8s.io/deprecated: "true"
  absl::string_view removed_release_annotation;
};

struct AuditReadStats {
  size_t events = 0;     // items read, malformed ones included
  size_t malformed = 0;  // skipped
  // The first malformed event's problem ("items[3].userAgent: expected a
  // string, got number").
  std::string first_problem;
};

// Reads an audit.k8s.io/v1 EventList (or one Event) from `body` and calls
// `on_event` for every well-formed event, in order, once the whole document
// has been read and found to be one (so a refused document feeds nothing).
// INVALID_ARGUMENT for a document that is not JSON or not an audit EventList
// or Event (the message says where and what is accepted);
// RESOURCE_EXHAUSTED past `max_events` items. Linear in the body's size;
// memory: the parser's buffers (reused per thread) and one AuditEvent per
// item. Thread-safe.
absl::Status ReadAuditEvents(
    absl::string_view body, size_t max_events,
    const std::function<void(const AuditEvent&)>& on_event,
    AuditReadStats* stats);

class AuditIngest final {
 public:
  struct Options {
    size_t max_batch_events = 4000;    // 10x kube-apiserver's default batch
    size_t max_batch_bytes = 3 << 20;  // the front door's body bound
    int max_concurrent_batches = 1;
    // Batches that wait, in arrival order, while max_concurrent_batches are
    // read (Schedule); more get 429.
    int max_queued_batches = 8;
    runtime::UserNames user_names = runtime::UserNames::kServiceAccounts;
  };

  // `clients`, `usage` and `metrics` may be null; all must outlive this.
  AuditIngest(runtime::ClientTracker* clients, runtime::ApiUsageTracker* usage,
              const runtime::ServiceMetrics* metrics, Options options);
  AuditIngest(const AuditIngest&) = delete;
  AuditIngest& operator=(const AuditIngest&) = delete;

  // Serves one POST. `snapshot` null: 503 (kube-apiserver retries).
  void Serve(const runtime::ServingSnapshot* snapshot,
             const http::Request& request, http::Response* response);

  // A batch the HTTP server refused (413) before Serve, for the front
  // door's body bound: counted (compatd_audit_batches_total{result=
  // "too_large"}) and logged with its size (`content_length`, 0 when
  // chunked) and the bound (`bound`, the flag and its value), since
  // kube-apiserver drops it after its retries. Thread-safe.
  void RefusedBeforeRead(uint64_t content_length,
                         absl::string_view bound) const;

  // Takes turns between senders: runs `batch` (a call of Serve and its
  // answer) at once, on this thread, when fewer than max_concurrent_batches
  // are being read; else queues it when fewer than max_queued_batches wait,
  // and the thread that finishes a batch runs the queue's next one, in
  // arrival order. So a sender that posts back to back cannot take every
  // turn from one that waited (issue 36: three senders of 1 MB batches left
  // a fourth 10 of its 51 batches), and audit batches still hold at most
  // max_concurrent_batches of the front door's threads. False (nothing
  // queued) when the queue is full: answer with RefuseQueueFull. Batches
  // read through Schedule never see Serve's own 429. Thread-safe.
  bool Schedule(std::function<void()> batch);

  // The 429 (Retry-After: 1) for a batch Schedule did not take, counted as
  // busy.
  void RefuseQueueFull(http::Response* response) const;

  const Options& options() const { return options_; }

 private:
  // One event's API call into the usage table, when its API is at risk
  // (the catalog's judgement, or kube-apiserver's deprecation annotation for
  // an API the catalog does not know).
  void RecordApiUse(const engine::ApiUseIndex& index, const AuditEvent& event,
                    const engine::ClientIdentity& identity, std::string* user);

  runtime::ClientTracker* const clients_;
  runtime::ApiUsageTracker* const usage_;
  const runtime::ServiceMetrics* const metrics_;
  const Options options_;
  std::atomic<int> in_flight_{0};
  // Schedule's turns.
  // std::mutex, not absl::Mutex: Debian's abseil is not built with TSan,
  // which then sees no order between the threads taking turns.
  std::mutex turns_mu_;
  int running_ = 0;                           // guarded by turns_mu_
  std::deque<std::function<void()>> queued_;  // guarded by turns_mu_
};

}  // namespace compatd::gateway
