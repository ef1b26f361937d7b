// ComputeStorageVersionAgreement (apiserver pkg/storageversion updater.go and
// manager.go; pkg/controller/storageversiongc).

#include "engine/storage_agreement.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The fixtures of kubernetes/apiserver pkg/storageversion/updater_test.go.
const ServerStorageVersion kSSV1{"1", "v1", {"v1", "v2"}, {"v1"}};
const ServerStorageVersion kSSV2{"2", "v1", {"v1", "v2"}, {"v1", "v2"}};
const ServerStorageVersion kSSV3{"3", "v2", {"v1", "v2"}, {"v1", "v2"}};
const ServerStorageVersion kSSV4{"4", "v1", {"v1", "v2", "v4"}, {"v1", "v2"}};
const ServerStorageVersion kSSV5{"5", "v2", {"v1", "v2", "v4"}, {"v1", "v2"}};

std::vector<std::string> Ids(const std::vector<ServerStorageVersion>& in) {
  std::vector<std::string> out;
  for (const ServerStorageVersion& s : in) out.push_back(s.apiserver_id);
  return out;
}

struct AgreementCase {
  const char* name;
  std::vector<ServerStorageVersion> reports;
  std::vector<std::string> expected_ids;
  const char* expected_common;  // "" = none
};

class UpdaterTest : public ::testing::TestWithParam<AgreementCase> {};

TEST_P(UpdaterTest, MatchesUpdaterTest) {
  const AgreementCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(
      StorageVersionAgreement a,
      ComputeStorageVersionAgreement(c.reports, {}, "apps", "deployments"));
  EXPECT_EQ(Ids(a.counted), c.expected_ids);
  EXPECT_EQ(a.common_encoding_version, c.expected_common);
  EXPECT_EQ(a.condition_type, "AllEncodingVersionsEqual");
  if (std::string(c.expected_common).empty()) {
    EXPECT_EQ(a.condition_status, "False");
    EXPECT_EQ(a.condition_reason, "CommonEncodingVersionUnset");
    EXPECT_EQ(a.condition_message, "Common encoding version unset");
  } else {
    EXPECT_EQ(a.condition_status, "True");
    EXPECT_EQ(a.condition_reason, "CommonEncodingVersionSet");
    EXPECT_EQ(a.condition_message, "Common encoding version set");
  }
}

INSTANTIATE_TEST_SUITE_P(
    StorageVersion, UpdaterTest,
    ::testing::Values(
        // TestLocalUpdateStorageVersion: each case is the old status's
        // servers followed by the new report.
        AgreementCase{"first_server", {kSSV1}, {"1"}, "v1"},
        AgreementCase{
            "new_server_disagrees", {kSSV1, kSSV2, kSSV3}, {"1", "2", "3"}, ""},
        AgreementCase{
            "new_server_agrees", {kSSV1, kSSV2, kSSV4}, {"1", "2", "4"}, "v1"},
        AgreementCase{"still_disagreeing",
                      {kSSV1, kSSV2, kSSV3, kSSV4},
                      {"1", "2", "3", "4"},
                      ""},
        // TestSetCommonEncodingVersion (the common version and condition
        // computed from a status's servers).
        AgreementCase{"no_common", {kSSV1, kSSV2, kSSV3}, {"1", "2", "3"}, ""},
        AgreementCase{"common", {kSSV1, kSSV2}, {"1", "2"}, "v1"},
        AgreementCase{
            "common_version_changed", {kSSV3, kSSV5}, {"3", "5"}, "v2"}),
    [](const ::testing::TestParamInfo<AgreementCase>& info) {
      return std::string(info.param.name);
    });

TEST(StorageVersionAgreementTest, RepeatedServerIsReplacedInPlace) {
  // localUpdateStorageVersion replaces the entry with the same APIServerID
  // where it stands.
  ServerStorageVersion ssv1_upgraded = kSSV1;
  ssv1_upgraded.encoding_version = "v2";
  ASSERT_OK_AND_ASSIGN(
      StorageVersionAgreement a,
      ComputeStorageVersionAgreement({kSSV1, kSSV3, ssv1_upgraded}, {}, "apps",
                                     "deployments"));
  EXPECT_THAT(Ids(a.counted), ElementsAre("1", "3"));
  EXPECT_EQ(a.counted[0].encoding_version, "v2");
  EXPECT_EQ(a.common_encoding_version, "v2");
  EXPECT_EQ(a.condition_status, "True");
}

TEST(StorageVersionAgreementTest, DecodableAndServedVersionsDoNotMatter) {
  ASSERT_OK_AND_ASSIGN(
      StorageVersionAgreement a,
      ComputeStorageVersionAgreement({kSSV1, kSSV4}, {}, "", ""));
  EXPECT_EQ(a.common_encoding_version, "v1");
  EXPECT_EQ(a.counted[1].decodable_versions,
            (std::vector<std::string>{"v1", "v2", "v4"}));
}

