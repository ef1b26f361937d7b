#pragma once

// The budget of the heavy work a thread runs now: a deadline and the
// client's cancellation. The transport sets it around a heavy call (the pool
// thread's whole call, api/lanes.h); long loops (the manifest scan, its YAML
// reader) look at it now and then and stop early, saying so in their answer.
// Signatures stay as they are: the handlers are the same for the CLI, which
// has no budget.
//
//   base::ScopedWorkBudget budget(absl::Now() + absl::Seconds(10), &cancelled);
//   ...
//   if (const base::WorkBudget* b = base::CurrentWorkBudget();
//       b != nullptr && b->Exhausted()) { stop }

#include <atomic>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace compatd::base {

class WorkBudget final {
 public:
  // `cancelled` may be null; it must outlive the budget.
  WorkBudget(absl::Time deadline, const std::atomic<bool>* cancelled)
      : deadline_(deadline), cancelled_(cancelled) {}

  absl::Time deadline() const { return deadline_; }
  bool Cancelled() const {
    return cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed);
  }
  // The deadline has passed or the client went away. Reads the clock: call
  // it every few hundred steps, not every step.
  bool Exhausted() const { return Cancelled() || absl::Now() >= deadline_; }

 private:
  absl::Time deadline_;
  const std::atomic<bool>* cancelled_;
};

// The budget set on this thread, or null (no budget: run to the end).
const WorkBudget* CurrentWorkBudget();

// Sets a budget on this thread for its lifetime (nesting restores the outer
// one).
class ScopedWorkBudget final {
 public:
  ScopedWorkBudget(absl::Time deadline, const std::atomic<bool>* cancelled);
  ~ScopedWorkBudget();
  ScopedWorkBudget(const ScopedWorkBudget&) = delete;
  ScopedWorkBudget& operator=(const ScopedWorkBudget&) = delete;

 private:
  WorkBudget budget_;
  const WorkBudget* outer_;
};

}  // namespace compatd::base
