// GPU symmetric/Hermitian eigensolvers (src/cuda/lapack_syev.cpp: syevd/heevd, syev/heev,
// syevr/heevr) against the CPU library, run under LD_PRELOAD=libgpuoffload.so with
// GPU_OFFLOAD_DEVICE=gpu: every routine x precision x variant on copies of the same input. Eigenvalues
// are compared with the CPU's; vectors (defined up to sign or phase) through residuals and
// orthogonality; info, m and work[0]/rwork[0]/iwork[0] exactly; the gaps a larger leading dimension
// leaves must stay bit-identical.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "dense_check.h"

namespace {

using namespace gpu_test;
using cd = std::complex<double>;
using L = size_t;  // hidden Fortran string length

using Precisions = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
template <class T> class SymmetricEig : public ::testing::Test {};
TYPED_TEST_SUITE(SymmetricEig, Precisions);

// A symmetric/Hermitian input of which only the `uplo` triangle is meaningful: the other triangle
// holds a large value (the GPU must not read it) and, for complex, the diagonal an imaginary part
// LAPACK ignores. Returns the caller's buffer and the matrix it stands for.
template <class T> std::pair<std::vector<T>, Mat> sym_input(int n, int ld, char uplo, uint64_t seed) {
  std::vector<T> a = random_matrix<T>(ld, n, ld, seed);
  Mat full(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const bool stored = uplo == 'U' ? i <= j : i >= j;
      if (!stored) a[size_t(i + j * ld)] = T(1000);
    }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const bool stored = uplo == 'U' ? i <= j : i >= j;
      const cd x = to_cd(a[size_t(i + j * ld)]);
      if (i == j) full(i, i) = cd(x.real(), 0.0);
      else if (stored) {
        full(i, j) = x;
        full(j, i) = std::conj(x);
      }
    }
  if constexpr (is_complex_v<T>)
    for (int i = 0; i < n; ++i) a[size_t(i + i * ld)] = T(a[size_t(i + i * ld)].real(), real_t<T>(0.25));
  return {a, full};
}


// =====================================================================================================
// syevd / heevd and syev / heev
// =====================================================================================================
template <class T> struct SymEig {
  std::vector<T> a, work;
  std::vector<real_t<T>> w, rwork;
  std::vector<int> iwork;
  int info = -99;
  // A copy of a0, w (n entries) filled with w0, the workspaces zeroed at the sizes given.
  void fresh(const std::vector<T>& a0, int n, real_t<T> w0, size_t lwork, size_t lrwork, size_t liwork) {
    a = a0;
    w.assign(size_t(n), w0);
    work.assign(lwork, T(0));
    rwork.assign(lrwork, real_t<T>(0));
    iwork.assign(liwork, 0);
  }
};

// d: syevd/heevd, else syev/heev. Negative sizes are passed as given (workspace queries).
template <class T> void call_sym(bool gpu, bool d, char jobz, char uplo, int n, int lda, SymEig<T>& b, int lwork,
                                 int lrwork, int liwork) {
  using R = real_t<T>;
  if (d) {
    const std::string nm = lapack_name<T>("syevd", "heevd");
    if constexpr (!is_complex_v<T>) {
      using F = void (*)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, int*, const int*, int*, L, L);
      fn<F>(gpu, nm)(&jobz, &uplo, &n, b.a.data(), &lda, b.w.data(), b.work.data(), &lwork, b.iwork.data(), &liwork, &b.info, 1, 1);
    } else {
      using F = void (*)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, R*, const int*, int*,
                         const int*, int*, L, L);
      fn<F>(gpu, nm)(&jobz, &uplo, &n, b.a.data(), &lda, b.w.data(), b.work.data(), &lwork, b.rwork.data(), &lrwork,
                     b.iwork.data(), &liwork, &b.info, 1, 1);
    }
  } else {
    const std::string nm = lapack_name<T>("syev", "heev");
    if constexpr (!is_complex_v<T>) {
      using F = void (*)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, int*, L, L);
      fn<F>(gpu, nm)(&jobz, &uplo, &n, b.a.data(), &lda, b.w.data(), b.work.data(), &lwork, &b.info, 1, 1);
    } else {
      using F = void (*)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, R*, int*, L, L);
      fn<F>(gpu, nm)(&jobz, &uplo, &n, b.a.data(), &lda, b.w.data(), b.work.data(), &lwork, b.rwork.data(), &b.info, 1, 1);
    }
  }
}

