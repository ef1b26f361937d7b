// ResolveEffectiveVersions and its pieces, against component-base's
// compatibility/version.go + registry.go (1.33+), component-base v0.32
// version/version.go (1.32) and apiserver v0.31 pkg/util/version/version.go
// (1.31). Tables name the Kubernetes test they are transcribed from.

#include "engine/effective_version.h"

#include <string>
#include <vector>

#include "engine/catalog.h"
#include "engine/query.h"
#include "engine/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

Version V(absl::string_view text) { return *Version::Parse(text); }

Catalog CatalogAt(const char* binary, const char* cluster_emulation = "",
                  const char* cluster_min_compat = "") {
  Catalog catalog;
  catalog.binary_version = V(binary);
  catalog.cluster.emulation_version = cluster_emulation;
  catalog.cluster.min_compatibility_version = cluster_min_compat;
  return catalog;
}

struct ResolveCase {
  const char* name;
  const char* binary;
  const char* emulation;   // request field; "" = not given
  const char* min_compat;  // request field; "" = not given
  // Expected major.minor strings; nullptr error = success.
  const char* want_emulation;
  const char* want_min_compat;
  const char* error;
};

void RunResolveCase(const ResolveCase& c) {
  const Catalog catalog = CatalogAt(c.binary);
  VersionQuery query;
  query.emulation_version = c.emulation;
  query.min_compatibility_version = c.min_compat;
  const absl::StatusOr<EffectiveVersions> got =
      ResolveEffectiveVersions(catalog, query);
  if (c.error != nullptr) {
    EXPECT_THAT(
        got, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)))
        << c.name;
    return;
  }
  ASSERT_OK(got);
  EXPECT_EQ(got->emulation.ToString(), c.want_emulation) << c.name;
  EXPECT_EQ(got->min_compatibility.ToString(), c.want_min_compat) << c.name;
}

class ResolveTest : public ::testing::TestWithParam<ResolveCase> {};

TEST_P(ResolveTest, MatchesKubernetes) { RunResolveCase(GetParam()); }

std::string CaseName(const ::testing::TestParamInfo<ResolveCase>& info) {
  return info.param.name;
}

// component-base v0.36.3 compatibility/version_test.go TestInfo (copied into
// catalog-data/examples.json versionInfo.fixtures). The "empty binary
// version" fixture (Info() returns nil) has no counterpart: compatd's binary
// version defaults to the catalog's.
const ResolveCase kTestInfoCases[] = {
    {"NormalCase", "v1.34.0", "v1.32.0", "v1.31.0", "1.32", "1.31", nullptr},
    {"DefaultMinCompatibilityIsEmulationMinusOne", "v1.34.0", "v1.32.0", "",
     "1.32", "1.31", nullptr},
    {"EmulationSameAsBinary", "v1.34.0", "v1.34.0", "", "1.34", "1.33",
     nullptr},
    {"WithPreReleaseAndBuildMetadata", "v1.34.0-alpha.1+abc123", "v1.32.0", "",
     "1.32", "1.31", nullptr},
    {"OverrideDefaultMinCompatibility", "v1.34.0", "v1.32.0", "v1.32.0", "1.32",
     "1.32", nullptr},
};
INSTANTIATE_TEST_SUITE_P(TestInfo, ResolveTest,
                         ::testing::ValuesIn(kTestInfoCases), CaseName);

// component-base compatibility/version_test.go TestSetEmulationVersion (its
// floors, 1.31, are the kube floors of binary 1.34).
const ResolveCase kSetEmulationVersionCases[] = {
    {"MinCompatibilityDefaultsToOneMinorLess", "v1.34", "v1.32", "", "1.32",
     "1.31", nullptr},
    {"MinCompatibilityDefaultsToEmulationAtTheFloor", "v1.34", "v1.31", "",
     "1.31", "1.31", nullptr},
};
INSTANTIATE_TEST_SUITE_P(SetEmulationVersion, ResolveTest,
                         ::testing::ValuesIn(kSetEmulationVersionCases),
                         CaseName);

