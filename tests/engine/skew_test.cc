// CheckSkew and SkewRulesInForce: KEP-4330 "Skew" and the website's
// version-skew policy (docs/kubernetes-rules.md#skew-policy).

#include "engine/skew.h"

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/count_allocations.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::HasSubstr;

Version V(absl::string_view text) { return Version::Parse(text).value(); }

EffectiveVersions EV(absl::string_view binary, absl::string_view emulation,
                     absl::string_view min_compatibility) {
  EffectiveVersions v;
  v.binary = V(binary);
  v.emulation = V(emulation).ToMajorMinor();
  v.min_compatibility = V(min_compatibility).ToMajorMinor();
  return v;
}

// One catalog for the whole test: a decision's reason points into the
// catalog's rules (CheckSkew's contract: keep the catalog alive), so a
// temporary catalog would leave `d.Reason()` reading freed memory.
const Catalog& DefaultPolicyCatalog() {
  static const Catalog* const catalog = [] {
    auto* c = new Catalog();
    c->skew_policy = DefaultSkewPolicy();
    return c;
  }();
  return *catalog;
}

struct SkewCase {
  const char* name;
  const char* component;
  const char* client;
  const char* binary;
  const char* emulation;
  const char* min_compatibility;
  SkewVerdict verdict;
  const char* min;
  const char* max;
};

class SkewTableTest : public ::testing::TestWithParam<SkewCase> {};

TEST_P(SkewTableTest, MatchesPolicy) {
  const SkewCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(SkewDecision d,
                       CheckSkew(DefaultPolicyCatalog(),
                                 EV(c.binary, c.emulation, c.min_compatibility),
                                 c.component, c.client));
  EXPECT_EQ(d.verdict, c.verdict) << d.Reason();
  EXPECT_EQ(d.min_version.MajorMinorString(), c.min);
  EXPECT_EQ(d.max_version.MajorMinorString(), c.max);
}

constexpr SkewVerdict kAllowed = SkewVerdict::kAllowed;
constexpr SkewVerdict kTooOld = SkewVerdict::kTooOld;
constexpr SkewVerdict kTooNew = SkewVerdict::kTooNew;

