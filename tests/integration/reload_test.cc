// Hot reload of the real binary, as a client sees it: a Kubernetes ConfigMap
// update is served without SIGHUP, WatchCatalog announces it, a bad catalog is
// rejected (and reported by GetCatalog and the metrics) while the old one keeps
// answering, SIGHUP reloads what inotify cannot see, and RPCs under load never
// fail while the catalog is swapped hundreds of times.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/metrics/http_client.h"
#include "tests/testing/configmap_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/time_scale.h"

namespace compatd {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Two catalogs that answer GetFeature{name: "Flip"} differently.
std::string CatalogWithFlip(bool enabled) {
  return std::string(
             "binaryVersion: \"1.36\"\n"
             "features:\n"
             "  - name: Flip\n"
             "    versionedSpecs:\n"
             "      - {version: \"1.30\", default: ") +
         (enabled ? "true" : "false") +
         ", lockToDefault: false, preRelease: Beta}\n"
         "apis: []\n";
}

class ReloadTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()); }

  void StartServer(const std::string& catalog_path,
                   std::vector<std::string> extra_args = {}) {
    std::vector<std::string> args = {
        "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
        "--catalog=" + catalog_path, "--reload-interval=0",
        "--shutdown-grace=2s"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    ASSERT_TRUE(server_.Start(COMPATD_BINARY, args));
    ASSERT_TRUE(server_.WaitForStderr("serving catalog", 20s))
        << server_.Stderr();
    ASSERT_TRUE(server_.WaitForStderr("/metrics", 5s)) << server_.Stderr();
    const std::string err = server_.Stderr();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(
        err, match, std::regex("gRPC listening on 127\\.0\\.0\\.1:([0-9]+)")));
    port_ = std::stoi(match[1]);
    ASSERT_TRUE(std::regex_search(
        err, match,
        std::regex("metrics on http://127\\.0\\.0\\.1:([0-9]+)/metrics")));
    metrics_port_ = std::stoi(match[1]);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::CompatibilityPolicy::NewStub(channel_);
  }

  // GetFeature{Flip}: the answer and the generation it came from.
  bool Flip(uint64_t* generation = nullptr, std::string* digest = nullptr) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::GetFeatureRequest request;
    request.set_name("Flip");
    v1::GetFeatureResponse response;
    const grpc::Status status = stub_->GetFeature(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    if (generation != nullptr) *generation = response.catalog_generation();
    if (digest != nullptr) *digest = response.catalog_digest();
    return response.enabled();
  }

  v1::GetCatalogResponse Catalog() {
    grpc::ClientContext context;
    v1::GetCatalogResponse response;
    EXPECT_TRUE(
        stub_->GetCatalog(&context, v1::GetCatalogRequest(), &response).ok());
    return response;
  }

  // Polls until GetFeature{Flip} answers `enabled`, up to `timeout`.
  bool WaitForFlip(bool enabled, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (Flip() == enabled) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }

  std::string Scrape() {
    auto response = testing::HttpRequest(metrics_port_, "GET", "/metrics");
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->body : "";
  }

  // Scrapes until the exposition contains `text`, up to 5 s; returns the last
  // scrape. The reload metrics are recorded by the reloader's thread right
  // after it publishes, so a call can see the new catalog a moment before a
  // scrape sees its metrics.
  std::string ScrapeUntil(absl::string_view text) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    std::string scrape = Scrape();
    while (!absl::StrContains(scrape, text) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
      scrape = Scrape();
    }
    return scrape;
  }

  testing::ScopedTempDir dir_;
  testing::Subprocess server_;
  int port_ = 0;
  int metrics_port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::CompatibilityPolicy::Stub> stub_;
};

TEST_F(ReloadTest, ConfigMapUpdateIsServedWithinOneSecondAndAnnounced) {
  testing::ConfigMapVolume volume(dir_.path());
  ASSERT_TRUE(volume.Write({{"catalog.yaml", CatalogWithFlip(false)}}).ok());
  StartServer(volume.Path("catalog.yaml"));
  EXPECT_FALSE(Flip());

  grpc::ClientContext watch_context;
  auto watch = stub_->WatchCatalog(&watch_context, v1::WatchCatalogRequest());
  v1::GetCatalogResponse current;
  ASSERT_TRUE(watch->Read(&current));
  EXPECT_EQ(current.generation(), 1u);

  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(volume.Write({{"catalog.yaml", CatalogWithFlip(true)}}).ok());
  v1::GetCatalogResponse next;
  ASSERT_TRUE(watch->Read(&next));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_EQ(next.generation(), 2u);
  EXPECT_NE(next.digest(), current.digest());
  uint64_t generation = 0;
  EXPECT_TRUE(Flip(&generation));
  EXPECT_EQ(generation, 2u);
  watch_context.TryCancel();
}

