// `compatd scan` as a user runs it: old Helm-chart-style manifests, a
// rendered chart on stdin, Cluster API CRDs against examples/cluster-api.yaml,
// the kustomize output of k8s/, Pluto's exit codes, and the three outputs;
// its --help, and its progress line on a terminal (a pseudo-terminal) but
// never on a pipe.

#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/compatd_harness.h"
#include "tests/integration/curl_json.h"
#include "tests/testing/configmap_fixture.h"
#include "tests/testing/subprocess.h"

namespace compatd {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunCompatd;
using testing::RunResult;

const std::string kScan = std::string(COMPATD_TESTDATA_DIR) + "/scan";

using testing::RunShell;

RunResult Scan(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"scan"};
  all.insert(all.end(), args.begin(), args.end());
  return RunCompatd(COMPATD_BINARY, all);
}

TEST(ScanCliTest, OldChartDirectoryAgainstTheEmbeddedRelease) {
  const RunResult r = Scan({kScan + "/old-chart"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  // One row per finding: location, object, apiVersion, status, release,
  // replacement.
  EXPECT_THAT(r.out, HasSubstr("LOCATION"));
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("old-chart/templates/deployment.yaml:2"),
                    HasSubstr("Deployment shop/shop-web"),
                    HasSubstr("extensions/v1beta1"), HasSubstr("REMOVED"),
                    HasSubstr("apps/v1 Deployment")));
  EXPECT_THAT(r.out, HasSubstr("old-chart/templates/ingress.yaml:1"));
  EXPECT_THAT(r.out, HasSubstr("old-chart/templates/psp.yaml:1"));
  EXPECT_THAT(r.out, HasSubstr("PodDisruptionBudget shop/shop-web"));
  // JSON files are read too; NOTES.txt is not.
  EXPECT_THAT(r.out, HasSubstr("old-chart/templates/cronjob.json:1"));
  EXPECT_THAT(r.out, Not(HasSubstr("NOTES.txt")));
  // The Service is current: no row.
  EXPECT_THAT(r.out, Not(HasSubstr("Service shop/shop-web")));
  EXPECT_THAT(r.out,
              HasSubstr("extensions/v1beta1 Deployment is removed in "
                        "Kubernetes 1.16 and not served at emulation version "
                        "1.36; use apps/v1 Deployment instead"));
  // Kinds a 1.36 binary no longer has at all: the API history.
  EXPECT_THAT(r.out, HasSubstr("policy/v1beta1 PodSecurityPolicy is removed "
                               "in Kubernetes 1.25 (deprecated in 1.21)"));
  EXPECT_THAT(r.out, HasSubstr("6 object(s) checked against Kubernetes 1.36"));
  // Chart.yaml is no Kubernetes object: skipped and counted, not a problem
  // (issue 35).
  EXPECT_THAT(r.err, Not(HasSubstr("Chart.yaml")));
  EXPECT_THAT(r.out, HasSubstr("; 1 non-Kubernetes document skipped"));
}

TEST(ScanCliTest, RenderedChartOnStdin) {
  int code = 0;
  const std::string out =
      RunShell(std::string("cat ") + kScan + "/rendered.yaml | " +
                   COMPATD_BINARY + " scan --target=1.29 - 2>/dev/null",
               &code);
  EXPECT_EQ(code, 3) << out;
  EXPECT_THAT(out, AllOf(HasSubstr("-:10"), HasSubstr("ClusterRole platform"),
                         HasSubstr("rbac.authorization.k8s.io/v1beta1"),
                         HasSubstr("1.22")));
  // autoscaling/v2beta2 HPA: removed 1.26; flowcontrol v1beta2: removed 1.29.
  EXPECT_THAT(out, HasSubstr("HorizontalPodAutoscaler platform/platform"));
  EXPECT_THAT(out,
              HasSubstr("flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema"));
  EXPECT_THAT(out, HasSubstr("networking.k8s.io/v1 Ingress"));
  EXPECT_THAT(out, HasSubstr("storage.k8s.io/v1 StorageClass"));
  EXPECT_THAT(out, Not(HasSubstr("ServiceMonitor")));
  EXPECT_THAT(out, HasSubstr("10 object(s) checked against Kubernetes 1.29 "
                             "(outside the emulation window"));
  EXPECT_THAT(out, HasSubstr("1 custom resource(s) not checked"));
}

