#pragma once

// The standard process metrics, read from Linux /proc at scrape time, with
// the names and meanings of Prometheus' client_golang process collector:
//
//   process_cpu_seconds_total      user + system CPU time (counter)
//   process_resident_memory_bytes  resident set size
//   process_virtual_memory_bytes   virtual memory size
//   process_open_fds               open file descriptors
//   process_max_fds                the soft RLIMIT_NOFILE
//   process_start_time_seconds     start time, seconds since the Unix epoch
//
// One prometheus::Collectable reads /proc once per scrape for all six. A value
// that cannot be read (no /proc) is left out of the scrape.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "metrics/registry.h"

namespace compatd::metrics {

// Registers the six families. ALREADY_EXISTS if already registered.
absl::Status RegisterProcessMetrics(Registry* registry);

// What the metrics report, read once. Exposed for tests; each field is
// std::nullopt when it cannot be read.
struct ProcessStats {
  std::optional<double> cpu_seconds;
  std::optional<double> resident_memory_bytes;
  std::optional<double> virtual_memory_bytes;
  std::optional<double> open_fds;
  std::optional<double> max_fds;
  std::optional<double> start_time_seconds;
};
ProcessStats ReadProcessStats();

// Parses the contents of /proc/<pid>/stat into cpu_seconds, virtual and
// resident memory and start time. `ticks_per_second` is sysconf(_SC_CLK_TCK),
// `page_size` sysconf(_SC_PAGESIZE), `boot_time_seconds` /proc/stat's btime.
// The command name (field 2) may contain spaces and parentheses: fields are
// counted from the last ')'. INVALID_ARGUMENT when the text is malformed.
absl::Status ParseProcStat(absl::string_view stat, double ticks_per_second,
                           double page_size, double boot_time_seconds,
                           ProcessStats* stats);

}  // namespace compatd::metrics
