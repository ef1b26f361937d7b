// Removed and not-yet-introduced kinds (engine/deleted_kinds.h), through
// ListServedAPIs: apiserver pkg/server/deleted_kinds_test.go
// (docs/kubernetes-rules.md#deleted-kinds,
// docs/kubernetes-rules.md#unintroduced-kinds).

#include "engine/deleted_kinds.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/served_apis_testing.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using served_apis_testing::CoreAndApps;
using served_apis_testing::EV;
using served_apis_testing::Flags;
using served_apis_testing::Flatten;
using served_apis_testing::GV;
using served_apis_testing::List;
using served_apis_testing::MakeCatalog;
using served_apis_testing::Res;
using served_apis_testing::V;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---------------------------------------------------------------------------
// kubernetes/apiserver pkg/server/deleted_kinds_test.go, run through the whole
// pipeline: every listed version is enabled by default, as the tests'
// resourceConfig.EnableVersions(...) does. compatd enforces the 1.31
// emulation floor, so every version below is the Go test's version shifted
// by +12 minors (1.20 -> 1.32); the binary is one minor above the emulation
// (and at least 1.33 where the test needs removeUnintroducedKinds).

struct R {
  const char* name;
  int introduced;  // minor of 1.x as written in the Go test; 0 = none
  int removed;     // 0 = none
};
struct StoredVersion {
  const char* version;
  std::vector<R> resources;
};
struct DeletedKindsCase {
  const char* name;
  int current;  // Go's currentVersion minor
  Flags flags;
  std::vector<StoredVersion> storage;
  std::vector<std::string> expected;  // "<version>=<resources>"
  bool expect_error;
};

constexpr int kShift = 12;

std::string Shifted(int minor) { return absl::StrCat("1.", minor + kShift); }

Catalog DeletedKindsCatalog(const DeletedKindsCase& c,
                            absl::string_view binary) {
  Catalog catalog;
  catalog.binary_version = V(binary);
  // dummyConvertor's priority: v2, v1, v2beta2, v2beta1, v2alpha1.
  for (const char* version : {"v2", "v1", "v2beta2", "v2beta1", "v2alpha1"}) {
    for (const StoredVersion& s : c.storage) {
      if (absl::string_view(s.version) != version) continue;
      std::vector<APIResource> resources;
      for (const R& r : s.resources) {
        resources.push_back(Res(r.name,
                                r.introduced ? Shifted(r.introduced) : "",
                                r.removed ? Shifted(r.removed) : ""));
      }
      catalog.apis.push_back(
          GV("group.name", version, std::move(resources), true));
    }
  }
  return catalog;
}

std::vector<std::string> Expected(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const std::string& s : in) out.push_back("group.name/" + s);
  return out;
}

const std::vector<StoredVersion> kFullStorage = {
    {"v1", {{"resource1", 18, 0}}},
    {"v2alpha1", {{"resource1", 20, 21}}},
    {"v2beta1", {{"resource1", 21, 22}}},
    {"v2beta2", {{"resource1", 22, 23}, {"resource2", 22, 23}}},
    {"v2", {{"resource1", 23, 0}, {"resource2", 23, 0}}},
};
const std::vector<StoredVersion> kNoAlphaStorage = {
    {"v1", {{"resource1", 20, 0}}},
    {"v2beta1", {{"resource1", 21, 22}}},
    {"v2beta2", {{"resource1", 22, 23}, {"resource2", 22, 23}}},
    {"v2", {{"resource1", 23, 0}, {"resource2", 23, 0}}},
};

