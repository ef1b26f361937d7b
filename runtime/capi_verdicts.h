#pragma once

// The last Cluster API hook verdict compatd gave each Cluster (gateway/
// capi_extension.h), for the status page: bounded (the oldest cluster is
// dropped past `max_clusters`), kept in memory only. Thread-safe.

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace compatd::runtime {

struct CapiVerdict {
  std::string cluster;  // "namespace/name"
  std::string hook;     // "BeforeControlPlaneUpgrade"
  std::string status;   // "Success", "Failure"
  int retry_after_seconds = 0;
  std::string from;  // versions of the request ("v1.35.4"), may be empty
  std::string to;
  std::string message;  // the response's message
  absl::Time at;
};

class CapiVerdicts final {
 public:
  explicit CapiVerdicts(size_t max_clusters = 256)
      : max_clusters_(max_clusters) {}
  CapiVerdicts(const CapiVerdicts&) = delete;
  CapiVerdicts& operator=(const CapiVerdicts&) = delete;

  // Replaces the cluster's last verdict.
  void Record(CapiVerdict verdict);
  // Every cluster's last verdict, the latest first.
  std::vector<CapiVerdict> List() const;

 private:
  const size_t max_clusters_;
  mutable std::mutex mu_;
  std::map<std::string, CapiVerdict> by_cluster_ ABSL_GUARDED_BY(mu_);
};

}  // namespace compatd::runtime
