// Staged calls (src/cuda/thread_stage.h): a small BLAS call's thread copies its operands into its own
// pinned buffer before it takes the GPU and writes the results after it gave it back. Against the
// system OpenBLAS: the results, the gaps between columns and the triangle a routine must not write
// are as the CPU library leaves them; a failure leaves the program's memory untouched; threads that
// contend for the GPU stage their calls. The tests that need every call staged run in the
// gpu_staged entry (GPU_OFFLOAD_THREAD_STAGING=on, tests/gpu/CMakeLists.txt) and skip elsewhere.
#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpu_harness.h"

#include "cuda/backend_abi.h"
#include "trace/record.h"

namespace {

using DgemmF = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                        const int*, const double*, const int*, const double*, double*, const int*, size_t, size_t);
using DsymmF = void (*)(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
                        const double*, const int*, const double*, double*, const int*, size_t, size_t);
using DsyrkF = void (*)(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
                        const double*, double*, const int*, size_t, size_t);
using DtrsmF = void (*)(const char*, const char*, const char*, const char*, const int*, const int*, const double*,
                        const double*, const int*, double*, const int*, size_t, size_t, size_t, size_t);
using ZgemmF = void (*)(const char*, const char*, const int*, const int*, const int*, const std::complex<double>*,
                        const std::complex<double>*, const int*, const std::complex<double>*, const int*,
                        const std::complex<double>*, std::complex<double>*, const int*, size_t, size_t);
using DgemvF = void (*)(const char*, const int*, const int*, const double*, const double*, const int*, const double*,
                        const int*, const double*, double*, const int*, size_t);

bool every_call_staged() {
  const char* v = std::getenv("GPU_OFFLOAD_THREAD_STAGING");
  return v && std::string(v) == "on";
}
#define REQUIRE_EVERY_CALL_STAGED() \
  if (!every_call_staged()) GTEST_SKIP() << "runs in the gpu_staged entry (GPU_OFFLOAD_THREAD_STAGING=on)"

#define EXPECT_STAGED_ON_GPU()                                                                            \
  do {                                                                                                    \
    const auto lc_ = gpu_test::last_call();                                                               \
    EXPECT_EQ(lc_.device, 1) << "reason " << lc_.reason << " gpu status " << lc_.gpu_status << " " << lc_.failure; \
    EXPECT_EQ(gpu_test::last_call_staged(), 1);                                                           \
  } while (0)

// C = alpha A B + beta C with every leading dimension larger than its rows: the gaps must come back
// untouched, bit for bit, and C as OpenBLAS computes it.
struct Gemm {
  int m, n, k, lda, ldb, ldc;
  double alpha, beta;
  std::vector<double> A, B, C0, gpu, cpu;
  Gemm(int m_, int n_, int k_, double beta_, uint64_t seed)
      : m(m_), n(n_), k(k_), lda(m_ + 3), ldb(k_ + 5), ldc(m_ + 7), alpha(1.5), beta(beta_) {
    A = gpu_test::random_matrix<double>(m, k, lda, seed);
    B = gpu_test::random_matrix<double>(k, n, ldb, seed + 1);
    C0 = gpu_test::random_matrix<double>(m, n, ldc, seed + 2);
    gpu = cpu = C0;
  }
  void run() {
    gpu_test::intercepted<DgemmF>("dgemm_")("N", "N", &m, &n, &k, &alpha, A.data(), &lda, B.data(), &ldb, &beta,
                                            gpu.data(), &ldc, 1, 1);
  }
  void reference() {
    gpu_test::cpu<DgemmF>("dgemm_")("N", "N", &m, &n, &k, &alpha, A.data(), &lda, B.data(), &ldb, &beta, cpu.data(),
                                    &ldc, 1, 1);
  }
  double diff() const { return gpu_test::rel_diff(gpu.data(), cpu.data(), m, n, ldc); }
  bool gaps() const { return gpu_test::gaps_untouched(gpu, cpu, m, n, ldc); }
};

