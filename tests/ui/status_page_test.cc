// The status page through StatusPage::Handle over the embedded Kubernetes 1.36
// catalog, with a client tracker and catalog events as the server has them:
// what each view shows, that catalog and client strings are escaped, and the
// headers every answer carries.

#include "ui/status_page.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/handlers.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/user_agent.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/catalog_events.h"
#include "runtime/catalog_pipeline.h"
#include "runtime/client_tracker.h"
#include "runtime/fleet_clients.h"
#include "ui/views.h"

namespace compatd::ui {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The number of times `needle` occurs in `text`.
size_t Count(absl::string_view text, absl::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != absl::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// The header `name` of `response`, or "" when absent.
std::string HeaderOf(const http::Response& response, absl::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

class StatusPageTest : public ::testing::Test {
 protected:
  StatusPageTest() {
    runtime::CatalogPipeline::Options options;
    options.derive = api::DeriveAnswers;
    pipeline_ = std::make_unique<runtime::CatalogPipeline>(std::move(options));
    runtime::ClientTracker::Options tracker_options;
    tracker_options.clock = [this] { return now_ - absl::Seconds(30); };
    clients_ = std::make_unique<runtime::ClientTracker>(
        &pipeline_->store(), nullptr, tracker_options);
    handlers_ = std::make_unique<api::PolicyHandlers>(&events_, clients_.get());
    StatusPage::Options page_options;
    page_options.started = now_ - absl::Hours(26) - absl::Minutes(3);
    page_options.clock = [this] { return now_; };
    page_ = std::make_unique<StatusPage>(handlers_.get(), page_options);
  }

  void SetUp() override {
    absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
        catalog::ParseCatalog(catalog::EmbeddedCatalogYaml(),
                              catalog::EmbeddedCatalogSource());
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    pipeline_->Publish(*std::move(catalog), /*initial=*/true);
  }

  void Call(absl::string_view component, absl::string_view version,
            absl::string_view user_agent) {
    clients_->Record(*pipeline_->store().Current(),
                     engine::IdentifyClient(component, version, user_agent));
  }

  http::Response Get(absl::string_view target,
                     absl::string_view method = "GET") const {
    http::Request request;
    request.method = std::string(method);
    request.target = std::string(target);
    const size_t question = request.target.find('?');
    request.path = request.target.substr(0, question);
    if (question != std::string::npos) {
      request.query = request.target.substr(question + 1);
    }
    http::Response response;
    const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
        pipeline_->store().Current();
    page_->Handle(request, snapshot.get(), &response);
    return response;
  }

  // Ten minutes after the catalog is loaded (loads take the real clock).
  const absl::Time now_ = absl::Now() + absl::Minutes(10);
  runtime::CatalogEvents events_;
  std::unique_ptr<runtime::CatalogPipeline> pipeline_;
  std::unique_ptr<runtime::ClientTracker> clients_;
  std::unique_ptr<api::PolicyHandlers> handlers_;
  std::unique_ptr<StatusPage> page_;
};

TEST_F(StatusPageTest, OverviewShowsVersionsCatalogAndUptime) {
  const http::Response r = Get("/ui/");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_THAT(r.body, HasSubstr("<dd id=\"binary-version\">1.36</dd>"));
  EXPECT_THAT(r.body, HasSubstr("<dd id=\"emulation-version\">1.36</dd>"));
  EXPECT_THAT(r.body,
              HasSubstr("<dd id=\"min-compatibility-version\">1.35</dd>"));
  EXPECT_THAT(r.body, HasSubstr("<dd id=\"generation\">1</dd>"));
  EXPECT_THAT(r.body, HasSubstr("<dd id=\"source\">embedded:kubernetes-1.36"));
  EXPECT_THAT(
      r.body,
      HasSubstr(pipeline_->store().Current()->default_catalog().digest));
  EXPECT_THAT(r.body, HasSubstr("240 feature gates"));
  EXPECT_THAT(r.body, HasSubstr("<dd id=\"uptime\">1d 2h</dd>"));
  EXPECT_THAT(r.body, HasSubstr("<span class=\"ok\">no error</span>"));
  EXPECT_THAT(r.body, Not(HasSubstr("id=\"last-error\"")));
  EXPECT_THAT(r.body, HasSubstr("<body data-generation=\"1\">"));
  EXPECT_THAT(r.body, HasSubstr("0 out of allowance"));
}

TEST_F(StatusPageTest, OverviewShowsTheLastReloadErrorInRedEscaped) {
  events_.Rejected("catalog.yaml:3: unknown key \"<img src=x>\"",
                   now_ - absl::Minutes(2));
  const http::Response r = Get("/ui/");
  ASSERT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("<div class=\"error\" id=\"last-error\">"));
  EXPECT_THAT(r.body, HasSubstr("unknown key &quot;&lt;img src=x&gt;&quot;"));
  EXPECT_THAT(r.body, Not(HasSubstr("<img")));
  EXPECT_THAT(r.body, HasSubstr(">2m 0s ago</time>"));
}

TEST_F(StatusPageTest, ClientMatrixShowsAnOldKubeletTooOld) {
  Call("", "", "kubelet/v1.31.4 (linux/amd64) kubernetes/abc1234");
  Call("", "", "kubelet/v1.31.4 (linux/amd64) kubernetes/abc1234");
  Call("kube-scheduler", "v1.36.1", "");
  const http::Response r = Get("/ui/clients");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("<tr data-component=\"kubelet\"><th "
                                "scope=\"row\">kubelet</th><td "
                                "class=\"range\">1.33\xE2\x80\x93"
                                "1.36</td>"));
  EXPECT_THAT(r.body,
              HasSubstr("<td class=\"cell v-too-old seen\" "
                        "data-verdict=\"too-old\" data-version=\"1.31\""));
  EXPECT_THAT(r.body, HasSubstr("<span class=\"n\">2</span>"));
  EXPECT_THAT(r.body, HasSubstr(">30s ago</time>"));
  // kube-scheduler 1.36 is allowed and seen; 1.35-1.36 is its whole range.
  EXPECT_THAT(r.body, HasSubstr("<td class=\"cell v-allowed seen hi\" "
                                "data-verdict=\"allowed\" "
                                "data-version=\"1.36\""));
  // The table below lists both.
  EXPECT_THAT(r.body, HasSubstr("<span class=\"badge v-too-old\">too "
                                "old</span>"));
  EXPECT_EQ(Count(r.body, "<tr class=\"v-"), 2u);
  // The overview counts the kubelet.
  EXPECT_THAT(Get("/ui/").body, HasSubstr("1 out of allowance"));
  // Without --prometheus-url the page says whose clients these are.
  EXPECT_THAT(r.body, HasSubstr("<p class=\"scope scope-replica\" "
                                "id=\"client-scope\"><span class=\"badge "
                                "v-too-new\">this replica only</span> This "
                                "replica&#39;s clients only"));
  EXPECT_THAT(r.body, HasSubstr("without --prometheus-url"));
  EXPECT_THAT(Get("/ui/").body, HasSubstr("id=\"client-scope\""));
}

// With the fleet's answer, the matrix and table show another replica's
// clients and the line says "fleet".
class StatusPageFleetTest : public StatusPageTest {
 protected:
  StatusPageFleetTest()
      : fleet_({.source = "Prometheus at http://prom:9090",
                .max_age = absl::Hours(1),
                .clock = [this] { return now_; }}) {
    runtime::ClientTracker::Options tracker_options;
    tracker_options.clock = [this] { return now_ - absl::Seconds(30); };
    tracker_options.fleet = &fleet_;
    handlers_.reset();
    clients_ = std::make_unique<runtime::ClientTracker>(
        &pipeline_->store(), nullptr, tracker_options);
    handlers_ = std::make_unique<api::PolicyHandlers>(&events_, clients_.get());
    StatusPage::Options page_options;
    page_options.clock = [this] { return now_; };
    page_ = std::make_unique<StatusPage>(handlers_.get(), page_options);
  }