// Test_RemoveUnavailableKinds, every case.
std::vector<DeletedKindsCase> RemoveUnavailableKindsCases() {
  return {
      {"remove_future_version",
       21,
       {"api/beta=true,group.name/v2beta1=true"},
       kFullStorage,
       {"v1=resource1", "v2beta1=resource1"},
       false},
      {"missing_introduced_version",
       20,
       {},
       {{"v1", {{"resource1", 0, 23}}},
        {"v2", {{"resource1", 23, 0}, {"resource2", 23, 0}}}},
       {"v1=resource1"},
       false},
      {"emulation_forward_compatible_ga_api",
       19,
       {"", true},
       kFullStorage,
       {"v2=resource1", "v1=resource1"},
       false},
      {"emulation_forward_compatible_alpha_api",
       20,
       {"", true},
       kFullStorage,
       {"v2=resource1", "v1=resource1", "v2alpha1=resource1"},
       false},
      {"emulation_forward_compatible_beta1_api",
       21,
       {"", true},
       kNoAlphaStorage,
       {"v2=resource1", "v1=resource1", "v2beta2=resource1",
        "v2beta1=resource1"},
       false},
      {"emulation_forward_compatible_new_resource",
       22,
       {"", true},
       kNoAlphaStorage,
       {"v2=resource1,resource2", "v1=resource1",
        "v2beta2=resource1,resource2"},
       false},
      {"runtime_config_enable_future_version_err",
       20,
       {"group.name/v2beta2=true"},
       kNoAlphaStorage,
       {},
       true},
      {"runtime_config_enable_future_resource_err",
       20,
       {"group.name/v2beta2/resource2=true"},
       kNoAlphaStorage,
       {},
       true},
      {"runtime_config_emulation_forward_compatible_beta2_api",
       20,
       {"group.name/v2beta2=true", std::nullopt, true},
       kNoAlphaStorage,
       {"v1=resource1", "v2beta2=resource1,resource2"},
       false},
      {"runtime_config_emulation_forward_compatible_beta2_resource",
       20,
       {"group.name/v2beta2/resource2=true", std::nullopt, true},
       kNoAlphaStorage,
       {"v1=resource1", "v2beta2=resource2"},
       false},
      {"emulation_forward_compatible_runtime_config_beta2_api",
       20,
       {"group.name/v2beta2=true", true},
       kNoAlphaStorage,
       {},
       true},
      {"both_runtime_config_and_emulation_forward_compatible_beta2_api",
       20,
       {"group.name/v2beta2=true", true, true},
       kNoAlphaStorage,
       {"v2=resource1,resource2", "v1=resource1",
        "v2beta2=resource1,resource2"},
       false},
      {"emulation_forward_compatible_runtime_config_beta2_api_resource1_ok",
       21,
       {"group.name/v2beta2=true", true},
       kNoAlphaStorage,
       {"v2=resource1", "v1=resource1", "v2beta2=resource1",
        "v2beta1=resource1"},
       false},
  };
}

class RemoveUnavailableKindsTest
    : public ::testing::TestWithParam<DeletedKindsCase> {};

TEST_P(RemoveUnavailableKindsTest, MatchesDeletedKindsTest) {
  const DeletedKindsCase& c = GetParam();
  // Test_RemoveUnavailableKinds exercises removeUnintroducedKinds and the
  // forward-compatibility flags, which binaries have from 1.33 on.
  const std::string binary = Shifted(std::max(c.current + 1, 21));
  const Catalog catalog = DeletedKindsCatalog(c, binary);
  auto served = List(catalog, EV(binary, Shifted(c.current)), c.flags);
  if (c.expect_error) {
    EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("Consider setting "
                                           "--runtime-config-emulation-forward-"
                                           "compatible=true")));
    return;
  }
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served), Expected(c.expected));
}

INSTANTIATE_TEST_SUITE_P(
    DeletedKinds, RemoveUnavailableKindsTest,
    ::testing::ValuesIn(RemoveUnavailableKindsCases()),
    [](const ::testing::TestParamInfo<DeletedKindsCase>& info) {
      return std::string(info.param.name);
    });

TEST(RemoveUnavailableKindsTest, FutureResourceErrorNamesResourceAndVersions) {
  // Test_RemoveUnavailableKinds/runtime-config-enable-future-resource-err,
  // with the wording of shouldServeBasedOnVersionIntroduced.
  DeletedKindsCase c{
      "", 20, {"group.name/v2beta2/resource2=true"}, kNoAlphaStorage, {}, true};
  const Catalog catalog = DeletedKindsCatalog(c, "1.33");
  EXPECT_THAT(
      List(catalog, EV("1.33", "1.32"), c.flags),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          HasSubstr("cannot enable resource group.name/v2beta2, "
                    "Resource=resource2 in runtime-config because it is "
                    "introduced at 1.34 after the current version 1.32. "
                    "Consider setting "
                    "--runtime-config-emulation-forward-compatible=true")));
}

