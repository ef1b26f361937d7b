// Checks of the Dockerfile, .dockerignore and the container's documentation
// that need no container engine (the machines that run the tests have none):
// the build stage installs exactly scripts/install-deps.sh's BUILD_PACKAGES
// (and the image's configure needs nothing else), the version and revision
// build arguments reach the compile (VERSION also the label), each stage's
// apt-get cleans up after itself, the runtime stage a Debian package for every
// shared library of the built compatd (ldd + dpkg -S) and nothing else, a
// numeric non-root user, the entrypoint (with the listen defaults that
// `docker run` arguments do not replace, checked with the real binary), ports,
// OCI labels, and docs/deployment.md's `docker run` examples.

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace compatd {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string ReadSource(const std::string& relative) {
  return ReadFile(std::string(COMPATD_SOURCE_DIR) + "/" + relative);
}

using ::compatd::testing::RunShell;

struct Instruction {
  std::string keyword;  // upper case
  std::string args;     // continuation lines joined, comments dropped
};

struct Stage {
  std::string from;
  std::string name;
  std::vector<Instruction> instructions;
};

struct Dockerfile {
  std::vector<Instruction> global;  // before the first FROM (ARGs)
  std::vector<Stage> stages;
};

Dockerfile ParseDockerfile(const std::string& text) {
  Dockerfile file;
  std::string logical;
  auto flush = [&file](std::string line) {
    line = std::string(absl::StripAsciiWhitespace(line));
    if (line.empty()) return;
    const size_t space = line.find_first_of(" \t");
    Instruction in{
        absl::AsciiStrToUpper(line.substr(0, space)),
        space == std::string::npos
            ? ""
            : std::string(absl::StripAsciiWhitespace(line.substr(space + 1)))};
    if (in.keyword == "FROM") {
      Stage stage;
      std::vector<std::string> parts =
          absl::StrSplit(in.args, ' ', absl::SkipWhitespace());
      stage.from = parts.empty() ? "" : parts[0];
      if (parts.size() == 3 && absl::AsciiStrToUpper(parts[1]) == "AS") {
        stage.name = parts[2];
      }
      file.stages.push_back(stage);
    } else if (file.stages.empty()) {
      file.global.push_back(in);
    } else {
      file.stages.back().instructions.push_back(in);
    }
  };
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (absl::StartsWith(line, "#")) continue;  // comments, also inside RUNs
    if (absl::EndsWith(line, "\\")) {
      line.remove_suffix(1);
      absl::StrAppend(&logical, line, " ");
      continue;
    }
    absl::StrAppend(&logical, line);
    flush(logical);
    logical.clear();
  }
  flush(logical);
  return file;
}

// The package names of every `apt-get install` in `stage`'s RUNs.
std::vector<std::string> AptInstalls(const Stage& stage) {
  std::vector<std::string> packages;
  for (const Instruction& in : stage.instructions) {
    if (in.keyword != "RUN") continue;
    for (absl::string_view command : absl::StrSplit(in.args, "&&")) {
      std::vector<std::string> words =
          absl::StrSplit(command, ' ', absl::SkipWhitespace());
      if (words.size() < 2 || words[0] != "apt-get" || words[1] != "install") {
        continue;
      }
      for (size_t i = 2; i < words.size(); ++i) {
        if (!absl::StartsWith(words[i], "-")) packages.push_back(words[i]);
      }
    }
  }
  return packages;
}

// <array>=( ... ) of scripts/install-deps.sh (BUILD_PACKAGES, DEV_PACKAGES).
std::vector<std::string> InstallerPackages(const std::string& array) {
  const std::string script = ReadSource("scripts/install-deps.sh");
  std::smatch match;
  std::vector<std::string> packages;
  if (!std::regex_search(script, match,
                         std::regex("(?:^|\n)" + array + R"(=\(([^)]*)\))"))) {
    return packages;
  }
  for (absl::string_view word : absl::StrSplit(
           match[1].str(), absl::ByAnyChar(" \n\t"), absl::SkipWhitespace())) {
    packages.emplace_back(word);
  }
  return packages;
}

class DockerfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dockerfile_ = ParseDockerfile(ReadSource("Dockerfile"));
    ASSERT_EQ(dockerfile_.stages.size(), 2u) << "build and runtime stages";
  }
  const Stage& build() const { return dockerfile_.stages[0]; }
  const Stage& runtime() const { return dockerfile_.stages[1]; }

  std::vector<std::string> Args(const Stage& stage,
                                const std::string& keyword) const {
    std::vector<std::string> out;
    for (const Instruction& in : stage.instructions) {
      if (in.keyword == keyword) out.push_back(in.args);
    }
    return out;
  }

  Dockerfile dockerfile_;
};

TEST_F(DockerfileTest, BothStagesAreDebian12) {
  ASSERT_THAT(dockerfile_.global, Not(IsEmpty()));
  EXPECT_EQ(dockerfile_.global[0].keyword, "ARG");
  EXPECT_EQ(dockerfile_.global[0].args, "DEBIAN_IMAGE=debian:12");
  EXPECT_EQ(build().from, "${DEBIAN_IMAGE}");
  EXPECT_EQ(runtime().from, "${DEBIAN_IMAGE}");
  EXPECT_EQ(build().name, "build");
}

TEST_F(DockerfileTest, InstallerListsPackages) {
  // Sanity of the parser the next tests rely on.
  EXPECT_THAT(InstallerPackages("BUILD_PACKAGES"), Contains("libgrpc++-dev"));
  EXPECT_THAT(InstallerPackages("BUILD_PACKAGES"), Contains("cmake"));
  EXPECT_THAT(InstallerPackages("DEV_PACKAGES"), Contains("libgtest-dev"));
}

TEST_F(DockerfileTest, BuildStageInstallsExactlyTheInstallersBuildPackages) {
  // The build stage runs scripts/install-deps.sh itself, copied in before,
  // and installs nothing else: its package list is BUILD_PACKAGES by
  // construction.
  EXPECT_THAT(Args(build(), "COPY"),
              Contains("scripts/install-deps.sh scripts/install-deps.sh"));
  bool runs_installer = false;
  for (const std::string& run : Args(build(), "RUN")) {
    runs_installer |=
        absl::StrContains(run, "bash scripts/install-deps.sh --build-only");
  }
  EXPECT_TRUE(runs_installer);
  EXPECT_THAT(AptInstalls(build()), IsEmpty());
}

// Issue 17, item 15: the build stage installed Prometheus, clang-format and
// the test libraries, which the image's build never uses.
TEST_F(DockerfileTest, BuildPackagesHoldNoTestBenchmarkOrToolPackage) {
  const std::vector<std::string> build = InstallerPackages("BUILD_PACKAGES");
  ASSERT_THAT(build, Not(IsEmpty()));
  for (const std::string& dev : InstallerPackages("DEV_PACKAGES")) {
    EXPECT_THAT(build, Not(Contains(dev))) << dev;
  }
  for (const char* unused :
       {"prometheus", "clang-format", "python3", "libgtest-dev", "libgmock-dev",
        "libbenchmark-dev", "libyaml-cpp-dev"}) {
    EXPECT_THAT(build, Not(Contains(unused)));
  }
}

