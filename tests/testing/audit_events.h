#pragma once

// audit.k8s.io/v1 Events and EventLists in the shape kube-apiserver's audit
// webhook backend posts them: written from k8s.io/apiserver
// pkg/apis/audit/v1/types.go at v0.36.3 (field names and order as
// encoding/json writes the Go structs: TypeMeta, level, auditID, stage,
// requestURI, verb, user, sourceIPs, userAgent, objectRef, responseStatus,
// requestReceivedTimestamp, stageTimestamp, annotations) and
// plugin/pkg/audit/webhook (one EventList per batch). Metadata level: no
// requestObject or responseObject.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace compatd::testing {

struct AuditEventSpec {
  std::string stage = "ResponseComplete";
  std::string verb = "get";
  std::string username = "system:serviceaccount:kube-system:default";
  std::vector<std::string> groups = {"system:serviceaccounts",
                                     "system:authenticated"};
  std::string user_agent;
  // objectRef; no resource: a non-resource request (no objectRef at all).
  std::string api_group;
  std::string api_version = "v1";
  std::string resource;
  std::string subresource;
  std::string namespace_ = "default";
  std::string name = "x";
  int code = 200;
  bool deprecated = false;      // k8s.io/deprecated: "true"
  std::string removed_release;  // k8s.io/removed-release
  std::string audit_id = "0b7c4a4e-3f4b-4c53-9d5e-7f0e8a1d2c3b";
};

inline std::string AuditEventJson(const AuditEventSpec& e) {
  std::vector<std::string> groups;
  for (const std::string& g : e.groups)
    groups.push_back(absl::StrCat("\"", g, "\""));
  std::string uri =
      e.resource.empty()
          ? "/healthz"
          : absl::StrCat(e.api_group.empty() ? "/api/" : "/apis/", e.api_group,
                         e.api_group.empty() ? "" : "/", e.api_version,
                         "/namespaces/", e.namespace_, "/", e.resource, "/",
                         e.name, e.subresource.empty() ? "" : "/",
                         e.subresource);
  std::string out = absl::StrCat(
      R"({"level":"Metadata","auditID":")", e.audit_id, R"(","stage":")",
      e.stage, R"(","requestURI":")", uri, R"(","verb":")", e.verb,
      R"(","user":{"username":")", e.username,
      R"(","uid":"4f1d2e3c-aaaa-bbbb-cccc-0123456789ab","groups":[)",
      absl::StrJoin(groups, ","),
      R"(],"extra":{"authentication.kubernetes.io/credential-id":["JTI=1b2c3d4e"]}},)",
      R"("sourceIPs":["10.0.0.12"],"userAgent":")", e.user_agent, R"(")");
  if (!e.resource.empty()) {
    absl::StrAppend(&out, R"(,"objectRef":{"resource":")", e.resource,
                    R"(","namespace":")", e.namespace_, R"(","name":")", e.name,
                    R"(")");
    if (!e.api_group.empty()) {
      absl::StrAppend(&out, R"(,"apiGroup":")", e.api_group, R"(")");
    }
    absl::StrAppend(&out, R"(,"apiVersion":")", e.api_version, R"(")");
    if (!e.subresource.empty()) {
      absl::StrAppend(&out, R"(,"subresource":")", e.subresource, R"(")");
    }
    out.append("}");
  }
  if (e.code >= 400) {
    absl::StrAppend(&out,
                    R"(,"responseStatus":{"metadata":{},"status":"Failure",)",
                    R"("message":"forbidden: User \"x\" cannot get resource",)",
                    R"("reason":"Forbidden","code":)", e.code, "}");
  } else {
    absl::StrAppend(&out, R"(,"responseStatus":{"metadata":{},"code":)", e.code,
                    "}");
  }
  absl::StrAppend(
      &out, R"(,"requestReceivedTimestamp":"2026-11-27T08:00:00.123456Z",)",
      R"("stageTimestamp":"2026-11-27T08:00:00.125012Z","annotations":{)",
      R"("authorization.k8s.io/decision":")",
      e.code == 403 ? "forbid" : "allow",
      R"(","authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding")");
  if (e.deprecated) absl::StrAppend(&out, R"(,"k8s.io/deprecated":"true")");
  if (!e.removed_release.empty()) {
    absl::StrAppend(&out, R"(,"k8s.io/removed-release":")", e.removed_release,
                    R"(")");
  }
  out.append("}}");
  return out;
}

// An EventList of already-written events (AuditEventJson, or anything else
// for malformed items).
inline std::string AuditEventListJson(const std::vector<std::string>& items) {
  return absl::StrCat(
      R"({"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[)",
      absl::StrJoin(items, ","), "]}");
}

}  // namespace compatd::testing