  runtime::FleetClients fleet_;
};

TEST_F(StatusPageFleetTest, FleetClientsInTheMatrixAndTheScopeLine) {
  Call("kube-scheduler", "v1.36.1", "");  // this replica's
  fleet_.Publish(runtime::FleetAnswer{
      .clients = {{"kubelet", "1.31", now_ - absl::Hours(1),
                   now_ - absl::Minutes(2), 5}},
      .taken = now_ - absl::Seconds(12),
      .replicas = 3});
  const http::Response r = Get("/ui/clients");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body,
              HasSubstr("<p class=\"scope scope-fleet\" id=\"client-scope\">"
                        "<span class=\"badge v-allowed\">fleet</span> Every "
                        "replica's clients: 3 replicas summed by Prometheus at "
                        "http://prom:9090, "));
  EXPECT_THAT(r.body, HasSubstr(">12s ago</time>"));
  EXPECT_THAT(r.body,
              HasSubstr("<td class=\"cell v-too-old seen\" "
                        "data-verdict=\"too-old\" data-version=\"1.31\""));
  EXPECT_EQ(Count(r.body, "<tr class=\"v-"), 2u);
  EXPECT_THAT(Get("/ui/").body, HasSubstr("1 out of allowance"));
  // Prometheus fails: the page is this replica's again, and says why.
  fleet_.Fail(absl::UnavailableError("connection refused"));
  const http::Response alone = Get("/ui/clients");
  EXPECT_THAT(alone.body, HasSubstr("scope-replica"));
  EXPECT_THAT(alone.body, HasSubstr("not the fleet&#39;s: Prometheus at "
                                    "http://prom:9090 failed since"));
  EXPECT_EQ(Count(alone.body, "<tr class=\"v-"), 1u);
}

