#include "runtime/catalog_reloader.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "catalog/catalog_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/catalog_pipeline.h"
#include "runtime/catalog_source.h"
#include "tests/testing/configmap_fixture.h"
#include "tests/testing/status_matchers.h"

namespace compatd::runtime {
namespace {

using ::compatd::testing::ConfigMapVolume;
using ::compatd::testing::RemoveAll;
using ::compatd::testing::ScopedTempDir;
using ::compatd::testing::StatusIs;
using ::compatd::testing::WriteFileContents;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// The smallest valid catalog, and one with a feature.
constexpr absl::string_view kCatalogV1 =
    "binaryVersion: \"1.36\"\nfeatures: []\napis: []\n";
constexpr absl::string_view kCatalogV2 =
    "binaryVersion: \"1.36\"\n"
    "features:\n"
    "  - name: WatchList\n"
    "    versionedSpecs:\n"
    "      - {version: \"1.36\", default: true, lockToDefault: false, "
    "preRelease: Beta}\n"
    "apis: []\n";
// Line 2 has a key the schema does not know.
constexpr absl::string_view kBroken =
    "binaryVersion: \"1.36\"\ncolour: blue\nfeatures: []\napis: []\n";
// Another broken one (line 3), to tell rejections apart.
constexpr absl::string_view kBroken2 =
    "binaryVersion: \"1.36\"\nfeatures: []\nflavour: mint\napis: []\n";

// Upper bound for things that normally take milliseconds.
constexpr absl::Duration kDeadline = absl::Seconds(5);

bool PollUntil(const std::function<bool()>& done,
               absl::Duration timeout = kDeadline) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

class RecordingListener final {
 public:
  struct Record {
    ReloadResult result;
    uint64_t generation;  // of `published`; 0 when null
    std::string error;
  };

  void OnReload(ReloadResult result, const ServingSnapshot* published,
                absl::string_view error) {
    std::lock_guard<std::mutex> lock(mu_);
    records_.push_back({result,
                        published == nullptr ? 0 : published->generation,
                        std::string(error)});
  }

  std::vector<Record> records() const {
    std::lock_guard<std::mutex> lock(mu_);
    return records_;
  }

  // The latest record with `result`, if any.
  std::optional<Record> Last(ReloadResult result) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = records_.rbegin(); it != records_.rend(); ++it) {
      if (it->result == result) return *it;
    }
    return std::nullopt;
  }

 private:
  mutable std::mutex mu_;  // TSan-visible (see catalog_reloader.h)
  std::vector<Record> records_ ABSL_GUARDED_BY(mu_);
};

CatalogPipeline::Options Recording(RecordingListener* listener) {
  CatalogPipeline::Options options;
  options.on_reload = [listener](ReloadResult result,
                                 const ServingSnapshot* published,
                                 absl::string_view error) {
    listener->OnReload(result, published, error);
  };
  return options;
}

// The digest ParseCatalog gives `bytes`.
std::string DigestOf(absl::string_view bytes) {
  absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
      catalog::ParseCatalog(bytes, "digest");
  return catalog.ok() ? (*catalog)->digest : "";
}

// Takes CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH out of this thread's
// effective set (capabilities are per thread), so that file permissions
// apply even when the tests run as root.
bool DropFileCapabilitiesOfThisThread() {
  __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH}) {
    data[cap / 32].effective &= ~(1u << (cap % 32));
  }
  return syscall(SYS_capset, &header, data) == 0;
}

class CatalogReloaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    path_ = dir_.Join("catalog.yaml");
  }

  // Creates the reloader on `path_` (which must hold a valid catalog).
  void CreateReloader(absl::Duration interval = absl::ZeroDuration()) {
    absl::StatusOr<std::unique_ptr<CatalogReloader>> reloader =
        CatalogReloader::Create(
            {.source = NewFileCatalogSource(path_), .interval = interval},
            &pipeline_);
    ASSERT_OK(reloader);
    reloader_ = *std::move(reloader);
  }

  uint64_t Generation() const {
    std::shared_ptr<const ServingSnapshot> current = pipeline_.Current();
    return current == nullptr ? 0 : current->generation;
  }

  ScopedTempDir dir_;
  std::string path_;
  RecordingListener listener_;
  CatalogPipeline pipeline_{Recording(&listener_)};
  std::unique_ptr<CatalogReloader> reloader_;
};

