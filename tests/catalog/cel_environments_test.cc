// The embedded CEL environments against kubernetes/apiserver's base.go at each
// line's tag (pkg/cel/environment/base.go at v0.31.0 ... v0.36.0 and the
// pre-release v0.37.0-beta.0: the IntroducedVersion of each VersionedOptions
// entry) and the library sources (pkg/cel/library/*.go; cel-go ext/ at the
// version the tag's go.mod pins: v0.20.1, v0.22.0, v0.23.2, v0.26.0, v0.26.0,
// v0.26.0, v0.27.0).
#include "catalog/cel_environments.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/cel_environment.h"
#include "engine/cel_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::catalog {
namespace {

using engine::CelEnvironment;
using engine::CelLibrary;
using engine::CelMissingUse;
using engine::Version;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const CelEnvironment& Env(int minor) {
  const CelEnvironment* env = CelEnvironmentFor(Version::MajorMinor(1, minor));
  if (env == nullptr) {
    ADD_FAILURE() << "no CEL environment for 1." << minor;
    static const CelEnvironment kEmpty;
    return kEmpty;
  }
  return *env;
}

// "name@introduced[-removed][!gate[+]][#scope]" per library, base.go's order
// (scoped libraries last); `+` when the gate is on by default.
std::vector<std::string> Libraries(const CelEnvironment& env) {
  std::vector<std::string> out;
  for (const CelLibrary& l : env.libraries) {
    std::string s =
        absl::StrCat(l.DisplayName(), "@", l.introduced.MajorMinorString());
    if (l.removed.has_value())
      absl::StrAppend(&s, "-", l.removed->MajorMinorString());
    if (!l.feature_gate.empty()) {
      absl::StrAppend(&s, "!", l.feature_gate, l.gate_default ? "+" : "");
    }
    if (!l.scope.empty()) absl::StrAppend(&s, "#", l.scope);
    out.push_back(s);
  }
  return out;
}

// base.go at v0.31.0 (1.31): URLs, Regex, Lists at 1.0; Authz 1.27;
// OptionalTypes, Quantity 1.28; ext.Strings v0 1.0 removed 1.29; ext.Strings v2
// and ext.Sets 1.29; IP, CIDR 1.30; Format and AuthzSelectors
// (AuthorizeWithSelectors) 1.31. v0.32.0 adds TwoVarComprehensions at 1.32,
// v0.33.0 SemverLib(SemverVersion(1)) at 1.33, v0.34.0
// ext.Lists(ListsVersion(3)) at 1.34; v0.35.0 and v0.36.0 add nothing.
const std::vector<std::string> kLine131 = {
    "cel.stdlib@1.0",
    "kubernetes.URLs@1.0",
    "kubernetes.Regex@1.0",
    "kubernetes.Lists@1.0",
    "kubernetes.Authz@1.27",
    "cel.OptionalTypes@1.28",
    "kubernetes.Quantity@1.28",
    "ext.Strings v0@1.0-1.29",
    "ext.Strings v2@1.29",
    "ext.Sets@1.29",
    "kubernetes.IP@1.30",
    "kubernetes.CIDR@1.30",
    "kubernetes.Format@1.31",
    "kubernetes.AuthzSelectors@1.31!AuthorizeWithSelectors"};

// pkg/features/kube_features.go: AuthorizeWithSelectors Alpha (off) at v0.31.0,
// Beta on from 1.32, GA from 1.34; base.go at v0.37.0-beta.0 drops the gate.
// pkg/admission/plugin/cel/compile.go from v0.32.0: `hasPatchTypes`
// (IntroducedVersion 1.0) adds library.JSONPatch for MutatingAdmissionPolicy.
TEST(CelEnvironmentsTest, EveryLineHasBaseGosLibraries) {
  std::vector<std::string> expected = kLine131;
  EXPECT_THAT(Libraries(Env(31)), ElementsAreArray(expected));
  expected.back() += "+";
  expected.push_back("ext.TwoVarComprehensions@1.32");
  expected.push_back("kubernetes.JSONPatch@1.0#mutations");
  EXPECT_THAT(Libraries(Env(32)), ElementsAreArray(expected));
  expected.insert(expected.end() - 1, "kubernetes.SemverLib v1@1.33");
  EXPECT_THAT(Libraries(Env(33)), ElementsAreArray(expected));
  expected.insert(expected.end() - 1, "ext.Lists v3@1.34");
  EXPECT_THAT(Libraries(Env(34)), ElementsAreArray(expected));
  EXPECT_THAT(Libraries(Env(35)), ElementsAreArray(expected));
  EXPECT_THAT(Libraries(Env(36)), ElementsAreArray(expected));
  // v0.37.0-beta.0: Lists becomes library.Lists(ListsVersion(0)) removed at
  // 1.37 and library.Lists(ListsVersion(1)) introduced at 1.37.
  EXPECT_THAT(
      Libraries(Env(37)),
      ElementsAre(
          "cel.stdlib@1.0", "kubernetes.URLs@1.0", "kubernetes.Regex@1.0",
          "kubernetes.Lists v0@1.0-1.37", "kubernetes.Authz@1.27",
          "cel.OptionalTypes@1.28", "kubernetes.Quantity@1.28",
          "ext.Strings v0@1.0-1.29", "ext.Strings v2@1.29", "ext.Sets@1.29",
          "kubernetes.IP@1.30", "kubernetes.CIDR@1.30",
          "kubernetes.Format@1.31", "kubernetes.AuthzSelectors@1.31",
          "ext.TwoVarComprehensions@1.32", "kubernetes.SemverLib v1@1.33",
          "ext.Lists v3@1.34", "kubernetes.Lists v1@1.37",
          "kubernetes.JSONPatch@1.0#mutations"));
}

// Lists v1 adds `includes` (lists.go at v0.37.0-beta.0: a member of a dyn
// receiver and one argument) to v0's functions.
TEST(CelEnvironmentsTest, KubernetesListsV1AddsIncludes) {
  std::vector<std::string> v0, v1;
  for (const CelLibrary& l : Env(37).libraries) {
    if (l.name != "kubernetes.Lists") continue;
    for (const engine::CelFunctionDecl& f : l.functions) {
      (l.version == 0 ? v0 : v1).push_back(f.name);
    }
  }
  EXPECT_THAT(v0, ElementsAre("indexOf", "isSorted", "lastIndexOf", "max",
                              "min", "sum"));
  EXPECT_THAT(v1, ElementsAre("includes", "indexOf", "isSorted", "lastIndexOf",
                              "max", "min", "sum"));
}

TEST(CelEnvironmentsTest, SourcesAreTheTagsAndTheirCelGo) {
  const std::pair<int, const char*> kCelGo[] = {
      {31, "v0.20.1"}, {32, "v0.22.0"}, {33, "v0.23.2"},
      {34, "v0.26.0"}, {35, "v0.26.0"}, {36, "v0.26.0"}};
  for (const auto& [minor, celgo] : kCelGo) {
    EXPECT_EQ(Env(minor).apiserver_tag, absl::StrCat("v0.", minor, ".0"));
    EXPECT_FALSE(Env(minor).apiserver_prerelease);
    EXPECT_EQ(Env(minor).cel_go_version, celgo) << minor;
    EXPECT_EQ(Env(minor).apiserver_commit.size(), 40u);
    EXPECT_EQ(Env(minor).cel_epoch.MajorMinorString(), "1.23");
  }
  // No v0.37.0 tag is reachable: the pre-release tag, said wherever named.
  EXPECT_EQ(Env(37).apiserver_tag, "v0.37.0-beta.0");
  EXPECT_TRUE(Env(37).apiserver_prerelease);
  EXPECT_EQ(Env(37).cel_go_version, "v0.27.0");
  EXPECT_EQ(Env(37).Source(),
            "kubernetes/apiserver v0.37.0-beta.0 (pre-release tag, not a "
            "release), cel-go v0.27.0");
}

// base.go's history (v0.31.0) for releases without a line: 1.23 (the comment's
// "CEL epoch") to 1.30; none before or after the lines.
TEST(CelEnvironmentsTest, OlderReleasesComeFromTheOldestLinesHistory) {
  EXPECT_THAT(Libraries(Env(30)),
              ElementsAreArray(kLine131.begin(), kLine131.end() - 2));
  EXPECT_THAT(
      Libraries(Env(28)),
      ElementsAre("cel.stdlib@1.0", "kubernetes.URLs@1.0",
                  "kubernetes.Regex@1.0", "kubernetes.Lists@1.0",
                  "kubernetes.Authz@1.27", "cel.OptionalTypes@1.28",
                  "kubernetes.Quantity@1.28", "ext.Strings v0@1.0-1.29"));
  EXPECT_EQ(Env(29).history_of, Version::MajorMinor(1, 31));
  EXPECT_EQ(
      Env(23).Source(),
      "Kubernetes 1.23 from the history in base.go of kubernetes/apiserver "
      "v0.31.0, cel-go v0.20.1");
  EXPECT_EQ(CelEnvironmentFor(Version::MajorMinor(1, 22)), nullptr);
  EXPECT_EQ(CelEnvironmentFor(Version::MajorMinor(1, 38)), nullptr);
  EXPECT_FALSE(Env(31).history_of.has_value());
}

// "use/args@column library@introduced" of the uses NewExpressions at `compat`
// on binary 1.`line` lacks, for an expression of `scope`; each missing use of
// another kind than kNotInNewExpressions is the sentence saying why.
std::vector<std::string> NotWritable(absl::string_view expr, int line,
                                     int compat, absl::string_view scope = "") {
  absl::StatusOr<engine::CelReading> r = engine::ReadCel(expr);
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<std::string> out;
  if (!r.ok()) return out;
  for (const CelMissingUse& m :
       engine::CelUsesNotWritable(*r, Env(line), Version::MajorMinor(1, compat),
                                  EmbeddedCelEnvironments(), scope)) {
    if (m.kind != engine::CelMissingKind::kNotInNewExpressions) {
      out.push_back(engine::CelMissingSentence(m, Env(line),
                                               Version::MajorMinor(1, compat)));
      continue;
    }
    out.push_back(absl::StrCat(m.use.name, "/", m.use.arg_count, "@",
                               m.use.position.column, " ", m.library, "@",
                               m.introduced.MajorMinorString()));
  }
  return out;
}

std::vector<std::string> NotReadable(absl::string_view expr, int written,
                                     int rollback) {
  absl::StatusOr<engine::CelReading> r = engine::ReadCel(expr);
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<std::string> out;
  if (!r.ok()) return out;
  for (const CelMissingUse& m :
       engine::CelUsesNotReadable(*r, Env(written), Env(rollback))) {
    out.push_back(absl::StrCat(m.use.name, " ", m.library));
  }
  return out;
}

// One expression per library: not writable the release before it entered
// NewExpressions, writable from that release on.
TEST(CelEnvironmentsTest, OneExpressionPerLibrary) {
  struct Case {
    const char* expr;
    int introduced;
    std::vector<std::string> missing;  // at introduced - 1
  };
  const Case kCases[] = {
      {"format.dns1123Label().validate(object.metadata.name).hasValue()",
       31,
       {"dns1123Label/0@8 kubernetes.Format@1.31",
        "validate/1@23 kubernetes.Format@1.31"}},
      {"format.named('uuid').hasValue()",
       31,
       {"named/1@8 kubernetes.Format@1.31"}},
      {"m.all(k, v, v > 0)", 32, {"all/3@3 ext.TwoVarComprehensions@1.32"}},
      {"m.exists(k, v, v > 0)",
       32,
       {"exists/3@3 ext.TwoVarComprehensions@1.32"}},
      {"l.existsOne(i, v, v > 0)",
       32,
       {"existsOne/3@3 ext.TwoVarComprehensions@1.32"}},
      {"l.transformList(i, v, v + i)",
       32,
       {"transformList/3@3 ext.TwoVarComprehensions@1.32"}},
      {"m.transformMap(k, v, k != 'a', v)",
       32,
       {"transformMap/4@3 ext.TwoVarComprehensions@1.32"}},
      {"isSemver(object.spec.version)",
       33,
       {"isSemver/1@1 kubernetes.SemverLib v1@1.33"}},
      {"isSemver(object.spec.version, true)",
       33,
       {"isSemver/2@1 kubernetes.SemverLib v1@1.33"}},
      {"semver('1.2.3').major() == 1",
       33,
       {"semver/1@1 kubernetes.SemverLib v1@1.33",
        "major/0@17 kubernetes.SemverLib v1@1.33"}},
      {"lists.range(3).size() == 3", 34, {"range/1@7 ext.Lists v3@1.34"}},
      {"[3, 1].sort() == [1, 3]", 34, {"sort/0@8 ext.Lists v3@1.34"}},
      {"[[1], [2]].flatten().size() == 2",
       34,
       {"flatten/0@12 ext.Lists v3@1.34"}},
      {"[1, 1].distinct().size() == 1", 34, {"distinct/0@8 ext.Lists v3@1.34"}},
      {"l.sortBy(e, e.name).size() > 0", 34, {"sortBy/2@3 ext.Lists v3@1.34"}},
      {"[1, 2, 3].slice(0, 1) == [1]", 34, {"slice/2@11 ext.Lists v3@1.34"}},
  };
  for (const Case& c : kCases) {
    EXPECT_THAT(NotWritable(c.expr, 36, c.introduced - 1),
                ElementsAreArray(c.missing))
        << c.expr;
    EXPECT_THAT(NotWritable(c.expr, 36, c.introduced), IsEmpty()) << c.expr;
  }
  // Libraries every min-compatibility of these lines (1.30 and later) has:
  // nothing to report.
  for (
      const char* e : {
          "url('https://a.io').getHost() == 'a.io' && isURL('x')",  // URLs 1.0
          "'abc'.find('b') == 'b' && 'a1'.findAll('[0-9]').size() == 1",  // Regex
                                                                          // 1.0
          "[1, 2].isSorted() && [1].sum() == 1 && [1].max() == 1 && "
          "[1].indexOf(1) == 0",
          "authorizer.group('apps').resource('deployments').check('get')."
          "allowed()",  // 1.27
          "object.?spec.?x.orValue(1) == 1 && optional.of(1).hasValue()",  // 1.28
          "quantity('1Gi').isGreaterThan(quantity('1Mi')) && isQuantity('1')",  // 1.28
          "'a,b'.split(',').join('-') == 'a-b' && 'x'.lowerAscii() == 'x'",  // Strings
          "'%s'.format(['a']) == 'a' && strings.quote('a') == '\"a\"'",  // Strings
                                                                         // v2 1.29
          "sets.contains([1, 2], [1]) && sets.intersects([1], [1])",  // Sets 1.29
          "ip('10.0.0.1').isLoopback() == false && isIP('::1')",      // IP 1.30
          "cidr('10.0.0.0/8').containsIP(ip('10.0.0.1')) && isCIDR('::/0')",  // CIDR 1.30
          "l.all(x, x > 0) && l.exists_one(x, x == 1) && has(object.spec)",  // CEL
      }) {
    EXPECT_THAT(NotWritable(e, 36, 30), IsEmpty()) << e;
  }
}

// The names several libraries (or CEL's own) share: decided by the call's form
// only, and a use two libraries could serve is available when one of them is.
TEST(CelEnvironmentsTest, SharedNamesAreReportedOnlyWhenProven) {
  // isGreaterThan/isLessThan/compareTo: Quantity (1.28) and Semver (1.33)
  // declare them.
  EXPECT_THAT(
      NotWritable("semver('1.0.0').isGreaterThan(semver('0.1.0'))", 36, 32),
      ElementsAre("semver/1@1 kubernetes.SemverLib v1@1.33",
                  "semver/1@31 kubernetes.SemverLib v1@1.33"));
  EXPECT_THAT(NotWritable("a.isGreaterThan(b) && a.compareTo(b) == 0", 36, 30),
              IsEmpty());
  // major/minor/patch: only Semver.
  EXPECT_THAT(NotWritable("v.major() == 1", 36, 32),
              ElementsAre("major/0@3 kubernetes.SemverLib v1@1.33"));
  // string(): CEL's conversion and the IP/CIDR overloads; a global call of one
  // argument.
  EXPECT_THAT(NotWritable("string(x) == 'a'", 36, 30), IsEmpty());
  // indexOf/lastIndexOf: Strings (1.0) and Lists (1.0) members.
  EXPECT_THAT(
      NotWritable("'abc'.indexOf('b', 1) == 1 && [1].lastIndexOf(1) == 0", 36,
                  30),
      IsEmpty());
  // format: Strings' member format(list) is not the Format library's namespace.
  EXPECT_THAT(NotWritable("'%d'.format([1]) == '1'", 36, 30), IsEmpty());
  // contains: CEL's string member, not sets.contains.
  EXPECT_THAT(NotWritable("'abc'.contains('b')", 36, 30), IsEmpty());
  // reverse(): ext.Lists v3 only in Kubernetes (Strings' reverse is v3, base.go
  // asks for v2).
  EXPECT_THAT(NotWritable("[1, 2].reverse() == [2, 1]", 36, 33),
              ElementsAre("reverse/0@8 ext.Lists v3@1.34"));
  // ip(): a global of one argument is the IP library; CIDR's member ip() is
  // another form.
  EXPECT_THAT(NotWritable("cidr('10.0.0.0/8').ip() == ip('10.0.0.0')", 36, 30),
              IsEmpty());
  // Two-argument all/exists are CEL's macros; three arguments are
  // TwoVarComprehensions.
  EXPECT_THAT(NotWritable("l.all(x, x > 0) && l.exists(x, x > 0)", 36, 30),
              IsEmpty());
}

// What no kube-apiserver environment declares is an undeclared reference: a
// typo; cel-go's ext.Bindings (cel.bind), ext.Math (math.*) and ext.Encoders
// (base64.*), which base.go never enables (v0.31.0-v0.37.0-beta.0); the
// JSONPatch library outside a MutatingAdmissionPolicy mutation (compile.go's
// hasPatchTypes); Quantity's sign, declared with cel.Overload (a global
// function; quantity.go's doc comment writes `<Quantity>.sign()`).
TEST(CelEnvironmentsTest, NamesNoEnvironmentDeclaresAreUndeclared) {
  EXPECT_THAT(NotWritable("isSemverr(x)", 36, 35),
              ElementsAre("undeclared reference to isSemverr in kube-apiserver "
                          "1.36: no kube-apiserver CEL environment declares it "
                          "(base.go enables no library with it)"));
  for (const char* e : {"cel.bind(x, 1, x + 1) > 0", "math.abs(-1) == 1",
                        "math.greatest(1, 2) == 2", "base64.encode(b'a') != ''",
                        "math.sign(-1) == -1"}) {
    ASSERT_THAT(NotWritable(e, 36, 35), testing::SizeIs(1)) << e;
    EXPECT_THAT(NotWritable(e, 36, 35)[0],
                HasSubstr("undeclared reference to "))
        << e;
  }
  EXPECT_THAT(
      NotWritable("jsonpatch.escapeKey('a/b') == 'a~1b'", 36, 35),
      ElementsAre(HasSubstr("only a MutatingAdmissionPolicy's spec.mutations[] "
                            "expressions declare it (kubernetes.JSONPatch)")));
  EXPECT_THAT(NotWritable("jsonpatch.escapeKey('a/b') == 'a~1b'", 36, 35,
                          engine::kCelScopeMutations),
              IsEmpty());
  EXPECT_THAT(NotWritable("sign(quantity('1')) == 1", 36, 35), IsEmpty());
  EXPECT_THAT(NotWritable("quantity('1').sign() == 1", 36, 35),
              ElementsAre(HasSubstr("sign is a global function of "
                                    "kubernetes.Quantity (sign(x)), never a "
                                    "member")));
}

// Functions binary 1.N does not declare at all are refused by it, named with
// the line that brings them (base.go: TwoVarComprehensions 1.32, SemverLib
// 1.33, ext.Lists v3 1.34, Lists v1 1.37).
TEST(CelEnvironmentsTest, FunctionsTheBinaryDoesNotDeclareAreUndeclared) {
  EXPECT_THAT(NotWritable("self.all(k, v, v > 0)", 31, 30),
              ElementsAre("undeclared in kube-apiserver 1.31: all (3 "
                          "arguments) is ext.TwoVarComprehensions, which "
                          "arrives in 1.32"));
  EXPECT_THAT(NotWritable("isSemver(self.v)", 32, 31),
              ElementsAre("undeclared in kube-apiserver 1.32: isSemver is "
                          "kubernetes.SemverLib v1, which arrives in 1.33"));
  EXPECT_THAT(
      NotWritable("self.l.sort() == self.l", 33, 32),
      ElementsAre("undeclared in kube-apiserver 1.33: sort is ext.Lists "
                  "v3, which arrives in 1.34"));
  EXPECT_THAT(NotWritable("self.l.includes('a')", 36, 35),
              ElementsAre("undeclared in kube-apiserver 1.36: includes is "
                          "kubernetes.Lists v1, which arrives in 1.37"));
  // At 1.37 the binary has it; NewExpressions from min-compatibility 1.37.
  EXPECT_THAT(NotWritable("self.l.includes('a')", 37, 36),
              ElementsAre("includes/1@8 kubernetes.Lists v1@1.37"));
  EXPECT_THAT(NotWritable("self.l.includes('a') && [1].isSorted()", 37, 37),
              IsEmpty());
  // A history release: 1.29 had no IP library (base.go: 1.30).
  EXPECT_THAT(NotWritable("isIP('::1')", 29, 28),
              ElementsAre("undeclared in kube-apiserver 1.29: isIP is "
                          "kubernetes.IP, which arrives in 1.30"));
}

// environment.go filterAndBuildOpts: NewExpressions holds a gated library
// exactly when its gate is on (at any min-compatibility), StoredExpressions
// always.
TEST(CelEnvironmentsTest, AuthzSelectorsFollowTheirGate) {
  const char* e =
      "authorizer.group('').resource('pods').fieldSelector('a=b')"
      ".check('list').allowed()";
  EXPECT_THAT(NotWritable(e, 31, 30),
              ElementsAre("undeclared in kube-apiserver 1.31's NewExpressions: "
                          "fieldSelector is kubernetes.AuthzSelectors, which "
                          "needs --feature-gates=AuthorizeWithSelectors=true "
                          "(off by default in 1.31)"));
  EXPECT_THAT(NotWritable(e, 32, 31), IsEmpty());
  EXPECT_THAT(NotWritable(e, 36, 35), IsEmpty());
  EXPECT_THAT(NotWritable(e, 37, 36), IsEmpty());
  EXPECT_THAT(NotReadable(e, 32, 31), IsEmpty());
  EXPECT_THAT(NotReadable(e, 32, 30),
              ElementsAre("fieldSelector kubernetes.AuthzSelectors"));
}

TEST(CelEnvironmentsTest, RemovedLibrariesLeaveNewExpressionsOnly) {
  // ext.Strings v0 left NewExpressions at 1.29 for v2, which keeps every v0
  // function.
  EXPECT_THAT(NotWritable("'a'.upperAscii() == 'A'", 36, 30), IsEmpty());
}

TEST(CelEnvironmentsTest, RollbackReadsWithTheOlderBinarysStoredExpressions) {
  const char* expr =
      "isSemver(object.spec.version) && m.all(k, v, v != '') && "
      "lists.range(2).size() == 2";
  EXPECT_THAT(NotReadable(expr, 36, 35), IsEmpty());
  EXPECT_THAT(NotReadable(expr, 36, 34), IsEmpty());
  EXPECT_THAT(NotReadable(expr, 36, 33), ElementsAre("range ext.Lists v3"));
  EXPECT_THAT(
      NotReadable(expr, 36, 32),
      ElementsAre("isSemver kubernetes.SemverLib v1", "range ext.Lists v3"));
  EXPECT_THAT(
      NotReadable(expr, 36, 31),
      ElementsAre("isSemver kubernetes.SemverLib v1",
                  "all ext.TwoVarComprehensions", "range ext.Lists v3"));
}

TEST(CelEnvironmentsTest, UnlockedLibraries) {
  std::vector<std::string> names;
  for (const CelLibrary* l : engine::CelLibrariesUnlocked(
           Env(36), Version::MajorMinor(1, 32), Version::MajorMinor(1, 34))) {
    names.push_back(l->DisplayName());
  }
  EXPECT_THAT(names, ElementsAre("kubernetes.SemverLib v1", "ext.Lists v3"));
}

TEST(CelEnvironmentsTest, ParseErrorsNameTheLine) {
  absl::StatusOr<std::vector<CelEnvironment>> r =
      ParseCelEnvironments("{\"lines\": [{\"line\": \"x\"}]}", "t.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("t.json:1: line \"x\""));
  r = ParseCelEnvironments("{\"lines\": [{\"lien\": \"1.31\"}]}", "t.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("lien"));
}

}  // namespace
}  // namespace compatd::catalog