// KEP-4330 (docs/kubernetes-rules.md#emulation-version-floor,
// docs/kubernetes-rules.md#min-compatibility-default): N-3 from beta on, the
// absolute 1.31 floor, and "min-compatibility defaults to emulation when
// emulation == binary-3".
const ResolveCase kKepCases[] = {
    {"NoFlagsEmulationIsBinary", "1.36", "", "", "1.36", "1.35", nullptr},
    {"EmulationNMinus1", "1.36", "1.35", "", "1.35", "1.34", nullptr},
    {"EmulationNMinus2", "1.36", "1.34", "", "1.34", "1.33", nullptr},
    {"EmulationNMinus3DefaultsMinCompatToEmulation", "1.36", "1.33", "", "1.33",
     "1.33", nullptr},
    {"EmulationNMinus4Rejected", "1.36", "1.32", "", nullptr, nullptr,
     "emulation version 1.32 is not between [1.33, 1.36.0]"},
    {"EmulationAboveBinaryRejected", "1.36", "1.37", "", nullptr, nullptr,
     "emulation version 1.37 is not between [1.33, 1.36.0]"},
    {"A3Emulation130AtBinary133Rejected", "1.33", "1.30", "", nullptr, nullptr,
     "emulation version 1.30 is not between [1.31, 1.33.0]"},
    {"A4MinCompatFlooredAt131", "1.33", "1.31", "", "1.31", "1.31", nullptr},
    {"MinCompatNMinus3", "1.36", "", "1.33", "1.36", "1.33", nullptr},
    {"MinCompatEqualToEmulation", "1.36", "1.35", "1.35", "1.35", "1.35",
     nullptr},
    {"MinCompatAboveEmulationRejected", "1.36", "1.34", "1.35", nullptr,
     nullptr,
     "minCompatibilityVersion version 1.35 is not between [1.33, "
     "1.34]"},
    {"MinCompatBelowFloorRejected", "1.36", "", "1.32", nullptr, nullptr,
     "minCompatibilityVersion version 1.32 is not between [1.33, 1.36]"},
    // Validate compares the binary with patch 0: a patch release changes
    // nothing.
    {"BinaryPatchIgnored", "v1.36.7", "1.36", "", "1.36", "1.35", nullptr},
    // A generic and a semver version compare on components only.
    {"PreReleaseBinaryAcceptsItsOwnMinor", "1.33.0-alpha.1", "1.33", "", "1.33",
     "1.32", nullptr},
};
INSTANTIATE_TEST_SUITE_P(Kep4330, ResolveTest, ::testing::ValuesIn(kKepCases),
                         CaseName);

// 1.31: apiserver v0.31.0..v0.31.14 pkg/util/version/version.go (the
// effective version lived there; component-base v0.31 version/version.go has
// none). Validate: emulation in [N-1, N], min-compatibility exactly N-1;
// SetEmulationVersion stores the emulation version only;
// ValidateKubeEffectiveVersion: emulation == binary at 1.31, reported after
// Validate's errors by kubernetes v1.31 cmd/kube-apiserver/app/options/
// validation.go (and printed with the binary's pre-release,
// EmulationVersion()).
const ResolveCase kApiserverV031Cases[] = {
    // apiserver v0.31.0 pkg/util/version/version.go newEffectiveVersion.
    {"V131Default", "1.31", "", "", "1.31", "1.30", nullptr},
    // apiserver v0.31.0 pkg/util/version/version.go
    // ValidateKubeEffectiveVersion.
    {"V131EmulationMustEqualBinary", "1.31", "1.30", "", nullptr, nullptr,
     "emulation version needs to be equal to binary version(1.31) in "
     "compatibility-version alpha, got 1.30"},
    // apiserver v0.31.0 pkg/util/version/version.go Validate.
    {"V131EmulationBelowNMinus1", "1.31", "1.29", "", nullptr, nullptr,
     "emulation version 1.29 is not between [1.30, 1.31.0]"},
    // apiserver v0.31.14 pkg/util/version/version.go Validate then
    // ValidateKubeEffectiveVersion: kube-apiserver 1.31 reports both.
    {"V131EmulationBelowNMinus1ReportsBothErrors", "1.31", "1.29", "", nullptr,
     nullptr,
     "emulation version 1.29 is not between [1.30, 1.31.0], emulation version "
     "needs to be equal to binary version(1.31) in compatibility-version "
     "alpha, got 1.29"},
    // apiserver v0.31.14 pkg/util/version/version.go Validate (upper bound is
    // the binary with patch 0).
    {"V131EmulationAboveBinaryRejected", "v1.31.4", "1.32", "", nullptr,
     nullptr, "emulation version 1.32 is not between [1.30, 1.31.0]"},
    // apiserver v0.31.0 pkg/util/version/version.go EmulationVersion():
    // ver.WithPreRelease(binary pre-release), as ValidateKubeEffectiveVersion
    // prints it.
    {"V131EqualityMessageCarriesBinaryPreRelease", "1.31.0-rc.1", "1.30", "",
     nullptr, nullptr, "compatibility-version alpha, got 1.30.0-rc.1"},
    // apiserver v0.31.0 pkg/util/version/version.go Validate: min-compat
    // exactly N-1.
    {"V131MinCompatFixed", "1.31", "", "1.31", nullptr, nullptr,
     "minCompatibilityVersion version 1.31 is not between [1.30, 1.30]"},
    {"V131MinCompatAtNMinus1", "1.31", "1.31", "1.30", "1.31", "1.30", nullptr},
};
INSTANTIATE_TEST_SUITE_P(ApiserverV031, ResolveTest,
                         ::testing::ValuesIn(kApiserverV031Cases), CaseName);

