// PlanUpgrade (engine/upgrade_plan.h): the 1.33 -> 1.36 plan on the embedded
// catalog, every item checked against the catalog's own data, and each
// section's rules on small cases.

#include "engine/upgrade_plan.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/api_availability.h"
#include "engine/features.h"
#include "engine/skew.h"
#include "engine/storage_version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace compatd::engine {
namespace {

using ::compatd::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pointee;

class UpgradePlanTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<Catalog>> parsed =
        catalog::ParseCatalog(compatd::catalog::EmbeddedCatalogYaml(),
                              compatd::catalog::EmbeddedCatalogSource());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    catalog_ = parsed->release();
  }
  static void TearDownTestSuite() {
    delete catalog_;
    catalog_ = nullptr;
  }

  static UpgradePlanQuery Query(absl::string_view from, absl::string_view to) {
    UpgradePlanQuery q;
    q.from.emulation_version = from;
    q.to.emulation_version = to;
    return q;
  }

  static std::vector<const PlanItem*> Items(const UpgradePlan& plan,
                                            PlanSection section) {
    std::vector<const PlanItem*> out;
    for (const PlanItem& item : plan.path.items) {
      if (item.section == section) out.push_back(&item);
    }
    return out;
  }

  static const Catalog& catalog() { return *catalog_; }
  static Catalog* catalog_;
};

Catalog* UpgradePlanTest::catalog_ = nullptr;

Version V(uint64_t minor) { return Version::MajorMinor(1, minor); }

TEST_F(UpgradePlanTest, StepsFollowKep4330SafeOrder) {
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan,
                       PlanUpgrade(catalog(), Query("1.33", "1.36")));
  EXPECT_EQ(plan.from.emulation, V(33));
  EXPECT_EQ(plan.from.min_compatibility, V(33));  // max(1.32, floor 1.33)
  EXPECT_EQ(plan.to.emulation, V(36));
  EXPECT_EQ(plan.to.min_compatibility, V(35));
  ASSERT_EQ(plan.path.steps.size(), 6u);
  const std::vector<std::pair<std::string, std::pair<int, int>>> expected = {
      {"binaries", {33, 33}},
      {"emulation 1.34", {34, 33}},
      {"emulation 1.35", {35, 33}},
      {"emulation 1.36", {36, 33}},
      {"min-compatibility 1.34", {36, 34}},
      {"min-compatibility 1.35", {36, 35}}};
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].first);
    const UpgradeStep& step = plan.path.steps[i];
    EXPECT_EQ(step.number, static_cast<int>(i) + 1);
    EXPECT_EQ(step.name, expected[i].first);
    EXPECT_EQ(step.versions.binary, catalog().binary_version);
    EXPECT_EQ(step.versions.emulation, V(expected[i].second.first));
    EXPECT_EQ(step.versions.min_compatibility, V(expected[i].second.second));
    // Rollback: to the min-compatibility version (KEP-4330).
    EXPECT_EQ(step.rollback_to,
              step.versions.min_compatibility.MajorMinorString());
  }
  EXPECT_THAT(
      plan.path.steps[0].action,
      HasSubstr("--emulated-version=1.33 --min-compatibility-version=1.33"));
  EXPECT_THAT(plan.path.steps[4].action,
              HasSubstr("--min-compatibility-version=1.34"));
  // One rollback item per step.
  const std::vector<const PlanItem*> rollback =
      Items(plan, PlanSection::kRollback);
  ASSERT_EQ(rollback.size(), 6u);
  for (const PlanItem* item : rollback) {
    EXPECT_EQ(item->rule, "rollback-to-min-compatibility");
    EXPECT_THAT(
        item->reason,
        HasSubstr(absl::StrCat("can roll back to is ",
                               plan.path.steps[item->step - 1].rollback_to)));
  }
  // Without flags or clients nothing blocks.
  EXPECT_EQ(plan.path.blockers, 0);
  EXPECT_THAT(Items(plan, PlanSection::kFlags), IsEmpty());
  EXPECT_THAT(Items(plan, PlanSection::kClients), IsEmpty());
}