// Test_removeUnIntroducedKinds runs the unintroduced step alone; two of its
// expectations keep a version removed at the current version, which the whole
// pipeline drops (docs/kubernetes-rules.md#deleted-kinds). With an alpha
// pre-release binary the removal grace keeps them, and the unit test's result
// holds end to end.
TEST(RemoveUnintroducedKindsTest,
     RemoveFutureVersionKeepsRemovedAlphaUnderAlphaBinary) {
  DeletedKindsCase c{
      "",           21, {"api/beta=true,group.name/v2beta1=true"},
      kFullStorage, {}, false};
  const Catalog catalog = DeletedKindsCatalog(c, "1.34.0-alpha.1");
  auto served = List(catalog, EV("1.34.0-alpha.1", Shifted(21)), c.flags);
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served), Expected({"v1=resource1", "v2beta1=resource1",
                                        "v2alpha1=resource1"}));
}

TEST(RemoveUnintroducedKindsTest, NewResourceKeepsRemovedBetaUnderAlphaBinary) {
  DeletedKindsCase c{"", 22, {"", true}, kNoAlphaStorage, {}, false};
  const Catalog catalog = DeletedKindsCatalog(c, "1.35.0-alpha.2");
  auto served = List(catalog, EV("1.35.0-alpha.2", Shifted(22)), c.flags);
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served),
            Expected({"v2=resource1,resource2", "v1=resource1",
                      "v2beta2=resource1,resource2", "v2beta1=resource1"}));
}

// Test_removeDeletedKinds, every case (currentVersion 1.20, shifted).
struct RemovedCase {
  const char* name;
  std::vector<StoredVersion> storage;
  std::vector<std::string> expected;
};

class RemoveDeletedKindsTest : public ::testing::TestWithParam<RemovedCase> {};

TEST_P(RemoveDeletedKindsTest, MatchesDeletedKindsTest) {
  const RemovedCase& rc = GetParam();
  DeletedKindsCase c{"", 20, {}, rc.storage, {}, false};
  const Catalog catalog = DeletedKindsCatalog(c, Shifted(21));
  auto served = List(catalog, EV(Shifted(21), Shifted(20)), {});
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served), Expected(rc.expected));
}

INSTANTIATE_TEST_SUITE_P(
    DeletedKinds, RemoveDeletedKindsTest,
    ::testing::Values(
        RemovedCase{"remove_one_of_two",
                    {{"v1", {{"twenty", 0, 20}, {"twentyone", 0, 21}}}},
                    {"v1=twentyone"}},
        RemovedCase{"remove_nested_not_expired",
                    {{"v1",
                      {{"twenty", 0, 20},
                       {"twenty/scale", 0, 21},
                       {"twentyone", 0, 21}}}},
                    {"v1=twentyone"}},
        RemovedCase{"remove_all_of_version",
                    {{"v1", {{"twenty", 0, 20}}},
                     {"v2", {{"twenty", 0, 20}, {"twentyone", 0, 21}}}},
                    {"v2=twentyone"}}),
    [](const ::testing::TestParamInfo<RemovedCase>& info) {
      return std::string(info.param.name);
    });

// Test_resourceExpirationEvaluator_isNotRemoved (the cases without the two
// environment-variable escape hatches, which compatd does not model) and
// Test_newResourceExpirationEvaluator (which binary versions count as alpha).
struct RemovalGraceCase {
  const char* name;
  const char* binary;
  const char* emulation;
  const char* removed;  // "" = never
  bool served;
};

class RemovalGraceTest : public ::testing::TestWithParam<RemovalGraceCase> {};

TEST_P(RemovalGraceTest, ServesUntilRemovedExceptAlphaGrace) {
  const RemovalGraceCase& c = GetParam();
  const Catalog catalog = MakeCatalog(
      c.binary, {GV("mygroup", "v1", {Res("things", "", c.removed)})});
  auto served = List(catalog, EV(c.binary, c.emulation), {});
  ASSERT_OK(served);
  EXPECT_EQ(served->size(), c.served ? 1u : 0u);
}