TEST_F(CatalogReloaderTest, CreatePublishesGenerationOne) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  const absl::Time before = absl::Now();

  CreateReloader();

  std::shared_ptr<const ServingSnapshot> current = pipeline_.Current();
  ASSERT_NE(current, nullptr);
  EXPECT_EQ(current->generation, 1u);
  EXPECT_EQ(current->default_catalog().source, path_);
  EXPECT_EQ(current->default_catalog().digest, DigestOf(kCatalogV1));
  EXPECT_THAT(current->default_catalog().digest, StartsWith("sha256:"));
  EXPECT_GE(current->loaded_at, before);
  EXPECT_LE(current->loaded_at, absl::Now());
}

TEST_F(CatalogReloaderTest, CreateDoesNotNotifyTheListener) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));

  CreateReloader();

  EXPECT_THAT(listener_.records(), IsEmpty());
  EXPECT_EQ(reloader_->Status().loaded, 1u);
  EXPECT_EQ(reloader_->Status().generation, 1u);
}

TEST_F(CatalogReloaderTest, CreateFailsWhenTheFileIsMissing) {
  absl::StatusOr<std::unique_ptr<CatalogReloader>> reloader =
      CatalogReloader::Create({.source = NewFileCatalogSource(path_)},
                              &pipeline_);

  EXPECT_THAT(reloader,
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(path_)));
  EXPECT_EQ(pipeline_.Current(), nullptr);
}

TEST_F(CatalogReloaderTest, CreateFailsOnAnInvalidCatalogWithFileAndLine) {
  ASSERT_OK(WriteFileContents(path_, kBroken));

  absl::StatusOr<std::unique_ptr<CatalogReloader>> reloader =
      CatalogReloader::Create({.source = NewFileCatalogSource(path_)},
                              &pipeline_);

  EXPECT_THAT(reloader, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(absl::StrCat(path_, ":2:"))));
  EXPECT_EQ(pipeline_.Current(), nullptr);
}

TEST_F(CatalogReloaderTest, CreateFailsOnADirectory) {
  absl::StatusOr<std::unique_ptr<CatalogReloader>> reloader =
      CatalogReloader::Create({.source = NewFileCatalogSource(dir_.path())},
                              &pipeline_);

  EXPECT_THAT(reloader, StatusIs(absl::StatusCode::kFailedPrecondition,
                                 HasSubstr("directory")));
}

TEST_F(CatalogReloaderTest, CreateRejectsBadOptions) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));

  EXPECT_THAT(
      CatalogReloader::Create({.source = nullptr}, &pipeline_),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("source")));
  EXPECT_THAT(CatalogReloader::Create({.source = NewFileCatalogSource(path_),
                                       .interval = absl::Seconds(-1)},
                                      &pipeline_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("-1s")));
  EXPECT_THAT(
      CatalogReloader::Create({.source = NewFileCatalogSource(path_)}, nullptr),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pipeline")));
}

TEST_F(CatalogReloaderTest, ReloadNowPublishesAChangedFileAsTheNextGeneration) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  ASSERT_OK(WriteFileContents(path_, kCatalogV2));

  ASSERT_OK_AND_ASSIGN(bool published, reloader_->ReloadNow());

  EXPECT_TRUE(published);
  std::shared_ptr<const ServingSnapshot> current = pipeline_.Current();
  EXPECT_EQ(current->generation, 2u);
  EXPECT_EQ(current->default_catalog().digest, DigestOf(kCatalogV2));
  EXPECT_NE(current->default_catalog().FindFeature("WatchList"), nullptr);
  std::optional<RecordingListener::Record> loaded =
      listener_.Last(ReloadResult::kLoaded);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->generation, 2u);
  EXPECT_THAT(loaded->error, IsEmpty());
}

TEST_F(CatalogReloaderTest, UnchangedRewriteDoesNotBumpTheGeneration) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  const std::shared_ptr<const ServingSnapshot> before = pipeline_.Current();
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));

  ASSERT_OK_AND_ASSIGN(bool published, reloader_->ReloadNow());

  EXPECT_FALSE(published);
  EXPECT_EQ(pipeline_.Current(), before);
  EXPECT_EQ(Generation(), 1u);
  ASSERT_EQ(listener_.records().size(), 1u);
  EXPECT_EQ(listener_.records()[0].result, ReloadResult::kUnchanged);
}