// Every feature gate item is a change of the spec in force between two
// consecutive steps, and every such change of the catalog's specs is an item.
TEST_F(UpgradePlanTest, FeatureGateItemsMatchTheCatalogSpecs) {
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan,
                       PlanUpgrade(catalog(), Query("1.33", "1.36")));
  std::set<std::pair<int, std::string>> items;
  for (const PlanItem* item : Items(plan, PlanSection::kFeatureGates)) {
    ASSERT_TRUE(absl::StartsWith(item->subject, "feature gate "));
    items.emplace(item->step, item->subject.substr(13));
    EXPECT_EQ(item->blocking, false);
  }
  const bool min_compat_rules =
      FeatureGatesUseMinCompatibility(catalog().binary_version);
  std::set<std::pair<int, std::string>> expected;
  for (const Feature& f : catalog().features) {
    EffectiveVersions before = plan.from;
    for (const UpgradeStep& step : plan.path.steps) {
      const FeatureSpec* a =
          SelectFeatureSpec(f.specs, before.emulation, before.min_compatibility,
                            min_compat_rules);
      const FeatureSpec* b =
          SelectFeatureSpec(f.specs, step.versions.emulation,
                            step.versions.min_compatibility, min_compat_rules);
      auto key = [](const FeatureSpec* s) {
        return s == nullptr
                   ? std::make_tuple(PreRelease::kPreAlpha, false, false)
                   : std::make_tuple(s->pre_release, s->default_enabled,
                                     s->lock_to_default);
      };
      if (key(a) != key(b)) expected.emplace(step.number, f.name);
      before = step.versions;
    }
  }
  EXPECT_EQ(items, expected);
  EXPECT_GT(items.size(), 100u);  // 1.33 -> 1.36 changes most gates
  // Nothing changes at the binary step: the behaviour stays 1.33's.
  for (const auto& [step, name] : items) EXPECT_NE(step, 1) << name;
}

TEST_F(UpgradePlanTest, FeatureGateItemSaysWhatChangesAndWhatToDo) {
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan,
                       PlanUpgrade(catalog(), Query("1.33", "1.36")));
  const Feature* f = catalog().FindFeature("APIServerTracing");
  ASSERT_NE(f, nullptr);
  // The first emulation version at which the gate is locked.
  int locked_at = 0;
  for (int minor = 34; minor <= 36 && locked_at == 0; ++minor) {
    const FeatureSpec* s = SelectFeatureSpec(f->specs, V(minor), V(33), true);
    if (s != nullptr && s->lock_to_default) locked_at = minor;
  }
  ASSERT_NE(locked_at, 0);
  EXPECT_THAT(
      Items(plan, PlanSection::kFeatureGates),
      Contains(Pointee(AllOf(
          Field(&PlanItem::subject, "feature gate APIServerTracing"),
          Field(&PlanItem::release, absl::StrCat("1.", locked_at)),
          Field(&PlanItem::rule, "feature-gate-spec-changes"),
          Field(&PlanItem::reason, HasSubstr("BETA on (default on) -> GA on "
                                             "(default on, locked)")),
          Field(&PlanItem::action, "none: it stays on")))));
}

