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

}  // namespace
}  // namespace compatd
