#include "ui/status_page.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/catalog_set.h"
#include "ui/html.h"
#include "ui/views.h"

namespace compatd::ui {

// The assets, embedded at build time by cmake/embed.cmake.
extern const std::string_view kStyleCss;
extern const std::string_view kAppJs;

namespace {

// The value of `key` in a query string ("a=1&binary=1.34"), decoded; empty
// when absent.
std::string QueryParameter(absl::string_view query, absl::string_view key) {
  for (absl::string_view pair : absl::StrSplit(query, '&')) {
    absl::string_view value = pair;
    if (absl::ConsumePrefix(&value, key) && absl::ConsumePrefix(&value, "=")) {
      return PercentDecode(value, true);
    }
  }
  return "";
}

constexpr absl::string_view kHtml = "text/html; charset=utf-8";

void SetCommonHeaders(http::Response* response) {
  response->headers.emplace_back("Content-Security-Policy",
                                 std::string(kContentSecurityPolicy));
  response->headers.emplace_back("X-Content-Type-Options", "nosniff");
  response->headers.emplace_back("Referrer-Policy", "no-referrer");
  response->headers.emplace_back("X-Frame-Options", "DENY");
}

void Page(absl::StatusOr<std::string> page, const PageContext& context,
          http::Response* response) {
  response->content_type = std::string(kHtml);
  if (page.ok()) {
    response->body = *std::move(page);
    return;
  }
  if (page.status().code() == absl::StatusCode::kNotFound) {
    response->status = 404;
    response->body =
        RenderError(&context, "Not found", page.status().message());
  } else if (page.status().code() == absl::StatusCode::kInvalidArgument) {
    response->status = 400;
    response->body =
        RenderError(&context, "Bad request", page.status().message());
  } else {
    response->status = 500;
    response->body = RenderError(&context, "Error", page.status().ToString());
  }
}

// Redirects and assets, which need no catalog; false for every other path.
bool AnswerWithoutCatalog(absl::string_view path, http::Response* response) {
  if (path == "/" || path == "/ui") {
    response->status = path == "/" ? 302 : 301;
    response->content_type = "text/plain; charset=utf-8";
    response->headers.emplace_back("Location", "/ui/");
    response->body = "see /ui/\n";
    return true;
  }
  if (path == "/ui/style.css" || path == "/ui/app.js") {
    const bool css = path == "/ui/style.css";
    response->content_type =
        css ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8";
    response->headers.emplace_back("Cache-Control", "no-cache");
    response->body = std::string(css ? kStyleCss : kAppJs);
    return true;
  }
  return false;
}

// Every path before the first catalog: 503.
void AnswerBeforeCatalog(absl::string_view path, http::Response* response) {
  response->status = 503;
  if (path == "/ui/status.json") {
    response->content_type = "application/json";
    response->body = "{\"generation\":0,\"digest\":\"\"}";
  } else {
    response->content_type = std::string(kHtml);
    response->body = RenderError(nullptr, "No catalog yet",
                                 "compatd has not loaded a catalog yet; "
                                 "this page works once it has.");
  }
}

// The view `path` names, rendered in `context`; 404 for any other path.
void AnswerView(const http::Request& request, absl::string_view path,
                const PageContext& context, http::Response* response) {
  const runtime::ServingSnapshot* snapshot = context.snapshot;
  if (path == "/ui/status.json") {
    response->content_type = "application/json";
    response->body = StatusDocument(*snapshot);
  } else if (path == "/ui/") {
    Page(RenderOverview(context), context, response);
  } else if (path == "/ui/clients") {
    Page(RenderClients(context), context, response);
  } else if (path == "/ui/features") {
    Page(RenderFeatures(context, ParseFeatureFilter(request.query)), context,
         response);
  } else if (absl::string_view gate = path;
             absl::ConsumePrefix(&gate, "/ui/features/") && !gate.empty() &&
             !absl::StrContains(gate, '/')) {
    Page(RenderFeature(context, PercentDecode(gate, false)), context, response);
  } else if (path == "/ui/apis") {
    Page(RenderApis(context), context, response);
  } else if (path == "/ui/api-use") {
    Page(RenderApiUse(context), context, response);
  } else if (path == "/ui/plan") {
    Page(RenderPlan(context, QueryParameter(request.query, "to")), context,
         response);
  } else {
    response->status = 404;
    response->content_type = std::string(kHtml);
    response->body = RenderError(
        &context, "Not found",
        absl::StrCat(path,
                     ": no such page; the status page has /ui/, /ui/clients, "
                     "/ui/features, /ui/features/<gate>, /ui/apis, "
                     "/ui/api-use and /ui/plan"));
  }
}

}  // namespace

StatusPage::StatusPage(const api::PolicyHandlers* handlers, Options options)
    : handlers_(handlers), options_(std::move(options)) {}

bool StatusPage::Owns(absl::string_view path) {
  return path == "/" || path == "/ui" || absl::StartsWith(path, "/ui/");
}

absl::string_view StatusPage::Route(absl::string_view path) {
  if (path == "/" || path == "/ui" || path == "/ui/") return "/ui/";
  if (path == "/ui/clients") return "/ui/clients";
  if (path == "/ui/features") return "/ui/features";
  if (absl::StartsWith(path, "/ui/features/")) return "/ui/features/<gate>";
  if (path == "/ui/apis") return "/ui/apis";
  if (path == "/ui/api-use") return "/ui/api-use";
  if (path == "/ui/plan") return "/ui/plan";
  if (path == "/ui/status.json") return "/ui/status.json";
  if (path == "/ui/style.css" || path == "/ui/app.js") return "/ui/assets";
  return "other";
}

void StatusPage::Handle(const http::Request& request,
                        const runtime::ServingSnapshot* snapshot,
                        http::Response* response) const {
  SetCommonHeaders(response);
  const absl::string_view path = request.path;
  if (request.method != "GET" && request.method != "HEAD") {
    response->status = 405;
    response->content_type = "text/plain; charset=utf-8";
    response->headers.emplace_back("Allow", "GET, HEAD");
    response->body = absl::StrCat("the status page is read-only: ", path,
                                  " takes GET or HEAD\n");
    return;
  }
  response->omit_body = request.method == "HEAD";
  if (AnswerWithoutCatalog(path, response)) return;
  response->headers.emplace_back("Cache-Control", "no-store");
  const absl::Time now = options_.clock ? options_.clock() : absl::Now();
  if (snapshot == nullptr) {
    AnswerBeforeCatalog(path, response);
    return;
  }
  // ?binary=1.34: every view answers as that line's binary would, by making
  // the chosen line the default of a view of the snapshot.
  runtime::ServingSnapshot chosen;
  if (const std::string binary = QueryParameter(request.query, "binary");
      !binary.empty() && path != "/ui/status.json") {
    absl::StatusOr<size_t> line =
        snapshot->catalogs->ResolveIndex(binary, "binary");
    absl::StatusOr<std::shared_ptr<const engine::CatalogSet>> set =
        line.ok() ? engine::CatalogSet::Make(
                        snapshot->catalogs->lines(),
                        snapshot->catalogs->lines()[*line]->binary_version)
                  : absl::StatusOr<std::shared_ptr<const engine::CatalogSet>>(
                        line.status());
    if (!set.ok()) {
      const PageContext context{snapshot, handlers_, now, options_.started,
                                options_.capi_verdicts};
      response->status = 400;
      response->content_type = std::string(kHtml);
      response->body =
          RenderError(&context, "No such binary", set.status().message());
      return;
    }
    chosen = *snapshot;
    chosen.catalogs = *std::move(set);
    snapshot = &chosen;
  }
  const PageContext context{snapshot, handlers_, now, options_.started,
                            options_.capi_verdicts};
  AnswerView(request, path, context, response);
}

}  // namespace compatd::ui