// ... and the image's configure (-DBUILD_TESTING=OFF) needs none of them:
// CMake configures the tree with every package DEV_PACKAGES provides
// declared missing.
TEST_F(DockerfileTest, ImageConfigureNeedsNoDevPackage) {
  // The CMake package each library of DEV_PACKAGES provides; the others are
  // programs, which must not be looked for either (lld is used only when the
  // linker flag works: the image links with GNU ld).
  const std::map<std::string, std::string> cmake_package = {
      {"libgtest-dev", "GTest"},
      {"libgmock-dev", "GTest"},
      {"libbenchmark-dev", "benchmark"},
      {"libyaml-cpp-dev", "yaml-cpp"},
      {"python3", "Python3"},
  };
  std::string disable;
  for (const std::string& dev : InstallerPackages("DEV_PACKAGES")) {
    auto it = cmake_package.find(dev);
    if (it == cmake_package.end()) {
      EXPECT_THAT(dev, ::testing::AnyOf("prometheus", "clang-format", "curl",
                                        "wrk", "jp", "chromium", "lld"))
          << dev << ": which CMake package does it provide?";
      continue;
    }
    disable += " -DCMAKE_DISABLE_FIND_PACKAGE_" + it->second + "=ON";
  }
  char dir[] = "/tmp/compatd-image-configure-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  int code = 0;
  const std::string out = RunShell(
      std::string("cmake -S '") + COMPATD_SOURCE_DIR + "' -B '" + dir +
          "' -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF "
          "-DCOMPATD_VERSION=9.8.7-rc.1 -DCOMPATD_REVISION=0123456789ab" +
          disable + " 2>&1",
      &code);
  EXPECT_EQ(code, 0) << out;
  const std::string cache = ReadFile(std::string(dir) + "/CMakeCache.txt");
  EXPECT_THAT(cache, Not(HasSubstr("promtool")));
  EXPECT_THAT(cache, Not(HasSubstr("clang-format")));
  // The version and revision given are what the compatd binary is compiled
  // with (--version, compatd_build_info), not the project's.
  const std::string flags =
      ReadFile(std::string(dir) + "/service/CMakeFiles/compatd.dir/flags.make");
  EXPECT_THAT(flags, HasSubstr(R"(-DCOMPATD_VERSION=\"9.8.7-rc.1\")"));
  EXPECT_THAT(flags, HasSubstr(R"(-DCOMPATD_REVISION=\"0123456789ab\")"));
  RunShell(std::string("rm -rf '") + dir + "'", &code);
}

// compatd_build_info showed revision "unknown" in the image: the REVISION
// build argument only labelled the runtime stage, and CMake asked git, which
// the build context (without .git) does not have.
TEST_F(DockerfileTest, RevisionBuildArgumentReachesTheCompile) {
  bool declared = false;
  bool passed = false;
  for (const Instruction& in : build().instructions) {
    if (in.keyword == "ARG" && absl::StartsWith(in.args, "REVISION")) {
      declared = true;
    }
    if (in.keyword == "RUN" && absl::StrContains(in.args, "cmake -S")) {
      EXPECT_TRUE(declared) << "ARG REVISION must come before the configure";
      passed = absl::StrContains(in.args, "-DCOMPATD_REVISION=\"${REVISION}\"");
    }
  }
  EXPECT_TRUE(declared);
  EXPECT_TRUE(passed);
  EXPECT_THAT(ReadSource("CMakeLists.txt"),
              HasSubstr("include(cmake/compatd_revision.cmake)"));
}

// Issue 26: `--build-arg VERSION=` set the image's label but not what
// `compatd --version` and compatd_build_info report (the project's version).
// One build argument for both now, whose default is the project's version.
TEST_F(DockerfileTest, VersionBuildArgumentReachesTheCompileAndTheLabel) {
  std::smatch project;
  const std::string cmake = ReadSource("CMakeLists.txt");
  ASSERT_TRUE(std::regex_search(
      cmake, project, std::regex(R"(project\(compatd VERSION ([0-9.]+))")));
  EXPECT_THAT(dockerfile_.global,
              Contains(::testing::Field(&Instruction::args,
                                        "VERSION=" + project[1].str())))
      << "the default VERSION is CMakeLists.txt's project version";
  bool declared = false;
  bool passed = false;
  for (const Instruction& in : build().instructions) {
    if (in.keyword == "ARG" && in.args == "VERSION") declared = true;
    if (in.keyword == "RUN" && absl::StrContains(in.args, "cmake -S")) {
      EXPECT_TRUE(declared) << "ARG VERSION must come before the configure";
      passed = absl::StrContains(in.args, "-DCOMPATD_VERSION=\"${VERSION}\"");
    }
  }
  EXPECT_TRUE(declared);
  EXPECT_TRUE(passed);
  // The runtime stage takes the same global argument (no default of its own)
  // for its label.
  EXPECT_THAT(Args(runtime(), "ARG"), Contains("VERSION"));
  EXPECT_THAT(absl::StrJoin(Args(runtime(), "LABEL"), " "),
              HasSubstr(R"(org.opencontainers.image.version="${VERSION}")"));
  EXPECT_THAT(ReadSource("service/CMakeLists.txt"),
              Not(HasSubstr("PROJECT_VERSION")));
}