// 1.32: component-base v0.32.0..v0.32.13 version/version.go (no change across
// the v0.32 tags). Validate: emulation in [N-1, N] ("emulationVersion can only
// be 1.{binaryMinor-1}...1.{binaryMinor}") and min-compatibility exactly N-1
// ("can only be 1.{binaryMinor-1} for alpha"); SetEmulationVersion stores the
// emulation version only, so min-compatibility stays newEffectiveVersion's
// binary-1; ValidateKubeEffectiveVersion rejects nothing at 1.32. (The N-3 /
// N-4 ranges and ">= 1.31" / ">= 1.30" checks compatd used to apply here are
// component-base commit 70b67d7, first tagged v0.33.0-alpha.1.)
const ResolveCase kComponentBaseV032Cases[] = {
    // component-base v0.32.0 version/version.go newEffectiveVersion.
    {"V132Default", "1.32", "", "", "1.32", "1.31", nullptr},
    // component-base v0.32.13 version/version.go SetEmulationVersion (stores
    // the emulation version only) and newEffectiveVersion (binary-1): the
    // reported bug, min-compatibility 1.31, not 1.30.
    {"V132Emulation131KeepsMinCompat131", "1.32", "1.31", "", "1.31", "1.31",
     nullptr},
    {"V132Emulation132KeepsMinCompat131", "1.32", "1.32", "", "1.32", "1.31",
     nullptr},
    // component-base v0.32.0 version/version.go ValidateKubeEffectiveVersion:
    // only a 1.31 binary must emulate itself.
    {"V132PatchBinaryEmulation131", "v1.32.5", "1.31", "", "1.31", "1.31",
     nullptr},
    {"V132PreReleaseBinaryEmulation131", "1.32.0-alpha.1", "1.31", "", "1.31",
     "1.31", nullptr},
    // component-base v0.32.0 version/version.go Validate: N-2 is out.
    {"V132EmulationNMinus2Rejected", "1.32", "1.30", "", nullptr, nullptr,
     "emulation version 1.30 is not between [1.31, 1.32.0]"},
    {"V132EmulationNMinus4Rejected", "1.32", "1.28", "", nullptr, nullptr,
     "emulation version 1.28 is not between [1.31, 1.32.0]"},
    {"V132EmulationAboveBinaryRejected", "v1.32.3", "1.33", "", nullptr,
     nullptr, "emulation version 1.33 is not between [1.31, 1.32.0]"},
    // component-base v0.32.0 version/version.go Validate: min-compat is N-1
    // whatever the emulation version.
    {"V132MinCompatAtNMinus1", "1.32", "1.31", "1.31", "1.31", "1.31", nullptr},
    {"V132MinCompatEqualToEmulationRejected", "1.32", "1.32", "1.32", nullptr,
     nullptr,
     "minCompatibilityVersion version 1.32 is not between [1.31, 1.31]"},
    {"V132MinCompatNMinus2Rejected", "1.32", "1.31", "1.30", nullptr, nullptr,
     "minCompatibilityVersion version 1.30 is not between [1.31, 1.31]"},
    // Not a ">= 1.30" message: that check is 70b67d7, not v0.32.
    {"V132MinCompatNMinus3Rejected", "1.32", "1.31", "1.29", nullptr, nullptr,
     "minCompatibilityVersion version 1.29 is not between [1.31, 1.31]"},
};
INSTANTIATE_TEST_SUITE_P(ComponentBaseV032, ResolveTest,
                         ::testing::ValuesIn(kComponentBaseV032Cases),
                         CaseName);

