// api::ScanManifests over the embedded catalog (Kubernetes 1.36 with its API
// history): inside the emulation window a scan says exactly what the
// admission webhook's CheckObjectApi says; outside it the history decides;
// and the ScanObjects handler and its Evaluate item give the same answer.

#include "api/scan.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/handlers.h"
#include "api/object_check.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/api_names.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "runtime/catalog_pipeline.h"
#include "tests/api/embedded_snapshot.h"
#include "tests/testing/status_matchers.h"

namespace compatd::api {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class ScanTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    snapshot_ = new std::shared_ptr<const runtime::ServingSnapshot>(Embedded());
  }
  static void TearDownTestSuite() { delete snapshot_; }

  static const runtime::ServingSnapshot& Snapshot() { return **snapshot_; }

  static v1::ScanObjectsResponse Scan(const std::string& target,
                                      const std::string& text) {
    v1::ScanObjectsResponse response;
    const std::vector<ScanText> texts = {ScanText{"objects", text}};
    const absl::Status status =
        ScanManifests(Snapshot().default_line(), engine::VersionQuery{}, target,
                      texts, &response);
    EXPECT_TRUE(status.ok()) << status;
    return response;
  }

  static std::string Object(absl::string_view api_version,
                            absl::string_view kind) {
    return absl::StrCat("apiVersion: ", api_version, "\nkind: ", kind,
                        "\nmetadata: {name: x}\n");
  }

  static std::shared_ptr<const runtime::ServingSnapshot>* snapshot_;
};

std::shared_ptr<const runtime::ServingSnapshot>* ScanTest::snapshot_ = nullptr;

v1::ScanStatus Expected(const ObjectApiVerdict& verdict) {
  switch (verdict.state) {
    case ObjectApiVerdict::State::kServed:
    case ObjectApiVerdict::State::kUnknown:
      return v1::SCAN_STATUS_UNSPECIFIED;
    case ObjectApiVerdict::State::kDeprecated:
      return v1::SCAN_STATUS_DEPRECATED;
    case ObjectApiVerdict::State::kNotServed:
      break;
  }
  switch (verdict.not_served) {
    case ObjectApiVerdict::NotServed::kRemoved:
      return v1::SCAN_STATUS_REMOVED;
    case ObjectApiVerdict::NotServed::kNotIntroduced:
      return v1::SCAN_STATUS_NOT_YET_INTRODUCED;
    default:
      return v1::SCAN_STATUS_NOT_SERVED;
  }
}

// Every kind the catalog serves, at every emulation version of the window:
// the scan's status is the webhook's.
TEST_F(ScanTest, InsideTheWindowAScanAgreesWithTheAdmissionWebhook) {
  int checked = 0;
  for (int minor = 33; minor <= 36; ++minor) {
    const std::string target = absl::StrCat("1.", minor);
    engine::VersionQuery query;
    query.emulation_version = target;
    query.min_compatibility_version = target;
    for (const engine::APIGroupVersion& gv :
         Snapshot().default_catalog().apis) {
      for (const engine::APIResource& r : gv.resources) {
        const std::string api_version =
            engine::GroupVersionString(gv.group, gv.version);
        ASSERT_OK_AND_ASSIGN(
            ObjectApiVerdict verdict,
            CheckObjectApi(Snapshot(), query, gv.group, gv.version, r.kind));
        const v1::ScanObjectsResponse response =
            Scan(target, Object(api_version, r.kind));
        const v1::ScanStatus expected = Expected(verdict);
        SCOPED_TRACE(absl::StrCat(api_version, " ", r.kind, " at ", target));
        if (expected == v1::SCAN_STATUS_UNSPECIFIED) {
          EXPECT_THAT(response.findings(), IsEmpty());
        } else {
          ASSERT_THAT(response.findings(), SizeIs(1));
          EXPECT_EQ(response.findings(0).status(), expected);
          EXPECT_EQ(response.findings(0).message(), verdict.message);
          EXPECT_EQ(response.findings(0).rule(), "emulation-window");
        }
        ++checked;
      }
    }
  }
  // kubernetes-1.36.yaml lists 146 resources (compatd --check-catalog); the
  // six kinds no 1.36 REST storage serves are left out (catalog/README.md,
  // "The fork tree gives 1.36 back").
  EXPECT_GT(checked, 4 * 140);
}