TEST_F(CatalogReloaderTest, BadUpdateIsRejectedAndTheOldCatalogKeepsServing) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  const std::shared_ptr<const ServingSnapshot> before = pipeline_.Current();
  ASSERT_OK(WriteFileContents(path_, kBroken));

  EXPECT_THAT(reloader_->ReloadNow(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat(path_, ":2:"))));

  EXPECT_EQ(pipeline_.Current(), before);
  std::optional<RecordingListener::Record> rejected =
      listener_.Last(ReloadResult::kRejected);
  ASSERT_TRUE(rejected.has_value());
  EXPECT_THAT(rejected->error, HasSubstr(absl::StrCat(path_, ":2:")));
  EXPECT_EQ(rejected->generation, 0u);
}

TEST_F(CatalogReloaderTest, GoodUpdateAfterABadOneIsTheNextGeneration) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  ASSERT_OK(WriteFileContents(path_, kBroken));
  ASSERT_FALSE(reloader_->ReloadNow().ok());
  ASSERT_OK(WriteFileContents(path_, kCatalogV2));

  ASSERT_OK_AND_ASSIGN(bool published, reloader_->ReloadNow());

  EXPECT_TRUE(published);
  EXPECT_EQ(Generation(), 2u);
  EXPECT_EQ(pipeline_.Current()->default_catalog().digest,
            DigestOf(kCatalogV2));
}

TEST_F(CatalogReloaderTest, StatusCountsEveryOutcome) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  ASSERT_OK(reloader_->ReloadNow());  // unchanged
  ASSERT_OK(WriteFileContents(path_, kBroken));
  const absl::Time before_rejection = absl::Now();
  ASSERT_FALSE(reloader_->ReloadNow().ok());
  ASSERT_OK(WriteFileContents(path_, kCatalogV2));
  ASSERT_OK(reloader_->ReloadNow());  // loaded

  ReloaderStatus status = reloader_->Status();

  EXPECT_EQ(status.path, path_);
  EXPECT_EQ(status.generation, 2u);
  EXPECT_EQ(status.loaded, 2u);
  EXPECT_EQ(status.unchanged, 1u);
  EXPECT_EQ(status.rejected, 1u);
  EXPECT_THAT(status.last_error, HasSubstr(absl::StrCat(path_, ":2:")));
  EXPECT_GE(status.last_error_at, before_rejection);
  EXPECT_EQ(status.last_result, ReloadResult::kLoaded);
  EXPECT_TRUE(status.watching);
}

TEST_F(CatalogReloaderTest, EachDistinctRejectionIsLoggedOnce) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();

  ::testing::internal::CaptureStderr();
  ASSERT_OK(WriteFileContents(path_, kBroken));
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(reloader_->ReloadNow().ok());
  ASSERT_OK(WriteFileContents(path_, kBroken2));
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(reloader_->ReloadNow().ok());
  const std::string logged = ::testing::internal::GetCapturedStderr();

  const auto count = [&logged](absl::string_view needle) {
    const absl::string_view text(logged);
    int n = 0;
    for (size_t at = text.find(needle); at != absl::string_view::npos;
         at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("catalog reload rejected"), 2) << logged;
  EXPECT_EQ(count(absl::StrCat(path_, ":2:")), 1) << logged;
  EXPECT_EQ(count(absl::StrCat(path_, ":3:")), 1) << logged;
  // The listener hears every attempt (metrics count them).
  EXPECT_EQ(reloader_->Status().rejected, 6u);
}

TEST_F(CatalogReloaderTest, MissingFileIsRejectedAndTheOldCatalogKeepsServing) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  const std::shared_ptr<const ServingSnapshot> before = pipeline_.Current();
  ASSERT_EQ(unlink(path_.c_str()), 0);

  EXPECT_THAT(reloader_->ReloadNow(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(path_)));
  EXPECT_EQ(pipeline_.Current(), before);

  // Back with the same content: nothing to publish.
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  ASSERT_OK_AND_ASSIGN(bool published, reloader_->ReloadNow());
  EXPECT_FALSE(published);
  EXPECT_EQ(pipeline_.Current(), before);
}