TEST_F(StatusPageTest, ClientStringsAreEscaped) {
  Call("", "", "kubelet/<script>alert(1)</script>");
  Call("", "\"><img src=x onerror=alert(2)>", "kube-proxy/v1.30.0");
  const http::Response r = Get("/ui/clients");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(r.body, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(r.body, Not(HasSubstr("<img")));
  // The page's own script is its only script element.
  EXPECT_EQ(Count(r.body, "<script"), 1u);
}

TEST_F(StatusPageTest, FeatureTableHasEveryGateWithItsTimeline) {
  const http::Response r = Get("/ui/features");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Count(r.body, "<tr id=\"gate-"), 240u);
  EXPECT_THAT(r.body, HasSubstr("<tr id=\"gate-WatchList\" "
                                "data-name=\"WatchList\" "
                                "data-component=\"kube-apiserver\" "
                                "data-stage=\"BETA\">"));
  EXPECT_THAT(
      r.body,
      HasSubstr("<a href=\"/ui/features/WatchList\">Watch<wbr>List</a>"));
  EXPECT_THAT(r.body, HasSubstr("data-stage=\"Alpha\" data-from=\"1.27\" "
                                "data-to=\"1.31\""));
  EXPECT_THAT(r.body, HasSubstr("240 of 240 gates shown."));
}

TEST_F(StatusPageTest, FeatureFiltersWorkOnTheServer) {
  const http::Response r = Get("/ui/features?q=watchlist&stage=BETA");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Count(r.body, "<tr id=\"gate-"), 2u);
  EXPECT_THAT(r.body, HasSubstr("id=\"gate-WatchListClient\""));
  EXPECT_THAT(r.body, HasSubstr("<option value=\"BETA\" selected>"));
  EXPECT_THAT(r.body, HasSubstr("name=\"q\" id=\"filter-q\" "
                                "autocomplete=\"off\" value=\"watchlist\""));
  EXPECT_EQ(Count(Get("/ui/features?component=client-go").body,
                  "data-component=\"kube-apiserver\""),
            0u);
  // The filter's value is echoed escaped.
  const http::Response x = Get("/ui/features?q=%22%3E%3Cscript%3E");
  EXPECT_THAT(x.body, HasSubstr("value=\"&quot;&gt;&lt;script&gt;\""));
  EXPECT_EQ(Count(x.body, "<script"), 1u);
  EXPECT_THAT(x.body, HasSubstr("0 of 240 gates shown."));
}

