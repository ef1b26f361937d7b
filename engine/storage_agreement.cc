#include "engine/storage_agreement.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace compatd::engine {
namespace {

constexpr absl::string_view kConditionType = "AllEncodingVersionsEqual";

// "3 API servers", "1 API server".
std::string Servers(size_t n) {
  return absl::StrCat(n, n == 1 ? " API server" : " API servers");
}

}  // namespace

absl::StatusOr<StorageVersionAgreement> ComputeStorageVersionAgreement(
    absl::Span<const ServerStorageVersion> reports,
    absl::Span<const std::string> participants, absl::string_view group,
    absl::string_view resource) {
  StorageVersionAgreement out;

  // localUpdateStorageVersion, one report at a time: a server's entry is
  // replaced where it stands, a new server is appended.
  std::vector<ServerStorageVersion> status;
  for (size_t i = 0; i < reports.size(); ++i) {
    const ServerStorageVersion& report = reports[i];
    if (report.apiserver_id.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "storage_versions[%d]: apiserver_id is empty (every report names "
          "the API server that made it)",
          i));
    }
    if (report.encoding_version.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "storage_versions[%d] (apiserver_id \"%s\"): encoding_version is "
          "empty (expected the version the server writes, e.g. \"v1\")",
          i, report.apiserver_id));
    }
    auto it = std::find_if(status.begin(), status.end(),
                           [&](const ServerStorageVersion& s) {
                             return s.apiserver_id == report.apiserver_id;
                           });
    if (it != status.end()) {
      *it = report;
    } else {
      status.push_back(report);
    }
  }

  // The storage version garbage collector drops the entries of API servers
  // whose identity lease is gone, then recomputes the common version.
  for (ServerStorageVersion& s : status) {
    const bool alive = participants.empty() ||
                       std::find(participants.begin(), participants.end(),
                                 s.apiserver_id) != participants.end();
    if (alive) {
      out.counted.push_back(std::move(s));
    } else {
      out.ignored_apiserver_ids.push_back(s.apiserver_id);
    }
  }

  // SetCommonEncodingVersion: the first entry's version if all are equal;
  // none for an empty list.
  bool agreed = !out.counted.empty();
  for (const ServerStorageVersion& s : out.counted) {
    if (s.encoding_version != out.counted.front().encoding_version) {
      agreed = false;
      break;
    }
  }
  out.condition_type = std::string(kConditionType);
  if (agreed) {
    out.common_encoding_version = out.counted.front().encoding_version;
    out.condition_status = "True";
    out.condition_reason = "CommonEncodingVersionSet";
    out.condition_message = "Common encoding version set";
  } else {
    out.condition_status = "False";
    out.condition_reason = "CommonEncodingVersionUnset";
    out.condition_message = "Common encoding version unset";
  }

  // The manager names the object "<group>.<resource>", "core" for "".
  if (!resource.empty()) {
    out.object_name =
        absl::StrCat(group.empty() ? "core" : group, ".", resource);
  }

  std::string ignored;
  if (!out.ignored_apiserver_ids.empty()) {
    ignored = absl::StrCat(" (ignored, no longer participating: ",
                           absl::StrJoin(out.ignored_apiserver_ids, ", "), ")");
  }
  if (out.counted.empty()) {
    out.reason = absl::StrCat(
        "no participating API server reported a storage version, so there "
        "is no common encoding version",
        ignored);
  } else if (agreed) {
    out.reason =
        absl::StrCat("all ", Servers(out.counted.size()), " encode in ",
                     out.common_encoding_version, ignored);
  } else {
    // Group the servers by encoding version, in order of first appearance.
    std::vector<std::pair<std::string, std::vector<std::string>>> by_version;
    for (const ServerStorageVersion& s : out.counted) {
      auto it = std::find_if(
          by_version.begin(), by_version.end(),
          [&](const auto& e) { return e.first == s.encoding_version; });
      if (it == by_version.end()) {
        by_version.push_back({s.encoding_version, {}});
        it = std::prev(by_version.end());
      }
      it->second.push_back(s.apiserver_id);
    }
    std::vector<std::string> parts;
    for (const auto& [version, ids] : by_version) {
      parts.push_back(absl::StrCat(absl::StrJoin(ids, ", "), " -> ", version));
    }
    out.reason = absl::StrCat("the ", Servers(out.counted.size()),
                              " disagree on the encoding version (",
                              absl::StrJoin(parts, "; "), ")", ignored);
  }
  return out;
}

}  // namespace compatd::engine