TEST_F(ScanTest, KindsTheCatalogLeftOutAreDecidedByTheHistory) {
  // Both PodSecurityPolicies' Go types are gone from k8s.io/api 1.36, so the
  // catalog's apis do not have them; the history does.
  const v1::ScanObjectsResponse r =
      Scan("1.36", Object("extensions/v1beta1", "PodSecurityPolicy") + "---\n" +
                       Object("policy/v1beta1", "PodSecurityPolicy"));
  ASSERT_THAT(r.findings(), SizeIs(2));
  EXPECT_EQ(r.findings(0).status(), v1::SCAN_STATUS_REMOVED);
  EXPECT_EQ(r.findings(0).removed(), "1.16");
  EXPECT_EQ(r.findings(0).deprecated(), "1.11");
  EXPECT_EQ(r.findings(0).replacement(), "policy/v1beta1 PodSecurityPolicy");
  EXPECT_EQ(r.findings(0).rule(), "api-history");
  EXPECT_EQ(r.findings(0).line(), 1);
  EXPECT_EQ(r.findings(0).message(),
            "extensions/v1beta1 PodSecurityPolicy is removed in Kubernetes "
            "1.16 (deprecated in 1.11); use policy/v1beta1 PodSecurityPolicy "
            "instead");
  EXPECT_EQ(r.findings(1).status(), v1::SCAN_STATUS_REMOVED);
  EXPECT_EQ(r.findings(1).removed(), "1.25");
  EXPECT_EQ(r.findings(1).line(), 5);
  EXPECT_EQ(r.blocking(), 2u);
  EXPECT_EQ(r.objects(), 2u);
}

TEST_F(ScanTest, OutsideTheWindowTheHistoryDecides) {
  // 1.22: batch/v1beta1 CronJob is deprecated (1.21) and still on.
  v1::ScanObjectsResponse r = Scan("1.22", Object("batch/v1beta1", "CronJob"));
  ASSERT_THAT(r.findings(), SizeIs(1));
  EXPECT_EQ(r.findings(0).status(), v1::SCAN_STATUS_DEPRECATED);
  EXPECT_EQ(r.findings(0).replacement(), "batch/v1 CronJob");
  EXPECT_EQ(r.target(), "1.22");
  EXPECT_THAT(r.reason(), HasSubstr("outside the emulation window"));
  // 1.37, after the binary: resource.k8s.io/v1beta1 (introduced 1.32,
  // removed 1.38) is a beta from after 1.24, off by default.
  r = Scan("1.37", Object("resource.k8s.io/v1beta1", "ResourceClaim"));
  ASSERT_THAT(r.findings(), SizeIs(1));
  EXPECT_EQ(r.findings(0).status(), v1::SCAN_STATUS_NOT_SERVED);
  // 1.16: apps/v1 served, extensions/v1beta1 just removed.
  r = Scan("1.16", Object("apps/v1", "Deployment") + "---\n" +
                       Object("extensions/v1beta1", "DaemonSet"));
  ASSERT_THAT(r.findings(), SizeIs(1));
  EXPECT_EQ(r.findings(0).kind(), "DaemonSet");
  EXPECT_EQ(r.findings(0).status(), v1::SCAN_STATUS_REMOVED);
}

TEST_F(ScanTest, BuiltInGroupWithAnUnknownKindOrVersion) {
  const v1::ScanObjectsResponse r =
      Scan("1.36", Object("apps/v2", "Deployment") + "---\n" +
                       Object("v1", "Pdo") + "---\n" +
                       Object("monitoring.coreos.com/v1", "ServiceMonitor"));
  ASSERT_THAT(r.findings(), SizeIs(2));
  EXPECT_EQ(r.findings(0).status(), v1::SCAN_STATUS_UNKNOWN);
  EXPECT_THAT(r.findings(0).message(), HasSubstr("group apps is built in"));
  EXPECT_EQ(r.findings(1).status(), v1::SCAN_STATUS_UNKNOWN);
  EXPECT_THAT(r.findings(1).message(), HasSubstr("the core group"));
  EXPECT_EQ(r.unchecked(), 1u);
}