TEST(StagedCalls, Blas3ResultsGapsAndTrianglesAsTheCpuLibraryLeavesThem) {
  REQUIRE_EVERY_CALL_STAGED();
  for (double beta : {0.0, -0.5}) {  // C write-only, and C read too
    Gemm g(300, 280, 260, beta, 100 + uint64_t(beta != 0));
    g.run();
    EXPECT_STAGED_ON_GPU();
    g.reference();
    EXPECT_LE(g.diff(), gpu_test::tolerance<double>()) << "beta " << beta;
    EXPECT_TRUE(g.gaps()) << "beta " << beta;
  }
  // dsymm: A symmetric (only its lower triangle read), C with gaps.
  {
    const int m = 256, n = 300, lda = 260, ldb = 261, ldc = 259;
    const double alpha = 0.75, beta = 0.25;
    const auto A = gpu_test::random_matrix<double>(m, m, lda, 110);
    const auto B = gpu_test::random_matrix<double>(m, n, ldb, 111);
    auto gpu = gpu_test::random_matrix<double>(m, n, ldc, 112), cpu = gpu;
    gpu_test::intercepted<DsymmF>("dsymm_")("L", "L", &m, &n, &alpha, A.data(), &lda, B.data(), &ldb, &beta,
                                            gpu.data(), &ldc, 1, 1);
    EXPECT_STAGED_ON_GPU();
    gpu_test::cpu<DsymmF>("dsymm_")("L", "L", &m, &n, &alpha, A.data(), &lda, B.data(), &ldb, &beta, cpu.data(), &ldc,
                                    1, 1);
    EXPECT_LE(gpu_test::rel_diff(gpu.data(), cpu.data(), m, n, ldc), gpu_test::tolerance<double>());
    EXPECT_TRUE(gpu_test::gaps_untouched(gpu, cpu, m, n, ldc));
  }
  // dsyrk: only the named triangle is written; the other one and the gaps stay as they were.
  for (const char* uplo : {"U", "L"}) {
    const int n = 320, k = 200, lda = 323, ldc = 325;
    const double alpha = 1.0, beta = 0.5;
    const auto A = gpu_test::random_matrix<double>(n, k, lda, 120);
    auto gpu = gpu_test::random_matrix<double>(n, n, ldc, 121), cpu = gpu;
    gpu_test::intercepted<DsyrkF>("dsyrk_")(uplo, "N", &n, &k, &alpha, A.data(), &lda, &beta, gpu.data(), &ldc, 1, 1);
    EXPECT_STAGED_ON_GPU();
    gpu_test::cpu<DsyrkF>("dsyrk_")(uplo, "N", &n, &k, &alpha, A.data(), &lda, &beta, cpu.data(), &ldc, 1, 1);
    EXPECT_LE(gpu_test::rel_diff(gpu.data(), cpu.data(), n, n, ldc), gpu_test::tolerance<double>()) << uplo;
    for (int j = 0; j < n; ++j)  // the other triangle, bit for bit
      for (int i = 0; i < n; ++i) {
        const bool written = uplo[0] == 'U' ? i <= j : i >= j;
        if (!written) {
          ASSERT_EQ(std::memcmp(&gpu[size_t(i + j * ldc)], &cpu[size_t(i + j * ldc)], 8), 0) << uplo;
        }
      }
    EXPECT_TRUE(gpu_test::gaps_untouched(gpu, cpu, n, n, ldc));
  }
  // dtrsm: B is read and overwritten (one operand in and out).
  {
    const int m = 288, n = 270, lda = 290, ldb = 293;
    const double alpha = 2.0;
    auto A = gpu_test::random_matrix<double>(m, m, lda, 130);
    for (int i = 0; i < m; ++i) A[size_t(i + i * lda)] += 4.0 * m;  // well conditioned
    auto gpu = gpu_test::random_matrix<double>(m, n, ldb, 131), cpu = gpu;
    gpu_test::intercepted<DtrsmF>("dtrsm_")("L", "U", "N", "N", &m, &n, &alpha, A.data(), &lda, gpu.data(), &ldb, 1, 1,
                                            1, 1);
    EXPECT_STAGED_ON_GPU();
    gpu_test::cpu<DtrsmF>("dtrsm_")("L", "U", "N", "N", &m, &n, &alpha, A.data(), &lda, cpu.data(), &ldb, 1, 1, 1, 1);
    EXPECT_LE(gpu_test::rel_diff(gpu.data(), cpu.data(), m, n, ldb), gpu_test::tolerance<double>());
    EXPECT_TRUE(gpu_test::gaps_untouched(gpu, cpu, m, n, ldb));
  }
  // zgemm, conjugate-transposed A.
  {
    using Z = std::complex<double>;
    const int m = 200, n = 180, k = 150, lda = 153, ldb = 152, ldc = 205;
    const Z alpha(0.5, -1.0), beta(0.25, 0.5);
    const auto A = gpu_test::random_matrix<Z>(k, m, lda, 140);
    const auto B = gpu_test::random_matrix<Z>(k, n, ldb, 141);
    auto gpu = gpu_test::random_matrix<Z>(m, n, ldc, 142), cpu = gpu;
    gpu_test::intercepted<ZgemmF>("zgemm_")("C", "N", &m, &n, &k, &alpha, A.data(), &lda, B.data(), &ldb, &beta,
                                            gpu.data(), &ldc, 1, 1);
    EXPECT_STAGED_ON_GPU();
    gpu_test::cpu<ZgemmF>("zgemm_")("C", "N", &m, &n, &k, &alpha, A.data(), &lda, B.data(), &ldb, &beta, cpu.data(),
                                    &ldc, 1, 1);
    EXPECT_LE(gpu_test::rel_diff(gpu.data(), cpu.data(), m, n, ldc), gpu_test::tolerance<double>());
    EXPECT_TRUE(gpu_test::gaps_untouched(gpu, cpu, m, n, ldc));
  }
}