TEST_F(CatalogReloaderTest, FileLargerThanTheLimitIsRejected) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  std::string huge(kCatalogV1);
  huge.append(catalog::kMaxCatalogBytes, '#');  // a very long comment
  ASSERT_OK(WriteFileContents(path_, huge));

  EXPECT_THAT(reloader_->ReloadNow(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr(path_), HasSubstr("larger than"))));
  EXPECT_EQ(Generation(), 1u);
}

TEST_F(CatalogReloaderTest, FifoIsRejectedWithoutBlocking) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  ASSERT_EQ(unlink(path_.c_str()), 0);
  ASSERT_EQ(mkfifo(path_.c_str(), 0644), 0);

  EXPECT_THAT(reloader_->ReloadNow(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not a regular file")));
  EXPECT_EQ(Generation(), 1u);
}

TEST_F(CatalogReloaderTest, UnreadableFileIsRejected) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  ASSERT_OK(WriteFileContents(path_, kCatalogV2));
  ASSERT_EQ(chmod(path_.c_str(), 0), 0);

  absl::Status reload;
  bool dropped = false;
  std::thread unprivileged([&] {
    dropped = DropFileCapabilitiesOfThisThread();
    reload = reloader_->ReloadNow().status();
  });
  unprivileged.join();

  ASSERT_TRUE(dropped);
  EXPECT_THAT(reload,
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(path_)));
  EXPECT_EQ(Generation(), 1u);
}

// The kubelet's update sequence, with neither the periodic check nor
// TriggerReload(): only the directory watch can see it.
TEST_F(CatalogReloaderTest, ConfigMapUpdateIsServedWithinOneSecond) {
  ConfigMapVolume volume(dir_.path());
  ASSERT_OK(volume.Write({{"catalog.yaml", std::string(kCatalogV1)}}));
  path_ = volume.Path("catalog.yaml");
  CreateReloader(/*interval=*/absl::ZeroDuration());
  reloader_->Start();

  ASSERT_OK_AND_ASSIGN(
      bool written, volume.Write({{"catalog.yaml", std::string(kCatalogV2)}}));
  ASSERT_TRUE(written);

  EXPECT_TRUE(PollUntil([&] { return Generation() == 2; }, absl::Seconds(1)));
  EXPECT_EQ(pipeline_.Current()->default_catalog().digest,
            DigestOf(kCatalogV2));
  // The listener hears right after the store has it.
  ASSERT_TRUE(PollUntil(
      [&] { return listener_.Last(ReloadResult::kLoaded).has_value(); }));
  EXPECT_EQ(listener_.Last(ReloadResult::kLoaded)->generation, 2u);
}

// Another key of the same ConfigMap changes: the kubelet swaps `..data`, our
// file's content is the same.
TEST_F(CatalogReloaderTest, ConfigMapSwapWithTheSameCatalogIsUnchanged) {
  ConfigMapVolume volume(dir_.path());
  ASSERT_OK(volume.Write(
      {{"catalog.yaml", std::string(kCatalogV1)}, {"notes.txt", "one"}}));
  path_ = volume.Path("catalog.yaml");
  CreateReloader();
  reloader_->Start();

  ASSERT_OK(volume.Write(
      {{"catalog.yaml", std::string(kCatalogV1)}, {"notes.txt", "two"}}));

  EXPECT_TRUE(PollUntil(
      [&] { return listener_.Last(ReloadResult::kUnchanged).has_value(); }));
  EXPECT_EQ(Generation(), 1u);
  EXPECT_FALSE(listener_.Last(ReloadResult::kLoaded).has_value());
}

