#pragma once

// The answer of one scan as it is built (api/scan.h): findings, problems and
// warnings within the scan's ScanLimits, each source named once.
//
// Every item goes into the answer while the answer is under
// ScanLimits::max_answer_bytes; past it the item is counted (omitted_findings,
// omitted_problems, omitted_warnings) and the answer is marked partial. A
// message longer than max_message_bytes is cut at a UTF-8 boundary and ends
// in "...". Sources are named once, in the answer's `sources`; each item
// carries its `source_index` there and, for readers of one field, `source`:
// the name itself, cut to kItemSourceBytes (a real path never is).
//
//   ScanAnswer answer(limits, response);
//   const int first = answer.findings();
//   v1::ScanFinding* f = answer.NewFinding("deploy.yaml");
//   ... fill f ...
//   answer.SettleFindings(first);   // keeps what fits, counts the rest

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/container/node_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "api/scan.h"
#include "compatd/v1/compatd.pb.h"

namespace compatd::api {

// The most of a source's name each item repeats (`source`); the whole name is
// in the answer's `sources` once.
inline constexpr size_t kItemSourceBytes = 256;

class ScanAnswer final {
 public:
  // `limits` and `response` must outlive the answer.
  ScanAnswer(const ScanLimits& limits, v1::ScanObjectsResponse* response)
      : limits_(limits), response_(response) {}
  ScanAnswer(const ScanAnswer&) = delete;
  ScanAnswer& operator=(const ScanAnswer&) = delete;

  v1::ScanObjectsResponse* response() const { return response_; }
  const ScanLimits& limits() const { return limits_; }
  int findings() const { return response_->findings_size(); }

  // The answer is not the whole scan: the first reason given wins.
  void MarkPartial(std::string reason);

  // Whether this thread's work budget (base/work_budget.h) is spent; from
  // the first time it is, always true, and the answer says the scan stopped
  // after `done` ("1200 object(s)"). Reads the clock: call it every few
  // hundred steps.
  bool Exhausted(absl::string_view done);

  // A new finding of `source`, its source set; fill the rest, then settle.
  v1::ScanFinding* NewFinding(const std::string& source);
  // The findings from index `first` on, within the bounds: their messages
  // cut, and those past the answer's size removed and counted (their status
  // stays in the tallies).
  void SettleFindings(int first);

  void AddProblem(const std::string& source, int line,
                  const std::string& message);
  void AddWarning(const std::string& source, int line,
                  const std::string& message);

  // `text` cut to max_message_bytes at a UTF-8 boundary, marked "...".
  std::string Bounded(std::string text) const;

 private:
  // A finding's or problem's framing in the answer (tags, lengths, line,
  // index).
  static constexpr size_t kItemOverheadBytes = 24;

  // Whether an item of `bytes` still fits in the answer; marks the answer
  // partial otherwise.
  bool Fits(size_t bytes);
  // A problem or warning of `source` into `items` when it fits, else
  // `omit()` counts it.
  void AddItem(const std::string& source, int line, const std::string& message,
               google::protobuf::RepeatedPtrField<v1::ScanProblem>* items,
               absl::FunctionRef<void()> omit);
  // A source as items name it: its index in the answer's sources and its
  // name cut to kItemSourceBytes.
  struct Source {
    uint32_t index = 0;
    std::string item_name;
  };
  // `source`'s entry, added to the answer's sources (and counted in its
  // size) the first time.
  const Source& SourceOf(const std::string& source);

  const ScanLimits& limits_;
  v1::ScanObjectsResponse* const response_;
  size_t answer_bytes_ = 0;
  bool stopped_ = false;
  absl::node_hash_map<std::string, Source> sources_;  // stable references
};

}  // namespace compatd::api
