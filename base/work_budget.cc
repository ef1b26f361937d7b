#include "base/work_budget.h"

namespace compatd::base {
namespace {

thread_local const WorkBudget* current_budget = nullptr;

}  // namespace

const WorkBudget* CurrentWorkBudget() { return current_budget; }

ScopedWorkBudget::ScopedWorkBudget(absl::Time deadline,
                                   const std::atomic<bool>* cancelled)
    : budget_(deadline, cancelled), outer_(current_budget) {
  current_budget = &budget_;
}

ScopedWorkBudget::~ScopedWorkBudget() { current_budget = outer_; }

}  // namespace compatd::base