TEST(StorageVersionAgreementTest, NoReportsMeansNoCommonVersion) {
  ASSERT_OK_AND_ASSIGN(
      StorageVersionAgreement a,
      ComputeStorageVersionAgreement({}, {}, "apps", "deployments"));
  EXPECT_EQ(a.common_encoding_version, "");
  EXPECT_EQ(a.condition_status, "False");
  EXPECT_EQ(a.condition_reason, "CommonEncodingVersionUnset");
  EXPECT_THAT(a.reason, HasSubstr("no participating API server"));
}

TEST(StorageVersionAgreementTest, ParticipantsDropServersThatAreGone) {
  // The storage version GC removes entries of servers without a lease, then
  // recomputes: the disagreeing server 3 is gone, so v1 is common again.
  const std::vector<std::string> participants = {"1", "2"};
  ASSERT_OK_AND_ASSIGN(
      StorageVersionAgreement a,
      ComputeStorageVersionAgreement({kSSV1, kSSV2, kSSV3}, participants,
                                     "apps", "deployments"));
  EXPECT_THAT(Ids(a.counted), ElementsAre("1", "2"));
  EXPECT_THAT(a.ignored_apiserver_ids, ElementsAre("3"));
  EXPECT_EQ(a.common_encoding_version, "v1");
  EXPECT_THAT(a.reason, HasSubstr("ignored, no longer participating: 3"));
}

TEST(StorageVersionAgreementTest, NoParticipantLeftMeansNoCommonVersion) {
  const std::vector<std::string> participants = {"9"};
  ASSERT_OK_AND_ASSIGN(
      StorageVersionAgreement a,
      ComputeStorageVersionAgreement({kSSV1, kSSV2}, participants, "apps",
                                     "deployments"));
  EXPECT_THAT(a.counted, IsEmpty());
  EXPECT_THAT(a.ignored_apiserver_ids, ElementsAre("1", "2"));
  EXPECT_EQ(a.common_encoding_version, "");
  EXPECT_EQ(a.condition_status, "False");
}

TEST(StorageVersionAgreementTest, EmptyParticipantsCountsEveryone) {
  ASSERT_OK_AND_ASSIGN(StorageVersionAgreement a,
                       ComputeStorageVersionAgreement({kSSV1, kSSV3}, {},
                                                      "apps", "deployments"));
  EXPECT_THAT(a.ignored_apiserver_ids, IsEmpty());
  EXPECT_THAT(a.reason, HasSubstr("disagree on the encoding version (1 -> v1; "
                                  "3 -> v2)"));
}

TEST(StorageVersionAgreementTest, ObjectNameUsesCoreForTheEmptyGroup) {
  // manager.go: "Group must be a valid subdomain in DNS (RFC 1123)".
  ASSERT_OK_AND_ASSIGN(StorageVersionAgreement core,
                       ComputeStorageVersionAgreement({kSSV1}, {}, "", "pods"));
  EXPECT_EQ(core.object_name, "core.pods");
  ASSERT_OK_AND_ASSIGN(
      StorageVersionAgreement apps,
      ComputeStorageVersionAgreement({kSSV1}, {}, "apps", "deployments"));
  EXPECT_EQ(apps.object_name, "apps.deployments");
  ASSERT_OK_AND_ASSIGN(StorageVersionAgreement none,
                       ComputeStorageVersionAgreement({kSSV1}, {}, "apps", ""));
  EXPECT_EQ(none.object_name, "");
}

TEST(StorageVersionAgreementTest, AgreementReasonCountsServers) {
  ASSERT_OK_AND_ASSIGN(StorageVersionAgreement a,
                       ComputeStorageVersionAgreement({kSSV1, kSSV2, kSSV4}, {},
                                                      "apps", "deployments"));
  EXPECT_EQ(a.reason, "all 3 API servers encode in v1");
}

TEST(StorageVersionAgreementTest, EmptyApiserverIdIsInvalid) {
  ServerStorageVersion bad = kSSV2;
  bad.apiserver_id = "";
  EXPECT_THAT(
      ComputeStorageVersionAgreement({kSSV1, bad}, {}, "apps", "deployments"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("storage_versions[1]: apiserver_id is empty")));
}

TEST(StorageVersionAgreementTest, EmptyEncodingVersionIsInvalid) {
  ServerStorageVersion bad = kSSV2;
  bad.encoding_version = "";
  EXPECT_THAT(ComputeStorageVersionAgreement({bad}, {}, "apps", "deployments"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("storage_versions[0] (apiserver_id \"2\"): "
                                 "encoding_version is empty")));
}

}  // namespace
}  // namespace compatd::engine
