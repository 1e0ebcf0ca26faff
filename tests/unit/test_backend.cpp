// The CUDA backend as the preload library meets it, without a GPU: libgpuoffload-cuda.so (when this
// build made it) loads, its handshake names this build's op table and call layout, and it has a
// routine for exactly the operations the table (ops/operations.py) gives a GPU body, a warm-up for
// exactly those of its warm column and a split routine for exactly those of its split column.
// Registering the routines needs no GPU, so this runs wherever the backend was built.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "common/table.h"
#include "cuda/backend_abi.h"
#include "generated/args.h"

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

// Every routine of the table's warm column has a warm-up (cuda/warm.h): asked before the start, it
// answers "no device" rather than "unsupported", and nothing is warmed. The others have none.
TEST(Backend, WarmsExactlyTheTablesWarmColumn) {
  const gofl_backend* b = backend();
  ASSERT_NE(b, nullptr);
  ASSERT_NE(b->warm, nullptr);
  ASSERT_NE(b->take_warmed, nullptr);
  for (int op = 0; op < GOFL_N_OPS; ++op)
    EXPECT_EQ(b->warm(uint32_t(op), 0), gofl_ops[op].warmed ? GOFL_GPU_NO_DEVICE : GOFL_GPU_UNSUPPORTED)
        << gofl_ops[op].name;
  EXPECT_EQ(b->warm(GOFL_N_OPS, 0), GOFL_GPU_UNSUPPORTED);
  gofl_warmed w[4];
  EXPECT_EQ(b->take_warmed(w, 4), 0);
}

// A small valid Fortran call of `op` (8 x 8 matrices) for the routines the split engines may run;
// for the others a call with arguments no split routine reads.
struct SmallCall {
  gofl_call call{};
  void* argv[16] = {};
  int32_t eight = 8, big = 1 << 16, info = 0;
  char N = 'N', L = 'L';
  double data[8 * 8 * 2 * 4] = {};   // every array, and beta (zero)
  double one_d[2] = {1, 0};
  float one_s[2] = {1, 0};           // alpha: 1 of the op's precision
  int32_t ints[8 * 8 * 4] = {};     // pivots (1 .. 8) and integer workspace
  explicit SmallCall(int op) {
    for (int i = 0; i < GOFL_N_SYMS; ++i)
      if (gofl_syms[i].op == op && gofl_syms[i].iface == GOFL_IFACE_FORTRAN && gofl_syms[i].scheme == GOFL_SCHEME_STD)
        call.sym = uint16_t(i);
    call.op = uint16_t(op);
    for (void*& a : argv) a = &eight;  // m, n, k, nrhs and the leading dimensions
    for (int i = 0; i < 8; ++i) ints[i] = i + 1;
    const std::string r = gofl_ops[op].routine;
    namespace A = gofl::args;
    if (r == "gemm") {
      using P = A::gemm_r;
      const char p = gofl_ops[op].precision;
      set({P::transa, P::transb}, &N), set({P::beta, P::a, P::b, P::c}, data);
      set({P::alpha}, p == 's' || p == 'c' ? static_cast<void*>(one_s) : static_cast<void*>(one_d));
    } else if (r == "getrf") {
      using P = A::getrf_r;
      set({P::a}, data), set({P::ipiv}, ints), set({P::info}, &info);
    } else if (r == "getrs") {
      using P = A::getrs_r;
      set({P::trans}, &N), set({P::a, P::b}, data), set({P::ipiv}, ints), set({P::info}, &info);
    } else if (r == "potrf") {
      using P = A::potrf_r;
      set({P::uplo}, &L), set({P::a}, data), set({P::info}, &info);
    } else if (r == "potrs") {
      using P = A::potrs_r;
      set({P::uplo}, &L), set({P::a, P::b}, data), set({P::info}, &info);
    } else if (r == "syevd") {
      using P = A::syevd_r;
      set({P::jobz}, &N), set({P::uplo}, &L), set({P::a, P::w, P::work}, data), set({P::iwork}, ints);
      set({P::lwork, P::liwork}, &big), set({P::info}, &info);
    } else if (r == "heevd") {
      using P = A::heevd_c;
      set({P::jobz}, &N), set({P::uplo}, &L), set({P::a, P::w, P::work, P::rwork}, data), set({P::iwork}, ints);
      set({P::lwork, P::lrwork, P::liwork}, &big), set({P::info}, &info);
    }
    call.argv = argv;
    call.argc = 16;
    call.info = &info;
  }
  void set(std::initializer_list<int> positions, void* p) {
    for (int i : positions) argv[i] = p;
  }
};

// The split engines (cuda/split.h) take a call exactly when the table's split column names its
// engine: split_supports needs no GPU, nor start().
TEST(Backend, SplitsExactlyTheTablesSplitColumn) {
  const gofl_backend* b = backend();
  ASSERT_NE(b, nullptr);
  ASSERT_NE(b->split_supports, nullptr);
  int split = 0;
  for (int op = 0; op < GOFL_N_OPS; ++op) {
    if (gofl_ops[op].kind == GOFL_KIND_FFT) continue;  // no split routine reads a transform
    SmallCall c(op);
    const bool in_table = gofl_ops[op].split != GOFL_SPLIT_NONE;
    split += in_table;
    EXPECT_EQ(b->split_supports(&c.call), in_table ? GOFL_GPU_OK : GOFL_GPU_UNSUPPORTED) << gofl_ops[op].name;
  }
  EXPECT_GT(split, 0);
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
