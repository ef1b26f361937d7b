#include "runtime/dir_watcher.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/configmap_fixture.h"
#include "tests/testing/status_matchers.h"

namespace compatd::runtime {

// gtest prints events in failure messages through this (found by ADL).
void PrintTo(const DirEvent& event, std::ostream* os) {
  *os << "{" << DirEventKindName(event.kind) << ", \"" << event.name << "\"}";
}

namespace {

using ::compatd::testing::ConfigMapVolume;
using ::compatd::testing::ReadFileContents;
using ::compatd::testing::ScopedTempDir;
using ::compatd::testing::StatusIs;
using ::compatd::testing::WriteFileContents;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using Kind = DirEvent::Kind;

// Generous: these are upper bounds, the events normally arrive in microseconds.
constexpr absl::Duration kDeadline = absl::Seconds(5);

MATCHER_P2(Event, kind, name, "") {
  return arg.kind == kind && arg.name == name;
}

// Waits until an event equal to {kind, name} arrives (or the deadline passes);
// returns every event seen.
std::vector<DirEvent> WaitForEvent(DirWatcher& watcher, Kind kind,
                                   const std::string& name) {
  std::vector<DirEvent> seen;
  const absl::Time deadline = absl::Now() + kDeadline;
  while (absl::Now() < deadline) {
    DirWatcher::WaitResult result = watcher.Wait(deadline - absl::Now());
    for (DirEvent& event : result.events) {
      const bool match = event.kind == kind && event.name == name;
      seen.push_back(std::move(event));
      if (match) return seen;
    }
  }
  return seen;
}

class DirWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    absl::StatusOr<std::unique_ptr<DirWatcher>> watcher =
        DirWatcher::Create(dir_.path());
    ASSERT_OK(watcher);
    watcher_ = *std::move(watcher);
    ASSERT_TRUE(watcher_->watching()) << watcher_->watch_status();
  }

  ScopedTempDir dir_;
  std::unique_ptr<DirWatcher> watcher_;
};

TEST_F(DirWatcherTest, CreatingAFileReportsCreatedThenWritten) {
  ASSERT_OK(WriteFileContents(dir_.Join("catalog.yaml"), "a: 1\n"));

  std::vector<DirEvent> seen =
      WaitForEvent(*watcher_, Kind::kWritten, "catalog.yaml");

  EXPECT_THAT(seen, Contains(Event(Kind::kCreated, "catalog.yaml")));
  EXPECT_THAT(seen, Contains(Event(Kind::kWritten, "catalog.yaml")));
}

TEST_F(DirWatcherTest, RewritingInPlaceReportsWritten) {
  ASSERT_OK(WriteFileContents(dir_.Join("catalog.yaml"), "a: 1\n"));
  WaitForEvent(*watcher_, Kind::kWritten, "catalog.yaml");

  ASSERT_OK(WriteFileContents(dir_.Join("catalog.yaml"), "a: 2\n"));

  EXPECT_THAT(WaitForEvent(*watcher_, Kind::kWritten, "catalog.yaml"),
              Contains(Event(Kind::kWritten, "catalog.yaml")));
}

// A writer that has written but not closed yet: modified, and written only
// at its close.
TEST_F(DirWatcherTest, WritingReportsModifiedAndClosingReportsWritten) {
  const std::string path = dir_.Join("catalog.yaml");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "a: 1\n", 5), 5);
  std::vector<DirEvent> seen =
      WaitForEvent(*watcher_, Kind::kModified, "catalog.yaml");
  EXPECT_THAT(seen, Contains(Event(Kind::kCreated, "catalog.yaml")));
  EXPECT_THAT(seen, Not(Contains(Event(Kind::kWritten, "catalog.yaml"))));

  close(fd);
  EXPECT_THAT(WaitForEvent(*watcher_, Kind::kWritten, "catalog.yaml"),
              Contains(Event(Kind::kWritten, "catalog.yaml")));
}

// Editors (vim's backupcopy=no, `sed -i`, most config tools) write a temporary
// file and rename it over the original.
TEST_F(DirWatcherTest, RenameOverTheFileReportsMovedIn) {
  ASSERT_OK(WriteFileContents(dir_.Join("catalog.yaml"), "a: 1\n"));
  ASSERT_OK(WriteFileContents(dir_.Join(".catalog.yaml.swp"), "a: 2\n"));
  ASSERT_EQ(std::rename(dir_.Join(".catalog.yaml.swp").c_str(),
                        dir_.Join("catalog.yaml").c_str()),
            0);

  std::vector<DirEvent> seen =
      WaitForEvent(*watcher_, Kind::kMovedIn, "catalog.yaml");

  EXPECT_THAT(seen, Contains(Event(Kind::kMovedIn, "catalog.yaml")));
  EXPECT_THAT(seen, Contains(Event(Kind::kMovedOut, ".catalog.yaml.swp")));
}

