// ListServedAPIs: the whole kube-apiserver pipeline of
// KUBERNETES-SEMANTICS.md section 5, and the --runtime-config parser.

#include "engine/api_availability.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/runtime_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Version V(absl::string_view text) { return Version::Parse(text).value(); }

// A resource; introduced/removed "" = absent.
APIResource Res(std::string name, absl::string_view introduced = "",
                absl::string_view removed = "") {
  APIResource r;
  r.kind = name;
  r.kind[0] = static_cast<char>(r.kind[0] - 'a' + 'A');
  r.resource = std::move(name);
  if (!introduced.empty()) r.introduced = V(introduced);
  if (!removed.empty()) r.removed = V(removed);
  return r;
}

APIGroupVersion GV(std::string group, std::string version,
                   std::vector<APIResource> resources,
                   std::optional<bool> enabled_by_default = std::nullopt) {
  APIGroupVersion gv;
  gv.group = std::move(group);
  gv.version = std::move(version);
  gv.resources = std::move(resources);
  gv.enabled_by_default = enabled_by_default;
  return gv;
}

Catalog MakeCatalog(absl::string_view binary,
                    std::vector<APIGroupVersion> apis) {
  Catalog catalog;
  catalog.binary_version = V(binary);
  catalog.apis = std::move(apis);
  return catalog;
}

EffectiveVersions EV(absl::string_view binary, absl::string_view emulation) {
  EffectiveVersions v;
  v.binary = V(binary);
  v.emulation = V(emulation).ToMajorMinor();
  v.min_compatibility = v.emulation.SubtractMinor(1);
  return v;
}

struct Flags {
  Flags() = default;
  Flags(std::string runtime_config_in,
        std::optional<bool> efc_in = std::nullopt,
        std::optional<bool> rcfc_in = std::nullopt)
      : runtime_config(std::move(runtime_config_in)),
        efc(efc_in),
        rcfc(rcfc_in) {}

  std::string runtime_config;
  std::optional<bool> efc;
  std::optional<bool> rcfc;
};

absl::StatusOr<std::vector<ServedGroupVersion>> List(
    const Catalog& catalog, const EffectiveVersions& versions,
    const Flags& flags) {
  VersionQuery query;
  query.runtime_config = flags.runtime_config;
  query.emulation_forward_compatible = flags.efc;
  query.runtime_config_emulation_forward_compatible = flags.rcfc;
  return ListServedAPIs(catalog, versions, query);
}

// "group/version=r1,r2" per served group-version, in output order.
std::vector<std::string> Flatten(const std::vector<ServedGroupVersion>& in) {
  std::vector<std::string> out;
  for (const ServedGroupVersion& gv : in) {
    out.push_back(absl::StrCat(gv.group, "/", gv.version, "=",
                               absl::StrJoin(gv.resources, ",")));
  }
  return out;
}

// ---------------------------------------------------------------------------
// The KEP-4330 "API availability" examples (binary 1.33), every row, and the
// integration-test grid
// (/work/shared/seeds/kep-4330-compatibility-versions.txt). The KEP writes
// "api/<version>"; in kube-apiserver "api/..." is not a group, so the rows use
// a real group name.

constexpr absl::string_view kG = "example.k8s.io";

// v1alpha1: 1.30-1.31, v1beta1: 1.31-1.32, v1: 1.32.
Catalog KepAlphaBetaGA(absl::string_view binary = "1.33") {
  return MakeCatalog(
      binary,
      {GV(std::string(kG), "v1", {Res("widgets", "1.32")}),
       GV(std::string(kG), "v1beta1", {Res("widgets", "1.31", "1.32")}),
       GV(std::string(kG), "v1alpha1", {Res("widgets", "1.30", "1.31")})});
}

// v1beta1: 1.31-1.32, v1beta2: 1.32.
Catalog KepBetaBeta() {
  return MakeCatalog(
      "1.33",
      {GV(std::string(kG), "v1beta2", {Res("widgets", "1.32")}),
       GV(std::string(kG), "v1beta1", {Res("widgets", "1.31", "1.32")})});
}

// v1: 1.28, v2beta1: 1.31-1.32, v2: 1.32 (shift moves every version by
// `shift` minors).
Catalog KepGAToGA(int shift = 0, absl::string_view binary = "1.33") {
  auto m = [shift](int minor) { return absl::StrCat("1.", minor + shift); };
  return MakeCatalog(
      binary, {GV(std::string(kG), "v2", {Res("widgets", m(32))}),
               GV(std::string(kG), "v1", {Res("widgets", m(28))}),
               GV(std::string(kG), "v2beta1", {Res("widgets", m(31), m(32))})});
}

struct Row {
  const char* name;
  Catalog (*catalog)();
  const char* binary;
  const char* emulation;
  Flags flags;
  std::vector<std::string> expected;
  const char* error;  // substring of an INVALID_ARGUMENT message, or nullptr
};

