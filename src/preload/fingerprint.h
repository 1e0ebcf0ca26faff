// A cheap content fingerprint of a buffer: 8 words sampled across it, hashed with its length.
// Equal fingerprints at the same address suggest unchanged data (the report's avoidable copies).
#pragma once

#include <stdint.h>
#include <string.h>

namespace gofl {

inline uint32_t fingerprint(const void* p, uint64_t bytes) {
  if (!p || bytes == 0) return 0;
  const unsigned char* b = static_cast<const unsigned char*>(p);
  uint64_t h = 0x9e3779b97f4a7c15ull ^ bytes;
  for (int i = 0; i < 8; ++i) {
    uint64_t off = bytes < 8 ? 0 : (bytes - 8) * uint64_t(i) / 7;
    uint64_t w = 0;
    memcpy(&w, b + off, bytes < 8 ? bytes : 8);
    h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  uint32_t r = uint32_t(h ^ (h >> 32));
  return r ? r : 1;  // 0 means "not read"
}

}  // namespace gofl