// A version or revision that is not a plain word would be pasted into a C
// string literal: the configure refuses it, naming the variable.
TEST(CompatdVersionTest, AVersionThatIsNotAPlainWordIsRefusedAtConfigure) {
  char dir[] = "/tmp/compatd-bad-version-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  int code = 0;
  const std::string out =
      RunShell(std::string("cmake -S '") + COMPATD_SOURCE_DIR + "' -B '" + dir +
                   "' -DBUILD_TESTING=OFF '-DCOMPATD_VERSION=1.0\"; x' 2>&1",
               &code);
  EXPECT_NE(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("COMPATD_VERSION"));
  EXPECT_THAT(out, HasSubstr("expected at most 64 letters"));
  RunShell(std::string("rm -rf '") + dir + "'", &code);
}

// Each RUN that fetches package lists removes them, and the runtime stage's
// apt-get clean drops downloaded packages even on a base image without
// Debian's docker-clean configuration (DEBIAN_IMAGE may name another one).
TEST_F(DockerfileTest, EachStageCleansItsAptCacheInTheSameRun) {
  int fetching = 0;
  for (const Stage* stage : {&build(), &runtime()}) {
    for (const std::string& run : Args(*stage, "RUN")) {
      if (!absl::StrContains(run, "apt-get update")) continue;
      ++fetching;
      EXPECT_THAT(run, HasSubstr("rm -rf /var/lib/apt/lists/*")) << run;
    }
  }
  EXPECT_EQ(fetching, 2);
  bool cleaned = false;
  for (const std::string& run : Args(runtime(), "RUN")) {
    if (absl::StrContains(run, "apt-get install")) {
      cleaned = absl::StrContains(run, "apt-get clean");
    }
  }
  EXPECT_TRUE(cleaned) << "the runtime stage's install RUN runs apt-get clean";
}

// Issue 26: docs/deployment.md's `docker run` examples published ports on
// every interface of the host, and mounted a catalog as a single file, which
// never sees an editor's rename (the bind mount keeps the old inode) so hot
// reload silently stopped. Every example publishes on 127.0.0.1 and mounts
// catalogs as a directory that --catalog= names a file in.
TEST(ContainerDocsTest, DockerRunExamplesPublishOnLoopbackAndMountDirectories) {
  const std::string docs = ReadSource("docs/deployment.md");
  int runs = 0;
  int mounts = 0;
  for (absl::string_view line : absl::StrSplit(docs, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::StartsWith(line, "docker run ")) continue;
    ++runs;
    const std::vector<std::string> words =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    std::vector<std::string> targets;
    for (size_t i = 0; i + 1 < words.size(); ++i) {
      if (words[i] == "-p") {
        EXPECT_TRUE(absl::StartsWith(words[i + 1], "127.0.0.1:")) << line;
      }
      if (words[i] == "-v") {
        ++mounts;
        const std::vector<std::string> parts =
            absl::StrSplit(words[i + 1], ':');
        ASSERT_GE(parts.size(), 2u) << line;
        for (const char* file : {".yaml", ".yml", ".json"}) {
          EXPECT_FALSE(absl::EndsWith(parts[0], file))
              << "a single-file mount: " << line;
        }
        targets.push_back(parts[1]);
      }
    }
    for (const std::string& word : words) {
      if (!absl::StartsWith(word, "--catalog=")) continue;
      bool inside = false;
      for (const std::string& target : targets) {
        inside |= absl::StartsWith(word, "--catalog=" + target + "/");
      }
      EXPECT_TRUE(inside) << word << " is not inside a mounted directory";
    }
  }
  EXPECT_GE(runs, 3);
  EXPECT_GE(mounts, 1);
  EXPECT_THAT(docs, HasSubstr("65532"));  // who must be able to read it
  EXPECT_THAT(docs, HasSubstr("DEBIAN_IMAGE"));
  EXPECT_THAT(docs, HasSubstr("--build-arg VERSION="));
}