Catalog CatalogA() { return KepAlphaBetaGA(); }
Catalog CatalogB() { return KepBetaBeta(); }
Catalog CatalogC() { return KepGAToGA(); }
Catalog CatalogCShifted() { return KepGAToGA(1, "1.34"); }

const char kVersionError[] =
    "cannot enable version example.k8s.io/v1 in runtime-config because all "
    "the resources have been introduced after the current version 1.31. "
    "Consider setting --runtime-config-emulation-forward-compatible=true";

std::vector<Row> KepRows() {
  return {
      // Row 1: emulation 1.30 "NA". With binary 1.33 the code's 1.31 floor
      // rejects it (KUBERNETES-SEMANTICS.md A3).
      {"A_em130_Invalid",
       CatalogA,
       "1.33",
       "1.30",
       {},
       {},
       "emulation version 1.30 is not between [1.31, 1.33.0]"},
      {"A_em131_NothingByDefault", CatalogA, "1.33", "1.31", {}, {}, nullptr},
      {"A_em131_BetaEnabled",
       CatalogA,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true"},
       {"example.k8s.io/v1beta1=widgets"},
       nullptr},
      // KEP: "v1beta1=true,v1=true" serves both. The code refuses it without
      // --runtime-config-emulation-forward-compatible (A2).
      {"A_em131_BothEnabled_RefusedWithoutRCFC",
       CatalogA,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true,example.k8s.io/v1=true"},
       {},
       kVersionError},
      {"A_em131_BothEnabled_WithRCFC",
       CatalogA,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true,example.k8s.io/v1=true", std::nullopt,
        true},
       {"example.k8s.io/v1=widgets", "example.k8s.io/v1beta1=widgets"},
       nullptr},
      {"A_em131_BetaEnabled_EFC",
       CatalogA,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true", true},
       {"example.k8s.io/v1=widgets", "example.k8s.io/v1beta1=widgets"},
       nullptr},
      {"A_em133",
       CatalogA,
       "1.33",
       "1.33",
       {},
       {"example.k8s.io/v1=widgets"},
       nullptr},
      {"B_em131_Beta1Enabled",
       CatalogB,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true"},
       {"example.k8s.io/v1beta1=widgets"},
       nullptr},
      {"B_em131_BothEnabled_RefusedWithoutRCFC",
       CatalogB,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true,example.k8s.io/v1beta2=true"},
       {},
       "cannot enable version example.k8s.io/v1beta2 in runtime-config"},
      {"B_em131_BothEnabled_WithRCFC",
       CatalogB,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true,example.k8s.io/v1beta2=true", std::nullopt,
        true},
       {"example.k8s.io/v1beta2=widgets", "example.k8s.io/v1beta1=widgets"},
       nullptr},
      {"B_em131_Beta1Enabled_EFC",
       CatalogB,
       "1.33",
       "1.31",
       {"example.k8s.io/v1beta1=true", true},
       {"example.k8s.io/v1beta2=widgets", "example.k8s.io/v1beta1=widgets"},
       nullptr},
      {"B_em133_OffByDefault", CatalogB, "1.33", "1.33", {}, {}, nullptr},
      {"B_em133_Beta2Enabled",
       CatalogB,
       "1.33",
       "1.33",
       {"example.k8s.io/v1beta2=true"},
       {"example.k8s.io/v1beta2=widgets"},
       nullptr},
      // Row "v1/v2beta1/v2 at 1.30": invalid at binary 1.33 (A3); the same
      // lifecycle shifted one release (binary 1.34, emulation 1.31) shows the
      // KEP's intent.
      {"C_em130_Invalid",
       CatalogC,
       "1.33",
       "1.30",
       {},
       {},
       "emulation version 1.30 is not between [1.31, 1.33.0]"},
      {"C_shifted_em131_GAOnly",
       CatalogCShifted,
       "1.34",
       "1.31",
       {},
       {"example.k8s.io/v1=widgets"},
       nullptr},
      {"C_shifted_em131_V2Enabled_RefusedWithoutRCFC",
       CatalogCShifted,
       "1.34",
       "1.31",
       {"example.k8s.io/v2=true"},
       {},
       "cannot enable version example.k8s.io/v2 in runtime-config"},
      {"C_shifted_em131_V2Enabled_WithRCFC",
       CatalogCShifted,
       "1.34",
       "1.31",
       {"example.k8s.io/v2=true", std::nullopt, true},
       {"example.k8s.io/v2=widgets", "example.k8s.io/v1=widgets"},
       nullptr},
      {"C_shifted_em131_EFC",
       CatalogCShifted,
       "1.34",
       "1.31",
       {"", true},
       {"example.k8s.io/v2=widgets", "example.k8s.io/v1=widgets"},
       nullptr},
      {"C_em131_GAOnly",
       CatalogC,
       "1.33",
       "1.31",
       {},
       {"example.k8s.io/v1=widgets"},
       nullptr},
      {"C_em131_Beta",
       CatalogC,
       "1.33",
       "1.31",
       {"example.k8s.io/v2beta1=true"},
       {"example.k8s.io/v1=widgets", "example.k8s.io/v2beta1=widgets"},
       nullptr},
      {"C_em131_BetaAndGA_RefusedWithoutRCFC",
       CatalogC,
       "1.33",
       "1.31",
       {"example.k8s.io/v2beta1=true,example.k8s.io/v2=true"},
       {},
       "cannot enable version example.k8s.io/v2 in runtime-config"},
      {"C_em131_BetaAndGA_WithRCFC",
       CatalogC,
       "1.33",
       "1.31",
       {"example.k8s.io/v2beta1=true,example.k8s.io/v2=true", std::nullopt,
        true},
       {"example.k8s.io/v2=widgets", "example.k8s.io/v1=widgets",
        "example.k8s.io/v2beta1=widgets"},
       nullptr},
      {"C_em131_Beta_EFC",
       CatalogC,
       "1.33",
       "1.31",
       {"example.k8s.io/v2beta1=true", true},
       {"example.k8s.io/v2=widgets", "example.k8s.io/v1=widgets",
        "example.k8s.io/v2beta1=widgets"},
       nullptr},
      {"C_em133",
       CatalogC,
       "1.33",
       "1.33",
       {},
       {"example.k8s.io/v2=widgets", "example.k8s.io/v1=widgets"},
       nullptr},
  };
}

