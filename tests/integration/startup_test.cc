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
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_certs.h"

extern char** environ;

namespace compatd {
namespace {

using ::compatd::testing::CompatdProcess;
using ::compatd::testing::RunCompatd;
using ::compatd::testing::RunResult;
using ::compatd::testing::Subprocess;
using ::compatd::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;
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

// gRPC's default health service says SERVING for "" from the moment the
// server starts; compatd says NOT_SERVING on every health door (and 503 on
// /healthz) from the moment it announces its ports until the first catalog is
// served. A test harness that waited for SERVING once beat the catalog.
int PortFromLog(const std::string& log, const std::string& pattern) {
  std::smatch match;
  if (!std::regex_search(log, match, std::regex(pattern))) return 0;
  return std::stoi(match[1]);
}

std::string HealthOf(int port, const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 5s);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) return "error: " + status.error_message();
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
      response.status());
}

TEST(StartupTest, NothingSaysServingBeforeTheFirstCatalog) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string catalog = dir.path() + "/catalog.yaml";
  // A catalog still open for writing holds start-up after the ports are up.
  const int writer =
      open(catalog.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(writer, 0);
  const std::string text = "binaryVersion: \"1.36\"\nfeatures: []\n";
  ASSERT_EQ(write(writer, text.data(), text.size()),
            static_cast<ssize_t>(text.size()));
  Subprocess process;
  ASSERT_TRUE(testing::StartTiedToThisProcess(
      process, COMPATD_BINARY,
      {"--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
       "--health-listen=127.0.0.1:0", "--http-listen=127.0.0.1:0",
       "--catalog=" + catalog}));
  ASSERT_TRUE(process.WaitForStderr("open for writing", 10s))
      << process.Stderr();
  const std::string log = process.Stderr();
  const int grpc_port =
      PortFromLog(log, "gRPC listening on 127\\.0\\.0\\.1:([0-9]+)");
  const int health_port =
      PortFromLog(log, "plaintext\\) on 127\\.0\\.0\\.1:([0-9]+)");
  const int http_port =
      PortFromLog(log, "JSON on http://127\\.0\\.0\\.1:([0-9]+)");
  ASSERT_NE(grpc_port, 0) << log;
  ASSERT_NE(health_port, 0) << log;
  ASSERT_NE(http_port, 0) << log;
  for (const int port : {grpc_port, health_port}) {
    for (const std::string service : {"", "compatd.v1.CompatibilityPolicy"}) {
      EXPECT_EQ(HealthOf(port, service), "NOT_SERVING")
          << "port " << port << " service \"" << service << "\"";
    }
  }
  absl::StatusOr<testing::HttpReply> early =
      testing::HttpGet(http_port, "/healthz");
  ASSERT_TRUE(early.ok()) << early.status();
  EXPECT_EQ(early->status, 503) << early->body;

  close(writer);
  ASSERT_TRUE(process.WaitForStderr("serving catalog", 10s))
      << process.Stderr();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (HealthOf(grpc_port, "") != "SERVING" &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  for (const int port : {grpc_port, health_port}) {
    for (const std::string service : {"", "compatd.v1.CompatibilityPolicy"}) {
      EXPECT_EQ(HealthOf(port, service), "SERVING")
          << "port " << port << " service \"" << service << "\"";
    }
  }
  absl::StatusOr<testing::HttpReply> later =
      testing::HttpGet(http_port, "/healthz");
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(later->status, 200) << later->body;
  process.Signal(SIGTERM);
  EXPECT_EQ(process.Wait(10s), std::optional<int>(0)) << process.Stderr();
}

// ---------------------------------------------------------------------------
// Item 8: SIGTERM works from the first instant. Signals used to be blocked
// from the start of RunServer and taken only once start-up was over, so a
// start-up that waited (a FIFO key, before those were refused) ignored
// SIGTERM. A catalog still open for writing makes start-up wait now.

TEST(StartupTest, SigtermDuringStartupExitsAtOnce) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string catalog = dir.path() + "/catalog.yaml";
  const int writer = open(catalog.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(writer, 0);
  const std::string partial = "binaryVersion: \"1.36\"\nfeatures: []\n";
  ASSERT_EQ(write(writer, partial.data(), partial.size()),
            static_cast<ssize_t>(partial.size()));

  Subprocess process;
  ASSERT_TRUE(testing::StartTiedToThisProcess(
      process, COMPATD_BINARY,
      {"--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
       "--catalog=" + catalog}));
  ASSERT_TRUE(process.WaitForStderr("open for writing", 10s))
      << process.Stderr();
  const auto start = std::chrono::steady_clock::now();
  process.Signal(SIGTERM);
  const std::optional<int> code = process.Wait(3s);
  close(writer);
  ASSERT_TRUE(code.has_value()) << "SIGTERM ignored during start-up:\n"
                                << process.Stderr();
  // The wait for the writer polls every 100 ms and would go on for a
  // minute: well under that is "at once" (2 s leaves room for a loaded
  // machine; 1.1 s was seen with two builds running beside the test).
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(*code, 0);
  EXPECT_THAT(process.Stderr(), HasSubstr("received SIGTERM during start-up"));
  EXPECT_THAT(process.Stderr(), Not(HasSubstr("serving catalog")));
}

// ---------------------------------------------------------------------------
// Item 8: files named on the command line are read within bounds and without
// blocking. --tls-key=/dev/zero used to be read until the OOM killer ended
// the process, a FIFO blocked start-up in open() for ever.

class TlsFileBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.MakeCa("ca1"));
    ASSERT_TRUE(certs_.MakeServer("ca1", "server1"));
    ASSERT_TRUE(certs_.MakeClient("ca1", "client1"));
    ASSERT_TRUE(certs_.MakeCa("ca2"));
    ASSERT_TRUE(certs_.MakeServer("ca2", "server2"));
    ASSERT_TRUE(certs_.Replace("server1.crt", "tls.crt"));
    ASSERT_TRUE(certs_.Replace("server1.key", "tls.key"));
  }

  // Runs compatd with `tls_flags` and expects it to exit 1 within 5 s with
  // `message` on stderr.
  void ExpectStartupFails(const std::vector<std::string>& tls_flags,
                          const std::string& message) {
    std::vector<std::string> args = {"--listen=127.0.0.1:0",
                                     "--metrics-listen=127.0.0.1:0"};
    args.insert(args.end(), tls_flags.begin(), tls_flags.end());
    Subprocess process;
    ASSERT_TRUE(testing::StartTiedToThisProcess(process, COMPATD_BINARY, args));
    const std::optional<int> code = process.Wait(5s);
    if (!code.has_value()) {
      const absl::StatusOr<int64_t> rss = testing::VmRssBytes(process.pid());
      FAIL() << "still starting after 5 s (RSS " << (rss.ok() ? *rss >> 20 : -1)
             << " MiB); stderr:\n"
             << process.Stderr();
    }
    EXPECT_EQ(*code, 1);
    EXPECT_THAT(process.Stderr(), HasSubstr(message));
  }

  // GetCatalog over TLS trusting `ca`.
  grpc::Status Call(int port, const std::string& ca) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = certs_.Read(ca + ".crt");
    auto stub = v1::CompatibilityPolicy::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", port), grpc::SslCredentials(options)));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 3s);
    v1::GetCatalogResponse response;
    return stub->GetCatalog(&context, v1::GetCatalogRequest(), &response);
  }

  testing::TestCerts certs_;
};

