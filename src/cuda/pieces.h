// How a host<->device transfer is cut into pieces for the pinned staging ring (no CUDA here, so
// the CPU unit tests cover it).
#pragma once

#include <stddef.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace gofl {

// The pieces of a transfer of `total` bytes, as (offset, size), in order, each at most `chunk`
// (a staging buffer). They ramp up from `ramp_from` bytes, doubling, and back down at the end (0:
// every piece a whole `chunk`): a pipeline spends one piece's DMA before the host has anything to
// copy and one piece's host copy after the last DMA, so smaller end pieces shorten both. With whole
// 8 MB chunks a 16 MB panel of C (float32 a @ b, n = 4096, four panels) came back at 66% of the
// pinned rate: three steps for two chunks' work.
inline std::vector<std::pair<size_t, size_t>> transfer_pieces(size_t total, size_t chunk, size_t ramp_from) {
  std::vector<std::pair<size_t, size_t>> head, tail;
  if (chunk == 0) return head;
  size_t left = 0, right = total, s = ramp_from ? std::min(ramp_from, chunk) : chunk;
  while (left < right) {
    const size_t a = std::min(s, right - left);
    head.emplace_back(left, a);
    left += a;
    if (left == right) break;
    const size_t z = std::min(s, right - left);
    right -= z;
    tail.emplace_back(right, z);
    s = std::min(2 * s, chunk);
  }
  head.insert(head.end(), tail.rbegin(), tail.rend());
  return head;
}

}  // namespace gofl
