// Process-level behaviour of the GPU path: a child forked after the GPU started stays on the CPU,
// a memory reserve larger than the card keeps every call on the CPU, NaN and Inf inputs give the
// CPU library's result. Run under LD_PRELOAD=libgpuoffload.so with GPU_OFFLOAD_DEVICE=gpu.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu_harness.h"
#include "trace/record.h"

namespace {

using dgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                          const int*, const double*, const int*, const double*, double*, const int*);

struct Result {
  std::vector<double> gpu, cpu;
  gpu_test::LastCall lc;
};

// C = A * B (n x n) through the intercepted dgemm_ and straight in the CPU library.
Result dgemm_both(int n, uint64_t seed, double poison_a = 0, double poison_b = 0) {
  auto a = gpu_test::random_matrix<double>(n, n, n, seed);
  auto b = gpu_test::random_matrix<double>(n, n, n, seed + 1);
  if (poison_a != 0) a[size_t(n) + 3] = poison_a;  // one NaN / Inf in A and in B
  if (poison_b != 0) b[size_t(2 * n) + 5] = poison_b;
  Result r;
  r.gpu.assign(size_t(n) * n, 0.0);
  r.cpu.assign(size_t(n) * n, 0.0);
  const double one = 1, zero = 0;
  gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, r.gpu.data(), &n);
  r.lc = gpu_test::last_call();
  gpu_test::cpu<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, r.cpu.data(), &n);
  return r;
}

// NaN where the CPU has NaN, Inf where it has Inf (same sign), close elsewhere.
bool same_specials_and_close(const std::vector<double>& g, const std::vector<double>& c, double tol) {
  double num = 0, den = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    if (std::isnan(c[i]) || std::isnan(g[i])) {
      if (std::isnan(c[i]) != std::isnan(g[i])) return false;
      continue;
    }
    if (std::isinf(c[i]) || std::isinf(g[i])) {
      if (c[i] != g[i]) return false;
      continue;
    }
    num = std::max(num, std::fabs(g[i] - c[i]));
    den = std::max(den, std::fabs(c[i]));
  }
  return num <= tol * (den > 0 ? den : 1);
}

bool reserve_mode() { return std::getenv("GPU_OFFLOAD_MEMORY_RESERVE") != nullptr; }

}  // namespace

TEST(Process, ForkedChildOfAStartedGpuStaysOnTheCpu) {
  if (reserve_mode()) GTEST_SKIP() << "memory-reserve run";
  const Result parent = dgemm_both(300, 10);
  ASSERT_EQ(parent.lc.device, 1) << "the GPU did not start in the parent";
  fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // In the child: the CUDA context did not survive fork(); the CPU runs the call, right.
    const Result child = dgemm_both(300, 20);
    const bool ok = child.lc.device == 0 && child.lc.reason == GOFL_R_AFTER_FORK &&
                    std::memcmp(child.gpu.data(), child.cpu.data(), child.cpu.size() * sizeof(double)) == 0;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child crashed";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child did not run on the CPU with reason 'forked child'";
  // The parent keeps its GPU.
  const Result again = dgemm_both(300, 30);
  EXPECT_EQ(again.lc.device, 1);
}

TEST(Process, NanAndInfInputsGiveTheCpuLibrarysSpecials) {
  if (reserve_mode()) GTEST_SKIP() << "memory-reserve run";
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (auto [pa, pb] : {std::pair{nan, 0.0}, std::pair{inf, 0.0}, std::pair{inf, -inf}, std::pair{0.0, nan}}) {
    const Result r = dgemm_both(256, 40, pa, pb);
    EXPECT_EQ(r.lc.device, 1);
    EXPECT_TRUE(same_specials_and_close(r.gpu, r.cpu, gpu_test::tolerance<double>())) << "poison " << pa << " " << pb;
  }
}

// Run with GPU_OFFLOAD_MEMORY_RESERVE larger than the card (the ctest entry gpu_memory_reserve).
TEST(Process, ReserveLargerThanTheCardKeepsCallsOnTheCpu) {
  if (!reserve_mode()) GTEST_SKIP() << "set GPU_OFFLOAD_MEMORY_RESERVE=1024G to run";
  const Result r = dgemm_both(400, 50);
  EXPECT_EQ(r.lc.device, 0);
  EXPECT_EQ(r.lc.reason, GOFL_R_GPU_MEMORY);
  EXPECT_EQ(std::memcmp(r.gpu.data(), r.cpu.data(), r.cpu.size() * sizeof(double)), 0);
}