INSTANTIATE_TEST_SUITE_P(
    Kep4330, SkewTableTest,
    ::testing::Values(
        // KEP-4330 "Skew" with emulation and min-compatibility in use
        // (binary 1.35, emulation 1.34, min-compatibility 1.32):
        // controllers {minCompat}..{emulation}.
        SkewCase{"KCM_BelowMinCompat", "kube-controller-manager", "1.31",
                 "1.35", "1.34", "1.32", kTooOld, "1.32", "1.34"},
        SkewCase{"KCM_AtMinCompat", "kube-controller-manager", "1.32", "1.35",
                 "1.34", "1.32", kAllowed, "1.32", "1.34"},
        SkewCase{"KCM_AtEmulation", "kube-controller-manager", "1.34", "1.35",
                 "1.34", "1.32", kAllowed, "1.32", "1.34"},
        SkewCase{"KCM_AtBinaryAboveEmulation", "kube-controller-manager",
                 "1.35", "1.35", "1.34", "1.32", kTooNew, "1.32", "1.34"},
        SkewCase{"Scheduler_AtMinCompat", "kube-scheduler", "1.32", "1.35",
                 "1.34", "1.32", kAllowed, "1.32", "1.34"},
        SkewCase{"CCM_AboveEmulation", "cloud-controller-manager", "1.35",
                 "1.35", "1.34", "1.32", kTooNew, "1.32", "1.34"},
        // kube-proxy, kubelet: {minCompat-2}..{emulation}.
        SkewCase{"Kubelet_BelowMinCompatMinus2", "kubelet", "1.29", "1.35",
                 "1.34", "1.32", kTooOld, "1.30", "1.34"},
        SkewCase{"Kubelet_AtMinCompatMinus2", "kubelet", "1.30", "1.35", "1.34",
                 "1.32", kAllowed, "1.30", "1.34"},
        SkewCase{"Kubelet_AtBinaryAboveEmulation", "kubelet", "1.35", "1.35",
                 "1.34", "1.32", kTooNew, "1.30", "1.34"},
        SkewCase{"KubeProxy_AtEmulation", "kube-proxy", "1.34", "1.35", "1.34",
                 "1.32", kAllowed, "1.30", "1.34"},
        SkewCase{"KubeProxy_BelowRange", "kube-proxy", "1.29", "1.35", "1.34",
                 "1.32", kTooOld, "1.30", "1.34"},
        // kubectl: {minCompat}..{emulation+1}.
        SkewCase{"Kubectl_BelowMinCompat", "kubectl", "1.31", "1.35", "1.34",
                 "1.32", kTooOld, "1.32", "1.35"},
        SkewCase{"Kubectl_AtEmulationPlus1", "kubectl", "1.35", "1.35", "1.34",
                 "1.32", kAllowed, "1.32", "1.35"},
        SkewCase{"Kubectl_AboveEmulationPlus1", "kubectl", "1.36", "1.35",
                 "1.34", "1.32", kTooNew, "1.32", "1.35"},
        // The website's policy is the reduction with no emulation:
        // emulation = N = 1.33, min-compatibility = N-1.
        // Controllers N-1..N.
        SkewCase{"Website_KCM_NMinus1", "kube-controller-manager", "1.32",
                 "1.33", "1.33", "1.32", kAllowed, "1.32", "1.33"},
        SkewCase{"Website_KCM_NMinus2", "kube-controller-manager", "1.31",
                 "1.33", "1.33", "1.32", kTooOld, "1.32", "1.33"},
        SkewCase{"Website_KCM_NPlus1", "kube-controller-manager", "1.34",
                 "1.33", "1.33", "1.32", kTooNew, "1.32", "1.33"},
        // kubelet / kube-proxy N-3..N.
        SkewCase{"Website_Kubelet_NMinus3", "kubelet", "1.30", "1.33", "1.33",
                 "1.32", kAllowed, "1.30", "1.33"},
        SkewCase{"Website_Kubelet_NMinus4", "kubelet", "1.29", "1.33", "1.33",
                 "1.32", kTooOld, "1.30", "1.33"},
        SkewCase{"Website_KubeProxy_N", "kube-proxy", "1.33", "1.33", "1.33",
                 "1.32", kAllowed, "1.30", "1.33"},
        SkewCase{"Website_KubeProxy_NPlus1", "kube-proxy", "1.34", "1.33",
                 "1.33", "1.32", kTooNew, "1.30", "1.33"},
        // kubectl N-1..N+1.
        SkewCase{"Website_Kubectl_NMinus1", "kubectl", "1.32", "1.33", "1.33",
                 "1.32", kAllowed, "1.32", "1.34"},
        SkewCase{"Website_Kubectl_NPlus1", "kubectl", "1.34", "1.33", "1.33",
                 "1.32", kAllowed, "1.32", "1.34"},
        SkewCase{"Website_Kubectl_NPlus2", "kubectl", "1.35", "1.33", "1.33",
                 "1.32", kTooNew, "1.32", "1.34"},
        SkewCase{"Website_Kubectl_NMinus2", "kubectl", "1.31", "1.33", "1.33",
                 "1.32", kTooOld, "1.32", "1.34"},
        // Only major.minor counts: patch, pre-release, build and "v".
        SkewCase{"PatchIgnored", "kubelet", "v1.30.15", "1.33", "1.33", "1.32",
                 kAllowed, "1.30", "1.33"},
        SkewCase{"PreReleaseIgnored", "kubectl", "1.34.0-alpha.1", "1.33",
                 "1.33", "1.32", kAllowed, "1.32", "1.34"},
        SkewCase{"BuildIgnored", "kubectl", "v1.35.0+abc", "1.33", "1.33",
                 "1.32", kTooNew, "1.32", "1.34"},
        SkewCase{"GenericTrailingText", "kubelet", "v1.33.2-gke.100 ", "1.33",
                 "1.33", "1.32", kAllowed, "1.30", "1.33"},
        SkewCase{"NewerMajor", "kubelet", "2.0", "1.33", "1.33", "1.32",
                 kTooNew, "1.30", "1.33"},
        SkewCase{"OlderMajor", "kubectl", "0.99", "1.33", "1.33", "1.32",
                 kTooOld, "1.32", "1.34"},
        // The minor is clamped at 0 (Version::OffsetMinor).
        SkewCase{"MinClampedAtMinorZero", "kubelet", "1.0", "1.2", "1.2", "1.1",
                 kAllowed, "1.0", "1.2"}),
    [](const ::testing::TestParamInfo<SkewCase>& info) {
      return std::string(info.param.name);
    });

TEST(SkewReasonTest, TooOldNamesTheBound) {
  ASSERT_OK_AND_ASSIGN(
      SkewDecision d, CheckSkew(DefaultPolicyCatalog(),
                                EV("1.35", "1.34", "1.33"), "kubelet", "1.30"));
  EXPECT_EQ(d.Reason(),
            "kubelet 1.30 is older than the oldest allowed 1.31 "
            "(min-compatibility 1.33 - 2)");
}