TEST_F(ReloadTest, BadCatalogIsRejectedReportedAndTheOldOneKeepsServing) {
  testing::ConfigMapVolume volume(dir_.path());
  ASSERT_TRUE(volume.Write({{"catalog.yaml", CatalogWithFlip(false)}}).ok());
  StartServer(volume.Path("catalog.yaml"));
  ASSERT_TRUE(
      volume
          .Write({{"catalog.yaml", "binaryVersion: \"1.36\"\nfeaturez: []\n"}})
          .ok());
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  v1::GetCatalogResponse info;
  while (std::chrono::steady_clock::now() < deadline) {
    info = Catalog();
    if (!info.last_error().empty()) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_THAT(info.last_error(), HasSubstr("catalog.yaml:2:"));
  EXPECT_THAT(info.last_error(), HasSubstr("featurez"));
  EXPECT_EQ(info.generation(), 1u);
  EXPECT_FALSE(Flip());  // the old catalog answers
  EXPECT_THAT(
      ScrapeUntil("compatd_catalog_reloads_total{result=\"rejected\"} 1"),
      HasSubstr("compatd_catalog_reloads_total{result=\"rejected\"} 1"));

  ASSERT_TRUE(volume.Write({{"catalog.yaml", CatalogWithFlip(true)}}).ok());
  ASSERT_TRUE(WaitForFlip(true, 5s));
  info = Catalog();
  EXPECT_EQ(info.generation(), 2u);
  EXPECT_EQ(info.last_error(), "");
  const std::string scrape = ScrapeUntil("compatd_catalog_generation 2");
  EXPECT_THAT(scrape,
              HasSubstr("compatd_catalog_reloads_total{result=\"loaded\"} 1"));
  EXPECT_THAT(scrape, HasSubstr("compatd_catalog_generation 2"));
  EXPECT_THAT(scrape, HasSubstr("compatd_catalog_info{digest=\"" +
                                info.digest() + "\""));
}

// Issue 17, item 6: the catalog replaced by unlinking it, writing a first
// part that is a valid catalog by itself (everything before `apis:`), waiting
// 0.5 s and writing the rest. compatd used to publish the first part (a
// generation with 0 group-versions) for those 0.5 s.
TEST_F(ReloadTest, CatalogWrittenInPlaceInPartsIsNeverServedHalfWritten) {
  const std::string path = dir_.Join("catalog.yaml");
  ASSERT_TRUE(testing::WriteFileContents(path, CatalogWithFlip(false)).ok());
  StartServer(path);
  const std::string full =
      "binaryVersion: \"1.36\"\n"
      "features:\n"
      "  - name: Flip\n"
      "    versionedSpecs:\n"
      "      - {version: \"1.30\", default: true, lockToDefault: false, "
      "preRelease: Beta}\n"
      "apis:\n"
      "  - group: apps\n"
      "    version: v1\n"
      "    resources:\n"
      "      - {resource: deployments, kind: Deployment, introduced: "
      "\"1.9\"}\n";
  const size_t apis = full.find("apis:");

  ASSERT_EQ(unlink(path.c_str()), 0);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, full.data(), apis), static_cast<ssize_t>(apis));
  // For 0.5 s (scaled: a TSan build answers a call in ~100 ms), every answer
  // comes from the old catalog.
  int answers = 0;
  const auto half_done =
      std::chrono::steady_clock::now() + testing::Scaled(500ms);
  while (std::chrono::steady_clock::now() < half_done) {
    uint64_t generation = 0;
    EXPECT_FALSE(Flip(&generation)) << "the half-written catalog is served";
    EXPECT_EQ(generation, 1u);
    ++answers;
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_GT(answers, 10);
  ASSERT_EQ(write(fd, full.data() + apis, full.size() - apis),
            static_cast<ssize_t>(full.size() - apis));
  ASSERT_EQ(close(fd), 0);

  // The whole file, as one new generation, at once.
  ASSERT_TRUE(WaitForFlip(true, 1000ms)) << server_.Stderr();
  const v1::GetCatalogResponse info = Catalog();
  EXPECT_EQ(info.generation(), 2u);
  EXPECT_EQ(info.counts().group_versions(), 1u);
  EXPECT_EQ(info.last_error(), "");
  EXPECT_THAT(
      ScrapeUntil("compatd_catalog_reloads_total{result=\"loaded\"} 1"),
      HasSubstr("compatd_catalog_reloads_total{result=\"rejected\"} 0"));
}