class KepApiAvailabilityTest : public ::testing::TestWithParam<Row> {};

TEST_P(KepApiAvailabilityTest, ServesWhatKubeApiserverServes) {
  const Row& row = GetParam();
  const Catalog catalog = row.catalog();
  auto served = List(catalog, EV(row.binary, row.emulation), row.flags);
  if (row.error != nullptr) {
    EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(row.error)));
    return;
  }
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served), row.expected);
}

INSTANTIATE_TEST_SUITE_P(Kep4330Table, KepApiAvailabilityTest,
                         ::testing::ValuesIn(KepRows()),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           return info.param.name;
                         });

// --- The KEP's integration-test grid: binary N = 1.33, emulation N-1 = 1.32.

TEST(KepIntegrationGridTest, AlphaApiIntroducedAtNDoesNotExistAtNMinus1) {
  const Catalog c = MakeCatalog(
      "1.33", {GV(std::string(kG), "v1alpha1", {Res("widgets", "1.33")})});
  auto served = List(c, EV("1.33", "1.32"), {});
  ASSERT_OK(served);
  EXPECT_THAT(*served, IsEmpty());
}

TEST(KepIntegrationGridTest, AlphaApiIntroducedAtNCannotBeEnabledAtNMinus1) {
  const Catalog c = MakeCatalog(
      "1.33", {GV(std::string(kG), "v1alpha1", {Res("widgets", "1.33")})});
  EXPECT_THAT(List(c, EV("1.33", "1.32"), {"example.k8s.io/v1alpha1=true"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot enable version "
                                 "example.k8s.io/v1alpha1 in runtime-config")));
}

TEST(KepIntegrationGridTest, AlphaApiAtNIsOffByDefaultAndCanBeEnabled) {
  const Catalog c = MakeCatalog(
      "1.33", {GV(std::string(kG), "v1alpha1", {Res("widgets", "1.33")})});
  auto off = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(off);
  EXPECT_THAT(*off, IsEmpty());
  auto on = List(c, EV("1.33", "1.33"), {"example.k8s.io/v1alpha1=true"});
  ASSERT_OK(on);
  EXPECT_THAT(Flatten(*on), ElementsAre("example.k8s.io/v1alpha1=widgets"));
}

Catalog BetaGraduatedToGA() {
  return MakeCatalog(
      "1.33", {GV(std::string(kG), "v1", {Res("widgets", "1.33")}),
               GV(std::string(kG), "v1beta1", {Res("widgets", "1.32")})});
}

TEST(KepIntegrationGridTest, BetaGraduatedToGAAtNMinus1NeedsRuntimeConfig) {
  auto served = List(BetaGraduatedToGA(), EV("1.33", "1.32"), {});
  ASSERT_OK(served);
  EXPECT_THAT(*served, IsEmpty());
}

TEST(KepIntegrationGridTest, BetaGraduatedToGAAtNMinus1ServesBetaWhenEnabled) {
  // The grid (written before forward compatibility) lists v1 too; the code
  // serves v1 at N-1 only with --emulation-forward-compatible.
  auto served = List(BetaGraduatedToGA(), EV("1.33", "1.32"),
                     {"example.k8s.io/v1beta1=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1beta1=widgets"));
}

TEST(KepIntegrationGridTest, BetaGraduatedToGAAtNMinus1ServesBothWithEFC) {
  auto served = List(BetaGraduatedToGA(), EV("1.33", "1.32"),
                     {"example.k8s.io/v1beta1=true", true});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1=widgets",
                                            "example.k8s.io/v1beta1=widgets"));
}