TEST(SkewReasonTest, TooNewNamesTheBound) {
  ASSERT_OK_AND_ASSIGN(
      SkewDecision d, CheckSkew(DefaultPolicyCatalog(),
                                EV("1.35", "1.34", "1.33"), "kubectl", "1.36"));
  EXPECT_EQ(d.Reason(),
            "kubectl 1.36 is newer than the newest allowed 1.35 (emulation "
            "1.34 + 1)");
}

TEST(SkewReasonTest, AllowedNamesTheRange) {
  ASSERT_OK_AND_ASSIGN(SkewDecision d, CheckSkew(DefaultPolicyCatalog(),
                                                 EV("1.35", "1.34", "1.33"),
                                                 "kube-scheduler", "v1.33.4"));
  EXPECT_EQ(d.Reason(),
            "kube-scheduler 1.33 is within the allowed range 1.33 "
            "(min-compatibility 1.33) to 1.34 (emulation 1.34)");
}

TEST(SkewPolicyTest, EmptyCatalogPolicyUsesTheKepTable) {
  const Catalog empty;
  ASSERT_OK_AND_ASSIGN(
      SkewDecision d,
      CheckSkew(empty, EV("1.33", "1.33", "1.32"), "kubelet", "1.30"));
  EXPECT_EQ(d.verdict, SkewVerdict::kAllowed);
  EXPECT_EQ(d.min_version.MajorMinorString(), "1.30");
}

TEST(SkewPolicyTest, RulesInForceAreTheCatalogsElseTheKepTable) {
  const Catalog empty;
  const std::vector<SkewRule>& kep = SkewRulesInForce(empty);
  ASSERT_EQ(kep.size(), 3u);
  EXPECT_EQ(kep[1].components,
            (std::vector<std::string>{"kubelet", "kube-proxy"}));
  EXPECT_EQ(kep[1].min.of, SkewBase::kMinCompatibility);
  EXPECT_EQ(kep[1].min.offset, -2);
  EXPECT_EQ(kep[2].max.offset, 1);
  // The same table every time (CheckSkew's decisions point into it).
  const Catalog another_empty;
  EXPECT_EQ(&SkewRulesInForce(another_empty), &kep);

  Catalog own;
  own.skew_policy.push_back(SkewRule{
      {"kube-apiserver"}, {SkewBase::kBinary, -1}, {SkewBase::kBinary, 1}, 0});
  EXPECT_EQ(&SkewRulesInForce(own), &own.skew_policy);
}

TEST(SkewPolicyTest, CatalogPolicyReplacesTheDefault) {
  Catalog c;
  c.skew_policy.push_back(SkewRule{
      {"kube-apiserver"}, {SkewBase::kBinary, -1}, {SkewBase::kBinary, 1}, 0});
  ASSERT_OK_AND_ASSIGN(
      SkewDecision d,
      CheckSkew(c, EV("1.35.2", "1.33", "1.32"), "kube-apiserver", "1.36"));
  EXPECT_EQ(d.verdict, SkewVerdict::kAllowed);
  EXPECT_EQ(d.min_version.MajorMinorString(), "1.34");
  EXPECT_EQ(d.max_version.MajorMinorString(), "1.36");
  EXPECT_THAT(d.Reason(),
              HasSubstr("(binary 1.35 - 1) to 1.36 (binary 1.35 + 1)"));
  EXPECT_THAT(CheckSkew(c, EV("1.35", "1.33", "1.32"), "kubelet", "1.33"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("known components: kube-apiserver")));
}

TEST(SkewErrorTest, UnknownComponentListsKnownOnes) {
  EXPECT_THAT(
      CheckSkew(DefaultPolicyCatalog(), EV("1.33", "1.33", "1.32"),
                "kube-apiserver", "1.33"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("component \"kube-apiserver\" has no skew rule "
                         "(KEP-4330 defines none for it); known components: "
                         "cloud-controller-manager, kube-controller-manager, "
                         "kube-proxy, kube-scheduler, kubectl, kubelet")));
}

TEST(SkewErrorTest, ComponentNamesAreCaseSensitive) {
  EXPECT_THAT(CheckSkew(DefaultPolicyCatalog(), EV("1.33", "1.33", "1.32"),
                        "Kubelet", "1.33"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("component \"Kubelet\"")));
}

class MalformedClientVersionTest
    : public ::testing::TestWithParam<const char*> {};