// component-base v0.32.0 version/version_test.go TestValidate (identical to
// apiserver v0.31.0 pkg/util/version/version_test.go TestValidate), the rows
// with binary 1.32. Its flags are major.minor here: compatd's request fields
// go through toVersionMap, which rejects a non-zero patch, where the test
// calls Set() directly. The row "emulation version two minor lower than binary
// not ok" has binary v1.33.2, which compatd answers with the 1.33 code.
const ResolveCase kComponentBaseV032TestValidateCases[] = {
    {"PatchVersionDiffOk", "v1.32.2", "1.32", "1.31", "1.32", "1.31", nullptr},
    {"EmulationVersionOneMinorLowerThanBinaryOk", "v1.32.2", "1.31", "1.31",
     "1.31", "1.31", nullptr},
    {"EmulationVersionOneMinorHigherThanBinaryNotOk", "v1.32.2", "1.33", "1.31",
     nullptr, nullptr, "emulation version 1.33 is not between [1.31, 1.32.0]"},
    {"EmulationVersionTwoMinorHigherThanBinaryNotOk", "v1.32.2", "1.34", "1.31",
     nullptr, nullptr, "emulation version 1.34 is not between [1.31, 1.32.0]"},
    {"CompatibilityVersionSameAsBinaryNotOk", "v1.32.2", "1.32", "1.32",
     nullptr, nullptr,
     "minCompatibilityVersion version 1.32 is not between [1.31, 1.31]"},
    {"CompatibilityVersionTwoMinorLowerThanBinaryNotOk", "v1.32.2", "1.32",
     "1.30", nullptr, nullptr,
     "minCompatibilityVersion version 1.30 is not between [1.31, 1.31]"},
    {"CompatibilityVersionOneMinorHigherThanBinaryNotOk", "v1.32.2", "1.32",
     "1.33", nullptr, nullptr,
     "minCompatibilityVersion version 1.33 is not between [1.31, 1.31]"},
};
INSTANTIATE_TEST_SUITE_P(
    ComponentBaseV032TestValidate, ResolveTest,
    ::testing::ValuesIn(kComponentBaseV032TestValidateCases), CaseName);

// 1.33 and later: component-base compatibility/version.go (identical from
// v0.33.0 through v0.33.13, v0.34.0..v0.34.10, v0.35.x, v0.36.3 and master
// 349fbe0) with apiserver pkg/util/compatibility/version.go
// kubeEffectiveVersionFloors (identical v0.33.0..master 24a394e): the 1.31
// rules that survive are the absolute floor max(N-3, 1.31) of both versions
// and min-compatibility = max(emulation-1, floor) after SetEmulationVersion.
const ResolveCase kCompatibilityFloorCases[] = {
    // v0.33.0 compatibility/version.go NewEffectiveVersion: binary-1,
    // SetMinCompatibilityVersion after SetEmulationVersion, not floored.
    {"V133Default", "1.33", "", "", "1.33", "1.32", nullptr},
    // v0.33.0 compatibility/version.go SetEmulationVersion: emulation-1 = 1.30
    // is below the 1.31 floor of apiserver v0.33.0
    // pkg/util/compatibility/version.go kubeEffectiveVersionFloors.
    {"V133Emulation131MinCompatFlooredAt131", "1.33", "1.31", "", "1.31",
     "1.31", nullptr},
    {"V133Emulation132MinCompat131", "1.33", "1.32", "", "1.32", "1.31",
     nullptr},
    // v0.33.13 compatibility/version.go Validate with the 1.31 floor.
    {"V133EmulationBelow131Rejected", "v1.33.13", "1.30", "", nullptr, nullptr,
     "emulation version 1.30 is not between [1.31, 1.33.0]"},
    {"V133MinCompatBelow131Rejected", "1.33", "1.32", "1.30", nullptr, nullptr,
     "minCompatibilityVersion version 1.30 is not between [1.31, 1.32]"},
    // v0.34.0 compatibility/version.go: N-3 is 1.31, the same floor.
    {"V134Emulation131MinCompatFlooredAt131", "1.34", "1.31", "", "1.31",
     "1.31", nullptr},
    {"V134EmulationBelow131Rejected", "v1.34.10", "1.30", "", nullptr, nullptr,
     "emulation version 1.30 is not between [1.31, 1.34.0]"},
    // master compatibility/version.go: from 1.35 the floor is N-3.
    {"V135Emulation132MinCompatFlooredAt132", "1.35", "1.32", "", "1.32",
     "1.32", nullptr},
    {"V135Emulation131Rejected", "1.35", "1.31", "", nullptr, nullptr,
     "emulation version 1.31 is not between [1.32, 1.35.0]"},
    {"V137Emulation134MinCompatFlooredAt134", "1.37.0-alpha.3", "1.34", "",
     "1.34", "1.34", nullptr},
};
INSTANTIATE_TEST_SUITE_P(CompatibilityFloors, ResolveTest,
                         ::testing::ValuesIn(kCompatibilityFloorCases),
                         CaseName);

