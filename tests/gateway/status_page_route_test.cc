// The front door with a status page: / and /ui/... go to it, its readers are
// not recorded as clients, the RPC routes are unchanged, and without a page
// its paths are 404 as any unknown path.

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/client_tracker.h"
#include "tests/gateway/gateway_fixture.h"
#include "ui/status_page.h"

namespace compatd::gateway {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class StatusPageRouteTest : public GatewayTest {
 protected:
  StatusPageRouteTest()
      : clients_(&pipeline_->store(), nullptr,
                 runtime::ClientTracker::Options()),
        page_(&handlers_, ui::StatusPage::Options()),
        with_page_(&handlers_, &pipeline_->store(), &clients_, nullptr,
                   &page_) {}

  http::Response CallWithPage(absl::string_view target,
                              absl::string_view user_agent) {
    http::Response response;
    with_page_.Handle(MakeRequest("GET", target, "",
                                  {{"user-agent", std::string(user_agent)}}),
                      &response);
    return response;
  }

  runtime::ClientTracker clients_;
  ui::StatusPage page_;
  Gateway with_page_;
};

TEST_F(StatusPageRouteTest, PagePathsGoToThePage) {
  http::Response r = CallWithPage("/", "Mozilla/5.0");
  EXPECT_EQ(r.status, 302);
  r = CallWithPage("/ui/", "Mozilla/5.0");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  r = CallWithPage("/ui/features/WatchList", "Mozilla/5.0");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("<h1 id=\"gate\">WatchList</h1>"));
  // The RPCs are where they were.
  r = CallWithPage("/v1/GetFeature?name=WatchList", "Mozilla/5.0");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
}

TEST_F(StatusPageRouteTest, ReadersAreNotRecordedAsClients) {
  const auto snapshot = pipeline_->store().Current();
  CallWithPage("/ui/clients", "kubectl/v1.20.0 (linux/amd64) kubernetes/abc");
  CallWithPage("/", "kubectl/v1.20.0 (linux/amd64) kubernetes/abc");
  EXPECT_THAT(clients_.List(*snapshot), IsEmpty());
  CallWithPage("/healthz", "kubectl/v1.21.0 (linux/amd64) kubernetes/abc");
  EXPECT_THAT(clients_.List(*snapshot), SizeIs(1));
}

TEST_F(StatusPageRouteTest, WithoutAPageItsPathsAreNotFound) {
  for (const char* path : {"/", "/ui/", "/ui/clients", "/ui/app.js"}) {
    const http::Response r = Call("GET", path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.content_type, "application/json") << path;
  }
}

}  // namespace
}  // namespace compatd::gateway