// What CMake makes of it, in a directory that is not a git checkout (as the
// image's build context is not).
TEST(CompatdRevisionTest, AGivenRevisionIsUsedWithoutGit) {
  char dir[] = "/tmp/compatd-no-git-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string script =
      std::string(COMPATD_SOURCE_DIR) + "/cmake/compatd_revision.cmake";
  int code = 0;
  EXPECT_EQ(
      RunShell(std::string("cmake -DCOMPATD_REVISION_SOURCE_DIR=") + dir +
                   " -DCOMPATD_REVISION=0123456789ab -P " + script + " 2>&1",
               &code),
      "0123456789ab\n");
  EXPECT_EQ(code, 0);
  EXPECT_EQ(RunShell(std::string("cmake -DCOMPATD_REVISION_SOURCE_DIR=") + dir +
                         " -P " + script + " 2>&1",
                     &code),
            "unknown\n");
  rmdir(dir);
}

TEST_F(DockerfileTest, BuildStageBuildsReleaseWithoutTests) {
  const std::string runs = absl::StrJoin(Args(build(), "RUN"), "\n");
  EXPECT_THAT(runs, HasSubstr("-DCMAKE_BUILD_TYPE=Release"));
  EXPECT_THAT(runs, HasSubstr("-DBUILD_TESTING=OFF"));
  EXPECT_THAT(runs, HasSubstr("--target compatd"));
  EXPECT_THAT(runs, Not(HasSubstr("ctest")));
}

TEST_F(DockerfileTest, RuntimeStageInstallsAPackageForEveryLibraryAndNoMore) {
  std::set<std::string> installed;
  for (const std::string& p : AptInstalls(runtime())) installed.insert(p);
  ASSERT_THAT(installed, Not(IsEmpty()));
  int code = 0;
  const std::string ldd = RunShell(std::string("ldd ") + COMPATD_BINARY, &code);
  ASSERT_EQ(code, 0) << ldd;
  // "\tlibfoo.so.1 => /lib/x86_64-linux-gnu/libfoo.so.1 (0x...)" and
  // "\t/lib64/ld-linux-x86-64.so.2 (0x...)".
  std::vector<std::string> paths;
  const std::regex library(R"((?:=> )?(/[^ ]+) \(0x)");
  for (auto it = std::sregex_iterator(ldd.begin(), ldd.end(), library);
       it != std::sregex_iterator(); ++it) {
    const std::string path = (*it)[1];
    // Sanitizer builds (make test-asan, make test-tsan) link the sanitizers'
    // runtimes; the image's Release build does not.
    const std::string name = path.substr(path.rfind('/') + 1);
    if (absl::StartsWith(name, "libasan.") ||
        absl::StartsWith(name, "libubsan.") ||
        absl::StartsWith(name, "libtsan.") ||
        absl::StartsWith(name, "liblsan.")) {
      continue;
    }
    paths.push_back(path);
  }
  ASSERT_GT(paths.size(), 5u) << ldd;
  // dpkg -S knows the paths packages installed; /lib is a symlink to
  // /usr/lib on Debian 12, so a path not found as ldd prints it is looked up
  // again as its canonical path.
  std::map<std::string, std::string> owners;  // path -> package
  auto look_up = [&owners](const std::vector<std::string>& query,
                           const std::vector<std::string>& as) {
    std::string command = "dpkg -S";
    for (const std::string& path : query) command += " '" + path + "'";
    int ignored = 0;
    const std::string out = RunShell(command + " 2>/dev/null", &ignored);
    for (absl::string_view line : absl::StrSplit(out, '\n')) {
      // "libfoo1:amd64: /usr/lib/x86_64-linux-gnu/libfoo.so.1"
      const size_t separator = line.find(": /");
      if (separator == absl::string_view::npos) continue;
      const std::string path(line.substr(separator + 2));
      const std::string package(line.substr(0, line.find(':')));
      for (size_t i = 0; i < query.size(); ++i) {
        if (query[i] == path) owners[as[i]] = package;
      }
    }
  };
  look_up(paths, paths);
  std::vector<std::string> canonical, original;
  for (const std::string& path : paths) {
    if (owners.count(path)) continue;
    original.push_back(path);
    canonical.push_back(std::string(absl::StripTrailingAsciiWhitespace(
        RunShell("readlink -f '" + path + "'", &code))));
  }
  if (!canonical.empty()) look_up(canonical, original);
  std::set<std::string> needed;
  std::vector<std::string> unowned;
  for (const std::string& path : paths) {
    auto it = owners.find(path);
    if (it == owners.end()) {
      unowned.push_back(path);
    } else {
      needed.insert(it->second);
    }
  }
  EXPECT_THAT(unowned, IsEmpty()) << "libraries no package owns";
  for (const std::string& package : needed) {
    EXPECT_THAT(installed, Contains(package))
        << "the runtime stage must install " << package;
  }
  for (const std::string& package : installed) {
    EXPECT_THAT(needed, Contains(package))
        << package << " is installed but compatd does not link it";
  }
}