TEST_F(StatusPageTest, FeaturePermalink) {
  const http::Response r = Get("/ui/features/WatchList");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("<h1 id=\"gate\">WatchList</h1>"));
  EXPECT_THAT(r.body, HasSubstr("BETA since 1.34, default on"));
  EXPECT_THAT(r.body, HasSubstr("Alpha 1.27 (off) \xC2\xB7 Beta 1.32 (on)"));
  EXPECT_EQ(Count(r.body, "<tr><td>1.3"), 3u);  // 1.32, 1.33, 1.34
  EXPECT_THAT(r.body, HasSubstr("<tr><td>1.27</td>"));
  // Percent-encoded names are decoded; unknown ones are 404, escaped.
  EXPECT_EQ(Get("/ui/features/Watch%4Cist").status, 200);
  const http::Response missing = Get("/ui/features/%3Cscript%3E");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.content_type, "text/html; charset=utf-8");
  EXPECT_THAT(missing.body, HasSubstr("&quot;&lt;script&gt;&quot; is not in "
                                      "the catalog"));
  EXPECT_EQ(Count(missing.body, "<script"), 1u);
}

TEST_F(StatusPageTest, ApisShowServedAndNotServed) {
  const http::Response r = Get("/ui/apis");
  ASSERT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("<tr data-group-version=\"apps/v1\">"));
  EXPECT_THAT(r.body, HasSubstr("<li>deployments</li>"));
  EXPECT_THAT(r.body, HasSubstr("<tr data-group-version=\"v1\">"));
  // batch/v1beta1 CronJob: removed in 1.25, not served.
  const size_t not_served = r.body.find("id=\"not-served\"");
  ASSERT_NE(not_served, std::string::npos);
  EXPECT_THAT(r.body.substr(not_served), HasSubstr("batch/v1beta1"));
  EXPECT_THAT(r.body.substr(0, not_served), Not(HasSubstr("batch/v1beta1")));
}

TEST_F(StatusPageTest, EveryAnswerCarriesTheSecurityHeadersAndNoCookie) {
  for (const char* target :
       {"/", "/ui", "/ui/", "/ui/clients", "/ui/features", "/ui/apis",
        "/ui/plan", "/ui/features/WatchList", "/ui/status.json",
        "/ui/style.css", "/ui/app.js", "/ui/nope", "/ui/features/Nope"}) {
    const http::Response r = Get(target);
    EXPECT_EQ(HeaderOf(r, "Content-Security-Policy"), kContentSecurityPolicy)
        << target;
    EXPECT_EQ(HeaderOf(r, "X-Content-Type-Options"), "nosniff") << target;
    EXPECT_EQ(HeaderOf(r, "X-Frame-Options"), "DENY") << target;
    EXPECT_EQ(HeaderOf(r, "Set-Cookie"), "") << target;
  }
  EXPECT_THAT(std::string(kContentSecurityPolicy),
              HasSubstr("script-src 'self';"));
  EXPECT_THAT(std::string(kContentSecurityPolicy),
              Not(HasSubstr("unsafe-inline")));
}

TEST_F(StatusPageTest, RedirectsAssetsAndErrors) {
  http::Response r = Get("/");
  EXPECT_EQ(r.status, 302);
  EXPECT_EQ(HeaderOf(r, "Location"), "/ui/");
  r = Get("/ui");
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(HeaderOf(r, "Location"), "/ui/");

  r = Get("/ui/style.css");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/css; charset=utf-8");
  EXPECT_THAT(r.body, HasSubstr("svg.tl"));
  r = Get("/ui/app.js");
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_THAT(r.body, HasSubstr("/ui/status.json"));

  r = Get("/ui/status.json");
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body,
            absl::StrCat("{\"generation\":1,\"digest\":\"",
                         pipeline_->store().Current()->default_catalog().digest,
                         "\"}"));
  EXPECT_EQ(HeaderOf(r, "Cache-Control"), "no-store");

  r = Get("/ui/nope");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(Get("/ui/features/a/b").status, 404);

  r = Get("/ui/", "POST");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(HeaderOf(r, "Allow"), "GET, HEAD");

  r = Get("/ui/clients", "HEAD");
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.omit_body);
}