TEST(ScanCliTest, FlowControlV1beta2IsOnlyDeprecatedAt128) {
  int code = 0;
  const std::string out = RunShell(
      std::string("sed -n '/flowcontrol.yaml/,/ingress.yaml/p' ") + kScan +
          "/rendered.yaml | " + COMPATD_BINARY + " scan --target=1.28 -",
      &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_THAT(out, HasSubstr("FlowSchema platform"));
  EXPECT_THAT(out, HasSubstr("is deprecated since Kubernetes 1.26 and removed "
                             "in 1.29"));
  EXPECT_THAT(out, HasSubstr("2 deprecated, 0 removed or not served"));
}

TEST(ScanCliTest, DeprecatedOnlyExitsTwoAndCanBeIgnored) {
  RunResult r = Scan({"--target=1.22", kScan + "/deprecated-at-1.22.yaml"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("CronJob nightly"), HasSubstr("DEPRECATED"),
                    HasSubstr("batch/v1 CronJob"),
                    HasSubstr("policy/v1 PodDisruptionBudget")));
  r = Scan({"--target=1.22", "--ignore-deprecations",
            kScan + "/deprecated-at-1.22.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("DEPRECATED"));  // still shown
  r = Scan({"--target=1.25", kScan + "/deprecated-at-1.22.yaml"});
  EXPECT_EQ(r.exit_code, 3);
  r = Scan({"--target=1.25", "--ignore-removals",
            kScan + "/deprecated-at-1.22.yaml"});
  EXPECT_EQ(r.exit_code, 0);
}

TEST(ScanCliTest, CleanManifestsExitZero) {
  const RunResult r = Scan({"--target=1.37", kScan + "/clean.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 object(s) checked against Kubernetes 1.37"));
  EXPECT_THAT(r.out, Not(HasSubstr("LOCATION")));
}

TEST(ScanCliTest, BadInputIsReportedWithItsLineAndTheRestIsScanned) {
  const RunResult r = Scan({kScan + "/bad.yaml", kScan + "/no-such-file.yaml"});
  // The DaemonSet after the broken documents is still found: 3 wins over 1.
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("bad.yaml:14"));
  EXPECT_THAT(r.out, HasSubstr("DaemonSet kube-system/agent"));
  // A document with neither apiVersion nor kind is not a Kubernetes object:
  // skipped and counted (issue 35), an error only with --strict.
  EXPECT_THAT(r.err, Not(HasSubstr("bad.yaml:6:")));
  EXPECT_THAT(r.out, HasSubstr("1 non-Kubernetes document skipped"));
  EXPECT_THAT(r.err, HasSubstr("bad.yaml:13: not YAML"));
  EXPECT_THAT(r.err, HasSubstr("no-such-file.yaml: cannot read"));
  const RunResult strict =
      Scan({"--strict", kScan + "/bad.yaml", kScan + "/no-such-file.yaml"});
  EXPECT_THAT(strict.err,
              HasSubstr("bad.yaml:6: the document has neither apiVersion nor "
                        "kind: not a Kubernetes object (--strict"));
  // Without the finding, bad input alone is an error (exit 1); the skipped
  // document alone is not, but for --strict.
  int code = 0;
  RunShell(std::string("head -12 ") + kScan + "/bad.yaml | " + COMPATD_BINARY +
               " scan - 2>/dev/null",
           &code);
  EXPECT_EQ(code, 1);
  RunShell(std::string("head -8 ") + kScan + "/bad.yaml | " + COMPATD_BINARY +
               " scan - >/dev/null 2>&1",
           &code);
  EXPECT_EQ(code, 0);
  RunShell(std::string("head -8 ") + kScan + "/bad.yaml | " + COMPATD_BINARY +
               " scan --strict - >/dev/null 2>&1",
           &code);
  EXPECT_EQ(code, 1);
}

TEST(ScanCliTest, JsonAndYamlOutputs) {
  RunResult r = Scan({"-o", "json", kScan + "/old-chart/templates/psp.yaml"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("\"status\": \"SCAN_STATUS_REMOVED\""),
                           HasSubstr("\"kind\": \"PodSecurityPolicy\""),
                           HasSubstr("\"removed\": \"1.25\""),
                           HasSubstr("\"line\": 15"),
                           HasSubstr("\"target\": \"1.36\"")));
  r = Scan({"--output=yaml", kScan + "/old-chart/templates/psp.yaml"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("target: \"1.36\"\n"), HasSubstr("blocking: 2\n"),
                    HasSubstr("  - source: \""),
                    HasSubstr("    status: SCAN_STATUS_REMOVED\n"),
                    HasSubstr("    replacement: \"policy/v1 "
                              "PodDisruptionBudget\"\n")));
  r = Scan({"-o", "xml", kScan + "/clean.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("accepted: table, json, yaml"));
}

// Scan output is valid for its format whatever the input (issue 36): two
// files whose names are not UTF-8, each an Ingress whose name carries DEL,
// U+0080, NEL, U+FFFE, an ANSI escape, CR and LF. -o yaml escapes every
// character YAML forbids raw and stays UTF-8; -o json names each file (its
// bytes \xNN, never the other file's name); -o table escapes the controls.
TEST(ScanCliTest, OutputsEscapeWhatTheirFormatForbids) {
  testing::TempDir dir;
  const std::string manifest =
      R"({"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":)"
      R"({"name":"a\u007fb\u0080c\u0085d\ufffee\u001b[2Jf\r\ng"}})";
  for (const char* name : {"/bad\xff.json", "/bad\xfe.json"}) {
    std::ofstream(dir.path() + name) << manifest;
  }
  RunResult yaml = Scan({"-o", "yaml", dir.path()});
  EXPECT_EQ(yaml.exit_code, 3) << yaml.err;
  for (const char* raw : {"\x7f", "\xc2\x80", "\xc2\x85", "\xef\xbf\xbe",
                          "\x1b", "\r", "\xff", "\xfe"}) {
    EXPECT_THAT(yaml.out, Not(HasSubstr(raw))) << yaml.out;
  }
  EXPECT_THAT(
      yaml.out,
      AllOf(HasSubstr(
                R"(name: "a\u007fb\u0080c\u0085d\ufffee\u001b[2Jf\u000d\ng")"),
            HasSubstr(R"(bad\\xff.json")"), HasSubstr(R"(bad\\xfe.json")")));
  RunResult json = Scan({"-o", "json", dir.path()});
  EXPECT_EQ(json.exit_code, 3) << json.err;
  EXPECT_THAT(json.out, AllOf(HasSubstr(R"(bad\\xff.json")"),
                              HasSubstr(R"(bad\\xfe.json")")));
  EXPECT_THAT(json.out, Not(HasSubstr("\xff")));
  RunResult table = Scan({dir.path()});
  EXPECT_EQ(table.exit_code, 3) << table.err;
  for (const char* raw : {"\x1b", "\r", "\x7f", "\xc2\x85", "\xc2\x9b"}) {
    EXPECT_THAT(table.out, Not(HasSubstr(raw))) << table.out;
  }
  EXPECT_THAT(table.out, AllOf(HasSubstr(R"(a\x7fb\u0080c\u0085d)"),
                               HasSubstr(R"(\x1b[2Jf\r\ng)"),
                               HasSubstr(R"(bad\xff.json:1)")));
}

// A JSON list as kubectl reads it with encoding/json (issue 36): the surrogate
// pair in a name is one emoji (libyaml alone refused the document), and of two
// `items` keys only the last list counts (both were scanned).
TEST(ScanCliTest, JsonListReadAsKubectlReadsIt) {
  testing::TempDir dir;
  std::ofstream(dir.path() + "/list.json")
      << R"({"apiVersion":"v1","kind":"List","items":[)"
      << R"({"apiVersion":"policy/v1beta1","kind":"PodSecurityPolicy",)"
      << R"("metadata":{"name":"gone"}}],)"
      << R"("items":[{"apiVersion":"extensions/v1beta1","kind":"Ingress",)"
      << R"("metadata":{"name":"smile-\ud83d\ude00"}}]})";
  RunResult json = Scan({"--target=1.36", "-o", "json", dir.path()});
  EXPECT_EQ(json.exit_code, 3) << json.out << json.err;
  EXPECT_THAT(json.out, AllOf(HasSubstr("smile-\xF0\x9F\x98\x80"),
                              HasSubstr("appears twice"),
                              Not(HasSubstr("PodSecurityPolicy")),
                              Not(HasSubstr("bad-document"))));
}

TEST(ScanCliTest, ClusterApiCrdsAgainstTheirHistory) {
  const std::string catalog =
      std::string(COMPATD_SOURCE_DIR) + "/examples/cluster-api.yaml";
  // v1.14's CRD is a release of the history, and v1beta1 is still listed
  // (unserved) for its stored objects: only the v1beta1 Cluster, which the
  // CRD no longer serves, is a finding.
  RunResult r =
      Scan({"--catalog=" + catalog, kScan + "/capi/cluster-crd-v1.14.yaml"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Cluster default/legacy"));
  EXPECT_THAT(r.out, HasSubstr("CRD clusters.cluster.x-k8s.io lists version "
                               "v1beta1 as not served"));
  EXPECT_THAT(r.out, Not(HasSubstr("Cluster default/current")));
  EXPECT_THAT(r.out, Not(HasSubstr("CRD-VIOLATION")));
  // Dropping v1beta1 while the history ends at v1.13: too early.
  r = Scan({"--catalog=" + kScan + "/capi/history-to-v1.13.yaml",
            kScan + "/capi/cluster-crd-without-v1beta1.yaml"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("CRD-VIOLATION"));
  EXPECT_THAT(r.out, HasSubstr("taken as release v1.14, after the history's "
                               "last, v1.13"));
  EXPECT_THAT(r.out, HasSubstr("status.storedVersions lists v1beta1, which "
                               "spec.versions no longer has"));
}

TEST(ScanCliTest, KustomizeOutputOfK8s) {
  int code = 0;
  RunShell("command -v kubectl >/dev/null 2>&1", &code);
  if (code != 0) GTEST_SKIP() << "kubectl is not installed: cannot render k8s/";
  const std::string out =
      RunShell(std::string("kubectl kustomize ") + COMPATD_SOURCE_DIR +
                   "/k8s | " + COMPATD_BINARY + " scan --target=1.36 -",
               &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("object(s) checked against Kubernetes 1.36"));
  EXPECT_THAT(out, HasSubstr(" 0 deprecated, 0 removed or not served"));
}

TEST(ScanCliTest, UsageErrorsExitOne) {
  RunResult r = Scan({});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("nothing to scan"));
  r = Scan({"--target=1.15", kScan + "/clean.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("scans cover Kubernetes 1.16 and later"));
  r = Scan({"--no-such-flag", kScan + "/clean.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  r = RunCompatd(COMPATD_BINARY, {"--target=1.30"});
  EXPECT_EQ(r.exit_code, 2);  // the server's usage error
  EXPECT_THAT(r.err, HasSubstr("--target is a flag of compatd scan, not of "
                               "the server"));
  r = Scan({"--http-listen=127.0.0.1:0", kScan + "/clean.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--http-listen is a server flag that compatd "
                               "scan does not use"));
}

TEST(ScanCliTest, HelpIsTheCommandsOwn) {
  const RunResult r = Scan({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, AllOf(HasSubstr("Usage: compatd scan [--target=1.37]"),
                           HasSubstr("--ignore-removals (default: false)"),
                           HasSubstr("-o, --output=STRING"),
                           HasSubstr("  3  removed, not served"),
                           Not(HasSubstr("--listen"))));
}

// A tree of `files` manifests, one Deployment each, in `dir` (each test its
// own: ctest runs tests side by side).
std::string ManyManifests(const testing::ScopedTempDir& tree, int files) {
  const std::string dir = tree.Join("manifests");
  std::filesystem::create_directories(dir);
  for (int i = 0; i < files; ++i) {
    std::ofstream(dir + "/deploy-" + std::to_string(i) + ".yaml")
        << "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d" << i
        << "\n";
  }
  return dir;
}

struct PtyRun {
  int exit_code = -1;
  std::string terminal;  // what compatd wrote to the terminal (stderr)
  std::string out;       // stdout, a file
  double seconds = 0;
};

// Runs compatd with stderr on a pseudo-terminal and stdout in a file.
PtyRun RunWithStderrOnATerminal(const std::vector<std::string>& args,
                                const testing::ScopedTempDir& dir) {
  PtyRun run;
  int master = -1, slave = -1;
  if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return run;
  const std::string out_path = dir.Join("stdout");
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(out, STDOUT_FILENO);
    dup2(slave, STDERR_FILENO);
    close(master);
    std::vector<char*> argv = {const_cast<char*>(COMPATD_BINARY)};
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(COMPATD_BINARY, argv.data());
    _exit(127);
  }
  close(slave);
  char buffer[4096];
  while (true) {
    const ssize_t n = read(master, buffer, sizeof(buffer));
    if (n > 0) {
      run.terminal.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child's side is closed
    }
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  run.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream out(out_path);
  run.out.assign(std::istreambuf_iterator<char>(out),
                 std::istreambuf_iterator<char>());
  return run;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size())) {
    ++n;
  }
  return n;
}

TEST(ScanCliTest, ProgressOnATerminalIsRedrawnAndCleared) {
  testing::ScopedTempDir tree;
  ASSERT_FALSE(tree.path().empty());
  const std::string dir = ManyManifests(tree, 3000);
  const PtyRun run = RunWithStderrOnATerminal({"scan", dir}, tree);
  ASSERT_EQ(run.exit_code, 0) << run.terminal << run.out;
  // Files and objects so far, each redraw from the line's start, erased.
  EXPECT_THAT(run.terminal, HasSubstr("\r\033[Kcompatd scan: "));
  EXPECT_THAT(run.terminal, HasSubstr("/3000 file(s), "));
  EXPECT_THAT(run.terminal, HasSubstr(" object(s)"));
  // The line is cleared at the end: nothing after the last erase.
  ASSERT_GE(run.terminal.size(), 4u);
  EXPECT_EQ(run.terminal.substr(run.terminal.size() - 4), "\r\033[K");
  // At most ten redraws a second (and the first at once).
  const size_t redraws = Count(run.terminal, "\r\033[Kcompatd scan: ");
  EXPECT_GE(redraws, 1u);
  EXPECT_LE(redraws, 2 + static_cast<size_t>(run.seconds * 10)) << run.seconds;
  // stdout (a file) has the table only.
  EXPECT_THAT(run.out, HasSubstr("3000 object(s) checked"));
  EXPECT_THAT(run.out, Not(HasSubstr("\033")));
}

TEST(ScanCliTest, NoProgressOnAPipe) {
  testing::ScopedTempDir tree;
  ASSERT_FALSE(tree.path().empty());
  const std::string dir = ManyManifests(tree, 300);
  const RunResult r = Scan({dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, Not(HasSubstr("\033")));
  EXPECT_THAT(r.out, Not(HasSubstr("\r")));
}

// Manifests as real repositories have them: a file named just ".yaml", an
// alias and a merge key hiding removed APIs, a key written twice, an empty
// *List, an old kustomization, two CRDs of one name.
class RealManifestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string d = dir_.path();
    ASSERT_TRUE(testing::WriteFile(d + "/.yaml",
                                   "x-api: &old batch/v1beta1\n"
                                   "apiVersion: *old\n"
                                   "kind: CronJob\n"
                                   "metadata: {name: nightly}\n"));
    ASSERT_TRUE(testing::WriteFile(
        d + "/merge.yaml",
        "base: &base {apiVersion: policy/v1beta1, kind: PodDisruptionBudget}\n"
        "<<: *base\n"
        "metadata: {name: web}\n"));
    ASSERT_TRUE(testing::WriteFile(d + "/twice.yaml",
                                   "apiVersion: extensions/v1beta1\n"
                                   "kind: Ingress\n"
                                   "apiVersion: networking.k8s.io/v1\n"
                                   "metadata: {name: web}\n"));
    ASSERT_TRUE(testing::WriteFile(
        d + "/lists.yaml", "apiVersion: v1\nkind: ConfigMapList\nitems:\n"));
    ASSERT_TRUE(testing::WriteFile(d + "/kustomization.yaml",
                                   "resources:\n- merge.yaml\n"
                                   "namePrefix: dev-\n"));
    const std::string crd =
        "apiVersion: apiextensions.k8s.io/v1\n"
        "kind: CustomResourceDefinition\n"
        "metadata: {name: widgets.example.com}\n"
        "spec:\n"
        "  group: example.com\n"
        "  names: {kind: Widget, plural: widgets}\n"
        "  scope: Namespaced\n"
        "  versions:\n"
        "  - {name: v1, served: true, storage: true}\n";
    ASSERT_TRUE(testing::WriteFile(d + "/crds.yaml", crd + "---\n" + crd));
  }
  testing::TempDir dir_;
};

TEST_F(RealManifestsTest, ReadAsKubectlReadsThem) {
  const RunResult r = Scan({"--target=1.29", dir_.path()});
  // batch/v1beta1 CronJob and policy/v1beta1 PodDisruptionBudget: removed
  // in Kubernetes 1.25.
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("/.yaml:1"), HasSubstr("CronJob nightly"),
                           HasSubstr("batch/v1beta1"), HasSubstr("REMOVED")));
  EXPECT_THAT(r.out, AllOf(HasSubstr("/merge.yaml:1"),
                           HasSubstr("PodDisruptionBudget web"),
                           HasSubstr("policy/v1beta1")));
  // The Ingress's last apiVersion counts: networking.k8s.io/v1, served.
  EXPECT_THAT(r.out, Not(HasSubstr("extensions/v1beta1")));
  EXPECT_THAT(r.err, HasSubstr("twice.yaml:3: warning: key \"apiVersion\" "
                               "appears twice in one mapping (lines 1 and 3)"));
  EXPECT_THAT(r.err, HasSubstr("kustomization.yaml:1: warning: a "
                               "kustomization without apiVersion"));
  EXPECT_THAT(r.err, HasSubstr("CustomResourceDefinition widgets.example.com "
                               "(example.com Widget) is defined twice"));
  // No bad document: ConfigMapList with `items:` is an empty list.
  EXPECT_THAT(r.out, HasSubstr("0 bad document(s)"));
  EXPECT_THAT(r.err, Not(HasSubstr("ConfigMapList")));
}

google::protobuf::Value ParseValue(const std::string& text) {
  return ::compatd::testing::ParseJson(text);
}

const google::protobuf::Value& Get(const google::protobuf::Value& object,
                                   const std::string& name) {
  return ::compatd::testing::JsonField(object, name);
}

// GitHub code scanning's upload takes SARIF 2.1.0 and requires, of what a
// tool writes (docs.github.com, "SARIF support for code scanning"):
// version "2.1.0", runs[].tool.driver.name, rules with an id, and results
// with a ruleId, message.text and at least one location whose
// physicalLocation has artifactLocation.uri (relative to the checkout) and
// region.startLine.
TEST_F(RealManifestsTest, SarifHasWhatGithubsUploadRequires) {
  int code = 0;
  const std::string out =
      RunShell("cd '" + dir_.path() + "' && " + COMPATD_BINARY +
                   " scan --target=1.29 -o sarif . 2>/dev/null",
               &code);
  EXPECT_EQ(code, 3) << out;
  const google::protobuf::Value log = ParseValue(out);
  EXPECT_EQ(Get(log, "version").string_value(), "2.1.0");
  EXPECT_THAT(Get(log, "$schema").string_value(), HasSubstr("sarif-2.1.0"));
  const auto& runs = Get(log, "runs").list_value().values();
  ASSERT_EQ(runs.size(), 1);
  const google::protobuf::Value& driver = Get(Get(runs[0], "tool"), "driver");
  EXPECT_EQ(Get(driver, "name").string_value(), "compatd");
  std::vector<std::string> rule_ids;
  for (const auto& rule : Get(driver, "rules").list_value().values()) {
    const std::string id = Get(rule, "id").string_value();
    EXPECT_FALSE(id.empty());
    EXPECT_THAT(rule_ids, Not(::testing::Contains(id)));  // one per kind
    EXPECT_FALSE(
        Get(Get(rule, "shortDescription"), "text").string_value().empty());
    rule_ids.push_back(id);
  }
  EXPECT_THAT(rule_ids, ::testing::IsSupersetOf(
                            {"compatd/deprecated", "compatd/removed",
                             "compatd/not-served", "compatd/unknown"}));
  const auto& results = Get(runs[0], "results").list_value().values();
  ASSERT_EQ(results.size(), 2) << out;
  std::vector<std::string> uris;
  for (const auto& result : results) {
    const std::string rule = Get(result, "ruleId").string_value();
    EXPECT_EQ(rule, "compatd/removed");
    const int index = static_cast<int>(Get(result, "ruleIndex").number_value());
    ASSERT_LT(index, static_cast<int>(rule_ids.size()));
    EXPECT_EQ(rule_ids[index], rule);
    EXPECT_EQ(Get(result, "level").string_value(), "error");
    EXPECT_THAT(Get(Get(result, "message"), "text").string_value(),
                HasSubstr("removed in Kubernetes 1.25"));
    const auto& locations = Get(result, "locations").list_value().values();
    ASSERT_GE(locations.size(), 1);
    const google::protobuf::Value& physical =
        Get(locations[0], "physicalLocation");
    const std::string uri =
        Get(Get(physical, "artifactLocation"), "uri").string_value();
    EXPECT_FALSE(uri.empty());
    EXPECT_NE(uri[0], '/');
    uris.push_back(uri);
    EXPECT_EQ(Get(Get(physical, "region"), "startLine").number_value(), 1);
    EXPECT_EQ(Get(Get(result, "properties"), "targetRelease").string_value(),
              "1.29");
    EXPECT_FALSE(Get(Get(result, "partialFingerprints"), "compatdObject/v1")
                     .string_value()
                     .empty());
  }
  EXPECT_THAT(uris, ::testing::UnorderedElementsAre(".yaml", "merge.yaml"));
}

TEST(ScanCliTest, WarningsAloneLeaveTheScanClean) {
  testing::TempDir dir;
  ASSERT_TRUE(testing::WriteFile(dir.path() + "/twice.yaml",
                                 "apiVersion: v1\nkind: Pod\nkind: Pod\n"
                                 "metadata: {name: p}\n"));
  const RunResult r = Scan({dir.path()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: key \"kind\" appears twice"));
}

}  // namespace
}  // namespace compatd