// Before 1.31 there is no --emulated-version (a compatd convention: the
// binary's own code has no effective version).
const ResolveCase kBeforeEmulationCases[] = {
    {"V130HasNoEmulation", "1.30", "1.29", "", nullptr, nullptr,
     "has no --emulated-version"},
    {"V130Default", "1.30", "", "", "1.30", "1.29", nullptr},
};
INSTANTIATE_TEST_SUITE_P(OlderReleases, ResolveTest,
                         ::testing::ValuesIn(kBeforeEmulationCases), CaseName);

// Flag values (registry.go toVersionMap), through the request field.
const ResolveCase kFlagCases[] = {
    {"PatchZeroAccepted", "1.36", "1.34.0", "", "1.34", "1.33", nullptr},
    {"PreReleaseWithPatchZeroAccepted", "1.36", "1.34.0-alpha.1", "", "1.34",
     "1.33", nullptr},
    {"VPrefixAccepted", "1.36", "v1.34", "", "1.34", "1.33", nullptr},
    {"SurroundingSpaceAccepted", "1.36", " 1.34 ", "", "1.34", "1.33", nullptr},
    {"KubePrefixAccepted", "1.36", "kube=1.34", "", "1.34", "1.33", nullptr},
    {"NonZeroPatchRejected", "1.36", "1.34.2", "", nullptr, nullptr,
     "patch version not allowed, got: kube=1.34.2"},
    {"NonZeroPatchMinCompatRejected", "1.36", "", "v1.34.1", nullptr, nullptr,
     "patch version not allowed, got: kube=1.34.1"},
    {"GarbageRejected", "1.36", "banana", "", nullptr, nullptr,
     "could not parse \"banana\" as version"},
};
INSTANTIATE_TEST_SUITE_P(Flags, ResolveTest, ::testing::ValuesIn(kFlagCases),
                         CaseName);

// component-base compatibility/registry_test.go TestFlags, the version-flag
// cases (our registry has one component, "kube").
struct FlagCase {
  const char* name;
  const char* value;
  const char* want;   // major.minor
  const char* error;  // substring; nullptr = success
};

class ParseVersionFlagTest : public ::testing::TestWithParam<FlagCase> {};

TEST_P(ParseVersionFlagTest, MatchesToVersionMap) {
  const FlagCase& c = GetParam();
  const absl::StatusOr<Version> got = ParseVersionFlag(c.value);
  if (c.error != nullptr) {
    EXPECT_THAT(
        got, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)));
    return;
  }
  ASSERT_OK(got);
  EXPECT_EQ(got->ToString(), c.want);
}