// The kubelet's update never touches `catalog.yaml` itself (a symlink to
// `..data/catalog.yaml`); only the rename of `..data_tmp` over `..data` shows.
TEST_F(DirWatcherTest, ConfigMapSymlinkSwapReportsDataMovedIn) {
  ConfigMapVolume volume(dir_.path());
  ASSERT_OK(volume.Write({{"catalog.yaml", "a: 1\n"}}));
  ASSERT_OK_AND_ASSIGN(std::string first_ts, volume.CurrentTimestampDir());
  WaitForEvent(*watcher_, Kind::kMovedIn, "..data");

  ASSERT_OK_AND_ASSIGN(bool written,
                       volume.Write({{"catalog.yaml", "a: 2\n"}}));
  ASSERT_TRUE(written);
  std::vector<DirEvent> seen =
      WaitForEvent(*watcher_, Kind::kDeleted, first_ts);

  EXPECT_THAT(seen, Contains(Event(Kind::kCreated, "..data_tmp")));
  EXPECT_THAT(seen, Contains(Event(Kind::kMovedOut, "..data_tmp")));
  EXPECT_THAT(seen, Contains(Event(Kind::kMovedIn, "..data")));
  EXPECT_THAT(seen, Contains(Event(Kind::kDeleted, first_ts)));
  ASSERT_OK_AND_ASSIGN(std::string content,
                       ReadFileContents(volume.Path("catalog.yaml")));
  EXPECT_EQ(content, "a: 2\n");
}

TEST_F(DirWatcherTest, DeletingAFileReportsDeleted) {
  ASSERT_OK(WriteFileContents(dir_.Join("catalog.yaml"), "a: 1\n"));
  WaitForEvent(*watcher_, Kind::kWritten, "catalog.yaml");

  ASSERT_EQ(unlink(dir_.Join("catalog.yaml").c_str()), 0);

  EXPECT_THAT(WaitForEvent(*watcher_, Kind::kDeleted, "catalog.yaml"),
              Contains(Event(Kind::kDeleted, "catalog.yaml")));
}

TEST_F(DirWatcherTest, ChmodReportsAttributes) {
  ASSERT_OK(WriteFileContents(dir_.Join("catalog.yaml"), "a: 1\n"));
  WaitForEvent(*watcher_, Kind::kWritten, "catalog.yaml");

  ASSERT_EQ(chmod(dir_.Join("catalog.yaml").c_str(), 0600), 0);

  EXPECT_THAT(WaitForEvent(*watcher_, Kind::kAttributes, "catalog.yaml"),
              Contains(Event(Kind::kAttributes, "catalog.yaml")));
}

// A reloader reacting to events reads the file; that must not look like a
// change, or it would reload forever.
TEST_F(DirWatcherTest, ReadingAFileReportsNothing) {
  ASSERT_OK(WriteFileContents(dir_.Join("catalog.yaml"), "a: 1\n"));
  WaitForEvent(*watcher_, Kind::kWritten, "catalog.yaml");

  ASSERT_OK(ReadFileContents(dir_.Join("catalog.yaml")));
  DirWatcher::WaitResult result = watcher_->Wait(absl::Milliseconds(50));

  EXPECT_THAT(result.events, IsEmpty());
  EXPECT_FALSE(result.woken);
}

TEST_F(DirWatcherTest, WaitTimesOutWithNothing) {
  const absl::Time start = absl::Now();
  DirWatcher::WaitResult result = watcher_->Wait(absl::Milliseconds(20));

  EXPECT_THAT(result.events, IsEmpty());
  EXPECT_FALSE(result.woken);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(20));
}

TEST_F(DirWatcherTest, WakeFromAnotherThreadEndsAnInfiniteWait) {
  std::thread waker([this] { watcher_->Wake(); });
  DirWatcher::WaitResult result = watcher_->Wait(absl::InfiniteDuration());
  waker.join();

  EXPECT_TRUE(result.woken);
}