TEST_F(StatusPageTest, BeforeACatalog) {
  http::Request request;
  request.method = "GET";
  request.path = request.target = "/ui/";
  http::Response response;
  page_->Handle(request, nullptr, &response);
  EXPECT_EQ(response.status, 503);
  EXPECT_THAT(response.body, HasSubstr("has not loaded a catalog yet"));
  request.path = request.target = "/ui/status.json";
  response = http::Response();
  page_->Handle(request, nullptr, &response);
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.body, "{\"generation\":0,\"digest\":\"\"}");
}

TEST_F(StatusPageTest, NoTargetNoPlan) {
  const http::Response r = Get("/ui/plan");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("id=\"no-target\""));
  EXPECT_THAT(r.body, HasSubstr("<form class=\"filters\" method=\"get\" "
                                "action=\"/ui/plan\" id=\"plan-target\">"));
  EXPECT_THAT(Get("/ui/").body,
              HasSubstr("<dd id=\"target\">none (<a href=\"/ui/plan\">choose "
                        "one</a>"));
  EXPECT_THAT(Get("/ui/clients").body, Not(HasSubstr("client-matrix-target")));
  EXPECT_THAT(Get("/ui/features").body, Not(HasSubstr("at the target")));
  EXPECT_THAT(Get("/ui/apis").body, Not(HasSubstr("id=\"at-target\"")));
}

// The page's form plans to the line chosen (GET /ui/plan?to=...), with no
// target in the cluster; a target compatd cannot plan to is said beside the
// form, escaped.
TEST_F(StatusPageTest, TheFormPlansToTheChosenTarget) {
  const http::Response chosen = Get("/ui/plan?to=1.36");
  ASSERT_EQ(chosen.status, 200) << chosen.body;
  EXPECT_THAT(chosen.body, Not(HasSubstr("id=\"no-target\"")));
  EXPECT_THAT(chosen.body, Not(HasSubstr("id=\"plan-error\"")));
  EXPECT_THAT(chosen.body, HasSubstr("value=\"1.36\""));
  const http::Response bad = Get("/ui/plan?to=%3Cb%3E9.99");
  ASSERT_EQ(bad.status, 200) << bad.body;
  EXPECT_THAT(bad.body,
              HasSubstr("id=\"plan-error\">No plan to &lt;b&gt;9.99"));
  EXPECT_THAT(bad.body, Not(HasSubstr("<b>9.99")));
  EXPECT_THAT(bad.body, HasSubstr("id=\"plan-target\""));
}

// The embedded catalog with a cluster at emulation 1.35 being upgraded to
// 1.36.
class StatusPageTargetTest : public StatusPageTest {
 protected:
  void SetUp() override {
    const std::string yaml = absl::StrCat(
        catalog::EmbeddedCatalogYaml(),
        "\ncluster:\n  emulationVersion: \"1.35\"\n  upgradeTarget: "
        "{emulationVersion: \"1.36\"}\n");
    absl::StatusOr<std::unique_ptr<engine::Catalog>> catalog =
        catalog::ParseCatalog(yaml, "target.yaml");
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    pipeline_->Publish(*std::move(catalog), /*initial=*/true);
  }
};

TEST_F(StatusPageTargetTest, OverviewNamesTheTarget) {
  const http::Response r = Get("/ui/");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("<dd id=\"emulation-version\">1.35</dd>"));
  EXPECT_THAT(r.body, HasSubstr("<dd id=\"target\">emulation 1.36, "
                                "min-compatibility 1.35 (<a "
                                "href=\"/ui/plan\">the plan</a>)</dd>"));
}

TEST_F(StatusPageTargetTest, ClientsAtTheTarget) {
  // kube-scheduler 1.34: allowed now (1.34-1.35), too old at the target.
  Call("kube-scheduler", "v1.34.2", "");
  const http::Response r = Get("/ui/clients");
  ASSERT_EQ(r.status, 200) << r.body;
  const size_t at = r.body.find("id=\"client-matrix-target\"");
  ASSERT_NE(at, std::string::npos);
  EXPECT_THAT(r.body.substr(0, at),
              HasSubstr("<td class=\"cell v-allowed seen lo\" "
                        "data-verdict=\"allowed\" data-version=\"1.34\""));
  EXPECT_THAT(r.body.substr(at),
              HasSubstr("<td class=\"cell v-too-old seen\" "
                        "data-verdict=\"too-old\" data-version=\"1.34\""));
  EXPECT_THAT(r.body, HasSubstr("<th scope=\"col\">at the target 1.36</th>"));
  EXPECT_THAT(r.body, HasSubstr("data-target-verdict=\"too-old\"><span "
                                "class=\"badge v-too-old\">too old</span> "
                                "1.35\xE2\x80\x93"
                                "1.36"));
}

