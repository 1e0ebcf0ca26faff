#include "common/content_digest.h"

#include <cstring>
#include <vector>

namespace gofl {

namespace {

// xxHash's 64-bit primes: odd, so every multiplication below is a bijection.
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ull;
constexpr size_t kChunk = size_t(4) << 20;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
// One lane step: for a fixed accumulator a bijection of the input word, for a fixed word a
// bijection of the accumulator, so one changed word always leaves a different lane state.
inline uint64_t step(uint64_t acc, uint64_t word) { return rotl(acc + word * kP2, 31) * kP1; }
inline uint64_t merge(uint64_t h, uint64_t lane) { return (h ^ step(0, lane)) * kP1 + kP4; }
inline uint64_t avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

ContentDigest digest_bytes(const unsigned char* p, size_t n, uint64_t seed) {
  uint64_t v[4] = {seed + kP1 + kP2, seed + kP2, seed, seed - kP1};
  const unsigned char* const end = p + n;
  for (; end - p >= 32; p += 32) {
    v[0] = step(v[0], load64(p));
    v[1] = step(v[1], load64(p + 8));
    v[2] = step(v[2], load64(p + 16));
    v[3] = step(v[3], load64(p + 24));
  }
  // The tail: up to three whole words into lanes 0-2, the last bytes packed into lane 3 (the
  // length below tells "ends in zero bytes" from "shorter").
  int lane = 0;
  for (; end - p >= 8; p += 8, ++lane) v[lane] = step(v[lane], load64(p));
  if (p < end) {
    uint64_t last = 0;
    std::memcpy(&last, p, static_cast<size_t>(end - p));
    v[3] = step(v[3], last);
  }
  uint64_t lo = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
  uint64_t hi = rotl(v[3], 3) + rotl(v[2], 17) + rotl(v[1], 29) + rotl(v[0], 41) + kP5;
  for (int i = 0; i < 4; ++i) {
    lo = merge(lo, v[i]);
    hi = merge(hi, v[3 - i] ^ kP3);
  }
  return {avalanche(lo + n), avalanche(hi ^ (n * kP5))};
}

}  // namespace

ContentDigest content_digest(const void* p, size_t bytes, const ParallelFor& pf) {
  const auto* base = static_cast<const unsigned char*>(p);
  const size_t chunks = bytes == 0 ? 1 : (bytes + kChunk - 1) / kChunk;
  std::vector<ContentDigest> parts(chunks);
  auto body = [&](int i) {
    const size_t at = static_cast<size_t>(i) * kChunk;
    const size_t n = bytes - at < kChunk ? bytes - at : kChunk;
    parts[static_cast<size_t>(i)] = digest_bytes(base + at, bytes == 0 ? 0 : n, at);
  };
  if (pf && chunks > 1) pf(static_cast<int>(chunks), body);
  else for (size_t i = 0; i < chunks; ++i) body(static_cast<int>(i));
  return digest_bytes(reinterpret_cast<const unsigned char*>(parts.data()), parts.size() * sizeof(ContentDigest),
                      bytes ^ kP4);
}

}  // namespace gofl
