// The CUDA backend as the preload library meets it, without a GPU: libgpuoffload-cuda.so (when this
// build made it) loads, its handshake names this build's op table and call layout, and it has a
// routine for exactly the operations the table (ops/operations.py) gives a GPU body, a warm-up for
// exactly those of its warm column and a split routine for exactly those of its split column.
// Registering the routines needs no GPU, so this runs wherever the backend was built.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstddef>
#include <new>
#include <string>

#include "common/cblas.h"
#include "common/table.h"
#include "cuda/backend_abi.h"
#include "generated/descs.h"

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

namespace desc = gofl::desc;

// A small valid Fortran call of `op` (8 x 8 matrices) with its descriptor, as a wrapper builds it, for
// the routines the split engines may run; for the others a zeroed descriptor no split routine reads.
struct SmallCall {
  gofl_call call{};
  alignas(std::max_align_t) unsigned char storage[1024] = {};
  double data[8 * 8 * 2 * 4] = {};  // every array (zero)
  int32_t ints[8 * 8 * 4] = {};     // pivots (1 .. 8) and integer workspace
  int32_t info = 0;
  explicit SmallCall(int op) {
    for (int i = 0; i < GOFL_N_SYMS; ++i)
      if (gofl_syms[i].op == op && gofl_syms[i].iface == GOFL_IFACE_FORTRAN && gofl_syms[i].scheme == GOFL_SCHEME_STD)
        call.sym = uint16_t(i);
    call.op = uint16_t(op);
    call.desc = storage;
    call.desc_size = sizeof storage;
    call.info = &info;
    for (int i = 0; i < 8; ++i) ints[i] = i + 1;
    switch (gofl_ops[op].precision) {
      case 's': fill<float>(); break;
      case 'd': fill<double>(); break;
      case 'c': fill<std::complex<float>>(); break;
      default: fill<std::complex<double>>(); break;
    }
  }
  template <class D> D& make() {
    static_assert(sizeof(D) <= sizeof storage, "descriptor larger than the storage");
    call.desc_size = sizeof(D);
    return *new (storage) D();
  }
  template <class T> void fill() {
    T* a = reinterpret_cast<T*>(data);
    const desc::IntArray piv{ints, false}, iwork{ints + 64, false};
    const desc::IntOut inf{&info, false};
    const std::string r = gofl_ops[call.op].routine;
    if (r == "gemm") {
      auto& d = make<desc::gemm<T>>();
      d.transa = d.transb = 'N';
      d.m = d.n = d.k = d.lda = d.ldb = d.ldc = 8;
      d.alpha = T(1);
      d.a = d.b = a;
      d.c = a + 64;
    } else if (r == "getrf") {
      auto& d = make<desc::getrf<T>>();
      d.m = d.n = d.lda = 8, d.a = a, d.ipiv = piv, d.info = inf;
    } else if (r == "getrs") {
      auto& d = make<desc::getrs<T>>();
      d.trans = 'N', d.n = d.nrhs = d.lda = d.ldb = 8, d.a = a, d.b = a + 64, d.ipiv = piv, d.info = inf;
    } else if (r == "potrf") {
      auto& d = make<desc::potrf<T>>();
      d.uplo = 'L', d.n = d.lda = 8, d.a = a, d.info = inf;
    } else if (r == "potrs") {
      auto& d = make<desc::potrs<T>>();
      d.uplo = 'L', d.n = d.nrhs = d.lda = d.ldb = 8, d.a = a, d.b = a + 64, d.info = inf;
    } else if (r == "syevd") {
      auto& d = make<desc::syevd<T>>();
      d.jobz = 'N', d.uplo = 'L', d.n = d.lda = 8, d.a = a, d.w = reinterpret_cast<desc::R<T>*>(a + 64);
      d.work = a + 128, d.lwork = 1 << 16, d.iwork = iwork, d.liwork = 1 << 16, d.info = inf;
    } else if (r == "heevd") {
      auto& d = make<desc::heevd<T>>();
      d.jobz = 'N', d.uplo = 'L', d.n = d.lda = 8, d.a = a, d.w = reinterpret_cast<desc::R<T>*>(a + 64);
      d.work = a + 128, d.lwork = 1 << 16, d.rwork = reinterpret_cast<desc::R<T>*>(a + 192), d.lrwork = 1 << 16;
      d.iwork = iwork, d.liwork = 1 << 16, d.info = inf;
    }
  }
};

gofl_plan plan_of(const gofl_call& c) {
  gofl_plan p{};
  backend()->plan(&c, &p);
  return p;
}