TEST_F(DirWatcherTest, WakeBeforeWaitIsNotLostAndIsConsumedOnce) {
  watcher_->Wake();
  watcher_->Wake();

  EXPECT_TRUE(watcher_->Wait(absl::InfiniteDuration()).woken);
  EXPECT_FALSE(watcher_->Wait(absl::ZeroDuration()).woken);
}

TEST_F(DirWatcherTest, RemovedDirectoryIsReportedAndWatchedAgainWhenBack) {
  ASSERT_OK(WriteFileContents(dir_.Join("catalog.yaml"), "a: 1\n"));
  WaitForEvent(*watcher_, Kind::kWritten, "catalog.yaml");

  ASSERT_OK(compatd::testing::RemoveAll(dir_.path()));
  WaitForEvent(*watcher_, Kind::kWatchLost, "");
  EXPECT_FALSE(watcher_->watching());
  EXPECT_THAT(watcher_->Wait(absl::ZeroDuration()).events, IsEmpty());

  ASSERT_EQ(mkdir(dir_.path().c_str(), 0755), 0);
  std::vector<DirEvent> back =
      WaitForEvent(*watcher_, Kind::kWatchEstablished, "");
  ASSERT_THAT(back, Contains(Event(Kind::kWatchEstablished, "")));
  EXPECT_TRUE(watcher_->watching());

  // Events in the new directory are reported.
  ASSERT_OK(WriteFileContents(dir_.Join("catalog.yaml"), "a: 2\n"));
  EXPECT_THAT(WaitForEvent(*watcher_, Kind::kWritten, "catalog.yaml"),
              Contains(Event(Kind::kWritten, "catalog.yaml")));
}

TEST_F(DirWatcherTest, DirectoryMovedAwayIsNoLongerFollowed) {
  const std::string moved = absl::StrCat(dir_.path(), ".moved");
  ASSERT_EQ(std::rename(dir_.path().c_str(), moved.c_str()), 0);
  WaitForEvent(*watcher_, Kind::kWatchLost, "");
  EXPECT_FALSE(watcher_->watching());

  // A change in the moved directory is not the watched path's business.
  ASSERT_OK(WriteFileContents(moved + "/catalog.yaml", "a: 1\n"));
  DirWatcher::WaitResult result = watcher_->Wait(absl::Milliseconds(30));
  EXPECT_THAT(result.events, IsEmpty());

  ASSERT_EQ(std::rename(moved.c_str(), dir_.path().c_str()), 0);
  EXPECT_THAT(WaitForEvent(*watcher_, Kind::kWatchEstablished, ""),
              Contains(Event(Kind::kWatchEstablished, "")));
}

TEST(DirWatcherMissingDirTest, MissingDirectoryIsWatchedOnceCreated) {
  ScopedTempDir parent;
  ASSERT_FALSE(parent.path().empty());
  const std::string dir = parent.Join("later");

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DirWatcher> watcher,
                       DirWatcher::Create(dir));
  EXPECT_FALSE(watcher->watching());
  EXPECT_THAT(watcher->watch_status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(dir)));

  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  EXPECT_THAT(WaitForEvent(*watcher, Kind::kWatchEstablished, ""),
              Contains(Event(Kind::kWatchEstablished, "")));
  EXPECT_TRUE(watcher->watching());
  EXPECT_OK(watcher->watch_status());
}

TEST(DirWatcherMissingDirTest, AFileIsNotADirectory) {
  ScopedTempDir parent;
  ASSERT_FALSE(parent.path().empty());
  ASSERT_OK(WriteFileContents(parent.Join("file"), "x"));

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DirWatcher> watcher,
                       DirWatcher::Create(parent.Join("file")));

  EXPECT_FALSE(watcher->watching());
  EXPECT_THAT(watcher->watch_status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("Not a directory")));
}

TEST(DirEventKindNameTest, NamesEveryKind) {
  const std::map<Kind, std::string> expected = {
      {Kind::kCreated, "created"},
      {Kind::kMovedIn, "moved-in"},
      {Kind::kMovedOut, "moved-out"},
      {Kind::kWritten, "written"},
      {Kind::kModified, "modified"},
      {Kind::kDeleted, "deleted"},
      {Kind::kAttributes, "attributes"},
      {Kind::kOverflow, "overflow"},
      {Kind::kWatchLost, "watch-lost"},
      {Kind::kWatchEstablished, "watch-established"},
  };
  for (const auto& [kind, name] : expected) {
    EXPECT_EQ(DirEventKindName(kind), name);
  }
}

}  // namespace
}  // namespace compatd::runtime