template <class T> void check_sym_eig(bool d, char jobz, char uplo, int n, int lda) {
  SCOPED_TRACE(std::string(d ? "syevd" : "syev") + " jobz=" + jobz + " uplo=" + uplo + " n=" + std::to_string(n) +
               " lda=" + std::to_string(lda));
  auto [a0, full] = sym_input<T>(n, lda, uplo, 11);
  // Workspace sizes from the CPU library; the intercepted query must give the same and stay on the CPU.
  SymEig<T> q, qg;
  for (SymEig<T>* x : {&q, &qg}) x->fresh(a0, n, 0, 1, 1, 1);
  call_sym<T>(false, d, jobz, uplo, n, lda, q, -1, -1, -1);
  call_sym<T>(true, d, jobz, uplo, n, lda, qg, -1, -1, -1);
  expect_not_on_gpu();
  EXPECT_EQ(qg.work[0], q.work[0]);
  const int lwork = size_of(q.work[0]), lrwork = d ? std::max(1, int(q.rwork[0])) : std::max(1, 3 * n - 2);
  const int liwork = std::max(1, q.iwork[0]);

  SymEig<T> g, c;
  for (SymEig<T>* x : {&g, &c}) x->fresh(a0, n, -7, size_t(lwork), size_t(lrwork), size_t(liwork));
  call_sym<T>(true, d, jobz, uplo, n, lda, g, lwork, lrwork, liwork);
  EXPECT_RAN_ON_GPU();
  call_sym<T>(false, d, jobz, uplo, n, lda, c, lwork, lrwork, liwork);

  EXPECT_EQ(c.info, 0);
  EXPECT_EQ(g.info, c.info);
  EXPECT_LE(rel_diff(g.w.data(), c.w.data(), n, 1, n), tolerance<T>());
  for (int i = 1; i < n; ++i) EXPECT_LE(g.w[size_t(i - 1)], g.w[size_t(i)]) << "ascending at " << i;
  EXPECT_EQ(g.work[0], c.work[0]);
  if (d) {
    EXPECT_EQ(g.iwork[0], c.iwork[0]);
    if constexpr (is_complex_v<T>) { EXPECT_EQ(g.rwork[0], c.rwork[0]); }
  }
  EXPECT_TRUE(gaps_untouched(g.a, a0, n, n, lda));
  if (jobz == 'V') {
    const Mat v = from(g.a.data(), n, n, lda);
    std::vector<cd> w(g.w.begin(), g.w.end());
    EXPECT_LE(eig_residual(full, v, w), tolerance<T>());
    EXPECT_LE(orth_err(v), tolerance<T>());
  } else {
    EXPECT_TRUE(other_triangle_untouched(g.a, a0, n, lda, uplo));
    EXPECT_DESTROYED_AS_CPU(g.a, c.a, a0, n, n, lda);
  }
}

TYPED_TEST(SymmetricEig, SyevdHeevd) {
  for (char jobz : {'N', 'V'})
    for (char uplo : {'U', 'L'})
      for (int pad : {0, 3}) check_sym_eig<TypeParam>(true, jobz, uplo, 67, 67 + pad);
}

TYPED_TEST(SymmetricEig, SyevHeev) {
  for (char jobz : {'N', 'V'})
    for (char uplo : {'U', 'L'})
      for (int pad : {0, 3}) check_sym_eig<TypeParam>(false, jobz, uplo, 67, 67 + pad);
}

// Argument errors are the CPU library's to report (xerbla), queries and n = 1 stay on the CPU.
TYPED_TEST(SymmetricEig, SyevdCpuCases) {
  using T = TypeParam;
  const int n = 20;
  auto [a0, full] = sym_input<T>(n, n, 'U', 3);
  (void)full;
  struct Case {
    int n, lda, lwork;
  } cases[] = {{n, n - 1, 5000}, {n, n, 3}, {1, 1, 5000}, {0, 1, 5000}};
  for (const Case& k : cases) {
    SCOPED_TRACE("n=" + std::to_string(k.n) + " lda=" + std::to_string(k.lda) + " lwork=" + std::to_string(k.lwork));
    SymEig<T> g, c;
    for (SymEig<T>* x : {&g, &c}) x->fresh(a0, n, 0, 5000, 5000, 500);
    call_sym<T>(true, true, 'V', 'U', k.n, k.lda, g, k.lwork, 5000, 500);
    expect_not_on_gpu();
    call_sym<T>(false, true, 'V', 'U', k.n, k.lda, c, k.lwork, 5000, 500);
    EXPECT_EQ(g.info, c.info);
  }
}

