// Split copies (src/preload/copy_split.h) and the pool they run on (src/preload/worker_pool.h), with a
// stand-in for the CPU library's ?copy that follows the BLAS reference implementation.
#include <gtest/gtest.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <thread>
#include <vector>

#include "preload/copy_split.h"
#include "preload/worker_pool.h"

namespace {

// Reference BLAS dcopy: a negative increment starts from the far end.
void ref_copy(int64_t n, const double* x, int64_t incx, double* y, int64_t incy) {
  if (n <= 0) return;
  int64_t ix = incx < 0 ? (1 - n) * incx : 0, iy = incy < 0 ? (1 - n) * incy : 0;
  for (int64_t i = 0; i < n; ++i, ix += incx, iy += incy) y[iy] = x[ix];
}

std::atomic<int> g_pieces{0};
void piece(void*, int64_t n, const void* x, int64_t incx, void* y, int64_t incy) {
  g_pieces.fetch_add(1);
  ref_copy(n, static_cast<const double*>(x), incx, static_cast<double*>(y), incy);
}

int64_t span(int64_t n, int64_t inc) { return 1 + (n - 1) * (inc < 0 ? -inc : inc); }

// split_copy, called again while it declines because earlier splits did not pay (on a busy machine
// the next 2^k copies run unsplit; one of every 2^k + 1 calls splits).
bool split_once(int64_t n, const double* x, int64_t incx, double* y, int64_t incy) {
  for (int i = 0; i <= (1 << 10) + 1; ++i)
    if (gofl::split_copy(piece, nullptr, n, x, incx, y, incy, sizeof(double))) return true;
  return false;
}

std::vector<double> source(int64_t elems) {
  std::vector<double> v(static_cast<size_t>(elems));
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i) * 0.25 - 7;
  return v;
}

}  // namespace

TEST(CopySplit, PiecesAtTheirOffsetsMakeTheWholeCopy) {
  // Every split point, every increment sign: the pieces' sub-calls write what the whole call writes.
  for (int64_t n = 1; n <= 23; ++n)
    for (int64_t incx : {-3, -1, 0, 1, 2})
      for (int64_t incy : {-2, -1, 1, 3}) {
        const std::vector<double> x = source(span(n, incx));
        std::vector<double> whole(size_t(span(n, incy)), -1.0), parts = whole;
        ref_copy(n, x.data(), incx, whole.data(), incy);
        for (int64_t cut = 0; cut <= n; ++cut) {
          std::fill(parts.begin(), parts.end(), -1.0);
          for (auto [b, e] : {std::pair{int64_t(0), cut}, std::pair{cut, n}})
            if (e > b)
              ref_copy(e - b, x.data() + gofl::copy_piece_offset(n, incx, b, e), incx,
                       parts.data() + gofl::copy_piece_offset(n, incy, b, e), incy);
          ASSERT_EQ(parts, whole) << "n " << n << " incx " << incx << " incy " << incy << " cut " << cut;
        }
      }
}

TEST(CopySplit, OnlyStridedNonOverlappingCopiesWithADestinationStride) {
  std::vector<double> a(4000), b(4000);
  EXPECT_TRUE(gofl::copy_split_allowed(1000, a.data(), 3, b.data(), 1, 8));
  EXPECT_TRUE(gofl::copy_split_allowed(1000, a.data(), 1, b.data(), -2, 8));
  EXPECT_TRUE(gofl::copy_split_allowed(1000, a.data(), 0, b.data(), 1, 8));    // one element to all
  EXPECT_FALSE(gofl::copy_split_allowed(1000, a.data(), 1, b.data(), 1, 8));   // contiguous
  EXPECT_FALSE(gofl::copy_split_allowed(1000, a.data(), -1, b.data(), 1, 8));  // contiguous, reversed
  EXPECT_FALSE(gofl::copy_split_allowed(1000, a.data(), 3, b.data(), 0, 8));   // the last write wins
  EXPECT_FALSE(gofl::copy_split_allowed(0, a.data(), 3, b.data(), 1, 8));
  EXPECT_FALSE(gofl::copy_split_allowed(-5, a.data(), 3, b.data(), 1, 8));
  // Overlapping spans: the order of the writes matters.
  EXPECT_FALSE(gofl::copy_split_allowed(1000, a.data(), 3, a.data() + 2000, 1, 8));
  EXPECT_FALSE(gofl::copy_split_allowed(1000, a.data() + 2, 2, a.data(), 2, 8));
  EXPECT_TRUE(gofl::copy_split_allowed(1000, a.data(), 2, a.data() + 1999, 1, 8));  // adjacent, apart
  EXPECT_FALSE(gofl::copy_split_allowed(INT64_MAX / 2, a.data(), 3, b.data(), 1, 8));  // spans overflow
}