TEST(KepIntegrationGridTest, BetaGraduatedToGAAtNServesGA) {
  auto served = List(BetaGraduatedToGA(), EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1=widgets"));
}

Catalog BetaRemovedAtN(std::optional<bool> enabled_by_default) {
  return MakeCatalog(
      "1.33", {GV(std::string(kG), "v1beta1", {Res("widgets", "1.31", "1.33")},
                  enabled_by_default)});
}

TEST(KepIntegrationGridTest,
     OffByDefaultBetaRemovedAtNServedAtNMinus1OnlyWhenEnabled) {
  auto off = List(BetaRemovedAtN(std::nullopt), EV("1.33", "1.32"), {});
  ASSERT_OK(off);
  EXPECT_THAT(*off, IsEmpty());
  auto on = List(BetaRemovedAtN(std::nullopt), EV("1.33", "1.32"),
                 {"example.k8s.io/v1beta1=true"});
  ASSERT_OK(on);
  EXPECT_THAT(Flatten(*on), ElementsAre("example.k8s.io/v1beta1=widgets"));
}

TEST(KepIntegrationGridTest, BetaRemovedAtNDoesNotExistAtNEvenWhenEnabled) {
  auto served = List(BetaRemovedAtN(std::nullopt), EV("1.33", "1.33"),
                     {"example.k8s.io/v1beta1=true"});
  ASSERT_OK(served);
  EXPECT_THAT(*served, IsEmpty());
}

TEST(KepIntegrationGridTest,
     OnByDefaultBetaRemovedAtNServedAtNMinus1UnlessDisabled) {
  auto on = List(BetaRemovedAtN(true), EV("1.33", "1.32"), {});
  ASSERT_OK(on);
  EXPECT_THAT(Flatten(*on), ElementsAre("example.k8s.io/v1beta1=widgets"));
  auto off = List(BetaRemovedAtN(true), EV("1.33", "1.32"),
                  {"example.k8s.io/v1beta1=false"});
  ASSERT_OK(off);
  EXPECT_THAT(*off, IsEmpty());
}

TEST(KepIntegrationGridTest, OnByDefaultBetaRemovedAtNDoesNotExistAtN) {
  auto served = List(BetaRemovedAtN(true), EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(*served, IsEmpty());
}

TEST(KepIntegrationGridTest, EmulationAboveBinaryFails) {
  EXPECT_THAT(List(KepAlphaBetaGA(), EV("1.33", "1.34"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("emulation version 1.34 is not between "
                                 "[1.31, 1.33.0]")));
}

TEST(KepIntegrationGridTest, EmulationBelowNMinus3Fails) {
  EXPECT_THAT(List(KepAlphaBetaGA("1.35"), EV("1.35", "1.31"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("emulation version 1.31 is not between "
                                 "[1.32, 1.35.0]")));
}

TEST(EmulationRangeTest, Binary132AllowsOnlyNMinus1) {
  EXPECT_OK(List(KepAlphaBetaGA("1.32"), EV("1.32", "1.31"), {}));
  EXPECT_THAT(List(KepAlphaBetaGA("1.31"), EV("1.31", "1.30"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is not between [1.31, 1.31.0]")));
}

// ---------------------------------------------------------------------------
// kubernetes/apiserver pkg/server/deleted_kinds_test.go, run through the whole
// pipeline: every listed version is enabled by default, as the tests'
// resourceConfig.EnableVersions(...) does. compatd enforces the 1.31
// emulation floor, so every version below is the Go test's version shifted
// by +12 minors (1.20 -> 1.32); the binary is one minor above the emulation.

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
  const std::string binary = Shifted(c.current + 1);
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
// pipeline drops (KUBERNETES-SEMANTICS.md A9). With an alpha pre-release
// binary the removal grace keeps them, and the unit test's result holds end to
// end.
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
// kubernetes/apiserver pkg/server/resourceconfig/helpers_test.go
// TestParseRuntimeConfig through the pipeline. Its fake default config also
// sets resource-level defaults for extensions/v1beta1, which a catalog cannot
// express, so the core and apps expectations are the ones carried over (apps
// gets the "other" resource the test checks).

Catalog CoreAndApps() {
  return MakeCatalog("1.33",
                     {GV("", "v1", {Res("pods")}),
                      GV("apps", "v1", {Res("deployments"), Res("other")}),
                      GV("extensions", "v1beta1", {Res("ingresses")}, true)});
}

struct ParseRuntimeConfigCase {
  const char* name;
  const char* runtime_config;
  std::vector<std::string> expected;  // served "group/version=resources"
  const char* error;
};

class ParseRuntimeConfigTest
    : public ::testing::TestWithParam<ParseRuntimeConfigCase> {};

TEST_P(ParseRuntimeConfigTest, MatchesHelpersTest) {
  const ParseRuntimeConfigCase& c = GetParam();
  auto served = List(CoreAndApps(), EV("1.33", "1.33"), {c.runtime_config});
  if (c.error != nullptr) {
    EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(c.error)));
    return;
  }
  ASSERT_OK(served);
  std::vector<std::string> core_and_apps;
  for (const std::string& s : Flatten(*served)) {
    if (s.rfind("extensions/", 0) != 0) core_and_apps.push_back(s);
  }
  EXPECT_EQ(core_and_apps, c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    HelpersTest, ParseRuntimeConfigTest,
    ::testing::Values(
        ParseRuntimeConfigCase{
            "using_kind",
            "apps/v1/Deployment=false",
            {},
            "group/version/resource and resource is always lowercase plural, "
            "not \"Deployment\""},
        ParseRuntimeConfigCase{"everything_default_value",
                               "",
                               {"/v1=pods", "apps/v1=deployments,other"},
                               nullptr},
        ParseRuntimeConfigCase{"version_enabled_by_runtime_config_override",
                               "apps/v1",
                               {"/v1=pods", "apps/v1=deployments,other"},
                               nullptr},
        ParseRuntimeConfigCase{
            "disable_v1", "/v1=false", {"apps/v1=deployments,other"}, nullptr},
        // MergeAPIResourceConfigs skips an unregistered group, but
        // APIEnablementOptions.Validate runs first and refuses it.
        ParseRuntimeConfigCase{"invalid_runtime_config",
                               "invalidgroup/version=false",
                               {},
                               "unknown api groups invalidgroup"},
        ParseRuntimeConfigCase{"enable_all",
                               "api/all=true",
                               {"/v1=pods", "apps/v1=deployments,other"},
                               nullptr},
        ParseRuntimeConfigCase{
            "only_enable_v1", "api/all=false,/v1=true", {"/v1=pods"}, nullptr},
        ParseRuntimeConfigCase{"disable_a_no_extensions_resources",
                               "apps/v1/deployments=false",
                               {"/v1=pods", "apps/v1=other"},
                               nullptr},
        ParseRuntimeConfigCase{"disable_all_beta_resources",
                               "api/beta=false",
                               {"/v1=pods", "apps/v1=deployments,other"},
                               nullptr},
        ParseRuntimeConfigCase{
            "user_explicit_disable_resource_over_user_version_enable",
            "apps/v1=true,apps/v1/deployments=false",
            {"/v1=pods", "apps/v1=other"},
            nullptr},
        ParseRuntimeConfigCase{
            "user_explicit_enable_resource_over_user_version_disable",
            "apps/v1=false,apps/v1/deployments=true",
            {"/v1=pods", "apps/v1=deployments"},
            nullptr},
        ParseRuntimeConfigCase{
            "user_explicit_disable_resource_over_user_stability_enable",
            "api/ga=true,apps/v1/deployments=false",
            {"/v1=pods", "apps/v1=other"},
            nullptr},
        ParseRuntimeConfigCase{
            "user_explicit_enable_resource_over_user_stability_disable",
            "api/ga=false,apps/v1/deployments=true",
            {"apps/v1=deployments"},
            nullptr},
        ParseRuntimeConfigCase{"user_explicit_disable_resource_over_user_"
                               "version_enable_over_user_stability_disable",
                               "api/ga=false,apps/v1=true,apps/v1/"
                               "deployments=false",
                               {"apps/v1=other"},
                               nullptr},
        ParseRuntimeConfigCase{"user_explicit_enable_resource_over_user_"
                               "version_disable_over_user_stability_disable",
                               "api/ga=false,apps/v1=false,apps/v1/"
                               "deployments=true",
                               {"apps/v1=deployments"},
                               nullptr},
        ParseRuntimeConfigCase{"user_explicit_disable_resource_over_user_"
                               "version_enable_over_user_stability_enable",
                               "api/ga=true,apps/v1=true,apps/v1/"
                               "deployments=false",
                               {"/v1=pods", "apps/v1=other"},
                               nullptr},
        ParseRuntimeConfigCase{"user_explicit_enable_resource_over_user_"
                               "version_disable_over_user_stability_enable",
                               "api/ga=true,apps/v1=false,apps/v1/"
                               "deployments=true",
                               {"/v1=pods", "apps/v1=deployments"},
                               nullptr}),
    [](const ::testing::TestParamInfo<ParseRuntimeConfigCase>& info) {
      return std::string(info.param.name);
    });

// helpers_test.go TestEmulationForwardCompatibleResourceConfig, every case.
// Group "test" has v2, v1, v2beta2, v2beta1, v2alpha1 (kube-aware order); the
// test's starting config enables one version or one resource; the catalog
// says the same with enabledByDefault and --runtime-config.

struct EFCCase {
  const char* name;
  const char* enabled_version;  // enabledByDefault: true; others false
  const char* runtime_config;
  std::vector<std::string> expected;
};

Catalog EFCCatalog(absl::string_view enabled_version) {
  Catalog c = MakeCatalog("1.34", {});
  for (const char* version : {"v2", "v1", "v2beta2", "v2beta1", "v2alpha1"}) {
    c.apis.push_back(GV("test", version, {Res("testtype1"), Res("testtype2")},
                        enabled_version == version));
  }
  return c;
}

class EmulationForwardCompatibleConfigTest
    : public ::testing::TestWithParam<EFCCase> {};

TEST_P(EmulationForwardCompatibleConfigTest, MatchesHelpersTest) {
  const EFCCase& c = GetParam();
  auto served = List(EFCCatalog(c.enabled_version), EV("1.34", "1.33"),
                     {c.runtime_config, true});
  ASSERT_OK(served);
  EXPECT_EQ(Flatten(*served), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    HelpersTest, EmulationForwardCompatibleConfigTest,
    ::testing::Values(
        EFCCase{"enabled_no_higher_priority",
                "v2",
                "",
                {"test/v2=testtype1,testtype2"}},
        EFCCase{"alpha_version",
                "v2alpha1",
                "",
                {"test/v2alpha1=testtype1,testtype2"}},
        EFCCase{"enabled_higher_priority_ga",
                "v1",
                "",
                {"test/v2=testtype1,testtype2", "test/v1=testtype1,testtype2"}},
        // v2beta2's default is an explicit false entry: compatd enables it
        // (KEP intent, KUBERNETES-SEMANTICS.md A1).
        EFCCase{"enabled_higher_priority",
                "v2beta1",
                "",
                {"test/v2=testtype1,testtype2", "test/v1=testtype1,testtype2",
                 "test/v2beta2=testtype1,testtype2",
                 "test/v2beta1=testtype1,testtype2"}},
        EFCCase{"enabled_higher_priority_with_override",
                "v2beta1",
                "test/v2beta2=false",
                {"test/v2=testtype1,testtype2", "test/v1=testtype1,testtype2",
                 "test/v2beta1=testtype1,testtype2"}},
        EFCCase{"enabled_resource_no_higher_priority",
                "",
                "test/v2/testtype1=true",
                {"test/v2=testtype1"}},
        EFCCase{"alpha_resource",
                "",
                "test/v2alpha1/testtype1=true",
                {"test/v2alpha1=testtype1"}},
        EFCCase{"enabled_resource_higher_priority",
                "",
                "test/v2beta1/testtype1=true",
                {"test/v2=testtype1", "test/v1=testtype1",
                 "test/v2beta2=testtype1", "test/v2beta1=testtype1"}},
        EFCCase{"enabled_resource_higher_priority_with_override",
                "",
                "test/v2beta1/testtype1=true,test/v2beta2/testtype1=false",
                {"test/v2=testtype1", "test/v1=testtype1",
                 "test/v2beta1=testtype1"}}),
    [](const ::testing::TestParamInfo<EFCCase>& info) {
      return std::string(info.param.name);
    });

TEST(EmulationForwardCompatibleConfigTest, ReasonNamesTheLowerVersion) {
  auto served = List(EFCCatalog("v2beta1"), EV("1.34", "1.33"), {"", true});
  ASSERT_OK(served);
  ASSERT_FALSE(served->empty());
  EXPECT_EQ((*served)[0].version, "v2");
  EXPECT_THAT((*served)[0].reason,
              HasSubstr("--emulation-forward-compatible (lower-priority "
                        "test/v2beta1 is enabled)"));
}

TEST(EmulationForwardCompatibleConfigTest,
     AlphaResourceWhileEmulatingIsServedWithWarning) {
  // KUBERNETES-SEMANTICS.md A5: the KEP says alpha APIs cannot be enabled
  // while emulating; kube-apiserver serves them and logs a warning.
  auto served = List(EFCCatalog(""), EV("1.34", "1.33"),
                     {"test/v2alpha1/testtype1=true"});
  ASSERT_OK(served);
  ASSERT_EQ(served->size(), 1u);
  EXPECT_THAT((*served)[0].reason, HasSubstr("unsupported"));
}

// apiserver pkg/server/storage/resource_config_test.go TestDisabledResource:
// a resource-level preference wins over its version's.
TEST(ResourceConfigTest, ResourcePreferencesWinOverVersions) {
  const std::vector<APIResource> resources = {Res("unspecified"),
                                              Res("enabled"), Res("disabled")};
  const Catalog c = MakeCatalog("1.33", {GV("group1", "version1", resources),
                                         GV("group1", "version2", resources),
                                         GV("group2", "version1", resources)});
  auto served =
      List(c, EV("1.33", "1.33"),
           {"group1/version1=false,group1/version2=true,group2/version1=true,"
            "group1/version1/enabled=true,group1/version2/enabled=true,"
            "group2/version1/enabled=true,group1/version1/disabled=false,"
            "group1/version2/disabled=false,group2/version1/disabled=false"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served),
              ElementsAre("group1/version1=enabled",
                          "group1/version2=enabled,unspecified",
                          "group2/version1=enabled,unspecified"));
}

// ---------------------------------------------------------------------------
// Validation (APIEnablementOptions.Validate, ServerRunOptions.Validate) and
// merge errors.

struct ValidationCase {
  const char* name;
  const char* runtime_config;
  const char* error;
};

class RuntimeConfigValidationTest
    : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(RuntimeConfigValidationTest, IsInvalidArgument) {
  const ValidationCase& c = GetParam();
  EXPECT_THAT(List(CoreAndApps(), EV("1.33", "1.33"), {c.runtime_config}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)));
}

INSTANTIATE_TEST_SUITE_P(
    ApiEnablement, RuntimeConfigValidationTest,
    ::testing::Values(
        // api_enablement_test.go TestAPIEnablementOptionsValidate.
        ValidationCase{"only_api_all_false", "api/all=false",
                       "invalid key with only api/all=false"},
        ValidationCase{"key_without_slash", "apiall=false",
                       "runtime-config invalid key apiall"},
        ValidationCase{"unknown_group", "foo.io/v1=true",
                       "unknown api groups foo.io"},
        ValidationCase{"four_tokens", "apps/v1/deployments/scale=true",
                       "runtime-config invalid key "
                       "apps/v1/deployments/scale"},
        ValidationCase{"blank_item", "apps/v1=true, ",
                       "runtime-config invalid key "},
        ValidationCase{"unregistered_version", "apps/v2=true",
                       "group version apps/v2 that has not been registered"},
        ValidationCase{"unregistered_core_version", "/v2=false",
                       "group version v2 that has not been registered"},
        ValidationCase{"bad_bool", "apps/v1=yes",
                       "invalid value of apps/v1: yes, err: "
                       "strconv.ParseBool: parsing \"yes\": invalid syntax"},
        ValidationCase{"api_matcher_needs_exact_bool", "api/beta=1",
                       "invalid value api/beta=1"},
        ValidationCase{"api_matcher_empty_value", "api/ga,apps/v1=true",
                       "invalid value api/ga="}),
    [](const ::testing::TestParamInfo<ValidationCase>& info) {
      return std::string(info.param.name);
    });

TEST(RuntimeConfigValidationTest, ApiAllFalseWithAnotherKeyIsAccepted) {
  auto served =
      List(CoreAndApps(), EV("1.33", "1.33"), {"api/all=false,apps/v1=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("apps/v1=deployments,other"));
}

TEST(RuntimeConfigValidationTest, GoBoolSpellingsAreAccepted) {
  auto served = List(CoreAndApps(), EV("1.33", "1.33"),
                     {"apps/v1=F,/v1=0,extensions/v1beta1=FALSE"});
  ASSERT_OK(served);
  EXPECT_THAT(*served, IsEmpty());
}

TEST(ForwardCompatibleFlagsTest, EFCAtBinaryVersionIsRefused) {
  EXPECT_THAT(
      List(CoreAndApps(), EV("1.33.2", "1.33"), {"", true}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("EmulationForwardCompatible cannot be set to true if "
                         "the emulation version is the same as the binary "
                         "version")));
}

TEST(ForwardCompatibleFlagsTest, RCFCAtBinaryVersionIsRefused) {
  EXPECT_THAT(List(CoreAndApps(), EV("1.33", "1.33"), {"", false, true}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("RuntimeConfigEmulationForwardCompatible "
                                 "cannot be set to true")));
}

TEST(ForwardCompatibleFlagsTest, AllStartupErrorsAreReportedTogether) {
  auto served =
      List(CoreAndApps(), EV("1.33", "1.33"), {"api/all=false", true, true});
  EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("EmulationForwardCompatible")));
  EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("RuntimeConfigEmulationForward")));
  EXPECT_THAT(served, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("invalid key with only api/all")));
}

TEST(ForwardCompatibleFlagsTest, FalseFlagsAtBinaryVersionAreFine) {
  EXPECT_OK(List(CoreAndApps(), EV("1.33", "1.33"), {"", false, false}));
}

TEST(ForwardCompatibleFlagsTest, ClusterSectionEnablesEFC) {
  Catalog c = KepAlphaBetaGA();
  c.cluster.emulation_forward_compatible = true;
  auto served = List(c, EV("1.33", "1.31"), {"example.k8s.io/v1beta1=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1=widgets",
                                            "example.k8s.io/v1beta1=widgets"));
}

TEST(ForwardCompatibleFlagsTest, QueryFlagOverridesClusterSection) {
  Catalog c = KepAlphaBetaGA();
  c.cluster.emulation_forward_compatible = true;
  auto served =
      List(c, EV("1.33", "1.31"), {"example.k8s.io/v1beta1=true", false});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("example.k8s.io/v1beta1=widgets"));
}

// ---------------------------------------------------------------------------
// Legacy core keys (pkg/controlplane/apiserver/options Options.Complete) and
// the cluster section.

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

TEST(ClusterRuntimeConfigTest, ClusterEntriesApply) {
  Catalog c = CoreAndApps();
  c.cluster.runtime_config = {{"apps/v1", "false"}};
  auto served = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served),
              ElementsAre("/v1=pods", "extensions/v1beta1=ingresses"));
}

