// SHA-256 (engine/sha256.h) against the FIPS 180-2 appendix B / NIST CAVP
// example vectors, and padding boundaries against Python's hashlib (the
// expected digests of 'a' * n below were computed with
// hashlib.sha256(b'a' * n).hexdigest()).

#include "engine/sha256.h"

#include <algorithm>
#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace compatd::engine {
namespace {

std::string Hex(const std::array<uint8_t, 32>& digest) {
  return absl::BytesToHexString(absl::string_view(
      reinterpret_cast<const char*>(digest.data()), digest.size()));
}

struct Vector {
  std::string input;
  std::string hex;
};

class Sha256VectorTest : public ::testing::TestWithParam<Vector> {};

TEST_P(Sha256VectorTest, OneShotMatches) {
  EXPECT_EQ(Hex(Sha256(GetParam().input)), GetParam().hex);
}

TEST_P(Sha256VectorTest, ByteAtATimeMatches) {
  Sha256Hasher hasher;
  for (char c : GetParam().input) hasher.Update(absl::string_view(&c, 1));
  EXPECT_EQ(Hex(hasher.Finish()), GetParam().hex);
}

TEST_P(Sha256VectorTest, UnevenChunksMatch) {
  Sha256Hasher hasher;
  absl::string_view rest = GetParam().input;
  for (size_t chunk = 1; !rest.empty(); chunk = chunk * 3 % 97 + 1) {
    const size_t n = std::min(chunk, rest.size());
    hasher.Update(rest.substr(0, n));
    rest.remove_prefix(n);
  }
  EXPECT_EQ(Hex(hasher.Finish()), GetParam().hex);
}

INSTANTIATE_TEST_SUITE_P(
    Fips180, Sha256VectorTest,
    ::testing::Values(
        Vector{
            "",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        Vector{
            "abc",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        Vector{
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        Vector{
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
            "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d"
            "1"}));

// FIPS 180-2 appendix B.3: one million 'a', in one call and in 1000-byte
// pieces (not byte by byte: that is slow under the sanitizers).
TEST(Sha256Test, MillionA) {
  const std::string input(1000000, 'a');
  const std::string hex =
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  EXPECT_EQ(Hex(Sha256(input)), hex);
  Sha256Hasher hasher;
  for (size_t i = 0; i < input.size(); i += 1000) {
    hasher.Update(absl::string_view(input).substr(i, 1000));
  }
  EXPECT_EQ(Hex(hasher.Finish()), hex);
}

// Around the 55/56-byte point where the length no longer fits the last block,
// and around whole blocks.
INSTANTIATE_TEST_SUITE_P(
    PaddingBoundaries, Sha256VectorTest,
    ::testing::Values(
        Vector{
            std::string(55, 'a'),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        Vector{
            std::string(56, 'a'),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        Vector{
            std::string(57, 'a'),
            "f13b2d724659eb3bf47f2dd6af1accc87b81f09f59f2b75e5c0bed6589dfe8c6"},
        Vector{
            std::string(63, 'a'),
            "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
        Vector{
            std::string(64, 'a'),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
        Vector{
            std::string(65, 'a'),
            "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
        Vector{
            std::string(119, 'a'),
            "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
        Vector{
            std::string(120, 'a'),
            "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
        Vector{std::string(128, 'a'),
               "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73"
               "e"}));

}  // namespace
}  // namespace compatd::engine
