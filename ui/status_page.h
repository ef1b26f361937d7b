#pragma once

// The status page: a small server-rendered web page on the HTTPS/JSON front
// door's port (--http-listen) that an operator opens during an upgrade
// (docs/status-page.md). Read-only; its data comes from the same
// handlers as the RPCs (ui/views.h), one catalog snapshot per request, and it
// shows nothing ListClients, GetCatalog, ListFeatures and ListAPIVersions do
// not answer.
//
//   GET /                      302 to /ui/
//   GET /ui/                   overview: versions, catalog, clients, uptime
//   GET /ui/clients            the client matrix (component x minor version)
//   GET /ui/features           the feature gates (?q=&component=&stage=)
//   GET /ui/features/<Gate>    one gate: its permalink
//   GET /ui/apis               served group-versions and resources
//   GET /ui/plan               PlanUpgrade to the catalog's upgrade target
//   GET /ui/status.json        {"generation","digest"}, which the page polls
//   GET /ui/style.css, /ui/app.js   the page's only assets, from the binary
//
// No framework, CDN or web font (clusters are often air-gapped); the views
// work without JavaScript, which only reloads the page when the catalog
// generation changes and filters the gate table as one types. Every answer
// carries a Content-Security-Policy that allows scripts, styles and
// connections to this origin only (no inline script), no cookies, nosniff
// and no framing.

#include <functional>
#include <memory>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/handlers.h"
#include "http/server.h"
#include "runtime/capi_verdicts.h"
#include "runtime/serving_snapshot.h"

namespace compatd::ui {

// The Content-Security-Policy of every answer.
inline constexpr absl::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' "
    "data:; connect-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'";

class StatusPage final {
 public:
  struct Options {
    // The process's start, for the uptime.
    absl::Time started = absl::Now();
    // Defaults to absl::Now.
    std::function<absl::Time()> clock;
    // The overview's Cluster API section: the last hook verdict per cluster
    // (gateway/capi_extension.h). Null: no section. Must outlive the page.
    const runtime::CapiVerdicts* capi_verdicts = nullptr;
  };

  // `handlers` must outlive the page.
  StatusPage(const api::PolicyHandlers* handlers, Options options);

  // Whether `path` is the page's: "/", "/ui" and everything under "/ui/".
  static bool Owns(absl::string_view path);
  // The metrics route label of one of its paths (bounded: one per view).
  static absl::string_view Route(absl::string_view path);

  // Answers a request for one of its paths from `snapshot` (null before the
  // first catalog: 503). Thread-safe; never blocks.
  void Handle(const http::Request& request,
              const runtime::ServingSnapshot* snapshot,
              http::Response* response) const;

 private:
  const api::PolicyHandlers* handlers_;
  Options options_;
};

}  // namespace compatd::ui
