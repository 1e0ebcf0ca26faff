// The engine runs on the GPU it chose in its own context and gives each program thread back the
// CUDA context it had: a program with CUDA work of its own (a context it made current) finds that
// context still current after an offloaded call, and the call's result is right.
#include <dlfcn.h>

#include <vector>

#include "gpu_harness.h"

namespace {

using dgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                          const int*, const double*, const int*, const double*, double*, const int*);

// The driver API through dlopen: the suite does not link libcuda.
struct Driver {
  int (*init)(unsigned) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*ctx_create)(void**, unsigned, int) = nullptr;  // cuCtxCreate_v2: a context of the program's own
  int (*ctx_destroy)(void*) = nullptr;
  int (*ctx_get)(void**) = nullptr;
  int (*ctx_set)(void*) = nullptr;
  bool load() {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    init = reinterpret_cast<int (*)(unsigned)>(dlsym(h, "cuInit"));
    device_get = reinterpret_cast<int (*)(int*, int)>(dlsym(h, "cuDeviceGet"));
    ctx_create = reinterpret_cast<int (*)(void**, unsigned, int)>(dlsym(h, "cuCtxCreate_v2"));
    ctx_destroy = reinterpret_cast<int (*)(void*)>(dlsym(h, "cuCtxDestroy_v2"));
    ctx_get = reinterpret_cast<int (*)(void**)>(dlsym(h, "cuCtxGetCurrent"));
    ctx_set = reinterpret_cast<int (*)(void*)>(dlsym(h, "cuCtxSetCurrent"));
    return init && device_get && ctx_create && ctx_destroy && ctx_get && ctx_set;
  }
};

void offloaded_dgemm(int n, uint64_t seed) {
  auto a = gpu_test::random_matrix<double>(n, n, n, seed);
  auto b = gpu_test::random_matrix<double>(n, n, n, seed + 1);
  std::vector<double> g(size_t(n) * n), c(size_t(n) * n);
  const double one = 1, zero = 0;
  gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, g.data(), &n);
  EXPECT_RAN_ON_GPU();
  gpu_test::cpu<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, c.data(), &n);
  EXPECT_LE(gpu_test::rel_diff(g.data(), c.data(), n, n, n), 1e-12);
}

TEST(Placement, TheProgramsOwnContextStaysCurrent) {
  Driver d;
  ASSERT_TRUE(d.load()) << "libcuda.so.1 with cuCtxCreate_v2";
  ASSERT_EQ(d.init(0), 0);
  int dev = -1;
  ASSERT_EQ(d.device_get(&dev, 0), 0);
  // The suite's earlier tests made offloaded calls (and destroyed FFTW plans) on this thread, which
  // never made a context: none may be current now. (One left current made this test depend on the
  // order: cuCtxSetCurrent(NULL) below pops `mine` and uncovers it.)
  void* before = reinterpret_cast<void*>(1);
  ASSERT_EQ(d.ctx_get(&before), 0);
  EXPECT_EQ(before, nullptr) << "an earlier call of the library left a CUDA context current on the program's thread";
  void* mine = nullptr;
  ASSERT_EQ(d.ctx_create(&mine, 0, dev), 0);  // now current on this thread
  for (int round = 0; round < 2; ++round) {   // the first may start the GPU, the second is an ordinary call
    offloaded_dgemm(700, 40 + uint64_t(round));
    void* cur = nullptr;
    ASSERT_EQ(d.ctx_get(&cur), 0);
    EXPECT_EQ(cur, mine) << "round " << round << ": the offloaded call left another context current";
  }
  // A thread with no current context keeps none.
  ASSERT_EQ(d.ctx_set(nullptr), 0);
  offloaded_dgemm(600, 50);
  void* cur = reinterpret_cast<void*>(1);
  ASSERT_EQ(d.ctx_get(&cur), 0);
  EXPECT_EQ(cur, nullptr);
  EXPECT_EQ(d.ctx_destroy(mine), 0);
}

}  // namespace