TEST_P(MalformedClientVersionTest, IsInvalidArgumentNamingTheValue) {
  EXPECT_THAT(CheckSkew(DefaultPolicyCatalog(), EV("1.33", "1.33", "1.32"),
                        "kubelet", GetParam()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("client version \"", GetParam(),
                                              "\" of kubelet"))));
}

INSTANTIATE_TEST_SUITE_P(Parse, MalformedClientVersionTest,
                         ::testing::Values("", "1", "v", "x1.30", "vv1.30",
                                           "v 1.30", "01.30", "1.30\n",
                                           "1.99999999999999999999", "latest"));

// The allocation-free parser must accept exactly what Version::Parse accepts,
// with the same major and minor.
TEST(ClientVersionParserTest, AgreesWithVersionParse) {
  std::vector<std::string> corpus = {"1.30",
                                     "v1.30",
                                     " v1.30.2 ",
                                     "\t1.30",
                                     "1.30.",
                                     "1.30.x",
                                     "1.30-rc.1",
                                     "1.030",
                                     "0.1",
                                     "00.1",
                                     "1.2.3.4",
                                     "v1.2.3-01",
                                     "1.2.3-a..b",
                                     "1.2.3+",
                                     "1.2a.3",
                                     "1.",
                                     ".1.2",
                                     "1..2",
                                     "18446744073709551615.1",
                                     "18446744073709551616.1",
                                     "1.18446744073709551616",
                                     "\v1.2",
                                     "1.2\r",
                                     "1.2 \n",
                                     "v1.33.0-alpha.1"};
  std::mt19937 rng(4330);
  const std::string alphabet = "v0123456789..-+ a\t\n";
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const int len = static_cast<int>(rng() % 9);
    for (int j = 0; j < len; ++j)
      s.push_back(alphabet[rng() % alphabet.size()]);
    corpus.push_back(s);
  }
  Catalog c;
  c.skew_policy.push_back(SkewRule{
      {"probe"}, {SkewBase::kBinary, -1000}, {SkewBase::kBinary, 1000}, 0});
  const EffectiveVersions versions = EV("1.33", "1.33", "1.32");
  int mismatches = 0;
  for (const std::string& s : corpus) {
    absl::StatusOr<Version> parsed = Version::Parse(s);
    absl::StatusOr<SkewDecision> d = CheckSkew(c, versions, "probe", s);
    if (parsed.ok() != d.ok()) {
      ++mismatches;
      ADD_FAILURE() << "\"" << s << "\": Parse " << parsed.status()
                    << " CheckSkew " << d.status();
      continue;
    }
    if (!parsed.ok()) continue;
    const std::string expected =
        absl::StrCat("probe ", parsed->major(), ".", parsed->minor(), " ");
    if (d->Reason().rfind(expected, 0) != 0) {
      ++mismatches;
      ADD_FAILURE() << "\"" << s << "\": " << d->Reason();
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(SkewPerformanceTest, AllocatesNothing) {
  const Catalog& catalog = DefaultPolicyCatalog();
  const Catalog empty;
  const EffectiveVersions versions = EV("1.35", "1.34", "1.33");
  // Warm up function-local statics.
  ASSERT_OK(CheckSkew(empty, versions, "kubectl", "v1.34.2"));
  for (const Catalog* c : {&catalog, &empty}) {
    for (const char* client : {"v1.34.2", "1.20", "1.99.0-alpha.1+build"}) {
      const long before = ::compatd::testing::Allocations();
      absl::StatusOr<SkewDecision> d =
          CheckSkew(*c, versions, "cloud-controller-manager", client);
      const long after = ::compatd::testing::Allocations();
      ASSERT_OK(d);
      EXPECT_EQ(after - before, 0) << client;

      // Writing the reason grows the target string once.
      std::string reason;
      const long before_reason = ::compatd::testing::Allocations();
      d->AppendReason(&reason);
      EXPECT_EQ(::compatd::testing::Allocations() - before_reason, 1) << reason;
      EXPECT_EQ(reason, d->Reason());
    }
  }
}

// The sentence names the rule's component, not a copy of the caller's text:
// the decision stays valid after the request's string is gone.
TEST(SkewReasonTest, OutlivesTheRequestString) {
  const Catalog& catalog = DefaultPolicyCatalog();
  const EffectiveVersions versions = EV("1.35", "1.34", "1.33");
  absl::StatusOr<SkewDecision> d;
  {
    std::string component = "kubelet";
    d = CheckSkew(catalog, versions, component, "1.34");
    component.assign("XXXXXXX");
  }
  ASSERT_OK(d);
  EXPECT_THAT(d->Reason(), ::testing::StartsWith("kubelet 1.34 is within"));
}

}  // namespace
}  // namespace compatd::engine
