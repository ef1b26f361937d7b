#pragma once

// Keeps runtime::FleetClients fed from Prometheus (--prometheus-url): a
// background thread asks the fleet queries (runtime::BuildFleetQueries) every
// `refresh` (--prometheus-cache-ttl), each within the client's timeout, and
// publishes the answer, or tells FleetClients it failed (readers then fall
// back to their replica's own view at once). Request threads only ever read
// the last result: N page loads are not N queries, and a slow or dead
// Prometheus never holds a request.
//
//   PrometheusPoller poller(options, &fleet, &registry);  // registers metrics
//   COMPATD_RETURN_IF_ERROR(poller.Init());
//   poller.Start();          // the first refresh starts at once
//   ...
//   poller.Stop();           // or the destructor: waits for a query in
//                            // flight (at most the timeout)
//
// Metrics:
//   compatd_prometheus_queries_total{result}: each refresh, "ok" or why it
//       failed: unreachable, timeout, http_error, prometheus_error,
//       bad_answer, too_large, no_replicas, config (a token or TLS file)
//   compatd_prometheus_last_success_timestamp_seconds
//   compatd_client_view_fleet: 1 while the fleet's answer is in use, else 0
// Failures are logged as warnings, at most base::kLogBurst lines a minute
// (base::LogLimited kind "prometheus"); the first success after failures is
// logged once.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "fleet/prometheus_client.h"
#include "metrics/registry.h"
#include "runtime/fleet_clients.h"

namespace compatd::fleet {

struct PrometheusPollerOptions {
  PrometheusClientOptions client{};
  runtime::FleetQueryOptions queries{};
  // How long an answer is reused before the next refresh.
  absl::Duration refresh = absl::Seconds(15);
  // Samples read per query, at most.
  int max_series = 10000;
};

class PrometheusPoller final {
 public:
  // `fleet` and `registry` (may be null: no metrics) must outlive this.
  PrometheusPoller(PrometheusPollerOptions options,
                   runtime::FleetClients* fleet, metrics::Registry* registry);
  ~PrometheusPoller();
  PrometheusPoller(const PrometheusPoller&) = delete;
  PrometheusPoller& operator=(const PrometheusPoller&) = delete;

  // Registers the metrics; the registry's error when it cannot.
  absl::Status Init();
  void Start();
  void Stop();

  // One refresh on the calling thread (the thread's loop, and tests): the
  // answer is published or the failure recorded; returns which.
  absl::Status RefreshOnce();

 private:
  absl::StatusOr<runtime::FleetAnswer> Fetch();
  void Run();

  const PrometheusPollerOptions options_;
  const runtime::FleetQueries queries_;
  runtime::FleetClients* const fleet_;
  metrics::Registry* const registry_;
  PrometheusClient client_;

  metrics::Family<metrics::Counter>* queries_total_ = nullptr;
  metrics::Gauge* last_success_ = nullptr;
  metrics::Gauge* view_fleet_ = nullptr;
  bool failing_ = false;  // the poller's thread only

  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace compatd::fleet