INSTANTIATE_TEST_SUITE_P(
    DeletedKinds, RemovalGraceTest,
    ::testing::Values(
        RemovalGraceCase{"removed_in_curr", "1.32", "1.32", "1.32", false},
        RemovalGraceCase{"removed_in_curr_but_alpha", "1.32.0-alpha.1", "1.32",
                         "1.32", true},
        RemovalGraceCase{"removed_in_prev", "1.33", "1.33", "1.32", false},
        RemovalGraceCase{"removed_in_prev_major", "2.20", "2.20", "1.32",
                         false},
        RemovalGraceCase{"removed_in_future", "1.32", "1.32", "1.33", true},
        RemovalGraceCase{"never_removed", "1.32", "1.32", "", true},
        // Test_newResourceExpirationEvaluator's version strings (shifted).
        RemovalGraceCase{"beta_binary", "v1.32.0-beta.0.62+a5d22854a2ac21",
                         "1.32", "1.32", false},
        RemovalGraceCase{"alpha_zero_binary",
                         "v1.32.0-alpha.0.62+a5d22854a2ac21", "1.32", "1.32",
                         true},
        RemovalGraceCase{"alpha_not_zero_binary",
                         "v1.32.0-alpha.1.62+a5d22854a2ac21", "1.32", "1.32",
                         true},
        RemovalGraceCase{"maintenance_binary", "v1.32.1", "1.32", "1.32",
                         false},
        RemovalGraceCase{"no_v_prefix_binary", "1.32.1", "1.32", "1.32", false},
        // The grace compares against the emulation version.
        RemovalGraceCase{"alpha_binary_emulating_removed_earlier",
                         "1.33.0-alpha.1", "1.32", "1.32", true},
        RemovalGraceCase{"alpha_binary_removed_before_emulation",
                         "1.33.0-alpha.1", "1.33", "1.32", false}),
    [](const ::testing::TestParamInfo<RemovalGraceCase>& info) {
      return std::string(info.param.name);
    });

TEST(RemovalGraceTest, ReasonMentionsTheAlphaGrace) {
  const Catalog catalog = MakeCatalog(
      "1.32.0-alpha.1", {GV("mygroup", "v1", {Res("things", "", "1.32")})});
  auto served = List(catalog, EV("1.32.0-alpha.1", "1.32"), {});
  ASSERT_OK(served);
  ASSERT_EQ(served->size(), 1u);
  EXPECT_THAT((*served)[0].reason, HasSubstr("alpha pre-release"));
}

// ---------------------------------------------------------------------------
// Older release lines. apiserver v0.31.0 and v0.32.0
// pkg/server/deleted_kinds.go have one step, RemoveDeletedKinds, whose
// shouldServe (lines 87-117) drops a kind not yet introduced at the current
// version together with the removed ones, silently, whatever --runtime-config
// enables; there is no forward compatibility (the flags arrived in v0.33.0).
// v0.30.0's shouldServe looks at "removed" only.

// v0.32.0 deleted_kinds_test.go Test_resourceExpirationEvaluator_shouldServe,
// the introduced cases (currentVersion 1.20, shifted to 1.32).
struct IntroducedCase {
  const char* name;
  const char* introduced;  // "" = no introduced version
  bool served;
};

class ShouldServe132Test : public ::testing::TestWithParam<IntroducedCase> {};

TEST_P(ShouldServe132Test, MatchesShouldServeTest) {
  const IntroducedCase& c = GetParam();
  const Catalog catalog =
      MakeCatalog("1.32", {GV("mygroup", "v1", {Res("things", c.introduced)})});
  auto served = List(catalog, EV("1.32", "1.32"), {});
  ASSERT_OK(served);
  EXPECT_EQ(served->size(), c.served ? 1u : 0u);
}

INSTANTIATE_TEST_SUITE_P(
    DeletedKinds132, ShouldServe132Test,
    ::testing::Values(IntroducedCase{"introduced_in_curr", "1.32", true},
                      IntroducedCase{"introduced_in_prev", "1.31", true},
                      IntroducedCase{"introduced_in_future", "1.33", false},
                      IntroducedCase{"missing_introduced", "", true}),
    [](const ::testing::TestParamInfo<IntroducedCase>& info) {
      return std::string(info.param.name);
    });

// A group whose v1 (introduced 1.32) replaces v1beta1 (introduced 1.31).
Catalog BetaThenGA(absl::string_view binary) {
  return MakeCatalog(
      binary, {GV("example.k8s.io", "v1", {Res("widgets", "1.32")}),
               GV("example.k8s.io", "v1beta1", {Res("widgets", "1.31")})});
}

