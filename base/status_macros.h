#pragma once

// Debian 12's abseil (20220623) has no RETURN_IF_ERROR / ASSIGN_OR_RETURN;
// these are ours.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define COMPATD_STATUS_CONCAT_INNER_(a, b) a##b
#define COMPATD_STATUS_CONCAT_(a, b) COMPATD_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function with the status of `expr` if it is not
// OK.
#define COMPATD_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    const ::absl::Status compatd_status_ = (expr);     \
    if (!compatd_status_.ok()) return compatd_status_; \
  } while (false)

// `COMPATD_ASSIGN_OR_RETURN(T x, StatusOrExpr);` declares/assigns x, or returns
// the error.
#define COMPATD_ASSIGN_OR_RETURN(lhs, rexpr) \
  COMPATD_ASSIGN_OR_RETURN_IMPL_(            \
      COMPATD_STATUS_CONCAT_(compatd_statusor_, __LINE__), lhs, rexpr)

#define COMPATD_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();   \
  lhs = *std::move(statusor)