// dgemv with y two elements apart: only y's elements are written, the ones between stay.
TEST(StagedCalls, Blas2StridedVectorKeepsItsGaps) {
  REQUIRE_EVERY_CALL_STAGED();
  const int m = 3000, n = 2500, lda = 3001, incx = 1, incy = 2;
  const double alpha = 1.0, beta = 0.5;
  const auto A = gpu_test::random_matrix<double>(m, n, lda, 150);
  const auto x = gpu_test::random_matrix<double>(n, 1, n, 151);
  auto gpu = gpu_test::random_matrix<double>(m * incy, 1, m * incy, 152), cpu = gpu;
  gpu_test::intercepted<DgemvF>("dgemv_")("N", &m, &n, &alpha, A.data(), &lda, x.data(), &incx, &beta, gpu.data(),
                                          &incy, 1);
  EXPECT_STAGED_ON_GPU();
  gpu_test::cpu<DgemvF>("dgemv_")("N", &m, &n, &alpha, A.data(), &lda, x.data(), &incx, &beta, cpu.data(), &incy, 1);
  EXPECT_LE(gpu_test::rel_diff(gpu.data(), cpu.data(), 1, m, incy), gpu_test::tolerance<double>());
  EXPECT_TRUE(gpu_test::gaps_untouched(gpu, cpu, 1, m, incy));
}

// A staged call that fails on the GPU wrote nothing: the CPU library runs it on the program's
// untouched C, and the next call is staged and right again.
class StagedFaults : public ::testing::TestWithParam<const char*> {
 protected:
  void TearDown() override { gpu_test::set_fault(nullptr); }
};
TEST_P(StagedFaults, TheCpuRunsItOnUntouchedMemory) {
  REQUIRE_EVERY_CALL_STAGED();
  Gemm warm(64, 64, 64, 1.0, 160);
  warm.run();  // the GPU is started, so the fault reaches the backend
  gpu_test::set_fault(GetParam());
  Gemm g(300, 280, 260, -0.5, 161);
  g.run();
  const auto lc = gpu_test::last_call();
  EXPECT_EQ(lc.device, 0);
  EXPECT_EQ(lc.reason, GOFL_R_GPU_FAILED);
  EXPECT_EQ(lc.gpu_status, GOFL_GPU_INJECTED);
  g.reference();
  EXPECT_EQ(std::memcmp(g.gpu.data(), g.cpu.data(), g.cpu.size() * sizeof(double)), 0) << "not the CPU's result";
  gpu_test::set_fault(nullptr);
  Gemm after(300, 280, 260, -0.5, 162);
  after.run();
  EXPECT_STAGED_ON_GPU();
  after.reference();
  EXPECT_LE(after.diff(), gpu_test::tolerance<double>());
}
// d2h-after: the outputs came back into the stage before the failure; writing them anyway would change
// the C (beta != 0) that the CPU then reads.
INSTANTIATE_TEST_SUITE_P(Steps, StagedFaults, ::testing::Values("alloc", "h2d", "compute", "d2h-before", "d2h-after"));

// The verify-mode test switch reaches a staged result too (verify must be able to catch it).
TEST(StagedCalls, CorruptSwitchChangesTheStagedResult) {
  REQUIRE_EVERY_CALL_STAGED();
  gpu_test::set_fault("corrupt");
  Gemm g(300, 280, 260, 0.0, 170);
  g.run();
  gpu_test::set_fault(nullptr);
  EXPECT_STAGED_ON_GPU();
  g.reference();
  EXPECT_GT(std::abs(g.gpu[0] - g.cpu[0]), 0.5) << "C(0,0) not corrupted";
  g.gpu[0] = g.cpu[0];
  EXPECT_LE(g.diff(), gpu_test::tolerance<double>()) << "more than C(0,0) changed";
  EXPECT_TRUE(g.gaps());
}

