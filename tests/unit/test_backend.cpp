// The CUDA backend as the preload library meets it, without a GPU: libgpuoffload-cuda.so (when this
// build made it) loads, its handshake names this build's op table and call layout, and it has a
// routine for exactly the operations the table (ops/operations.py, gpu=True) sends to the GPU, and a
// warm-up for each BLAS-3 and LAPACK one.
// Registering the routines needs no GPU, so this runs wherever the backend was built.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <vector>

#include "common/table.h"
#include "cuda/backend_abi.h"

namespace {

const gofl_backend* backend() {
  static const gofl_backend* b = [] {
    void* h = dlopen(GOFL_TEST_BACKEND, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      ADD_FAILURE() << "cannot load " << GOFL_TEST_BACKEND << ": " << dlerror();
      return static_cast<const gofl_backend*>(nullptr);
    }
    auto entry = reinterpret_cast<gofl_backend_entry_fn>(dlsym(h, GOFL_BACKEND_ENTRY));
    if (!entry) ADD_FAILURE() << GOFL_TEST_BACKEND << " has no " << GOFL_BACKEND_ENTRY;
    return entry ? entry() : nullptr;
  }();
  return b;
}

TEST(Backend, HandshakeNamesThisBuildsTableAndLayout) {
  const gofl_backend* b = backend();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->abi, uint32_t(GOFL_BACKEND_ABI));
  EXPECT_EQ(b->ops_hash, GOFL_OPS_HASH);
  EXPECT_EQ(b->call_size, sizeof(gofl_call));
  EXPECT_EQ(b->result_size, sizeof(gofl_gpu_result));
  EXPECT_EQ(b->fft_size, sizeof(gofl_fft));
  EXPECT_NE(b->fft_forget, nullptr);
  EXPECT_NE(b->take_setup, nullptr);
}

TEST(Backend, RegistersExactlyTheOperationsTheTableSendsToTheGpu) {
  const gofl_backend* b = backend();
  ASSERT_NE(b, nullptr);
  ASSERT_NE(b->has_routine, nullptr);
  for (int op = 0; op < GOFL_N_OPS; ++op)
    EXPECT_EQ(b->has_routine(uint32_t(op)) != 0, gofl_ops[op].gpu_capable) << gofl_ops[op].name;
  EXPECT_EQ(b->has_routine(GOFL_N_OPS), 0);
}

// Every BLAS-3 and LAPACK routine the backend runs has a warm-up (cuda/warm.h): asked before the
// start, it answers "no device" rather than "unsupported", and nothing is warmed. The others
// (BLAS-2, copies, FFTs) have none.
TEST(Backend, EveryBlas3AndLapackRoutineHasAWarmUp) {
  const gofl_backend* b = backend();
  ASSERT_NE(b, nullptr);
  ASSERT_NE(b->warm, nullptr);
  ASSERT_NE(b->take_warmed, nullptr);
  for (int op = 0; op < GOFL_N_OPS; ++op) {
    if (!b->has_routine(uint32_t(op))) continue;
    const bool warmed = gofl_ops[op].kind == GOFL_KIND_BLAS3 || gofl_ops[op].kind == GOFL_KIND_LAPACK;
    EXPECT_EQ(b->warm(uint32_t(op), 0), warmed ? GOFL_GPU_NO_DEVICE : GOFL_GPU_UNSUPPORTED) << gofl_ops[op].name;
  }
  EXPECT_EQ(b->warm(GOFL_N_OPS, 0), GOFL_GPU_UNSUPPORTED);
  gofl_warmed w[4];
  EXPECT_EQ(b->take_warmed(w, 4), 0);
}

// A row-major CBLAS call is mapped to the column-major call on the other triangle or side. An
// invalid uplo or side (an enum value CBLAS does not have) must survive that mapping as invalid,
// so that the CPU library's own error handling (cblas_xerbla) reports it; it used to become a valid
// 'U' or 'L' and be offered to the GPU.
int supports_row_major(gofl_sym_id sym, int side, int uplo) {
  const gofl_backend* b = backend();
  const int layout = 101, trans = 111;
  const int m = 64, n = 64, k = 64, ld = 64;
  const double alpha = 1, beta = 0;
  static double A[64 * 64], B[64 * 64], C[64 * 64];
  const double *pa = A, *pb = B;
  double* pc = C;
  gofl_call c{};
  c.sym = uint16_t(sym);
  c.op = gofl_syms[sym].op;
  std::vector<void*> argv;
  auto arg = [](const void* p) { return const_cast<void*>(p); };
  if (sym == S_cblas_dsymm)  // layout, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc
    argv = {arg(&layout), arg(&side), arg(&uplo), arg(&m), arg(&n), arg(&alpha), arg(pa), arg(&ld), arg(pb),
            arg(&ld), arg(&beta), pc, arg(&ld)};
  else  // cblas_dsyrk: layout, uplo, trans, n, k, alpha, A, lda, beta, C, ldc
    argv = {arg(&layout), arg(&uplo), arg(&trans), arg(&n), arg(&k), arg(&alpha), arg(pa), arg(&ld), arg(&beta), pc,
            arg(&ld)};
  c.argv = argv.data();
  c.argc = int32_t(argv.size());
  return b->supports(&c);
}

TEST(Backend, RowMajorCallsWithAnInvalidUploOrSideStayInvalid) {
  ASSERT_NE(backend(), nullptr);
  const int left = 141, upper = 121, bogus = 999;
  EXPECT_EQ(supports_row_major(S_cblas_dsymm, left, upper), GOFL_GPU_OK);
  EXPECT_EQ(supports_row_major(S_cblas_dsymm, left, bogus), GOFL_GPU_INVALID_ARGS) << "uplo";
  EXPECT_EQ(supports_row_major(S_cblas_dsymm, bogus, upper), GOFL_GPU_INVALID_ARGS) << "side";
  EXPECT_EQ(supports_row_major(S_cblas_dsyrk, left, upper), GOFL_GPU_OK);
  EXPECT_EQ(supports_row_major(S_cblas_dsyrk, left, bogus), GOFL_GPU_INVALID_ARGS) << "syrk uplo";
}

}  // namespace