TEST_F(StatusPageTargetTest, FeaturesAtTheTarget) {
  const http::Response r = Get("/ui/features");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("<th scope=\"col\">at the target 1.36</th>"));
  EXPECT_THAT(r.body, HasSubstr("class=\"on changes\""));
  EXPECT_THAT(r.body, HasSubstr("<line class=\"target\""));
  EXPECT_THAT(r.body, HasSubstr("<title>upgrade target 1.36</title>"));
}

TEST_F(StatusPageTargetTest, ApisAtTheTarget) {
  const http::Response r = Get("/ui/apis");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("<h2 id=\"at-target\">What changes at the "
                                "upgrade target (emulation 1.36, "
                                "min-compatibility 1.35)</h2>"));
  EXPECT_THAT(r.body, HasSubstr("id=\"stops-serving\""));
  EXPECT_THAT(r.body, HasSubstr("id=\"starts-serving\""));
}

TEST_F(StatusPageTargetTest, PlanSectionBySection) {
  Call("", "", "kubelet/v1.31.4 (linux/amd64) kubernetes/abc1234");
  const http::Response r = Get("/ui/plan");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("From emulation 1.35, min-compatibility 1.34 "
                                "to emulation 1.36, min-compatibility 1.35"));
  EXPECT_THAT(r.body, HasSubstr("<table class=\"list stack\" id=\"steps\">"));
  for (const char* id :
       {"flags", "feature-gates", "apis", "storage", "rollback", "clients"}) {
    EXPECT_THAT(r.body, HasSubstr(absl::StrCat("id=\"plan-", id, "\"")));
  }
  // The recorded kubelet 1.31 is too old for the target.
  const size_t clients = r.body.find("id=\"plan-clients\"");
  ASSERT_NE(clients, std::string::npos);
  EXPECT_THAT(r.body.substr(clients), HasSubstr("kubelet 1.31"));
  EXPECT_THAT(r.body.substr(clients),
              HasSubstr("data-rule=\"client-too-old\""));
}

TEST(StatusPageRoutesTest, OwnsAndRoutes) {
  EXPECT_TRUE(StatusPage::Owns("/"));
  EXPECT_TRUE(StatusPage::Owns("/ui"));
  EXPECT_TRUE(StatusPage::Owns("/ui/anything"));
  EXPECT_FALSE(StatusPage::Owns("/uix"));
  EXPECT_FALSE(StatusPage::Owns("/v1/GetFeature"));
  EXPECT_EQ(StatusPage::Route("/ui/features/WatchList"), "/ui/features/<gate>");
  EXPECT_EQ(StatusPage::Route("/ui/app.js"), "/ui/assets");
  EXPECT_EQ(StatusPage::Route("/ui/x"), "other");
}

TEST(FeatureFilterTest, ParsesTheForm) {
  FeatureFilter f = ParseFeatureFilter(
      "q=+Watch%20List+&component=kube-apiserver&stage=BETA&x=1");
  EXPECT_EQ(f.name, "Watch List");
  EXPECT_EQ(f.component, "kube-apiserver");
  EXPECT_EQ(f.stage, "BETA");
  f = ParseFeatureFilter("q&&stage=");
  EXPECT_EQ(f.name, "");
  EXPECT_EQ(f.stage, "");
}

TEST(HumanDurationTest, Units) {
  EXPECT_EQ(HumanDuration(absl::Seconds(12)), "12s");
  EXPECT_EQ(HumanDuration(absl::Seconds(192)), "3m 12s");
  EXPECT_EQ(HumanDuration(absl::Minutes(125)), "2h 5m");
  EXPECT_EQ(HumanDuration(absl::Hours(99)), "4d 3h");
  EXPECT_EQ(HumanDuration(-absl::Seconds(5)), "0s");
}