TEST_F(CatalogReloaderTest, ConfigMapBadUpdateThenGoodUpdate) {
  ConfigMapVolume volume(dir_.path());
  ASSERT_OK(volume.Write({{"catalog.yaml", std::string(kCatalogV1)}}));
  path_ = volume.Path("catalog.yaml");
  CreateReloader();
  const std::shared_ptr<const ServingSnapshot> before = pipeline_.Current();
  reloader_->Start();

  ASSERT_OK(volume.Write({{"catalog.yaml", std::string(kBroken)}}));
  ASSERT_TRUE(PollUntil(
      [&] { return listener_.Last(ReloadResult::kRejected).has_value(); }));
  EXPECT_THAT(listener_.Last(ReloadResult::kRejected)->error,
              HasSubstr(absl::StrCat(path_, ":2:")));
  EXPECT_EQ(pipeline_.Current(), before);

  ASSERT_OK(volume.Write({{"catalog.yaml", std::string(kCatalogV2)}}));
  ASSERT_TRUE(PollUntil([&] { return Generation() == 2; }));
  EXPECT_EQ(pipeline_.Current()->default_catalog().digest,
            DigestOf(kCatalogV2));
}

// How editors and `kubectl cp`-style tools replace a file.
TEST_F(CatalogReloaderTest, RenameOverTheFileIsServed) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  reloader_->Start();

  ASSERT_OK(WriteFileContents(dir_.Join(".catalog.yaml.tmp"), kCatalogV2));
  ASSERT_EQ(std::rename(dir_.Join(".catalog.yaml.tmp").c_str(), path_.c_str()),
            0);

  EXPECT_TRUE(PollUntil([&] { return Generation() == 2; }));
}

TEST_F(CatalogReloaderTest, InPlaceWriteIsServed) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  reloader_->Start();

  ASSERT_OK(WriteFileContents(path_, kCatalogV2));

  EXPECT_TRUE(PollUntil([&] { return Generation() == 2; }));
}

// Issue 17, item 6: the catalog replaced by unlinking it and writing the new
// one in two parts, the first a valid catalog on its own. The creation used
// to trigger a reload that published the first part.
TEST_F(CatalogReloaderTest, FileWrittenInPartsIsPublishedOnlyOnceClosed) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  reloader_->Start();
  const std::string full(kCatalogV2);
  const size_t apis = full.find("apis:");
  ASSERT_NE(apis, std::string::npos);
  ASSERT_OK(catalog::ParseCatalog(full.substr(0, apis), "prefix").status());

  ASSERT_EQ(unlink(path_.c_str()), 0);
  const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, full.data(), apis), static_cast<ssize_t>(apis));
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(Generation(), 1u) << "published a half-written file";
  // Asked explicitly (SIGHUP), it is not read either.
  EXPECT_THAT(reloader_->ReloadNow(), StatusIs(absl::StatusCode::kUnavailable,
                                               HasSubstr("open for writing")));
  ASSERT_EQ(write(fd, full.data() + apis, full.size() - apis),
            static_cast<ssize_t>(full.size() - apis));
  ASSERT_EQ(close(fd), 0);

  EXPECT_TRUE(PollUntil([&] { return Generation() == 2; }));
  EXPECT_EQ(pipeline_.Current()->default_catalog().digest,
            DigestOf(kCatalogV2));
  EXPECT_FALSE(listener_.Last(ReloadResult::kRejected).has_value())
      << listener_.Last(ReloadResult::kRejected)->error;
}

// The periodic check must not read a file in the middle of being rewritten
// in place either.
TEST_F(CatalogReloaderTest, PeriodicCheckWaitsForTheWriterToClose) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader(/*interval=*/absl::Milliseconds(10));
  reloader_->Start();
  const std::string full(kCatalogV2);
  const size_t apis = full.find("apis:");

  const int fd = open(path_.c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, full.data(), apis), static_cast<ssize_t>(apis));
  absl::SleepFor(absl::Milliseconds(200));  // 20 periodic checks
  EXPECT_EQ(Generation(), 1u) << "published a half-written file";
  ASSERT_EQ(write(fd, full.data() + apis, full.size() - apis),
            static_cast<ssize_t>(full.size() - apis));
  ASSERT_EQ(close(fd), 0);

  EXPECT_TRUE(PollUntil([&] { return Generation() == 2; }));
  EXPECT_EQ(pipeline_.Current()->default_catalog().digest,
            DigestOf(kCatalogV2));
}

// A deleted catalog is not a reload by itself (its replacement's close is):
// no rejection while a tool deletes and rewrites it.
TEST_F(CatalogReloaderTest, DeletionAloneIsNotReloaded) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  reloader_->Start();
  ASSERT_EQ(unlink(path_.c_str()), 0);
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_THAT(listener_.records(), IsEmpty());

  ASSERT_OK(WriteFileContents(path_, kCatalogV2));
  EXPECT_TRUE(PollUntil([&] { return Generation() == 2; }));
  EXPECT_FALSE(listener_.Last(ReloadResult::kRejected).has_value());
}