TEST(ClusterRuntimeConfigTest, QueryKeyWins) {
  Catalog c = CoreAndApps();
  c.cluster.runtime_config = {{"apps/v1", "false"}};
  auto served = List(c, EV("1.33", "1.33"), {"apps/v1=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served),
              ElementsAre("/v1=pods", "apps/v1=deployments,other",
                          "extensions/v1beta1=ingresses"));
}

TEST(ClusterRuntimeConfigTest, OnlyApiAllFalseCountsAfterMerging) {
  Catalog c = CoreAndApps();
  c.cluster.runtime_config = {{"api/all", "false"}};
  EXPECT_THAT(List(c, EV("1.33", "1.33"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("invalid key with only api/all=false")));
  EXPECT_OK(List(c, EV("1.33", "1.33"), {"/v1=true"}));
}

// ---------------------------------------------------------------------------
// Defaults, ordering and reasons.

TEST(DefaultEnablementTest, GAOnBetaAndAlphaOff) {
  const Catalog c = MakeCatalog("1.33", {GV("g.io", "v1", {Res("as")}),
                                         GV("g.io", "v1beta1", {Res("as")}),
                                         GV("g.io", "v1alpha1", {Res("as")})});
  auto served = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("g.io/v1=as"));
  EXPECT_EQ((*served)[0].reason, "enabled by default (GA version)");
}

TEST(DefaultEnablementTest, CatalogEnabledByDefaultOverridesTheRule) {
  const Catalog c =
      MakeCatalog("1.33", {GV("g.io", "v1", {Res("as")}, false),
                           GV("g.io", "v1beta1", {Res("as")}, true)});
  auto served = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("g.io/v1beta1=as"));
  EXPECT_THAT((*served)[0].reason, HasSubstr("catalog enabledByDefault"));
}

