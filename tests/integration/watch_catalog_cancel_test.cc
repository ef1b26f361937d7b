// WatchCatalog streams that the client cancels while catalogs are being
// published all finish on the server. compatd-soak found some never did: a
// cancellation that came while a message was being written left the finish
// to the write's completion, which only finished the stream when the write
// failed; a write that still succeeded left the stream (its call, reactor and
// catalog snapshot) open until shutdown. grpc_server_started_total and
// grpc_server_handled_total show it: started streams never counted as
// handled. Each stream also announces every catalog once: the soak once saw a
// generation twice (the catalog a stream starts with, announced again by the
// reload that had just published it).

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"

namespace compatd {
namespace {

using ::compatd::testing::CompatdProcess;
using ::compatd::testing::TempDir;
using namespace std::chrono_literals;

// A valid catalog; `serial` makes each one distinct (a new digest, so every
// swap publishes and every open stream gets a message).
std::string Catalog(int serial) {
  return absl::StrCat("binaryVersion: \"1.36\"\nfeatures: []\napis: []\n# ",
                      serial, "\n");
}

// started - handled of WatchCatalog, from one scrape.
absl::StatusOr<double> StreamsNotFinished(const CompatdProcess& compatd) {
  absl::StatusOr<std::string> scrape = compatd.Scrape();
  if (!scrape.ok()) return scrape.status();
  absl::StatusOr<std::vector<testing::Sample>> samples =
      testing::ParseExposition(*scrape);
  if (!samples.ok()) return samples.status();
  double open = 0;
  const std::map<std::string, std::string> watch = {
      {"grpc_method", "WatchCatalog"}};
  for (const auto& s :
       testing::Select(*samples, "grpc_server_started_total", watch)) {
    open += s.value;
  }
  for (const auto& s :
       testing::Select(*samples, "grpc_server_handled_total", watch)) {
    open -= s.value;
  }
  return open;
}

TEST(WatchCatalogCancelTest, EveryCancelledStreamFinishesWhileCatalogsChange) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.path() + "/catalog.yaml";
  ASSERT_TRUE(testing::WriteFile(path, Catalog(0)));
  CompatdProcess compatd;
  ASSERT_TRUE(compatd.Start({"--catalog=" + path, "--reload-interval=0"}).ok())
      << compatd.Stderr();

  // Publishes a new catalog every 5 ms (write, then rename).
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    for (int serial = 1; !stop.load(); ++serial) {
      const std::string tmp = path + ".tmp";
      if (testing::WriteFile(tmp, Catalog(serial))) {
        std::rename(tmp.c_str(), path.c_str());
      }
      std::this_thread::sleep_for(5ms);
    }
  });

  // Four clients, 150 streams each.
  constexpr int kClients = 4;
  constexpr int kStreams = 150;
  std::atomic<int> cancelled{0};
  std::atomic<int> repeated{0};  // messages not newer than the one before
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, channel = compatd.NewChannel()] {
      auto stub = v1::CompatibilityPolicy::NewStub(channel);
      for (int i = 0; i < kStreams; ++i) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 10s);
        std::unique_ptr<grpc::ClientReader<v1::GetCatalogResponse>> stream =
            stub->WatchCatalog(&context, v1::WatchCatalogRequest());
        v1::GetCatalogResponse message;
        // The first message, then 0-2 published ones: cancel while the
        // server is likely writing the next. Each announces a newer catalog.
        uint64_t previous = 0;
        for (int read = 0; read <= i % 3 && stream->Read(&message); ++read) {
          if (message.generation() <= previous) repeated.fetch_add(1);
          previous = message.generation();
        }
        context.TryCancel();
        while (stream->Read(&message)) {
        }
        if (stream->Finish().error_code() == grpc::StatusCode::CANCELLED) {
          cancelled.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& client : clients) client.join();
  stop.store(true);
  swapper.join();
  EXPECT_EQ(cancelled.load(), kClients * kStreams);
  EXPECT_EQ(repeated.load(), 0);

  // Every stream is over on the client; the server's bookkeeping follows
  // within moments.
  absl::StatusOr<double> open = StreamsNotFinished(compatd);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (open.ok() && *open != 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    open = StreamsNotFinished(compatd);
  }
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_EQ(*open, 0) << "WatchCatalog streams started but never finished";
  EXPECT_EQ(compatd.Stop(), 0);
}

}  // namespace
}  // namespace compatd
