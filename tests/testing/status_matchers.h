#pragma once

// Debian 12's abseil has no status matchers; these are ours (like cel-cpp's
// internal/).

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::testing {

inline const absl::Status& GetStatus(const absl::Status& status) {
  return status;
}
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
// HasSubstr("1.x")))
MATCHER_P2(StatusIs, code, message_matcher, "") {
  const absl::Status& status = ::compatd::testing::GetStatus(arg);
  if (status.code() != code) {
    *result_listener << "status is " << status;
    return false;
  }
  return ::testing::ExplainMatchResult(
      message_matcher, std::string(status.message()), result_listener);
}

}  // namespace compatd::testing

#define EXPECT_OK(expr)                                         \
  do {                                                          \
    const auto& compatd_s_ = (expr);                            \
    EXPECT_TRUE(::compatd::testing::GetStatus(compatd_s_).ok()) \
        << ::compatd::testing::GetStatus(compatd_s_);           \
  } while (false)

#define ASSERT_OK(expr)                                         \
  do {                                                          \
    const auto& compatd_s_ = (expr);                            \
    ASSERT_TRUE(::compatd::testing::GetStatus(compatd_s_).ok()) \
        << ::compatd::testing::GetStatus(compatd_s_);           \
  } while (false)

#define COMPATD_TEST_CONCAT_INNER_(a, b) a##b
#define COMPATD_TEST_CONCAT_(a, b) COMPATD_TEST_CONCAT_INNER_(a, b)

// ASSERT_OK_AND_ASSIGN(Version v, Version::Parse("1.31"));
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                        \
  auto COMPATD_TEST_CONCAT_(compatd_so_, __LINE__) = (rexpr);   \
  ASSERT_TRUE(COMPATD_TEST_CONCAT_(compatd_so_, __LINE__).ok()) \
      << COMPATD_TEST_CONCAT_(compatd_so_, __LINE__).status();  \
  lhs = *std::move(COMPATD_TEST_CONCAT_(compatd_so_, __LINE__))