TEST_F(ReloadTest, SighupReloadsWhatInotifyCannotSee) {
  // The watched path is a symlink into another directory: a change behind it is
  // not an event in the watched directory, so only SIGHUP (or the backstop)
  // picks it up.
  const std::string real_dir = dir_.Join("real");
  const std::string link_dir = dir_.Join("link");
  ASSERT_EQ(mkdir(real_dir.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(link_dir.c_str(), 0755), 0);
  const std::string real = real_dir + "/catalog.yaml";
  ASSERT_TRUE(testing::WriteFileContents(real, CatalogWithFlip(false)).ok());
  ASSERT_EQ(symlink(real.c_str(), (link_dir + "/catalog.yaml").c_str()), 0);
  StartServer(link_dir + "/catalog.yaml");
  ASSERT_TRUE(testing::WriteFileContents(real, CatalogWithFlip(true)).ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(Flip());
  server_.Signal(SIGHUP);
  EXPECT_TRUE(WaitForFlip(true, 5s));
  // The log line is read from compatd's stderr pipe by another thread: wait
  // for it rather than look once (a TSan run looked before it arrived).
  EXPECT_TRUE(server_.WaitForStderr("SIGHUP", 5s)) << server_.Stderr();
}

TEST_F(ReloadTest, NoFailedCallsWhileTheCatalogIsSwappedHundredsOfTimes) {
  testing::ConfigMapVolume volume(dir_.path());
  ASSERT_TRUE(volume.Write({{"catalog.yaml", CatalogWithFlip(false)}}).ok());
  StartServer(volume.Path("catalog.yaml"));
  std::string digest_off;
  ASSERT_FALSE(Flip(nullptr, &digest_off));

  std::atomic<bool> stop{false};
  std::atomic<int> calls{0}, failures{0}, inconsistent{0};
  std::string digest_on;  // written once, before readers compare against it
  std::atomic<bool> digest_on_known{false};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&] {
      while (!stop.load()) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 10s);
        v1::GetFeatureRequest request;
        request.set_name("Flip");
        v1::GetFeatureResponse response;
        const grpc::Status status =
            stub_->GetFeature(&context, request, &response);
        calls.fetch_add(1);
        if (!status.ok()) {
          failures.fetch_add(1);
          continue;
        }
        // Every answer is the whole answer of one of the two catalogs.
        if (response.catalog_digest() == digest_off) {
          if (response.enabled()) inconsistent.fetch_add(1);
        } else if (digest_on_known.load() &&
                   response.catalog_digest() == digest_on) {
          if (!response.enabled()) inconsistent.fetch_add(1);
        } else if (!response.enabled()) {
          inconsistent.fetch_add(1);
        }
      }
    });
  }
  uint64_t last_generation = 1;
  for (int swap = 0; swap < 300; ++swap) {
    ASSERT_TRUE(
        volume.Write({{"catalog.yaml", CatalogWithFlip(swap % 2 == 0)}}).ok());
    std::this_thread::sleep_for(
        std::chrono::milliseconds(swap % 3 == 0 ? 60 : 5));
    if (swap == 0) {
      ASSERT_TRUE(WaitForFlip(true, 5s));
      Flip(nullptr, &digest_on);
      digest_on_known.store(true);
    }
  }
  stop.store(true);
  for (std::thread& t : clients) t.join();
  last_generation = Catalog().generation();
  EXPECT_EQ(failures.load(), 0) << "of " << calls.load() << " calls";
  EXPECT_EQ(inconsistent.load(), 0);
  EXPECT_GT(calls.load(), 100);
  EXPECT_GT(last_generation, 50u) << "the swaps should publish many catalogs";
}

}  // namespace
}  // namespace compatd