const FlagCase kRegistryFlagCases[] = {
    {"SettingKubeEmulationVersion", "kube=1.30", "1.30", nullptr},
    {"SettingKubeEmulationVersionTwice", "kube=1.30,kube=1.32", nullptr,
     "duplicate version flag, kube=1.30 and kube=1.32"},
    {"PrefixVOk", "kube=v1.30", "1.30", nullptr},
    {"PatchVersionNotOk", "kube=1.30.2", nullptr,
     "patch version not allowed, got: kube=1.30.2"},
    {"VersionMissingComponentDefaultsToKube", "1.30", "1.30", nullptr},
    {"MissingComponentWithDuplicate", "1.30,kube=1.30", nullptr,
     "duplicate version flag, kube=1.30 and kube=1.30"},
    {"VersionUnregisteredComponent", "test3=1.31", nullptr,
     "component not registered: test3"},
    {"InvalidVersion", "test=1.foo", nullptr,
     "illegal version string \"1.foo\""},
    {"PatchZeroOk", "1.30.0", "1.30", nullptr},
    {"PreReleasePatchZeroOk", "1.32.0-alpha.1", "1.32", nullptr},
    {"EmptyItemRejected", "1.30,", nullptr, "could not parse \"\" as version"},
};
INSTANTIATE_TEST_SUITE_P(RegistryTestFlags, ParseVersionFlagTest,
                         ::testing::ValuesIn(kRegistryFlagCases),
                         [](const ::testing::TestParamInfo<FlagCase>& info) {
                           return std::string(info.param.name);
                         });

// component-base compatibility/version_test.go TestValidate (explicit floors;
// Set() keeps major.minor of emulation and min-compat; an absent floor is
// 0.0).
struct ValidateCase {
  const char* name;
  const char* binary;
  const char* emulation;
  const char* min_compat;
  const char* emulation_floor;
  const char* min_compat_floor;
  bool expect_errors;
};

class ValidateRangeTest : public ::testing::TestWithParam<ValidateCase> {};

TEST_P(ValidateRangeTest, MatchesEffectiveVersionValidate) {
  const ValidateCase& c = GetParam();
  const absl::Status status = ValidateEffectiveVersionRange(
      *Version::ParseGeneric(c.binary),
      Version::ParseGeneric(c.emulation)->ToMajorMinor(),
      Version::ParseGeneric(c.min_compat)->ToMajorMinor(),
      *Version::ParseGeneric(c.emulation_floor),
      *Version::ParseGeneric(c.min_compat_floor));
  if (c.expect_errors) {
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("is not between")));
  } else {
    EXPECT_OK(status);
  }
}

const ValidateCase kValidateCases[] = {
    {"PatchVersionDiffOk", "v1.32.1", "v1.32.2", "v1.32.5", "0.0", "0.0",
     false},
    {"EmulationGreaterThanBinaryNotOk", "v1.32.2", "v1.33.0", "v1.31.0", "0.0",
     "0.0", true},
    {"MinCompatGreaterThanEmulationNotOk", "v1.32.2", "v1.31.0", "v1.32.0",
     "0.0", "0.0", true},
    {"BetweenFloorAndBinaryOk", "v1.32.1", "v1.31.0", "v1.30.0", "v1.31.0",
     "v1.30.0", false},
    {"EmulationLessThanFloorNotOk", "v1.32.1", "v1.30.0", "v1.30.0", "v1.31.0",
     "v1.30.0", true},
    {"MinCompatLessThanFloorNotOk", "v1.32.1", "v1.31.0", "v1.29.0", "v1.31.0",
     "v1.30.0", true},
};
INSTANTIATE_TEST_SUITE_P(
    TestValidate, ValidateRangeTest, ::testing::ValuesIn(kValidateCases),
    [](const ::testing::TestParamInfo<ValidateCase>& info) {
      return std::string(info.param.name);
    });

TEST(ValidateRangeMessageTest, ReportsBothErrorsLikeAnAggregate) {
  EXPECT_THAT(
      ValidateEffectiveVersionRange(V("1.33"), V("1.29"), V("1.34"), V("1.31"),
                                    V("1.31")),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("emulation version 1.29 is not between [1.31, "
                               "1.33.0]"),
                     HasSubstr("minCompatibilityVersion version 1.34 is not "
                               "between [1.31, 1.29]"))));
}

// apiserver pkg/util/compatibility/version.go kubeEffectiveVersionFloors.
TEST(KubeVersionFloorTest, IsBinaryMinusThreeFlooredAt131) {
  EXPECT_EQ(KubeVersionFloor(V("1.33")).ToString(), "1.31");
  EXPECT_EQ(KubeVersionFloor(V("1.34.5")).ToString(), "1.31");
  EXPECT_EQ(KubeVersionFloor(V("1.36")).ToString(), "1.33");
  EXPECT_EQ(KubeVersionFloor(V("v1.37.0-alpha.2")).ToString(), "1.34");
  EXPECT_EQ(KubeVersionFloor(V("2.1")).ToString(), "2.0");
}

