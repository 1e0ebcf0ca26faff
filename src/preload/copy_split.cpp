#include "preload/copy_split.h"

#include <stdint.h>

#include <algorithm>
#include <atomic>

#include "preload/call_depth.h"
#include "preload/worker_pool.h"

namespace gofl {

int64_t g_split_copy_min_bytes = INT64_MAX;

namespace {

// A strided element costs about one cache miss (16 ns on the GPU test machine: H200, 16-core host): 64 of
// them are about a microsecond, well above what claiming a chunk costs.
constexpr int64_t kMinChunkElems = 64;
// Two chunks a thread: threads that wake late find work left, and those on time share it evenly.
constexpr int64_t kChunksPerThread = 2;

// Where the cores are busy with other work, a thread holding a piece can lose its CPU for a whole
// time slice while the caller waits for it: a split that took longer than kNoGain times what the
// caller's own pieces say the unsplit copy would have taken makes the next 2^k splittable copies run
// unsplit, k growing (to kMaxBackoff) while splitting keeps not paying and back to 0 when it pays.
// A caller that ran every piece itself (its threads asleep) loses only the wake-up, which passes.
constexpr double kNoGain = 1.5;
constexpr int kMaxBackoff = 10;
std::atomic<int> g_backoff{0};
std::atomic<int64_t> g_unsplit_left{0};

void judge(const PoolJobTimes& t, int64_t chunks) {
  if (t.caller_chunks <= 0) return;  // nothing to compare with
  const double unsplit_ns = double(t.caller_ns) / double(t.caller_chunks) * double(chunks);
  if (double(t.total_ns) <= kNoGain * unsplit_ns) {
    g_backoff.store(0, std::memory_order_relaxed);
    return;
  }
  const int k = std::min(g_backoff.load(std::memory_order_relaxed) + 1, kMaxBackoff);
  g_backoff.store(k, std::memory_order_relaxed);
  g_unsplit_left.store(int64_t(1) << k, std::memory_order_relaxed);
}

}  // namespace

void copy_split_fork_child() {
  g_backoff.store(0, std::memory_order_relaxed);
  g_unsplit_left.store(0, std::memory_order_relaxed);
}

namespace {

struct CopyJob {
  CopyPieceFn piece;
  void* real;
  int64_t n, incx, incy, chunks, align;
  int depth;  // the caller's call depth, which every piece runs at
  const char* x;
  char* y;
  size_t elem_size;
};

// Chunk k's first index: k / chunks of n (without overflow), down to a multiple of `align` elements
// so that neighbouring pieces share no cache line on a contiguous side.
int64_t chunk_begin(const CopyJob& j, int64_t k) {
  if (k >= j.chunks) return j.n;
  const int64_t at = j.n / j.chunks * k + j.n % j.chunks * k / j.chunks;
  return at / j.align * j.align;
}

void run_chunk(void* ctx, int64_t k) {
  const CopyJob& j = *static_cast<const CopyJob*>(ctx);
  const int64_t b = chunk_begin(j, k), e = chunk_begin(j, k + 1);
  if (e <= b) return;
  const int64_t es = int64_t(j.elem_size);
  const int depth = t_call_depth;
  t_call_depth = j.depth;
  j.piece(j.real, e - b, j.x + copy_piece_offset(j.n, j.incx, b, e) * es, j.incx,
          j.y + copy_piece_offset(j.n, j.incy, b, e) * es, j.incy);
  t_call_depth = depth;
}

bool strided(int64_t inc) { return inc != 1 && inc != -1; }

// The bytes [lo, hi) an n-element operand with increment inc spans; false when that overflows.
bool span(const void* p, int64_t n, int64_t inc, size_t elem_size, uintptr_t* lo, uintptr_t* hi) {
  const uint64_t step = inc < 0 ? 0 - uint64_t(inc) : uint64_t(inc);
  uint64_t elems, bytes;
  if (__builtin_mul_overflow(uint64_t(n - 1), step, &elems) || __builtin_add_overflow(elems, 1, &elems) ||
      __builtin_mul_overflow(elems, uint64_t(elem_size), &bytes))
    return false;
  *lo = reinterpret_cast<uintptr_t>(p);
  return !__builtin_add_overflow(*lo, bytes, hi);
}

}  // namespace

bool copy_split_allowed(int64_t n, const void* x, int64_t incx, const void* y, int64_t incy, size_t elem_size) {
  if (n <= 0 || incy == 0 || !(strided(incx) || strided(incy))) return false;
  uintptr_t xlo, xhi, ylo, yhi;
  if (!span(x, n, incx, elem_size, &xlo, &xhi) || !span(y, n, incy, elem_size, &ylo, &yhi)) return false;
  return xhi <= ylo || yhi <= xlo;
}

bool split_copy(CopyPieceFn piece, void* real, int64_t n, const void* x, int64_t incx, void* y, int64_t incy,
                size_t elem_size) {
  if (!copy_split_allowed(n, x, incx, y, incy, elem_size)) return false;
  if (g_unsplit_left.load(std::memory_order_relaxed) > 0) {
    g_unsplit_left.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  const int threads = worker_pool_size();
  const int64_t chunks = std::min<int64_t>(kChunksPerThread * threads, n / kMinChunkElems);
  if (threads < 2 || chunks < 2) return false;
  CopyJob job{piece, real, n, incx, incy, chunks, std::max<int64_t>(1, 64 / int64_t(elem_size)), t_call_depth,
              static_cast<const char*>(x), static_cast<char*>(y), elem_size};
  PoolJobTimes times;
  if (!worker_pool_run(chunks, run_chunk, &job, &times)) return false;
  judge(times, chunks);
  return true;
}

}  // namespace gofl
