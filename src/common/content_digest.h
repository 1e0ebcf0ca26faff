// A 128-bit digest of every byte of a host range: the content check of HostWatch (host_watch.h),
// used where the kernel's write watch is missing or cannot see the writers (device DMA).
// Not cryptographic: it catches accidental change (any single changed 8-byte word always changes
// the internal state; other changes collide with probability about 2^-128), not an adversary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace gofl {

struct ContentDigest {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool operator==(const ContentDigest& o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const ContentDigest& o) const { return !(*this == o); }
};

// Runs body(0) .. body(parts - 1), possibly at the same time on several threads, and returns when
// all are done. An empty one runs them in order on the calling thread.
using ParallelFor = std::function<void(int parts, const std::function<void(int)>& body)>;

// Four xxh64-style 64-bit lanes over 32-byte blocks, the tail and the length mixed in, finished
// to 128 bits. The range is cut into fixed 4 MiB chunks digested independently (through `pf`),
// then the chunks' digests are digested in order: the result does not depend on the threads.
ContentDigest content_digest(const void* p, size_t bytes, const ParallelFor& pf = {});

}  // namespace gofl