TEST_F(UpgradePlanTest, AFlagLockedAtTheTargetBlocksItsStep) {
  UpgradePlanQuery q = Query("1.33", "1.36");
  q.from.feature_gates = "APIServerTracing=false";
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(catalog(), q));
  const std::vector<const PlanItem*> flags = Items(plan, PlanSection::kFlags);
  ASSERT_EQ(flags.size(), 1u);
  const PlanItem& item = *flags[0];
  EXPECT_EQ(item.rule, "feature-gate-locked");
  EXPECT_TRUE(item.blocking);
  EXPECT_EQ(item.subject,
            "--feature-gates APIServerTracing=false (from.feature_gates)");
  EXPECT_THAT(item.reason,
              HasSubstr("cannot set feature gate APIServerTracing to false, "
                        "feature is locked to true"));
  EXPECT_THAT(item.action, HasSubstr("remove APIServerTracing=false"));
  // The step whose spec in force locks it.
  const FeatureSpec* spec = SelectFeatureSpec(
      catalog().FindFeature("APIServerTracing")->specs,
      plan.path.steps[item.step - 1].versions.emulation, V(33), true);
  ASSERT_NE(spec, nullptr);
  EXPECT_TRUE(spec->lock_to_default);
  const FeatureSpec* before = SelectFeatureSpec(
      catalog().FindFeature("APIServerTracing")->specs,
      plan.path.steps[item.step - 2].versions.emulation, V(33), true);
  EXPECT_FALSE(before->lock_to_default);
  EXPECT_EQ(plan.path.blockers, 1);
  // The gate's own item shows it turning on (the flag is gone).
  EXPECT_THAT(Items(plan, PlanSection::kFeatureGates),
              Contains(Pointee(AllOf(
                  Field(&PlanItem::subject, "feature gate APIServerTracing"),
                  Field(&PlanItem::rule, "feature-gate-enabled-changes"),
                  Field(&PlanItem::step, item.step)))));
}

TEST_F(UpgradePlanTest, TargetFlagsUnknownOrNotIntroducedBlock) {
  UpgradePlanQuery q = Query("1.33", "1.35");
  q.to.feature_gates = "NoSuchGate=true,AtomicFIFO=true";  // AtomicFIFO: 1.36
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(catalog(), q));
  const std::vector<const PlanItem*> flags = Items(plan, PlanSection::kFlags);
  ASSERT_EQ(flags.size(), 2u);
  EXPECT_EQ(flags[0]->rule, "feature-gate-not-introduced");
  EXPECT_EQ(flags[0]->subject,
            "--feature-gates AtomicFIFO=true (to.feature_gates)");
  EXPECT_EQ(flags[0]->release, "1.35");  // to's flags apply from 1.35 on
  EXPECT_EQ(flags[1]->rule, "feature-gate-unknown");
  EXPECT_THAT(flags[1]->reason, HasSubstr("unrecognized feature gate: "
                                          "NoSuchGate"));
}

TEST_F(UpgradePlanTest, ForwardCompatibleFlagIsRefusedOnceEmulationIsBinary) {
  UpgradePlanQuery q = Query("1.33", "1.36");
  q.from.emulation_forward_compatible = true;
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(catalog(), q));
  const std::vector<const PlanItem*> flags = Items(plan, PlanSection::kFlags);
  ASSERT_EQ(flags.size(), 1u);
  EXPECT_EQ(flags[0]->subject, "--emulation-forward-compatible");
  EXPECT_EQ(flags[0]->release, "1.36");
  EXPECT_EQ(flags[0]->rule, "apiserver-flags-refused");
  EXPECT_THAT(flags[0]->reason,
              HasSubstr("cannot be set to true if the emulation version is "
                        "the same as the binary version"));
}