TEST_F(TlsFileBoundsTest, KeyFromDevZeroFailsStartupAtOnce) {
  ExpectStartupFails(
      {"--tls-cert=" + certs_.Path("tls.crt"), "--tls-key=/dev/zero"},
      "--tls-key=/dev/zero: not a regular file (it is a device)");
}

TEST_F(TlsFileBoundsTest, CertFromDevUrandomFailsStartupAtOnce) {
  ExpectStartupFails({"--metrics-tls-cert=/dev/urandom",
                      "--metrics-tls-key=" + certs_.Path("tls.key")},
                     "--metrics-tls-cert=/dev/urandom: not a regular file");
}

TEST_F(TlsFileBoundsTest, KeyThatIsAFifoFailsStartupAtOnce) {
  const std::string fifo = certs_.Path("fifo.key");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ExpectStartupFails(
      {"--tls-cert=" + certs_.Path("tls.crt"), "--tls-key=" + fifo},
      "--tls-key=" + fifo + ": not a regular file (it is a FIFO)");
}

TEST_F(TlsFileBoundsTest, ClientCaOverTheLimitFailsStartup) {
  const std::string huge = certs_.Path("huge-ca.crt");
  std::string bytes = certs_.Read("ca1.crt");
  while (bytes.size() <= (1u << 20)) bytes += certs_.Read("ca1.crt");
  ASSERT_TRUE(testing::WriteFile(huge, bytes));
  ExpectStartupFails(
      {"--tls-cert=" + certs_.Path("tls.crt"),
       "--tls-key=" + certs_.Path("tls.key"), "--tls-client-ca=" + huge},
      "the file is larger than the limit of 1048576 bytes");
}

// gRPC's own certificate watcher read the files itself on every refresh: a
// FIFO put in place of the key blocked its thread in open() for ever, and no
// later rotation was ever seen. compatd now reads them and hands gRPC copies.
TEST_F(TlsFileBoundsTest, RotationThroughAFifoKeepsServingAndRotatesLater) {
  Subprocess server;
  ASSERT_TRUE(testing::StartTiedToThisProcess(
      server, COMPATD_BINARY,
      {"--listen=127.0.0.1:0", "--metrics-listen=", "--shutdown-grace=1s",
       "--tls-refresh-interval=1s", "--tls-cert=" + certs_.Path("tls.crt"),
       "--tls-key=" + certs_.Path("tls.key")}));
  ASSERT_TRUE(server.WaitForStderr("serving catalog", 20s)) << server.Stderr();
  std::smatch match;
  const std::string startup = server.Stderr();
  ASSERT_TRUE(std::regex_search(
      startup, match,
      std::regex("gRPC listening on 127\\.0\\.0\\.1:([0-9]+)")));
  const int port = std::stoi(match[1]);
  ASSERT_TRUE(Call(port, "ca1").ok());

  // The key becomes a FIFO (renamed into place, as a Secret update would).
  const std::string fifo = certs_.Path("fifo.key");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(rename(fifo.c_str(), certs_.Path("tls.key").c_str()), 0);
  ASSERT_TRUE(server.WaitForStderr("not a regular file (it is a FIFO)", 10s))
      << server.Stderr();
  std::this_thread::sleep_for(2500ms);  // two more refreshes
  EXPECT_TRUE(Call(port, "ca1").ok()) << "the previous pair keeps serving";

  // Then a real rotation: it must still be seen.
  ASSERT_TRUE(certs_.Replace("server2.crt", "tls.crt"));
  ASSERT_TRUE(certs_.Replace("server2.key", "tls.key"));
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  bool rotated = false;
  while (!rotated && std::chrono::steady_clock::now() < deadline) {
    rotated = Call(port, "ca2").ok();
    if (!rotated) std::this_thread::sleep_for(200ms);
  }
  EXPECT_TRUE(rotated) << server.Stderr();
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(10s), 0);
}

}  // namespace
}  // namespace compatd
