// KeepHistory (src/common/keep_history.h): which uploads residency keeps. The patterns are the ones
// real programs make: an operand passed again and again, NumPy's A @ X_i (its X_i and results
// rotating over three addresses), an in-place solve, a buffer rewritten before every call.
#include <gtest/gtest.h>

#include "common/keep_history.h"

namespace gofl {
namespace {

constexpr size_t kMB = size_t(1) << 20;

TEST(KeepHistory, TheSecondUploadInARowIsKept) {
  KeepHistory h;
  EXPECT_FALSE(h.upload(0x10000, 16 * kMB)) << "most operands are never passed again";
  EXPECT_TRUE(h.upload(0x10000, 16 * kMB));
  EXPECT_TRUE(h.upload(0x10000, 16 * kMB));
  // Another extent at the same address is another range (a different matrix there).
  EXPECT_FALSE(h.upload(0x10000, 8 * kMB));
}

TEST(KeepHistory, AGpuResultWrittenIntoTheRangeEndsTheRow) {
  KeepHistory h;
  EXPECT_FALSE(h.upload(0x10000, 16 * kMB));
  h.written(0x10000 + 5 * kMB, 4096);  // one page of it
  EXPECT_FALSE(h.upload(0x10000, 16 * kMB)) << "the row starts again after a GPU result wrote into it";
  EXPECT_TRUE(h.upload(0x10000, 16 * kMB));
  // Results written next to it, not into it, leave the row alone.
  h.written(0x10000 + 16 * kMB, kMB);
  h.written(0x10000 - kMB, kMB);
  EXPECT_TRUE(h.upload(0x10000, 16 * kMB));
}

TEST(KeepHistory, NumPysAtXiIsNeverKeptNorDigested) {
  // A @ X_i with A kept: X_i (the call's input) and the result (its output) take turns at three heap
  // addresses, as traced on the GPU test machine (H200, 16-core host): (X, Y) = (R2, R3), (R1, R2), (R3,
  // R1), (R2, R3), ...
  KeepHistory h;
  const uintptr_t r[3] = {0x148448b0, 0x15844cb0, 0x16844cc0};
  const size_t n = 16 * kMB;
  EXPECT_FALSE(h.upload(0x7f0000000000, 512 * kMB));  // A's first upload
  for (int i = 0; i < 30; ++i) {
    const uintptr_t x = r[(1 + 2 * i) % 3], y = r[(2 + 2 * i) % 3];
    EXPECT_TRUE(h.upload(0x7f0000000000, 512 * kMB) || i == 0) << "A is kept";
    EXPECT_FALSE(h.upload(x, n)) << "X_i kept at iteration " << i;
    h.written(y, n);
  }
}

TEST(KeepHistory, AnInPlaceSolvesRightHandSideIsNeverKept) {
  // getrs reads B and writes the solution into it: each call's upload is the first in its row.
  KeepHistory h;
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(h.upload(0x20000, 16 * kMB)) << "call " << i;
    h.written(0x20000, 16 * kMB);
  }
}

TEST(KeepHistory, ARangeChangedBeforeItEverServedIsNotKeptAgain) {
  KeepHistory h;
  h.upload(0x30000, 8 * kMB);
  EXPECT_TRUE(h.upload(0x30000, 8 * kMB));
  h.served(0x30000, 8 * kMB, false);  // rewritten by the program before its next call
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(h.upload(0x30000, 8 * kMB)) << "upload " << i;
}

TEST(KeepHistory, ARangeThatServedIsKeptAgainAfterAChange) {
  // A Jacobian reused for a few solves, then changed: the copy after the change is kept at once.
  KeepHistory h;
  h.upload(0x40000, 8 * kMB);
  EXPECT_TRUE(h.upload(0x40000, 8 * kMB));
  h.served(0x40000, 8 * kMB, true);
  h.served(0x40000, 8 * kMB, false);
  EXPECT_TRUE(h.upload(0x40000, 8 * kMB));
}

TEST(KeepHistory, IsBounded) {
  KeepHistory h;
  for (size_t i = 0; i < 3 * KeepHistory::kMaxRanges; ++i) h.upload(0x100000 + i * 64, 4 * kMB);
  EXPECT_LE(h.size(), KeepHistory::kMaxRanges);
  h.written(0, ~size_t(0) >> 1);  // a huge write: no overflow, every range starts over
  EXPECT_FALSE(h.upload(0x100000 + (3 * KeepHistory::kMaxRanges - 1) * 64, 4 * kMB));
}

}  // namespace
}  // namespace gofl
