#pragma once

// Debian's real Prometheus as a child of the test (tests/integration): on
// 127.0.0.1 at a free port read back from its log, ready once /-/ready
// answers 200; SIGTERM on Stop() and destruction (the Subprocess then
// SIGKILLs it if it did not exit). Used by the metrics tests (promtool's
// server side) and the fleet view's tests.

#include <signal.h>

#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/subprocess.h"

namespace compatd::testing {

inline constexpr char kPrometheus[] = "/usr/bin/prometheus";

class PrometheusProcess {
 public:
  ~PrometheusProcess() { Stop(); }

  // Starts it with `config` and its TSDB under `data_dir`, and waits (up to
  // 30 s) until it is ready.
  absl::Status Start(const std::string& config, const std::string& data_dir) {
    using namespace std::chrono_literals;
    if (!StartTiedToThisProcess(
            process_, kPrometheus,
            {"--config.file=" + config, "--storage.tsdb.path=" + data_dir,
             "--web.listen-address=127.0.0.1:0", "--log.level=info"})) {
      return absl::InternalError(absl::StrCat("cannot start ", kPrometheus));
    }
    if (!process_.WaitForStderr("msg=\"Listening on\"", 30s)) {
      return absl::DeadlineExceededError(
          absl::StrCat("Prometheus did not report its address; stderr:\n",
                       process_.Stderr()));
    }
    std::smatch match;
    const std::string err = process_.Stderr();
    if (!std::regex_search(
            err, match,
            std::regex(
                "msg=\"Listening on\" address=127\\.0\\.0\\.1:([0-9]+)"))) {
      return absl::InternalError(absl::StrCat("no port in:\n", err));
    }
    port_ = std::stoi(match[1]);
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      absl::StatusOr<HttpReply> ready = HttpGet(port_, "/-/ready");
      if (ready.ok() && ready->status == 200) return absl::OkStatus();
      std::this_thread::sleep_for(50ms);
    }
    return absl::DeadlineExceededError(absl::StrCat(
        "Prometheus never became ready; stderr:\n", process_.Stderr()));
  }

  // SIGTERM; the exit code, or nullopt if it did not exit within 15 s.
  std::optional<int> Stop() {
    using namespace std::chrono_literals;
    if (process_.pid() <= 0) return std::nullopt;  // never started
    if (std::optional<int> code = process_.Wait(0ms)) return code;
    process_.Signal(SIGTERM);
    return process_.Wait(15s);
  }

  int port() const { return port_; }
  std::string Stderr() const { return process_.Stderr(); }

 private:
  Subprocess process_;
  int port_ = 0;
};

}  // namespace compatd::testing
