#pragma once

// Shared by the metrics integration tests (metrics_test, prometheus_test,
// cardinality_test): the real compatd binary as an RAII object that knows its
// gRPC and /metrics ports, a plain HTTP/1.0 GET, a parser for the Prometheus
// text exposition, VmRSS of a process, and a temporary directory that removes
// itself.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "tests/testing/http_chunked.h"
#include "tests/testing/loopback.h"
#include "tests/testing/subprocess.h"

namespace compatd::testing {

// ---------------------------------------------------------------------------
// HTTP

struct HttpReply {
  int status = 0;
  std::string headers;  // raw, lower-cased
  std::string body;
};

// `method` `target` (path and query) on 127.0.0.1:`port` with HTTP/1.0, so
// that the server closes the connection after a body that is not chunked;
// `body`, if any, is sent as application/json.
inline absl::StatusOr<HttpReply> HttpCall(int port, absl::string_view method,
                                          absl::string_view target,
                                          absl::string_view body = "") {
  const int fd = ConnectLoopback(port, timeval{10, 0});
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot connect to 127.0.0.1:", port));
  }
  std::string request =
      absl::StrCat(method, " ", target, " HTTP/1.0\r\nHost: 127.0.0.1:", port,
                   "\r\nAccept: */*\r\n");
  if (!body.empty()) {
    absl::StrAppend(&request, "Content-Type: application/json\r\n",
                    "Content-Length: ", body.size(), "\r\n");
  }
  absl::StrAppend(&request, "\r\n", body);
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("send() failed");
  }
  std::string raw;
  char buffer[16384];
  while (true) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0) {
      close(fd);
      return absl::DeadlineExceededError(
          absl::StrCat("no complete answer from 127.0.0.1:", port, target));
    }
    if (n == 0) break;
    raw.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  const size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) {
    return absl::DataLossError(absl::StrCat("no end of headers in: ", raw));
  }
  HttpReply reply;
  reply.headers = absl::AsciiStrToLower(raw.substr(0, end));
  reply.body = raw.substr(end + 4);
  const size_t space = raw.find(' ');
  if (space == std::string::npos ||
      !absl::SimpleAtoi(absl::string_view(raw).substr(space + 1, 3),
                        &reply.status)) {
    return absl::DataLossError(absl::StrCat("bad status line in: ", raw));
  }
  if (absl::StrContains(reply.headers, "transfer-encoding: chunked")) {
    absl::StatusOr<std::string> body = DecodeChunked(reply.body);
    if (!body.ok()) return body.status();
    reply.body = *std::move(body);
  }
  return reply;
}

// GET `target` (see HttpCall).
inline absl::StatusOr<HttpReply> HttpGet(int port, absl::string_view target) {
  return HttpCall(port, "GET", target);
}

// POST `body` (JSON) to `target` (see HttpCall).
inline absl::StatusOr<HttpReply> HttpPost(int port, absl::string_view target,
                                          absl::string_view body) {
  return HttpCall(port, "POST", target, body);
}