TEST(ResolveEffectiveVersionsTest, BinaryKeepsPatchAndPreRelease) {
  VersionQuery query;
  query.binary_version = "v1.36.2-rc.1";
  ASSERT_OK_AND_ASSIGN(EffectiveVersions got,
                       ResolveEffectiveVersions(CatalogAt("1.30"), query));
  EXPECT_EQ(got.binary.ToString(), "1.36.2-rc.1");
  EXPECT_EQ(got.emulation.ToString(), "1.36");
  EXPECT_EQ(got.min_compatibility.ToString(), "1.35");
}

TEST(ResolveEffectiveVersionsTest, BinaryDefaultsToTheCatalogs) {
  ASSERT_OK_AND_ASSIGN(EffectiveVersions got,
                       ResolveEffectiveVersions(CatalogAt("v1.35.4"), {}));
  EXPECT_EQ(got.binary.ToString(), "1.35.4");
  EXPECT_EQ(got.emulation.ToString(), "1.35");
  EXPECT_EQ(got.min_compatibility.ToString(), "1.34");
}

TEST(ResolveEffectiveVersionsTest, MalformedBinaryNamesTheField) {
  VersionQuery query;
  query.binary_version = "1.x";
  EXPECT_THAT(ResolveEffectiveVersions(CatalogAt("1.36"), query),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("binary_version \"1.x\""),
                             HasSubstr("\"v1.36.2\""))));
}

TEST(ResolveEffectiveVersionsTest, ClusterSectionGivesTheDefaults) {
  ASSERT_OK_AND_ASSIGN(
      EffectiveVersions got,
      ResolveEffectiveVersions(CatalogAt("1.36", "1.35", "1.33"), {}));
  EXPECT_EQ(got.emulation.ToString(), "1.35");
  EXPECT_EQ(got.min_compatibility.ToString(), "1.33");
}

TEST(ResolveEffectiveVersionsTest, ClusterEmulationResetsMinCompat) {
  ASSERT_OK_AND_ASSIGN(EffectiveVersions got,
                       ResolveEffectiveVersions(CatalogAt("1.36", "1.34"), {}));
  EXPECT_EQ(got.min_compatibility.ToString(), "1.33");
}

TEST(ResolveEffectiveVersionsTest, RequestOverridesClusterSection) {
  VersionQuery query;
  query.emulation_version = "1.36";
  query.min_compatibility_version = "1.36";
  ASSERT_OK_AND_ASSIGN(
      EffectiveVersions got,
      ResolveEffectiveVersions(CatalogAt("1.36", "1.34", "1.33"), query));
  EXPECT_EQ(got.emulation.ToString(), "1.36");
  EXPECT_EQ(got.min_compatibility.ToString(), "1.36");
}

// A request emulation version with the cluster's min-compatibility version:
// both are "flags", and they must agree.
TEST(ResolveEffectiveVersionsTest, RequestEmulationBelowClusterMinCompat) {
  VersionQuery query;
  query.emulation_version = "1.33";
  EXPECT_THAT(
      ResolveEffectiveVersions(CatalogAt("1.36", "1.36", "1.35"), query),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("min_compatibility_version \"1.35\" (catalog "
                               "cluster.minCompatibilityVersion)"),
                     HasSubstr("accepts min-compatibility versions 1.33"))));
}

TEST(ResolveEffectiveVersionsTest, EmulationErrorNamesFieldValueAndRange) {
  VersionQuery query;
  query.emulation_version = "1.29";
  EXPECT_THAT(
      ResolveEffectiveVersions(CatalogAt("1.33"), query),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("emulation_version \"1.29\" (request field "
                               "emulation_version)"),
                     HasSubstr("emulation version 1.29 is not between [1.31, "
                               "1.33.0]"),
                     HasSubstr("accepts emulation versions 1.31 to 1.33"),
                     Not(HasSubstr("min_compatibility_version")))));
}

TEST(ResolveEffectiveVersionsTest, ClusterEmulationErrorNamesTheCatalog) {
  EXPECT_THAT(ResolveEffectiveVersions(CatalogAt("1.36", "1.30"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("emulation_version \"1.30\" (catalog "
                                 "cluster.emulationVersion)")));
}

TEST(ResolveEffectiveVersionsTest, FlagParseErrorNamesFieldAndRange) {
  VersionQuery query;
  query.min_compatibility_version = "1.34.2";
  EXPECT_THAT(
      ResolveEffectiveVersions(CatalogAt("1.36"), query),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("min_compatibility_version \"1.34.2\""),
                     HasSubstr("patch version not allowed"),
                     HasSubstr("accepts min-compatibility versions 1.33 to "
                               "1.36"))));
}

