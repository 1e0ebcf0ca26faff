// Which uploads of a host range residency keeps on the GPU (cuda/resident.h asks; no CUDA here, so the CPU
// unit tests cover it). Keeping is not free: the program pays 1.2 us a page (the GPU test machine, H200
// with 16 cores; 3-5 us on the 2-core development VM) more on its next write to a write-protected page, and
// a range kept under the content check costs a digest of every byte (about 1 ms for 16 MB there). So a
// range (host address and extent) is kept in steps:
//   - its first upload in a row is not kept (most operands are never passed again);
//   - its second upload in a row is kept (under the content check: no fault for anyone), and page
//     tracking takes over at the copy's first reuse (resident.h);
//   - a GPU result written into any of its bytes ends the row: NumPy's results land where an earlier
//     input was, so its X_i in `A @ X_i` alternate between input and output at three addresses, and
//     an in-place solve's right-hand side (getrs's B) is written by the call that read it. Such a
//     range is not kept and not digested at each of its uploads;
//   - a kept copy found changed before it ever served, or overwritten by a GPU result before it
//     served, is never kept again: a buffer the program rewrites before every call pays one digest
//     comparison, never a fault per page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace gofl {

class KeepHistory {
 public:
  // The upload in a row that is kept: the first is not, the second is (see above). The policy's
  // reuse accounting (policy/auto_policy.cpp) charges copies up to it.
  static constexpr uint32_t kKeptFromUpload = 2;
  // An upload of the `extent` bytes at `host`: whether to keep it.
  bool upload(uintptr_t host, size_t extent);
  // A kept copy of the range served a call (hit) or was found changed before a call (miss).
  void served(uintptr_t host, size_t extent, bool hit);
  // A GPU result was written into [p, p + n): every range sharing a byte starts a new row of
  // uploads. (A kept copy that never served and is overwritten so counts as found changed: the
  // cache says so with served(..., false).)
  void written(uintptr_t p, size_t n);
  // Ranges remembered (bounded: beyond kMaxRanges the history starts over, which only costs a
  // re-learn).
  size_t size() const { return ranges_.size(); }
  static constexpr size_t kMaxRanges = 4096;

 private:
  struct Range {
    uintptr_t host = 0;
    size_t extent = 0;
    uint32_t in_a_row = 0;  // uploads since the range was last written by a GPU result
    uint32_t hits = 0, misses = 0;
  };
  Range& at(uintptr_t host, size_t extent);
  std::unordered_map<uint64_t, Range> ranges_;
};

}  // namespace gofl