// Start-up waits (up to kMaxStartupWait) for a writer that has the file open.
TEST_F(CatalogReloaderTest, CreateWaitsForTheWriterToClose) {
  const std::string full(kCatalogV2);
  const size_t apis = full.find("apis:");
  const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, full.data(), apis), static_cast<ssize_t>(apis));
  std::thread writer([&] {
    absl::SleepFor(absl::Milliseconds(300));
    (void)!write(fd, full.data() + apis, full.size() - apis);
    close(fd);
  });
  const absl::Time start = absl::Now();
  CreateReloader();
  writer.join();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(250));
  EXPECT_EQ(pipeline_.Current()->default_catalog().digest,
            DigestOf(kCatalogV2));
}

// `path` is a symlink into another directory: a change there is invisible to
// the watch on `path`'s directory.
class OutOfDirectoryTargetTest : public CatalogReloaderTest {
 protected:
  void SetUp() override {
    CatalogReloaderTest::SetUp();
    target_ = target_dir_.Join("real.yaml");
    ASSERT_OK(WriteFileContents(target_, kCatalogV1));
    ASSERT_EQ(symlink(target_.c_str(), path_.c_str()), 0);
  }

  ScopedTempDir target_dir_;
  std::string target_;
};

TEST_F(OutOfDirectoryTargetTest, TriggerReloadReloadsImmediately) {
  CreateReloader(/*interval=*/absl::ZeroDuration());
  reloader_->Start();
  ASSERT_OK(WriteFileContents(target_, kCatalogV2));

  reloader_->TriggerReload();

  EXPECT_TRUE(PollUntil([&] { return Generation() == 2; }));
}

TEST_F(OutOfDirectoryTargetTest, PeriodicCheckReloads) {
  CreateReloader(/*interval=*/absl::Milliseconds(20));
  reloader_->Start();

  ASSERT_OK(WriteFileContents(target_, kCatalogV2));

  EXPECT_TRUE(PollUntil([&] { return Generation() == 2; }));
}

TEST_F(OutOfDirectoryTargetTest, TriggerReloadBeforeStartDoesNothing) {
  CreateReloader(/*interval=*/absl::ZeroDuration());
  ASSERT_OK(WriteFileContents(target_, kCatalogV2));

  reloader_->TriggerReload();

  EXPECT_EQ(Generation(), 1u);
  EXPECT_THAT(listener_.records(), IsEmpty());
}

TEST_F(CatalogReloaderTest, RemovedDirectoryIsRejectedThenReloadedWhenBack) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  const std::shared_ptr<const ServingSnapshot> before = pipeline_.Current();
  reloader_->Start();

  ASSERT_OK(RemoveAll(dir_.path()));
  ASSERT_TRUE(PollUntil([&] {
    std::optional<RecordingListener::Record> rejected =
        listener_.Last(ReloadResult::kRejected);
    return rejected.has_value() &&
           absl::StrContains(rejected->error, "No such file");
  }));
  EXPECT_EQ(pipeline_.Current(), before);
  EXPECT_TRUE(PollUntil([&] { return !reloader_->Status().watching; }));

  ASSERT_EQ(mkdir(dir_.path().c_str(), 0755), 0);
  ASSERT_OK(WriteFileContents(path_, kCatalogV2));

  EXPECT_TRUE(PollUntil([&] { return Generation() == 2; }));
  EXPECT_TRUE(reloader_->Status().watching);
}

TEST_F(CatalogReloaderTest, StopReturnsPromptly) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader(/*interval=*/absl::Hours(1));
  reloader_->Start();
  reloader_->Start();  // no-op

  const absl::Time start = absl::Now();
  reloader_->Stop();
  reloader_->Stop();  // no-op

  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
}

TEST_F(CatalogReloaderTest, StopThenStartWatchesAgain) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  reloader_->Start();
  reloader_->Stop();
  reloader_->Start();

  ASSERT_OK(WriteFileContents(path_, kCatalogV2));

  EXPECT_TRUE(PollUntil([&] { return Generation() == 2; }));
}