TEST_F(DockerfileTest, RuntimeCopiesOnlyTheBinaryFromTheBuildStage) {
  EXPECT_THAT(Args(runtime(), "COPY"),
              ElementsAre("--from=build /out/usr/local/bin/compatd "
                          "/usr/local/bin/compatd"));
}

TEST_F(DockerfileTest, RunsAsANumericNonRootUser) {
  const std::vector<std::string> users = Args(runtime(), "USER");
  ASSERT_EQ(users.size(), 1u);
  std::smatch match;
  ASSERT_TRUE(std::regex_match(users[0], match,
                               std::regex(R"(([0-9]+)(?::([0-9]+))?)")))
      << users[0];
  EXPECT_NE(std::stoi(match[1]), 0);
  if (match[2].matched) {
    EXPECT_NE(std::stoi(match[2]), 0);
  }
}

// The words of an exec-form instruction: ["a", "b"].
std::vector<std::string> ExecForm(const std::string& args) {
  std::vector<std::string> words;
  const std::regex word(R"re("([^"]*)")re");
  for (auto it = std::sregex_iterator(args.begin(), args.end(), word);
       it != std::sregex_iterator(); ++it) {
    words.push_back((*it)[1]);
  }
  return words;
}

TEST_F(DockerfileTest, EntrypointIsCompatdListeningOnAllInterfaces) {
  ASSERT_THAT(Args(runtime(), "ENTRYPOINT"), ::testing::SizeIs(1));
  EXPECT_THAT(ExecForm(Args(runtime(), "ENTRYPOINT")[0]),
              ElementsAre("compatd", "--listen=0.0.0.0:50051",
                          "--metrics-listen=0.0.0.0:9464"));
  // Empty, so that debian:12's CMD ("bash") is not appended.
  EXPECT_THAT(Args(runtime(), "CMD"), ElementsAre("[]"));
  EXPECT_THAT(Args(runtime(), "EXPOSE"), ElementsAre("50051 9464"));
}

// Issue 17, item 15: the listen flags were the CMD, so `docker run image
// --catalog=/c.yaml` replaced them and the service listened on 127.0.0.1
// inside the container, unreachable. Arguments given to `docker run` replace
// CMD and are appended to ENTRYPOINT.
TEST_F(DockerfileTest, ArgumentsOfDockerRunKeepTheListenDefaults) {
  ASSERT_THAT(Args(runtime(), "ENTRYPOINT"), ::testing::SizeIs(1));
  std::vector<std::string> argv = ExecForm(Args(runtime(), "ENTRYPOINT")[0]);
  argv.push_back("--catalog=/etc/compatd/catalog.yaml");  // docker run's
  EXPECT_THAT(argv, Contains("--listen=0.0.0.0:50051"));
  EXPECT_THAT(argv, Contains("--metrics-listen=0.0.0.0:9464"));
}

// Through the real binary: a later flag overrides the ENTRYPOINT's (the last
// of a flag wins), so the defaults can still be changed, and the commands
// still work after them.
TEST_F(DockerfileTest, EntrypointFlagsCanBeOverriddenAndCommandsStillRun) {
  ASSERT_THAT(Args(runtime(), "ENTRYPOINT"), ::testing::SizeIs(1));
  std::vector<std::string> entrypoint =
      ExecForm(Args(runtime(), "ENTRYPOINT")[0]);
  ASSERT_FALSE(entrypoint.empty());
  entrypoint.erase(entrypoint.begin());  // "compatd"
  std::string prefix = COMPATD_BINARY;
  for (const std::string& arg : entrypoint) prefix += " '" + arg + "'";

  int code = 0;
  const std::string eval = RunShell(
      prefix + " eval --rpc=ResolveVersions --request='{}' 2>&1", &code);
  EXPECT_EQ(code, 0) << eval;
  EXPECT_THAT(eval, HasSubstr("\"binaryVersion\""));

  // Served on loopback, never on the ENTRYPOINT's 0.0.0.0 (it would say so).
  // SIGTERM once it listens (up to 60 s: a sanitizer build starts slowly;
  // an ASan run took over a second), not after a fixed second.
  const std::string serve = RunShell(
      "(log=$(mktemp); " + prefix +
          " --listen=127.0.0.1:0 --metrics-listen=127.0.0.1:0 >$log 2>&1 &"
          " pid=$!; for i in $(seq 600); do"
          " grep -q 'gRPC listening' $log && break; sleep 0.1; done;"
          " kill -TERM $pid; wait $pid; cat $log; rm -f $log)",
      &code);
  EXPECT_THAT(serve, HasSubstr("gRPC listening on 127.0.0.1:"));
  EXPECT_THAT(serve, HasSubstr("metrics on http://127.0.0.1:"));
  EXPECT_THAT(serve, Not(HasSubstr("0.0.0.0")));
}

TEST_F(DockerfileTest, HasOciLabels) {
  const std::string labels = absl::StrJoin(Args(runtime(), "LABEL"), " ");
  for (const char* key :
       {"org.opencontainers.image.title=", "org.opencontainers.image.version=",
        "org.opencontainers.image.revision=",
        "org.opencontainers.image.description=",
        "org.opencontainers.image.base.name="}) {
    EXPECT_THAT(labels, HasSubstr(key));
  }
  // The base is what DEBIAN_IMAGE named, not always debian:12.
  EXPECT_THAT(
      labels,
      HasSubstr(R"(org.opencontainers.image.base.name="${DEBIAN_IMAGE}")"));
  EXPECT_THAT(Args(runtime(), "ARG"), Contains("DEBIAN_IMAGE"));
}

TEST_F(DockerfileTest, RuntimeWritesNothingOutsideTmp) {
  // No VOLUME (an anonymous volume), no RUN after the binary is copied that
  // could expect a writable root; TMPDIR points at the tmp volume.
  EXPECT_THAT(Args(runtime(), "VOLUME"), IsEmpty());
  EXPECT_THAT(Args(runtime(), "ENV"), Contains("TMPDIR=/tmp"));
}

TEST(DockerignoreTest, KeepsWhatTheBuildReadsAndDropsTheRest) {
  std::vector<std::string> patterns;
  for (absl::string_view line :
       absl::StrSplit(ReadSource(".dockerignore"), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && !absl::StartsWith(line, "#")) {
      patterns.emplace_back(line);
    }
  }
  EXPECT_THAT(patterns, Contains(".git"));
  EXPECT_THAT(patterns, Contains("build*/"));
  // Every directory the top-level CMakeLists.txt adds (tests/ only with
  // BUILD_TESTING, which the image turns off) is in the context.
  const std::string cmake = ReadSource("CMakeLists.txt");
  const std::regex subdirectory(R"(add_subdirectory\(([a-z_]+)\))");
  int checked = 0;
  for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), subdirectory);
       it != std::sregex_iterator(); ++it) {
    const std::string dir = (*it)[1];
    if (dir == "tests") continue;
    ++checked;
    for (const std::string& pattern : patterns) {
      EXPECT_NE(absl::StripSuffix(pattern, "/"), dir)
          << dir << " is built but ignored";
    }
  }
  EXPECT_GE(checked, 5);
  for (const char* needed : {"scripts", "cmake", "proto"}) {
    EXPECT_THAT(patterns, Not(Contains(needed)));
  }
}

}  // namespace
}  // namespace compatd