// Served APIs: every item is a difference of ListServedAPIs between two
// steps, and the removals are the catalog's.
TEST_F(UpgradePlanTest, APIItemsMatchServedAPIsAndCatalogRemovals) {
  UpgradePlanQuery q = Query("1.33", "1.36");
  q.from.runtime_config = "admissionregistration.k8s.io/v1beta1=true";
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(catalog(), q));
  auto served = [&](const EffectiveVersions& v) {
    VersionQuery vq;
    vq.runtime_config = q.from.runtime_config;
    absl::StatusOr<std::vector<ServedGroupVersion>> s =
        ListServedAPIs(catalog(), v, vq);
    EXPECT_TRUE(s.ok()) << s.status();
    std::set<std::string> out;
    for (const ServedGroupVersion& gv : *s) {
      for (const std::string& r : gv.resources) {
        out.insert(absl::StrCat(gv.group.empty() ? "" : gv.group + "/",
                                gv.version, " ", r));
      }
    }
    return out;
  };
  std::set<std::string> expected_stop, expected_start;
  std::set<std::string> before = served(plan.from);
  for (const UpgradeStep& step : plan.path.steps) {
    const std::set<std::string> now = served(step.versions);
    for (const std::string& r : before) {
      if (!now.contains(r)) {
        expected_stop.insert(absl::StrCat(step.number, " ", r));
      }
    }
    for (const std::string& r : now) {
      if (!before.contains(r)) {
        expected_start.insert(absl::StrCat(step.number, " ", r));
      }
    }
    before = now;
  }
  std::set<std::string> stop, start;
  for (const PlanItem* item : Items(plan, PlanSection::kAPIs)) {
    // "<gv> <r1>, <r2> stop(s) being served ..."
    const std::string list = item->reason.substr(
        item->subject.size() + 1,
        item->reason.find(" st") - item->subject.size() - 1);
    for (absl::string_view r : absl::StrSplit(list, ", ")) {
      (item->rule == "api-stops-serving" ? stop : start)
          .insert(absl::StrCat(item->step, " ", item->subject, " ", r));
    }
  }
  EXPECT_EQ(stop, expected_stop);
  EXPECT_EQ(start, expected_start);
  // The catalog removes the v1beta1 ValidatingAdmissionPolicy kinds in 1.34.
  EXPECT_THAT(
      Items(plan, PlanSection::kAPIs),
      Contains(Pointee(AllOf(
          Field(&PlanItem::subject, "admissionregistration.k8s.io/v1beta1"),
          Field(&PlanItem::rule, "api-stops-serving"),
          Field(&PlanItem::release, "1.34"), Field(&PlanItem::blocking, true),
          Field(&PlanItem::reason,
                HasSubstr("validatingadmissionpolicies removed in "
                          "1.34"))))));
  // resource.k8s.io/v1 is introduced in 1.34 (GA: on by default): step 2.
  EXPECT_THAT(expected_start, Contains("2 resource.k8s.io/v1 deviceclasses"));
}

// Storage: every item is a change of DecideStorageVersion between two steps,
// each with its KEP-2339 disagreement during the roll-out.
TEST_F(UpgradePlanTest, StorageItemsMatchStorageVersionDecisions) {
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan,
                       PlanUpgrade(catalog(), Query("1.33", "1.36")));
  std::set<std::string> changes, disagreements;
  for (const PlanItem* item : Items(plan, PlanSection::kStorage)) {
    (item->rule == "storage-version-changes" ? changes : disagreements)
        .insert(absl::StrCat(item->step, " ", item->subject));
  }
  EXPECT_EQ(changes, disagreements);
  std::set<std::string> expected;
  std::set<std::pair<std::string, std::string>> resources;
  for (const APIGroupVersion& gv : catalog().apis) {
    for (const APIResource& r : gv.resources) {
      if (r.persisted && !absl::StrContains(r.resource, '/')) {
        resources.emplace(gv.group, r.resource);
      }
    }
  }
  for (const auto& [group, resource] : resources) {
    EffectiveVersions before = plan.from;
    for (const UpgradeStep& step : plan.path.steps) {
      absl::StatusOr<StorageVersionDecision> a =
          DecideStorageVersion(catalog(), before, group, resource);
      absl::StatusOr<StorageVersionDecision> b =
          DecideStorageVersion(catalog(), step.versions, group, resource);
      ASSERT_TRUE(a.ok() && b.ok());
      if (a->version != b->version) {
        expected.insert(absl::StrCat(
            step.number, " ",
            group.empty() ? resource : absl::StrCat(resource, ".", group)));
      }
      before = step.versions;
    }
  }
  EXPECT_EQ(changes, expected);
  // resource.k8s.io/v1 (introduced 1.34) becomes the storage version once
  // min-compatibility reaches 1.34 (step 5), not when emulation does.
  EXPECT_THAT(changes, Contains("5 deviceclasses.resource.k8s.io"));
  EXPECT_THAT(changes, Contains("5 volumeattributesclasses.storage.k8s.io"));
  for (const PlanItem* item : Items(plan, PlanSection::kStorage)) {
    if (item->subject != "deviceclasses.resource.k8s.io") continue;
    if (item->rule == "storage-version-changes") {
      EXPECT_THAT(item->reason, HasSubstr("written as resource.k8s.io/v1 "
                                          "from this step, was "
                                          "resource.k8s.io/v1beta"));
      EXPECT_THAT(item->action, HasSubstr("StorageVersionMigration"));
    } else {
      EXPECT_THAT(item->reason, HasSubstr("AllEncodingVersionsEqual=False"));
    }
  }
}