// Readers keep taking snapshots while the file is swapped back and forth,
// through the kubelet's sequence, hundreds of times; every snapshot must be
// one whole catalog or the other, and generations never go back.
TEST_F(CatalogReloaderTest, ReadersSeeWholeCatalogsWhileTheFileIsSwapped) {
  constexpr int kSwaps = 300;
  constexpr int kReaders = 3;
  const std::string digest_v1 = DigestOf(kCatalogV1);
  const std::string digest_v2 = DigestOf(kCatalogV2);
  ASSERT_FALSE(digest_v1.empty());
  ASSERT_FALSE(digest_v2.empty());
  ConfigMapVolume volume(dir_.path());
  ASSERT_OK(volume.Write({{"catalog.yaml", std::string(kCatalogV1)}}));
  path_ = volume.Path("catalog.yaml");
  CreateReloader();
  reloader_->Start();

  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<int64_t> snapshots{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&] {
      uint64_t last_generation = 0;
      while (!done.load()) {
        std::shared_ptr<const ServingSnapshot> c = pipeline_.Current();
        snapshots.fetch_add(1);
        const bool whole_v1 =
            c != nullptr && c->default_catalog().digest == digest_v1 &&
            c->default_catalog().features.empty() &&
            c->default_catalog().FindFeature("WatchList") == nullptr;
        const bool whole_v2 =
            c != nullptr && c->default_catalog().digest == digest_v2 &&
            c->default_catalog().features.size() == 1 &&
            c->default_catalog().features[0].name == "WatchList" &&
            c->default_catalog().FindFeature("WatchList") ==
                &c->default_catalog().features[0];
        if (!(whole_v1 || whole_v2) || c->default_catalog().source != path_ ||
            c->generation < last_generation) {
          failures.fetch_add(1);
        }
        if (c != nullptr) last_generation = c->generation;
      }
    });
  }

  // After each swap, a direct ReloadNow() (serialized with the watcher's)
  // makes sure every version is published exactly once.
  absl::Status writer_status;
  for (int i = 1; i <= kSwaps && writer_status.ok(); ++i) {
    absl::StatusOr<bool> written = volume.Write(
        {{"catalog.yaml", std::string(i % 2 == 0 ? kCatalogV1 : kCatalogV2)}});
    if (!written.ok()) {
      writer_status = written.status();
      break;
    }
    writer_status = reloader_->ReloadNow().status();
  }
  done.store(true);
  for (std::thread& reader : readers) reader.join();
  reloader_->Stop();

  ASSERT_OK(writer_status);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(snapshots.load(), 0);
  EXPECT_EQ(Generation(), static_cast<uint64_t>(kSwaps + 1));
  EXPECT_EQ(pipeline_.Current()->default_catalog().digest,
            digest_v1);  // kSwaps is even
}

// A request still holding the replaced catalog when the reload publishes is
// not the one that frees it: the watcher thread keeps it and frees it once no
// request holds it (thousands of frees that would otherwise land on that
// request's latency).
TEST_F(CatalogReloaderTest, ReplacedCatalogIsFreedByTheWatcherThread) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  reloader_->Start();
  std::shared_ptr<const ServingSnapshot> request_snapshot = pipeline_.Current();
  std::weak_ptr<const engine::Catalog> old =
      request_snapshot->default_line().catalog;

  ASSERT_OK(WriteFileContents(path_, kCatalogV2));
  reloader_->TriggerReload();
  ASSERT_TRUE(PollUntil([&] { return Generation() == 2; }));
  EXPECT_EQ(reloader_->RetiredCount(), 1u);

  request_snapshot.reset();  // the request ends: not the last reference
  EXPECT_FALSE(old.expired());
  EXPECT_TRUE(PollUntil([&] { return old.expired(); }, absl::Seconds(2)));
  EXPECT_EQ(reloader_->RetiredCount(), 0u);
}

// Reloads with nobody holding the old catalog leave nothing behind.
TEST_F(CatalogReloaderTest, UnheldReplacedCatalogsAreFreedPromptly) {
  ASSERT_OK(WriteFileContents(path_, kCatalogV1));
  CreateReloader();
  reloader_->Start();
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK(WriteFileContents(path_, i % 2 == 0 ? kCatalogV2 : kCatalogV1));
    reloader_->TriggerReload();
    ASSERT_TRUE(PollUntil([&] { return Generation() == 2u + i; }));
  }
  EXPECT_TRUE(PollUntil([&] { return reloader_->RetiredCount() == 0; },
                        absl::Seconds(2)));
}

