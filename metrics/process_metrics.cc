#include "metrics/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"

namespace compatd::metrics {
namespace {

std::optional<std::string> ReadWholeFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return contents.str();
}

// /proc/stat's "btime <seconds>" line.
std::optional<double> BootTimeSeconds() {
  std::optional<std::string> stat = ReadWholeFile("/proc/stat");
  if (!stat.has_value()) return std::nullopt;
  for (absl::string_view line : absl::StrSplit(*stat, '\n')) {
    if (absl::ConsumePrefix(&line, "btime ")) {
      double seconds = 0;
      if (absl::SimpleAtod(line, &seconds)) return seconds;
    }
  }
  return std::nullopt;
}

std::optional<double> OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  double count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the descriptor opendir() itself holds
}

std::optional<double> MaxFds() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return std::nullopt;
  if (limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<double>(limit.rlim_cur);
}

}  // namespace

absl::Status ParseProcStat(absl::string_view stat, double ticks_per_second,
                           double page_size, double boot_time_seconds,
                           ProcessStats* stats) {
  const size_t close = stat.rfind(')');
  if (close == absl::string_view::npos || ticks_per_second <= 0) {
    return absl::InvalidArgumentError(
        "/proc/self/stat: expected \"pid (comm) state ...\"");
  }
  // After ')': field 3 (state) is fields[0], so field N is fields[N - 3].
  std::vector<absl::string_view> fields =
      absl::StrSplit(stat.substr(close + 1), ' ', absl::SkipEmpty());
  constexpr size_t kUtime = 14 - 3, kStime = 15 - 3, kStartTime = 22 - 3,
                   kVsize = 23 - 3, kRss = 24 - 3;
  if (fields.size() <= kRss) {
    return absl::InvalidArgumentError(
        absl::StrCat("/proc/self/stat: expected at least 24 fields, got ",
                     fields.size() + 2));
  }
  double utime, stime, start, vsize, rss;
  if (!absl::SimpleAtod(fields[kUtime], &utime) ||
      !absl::SimpleAtod(fields[kStime], &stime) ||
      !absl::SimpleAtod(fields[kStartTime], &start) ||
      !absl::SimpleAtod(fields[kVsize], &vsize) ||
      !absl::SimpleAtod(fields[kRss], &rss)) {
    return absl::InvalidArgumentError(
        "/proc/self/stat: a time or memory field is not a number");
  }
  stats->cpu_seconds = (utime + stime) / ticks_per_second;
  stats->virtual_memory_bytes = vsize;
  stats->resident_memory_bytes = rss * page_size;
  stats->start_time_seconds = boot_time_seconds + start / ticks_per_second;
  return absl::OkStatus();
}

ProcessStats ReadProcessStats() {
  ProcessStats stats;
  std::optional<std::string> stat = ReadWholeFile("/proc/self/stat");
  std::optional<double> boot = BootTimeSeconds();
  if (stat.has_value() && boot.has_value()) {
    ProcessStats parsed;
    if (ParseProcStat(*stat, static_cast<double>(sysconf(_SC_CLK_TCK)),
                      static_cast<double>(sysconf(_SC_PAGESIZE)), *boot,
                      &parsed)
            .ok()) {
      stats = parsed;
    }
  }
  stats.open_fds = OpenFds();
  stats.max_fds = MaxFds();
  return stats;
}

namespace {

struct ProcessFamily {
  const char* name;
  const char* help;
  MetricType type;
  std::optional<double> ProcessStats::*field;
};

constexpr ProcessFamily kProcessFamilies[] = {
    {"process_cpu_seconds_total",
     "Total user and system CPU time spent in seconds.", MetricType::kCounter,
     &ProcessStats::cpu_seconds},
    {"process_resident_memory_bytes", "Resident memory size in bytes.",
     MetricType::kGauge, &ProcessStats::resident_memory_bytes},
    {"process_virtual_memory_bytes", "Virtual memory size in bytes.",
     MetricType::kGauge, &ProcessStats::virtual_memory_bytes},
    {"process_open_fds", "Number of open file descriptors.", MetricType::kGauge,
     &ProcessStats::open_fds},
    {"process_max_fds", "Maximum number of open file descriptors.",
     MetricType::kGauge, &ProcessStats::max_fds},
    {"process_start_time_seconds",
     "Start time of the process since unix epoch in seconds.",
     MetricType::kGauge, &ProcessStats::start_time_seconds},
};

// The six families from one read of /proc per scrape.
class ProcessCollectable final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    const ProcessStats stats = ReadProcessStats();
    std::vector<prometheus::MetricFamily> families;
    for (const ProcessFamily& spec : kProcessFamilies) {
      const std::optional<double>& value = stats.*spec.field;
      if (!value.has_value()) continue;
      prometheus::MetricFamily& family = families.emplace_back();
      family.name = spec.name;
      family.help = spec.help;
      prometheus::ClientMetric& metric = family.metric.emplace_back();
      if (spec.type == MetricType::kCounter) {
        family.type = prometheus::MetricType::Counter;
        metric.counter.value = *value;
      } else {
        family.type = prometheus::MetricType::Gauge;
        metric.gauge.value = *value;
      }
    }
    return families;
  }
};

}  // namespace

absl::Status RegisterProcessMetrics(Registry* registry) {
  std::vector<FamilyDescription> families;
  for (const ProcessFamily& spec : kProcessFamilies) {
    families.push_back(FamilyDescription{spec.name, spec.help, spec.type, {}});
  }
  return registry->AddCollectable(std::move(families),
                                  std::make_shared<ProcessCollectable>());
}

}  // namespace compatd::metrics
