// base::WorkPool: work runs on the pool's threads, at most `max_queued` wait,
// more is refused at once, Stop() lets queued work finish.

#include "base/work_pool.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "gtest/gtest.h"

namespace compatd::base {
namespace {

// Work that holds its thread until released.
class Gate {
 public:
  void Wait() { released_.wait(); }
  void Release() { promise_.set_value(); }

 private:
  std::promise<void> promise_;
  std::shared_future<void> released_ = promise_.get_future().share();
};

void WaitFor(const std::function<bool()>& condition) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(WorkPoolTest, RefusesAtOnceWhenThreadsAndQueueAreFull) {
  Gate gate;  // outlives the pool's threads
  WorkPool pool({"test", 1, 2});
  std::atomic<int> done{0};
  ASSERT_TRUE(pool.TrySubmit([&] {
    gate.Wait();
    ++done;
  }));
  WaitFor([&] { return pool.running() == 1; });
  EXPECT_TRUE(pool.TrySubmit([&] { ++done; }));
  EXPECT_TRUE(pool.TrySubmit([&] { ++done; }));
  EXPECT_EQ(pool.queued(), 2);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(pool.TrySubmit([&] { ADD_FAILURE() << "refused work ran"; }));
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(50));
  EXPECT_EQ(pool.rejected(), 1);
  gate.Release();
  WaitFor([&] { return done.load() == 3; });
  EXPECT_EQ(done.load(), 3);
  EXPECT_EQ(pool.queued(), 0);
}

TEST(WorkPoolTest, NoQueueMeansOnlyIdleThreadsTakeWork) {
  Gate gate;  // outlives the pool's threads
  WorkPool pool({"test", 2, 0});
  EXPECT_TRUE(pool.TrySubmit([&] { gate.Wait(); }));
  EXPECT_TRUE(pool.TrySubmit([&] { gate.Wait(); }));
  EXPECT_FALSE(pool.TrySubmit([] {}));
  gate.Release();
}

TEST(WorkPoolTest, StopFinishesQueuedWorkAndRefusesNew) {
  std::atomic<int> done{0};
  WorkPool pool({"test", 1, 8});
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(pool.TrySubmit([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ++done;
    }));
  }
  pool.Stop();
  EXPECT_EQ(done.load(), 5);
  EXPECT_FALSE(pool.TrySubmit([] {}));
  pool.Stop();  // idempotent
}

}  // namespace
}  // namespace compatd::base