TEST(ResolveEffectiveVersionsTest, BothErrorsWhenBothGiven) {
  VersionQuery query;
  query.emulation_version = "1.37";
  query.min_compatibility_version = "1.30";
  EXPECT_THAT(ResolveEffectiveVersions(CatalogAt("1.36"), query),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("emulation_version \"1.37\""),
                             HasSubstr("min_compatibility_version \"1.30\""))));
}

// component-base v0.32.0 version/version.go: SetEmulationVersion from the
// cluster section leaves min-compatibility at binary-1 as well.
TEST(ResolveEffectiveVersionsTest, V132ClusterEmulationKeepsMinCompat) {
  ASSERT_OK_AND_ASSIGN(EffectiveVersions got,
                       ResolveEffectiveVersions(CatalogAt("1.32", "1.31"), {}));
  EXPECT_EQ(got.emulation.ToString(), "1.31");
  EXPECT_EQ(got.min_compatibility.ToString(), "1.31");
}

// component-base v0.32.0 version/version.go Validate: the accepted ranges
// named in the message are [N-1, N] and N-1.
TEST(ResolveEffectiveVersionsTest, V132ErrorsNameTheV032Ranges) {
  VersionQuery query;
  query.emulation_version = "1.29";
  EXPECT_THAT(ResolveEffectiveVersions(CatalogAt("1.32"), query),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("accepts emulation versions 1.31 to "
                                       "1.32"),
                             Not(HasSubstr("greater or equal")))));
  query.emulation_version = "1.32";
  query.min_compatibility_version = "1.30";
  EXPECT_THAT(
      ResolveEffectiveVersions(CatalogAt("1.32"), query),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("kube-apiserver 1.32 accepts min-compatibility "
                         "versions 1.31")));
}

// A request's binary version is read as apimachinery's version.Parse reads it
// (util/version/version.go: ParseSemantic first, then ParseGeneric; a leading
// "v"; semantic versions refuse zero-prefixed components, generic ones only in
// the first). The common spellings take an allocation-free path; each case
// holds that path and the full parser to the same answer.
TEST(ResolveEffectiveVersionsTest, BinaryVersionIsReadAsVersionParse) {
  struct Case {
    const char* text;
    std::vector<uint64_t> components;
    bool semver;
    const char* pre_release;
  };
  const Case cases[] = {
      {"1.35.2", {1, 35, 2}, true, ""},
      {"v1.35.2", {1, 35, 2}, true, ""},
      {"1.35.0", {1, 35, 0}, true, ""},
      {"1.35", {1, 35}, false, ""},
      {"v1.35", {1, 35}, false, ""},
      {"1.035.2", {1, 35, 2}, false, ""},  // generic: zero prefix allowed
      {"1.35.02", {1, 35, 2}, false, ""},
      {"1.35.2.1", {1, 35, 2, 1}, false, ""},  // four: generic only
      {"1.35.2-rc.1", {1, 35, 2}, true, "rc.1"},
      {" 1.35.2", {1, 35, 2}, true, ""},
  };
  for (const Case& c : cases) {
    VersionQuery query;
    query.binary_version = c.text;
    ASSERT_OK_AND_ASSIGN(EffectiveVersions got,
                         ResolveEffectiveVersions(CatalogAt("1.35.4"), query));
    EXPECT_THAT(got.binary.components(),
                ::testing::ElementsAreArray(c.components))
        << c.text;
    EXPECT_EQ(got.binary.semver(), c.semver) << c.text;
    EXPECT_EQ(got.binary.pre_release(), c.pre_release) << c.text;
    EXPECT_EQ(got.emulation.ToString(), "1.35") << c.text;
  }
  // A zero-prefixed first component, one component, no number: errors.
  for (const char* bad : {"01.35.2", "1..2", "v", "x1.35"}) {
    VersionQuery query;
    query.binary_version = bad;
    EXPECT_THAT(ResolveEffectiveVersions(CatalogAt("1.35.4"), query),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("binary_version")))
        << bad;
  }
}

}  // namespace
}  // namespace compatd::engine
