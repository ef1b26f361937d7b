#pragma once

// Test helpers for files on disk: a self-deleting temporary directory, and a
// faithful reproduction of how the kubelet updates a ConfigMap volume.
//
// ConfigMapVolume::Write() follows kubernetes/kubernetes
// pkg/volume/util/atomic_writer.go, AtomicWriter.Write(), step by step (the
// numbers below are its comments'):
//   (2)  read `..data` to find the current timestamped directory
//   (3)  list the keys no longer in the payload
//   (4)  compare the payload with the current data: equal -> no write at all
//   (5)  create a new `..2026_11_21_09_37_30.123456789` directory, mode 0755
//        (os.MkdirTemp(dir, time.Now().UTC().Format("..2006_01_02_15_04_05.")))
//   (6)  write every key into it (mode 0644, the ConfigMap default)
//   (8)  create the symlink `..data_tmp` -> the new directory's name
//   (9)  rename `..data_tmp` over `..data` (the one atomic step)
//   (10) create user-visible symlinks `<key>` -> `..data/<key>` if missing
//   (11) remove the user-visible symlinks of keys no longer in the payload
//   (12) remove the previous timestamped directory
// (Step 7, setPerms, applies fsGroup ownership and is not reproduced.) So
// `<dir>/catalog.yaml` is always a symlink to `..data/catalog.yaml` and is
// never missing while the content changes, exactly as in a real pod.
// Keys are flat names (a ConfigMap's keys cannot contain '/').

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace compatd::testing {

inline absl::Status ErrnoError(absl::string_view what, absl::string_view path) {
  return absl::ErrnoToStatus(errno, absl::StrCat(what, " ", path));
}

// Writes `content` to `path` (created or truncated), mode 0644.
inline absl::Status WriteFileContents(const std::string& path,
                                      absl::string_view content,
                                      mode_t mode = 0644) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoError("cannot create", path);
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const absl::Status status = ErrnoError("cannot write", path);
      close(fd);
      return status;
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) return ErrnoError("cannot close", path);
  if (chmod(path.c_str(), mode) != 0) return ErrnoError("cannot chmod", path);
  return absl::OkStatus();
}

// The whole file, or the error.
inline absl::StatusOr<std::string> ReadFileContents(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path);
  std::string content;
  char buffer[8192];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const absl::Status status = ErrnoError("cannot read", path);
      close(fd);
      return status;
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return content;
}

// Removes `path` and everything under it, without following symlinks.
inline absl::Status RemoveAll(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? absl::OkStatus() : ErrnoError("cannot stat", path);
  }
  const int rc = nftw(
      path.c_str(),
      [](const char* entry, const struct stat*, int type, struct FTW*) {
        return type == FTW_DP ? rmdir(entry) : unlink(entry);
      },
      16, FTW_DEPTH | FTW_PHYS);
  if (rc != 0) return ErrnoError("cannot remove", path);
  return absl::OkStatus();
}

// A fresh directory under $TEST_TMPDIR or /tmp, removed (with its contents)
// on destruction.
class ScopedTempDir {
 public:
  ScopedTempDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern = absl::StrCat(
        base != nullptr && *base != '\0' ? base : "/tmp", "/compatd-XXXXXX");
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScopedTempDir() {
    if (!path_.empty()) RemoveAll(path_).IgnoreError();
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  // Empty if the directory could not be created.
  const std::string& path() const { return path_; }
  std::string Join(absl::string_view name) const {
    return absl::StrCat(path_, "/", name);
  }

 private:
  std::string path_;
};

// A ConfigMap volume mounted at `dir`, updated the way the kubelet does it.
// Not thread-safe (neither is AtomicWriter).
class ConfigMapVolume {
 public:
  // `dir` must exist (AtomicWriter requires its target directory).
  explicit ConfigMapVolume(std::string dir) : dir_(std::move(dir)) {}

  // The user-visible path of a key: "<dir>/<key>".
  std::string Path(absl::string_view key) const {
    return absl::StrCat(dir_, "/", key);
  }