// A NaN in the referenced triangle sends the call to the CPU (LAPACK's NaN behaviour is its own).
TYPED_TEST(SymmetricEig, SyevdNaNStaysOnCpu) {
  using T = TypeParam;
  const int n = 30;
  auto [a0, full] = sym_input<T>(n, n, 'L', 5);
  (void)full;
  a0[size_t(7 + 3 * n)] = T(std::numeric_limits<real_t<T>>::quiet_NaN());
  SymEig<T> g, c;
  for (SymEig<T>* x : {&g, &c}) x->fresh(a0, n, 0, 20000, 20000, 1000);
  call_sym<T>(true, true, 'V', 'L', n, n, g, 20000, 20000, 1000);
  expect_not_on_gpu();
  call_sym<T>(false, true, 'V', 'L', n, n, c, 20000, 20000, 1000);
  EXPECT_EQ(g.info, c.info);
}

// =====================================================================================================
// syevr / heevr
// =====================================================================================================
template <class T> struct SyevrBufs {
  std::vector<T> a, z, work;
  std::vector<real_t<T>> w, rwork;
  std::vector<int> isuppz, iwork;
  int m = -1, info = -99;
};

template <class T>
void call_syevr(bool gpu, char jobz, char range, char uplo, int n, int lda, real_t<T> vl, real_t<T> vu, int il, int iu,
                int ldz, SyevrBufs<T>& b, int lwork, int lrwork, int liwork) {
  using R = real_t<T>;
  const R abstol = 0;
  const std::string nm = lapack_name<T>("syevr", "heevr");
  if constexpr (!is_complex_v<T>) {
    using F = void (*)(const char*, const char*, const char*, const int*, T*, const int*, const R*, const R*, const int*,
                       const int*, const R*, int*, R*, T*, const int*, int*, T*, const int*, int*, const int*, int*, L, L, L);
    fn<F>(gpu, nm)(&jobz, &range, &uplo, &n, b.a.data(), &lda, &vl, &vu, &il, &iu, &abstol, &b.m, b.w.data(),
                   b.z.data(), &ldz, b.isuppz.data(), b.work.data(), &lwork, b.iwork.data(), &liwork, &b.info, 1, 1, 1);
  } else {
    using F = void (*)(const char*, const char*, const char*, const int*, T*, const int*, const R*, const R*, const int*,
                       const int*, const R*, int*, R*, T*, const int*, int*, T*, const int*, R*, const int*, int*,
                       const int*, int*, L, L, L);
    fn<F>(gpu, nm)(&jobz, &range, &uplo, &n, b.a.data(), &lda, &vl, &vu, &il, &iu, &abstol, &b.m, b.w.data(),
                   b.z.data(), &ldz, b.isuppz.data(), b.work.data(), &lwork, b.rwork.data(), &lrwork, b.iwork.data(),
                   &liwork, &b.info, 1, 1, 1);
  }
}

