// gateway/provider_cache.h: the Gatekeeper answers kept for the snapshot now
// serving.

#include "gateway/provider_cache.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace compatd::gateway {
namespace {

std::vector<std::string> Look(const ProviderCache& cache, uint64_t generation,
                              const std::vector<std::string>& keys) {
  std::vector<std::string> items(keys.size());
  cache.Lookup(generation, keys, &items);
  return items;
}

TEST(ProviderCacheTest, KeepsAnswersOfOneGeneration) {
  ProviderCache cache(1 << 20);
  EXPECT_EQ(Look(cache, 1, {"a"}), std::vector<std::string>{""});
  cache.Insert(1, {{"a", "A1"}, {"b", "B1"}});
  EXPECT_EQ(Look(cache, 1, {"b", "c", "a"}),
            (std::vector<std::string>{"B1", "", "A1"}));
  // Another generation reads nothing of generation 1's.
  EXPECT_EQ(Look(cache, 2, {"a"}), std::vector<std::string>{""});
  EXPECT_EQ(Look(cache, 0, {"a"}), std::vector<std::string>{""});
}

TEST(ProviderCacheTest, ANewerGenerationStartsAfresh) {
  ProviderCache cache(1 << 20);
  cache.Insert(1, {{"a", "A1"}, {"b", "B1"}});
  cache.Insert(2, {{"a", "A2"}});
  EXPECT_EQ(Look(cache, 2, {"a", "b"}), (std::vector<std::string>{"A2", ""}));
  EXPECT_EQ(Look(cache, 1, {"a"}), std::vector<std::string>{""});
  // A request that took its snapshot before the reload neither replaces nor
  // adds.
  cache.Insert(1, {{"a", "A1"}, {"c", "C1"}});
  EXPECT_EQ(Look(cache, 2, {"a", "c"}), (std::vector<std::string>{"A2", ""}));
}

TEST(ProviderCacheTest, TheFirstAnswerOfAKeyStays) {
  ProviderCache cache(1 << 20);
  cache.Insert(1, {{"a", "first"}});
  cache.Insert(1, {{"a", "second"}});
  EXPECT_EQ(Look(cache, 1, {"a"}), std::vector<std::string>{"first"});
}

TEST(ProviderCacheTest, StaysWithinItsBytesAndStartsOverWhenFull) {
  const size_t max_bytes = 4096;
  ProviderCache cache(max_bytes);
  const std::string item(400, 'x');
  for (int i = 0; i < 100; ++i) {
    cache.Insert(1, {{"key" + std::to_string(i), item}});
    EXPECT_LE(cache.bytes(), max_bytes) << i;
    EXPECT_GT(cache.bytes(), 0u);
    // The newest is always kept.
    EXPECT_EQ(Look(cache, 1, {"key" + std::to_string(i)}),
              std::vector<std::string>{item});
  }
  // An item larger than the whole bound is answered, not kept.
  cache.Insert(1, {{"huge", std::string(max_bytes, 'y')}});
  EXPECT_EQ(Look(cache, 1, {"huge"}), std::vector<std::string>{""});
  // So is a key longer than kMaxKeyBytes.
  const std::string long_key(ProviderCache::kMaxKeyBytes + 1, 'k');
  cache.Insert(1, {{long_key, "v"}});
  EXPECT_EQ(Look(cache, 1, {long_key}), std::vector<std::string>{""});
}

TEST(ProviderCacheTest, ZeroBytesKeepsNothing) {
  ProviderCache cache(0);
  cache.Insert(1, {{"a", "A"}});
  EXPECT_EQ(Look(cache, 1, {"a"}), std::vector<std::string>{""});
  EXPECT_EQ(cache.bytes(), 0u);
}

}  // namespace
}  // namespace compatd::gateway