// Entries of a /proc/self directory (task: threads; fd: open files).
int CountEntries(const char* path) {
  DIR* dir = opendir(path);
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - (std::string(path) == "/proc/self/fd" ? 1 : 0);  // `dir`
}

// A directory of 300 catalogs: one inotify instance, one eventfd and one
// thread for all of them (issue 36: one of each per file, 316 threads and
// 444 fds, and past Linux's 128 inotify instances per user 172 files were
// not watched), and a rename over one file is served within milliseconds
// and reloads that one only.
TEST(CatalogDirectoryTest, ThreeHundredFilesShareOneWatchAndOneThread) {
  constexpr int kFiles = 300;
  ScopedTempDir dir;
  ASSERT_FALSE(dir.path().empty());
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_OK(WriteFileContents(dir.Join(absl::StrCat("catalog-", i, ".yaml")),
                                kCatalogV1));
  }
  // A sanitizer's runtime starts a thread of its own at the process's first
  // thread creation (TSan's background thread): start one first, so that the
  // count below is the reloaders' alone.
  std::thread([] {}).join();
  const int threads_before = CountEntries("/proc/self/task");
  const int fds_before = CountEntries("/proc/self/fd");
  std::vector<std::unique_ptr<RecordingListener>> listeners;
  std::vector<std::unique_ptr<CatalogPipeline>> pipelines;
  std::vector<std::unique_ptr<CatalogReloader>> reloaders;
  for (int i = 0; i < kFiles; ++i) {
    listeners.push_back(std::make_unique<RecordingListener>());
    pipelines.push_back(
        std::make_unique<CatalogPipeline>(Recording(listeners.back().get())));
    absl::StatusOr<std::unique_ptr<CatalogReloader>> reloader =
        CatalogReloader::Create({.source = NewFileCatalogSource(dir.Join(
                                     absl::StrCat("catalog-", i, ".yaml")))},
                                pipelines.back().get());
    ASSERT_OK(reloader);
    reloaders.push_back(*std::move(reloader));
    reloaders.back()->Start();
  }
  EXPECT_LE(CountEntries("/proc/self/task") - threads_before, 1);
  EXPECT_LE(CountEntries("/proc/self/fd") - fds_before, 2);
  for (const auto& reloader : reloaders) {
    EXPECT_TRUE(reloader->Status().watching);
  }

  const std::string next = dir.Join(".catalog-150.yaml.tmp");
  ASSERT_OK(WriteFileContents(next, kCatalogV2));
  const absl::Time start = absl::Now();
  ASSERT_EQ(rename(next.c_str(), dir.Join("catalog-150.yaml").c_str()), 0);
  ASSERT_TRUE(
      PollUntil([&] { return pipelines[150]->Current()->generation == 2; }));
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Milliseconds(500)) << took;
  std::printf("rename served in %s\n", absl::FormatDuration(took).c_str());
  // The temporary file's close reloaded (unchanged) the others at most once;
  // the rename over catalog-150.yaml only that one.
  absl::SleepFor(CatalogReloader::kDebounce * 4);
  for (int i = 0; i < kFiles; ++i) {
    if (i == 150) continue;
    EXPECT_EQ(pipelines[i]->Current()->generation, 1u) << i;
    EXPECT_LE(listeners[i]->records().size(), 1u) << i;
  }
  reloaders.clear();
  EXPECT_TRUE(PollUntil(
      [&] { return CountEntries("/proc/self/task") <= threads_before; }));
  EXPECT_LE(CountEntries("/proc/self/fd"), fds_before);
}

TEST(ReloadResultNameTest, NamesEveryResult) {
  EXPECT_EQ(ReloadResultName(ReloadResult::kLoaded), "loaded");
  EXPECT_EQ(ReloadResultName(ReloadResult::kUnchanged), "unchanged");
  EXPECT_EQ(ReloadResultName(ReloadResult::kRejected), "rejected");
}

}  // namespace
}  // namespace compatd::runtime