TEST(DefaultEnablementTest, ApiAlphaEnablesEveryAlphaVersion) {
  const Catalog c = MakeCatalog("1.33", {GV("a.io", "v1alpha1", {Res("xs")}),
                                         GV("b.io", "v2alpha3", {Res("ys")}),
                                         GV("b.io", "v1beta1", {Res("ys")})});
  auto served = List(c, EV("1.33", "1.33"), {"api/alpha=true"});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served),
              ElementsAre("a.io/v1alpha1=xs", "b.io/v2alpha3=ys"));
  EXPECT_EQ((*served)[0].reason, "enabled by --runtime-config api/alpha=true");
}

TEST(OutputOrderTest, GroupsSortedVersionsByPriorityResourcesSorted) {
  const Catalog c = MakeCatalog(
      "1.33",
      {GV("zeta.io", "v1", {Res("zs")}),
       // Listed out of priority order on purpose.
       GV("alpha.io", "v1beta1", {Res("bs", "", ""), Res("as")}, true),
       GV("alpha.io", "v2", {Res("cs")}), GV("alpha.io", "v1", {Res("ds")}),
       GV("", "v1", {Res("pods"), Res("configmaps")})});
  auto served = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(
      Flatten(*served),
      ElementsAre("/v1=configmaps,pods", "alpha.io/v2=cs", "alpha.io/v1=ds",
                  "alpha.io/v1beta1=as,bs", "zeta.io/v1=zs"));
}

