// The CUDA backend on its own, without the preload library: each call's descriptor built as a
// generated wrapper builds it (generated/descs.h), planned and run through the backend's C interface
// (cuda/backend_abi.h), and compared with the system OpenBLAS called directly. This is how a GPU body
// is checked against a CPU reference before any program reaches it. Needs a GPU (label gpu_suite).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/call.h"
#include "common/cblas.h"
#include "common/table.h"
#include "cuda/backend_abi.h"
#include "generated/descs.h"
#include "gpu_harness.h"

namespace desc = gofl::desc;

extern "C" {
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void dsygvd_(const int*, const char*, const char*, const int*, double*, const int*, double*, const int*, double*,
             double*, const int*, int*, const int*, int*);
}

namespace {

const gofl_backend* backend() {
  static const gofl_backend* b = []() -> const gofl_backend* {
    void* h = dlopen(GOFL_TEST_BACKEND, RTLD_NOW | RTLD_LOCAL);
    if (!h) return nullptr;
    auto entry = reinterpret_cast<gofl_backend_entry_fn>(dlsym(h, GOFL_BACKEND_ENTRY));
    const gofl_backend* be = entry ? entry() : nullptr;
    char msg[256] = "";
    if (!be || be->start("all", OP_dgemm, msg, sizeof msg) != GOFL_GPU_OK) return nullptr;
    const gofl_backend_config cfg{0, -1, 0.05};  // residency off: every call copies
    be->configure(&cfg);
    return be;
  }();
  return b;
}

// A call as a wrapper describes it: the symbol, its descriptor, its operands, the CPU function.
template <class D> struct Call {
  gofl_call c{};
  explicit Call(gofl_sym_id sym, const D& d, void* real = nullptr) {
    c.sym = uint16_t(sym);
    c.op = gofl_syms[sym].op;
    c.desc = &d;
    c.desc_size = uint32_t(sizeof d);
    c.real = real;
  }
  void operand(const void* p, int64_t elems, size_t size, int role) {
    c.operands[c.n_operands++] = gofl_call_operand{p, elems, uint32_t(size), uint16_t(role), -1};
  }
  gofl_plan plan() {
    backend()->plan(&c, &c.plan);
    return c.plan;
  }
  int run() {
    gofl_gpu_result r{};
    return backend()->run(&c, &r);
  }
};

// n random values, and max |a - b| / max |b|: the GPU suite's helpers (gpu_harness.h) over one column.
std::vector<double> random_matrix(int64_t n, uint64_t seed) { return gpu_test::random_matrix<double>(n, 1, n, seed); }
double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  return gpu_test::rel_diff(a.data(), b.data(), int64_t(b.size()), 1, int64_t(b.size()));
}

#define REQUIRE_GPU() \
  if (!backend()) GTEST_SKIP() << "no GPU backend could start"

TEST(BackendDirect, GemmAgainstOpenBlas) {
  REQUIRE_GPU();
  const int m = 700, n = 650, k = 600;
  const std::vector<double> A = random_matrix(int64_t(m) * k, 1), B = random_matrix(int64_t(k) * n, 2);
  std::vector<double> C = random_matrix(int64_t(m) * n, 3), ref = C;
  desc::gemm<double> d;
  d.transa = d.transb = 'N';
  d.m = m, d.n = n, d.k = k, d.lda = m, d.ldb = k, d.ldc = m;
  d.alpha = 1.5, d.beta = -0.5, d.a = A.data(), d.b = B.data(), d.c = C.data();
  Call<desc::gemm<double>> call(S_dgemm_, d);
  call.operand(A.data(), int64_t(A.size()), 8, GOFL_IN);
  call.operand(B.data(), int64_t(B.size()), 8, GOFL_IN);
  call.operand(C.data(), int64_t(C.size()), 8, GOFL_INOUT);
  const gofl_plan p = call.plan();
  ASSERT_EQ(p.status, GOFL_GPU_OK);
  EXPECT_GE(p.device_bytes, uint64_t(m * k + k * n + m * n) * 8);
  ASSERT_EQ(call.run(), GOFL_GPU_OK);
  dgemm_("N", "N", &m, &n, &k, &d.alpha, A.data(), &m, B.data(), &k, &d.beta, ref.data(), &m);
  EXPECT_LT(rel_diff(C, ref), 1e-12);
}

// A row-major CBLAS product: the descriptor the wrapper maps (to_column_major) runs as the
// column-major product on the same memory.
TEST(BackendDirect, RowMajorGemmMappedByTheDescriptor) {
  REQUIRE_GPU();
  const int m = 300, n = 500, k = 400;  // C (m x n, row major) = A^T (A: k x m row major) B (k x n)
  const std::vector<double> A = random_matrix(int64_t(k) * m, 4), B = random_matrix(int64_t(k) * n, 5);
  std::vector<double> C(size_t(m) * n, 0.0), ref = C;
  desc::gemm<double> d;
  d.cblas = d.row_major = true;
  d.transa = 'T', d.transb = 'N';
  d.m = m, d.n = n, d.k = k, d.lda = m, d.ldb = n, d.ldc = n;
  d.alpha = 1, d.beta = 0, d.a = A.data(), d.b = B.data(), d.c = C.data();
  desc::to_column_major(d);
  Call<desc::gemm<double>> call(S_cblas_dgemm, d);
  call.operand(C.data(), int64_t(C.size()), 8, GOFL_INOUT);
  ASSERT_EQ(call.plan().status, GOFL_GPU_OK);
  ASSERT_EQ(call.run(), GOFL_GPU_OK);
  cblas_dgemm(101, 112, 111, m, n, k, 1.0, A.data(), m, B.data(), n, 0.0, ref.data(), n);
  EXPECT_LT(rel_diff(C, ref), 1e-12);
}

