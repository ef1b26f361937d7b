#pragma once

// The fleet's clients: what every compatd replica's client tracker exported,
// summed by Prometheus (--prometheus-url), handed from the background poller
// (fleet/prometheus_poller.h) to whoever answers a request (the client
// tracker's View()). Transport-free: the poller does the HTTP, this holds the
// last answer and says whether it may be used.
//
//   FleetClients fleet({.source = "Prometheus at http://prom:9090",
//                       .max_age = absl::Seconds(45)});
//   fleet.Publish(std::move(answer));   // the poller, after a good answer
//   fleet.Fail(status);                 // the poller, after a failed one
//   FleetClients::State state = fleet.Current();  // any request thread
//   if (state.answer != nullptr) { ...the fleet's list... }
//   else { ...this replica's list, and state.why_not says why... }
//
// An answer is usable while the last attempt succeeded and it is younger
// than max_age (the poller's thread is stuck or gone otherwise): one failed
// query and every reader falls back to its replica's own view at once.
//
// The PromQL (FleetQueries) is over compatd's own series, summed across
// replicas by the two labels every client series has (component, version):
// any other label (job, pod, instance, a source label) is aggregated away, so
// whatever records into the tracker is summed too.
//
// Thread-safe: Current() takes a mutex for a pointer copy; readers never
// wait for a query.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace compatd::runtime {

// One client component/version pair of the fleet.
struct FleetClient {
  std::string component{};
  // The series' version label: "major.minor", "unknown" or "other".
  std::string version{};
  absl::Time first_seen{};  // the earliest of the replicas'
  absl::Time last_seen{};   // the latest of the replicas'
  // The replicas' compatd_client_requests_total, summed (since each replica
  // started, whatever the verdict).
  uint64_t requests = 0;
};

// One answer of Prometheus for the whole fleet.
struct FleetAnswer {
  std::vector<FleetClient> clients{};  // sorted by component, version; unique
  absl::Time taken{};                  // when the answer was complete
  // Replicas whose series Prometheus holds now (compatd_build_info series
  // matching the selector).
  int64_t replicas = 0;
};

// The instant queries a refresh asks, each answering one sample per
// (component, version) (replicas: one sample).
struct FleetQueries {
  std::string last_seen{};
  std::string first_seen{};
  std::string requests{};
  std::string replicas{};
};

struct FleetQueryOptions {
  // Label matchers every series is selected with, without braces:
  // `namespace="compatd",job="compatd"`; empty: all of them.
  std::string selector{};
  // Clients not seen for this long are left out (the trackers' --client-ttl).
  absl::Duration client_ttl = absl::Minutes(10);
  // Query the recording rules' series (job:compatd_client_*, see
  // k8s/monitoring/prometheusrule.yaml) instead of the raw ones.
  bool recorded = false;
};

FleetQueries BuildFleetQueries(const FleetQueryOptions& options);

// OK when `selector` is a comma-separated list of label matchers
// (name op "value", op one of = != =~ !~; values double-quoted with
// backslash escapes), at most 1024 bytes; INVALID_ARGUMENT naming what is
// wrong otherwise. Empty is OK.
absl::Status ValidateSelector(absl::string_view selector);

class FleetClients final {
 public:
  struct Options {
    // Where answers come from, for readers: "Prometheus at http://...".
    std::string source{};
    // An answer older than this is not used.
    absl::Duration max_age = absl::Seconds(45);
    // Defaults to absl::Now.
    std::function<absl::Time()> clock{};
  };

  struct State {
    // Null: no usable answer; why_not says why.
    std::shared_ptr<const FleetAnswer> answer;
    std::string why_not;
    std::string source{};
    // When the last attempt ended (InfinitePast: none yet).
    absl::Time last_attempt = absl::InfinitePast();
  };

  explicit FleetClients(Options options);
  FleetClients(const FleetClients&) = delete;
  FleetClients& operator=(const FleetClients&) = delete;

  void Publish(FleetAnswer answer);
  void Fail(const absl::Status& why);

  State Current() const;
  const std::string& source() const { return options_.source; }

 private:
  absl::Time Now() const;

  const Options options_;
  mutable std::mutex mu_;
  std::shared_ptr<const FleetAnswer> answer_ ABSL_GUARDED_BY(mu_);
  std::string error_ ABSL_GUARDED_BY(mu_);
  absl::Time error_since_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time last_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace compatd::runtime