TEST_F(ScanTest, CustomResourcesAgainstTheirCrdInTheSet) {
  const std::string crd =
      "apiVersion: apiextensions.k8s.io/v1\n"
      "kind: CustomResourceDefinition\n"
      "metadata: {name: widgets.example.com}\n"
      "spec:\n"
      "  group: example.com\n"
      "  names: {kind: Widget, plural: widgets}\n"
      "  versions:\n"
      "  - {name: v1alpha1, served: false, storage: false}\n"
      "  - {name: v1, served: true, storage: true}\n";
  v1::ScanObjectsResponse response;
  // The custom resources come first, in another source.
  const std::string objects = Object("example.com/v1alpha1", "Widget") +
                              "---\n" + Object("example.com/v1", "Widget") +
                              "---\n" + Object("example.com/v2", "Widget");
  const std::vector<ScanText> texts = {ScanText{"widgets.yaml", objects},
                                       ScanText{"crds.yaml", crd}};
  ASSERT_OK(ScanManifests(Snapshot().default_line(), engine::VersionQuery{}, "",
                          texts, &response));
  ASSERT_THAT(response.findings(), SizeIs(2));
  EXPECT_EQ(response.findings(0).status(), v1::SCAN_STATUS_NOT_SERVED);
  EXPECT_EQ(response.findings(0).source(), "widgets.yaml");
  EXPECT_EQ(response.findings(0).rule(), "crd");
  EXPECT_EQ(response.findings(1).status(), v1::SCAN_STATUS_UNKNOWN);
  EXPECT_THAT(response.findings(1).message(),
              HasSubstr("has no version v2 (it lists v1alpha1, v1)"));
  EXPECT_EQ(response.objects(), 4u);
  EXPECT_EQ(response.target(), "1.36");
}

TEST_F(ScanTest, BadDocumentsAreProblemsAndTheRestIsScanned) {
  const v1::ScanObjectsResponse r =
      Scan("", "kind: Deployment\n---\n" + Object("batch/v1beta1", "CronJob"));
  ASSERT_THAT(r.problems(), SizeIs(1));
  EXPECT_EQ(r.problems(0).line(), 1);
  EXPECT_EQ(r.problems(0).source(), "objects");
  ASSERT_THAT(r.findings(), SizeIs(1));
  EXPECT_EQ(r.findings(0).line(), 3);
}

TEST_F(ScanTest, TargetsBefore116AndMalformedOnesAreRefused) {
  v1::ScanObjectsResponse response;
  const std::vector<ScanText> texts = {ScanText{"x", Object("v1", "Pod")}};
  EXPECT_THAT(ScanManifests(Snapshot().default_line(), engine::VersionQuery{},
                            "1.15", texts, &response),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("scans cover Kubernetes 1.16 and later")));
  EXPECT_THAT(ScanManifests(Snapshot().default_line(), engine::VersionQuery{},
                            "one.37", texts, &response),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("target \"one.37\"")));
}

TEST_F(ScanTest, HandlerAndEvaluateItemGiveTheScanAnswer) {
  const PolicyHandlers handlers;
  v1::ScanObjectsRequest request;
  request.set_target("1.30");
  request.set_objects(
      Object("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema"));
  v1::ScanObjectsResponse direct;
  ASSERT_OK(handlers.ScanObjects(Snapshot(), request, &direct));
  ASSERT_THAT(direct.findings(), SizeIs(1));
  EXPECT_EQ(direct.findings(0).status(), v1::SCAN_STATUS_REMOVED);
  EXPECT_EQ(direct.findings(0).removed(), "1.29");
  EXPECT_EQ(direct.findings(0).replacement(),
            "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema");

  v1::EvaluateRequest batch;
  *batch.add_items()->mutable_scan_objects() = request;
  v1::EvaluateResponse evaluated;
  ASSERT_OK(handlers.Evaluate(Snapshot(), batch, &evaluated));
  ASSERT_THAT(evaluated.results(), SizeIs(1));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      evaluated.results(0).scan_objects(), direct));
}

TEST_F(ScanTest, HandlerRefusesAnEmptyRequest) {
  const PolicyHandlers handlers;
  v1::ScanObjectsResponse response;
  EXPECT_THAT(
      handlers.ScanObjects(Snapshot(), v1::ScanObjectsRequest(), &response),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("objects and sources are both empty")));
}

}  // namespace
}  // namespace compatd::api
