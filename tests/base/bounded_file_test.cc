#include "base/bounded_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::base {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::HasSubstr;

class BoundedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/compatd-bounded-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
    close(fd);
    return path;
  }

  std::string dir_;
};

TEST_F(BoundedFileTest, ReadsARegularFile) {
  const std::string path = Write("a.pem", "hello");
  absl::StatusOr<std::string> bytes =
      ReadBoundedFile(path, {.max_bytes = 5, .what = "the key"});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, "hello");
}

TEST_F(BoundedFileTest, MissingFileIsNotFound) {
  EXPECT_THAT(
      ReadBoundedFile(dir_ + "/absent", {.max_bytes = 5, .what = "the key"}),
      StatusIs(absl::StatusCode::kNotFound,
               HasSubstr("absent: cannot open the key: No such file")));
}

TEST_F(BoundedFileTest, LargerThanTheLimitIsRefused) {
  const std::string path = Write("a.pem", "hello!");
  EXPECT_THAT(ReadBoundedFile(path, {.max_bytes = 5, .what = "the key"}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("the key is larger than the limit of 5 "
                                 "bytes")));
}

TEST_F(BoundedFileTest, DevicesAreRefusedUnread) {
  for (const char* device : {"/dev/zero", "/dev/urandom", "/dev/null"}) {
    EXPECT_THAT(ReadBoundedFile(device, {.max_bytes = 1 << 20}),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("not a regular file (it is a device)")))
        << device;
  }
}

TEST_F(BoundedFileTest, FifoIsRefusedWithoutWaitingForAWriter) {
  const std::string path = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  EXPECT_THAT(ReadBoundedFile(path, {.max_bytes = 1 << 20}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not a regular file (it is a FIFO)")));
}

TEST_F(BoundedFileTest, DirectoryIsRefusedWithAHint) {
  EXPECT_THAT(ReadBoundedFile(dir_, {.max_bytes = 1 << 20}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("it is a directory")));
}

TEST_F(BoundedFileTest, SparseHugeFileIsRefusedUnread) {
  const std::string path = dir_ + "/huge";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, int64_t{64} << 30), 0);
  close(fd);
  EXPECT_THAT(ReadBoundedFile(path, {.max_bytes = 1 << 20}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("larger than the limit")));
}

TEST_F(BoundedFileTest, FileOpenForWritingIsRefusedWhenAsked) {
  const std::string path = Write("catalog.yaml", "a: 1\n");
  const int writer = open(path.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(writer, 0);
  // Without the option it is read as it is.
  EXPECT_TRUE(ReadBoundedFile(path, {.max_bytes = 100}).ok());
  EXPECT_THAT(ReadBoundedFile(path, {.max_bytes = 100,
                                     .what = "the catalog",
                                     .refuse_while_written = true}),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("the catalog is open for writing")));
  EXPECT_EQ(FileOpenForWriting(path), true);
  close(writer);
  EXPECT_EQ(FileOpenForWriting(path), false);
  absl::StatusOr<std::string> bytes =
      ReadBoundedFile(path, {.max_bytes = 100, .refuse_while_written = true});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, "a: 1\n");
}

TEST_F(BoundedFileTest, OpenForWritingOfWhatCannotBeAskedIsUnknown) {
  EXPECT_EQ(FileOpenForWriting(dir_ + "/absent"), std::nullopt);
  EXPECT_EQ(FileOpenForWriting("/dev/null"), std::nullopt);
}

}  // namespace
}  // namespace compatd::base
