#pragma once
// SHA-256 (FIPS 180-4) for the catalog digest and StorageVersionHash.
//
// Ours rather than OpenSSL's: in OpenSSL 3 the first digest initialises the
// provider machinery, which made about 2 MiB of libcrypto resident in an
// otherwise idle compatd (BENCHMARKS.md, "idle RSS"), and every one-shot
// SHA256() call fetches the algorithm again (allocations on the
// GetStorageVersion path). This one is pure, allocation-free and
// thread-compatible (one hasher per thread).
//
//   Sha256Hasher h;
//   h.Update("apps/");
//   h.Update("v1/Deployment");
//   std::array<uint8_t, 32> digest = h.Finish();  // == Sha256("apps/v1/...")
#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace compatd::engine {

class Sha256Hasher final {
 public:
  Sha256Hasher();
  void Update(absl::string_view data);
  // The digest of everything passed to Update(). Call once.
  std::array<uint8_t, 32> Finish();

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes
};

std::array<uint8_t, 32> Sha256(absl::string_view data);

}  // namespace compatd::engine
