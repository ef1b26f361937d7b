#include "api/scan_answer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/work_budget.h"

namespace compatd::api {
namespace {

// `text` cut to at most `bytes` (a UTF-8 boundary) and marked "...".
std::string Cut(std::string text, size_t bytes) {
  if (text.size() <= bytes) return text;
  size_t cut = bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  text.resize(cut);
  text += "...";
  return text;
}

}  // namespace

void ScanAnswer::MarkPartial(std::string reason) {
  if (response_->partial()) return;
  response_->set_partial(true);
  response_->set_partial_reason(std::move(reason));
}

bool ScanAnswer::Exhausted(absl::string_view done) {
  if (stopped_) return true;
  const base::WorkBudget* budget = base::CurrentWorkBudget();
  if (budget == nullptr || !budget->Exhausted()) return false;
  stopped_ = true;
  MarkPartial(absl::StrCat("the scan stopped after ", done, ": ",
                           budget->Cancelled()
                               ? "the client went away"
                               : "its work budget (--max-heavy-work-time) is "
                                 "spent; scan fewer objects per call"));
  return true;
}

std::string ScanAnswer::Bounded(std::string text) const {
  return Cut(std::move(text), limits_.max_message_bytes);
}

bool ScanAnswer::Fits(size_t bytes) {
  if (answer_bytes_ + bytes <= limits_.max_answer_bytes) {
    answer_bytes_ += bytes;
    return true;
  }
  answer_bytes_ = limits_.max_answer_bytes;  // nothing more fits
  MarkPartial(absl::StrCat(
      "the answer reached its limit of ", limits_.max_answer_bytes,
      " bytes (--max-send-message-bytes); the findings and problems past it "
      "are counted, not listed: scan fewer objects per call"));
  return false;
}

const ScanAnswer::Source& ScanAnswer::SourceOf(const std::string& source) {
  auto [it, added] = sources_.try_emplace(source);
  if (added) {
    it->second.index = static_cast<uint32_t>(response_->sources_size());
    it->second.item_name = Cut(source, kItemSourceBytes);
    response_->add_sources(source);
    // Named once; counted here so that later items see the room it takes.
    answer_bytes_ += source.size() + kItemOverheadBytes;
  }
  return it->second;
}

v1::ScanFinding* ScanAnswer::NewFinding(const std::string& source) {
  v1::ScanFinding* finding = response_->add_findings();
  const Source& named = SourceOf(source);
  finding->set_source_index(named.index);
  finding->set_source(named.item_name);
  return finding;
}

void ScanAnswer::SettleFindings(int first) {
  for (int i = first; i < response_->findings_size(); ++i) {
    v1::ScanFinding* finding = response_->mutable_findings(i);
    if (finding->message().size() > limits_.max_message_bytes) {
      finding->set_message(Bounded(finding->message()));
    }
    if (!Fits(finding->ByteSizeLong() + kItemOverheadBytes)) {
      const int omitted = response_->findings_size() - i;
      response_->mutable_findings()->DeleteSubrange(i, omitted);
      response_->set_omitted_findings(response_->omitted_findings() +
                                      static_cast<uint32_t>(omitted));
      return;
    }
  }
}

void ScanAnswer::AddProblem(const std::string& source, int line,
                            const std::string& message) {
  AddItem(source, line, message, response_->mutable_problems(), [this] {
    response_->set_omitted_problems(response_->omitted_problems() + 1);
  });
}

void ScanAnswer::AddWarning(const std::string& source, int line,
                            const std::string& message) {
  AddItem(source, line, message, response_->mutable_warnings(), [this] {
    response_->set_omitted_warnings(response_->omitted_warnings() + 1);
  });
}

void ScanAnswer::AddItem(
    const std::string& source, int line, const std::string& message,
    google::protobuf::RepeatedPtrField<v1::ScanProblem>* items,
    absl::FunctionRef<void()> omit) {
  std::string bounded = Bounded(message);
  if (!Fits(std::min(source.size(), kItemSourceBytes + 3) + bounded.size() +
            kItemOverheadBytes)) {
    omit();
    return;
  }
  v1::ScanProblem* item = items->Add();
  const Source& named = SourceOf(source);
  item->set_source_index(named.index);
  item->set_source(named.item_name);
  item->set_line(line);
  item->set_message(std::move(bounded));
}

}  // namespace compatd::api