// Percent-encodes everything but RFC 3986's unreserved characters.
inline std::string UrlEncode(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// The text exposition format (0.0.4)

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses the sample lines of a scrape (comments skipped). Strict about what
// the format allows, so that a malformed line is an error, not a lost sample.
inline absl::StatusOr<std::vector<Sample>> ParseExposition(
    absl::string_view text) {
  std::vector<Sample> samples;
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t newline = text.find('\n');
    if (newline == absl::string_view::npos) {
      return absl::DataLossError("the scrape does not end with a newline");
    }
    absl::string_view line = text.substr(0, newline);
    text.remove_prefix(newline + 1);
    if (line.empty() || line.front() == '#') continue;
    auto bad = [&](absl::string_view why) {
      return absl::DataLossError(
          absl::StrCat("line ", line_number, ": ", why, ": ", line));
    };
    Sample sample;
    size_t pos = 0;
    while (pos < line.size() && line[pos] != '{' && line[pos] != ' ') ++pos;
    sample.name = std::string(line.substr(0, pos));
    if (sample.name.empty()) return bad("no metric name");
    if (pos < line.size() && line[pos] == '{') {
      ++pos;
      while (true) {
        if (pos >= line.size()) return bad("unterminated label set");
        if (line[pos] == '}') {
          ++pos;
          break;
        }
        const size_t eq = line.find("=\"", pos);
        if (eq == absl::string_view::npos) return bad("label without =\"");
        const std::string name(line.substr(pos, eq - pos));
        pos = eq + 2;
        std::string value;
        while (true) {
          if (pos >= line.size()) return bad("unterminated label value");
          const char c = line[pos++];
          if (c == '"') break;
          if (c != '\\') {
            value.push_back(c);
            continue;
          }
          if (pos >= line.size()) return bad("dangling backslash");
          const char escaped = line[pos++];
          if (escaped == 'n') {
            value.push_back('\n');
          } else if (escaped == '\\' || escaped == '"') {
            value.push_back(escaped);
          } else {
            return bad("unknown escape");
          }
        }
        if (!sample.labels.emplace(name, std::move(value)).second) {
          return bad("duplicate label");
        }
        if (pos < line.size() && line[pos] == ',') ++pos;
      }
    }
    if (pos >= line.size() || line[pos] != ' ') return bad("no value");
    absl::string_view value = line.substr(pos + 1);
    value = value.substr(0, value.find(' '));  // an optional timestamp
    if (value == "+Inf") {
      sample.value = std::numeric_limits<double>::infinity();
    } else if (value == "-Inf") {
      sample.value = -std::numeric_limits<double>::infinity();
    } else if (value == "NaN") {
      sample.value = std::numeric_limits<double>::quiet_NaN();
    } else if (!absl::SimpleAtod(value, &sample.value)) {
      return bad("bad value");
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

// The samples of `name` whose labels include every pair of `labels`.
inline std::vector<Sample> Select(
    const std::vector<Sample>& samples, absl::string_view name,
    const std::map<std::string, std::string>& labels = {}) {
  std::vector<Sample> out;
  for (const Sample& sample : samples) {
    if (sample.name != name) continue;
    bool match = true;
    for (const auto& [key, value] : labels) {
      auto it = sample.labels.find(key);
      if (it == sample.labels.end() || it->second != value) {
        match = false;
        break;
      }
    }
    if (match) out.push_back(sample);
  }
  return out;
}

// For failure messages.
inline std::string Describe(const Sample& sample) {
  std::vector<std::string> labels;
  for (const auto& [key, value] : sample.labels) {
    labels.push_back(absl::StrCat(key, "=\"", value, "\""));
  }
  return absl::StrCat(sample.name, "{", absl::StrJoin(labels, ","), "} ",
                      sample.value);
}

// ---------------------------------------------------------------------------
// Processes and files

// VmRSS of a live process, in bytes, from /proc/<pid>/status.
inline absl::StatusOr<int64_t> VmRssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  if (!in) return absl::NotFoundError(absl::StrCat("no process ", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "VmRSS:")) continue;
    absl::string_view rest = absl::StripAsciiWhitespace(
        absl::string_view(line).substr(sizeof("VmRSS:") - 1));
    int64_t kib = 0;
    if (!absl::ConsumeSuffix(&rest, " kB") || !absl::SimpleAtoi(rest, &kib)) {
      return absl::DataLossError(absl::StrCat("unexpected line: ", line));
    }
    return kib * 1024;
  }
  return absl::DataLossError(absl::StrCat("no VmRSS for process ", pid));
}

// A fresh directory under $TEST_TMPDIR (or /tmp), removed with its contents.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern =
        absl::StrCat(base != nullptr ? base : "/tmp", "/compatd-test-XXXXXX");
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Empty when the directory could not be made.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline bool WriteFile(const std::string& path, absl::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  return static_cast<bool>(out);
}

inline absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Starts `binary` in `process` so that the kernel kills it (SIGKILL) if this
// test process dies without running destructors (a crash, a sanitizer abort,
// a timeout's SIGKILL): through util-linux's setpriv --pdeathsig, which then
// execs `binary` (same pid). The death signal is tied to the calling thread:
// call this from the test's main thread.
inline bool StartTiedToThisProcess(Subprocess& process,
                                   const std::string& binary,
                                   const std::vector<std::string>& args) {
  static constexpr char kSetpriv[] = "/usr/bin/setpriv";
  if (access(kSetpriv, X_OK) != 0) return process.Start(binary, args);
  std::vector<std::string> wrapped = {"--pdeathsig", "KILL", "--", binary};
  wrapped.insert(wrapped.end(), args.begin(), args.end());
  return process.Start(kSetpriv, wrapped);
}

// ---------------------------------------------------------------------------
// The compatd binary

// compatd on 127.0.0.1 with free gRPC and /metrics ports. The destructor
// kills it if it still runs, and the kernel does if the test process dies, so
// a failing test never leaves it behind.
class CompatdProcess {
 public:
  // Starts it with --listen=127.0.0.1:0 --metrics-listen=127.0.0.1:0 and
  // `extra_args`, and waits (up to 20 s) for both ports and SERVING.
  absl::Status Start(const std::vector<std::string>& extra_args = {}) {
    std::vector<std::string> args = {"--listen=127.0.0.1:0",
                                     "--metrics-listen=127.0.0.1:0",
                                     "--shutdown-grace=5s"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    if (!StartTiedToThisProcess(process_, COMPATD_BINARY, args)) {
      return absl::InternalError(absl::StrCat("cannot start ", COMPATD_BINARY));
    }
    if (!process_.WaitForStderr("gRPC listening on 127.0.0.1:",
                                std::chrono::seconds(20))) {
      return absl::DeadlineExceededError(absl::StrCat(
          "compatd did not report its gRPC port; stderr:\n", Stderr()));
    }
    const std::string err = Stderr();
    std::smatch match;
    if (!std::regex_search(
            err, match,
            std::regex("gRPC listening on 127\\.0\\.0\\.1:([0-9]+)"))) {
      return absl::InternalError(absl::StrCat("no gRPC port in:\n", err));
    }
    grpc_port_ = std::stoi(match[1]);
    if (!std::regex_search(
            err, match,
            std::regex("metrics on http://127\\.0\\.0\\.1:([0-9]+)/metrics"))) {
      return absl::InternalError(absl::StrCat("no metrics port in:\n", err));
    }
    metrics_port_ = std::stoi(match[1]);
    if (absl::Status s = WaitServing(); !s.ok()) return s;
    // The front door (--http-listen) logs its port before the catalog loads;
    // its line may still be on its way through the pipe.
    bool http = false;
    for (const std::string& arg : extra_args) {
      http |=
          absl::StartsWith(arg, "--http-listen=") && arg != "--http-listen=";
    }
    if (http &&
        !process_.WaitForStderr("JSON on http", std::chrono::seconds(5))) {
      return absl::InternalError(
          absl::StrCat("no front door port in:\n", Stderr()));
    }
    const std::string logged = Stderr();
    if (std::regex_search(
            logged, match,
            std::regex("JSON on https?://127\\.0\\.0\\.1:([0-9]+)"))) {
      http_port_ = std::stoi(match[1]);
    }
    return absl::OkStatus();
  }

  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  // The --http-listen port, when started with --http-listen=127.0.0.1:0;
  // else 0.
  int http_port() const { return http_port_; }
  pid_t pid() const { return process_.pid(); }
  std::string Stderr() const { return process_.Stderr(); }

  // A new channel (its own connection) whose User-Agent starts with
  // `user_agent_prefix` (gRPC C++ appends "grpc-c++/... grpc-c/...").
  std::shared_ptr<grpc::Channel> NewChannel(
      const std::string& user_agent_prefix = "") const {
    grpc::ChannelArguments arguments;
    if (!user_agent_prefix.empty()) {
      arguments.SetUserAgentPrefix(user_agent_prefix);
    }
    // Distinct channels must not share a connection.
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", grpc_port_),
                                     grpc::InsecureChannelCredentials(),
                                     arguments);
  }

  // GET /metrics.
  absl::StatusOr<std::string> Scrape() const {
    absl::StatusOr<HttpReply> reply = HttpGet(metrics_port_, "/metrics");
    if (!reply.ok()) return reply.status();
    if (reply->status != 200) {
      return absl::UnavailableError(
          absl::StrCat("/metrics answered ", reply->status, ": ", reply->body));
    }
    return reply->body;
  }

  // The exit code once the process exits (after a signal sent by the test),
  // nullopt if it did not within `limit`.
  std::optional<int> WaitForExit(std::chrono::milliseconds limit) {
    if (process_.pid() <= 0) return std::nullopt;  // never started
    return process_.Wait(limit);
  }

  // SIGTERM, then the exit code (nullopt if it did not exit within 10 s).
  std::optional<int> Stop() {
    if (process_.pid() <= 0) return std::nullopt;  // never started
    if (std::optional<int> code = process_.Wait(std::chrono::milliseconds(0))) {
      return code;  // already exited
    }
    process_.Signal(SIGTERM);
    return process_.Wait(std::chrono::seconds(10));
  }

 private:
  absl::Status WaitServing() {
    auto health = grpc::health::v1::Health::NewStub(NewChannel());
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::seconds(2));
      grpc::health::v1::HealthCheckResponse response;
      const grpc::Status status = health->Check(
          &context, grpc::health::v1::HealthCheckRequest(), &response);
      if (status.ok() &&
          response.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
        return absl::OkStatus();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return absl::DeadlineExceededError(
        absl::StrCat("compatd never reported SERVING; stderr:\n", Stderr()));
  }

  Subprocess process_;
  int grpc_port_ = 0;
  int metrics_port_ = 0;
  int http_port_ = 0;
};

}  // namespace compatd::testing