// Two release lines: the embedded 1.36 catalog and a small 1.34 one (its
// WatchList as kube_features.go has it at v1.34.7).
class StatusPageLinesTest : public StatusPageTest {
 protected:
  void SetUp() override {
    runtime::CatalogPipeline::Options options;
    options.derive = api::DeriveAnswers;
    options.sources = 2;
    clients_.reset();
    pipeline_ = std::make_unique<runtime::CatalogPipeline>(std::move(options));
    clients_ = std::make_unique<runtime::ClientTracker>(
        &pipeline_->store(), nullptr, runtime::ClientTracker::Options());
    handlers_ = std::make_unique<api::PolicyHandlers>(&events_, clients_.get());
    StatusPage::Options page_options;
    page_options.clock = [this] { return now_; };
    page_ = std::make_unique<StatusPage>(handlers_.get(), page_options);
    absl::StatusOr<std::unique_ptr<engine::Catalog>> embedded =
        catalog::ParseCatalog(catalog::EmbeddedCatalogYaml(),
                              catalog::EmbeddedCatalogSource());
    ASSERT_TRUE(embedded.ok()) << embedded.status();
    absl::StatusOr<std::unique_ptr<engine::Catalog>> line34 =
        catalog::ParseCatalog(
            "binaryVersion: \"1.34.7\"\nfeatures:\n  - name: WatchList\n"
            "    versionedSpecs:\n"
            "      - {version: \"1.27\", default: false, preRelease: Alpha}\n"
            "      - {version: \"1.32\", default: true, preRelease: Beta}\n"
            "      - {version: \"1.33\", default: false, preRelease: Beta}\n"
            "      - {version: \"1.34\", default: true, preRelease: Beta}\n",
            "line-1.34.yaml");
    ASSERT_TRUE(line34.ok()) << line34.status();
    ASSERT_TRUE(pipeline_->PublishLine(0, *std::move(embedded), true).ok());
    ASSERT_TRUE(pipeline_->PublishLine(1, *std::move(line34), true).ok());
  }
};

TEST_F(StatusPageLinesTest, TheOverviewListsTheLinesAndThePickerChoosesOne) {
  const http::Response r = Get("/ui/");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("id=\"binary-picker\""));
  EXPECT_THAT(r.body, HasSubstr("<option value=\"1.34\">1.34.7</option>"));
  EXPECT_THAT(r.body, HasSubstr("<a href=\"/ui/?binary=1.34\">1.34.7</a>"));
  EXPECT_THAT(r.body, HasSubstr("<dd id=\"binary-version\">1.36</dd>"));
  const http::Response picked = Get("/ui/?binary=1.34");
  ASSERT_EQ(picked.status, 200) << picked.body;
  EXPECT_THAT(picked.body, HasSubstr("<dd id=\"binary-version\">1.34</dd>"));
  EXPECT_THAT(picked.body,
              HasSubstr("<option value=\"1.34\" selected>1.34.7</option>"));
  const http::Response none = Get("/ui/?binary=1.30");
  EXPECT_EQ(none.status, 400);
  EXPECT_THAT(none.body, HasSubstr("no catalog describes kube-apiserver 1.30"));
}

TEST_F(StatusPageLinesTest, AGatePageShowsItsHistoryAsEachLineHasIt) {
  const http::Response r = Get("/ui/features/WatchList?binary=1.34");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("By kube-apiserver release line"));
  EXPECT_THAT(r.body, HasSubstr("<tr><td>1.34.7</td><td>1.27: Alpha, off; "
                                "1.32: Beta, on; 1.33: Beta, off; 1.34: "
                                "Beta, on</td></tr>"));
  // A gate of the 1.36 catalog that the small 1.34 one does not register.
  const http::Response other = Get("/ui/features/APIResponseCompression");
  ASSERT_EQ(other.status, 200) << other.body;
  EXPECT_THAT(other.body, HasSubstr("<tr><td>1.34.7</td><td><em>not "
                                    "registered by this binary</em>"));
}

}  // namespace
}  // namespace compatd::ui