TEST(CopySplit, SplitCopiesWriteTheBytesOfTheWholeCopy) {
  if (gofl::worker_pool_size() < 2) GTEST_SKIP() << "one CPU: the pool never runs a job";
  for (int64_t n : {128, 1000, 4099})
    for (int64_t incx : {-7, -1, 0, 5})
      for (int64_t incy : {-3, 1, 4}) {
        if (incx * incx == 1 && incy == 1) continue;
        const std::vector<double> x = source(span(n, incx));
        std::vector<double> want(size_t(span(n, incy)), -1.0), got = want;
        ref_copy(n, x.data(), incx, want.data(), incy);
        g_pieces = 0;
        ASSERT_TRUE(split_once(n, x.data(), incx, got.data(), incy));
        EXPECT_GE(g_pieces.load(), 2);
        ASSERT_EQ(memcmp(got.data(), want.data(), want.size() * sizeof(double)), 0)
            << "n " << n << " incx " << incx << " incy " << incy;
      }
  // Too few elements for two pieces: left to the caller.
  std::vector<double> x(1000), y(100);
  EXPECT_FALSE(split_once(100, x.data(), 7, y.data(), 1));
}

TEST(WorkerPool, EveryChunkRunsOnceFromSeveralCallersAtOnce) {
  if (gofl::worker_pool_size() < 2) GTEST_SKIP() << "one CPU: the pool never runs a job";
  struct Counts {
    std::vector<std::atomic<int>> runs = std::vector<std::atomic<int>>(100);
  };
  std::atomic<int> pooled{0}, declined{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int job = 0; job < 300; ++job) {
        Counts c;
        const int64_t chunks = 1 + job % 100;
        if (gofl::worker_pool_run(chunks, [](void* ctx, int64_t k) { static_cast<Counts*>(ctx)->runs[size_t(k)]++; }, &c)) {
          pooled++;
          for (int64_t k = 0; k < 100; ++k) ASSERT_EQ(c.runs[size_t(k)].load(), k < chunks ? 1 : 0) << k;
        } else {
          declined++;  // another caller's job was running: nothing ran
          for (int64_t k = 0; k < 100; ++k) ASSERT_EQ(c.runs[size_t(k)].load(), 0);
        }
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_GT(pooled.load(), 0);
  EXPECT_EQ(pooled + declined, 1200);
}

TEST(WorkerPool, ABusyPoolDeclinesAtOnceInsteadOfWaiting) {
  if (gofl::worker_pool_size() < 2) GTEST_SKIP() << "one CPU: the pool never runs a job";
  static std::atomic<bool> release{false}, inside{false};
  std::thread holder([] {
    EXPECT_TRUE(gofl::worker_pool_run(2, [](void*, int64_t) {
      inside = true;
      while (!release) std::this_thread::yield();
    }, nullptr));
  });
  while (!inside) std::this_thread::yield();
  int runs = 0;
  EXPECT_FALSE(gofl::worker_pool_run(3, [](void* ctx, int64_t) { ++*static_cast<int*>(ctx); }, &runs));
  EXPECT_EQ(runs, 0);
  release = true;
  holder.join();
  EXPECT_TRUE(gofl::worker_pool_run(3, [](void* ctx, int64_t) { __atomic_fetch_add(static_cast<int*>(ctx), 1, __ATOMIC_RELAXED); }, &runs));
  EXPECT_EQ(runs, 3);
  EXPECT_FALSE(gofl::worker_pool_run(0, [](void*, int64_t) {}, nullptr));
  EXPECT_FALSE(gofl::worker_pool_run(0x10000, [](void*, int64_t) {}, nullptr));
}

TEST(WorkerPool, ThreadsFollowTheAffinityAndTheUsersThreadCount) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const int cpus = CPU_COUNT(&set);
  unsetenv("OPENBLAS_NUM_THREADS");
  unsetenv("GOTO_NUM_THREADS");
  unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(gofl::worker_pool_threads(), std::min(cpus, gofl::kWorkerPoolMaxThreads));
  setenv("OMP_NUM_THREADS", "1", 1);
  EXPECT_EQ(gofl::worker_pool_threads(), 1);
  setenv("OPENBLAS_NUM_THREADS", "64", 1);  // OpenBLAS's own variable comes first; never above the CPUs
  EXPECT_EQ(gofl::worker_pool_threads(), std::min(cpus, gofl::kWorkerPoolMaxThreads));
  setenv("OPENBLAS_NUM_THREADS", "junk", 1);
  EXPECT_EQ(gofl::worker_pool_threads(), 1);
  unsetenv("OPENBLAS_NUM_THREADS");
  unsetenv("OMP_NUM_THREADS");
}
