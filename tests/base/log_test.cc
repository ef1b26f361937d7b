#include "base/log.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace compatd::base {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

TEST(LogRateLimiterTest, WritesTheBurstThenCountsTheRest) {
  LogRateLimiter limiter(3, absl::Minutes(1), 8);
  int written = 0;
  for (int i = 0; i < 1000; ++i) {
    LogRateLimiter::Decision d =
        limiter.Admit("handshake", absl::StrCat("failed #", i), kStart);
    written += d.write;
    EXPECT_THAT(d.summaries, IsEmpty());
  }
  EXPECT_EQ(written, 3);

  // The window is over: the next line is preceded by the count.
  LogRateLimiter::Decision next =
      limiter.Admit("handshake", "failed again", kStart + absl::Minutes(1));
  EXPECT_TRUE(next.write);
  ASSERT_THAT(next.summaries, SizeIs(1));
  EXPECT_THAT(next.summaries[0],
              HasSubstr("suppressed 997 more lines of kind handshake"));
  EXPECT_THAT(next.summaries[0], HasSubstr("the last one: failed #999"));
}

TEST(LogRateLimiterTest, KindsHaveTheirOwnBudgets) {
  LogRateLimiter limiter(1, absl::Minutes(1), 8);
  EXPECT_TRUE(limiter.Admit("a", "a1", kStart).write);
  EXPECT_FALSE(limiter.Admit("a", "a2", kStart).write);
  EXPECT_TRUE(limiter.Admit("b", "b1", kStart).write);
  EXPECT_FALSE(limiter.Admit("b", "b2", kStart).write);
}

TEST(LogRateLimiterTest, FlushWritesTheCountOfWindowsThatAreOver) {
  LogRateLimiter limiter(1, absl::Seconds(10), 8);
  limiter.Admit("a", "a1", kStart);
  limiter.Admit("a", "a2", kStart + absl::Seconds(1));
  limiter.Admit("b", "b1", kStart + absl::Seconds(5));
  limiter.Admit("b", "b2", kStart + absl::Seconds(5));
  limiter.Admit("b", "b3", kStart + absl::Seconds(5));

  EXPECT_THAT(limiter.Flush(kStart + absl::Seconds(9)), IsEmpty());
  std::vector<std::string> a = limiter.Flush(kStart + absl::Seconds(10));
  ASSERT_THAT(a, SizeIs(1));
  EXPECT_THAT(a[0], HasSubstr("suppressed 1 more line of kind a in the last "
                              "10s (at most 1 per 10s); the last one: a2"));
  std::vector<std::string> b = limiter.Flush(kStart + absl::Seconds(15));
  ASSERT_THAT(b, SizeIs(1));
  EXPECT_THAT(b[0], HasSubstr("suppressed 2 more lines of kind b"));
  // Said once.
  EXPECT_THAT(limiter.Flush(kStart + absl::Minutes(5)), IsEmpty());
  EXPECT_EQ(limiter.kinds(), 0u);
}

TEST(LogRateLimiterTest, FlushAllEndsWindowsThatAreNotOver) {
  LogRateLimiter limiter(1, absl::Minutes(1), 8);
  limiter.Admit("a", "a1", kStart);
  limiter.Admit("a", "a2", kStart);
  EXPECT_THAT(limiter.Flush(kStart + absl::Seconds(1)), IsEmpty());
  EXPECT_THAT(limiter.Flush(kStart + absl::Seconds(1), /*all=*/true),
              ElementsAre(HasSubstr("suppressed 1 more line of kind a in the "
                                    "last 1s")));
  EXPECT_EQ(limiter.kinds(), 0u);
}

TEST(LogRateLimiterTest, WindowWithoutSuppressedLinesHasNoSummary) {
  LogRateLimiter limiter(5, absl::Seconds(10), 8);
  limiter.Admit("a", "a1", kStart);
  EXPECT_THAT(limiter.Flush(kStart + absl::Minutes(1)), IsEmpty());
}

TEST(LogRateLimiterTest, KindsBeyondTheLimitShareOneBudget) {
  LogRateLimiter limiter(2, absl::Minutes(1), 4);
  int written = 0;
  for (int i = 0; i < 100; ++i) {
    written += limiter.Admit(absl::StrCat("kind", i), "x", kStart).write;
  }
  // 4 kinds of their own (1 line each), then "other" (2 lines).
  EXPECT_EQ(written, 4 + 2);
  EXPECT_EQ(limiter.kinds(), 5u);
  std::vector<std::string> summaries = limiter.Flush(kStart + absl::Minutes(1));
  EXPECT_THAT(summaries,
              ElementsAre(HasSubstr("suppressed 94 more lines of kind other")));
}

TEST(LogRateLimiterTest, LongQuotesAreCut) {
  LogRateLimiter limiter(0, absl::Seconds(1), 4);
  limiter.Admit("a", std::string(10000, 'x'), kStart);
  std::vector<std::string> summaries = limiter.Flush(kStart + absl::Seconds(1));
  ASSERT_THAT(summaries, SizeIs(1));
  EXPECT_LT(summaries[0].size(), 500u);
}

// Every line is one line: text from outside with a newline, ESC or invalid
// UTF-8 cannot forge a second line or reach the terminal raw (issue 36).
TEST(LogTest, AMessageIsWrittenOnOnePrintableLine) {
  ::testing::internal::CaptureStderr();
  LogWarning(
      "Prometheus said: x\n2026-01-01T00:00:00.000Z E forged\x1b[2J\xff");
  const std::string written = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(written.empty());
  EXPECT_EQ(written.find('\n'), written.size() - 1) << written;
  EXPECT_THAT(written, ::testing::HasSubstr(
                           "W Prometheus said: x\\n2026-01-01T00:00:00.000Z E "
                           "forged\\x1b[2J\\xff\n"));
}

}  // namespace
}  // namespace compatd::base
