#pragma once

// Runs the real compatd binary from integration tests: start with arguments,
// read its stdout/stderr, signal it, wait with a deadline. Header-only, POSIX.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace compatd::testing {

class Subprocess {
 public:
  Subprocess() = default;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess() {
    if (pid_ > 0 && !exit_code_.has_value()) {
      ::kill(pid_, SIGKILL);
      Wait(std::chrono::seconds(10));
    }
    if (reader_.joinable()) reader_.join();
  }

  // Starts `binary` with `args`; stdin is /dev/null.
  bool Start(const std::string& binary, const std::vector<std::string>& args) {
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
      return false;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr,
                               argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (rc != 0) {
      ::close(out_pipe[0]);
      ::close(err_pipe[0]);
      pid_ = -1;
      return false;
    }
    reader_ = std::thread(
        [this, out = out_pipe[0], err = err_pipe[0]] { Pump(out, err); });
    return true;
  }

  // The child's process id (-1 before a successful Start()).
  pid_t pid() const { return pid_; }

  void Signal(int signal_number) {
    if (pid_ > 0) ::kill(pid_, signal_number);
  }

  // The exit code (or 128+signal), or nullopt if it did not exit within
  // `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout) {
    if (exit_code_.has_value()) return exit_code_;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exit_code_ =
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (reader_.joinable()) reader_.join();
        return exit_code_;
      }
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  std::string Stdout() const {
    std::lock_guard<std::mutex> lock(mu_);
    return out_;
  }
  std::string Stderr() const {
    std::lock_guard<std::mutex> lock(mu_);
    return err_;
  }

  // Waits until stderr contains `text`; false on timeout or exit.
  bool WaitForStderr(const std::string& text,
                     std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (Stderr().find(text) != std::string::npos) return true;
      int status = 0;
      if (!exit_code_.has_value() &&
          ::waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ =
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return Stderr().find(text) != std::string::npos;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

 private:
  void Pump(int out, int err) {
    pollfd fds[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
    int open = 2;
    char buffer[4096];
    while (open > 0) {
      if (::poll(fds, 2, -1) < 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
        if (n <= 0) {
          ::close(fds[i].fd);
          fds[i].fd = -1;
          --open;
          continue;
        }
        std::lock_guard<std::mutex> lock(mu_);
        (i == 0 ? out_ : err_).append(buffer, static_cast<size_t>(n));
      }
    }
  }

  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::thread reader_;
  mutable std::mutex mu_;
  std::string out_;
  std::string err_;
};

// Runs a command to completion; returns {exit code, stdout, stderr}.
struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline RunResult RunCompatd(const std::string& binary,
                            const std::vector<std::string>& args) {
  Subprocess p;
  RunResult result;
  if (!p.Start(binary, args)) return result;
  result.exit_code = p.Wait(std::chrono::seconds(60)).value_or(-1);
  result.out = p.Stdout();
  result.err = p.Stderr();
  return result;
}

// Runs `command` with /bin/sh (popen); its stdout, and its exit code in
// `code` (-1 when it could not run or did not exit). For tests that drive
// other tools (kubectl, docker, promtool) rather than compatd.
inline std::string RunShell(const std::string& command, int* code) {
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  if (pipe == nullptr) {
    *code = -1;
    return out;
  }
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    out.append(buffer, n);
  }
  const int status = pclose(pipe);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace compatd::testing