// The split engines (cuda/split.h) take a call exactly when the table's split column names its
// engine: the plan says so without a GPU, before start().
TEST(Backend, SplitsExactlyTheTablesSplitColumn) {
  const gofl_backend* b = backend();
  ASSERT_NE(b, nullptr);
  ASSERT_NE(b->plan, nullptr);
  int split = 0;
  for (int op = 0; op < GOFL_N_OPS; ++op) {
    if (gofl_ops[op].kind == GOFL_KIND_FFT || !gofl_ops[op].gpu_capable) continue;
    SmallCall c(op);
    const bool in_table = gofl_ops[op].split != GOFL_SPLIT_NONE;
    split += in_table;
    const gofl_plan p = plan_of(c.call);
    EXPECT_EQ(p.planned, 1) << gofl_ops[op].name;
    EXPECT_EQ(p.split_status, in_table ? GOFL_GPU_OK : GOFL_GPU_UNSUPPORTED) << gofl_ops[op].name;
    if (in_table) {
      EXPECT_EQ(p.status, GOFL_GPU_OK) << gofl_ops[op].name;
      EXPECT_GT(p.device_bytes, 0u) << gofl_ops[op].name;
      EXPECT_EQ(p.resident_bytes, 0u) << gofl_ops[op].name << ": nothing is kept before start()";
    }
  }
  EXPECT_GT(split, 0);
}

// A row-major CBLAS call is mapped to the column-major call on the other triangle or side, by the
// descriptor's to_column_major() as the wrapper does it. An invalid uplo or side (an enum value CBLAS
// does not have) must survive that mapping as invalid, so that the CPU library's own error handling
// (cblas_xerbla) reports it; it once became a valid 'U' or 'L' and was offered to the GPU. A layout
// that is neither row nor column major is the CPU library's to report too.
int plan_row_major(int routine_sym, int side, int uplo, bool layout_ok = true) {
  static double A[64 * 64], B[64 * 64], C[64 * 64];
  gofl_call c{};
  c.sym = uint16_t(routine_sym);
  c.op = gofl_syms[routine_sym].op;
  desc::symm<double> sm;
  desc::syrk<double> rk;
  if (routine_sym == S_cblas_dsymm) {
    sm.cblas = sm.row_major = true, sm.layout_ok = layout_ok;
    sm.side = gofl::cblas_flag(side), sm.uplo = gofl::cblas_flag(uplo);
    sm.m = sm.n = sm.lda = sm.ldb = sm.ldc = 64, sm.alpha = 1, sm.a = A, sm.b = B, sm.c = C;
    desc::to_column_major(sm);
    c.desc = &sm, c.desc_size = sizeof sm;
  } else {  // cblas_dsyrk, trans N
    rk.cblas = rk.row_major = true, rk.layout_ok = layout_ok;
    rk.uplo = gofl::cblas_flag(uplo), rk.trans = 'N';
    rk.n = rk.k = rk.lda = rk.ldc = 64, rk.alpha = 1, rk.a = A, rk.c = C;
    desc::to_column_major(rk);
    c.desc = &rk, c.desc_size = sizeof rk;
  }
  return plan_of(c).status;
}

TEST(Backend, RowMajorCallsWithAnInvalidUploOrSideStayInvalid) {
  ASSERT_NE(backend(), nullptr);
  const int left = 141, upper = 121, bogus = 999;
  EXPECT_EQ(plan_row_major(S_cblas_dsymm, left, upper), GOFL_GPU_OK);
  EXPECT_EQ(plan_row_major(S_cblas_dsymm, left, bogus), GOFL_GPU_INVALID_ARGS) << "uplo";
  EXPECT_EQ(plan_row_major(S_cblas_dsymm, bogus, upper), GOFL_GPU_INVALID_ARGS) << "side";
  EXPECT_EQ(plan_row_major(S_cblas_dsymm, left, upper, false), GOFL_GPU_INVALID_ARGS) << "layout";
  EXPECT_EQ(plan_row_major(S_cblas_dsyrk, left, upper), GOFL_GPU_OK);
  EXPECT_EQ(plan_row_major(S_cblas_dsyrk, left, bogus), GOFL_GPU_INVALID_ARGS) << "syrk uplo";
  EXPECT_EQ(plan_row_major(S_cblas_dsyrk, left, upper, false), GOFL_GPU_INVALID_ARGS) << "syrk layout";
}

}  // namespace

// cuBLAS reads a host complex-double alpha or beta with a 16-byte aligned load (cuDoubleComplex is
// double2): every scalar of a descriptor sits at its size's alignment, wherever the descriptor lives.
template <class D> void expect_scalars_aligned(const char* name) {
  using T = decltype(D::alpha);
  alignas(64) unsigned char at[sizeof(D) + 64];
  for (size_t shift = 0; shift < 64; shift += alignof(D)) {
    const D* d = new (at + shift) D();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(&d->alpha) % sizeof(T), 0u) << name << " alpha, shift " << shift;
    d->~D();
  }
}
TEST(Descriptor, ScalarsSitAtTheirSizesAlignment) {
  using cd = std::complex<double>;
  using cf = std::complex<float>;
  expect_scalars_aligned<desc::syrk<cd>>("zsyrk");
  expect_scalars_aligned<desc::syr2k<cd>>("zsyr2k");
  expect_scalars_aligned<desc::gemm<cd>>("zgemm");
  expect_scalars_aligned<desc::symm<cd>>("zsymm");
  expect_scalars_aligned<desc::trsm<cd>>("ztrsm");
  expect_scalars_aligned<desc::gemv<cd>>("zgemv");
  expect_scalars_aligned<desc::gemm<cf>>("cgemm");
  static_assert(alignof(desc::syrk<cd>) >= 16, "a descriptor with a complex double scalar is 16-byte aligned");
}
