// The --runtime-config flag (engine/runtime_config.h): component-base
// cli/flag ConfigurationMap.Set parsing, strconv.ParseBool, and
// kube-apiserver's legacy core-group keys
// (docs/kubernetes-rules.md#runtime-config-merging).

#include "engine/runtime_config.h"

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
// --runtime-config parsing (component-base cli/flag ConfigurationMap.Set).

TEST(RuntimeConfigFlagTest, SplitsOnCommaAndFirstEquals) {
  EXPECT_EQ(ParseRuntimeConfigFlag("api/beta=true,batch/v1=false,a=b=c"),
            (RuntimeConfigMap{
                {"a", "b=c"}, {"api/beta", "true"}, {"batch/v1", "false"}}));
}

TEST(RuntimeConfigFlagTest, MissingEqualsMeansEmptyValue) {
  EXPECT_EQ(ParseRuntimeConfigFlag("apps/v1"),
            (RuntimeConfigMap{{"apps/v1", ""}}));
}

TEST(RuntimeConfigFlagTest, SkipsOnlyEmptyItems) {
  EXPECT_EQ(ParseRuntimeConfigFlag(",,a=1,,"), (RuntimeConfigMap{{"a", "1"}}));
  // " " is not empty: it becomes the key "" after trimming.
  EXPECT_EQ(ParseRuntimeConfigFlag("a=1, "),
            (RuntimeConfigMap{{"", ""}, {"a", "1"}}));
}

TEST(RuntimeConfigFlagTest, TrimsKeysAndValues) {
  EXPECT_EQ(ParseRuntimeConfigFlag(" a = 1 ,\tb\n=\r2"),
            (RuntimeConfigMap{{"a", "1"}, {"b", "2"}}));
}

TEST(RuntimeConfigFlagTest, TrimsUnicodeSpaceLikeGo) {
  EXPECT_EQ(ParseRuntimeConfigFlag("\xC2\xA0"
                                   "a\xE3\x80\x80=\xE2\x80\x89x\v"),
            (RuntimeConfigMap{{"a", "x"}}));
  // U+200B (zero width space) is not white space in Go.
  EXPECT_EQ(ParseRuntimeConfigFlag("\xE2\x80\x8B"
                                   "a=1"),
            (RuntimeConfigMap{{"\xE2\x80\x8B"
                               "a",
                               "1"}}));
}

TEST(RuntimeConfigFlagTest, LaterKeyWins) {
  EXPECT_EQ(ParseRuntimeConfigFlag("a=1,a=2"), (RuntimeConfigMap{{"a", "2"}}));
}

TEST(RuntimeConfigFlagTest, EmptyFlagIsEmptyMap) {
  EXPECT_THAT(ParseRuntimeConfigFlag(""), IsEmpty());
}

TEST(RuntimeConfigFlagTest, ParseBoolAcceptsGoSpellingsOnly) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) {
    EXPECT_EQ(ParseRuntimeConfigBool(t), std::optional<bool>(true)) << t;
  }
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    EXPECT_EQ(ParseRuntimeConfigBool(f), std::optional<bool>(false)) << f;
  }
  for (const char* bad : {"yes", "no", "tRUE", "", " true", "2"}) {
    EXPECT_EQ(ParseRuntimeConfigBool(bad), std::nullopt) << bad;
  }
}

TEST(RuntimeConfigFlagTest, NormalizesLegacyCoreKeys) {
  RuntimeConfigMap rc = ParseRuntimeConfigFlag(
      "api/legacy=true,apps/v1=true,api/v1/pods=false,v1x=true");
  NormalizeLegacyRuntimeConfigKeys(&rc);
  EXPECT_EQ(rc, (RuntimeConfigMap{
                    {"/v1", "false"}, {"apps/v1", "true"}, {"v1x", "true"}}));
}

// ---------------------------------------------------------------------------
// Legacy core keys (pkg/controlplane/apiserver/options Options.Complete),
// through ListServedAPIs.

TEST(LegacyCoreKeysTest, ApiV1DisablesTheCoreGroup) {
  auto served = List(CoreAndApps(), EV("1.33", "1.33"), {"api/v1=false"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("apps/v1=deployments,other",
                                            "extensions/v1beta1=ingresses"));
}

TEST(LegacyCoreKeysTest, BareV1DisablesTheCoreGroup) {
  auto served = List(CoreAndApps(), EV("1.33", "1.33"), {"v1=false"});
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served).front(), "apps/v1=deployments,other");
}

TEST(LegacyCoreKeysTest, CoreResourceKeyCollapsesToTheWholeVersion) {
  // Complete() maps "v1/<resource>" to "/v1", dropping the resource.
  auto served = List(CoreAndApps(), EV("1.33", "1.33"), {"v1/pods=false"});
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served).front(), "apps/v1=deployments,other");
}

TEST(LegacyCoreKeysTest, ApiLegacyIsIgnored) {
  auto served = List(CoreAndApps(), EV("1.33", "1.33"), {"api/legacy=false"});
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served).front(), "/v1=pods");
}

}  // namespace
}  // namespace compatd::engine