TEST_F(UpgradePlanTest, ClientsOutOfAllowanceAtTheirFirstStep) {
  UpgradePlanQuery q = Query("1.33", "1.36");
  q.clients = {{"kubelet", "1.31", "clients[0]", true},
               {"kubectl", "1.35", "clients[1]", true},
               {"kube-proxy", "1.33", "clients[2]", true},
               {"kube-scheduler", "1.36", "recorded", false},
               {"unknown-thing", "1.30", "recorded", false}};
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(catalog(), q));
  const std::vector<const PlanItem*> clients =
      Items(plan, PlanSection::kClients);
  std::map<std::string, const PlanItem*> by_subject;
  for (const PlanItem* c : clients) by_subject[c->subject] = c;
  // Each against CheckSkew at the steps.
  for (const PlanClient& client : q.clients) {
    int first_out = 0;
    for (const UpgradeStep& step : plan.path.steps) {
      absl::StatusOr<SkewDecision> d =
          CheckSkew(catalog(), step.versions, client.component, client.version);
      if (d.ok() && d->verdict != SkewVerdict::kAllowed) {
        first_out = step.number;
        break;
      }
    }
    const std::string subject = absl::StrCat(
        client.component, " ", client.version, " (", client.source, ")");
    if (first_out == 0) {
      EXPECT_FALSE(by_subject.contains(subject)) << subject;
    } else {
      ASSERT_TRUE(by_subject.contains(subject)) << subject;
      EXPECT_EQ(by_subject[subject]->step, first_out);
      EXPECT_TRUE(by_subject[subject]->blocking);
    }
  }
  // kubelet 1.31: min-compatibility - 2 passes it at min-compatibility 1.34.
  ASSERT_TRUE(by_subject.contains("kubelet 1.31 (clients[0])"));
  const PlanItem& kubelet = *by_subject["kubelet 1.31 (clients[0])"];
  EXPECT_EQ(kubelet.release, "1.34");
  EXPECT_EQ(kubelet.rule, "client-too-old");
  EXPECT_THAT(kubelet.reason, HasSubstr("allowed at the target: 1.33 to 1.36"));
  EXPECT_THAT(kubelet.action,
              HasSubstr("upgrade kubelet to 1.32 or later before this step "
                        "(1.33 or later for the target)"));
  // kube-scheduler 1.36 is too new until emulation 1.36.
  ASSERT_TRUE(by_subject.contains("kube-scheduler 1.36 (recorded)"));
  EXPECT_EQ(by_subject["kube-scheduler 1.36 (recorded)"]->step, 1);
  EXPECT_EQ(by_subject["kube-scheduler 1.36 (recorded)"]->rule,
            "client-too-new");
  // kubectl 1.35: emulation + 1 allows it only from emulation 1.34.
  ASSERT_TRUE(by_subject.contains("kubectl 1.35 (clients[1])"));
  EXPECT_EQ(by_subject["kubectl 1.35 (clients[1])"]->step, 1);
  // kube-proxy 1.33 stays within [min-compatibility - 2, emulation].
  EXPECT_FALSE(by_subject.contains("kube-proxy 1.33 (clients[2])"));
  EXPECT_EQ(clients.size(), 3u);
}