  // Projects `payload` (key -> content). Returns true if the volume was
  // updated, false if the payload equals what is already there (step 4).
  absl::StatusOr<bool> Write(
      const std::map<std::string, std::string>& payload) {
    for (const auto& [key, content] : payload) {
      if (key.empty() || absl::StrContains(key, "/") ||
          absl::StartsWith(key, "..")) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid key \"", key,
                         "\": expected a flat name not starting with \"..\""));
      }
    }
    const std::string data_dir = Path(kDataDirName);

    // (2)
    std::string old_ts_dir;
    {
      char target[4096];
      const ssize_t n = readlink(data_dir.c_str(), target, sizeof(target) - 1);
      if (n >= 0) {
        old_ts_dir.assign(target, static_cast<size_t>(n));
      } else if (errno != ENOENT) {
        return ErrnoError("cannot read link", data_dir);
      }
    }

    std::set<std::string> paths_to_remove;
    if (!old_ts_dir.empty()) {
      const std::string old_ts_path = Path(old_ts_dir);
      // (3) The old keys are the entries of the old timestamped directory.
      DIR* old = opendir(old_ts_path.c_str());
      if (old == nullptr) return ErrnoError("cannot list", old_ts_path);
      while (const struct dirent* entry = readdir(old)) {
        const std::string key = entry->d_name;
        if (key == "." || key == "..") continue;
        if (payload.count(key) == 0) paths_to_remove.insert(key);
      }
      closedir(old);
      // (4)
      bool should_write = false;
      for (const auto& [key, content] : payload) {
        absl::StatusOr<std::string> on_disk =
            ReadFileContents(absl::StrCat(old_ts_path, "/", key));
        if (!on_disk.ok() || *on_disk != content) {
          should_write = true;
          break;
        }
      }
      if (!should_write && paths_to_remove.empty()) return false;
    }

    // (5)
    absl::StatusOr<std::string> ts_dir_name = MakeTimestampDir();
    if (!ts_dir_name.ok()) return ts_dir_name.status();
    const std::string ts_dir = Path(*ts_dir_name);

    // (6)
    for (const auto& [key, content] : payload) {
      absl::Status written =
          WriteFileContents(absl::StrCat(ts_dir, "/", key), content, 0644);
      if (!written.ok()) return written;
    }

    // (8)
    const std::string new_data_dir = Path(kNewDataDirName);
    if (symlink(ts_dir_name->c_str(), new_data_dir.c_str()) != 0) {
      const absl::Status status = ErrnoError("cannot create", new_data_dir);
      RemoveAll(ts_dir).IgnoreError();
      return status;
    }

    // (9)
    if (rename(new_data_dir.c_str(), data_dir.c_str()) != 0) {
      const absl::Status status = ErrnoError("cannot rename", new_data_dir);
      unlink(new_data_dir.c_str());
      RemoveAll(ts_dir).IgnoreError();
      return status;
    }

    // (10)
    for (const auto& [key, content] : payload) {
      const std::string visible = Path(key);
      struct stat st;
      if (lstat(visible.c_str(), &st) != 0 && errno == ENOENT) {
        const std::string target = absl::StrCat(kDataDirName, "/", key);
        if (symlink(target.c_str(), visible.c_str()) != 0) {
          return ErrnoError("cannot create", visible);
        }
      }
    }

    // (11)
    for (const std::string& key : paths_to_remove) {
      if (unlink(Path(key).c_str()) != 0)
        return ErrnoError("cannot remove", key);
    }

    // (12)
    if (!old_ts_dir.empty()) {
      absl::Status removed = RemoveAll(Path(old_ts_dir));
      if (!removed.ok()) return removed;
    }

    return true;
  }

  // The current timestamped directory's name (what `..data` points to).
  absl::StatusOr<std::string> CurrentTimestampDir() const {
    char target[4096];
    const std::string data_dir = Path(kDataDirName);
    const ssize_t n = readlink(data_dir.c_str(), target, sizeof(target) - 1);
    if (n < 0) return ErrnoError("cannot read link", data_dir);
    return std::string(target, static_cast<size_t>(n));
  }

  static constexpr absl::string_view kDataDirName = "..data";
  static constexpr absl::string_view kNewDataDirName = "..data_tmp";

 private:
  // "..2026_11_21_09_37_30.123456789": Go's time format
  // "..2006_01_02_15_04_05." plus os.MkdirTemp's random decimal suffix,
  // retried on collision as MkdirTemp does; chmod 0755 as newTimestampDir().
  absl::StatusOr<std::string> MakeTimestampDir() {
    const std::string prefix = absl::FormatTime(
        "..%Y_%m_%d_%H_%M_%S.", absl::Now(), absl::UTCTimeZone());
    for (int attempt = 0; attempt < 10000; ++attempt) {
      const std::string name = absl::StrCat(prefix, random_());
      const std::string path = Path(name);
      if (mkdir(path.c_str(), 0700) == 0) {
        if (chmod(path.c_str(), 0755) != 0) {
          return ErrnoError("cannot chmod", path);
        }
        return name;
      }
      if (errno != EEXIST) return ErrnoError("cannot create", path);
    }
    return absl::AlreadyExistsError(
        absl::StrCat("no free timestamped directory name in ", dir_));
  }

  std::string dir_;
  std::mt19937 random_{std::random_device{}()};
};

}  // namespace compatd::testing