template <class T> void check_syevr(char jobz, char range, char uplo, int n, int lda, int ldz, int il, int iu) {
  using R = real_t<T>;
  SCOPED_TRACE(std::string("syevr jobz=") + jobz + " range=" + range + " uplo=" + uplo + " lda=" + std::to_string(lda) +
               " ldz=" + std::to_string(ldz) + " il=" + std::to_string(il) + " iu=" + std::to_string(iu));
  auto [a0, full] = sym_input<T>(n, lda, uplo, 21);
  auto fresh = [&](SyevrBufs<T>& x, int lwork, int lrwork, int liwork) {
    x.a = a0;
    x.z = random_matrix<T>(ldz, n, ldz, 99);  // a pattern: untouched columns and gaps must keep it
    x.w.assign(size_t(n), R(-7));
    x.isuppz.assign(size_t(2 * n), -5);
    x.work.assign(size_t(lwork), T(0));
    x.rwork.assign(size_t(lrwork), R(0));
    x.iwork.assign(size_t(liwork), 0);
  };
  // The interval (vl, vu] is put between the CPU's 10th/11th and 40th/41st eigenvalues.
  R vl = 0, vu = 0;
  if (range == 'V') {
    SyevrBufs<T> all;
    fresh(all, 100 * n, 100 * n, 20 * n);
    call_syevr<T>(false, 'N', 'A', uplo, n, lda, 0, 0, 0, 0, ldz, all, 100 * n, 100 * n, 20 * n);
    vl = (all.w[9] + all.w[10]) / 2;
    vu = (all.w[39] + all.w[40]) / 2;
  }
  SyevrBufs<T> q;
  fresh(q, 1, 1, 1);
  call_syevr<T>(false, jobz, range, uplo, n, lda, vl, vu, il, iu, ldz, q, -1, -1, -1);
  const int lwork = size_of(q.work[0]), lrwork = std::max(1, int(q.rwork[0])), liwork = std::max(1, q.iwork[0]);

  SyevrBufs<T> g, c;
  fresh(g, lwork, lrwork, liwork);
  fresh(c, lwork, lrwork, liwork);
  call_syevr<T>(true, jobz, range, uplo, n, lda, vl, vu, il, iu, ldz, g, lwork, lrwork, liwork);
  EXPECT_RAN_ON_GPU();
  call_syevr<T>(false, jobz, range, uplo, n, lda, vl, vu, il, iu, ldz, c, lwork, lrwork, liwork);

  EXPECT_EQ(c.info, 0);
  EXPECT_EQ(g.info, c.info);
  ASSERT_EQ(g.m, c.m);
  const int m = g.m;
  EXPECT_EQ(m, range == 'A' ? n : range == 'I' ? iu - il + 1 : 30);
  EXPECT_LE(rel_diff(g.w.data(), c.w.data(), m, 1, m), tolerance<T>());
  EXPECT_EQ(g.work[0], c.work[0]);
  EXPECT_EQ(g.iwork[0], c.iwork[0]);
  if constexpr (is_complex_v<T>) { EXPECT_EQ(g.rwork[0], c.rwork[0]); }
  EXPECT_TRUE(gaps_untouched(g.a, a0, n, n, lda));
  EXPECT_TRUE(other_triangle_untouched(g.a, a0, n, lda, uplo));
  EXPECT_DESTROYED_AS_CPU(g.a, c.a, a0, n, n, lda);
  const std::vector<T> z0 = random_matrix<T>(ldz, n, ldz, 99);
  if (jobz == 'V') {
    EXPECT_TRUE(gaps_untouched(g.z, z0, n, n, ldz));
    for (int j = m; j < n; ++j)
      EXPECT_EQ(std::memcmp(&g.z[size_t(j * ldz)], &z0[size_t(j * ldz)], sizeof(T) * size_t(n)), 0) << "column " << j;
    const Mat v = from(g.z.data(), n, m, ldz);
    std::vector<cd> w(g.w.begin(), g.w.begin() + m);
    EXPECT_LE(eig_residual(full, v, w), tolerance<T>());
    EXPECT_LE(orth_err(v), tolerance<T>());
    const bool support = range == 'A' || (range == 'I' && il == 1 && iu == n);
    if (support) {
      // isuppz: each eigenvector is zero outside [isuppz(2j-1), isuppz(2j)] (LAPACK's own values
      // describe the tridiagonal eigenvectors, so they are not compared).
      for (int j = 0; j < m; ++j) {
        const int lo = g.isuppz[size_t(2 * j)], hi = g.isuppz[size_t(2 * j + 1)];
        EXPECT_TRUE(lo >= 1 && lo <= hi && hi <= n) << "vector " << j;
        for (int i = 0; i < n; ++i)
          if (i + 1 < lo || i + 1 > hi) { EXPECT_EQ(g.z[size_t(i + j * ldz)], T(0)); }
      }
    } else {
      EXPECT_EQ(g.isuppz, c.isuppz);  // neither writes it outside the dstemr cases
    }
  } else {
    EXPECT_EQ(std::memcmp(g.z.data(), z0.data(), sizeof(T) * z0.size()), 0);  // Z not referenced
  }
}

TYPED_TEST(SymmetricEig, SyevrHeevr) {
  const int n = 67;
  for (char jobz : {'N', 'V'})
    for (char uplo : {'U', 'L'})
      for (int pad : {0, 2}) {
        check_syevr<TypeParam>(jobz, 'A', uplo, n, n + pad, n + pad, 0, 0);
        check_syevr<TypeParam>(jobz, 'V', uplo, n, n + pad, n + 2 * pad, 0, 0);
        check_syevr<TypeParam>(jobz, 'I', uplo, n, n + pad, n + pad, 10, 40);
        check_syevr<TypeParam>(jobz, 'I', uplo, n, n + pad, n, 1, n);
      }
}