TEST(OutputOrderTest, VersionWithoutServedResourcesIsOmitted) {
  const Catalog c =
      MakeCatalog("1.33", {GV("g.io", "v1", {Res("as", "1.30", "1.32")}),
                           GV("g.io", "v2", {Res("bs")})});
  auto served = List(c, EV("1.33", "1.33"), {});
  ASSERT_OK(served);
  EXPECT_THAT(Flatten(*served), ElementsAre("g.io/v2=bs"));
}

TEST(ReasonTest, ResourceEnabledIndividuallyIsExplained) {
  auto served = List(CoreAndApps(), EV("1.33", "1.33"),
                     {"apps/v1=false,apps/v1/deployments=true"});
  ASSERT_OK(served);
  EXPECT_EQ((*served)[1].group, "apps");
  EXPECT_THAT((*served)[1].reason, HasSubstr("resources enabled individually"));
  EXPECT_THAT((*served)[1].reason,
              HasSubstr("deployments enabled by --runtime-config "
                        "apps/v1/deployments=true"));
}

TEST(ReasonTest, ForwardCompatibleResourceIsExplained) {
  auto served = List(KepAlphaBetaGA(), EV("1.33", "1.31"),
                     {"example.k8s.io/v1beta1=true", true});
  ASSERT_OK(served);
  EXPECT_THAT((*served)[0].reason,
              HasSubstr("widgets introduced at 1.32 after emulation 1.31, "
                        "served by --emulation-forward-compatible"));
}

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

}  // namespace
}  // namespace compatd::engine