TEST_F(UpgradePlanTest, ARequestClientMustBeJudgeable) {
  UpgradePlanQuery q = Query("1.33", "1.36");
  q.clients = {{"kubelet", "one.two", "clients[0]", true}};
  EXPECT_THAT(
      PlanUpgrade(catalog(), q),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("clients[0]: ")));
  q.clients = {{"frobnicator", "1.33", "clients[0]", true}};
  EXPECT_THAT(
      PlanUpgrade(catalog(), q),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("clients[0]: ")));
}

// One catalog is one release line: a binary of another line has no facts to
// answer from.
TEST_F(UpgradePlanTest, AnotherBinaryIsRefusedWithTheAcceptedRange) {
  UpgradePlanQuery q = Query("1.33", "1.36");
  q.from.binary_version = "1.33";
  EXPECT_THAT(
      PlanUpgrade(catalog(), q),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("from.binary_version \"1.33\": no catalog "
                               "describes kube-apiserver 1.33"),
                     HasSubstr("the release lines it has are 1.36"),
                     HasSubstr("1.33 to 1.36 are accepted"))));
  q = Query("1.33", "1.36");
  q.to.binary_version = "1.37.0";
  EXPECT_THAT(PlanUpgrade(catalog(), q),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("to.binary_version \"1.37.0\"")));
  // Any patch of the catalog's binary is fine.
  q = Query("1.33", "1.36");
  q.to.binary_version = "v1.36.4";
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(catalog(), q));
  EXPECT_EQ(plan.to.binary.ToString(), "1.36.4");
}

TEST_F(UpgradePlanTest, BadEndsAreInvalidArgumentNamingTheField) {
  EXPECT_THAT(PlanUpgrade(catalog(), Query("1.30", "1.36")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("from.emulation_version \"1.30\"")));
  EXPECT_THAT(PlanUpgrade(catalog(), Query("1.35", "1.34")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("to.emulation_version 1.34 is older than "
                                 "from's 1.35")));
  UpgradePlanQuery q = Query("1.35", "1.36");
  q.from.min_compatibility_version = "1.35";
  q.to.min_compatibility_version = "1.34";
  EXPECT_THAT(
      PlanUpgrade(catalog(), q),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("to.min_compatibility_version 1.34 is older")));
  q = Query("1.33", "1.36");
  q.to.feature_gates = "WatchList=maybe";
  EXPECT_THAT(PlanUpgrade(catalog(), q),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("to.feature_gates \"WatchList=maybe\"")));
  // from must be flags the cluster runs with now.
  q = Query("1.36", "1.36");
  q.from.feature_gates = "APIServerTracing=false";
  EXPECT_THAT(PlanUpgrade(catalog(), q),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("from.feature_gates"),
                             HasSubstr("locked to true"))));
}

TEST_F(UpgradePlanTest, EmptyToIsTheBinaryVersion) {
  UpgradePlanQuery q;
  q.from.emulation_version = "1.35";
  ASSERT_OK_AND_ASSIGN(UpgradePlan plan, PlanUpgrade(catalog(), q));
  EXPECT_EQ(plan.to.emulation, V(36));
  EXPECT_EQ(plan.to.min_compatibility, V(35));
  // From 1.35 defaults min-compatibility to 1.34.
  EXPECT_EQ(plan.from.min_compatibility, V(34));
  ASSERT_EQ(plan.path.steps.size(), 3u);
  EXPECT_EQ(plan.path.steps[1].name, "emulation 1.36");
  EXPECT_EQ(plan.path.steps[2].name, "min-compatibility 1.35");
}

TEST(PlanSectionNameTest, Names) {
  EXPECT_EQ(PlanSectionName(PlanSection::kFlags), "flags");
  EXPECT_EQ(PlanSectionName(PlanSection::kFeatureGates), "feature_gates");
  EXPECT_EQ(PlanSectionName(PlanSection::kClients), "clients");
}

}  // namespace
}  // namespace compatd::engine
