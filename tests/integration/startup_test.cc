// Start-up and process hygiene of the real binary: a port in use is a
// start-up error, SIGPIPE never ends the process, files given on the command
// line are read within bounds and without blocking, and SIGTERM works from the
// first instant.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/subprocess.h"

extern char** environ;

namespace compatd {
namespace {

using ::compatd::testing::CompatdProcess;
using ::compatd::testing::RunCompatd;
using ::compatd::testing::RunResult;
using ::compatd::testing::Subprocess;
using ::compatd::testing::TempDir;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------
// Item 7: gRPC sets SO_REUSEPORT by default; a second compatd on the same
// address used to start and take half of the connections.

TEST(StartupTest, GrpcPortInUseFailsStartupNamingTheAddress) {
  CompatdProcess first;
  ASSERT_TRUE(first.Start().ok());
  const std::string address = absl::StrCat("127.0.0.1:", first.grpc_port());

  Subprocess second;
  ASSERT_TRUE(second.Start(
      COMPATD_BINARY, {"--listen=" + address, "--metrics-listen=127.0.0.1:0"}));
  const std::optional<int> code = second.Wait(10s);
  ASSERT_TRUE(code.has_value())
      << "a second compatd started on " << address << ":\n"
      << second.Stderr();
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(second.Stderr(), HasSubstr("--listen=" + address));
  EXPECT_EQ(first.Stop(), 0);
}

TEST(StartupTest, HealthPortInUseFailsStartupNamingTheAddress) {
  CompatdProcess first;
  ASSERT_TRUE(first.Start({"--health-listen=127.0.0.1:0"}).ok());
  std::smatch match;
  const std::string err = first.Stderr();
  ASSERT_TRUE(std::regex_search(
      err, match, std::regex("plaintext\\) on 127\\.0\\.0\\.1:([0-9]+)")))
      << err;
  const std::string address = absl::StrCat("127.0.0.1:", match[1].str());

  Subprocess second;
  ASSERT_TRUE(second.Start(
      COMPATD_BINARY, {"--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                       "--health-listen=" + address}));
  const std::optional<int> code = second.Wait(10s);
  ASSERT_TRUE(code.has_value())
      << "a second health port started on " << address << ":\n"
      << second.Stderr();
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(second.Stderr(), HasSubstr("--health-listen=" + address));
  EXPECT_EQ(first.Stop(), 0);
}

// ---------------------------------------------------------------------------
// Item 9: with /metrics off, nothing else ignored SIGPIPE, and a log line
// written to a closed stderr pipe ended the process (status 141).

// compatd with stderr on a pipe whose read end the test closes.
class ClosedStderrProcess {
 public:
  ~ClosedStderrProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (read_fd_ >= 0) close(read_fd_);
  }

  // Starts compatd with `args` and reads stderr until `ready` appears.
  bool Start(const std::vector<std::string>& args, const std::string& ready) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    std::vector<char*> argv = {const_cast<char*>(COMPATD_BINARY)};
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, COMPATD_BINARY, &actions, nullptr,
                               argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    read_fd_ = fds[0];
    if (rc != 0) {
      pid_ = -1;
      return false;
    }
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    char buffer[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p = {read_fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = read(read_fd_, buffer, sizeof(buffer));
      if (n <= 0) return false;
      err_.append(buffer, static_cast<size_t>(n));
      if (err_.find(ready) != std::string::npos) return true;
    }
    return false;
  }

  void CloseStderr() {
    close(read_fd_);
    read_fd_ = -1;
  }

  pid_t pid() const { return pid_; }
  const std::string& err() const { return err_; }

  // The exit code (128 + signal when killed), or nullopt after `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(5ms);
    }
    return std::nullopt;
  }

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
  bool exited_ = false;
  std::string err_;
};

TEST(StartupTest, ClosedStderrDoesNotKillItWithMetricsOff) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string catalog = dir.path() + "/catalog.yaml";
  ASSERT_TRUE(testing::WriteFile(
      catalog, "binaryVersion: \"1.36\"\nfeatures: []\napis: []\n"));
  ClosedStderrProcess process;
  ASSERT_TRUE(process.Start({"--listen=127.0.0.1:0", "--metrics-listen=",
                             "--catalog=" + catalog, "--shutdown-grace=1s"},
                            "serving catalog"))
      << process.err();
  process.CloseStderr();
  // Each SIGHUP logs a line ("SIGHUP: reloading the catalog"), now to a pipe
  // nobody reads.
  for (int i = 0; i < 3; ++i) {
    kill(process.pid(), SIGHUP);
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(process.Wait(500ms), std::nullopt)
      << "compatd ended after writing to a closed stderr";
  kill(process.pid(), SIGTERM);
  EXPECT_EQ(process.Wait(10s), 0);
}

}  // namespace
}  // namespace compatd
