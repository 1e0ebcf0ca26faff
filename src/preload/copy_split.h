// A large strided BLAS ?copy split into pieces that run on the library's threads (worker_pool.h).
// NumPy converts every LAPACK operand to Fortran order and back with one strided copy per row, one
// cache miss per element on one thread; each piece is the CPU library's own copy of a contiguous
// range of the indices, so the bytes written are exactly those of the unsplit call.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace gofl {

// The smallest copy split (elements × element size, in bytes); INT64_MAX: none (the setting is off,
// or the settings are not read yet). Read by every ?copy wrapper, also on its fast path.
extern int64_t g_split_copy_min_bytes;

// The CPU library's copy of elements [0, n) with the call's own argument conventions: a generated
// adapter per exported ?copy name (Fortran or CBLAS, 32- or 64-bit integers) around its real function.
using CopyPieceFn = void (*)(void* real, int64_t n, const void* x, int64_t incx, void* y, int64_t incy);

// What a ?copy pays when it is not split: one multiply and compare (a negative n passes, unsigned,
// and split_copy turns it down).
inline bool split_copy_candidate(int64_t n, size_t elem_size) {
  return uint64_t(n) * elem_size >= uint64_t(g_split_copy_min_bytes);
}

// Copies in pieces on the pool when copy_split_allowed and the pool takes the job; false when it
// copied nothing (the caller then calls the real function itself).
bool split_copy(CopyPieceFn piece, void* real, int64_t n, const void* x, int64_t incx, void* y, int64_t incy,
                size_t elem_size);

// Whether pieces give the unsplit call's result and are worth running: n > 0; source or destination
// strided (|inc| != 1; contiguous copies already run at memory speed on one thread); a destination
// increment other than 0 (where every element lands on one, the last written wins: pieces would
// race); and source and destination spans apart (overlapping copies depend on their order).
bool copy_split_allowed(int64_t n, const void* x, int64_t incx, const void* y, int64_t incy, size_t elem_size);
// fork(): the child judges its own pool afresh (the parent's back-off measured the parent's pool).
void copy_split_fork_child();

// Where the sub-call for elements [begin, end) of an n-element copy with increment inc starts, in
// elements from the argument's pointer. BLAS walks a negative increment from the far end (element i
// at (n - 1 - i) * |inc|), so those pieces count from the end; inc 0 reads one element throughout.
inline int64_t copy_piece_offset(int64_t n, int64_t inc, int64_t begin, int64_t end) {
  return inc >= 0 ? begin * inc : (n - end) * -inc;
}

}  // namespace gofl