// ILP64 names: 64-bit info, m, iwork[0] and isuppz. Needs a CPU library exporting them: an OpenBLAS built with
// SYMBOLSUFFIX=64_ (dsyevd_64_), or NumPy's scipy-openblas64 named by GOFL_TEST_OPENBLAS64 (scipy_dsyevd_64_).
TEST(SymmetricEigIlp64, SyevdSyevr) {
  using I = int64_t;
  const gpu_test::Ilp64Lib lib = gpu_test::ilp64_lib({"dsyevd", "dsyevr"});
  if (!lib.handle) GTEST_SKIP() << "no CPU library exports ILP64 LAPACK names (dsyevd_64_, or scipy_dsyevd_64_ via GOFL_TEST_OPENBLAS64)";
  const I n = 67, lda = 70;
  {  // dsyevd: info, iwork[0] as int64
    using F = void (*)(const char*, const char*, const I*, double*, const I*, double*, double*, const I*, I*, const I*, I*, L, L);
    auto [a0, full] = sym_input<double>(int(n), int(lda), 'L', 81);
    double q = 0;
    I iq = 0, m1 = -1, info = -99;
    std::vector<double> w(n);
    lib.cpu<F>("dsyevd")("V", "L", &n, a0.data(), &lda, w.data(), &q, &m1, &iq, &m1, &info, 1, 1);
    const I lwork = I(q), liwork = iq;
    auto ag = a0, ac = a0;
    std::vector<double> wg(n), wc(n), workg(lwork), workc(lwork);
    std::vector<I> iwg(liwork, -3), iwc(liwork, -3);
    I ig = -99, ic = -99;
    lib.gpu<F>("dsyevd")("V", "L", &n, ag.data(), &lda, wg.data(), workg.data(), &lwork, iwg.data(), &liwork, &ig, 1, 1);
    EXPECT_RAN_ON_GPU();
    lib.cpu<F>("dsyevd")("V", "L", &n, ac.data(), &lda, wc.data(), workc.data(), &lwork, iwc.data(), &liwork, &ic, 1, 1);
    EXPECT_EQ(ig, 0);
    EXPECT_EQ(ig, ic);
    EXPECT_EQ(iwg[0], iwc[0]);
    EXPECT_EQ(workg[0], workc[0]);
    EXPECT_LE(rel_diff(wg.data(), wc.data(), n, 1, n), tolerance<double>());
    std::vector<cd> wd(wg.begin(), wg.end());
    EXPECT_LE(eig_residual(full, from(ag.data(), n, n, lda), wd), tolerance<double>());
  }
  {  // dsyevr, range 'I': m and isuppz (all eigenvectors: isuppz written) as int64
    using F = void (*)(const char*, const char*, const char*, const I*, double*, const I*, const double*, const double*,
                       const I*, const I*, const double*, I*, double*, double*, const I*, I*, double*, const I*, I*,
                       const I*, I*, L, L, L);
    auto [a0, full] = sym_input<double>(int(n), int(lda), 'U', 82);
    const double vl = 0, vu = 0, abstol = 0;
    const I il = 1, iu = n, ldz = n + 1;
    double q = 0;
    I iq = 0, m1 = -1, mq = 0, info = -99;
    std::vector<double> w(n), z(ldz * n);
    std::vector<I> isuppz(2 * n, -5);
    lib.cpu<F>("dsyevr")("V", "I", "U", &n, a0.data(), &lda, &vl, &vu, &il, &iu, &abstol, &mq, w.data(), z.data(), &ldz,
                         isuppz.data(), &q, &m1, &iq, &m1, &info, 1, 1, 1);
    const I lwork = I(q), liwork = iq;
    auto ag = a0;
    std::vector<double> wg(n), zg(ldz * n), workg(lwork);
    std::vector<I> iwg(liwork, -3), sg(2 * n, -5);
    I mg = -1, ig = -99;
    lib.gpu<F>("dsyevr")("V", "I", "U", &n, ag.data(), &lda, &vl, &vu, &il, &iu, &abstol, &mg, wg.data(), zg.data(), &ldz,
                         sg.data(), workg.data(), &lwork, iwg.data(), &liwork, &ig, 1, 1, 1);
    EXPECT_RAN_ON_GPU();
    EXPECT_EQ(ig, 0);
    EXPECT_EQ(mg, n);
    EXPECT_EQ(iwg[0], liwork);
    for (I j = 0; j < n; ++j) EXPECT_TRUE(sg[2 * j] >= 1 && sg[2 * j] <= sg[2 * j + 1] && sg[2 * j + 1] <= n);
    std::vector<cd> wd(wg.begin(), wg.end());
    EXPECT_LE(eig_residual(full, from(zg.data(), n, n, ldz), wd), tolerance<double>());
  }
}

}  // namespace