TEST(BackendDirect, GetrfAgainstOpenBlas) {
  REQUIRE_GPU();
  const int n = 513;
  std::vector<double> A = random_matrix(int64_t(n) * n, 6), ref = A;
  std::vector<int> ipiv(static_cast<size_t>(n), 0), ipiv_ref = ipiv;
  int info = -1, info_ref = -1;
  desc::getrf<double> d;
  d.m = d.n = d.lda = n, d.a = A.data();
  d.ipiv = {ipiv.data(), false};
  d.info = {&info, false};
  Call<desc::getrf<double>> call(S_dgetrf_, d, reinterpret_cast<void*>(&dgetrf_));
  call.c.info = &info;
  call.operand(A.data(), int64_t(A.size()), 8, GOFL_INOUT);
  call.operand(ipiv.data(), n, 4, GOFL_INOUT);
  ASSERT_EQ(call.plan().status, GOFL_GPU_OK);
  ASSERT_EQ(call.run(), GOFL_GPU_OK);
  dgetrf_(&n, &n, ref.data(), &n, ipiv_ref.data(), &info_ref);
  EXPECT_EQ(info, info_ref);
  EXPECT_EQ(ipiv, ipiv_ref);
  EXPECT_LT(rel_diff(A, ref), 1e-10);
}

// The generalized eigenproblem A x = lambda B x: eigenvalues and B's Cholesky factor as LAPACK
// leaves them, and work[0]/iwork[0] as the CPU library answers.
TEST(BackendDirect, SygvdAgainstOpenBlas) {
  REQUIRE_GPU();
  const int n = 400, itype = 1;
  std::vector<double> A = random_matrix(int64_t(n) * n, 7), B = random_matrix(int64_t(n) * n, 8);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j) A[size_t(i) * n + j] = A[size_t(j) * n + i];
  std::vector<double> S(size_t(n) * n, 0.0);  // B = S S^T + n I: positive definite
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int l = 0; l < n; ++l) s += B[size_t(l) * n + i] * B[size_t(l) * n + j];
      S[size_t(j) * n + i] = s + (i == j ? n : 0);
    }
  B = S;
  std::vector<double> Ar = A, Br = B, w(static_cast<size_t>(n)), wr(static_cast<size_t>(n));
  const int lwork = 1 + 6 * n + 2 * n * n, liwork = 3 + 5 * n;
  std::vector<double> work(static_cast<size_t>(lwork)), workr = work;
  std::vector<int> iwork(static_cast<size_t>(liwork)), iworkr = iwork;
  int info = -1, info_ref = -1;
  desc::sygvd<double> d;
  d.itype = itype, d.jobz = 'V', d.uplo = 'L', d.n = n, d.lda = n, d.ldb = n;
  d.a = A.data(), d.b = B.data(), d.w = w.data(), d.work = work.data(), d.lwork = lwork;
  d.iwork = {iwork.data(), false}, d.liwork = liwork, d.info = {&info, false};
  Call<desc::sygvd<double>> call(S_dsygvd_, d, reinterpret_cast<void*>(&dsygvd_));
  call.c.info = &info;
  call.operand(A.data(), int64_t(A.size()), 8, GOFL_INOUT);
  call.operand(B.data(), int64_t(B.size()), 8, GOFL_INOUT);
  call.operand(w.data(), n, 8, GOFL_OUT);
  ASSERT_EQ(call.plan().status, GOFL_GPU_OK);
  ASSERT_EQ(call.run(), GOFL_GPU_OK);
  dsygvd_(&itype, "V", "L", &n, Ar.data(), &n, Br.data(), &n, wr.data(), workr.data(), &lwork, iworkr.data(), &liwork,
          &info_ref);
  EXPECT_EQ(info, info_ref);
  EXPECT_LT(rel_diff(w, wr), 1e-10);
  for (int j = 0; j < n; ++j)  // the lower triangle holds the factor
    for (int i = j; i < n; ++i) EXPECT_NEAR(B[size_t(j) * n + i], Br[size_t(j) * n + i], 1e-9 * n) << i << "," << j;
  EXPECT_EQ(work[0], workr[0]);
  EXPECT_EQ(iwork[0], iworkr[0]);
}

// What the plan says before anything runs, and what run() does with a call that was not planned
// or that the plan refused: nothing the program can see changes.
TEST(BackendDirect, RunTakesOnlyACallItsPlanAccepted) {
  REQUIRE_GPU();
  const int n = 256;
  const std::vector<double> A = random_matrix(int64_t(n) * n, 9);
  std::vector<double> C(size_t(n) * n, 7.0);
  desc::gemm<double> d;
  d.transa = d.transb = 'N';
  d.m = d.n = d.k = n, d.lda = d.ldb = d.ldc = n, d.alpha = 1, d.beta = 0, d.a = d.b = A.data(), d.c = C.data();
  Call<desc::gemm<double>> unplanned(S_dgemm_, d);
  EXPECT_NE(unplanned.run(), GOFL_GPU_OK);
  d.lda = n - 1;  // invalid: the CPU library's xerbla must report it
  Call<desc::gemm<double>> invalid(S_dgemm_, d);
  EXPECT_EQ(invalid.plan().status, GOFL_GPU_INVALID_ARGS);
  EXPECT_NE(invalid.run(), GOFL_GPU_OK);
  EXPECT_TRUE(std::all_of(C.begin(), C.end(), [](double x) { return x == 7.0; }));
}

}  // namespace