TEST(OlderReleaseLinesTest, Binary132DropsAnExplicitlyEnabledFutureVersion) {
  // Emulating 1.31: v1's only resource is not introduced yet. 1.32 drops it
  // without a word; from 1.33 the same flags are a start-up error (next
  // test).
  for (const char* flag :
       {"example.k8s.io/v1=true,example.k8s.io/v1beta1=true",
        "example.k8s.io/v1/widgets=true,example.k8s.io/v1beta1=true"}) {
    auto served = List(BetaThenGA("1.32"), EV("1.32", "1.31"), {flag});
    ASSERT_OK(served);
    EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1beta1=widgets"))
        << flag;
  }
}

TEST(OlderReleaseLinesTest, Binary133RefusesWhat132Drops) {
  // The same shape one release later: v1 introduced 1.33, emulation 1.32.
  const Catalog c = MakeCatalog(
      "1.33", {GV("example.k8s.io", "v1", {Res("widgets", "1.33")}),
               GV("example.k8s.io", "v1beta1", {Res("widgets", "1.32")})});
  EXPECT_THAT(List(c, EV("1.33", "1.32"),
                   {"example.k8s.io/v1=true,example.k8s.io/v1beta1=true"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot enable version example.k8s.io/v1")));
  EXPECT_THAT(
      List(c, EV("1.33", "1.32"),
           {"example.k8s.io/v1/widgets=true,example.k8s.io/v1beta1=true"}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("cannot enable resource example.k8s.io/v1")));
}

TEST(OlderReleaseLinesTest, Binary131DropsAFutureResourceAtItsOwnVersion) {
  // 1.31 emulates only 1.31; a catalog resource introduced later is never
  // served, even enabled by name.
  const Catalog c = MakeCatalog(
      "1.31", {GV("example.k8s.io", "v1",
                  {Res("widgets", "1.31"), Res("gadgets", "1.32")})});
  auto served = List(c, EV("1.31", "1.31"), {"example.k8s.io/v1/gadgets=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1=widgets"));
}

TEST(OlderReleaseLinesTest, Binary132StillDropsRemovedKindsWithAlphaGrace) {
  const Catalog c = MakeCatalog(
      "1.32", {GV("mygroup", "v1",
                  {Res("gone", "", "1.31"), Res("going", "", "1.32"),
                   Res("going/status", "", "1.32"), Res("kept", "", "1.33")})});
  auto served = List(c, EV("1.32", "1.32"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("mygroup/v1=kept"));
  const Catalog alpha = MakeCatalog(
      "1.32.0-alpha.2",
      {GV("mygroup", "v1", {Res("going", "", "1.32"), Res("new", "1.33")})});
  served = List(alpha, EV("1.32.0-alpha.2", "1.32"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("mygroup/v1=going"));
}

TEST(OlderReleaseLinesTest, Binary130DoesNotLookAtIntroduced) {
  // v0.30.0 shouldServe checks "removed" only.
  const Catalog c = MakeCatalog(
      "1.30",
      {GV("mygroup", "v1", {Res("things", "1.31"), Res("gone", "", "1.30")})});
  auto served = List(c, EV("1.30", "1.30"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("mygroup/v1=things"));
}

TEST(OlderReleaseLinesTest, RuleFollowsTheBinaryReleaseLine) {
  EXPECT_EQ(ResourceExpirationEvaluator::RuleFor(V("1.30.9")),
            DeletedKindsRule::kRemovedOnly);
  EXPECT_EQ(ResourceExpirationEvaluator::RuleFor(V("1.31.0")),
            DeletedKindsRule::kShouldServe);
  EXPECT_EQ(ResourceExpirationEvaluator::RuleFor(V("1.32.13")),
            DeletedKindsRule::kShouldServe);
  EXPECT_EQ(ResourceExpirationEvaluator::RuleFor(V("1.33.0-alpha.1")),
            DeletedKindsRule::kRemovedThenUnintroduced);
  EXPECT_EQ(ResourceExpirationEvaluator::RuleFor(V("1.36")),
            DeletedKindsRule::kRemovedThenUnintroduced);
}

}  // namespace
}  // namespace compatd::engine
