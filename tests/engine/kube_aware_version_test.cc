// apimachinery pkg/version/helpers.go CompareKubeAwareVersionStrings.

#include "engine/kube_aware_version.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace compatd::engine {
namespace {

int Sign(int x) { return x < 0 ? -1 : (x > 0 ? 1 : 0); }

struct GreaterCase {
  const char* v1;
  const char* v2;
  bool expected_greater;
};

// kubernetes/apimachinery pkg/version/helpers_test.go
// TestCompareKubeAwareVersionStrings, every row.
const GreaterCase kHelpersTestCases[] = {
    {"v1", "v2", false},
    {"v2", "v1", true},
    {"v10", "v2", true},
    {"v1", "v2alpha1", true},
    {"v1", "v2beta1", true},
    {"v1alpha2", "v1alpha1", true},
    {"v1beta1", "v2alpha3", true},
    {"v1alpha10", "v1alpha2", true},
    {"v1beta10", "v1beta2", true},
    {"foo", "v1beta2", false},
    {"bar", "foo", true},
    {"version1", "version2", true},
    {"version1", "version10", true},
};

class HelpersTest : public ::testing::TestWithParam<GreaterCase> {};

TEST_P(HelpersTest, MatchesApimachinery) {
  const GreaterCase& c = GetParam();
  EXPECT_EQ(CompareKubeAwareVersionStrings(c.v1, c.v2) > 0, c.expected_greater)
      << c.v1 << " vs " << c.v2;
}

INSTANTIATE_TEST_SUITE_P(Apimachinery, HelpersTest,
                         ::testing::ValuesIn(kHelpersTestCases));

TEST(KubeAwareVersionTest, SortsTheDocumentedOrder) {
  // docs/kubernetes-rules.md#kube-aware-version-order and the helpers.go doc
  // comment.
  std::vector<std::string> versions = {"v1alpha2",  "v1beta1", "v2",
                                       "v1alpha10", "v1",      "v2alpha1",
                                       "v10",       "v1beta2", "v2beta1"};
  std::sort(versions.begin(), versions.end(),
            [](const std::string& a, const std::string& b) {
              return CompareKubeAwareVersionStrings(a, b) > 0;
            });
  EXPECT_EQ(versions, (std::vector<std::string>{
                          "v10", "v2", "v1", "v2beta1", "v1beta2", "v1beta1",
                          "v2alpha1", "v1alpha10", "v1alpha2"}));
}

TEST(KubeAwareVersionTest, KubeVersionsOutrankNonKubeStrings) {
  for (const char* non_kube : {"foo", "v1.1", "V1", "v", "v1beta", "v1gamma1",
                               "", "v1alpha1x", " v1", "v-1"}) {
    EXPECT_GT(CompareKubeAwareVersionStrings("v1alpha1", non_kube), 0)
        << non_kube;
    EXPECT_LT(CompareKubeAwareVersionStrings(non_kube, "v1alpha1"), 0)
        << non_kube;
  }
}

TEST(KubeAwareVersionTest, NonKubeStringsSortReverseAlphabetically) {
  EXPECT_GT(CompareKubeAwareVersionStrings("bar", "foo"), 0);
  EXPECT_LT(CompareKubeAwareVersionStrings("foo", "bar"), 0);
  EXPECT_GT(CompareKubeAwareVersionStrings("v1.1", "v1.2"), 0);
}

TEST(KubeAwareVersionTest, EqualStringsCompareEqual) {
  EXPECT_EQ(CompareKubeAwareVersionStrings("v1beta1", "v1beta1"), 0);
  EXPECT_EQ(CompareKubeAwareVersionStrings("foo", "foo"), 0);
}

TEST(KubeAwareVersionTest, LeadingZerosParseToTheSameNumbers) {
  // strconv.Atoi("01") == 1: different strings, same priority.
  EXPECT_EQ(CompareKubeAwareVersionStrings("v01", "v1"), 0);
  EXPECT_EQ(CompareKubeAwareVersionStrings("v1beta01", "v1beta1"), 0);
}

TEST(KubeAwareVersionTest, OverflowingNumberIsNotAKubeVersion) {
  // strconv.Atoi fails beyond int64, so parseKubeVersion reports !ok.
  EXPECT_LT(CompareKubeAwareVersionStrings("v99999999999999999999", "v1alpha1"),
            0);
  EXPECT_GT(CompareKubeAwareVersionStrings("v9223372036854775807", "v1"), 0);
}

// A generated set covering kube versions of every type, equal-priority
// spellings and non-kube strings.
std::vector<std::string> GeneratedVersions() {
  std::vector<std::string> out;
  for (int major = 0; major <= 11; ++major) {
    out.push_back(absl::StrCat("v", major));
    for (int minor = 0; minor <= 11; minor += 3) {
      out.push_back(absl::StrCat("v", major, "beta", minor));
      out.push_back(absl::StrCat("v", major, "alpha", minor));
    }
  }
  for (const char* s :
       {"v01", "v1beta01", "v00alpha3", "foo", "bar", "v1.1", "V1", "", "v",
        "v1beta", "zeta", "v1gamma2", "v99999999999999999999"}) {
    out.push_back(s);
  }
  return out;
}

TEST(KubeAwareVersionPropertyTest, IsAntisymmetric) {
  const std::vector<std::string> all = GeneratedVersions();
  for (const std::string& a : all) {
    for (const std::string& b : all) {
      EXPECT_EQ(Sign(CompareKubeAwareVersionStrings(a, b)),
                -Sign(CompareKubeAwareVersionStrings(b, a)))
          << "\"" << a << "\" vs \"" << b << "\"";
    }
  }
}

TEST(KubeAwareVersionPropertyTest, IsTransitiveAndConsistentWithEquality) {
  const std::vector<std::string> all = GeneratedVersions();
  int violations = 0;
  for (const std::string& a : all) {
    for (const std::string& b : all) {
      const int ab = Sign(CompareKubeAwareVersionStrings(a, b));
      for (const std::string& c : all) {
        const int bc = Sign(CompareKubeAwareVersionStrings(b, c));
        const int ac = Sign(CompareKubeAwareVersionStrings(a, c));
        // Strict weak ordering: >,> gives >; =,= gives =; mixed = and >
        // gives >.
        if (ab >= 0 && bc >= 0 && (ab > 0 || bc > 0) && ac <= 0) ++violations;
        if (ab == 0 && bc == 0 && ac != 0) ++violations;
      }
    }
  }
  EXPECT_EQ(violations, 0);
}

}  // namespace
}  // namespace compatd::engine