// Threads that contend for the GPU stage their calls (auto, and on), and every result is right. Eight
// threads, each a run of dgemm of 400 on its own matrices. With GPU_OFFLOAD_LINE_SERVES (the
// gpu_staged_served entry), the thread holding the GPU runs staged calls of other threads from their
// stages (a call counts as staged only when its GPU run copied through its stage), and those calls'
// results are right too.
TEST(StagedCalls, ThreadsContendingForTheGpuStageTheirCalls) {
  const char* mode = std::getenv("GPU_OFFLOAD_THREAD_STAGING");
  if (!mode || std::string(mode) == "off") GTEST_SKIP() << "staging is off (the default)";
  Gemm first(400, 400, 400, 0.5, 180);
  first.run();  // the routine's first GPU call (its handle, workspace) out of the race
  ASSERT_GE(gpu_test::last_call_served(), 0) << "libgpuoffload.so is not preloaded";
  std::atomic<int> wrong{0}, on_gpu{0}, staged{0}, staged_served{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&, t] {
      for (int r = 0; r < 6; ++r) {
        Gemm g(400, 400, 400, 0.5, uint64_t(200 + 10 * t + r));
        g.run();
        const auto lc = gpu_test::last_call();
        if (lc.device == 1) ++on_gpu;
        const int was_staged = gpu_test::last_call_staged();
        if (was_staged == 1) ++staged;
        if (was_staged == 1 && gpu_test::last_call_served() == 1) ++staged_served;
        g.reference();
        if (g.diff() > gpu_test::tolerance<double>() || !g.gaps()) ++wrong;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(on_gpu.load(), 48);
  EXPECT_GE(staged.load(), 1) << "no call found the GPU busy and staged";
  const char* serves = std::getenv("GPU_OFFLOAD_LINE_SERVES");
  if (serves && std::atoi(serves) > 0)
    EXPECT_GE(staged_served.load(), 1) << "no staged call was run by the thread holding the GPU";
  else
    EXPECT_EQ(staged_served.load(), 0);
}

// A staged call whose GPU run fails, whether its own thread ran it or the thread holding the GPU
// served it (gpu_staged_served, gpu_auto_staged_served): the CPU library runs it on memory the GPU
// attempt left untouched. Eight threads meet before each round. In round 1 every GPU run fails before
// its download (d2h-before); in round 3 after it (d2h-after), which fails only the calls whose outputs
// wait in their stage (a call that wrote the program's memory has no such failure): each of those
// must give the CPU's result bit for bit, so outputs held back in a failed call's stage were dropped
// (with beta != 0, C written before the CPU's run would change its result); the others the GPU's.
TEST(StagedCalls, ContendingCallsThatFailOnTheGpuGiveTheCpuResult) {
  const char* mode = std::getenv("GPU_OFFLOAD_THREAD_STAGING");
  if (!mode || std::string(mode) == "off") GTEST_SKIP() << "staging is off (the default)";
  Gemm first(400, 400, 400, 0.5, 300);
  first.run();  // the routine's first GPU call out of the race
  constexpr int kThreads = 8, kRounds = 5, kFailsBefore = 1, kFailsAfter = 3;
  std::atomic<int> arrived{0};
  auto meet = [&](int round) {  // all threads, and the main thread, between rounds
    ++arrived;
    while (arrived.load() < (round + 1) * (kThreads + 1)) std::this_thread::yield();
  };
  std::atomic<int> wrong{0}, not_cpu{0}, failed_before{0}, failed_after{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        meet(2 * r);  // the main thread sets or clears the fault between the two meetings
        meet(2 * r + 1);
        Gemm g(400, 400, 400, 0.5, uint64_t(310 + 10 * t + r));
        g.run();
        const auto lc = gpu_test::last_call();
        g.reference();
        const bool bitwise = std::memcmp(g.gpu.data(), g.cpu.data(), g.cpu.size() * sizeof(double)) == 0;
        if (r == kFailsBefore) {
          if (lc.device != 0) ++not_cpu;
          if (lc.reason == GOFL_R_GPU_FAILED) ++failed_before;
          if (!bitwise) ++wrong;
        } else if (r == kFailsAfter && lc.device == 0) {
          if (lc.reason == GOFL_R_GPU_FAILED) ++failed_after;
          if (!bitwise) ++wrong;
        } else if (g.diff() > gpu_test::tolerance<double>() || !g.gaps()) {
          ++wrong;
        }
      }
    });
  for (int r = 0; r < kRounds; ++r) {
    meet(2 * r);
    gpu_test::set_fault(r == kFailsBefore ? "d2h-before" : r == kFailsAfter ? "d2h-after" : nullptr);
    meet(2 * r + 1);  // the threads' next meeting comes after their call: the fault stays until then
  }
  for (auto& t : ts) t.join();
  gpu_test::set_fault(nullptr);
  EXPECT_EQ(wrong.load(), 0) << "a result differs from the CPU library's";
  EXPECT_EQ(not_cpu.load(), 0) << "a call of the d2h-before round did not end on the CPU";
  EXPECT_GE(failed_before.load(), 1) << "no call of the d2h-before round reached the GPU";
  EXPECT_GE(failed_after.load(), 1) << "no staged call of the d2h-after round failed after its download";
}

}  // namespace
