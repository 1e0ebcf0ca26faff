// GPU generalized symmetric-definite eigensolvers (src/cuda/lapack_sygv.cpp) and inverses
// (src/cuda/lapack_inverse.cpp) against the CPU library, run under LD_PRELOAD=libgpuoffload.so
// with GPU_OFFLOAD_DEVICE=gpu: sygv/hegv, sygvd/hegvd and sygvx/hegvx for itype 1, 2, 3, jobz N/V,
// uplo U/L, ranges A/V/I, with and without gaps between columns. Eigenvalues and B's Cholesky factor
// are compared with the CPU's; eigenvectors (defined up to sign or phase) through the residual of
// their problem and LAPACK's normalisation; info, m, ifail and work[0]/rwork[0]/iwork[0] exactly;
// the triangles LAPACK does not write and the gaps must stay bit-identical.
#include <cmath>
#include <cstring>
#include <limits>

#include "dense_check.h"

namespace {

using namespace gpu_test;
using cd = std::complex<double>;
using L = size_t;  // hidden Fortran string length

// ---- residuals (dense_check.h holds the matrices) ---------------------------------------------------
// inv(b) of a well-conditioned matrix, by Gauss-Jordan with partial pivoting.
Mat inverse(Mat b) {
  const int64_t n = b.rows;
  Mat x(n, n);
  for (int64_t i = 0; i < n; ++i) x(i, i) = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::abs(b(i, k)) > std::abs(b(p, k))) p = i;
    for (int64_t j = 0; j < n; ++j) std::swap(b(k, j), b(p, j)), std::swap(x(k, j), x(p, j));
    const cd d = b(k, k);
    for (int64_t j = 0; j < n; ++j) b(k, j) /= d, x(k, j) /= d;
    for (int64_t i = 0; i < n; ++i) {
      if (i == k) continue;
      const cd f = b(i, k);
      for (int64_t j = 0; j < n; ++j) b(i, j) -= f * b(k, j), x(i, j) -= f * x(k, j);
    }
  }
  return x;
}

// A Hermitian matrix given by its uplo triangle: the other triangle holds 1000 (the GPU must not
// read it) and, for complex, the diagonal an imaginary part LAPACK ignores. `shift` added to the
// diagonal makes a positive definite B.
template <class T> std::pair<std::vector<T>, Mat> herm_input(int n, int ld, char uplo, uint64_t seed, double shift) {
  std::vector<T> a = random_matrix<T>(ld, n, ld, seed);
  Mat full(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const bool stored = uplo == 'U' ? i <= j : i >= j;
      if (!stored) {
        a[size_t(i + j * ld)] = T(1000);
        continue;
      }
      if (i == j) a[size_t(i + i * ld)] += T(real_t<T>(shift));
      const cd x = to_cd(a[size_t(i + j * ld)]);
      if (i == j) full(i, i) = cd(x.real(), 0.0);
      else full(i, j) = x, full(j, i) = std::conj(x);
    }
  if constexpr (is_complex_v<T>)
    for (int i = 0; i < n; ++i) a[size_t(i + i * ld)] = T(a[size_t(i + i * ld)].real(), real_t<T>(0.25));
  return {a, full};
}

// max |x - y| / max |y| over the uplo triangle.
template <class T> double triangle_diff(const std::vector<T>& x, const std::vector<T>& y, int n, int ld, char uplo) {
  double num = 0, den = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (uplo == 'U' ? i > j : i < j) continue;
      num = std::max(num, double(std::abs(x[size_t(i + j * ld)] - y[size_t(i + j * ld)])));
      den = std::max(den, double(std::abs(y[size_t(i + j * ld)])));
    }
  return den > 0 ? num / den : num;
}

// The residual of each eigenpair of the itype's problem and LAPACK's normalisation of Z, both
// relative to the matrices' sizes.
double gen_residual(int itype, const Mat& a, const Mat& b, const Mat& z, const std::vector<double>& w) {
  const Mat lhs = itype == 1 ? mul(a, z) : itype == 2 ? mul(a, mul(b, z)) : mul(b, mul(a, z));
  const Mat rhs = itype == 1 ? mul(b, z) : z;
  Mat r(z.rows, z.cols);
  for (int64_t j = 0; j < z.cols; ++j)
    for (int64_t i = 0; i < z.rows; ++i) r(i, j) = lhs(i, j) - rhs(i, j) * w[size_t(j)];
  double wmax = 0;
  for (double x : w) wmax = std::max(wmax, std::fabs(x));
  const double scale = std::max(maxabs(lhs), maxabs(rhs) * wmax);
  return maxabs(r) / std::max(scale, 1e-300);
}
double normalisation_error(int itype, const Mat& b, const Mat& z) {
  Mat g = itype == 3 ? mul(adj(z), mul(inverse(b), z)) : mul(adj(z), mul(b, z));
  for (int64_t i = 0; i < g.rows; ++i) g(i, i) -= 1.0;
  return maxabs(g);
}

using Precisions = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
template <class T> class GenEig : public ::testing::Test {};
TYPED_TEST_SUITE(GenEig, Precisions);

enum class Variant { Qr, Dc, Expert };  // sygv, sygvd, sygvx

template <class T> struct Bufs {
  std::vector<T> a, b, z, work;
  std::vector<real_t<T>> w, rwork;
  std::vector<int> iwork, ifail;
  int m = -5, info = -99;
};

// One call of the variant through the intercepted (gpu) or the CPU library's symbol.
template <class T>
void call(bool gpu, Variant v, int itype, char jobz, char range, char uplo, int n, int lda, int ldb, int ldz,
          real_t<T> vl, real_t<T> vu, int il, int iu, Bufs<T>& x, int lwork, int lrwork, int liwork) {
  using R = real_t<T>;
  const R abstol = 0;
  if (v == Variant::Qr) {
    const std::string nm = lapack_name<T>("sygv", "hegv");
    if constexpr (!is_complex_v<T>) {
      using F = void (*)(const int*, const char*, const char*, const int*, T*, const int*, T*, const int*, R*, T*,
                         const int*, int*, L, L);
      fn<F>(gpu, nm)(&itype, &jobz, &uplo, &n, x.a.data(), &lda, x.b.data(), &ldb, x.w.data(), x.work.data(), &lwork,
                     &x.info, 1, 1);
    } else {
      using F = void (*)(const int*, const char*, const char*, const int*, T*, const int*, T*, const int*, R*, T*,
                         const int*, R*, int*, L, L);
      fn<F>(gpu, nm)(&itype, &jobz, &uplo, &n, x.a.data(), &lda, x.b.data(), &ldb, x.w.data(), x.work.data(), &lwork,
                     x.rwork.data(), &x.info, 1, 1);
    }
  } else if (v == Variant::Dc) {
    const std::string nm = lapack_name<T>("sygvd", "hegvd");
    if constexpr (!is_complex_v<T>) {
      using F = void (*)(const int*, const char*, const char*, const int*, T*, const int*, T*, const int*, R*, T*,
                         const int*, int*, const int*, int*, L, L);
      fn<F>(gpu, nm)(&itype, &jobz, &uplo, &n, x.a.data(), &lda, x.b.data(), &ldb, x.w.data(), x.work.data(), &lwork,
                     x.iwork.data(), &liwork, &x.info, 1, 1);
    } else {
      using F = void (*)(const int*, const char*, const char*, const int*, T*, const int*, T*, const int*, R*, T*,
                         const int*, R*, const int*, int*, const int*, int*, L, L);
      fn<F>(gpu, nm)(&itype, &jobz, &uplo, &n, x.a.data(), &lda, x.b.data(), &ldb, x.w.data(), x.work.data(), &lwork,
                     x.rwork.data(), &lrwork, x.iwork.data(), &liwork, &x.info, 1, 1);
    }
  } else {
    const std::string nm = lapack_name<T>("sygvx", "hegvx");
    if constexpr (!is_complex_v<T>) {
      using F = void (*)(const int*, const char*, const char*, const char*, const int*, T*, const int*, T*, const int*,
                         const R*, const R*, const int*, const int*, const R*, int*, R*, T*, const int*, T*,
                         const int*, int*, int*, int*, L, L, L);
      fn<F>(gpu, nm)(&itype, &jobz, &range, &uplo, &n, x.a.data(), &lda, x.b.data(), &ldb, &vl, &vu, &il, &iu, &abstol,
                     &x.m, x.w.data(), x.z.data(), &ldz, x.work.data(), &lwork, x.iwork.data(), x.ifail.data(),
                     &x.info, 1, 1, 1);
    } else {
      using F = void (*)(const int*, const char*, const char*, const char*, const int*, T*, const int*, T*, const int*,
                         const R*, const R*, const int*, const int*, const R*, int*, R*, T*, const int*, T*,
                         const int*, R*, int*, int*, int*, L, L, L);
      fn<F>(gpu, nm)(&itype, &jobz, &range, &uplo, &n, x.a.data(), &lda, x.b.data(), &ldb, &vl, &vu, &il, &iu, &abstol,
                     &x.m, x.w.data(), x.z.data(), &ldz, x.work.data(), &lwork, x.rwork.data(), x.iwork.data(),
                     x.ifail.data(), &x.info, 1, 1, 1);
    }
  }
}

const char* variant_name(Variant v) { return v == Variant::Qr ? "sygv" : v == Variant::Dc ? "sygvd" : "sygvx"; }

template <class T> Bufs<T> fresh(const std::vector<T>& a0, const std::vector<T>& b0, int n, int ldz, size_t work) {
  Bufs<T> x;
  x.a = a0;
  x.b = b0;
  x.z.assign(size_t(ldz) * size_t(n), T(-3));
  x.w.assign(size_t(n), real_t<T>(-7));
  x.work.assign(std::max<size_t>(work, 1), T(0));
  x.rwork.assign(size_t(std::max(7 * n, 1 + 5 * n + 2 * n * n)), real_t<T>(0));
  x.iwork.assign(size_t(std::max(5 * n, 3 + 5 * n)), 0);
  x.ifail.assign(size_t(n), -1);
  return x;
}

template <class T>
void check_gen_eig(Variant v, int itype, char jobz, char range, char uplo, int n, int pad) {
  using R = real_t<T>;
  const int lda = n + pad, ldb = n + 2 * pad, ldz = n + pad;
  SCOPED_TRACE(std::string(variant_name(v)) + " itype=" + std::to_string(itype) + " jobz=" + jobz + " range=" + range +
               " uplo=" + uplo + " n=" + std::to_string(n) + " pad=" + std::to_string(pad));
  auto [a0, fa] = herm_input<T>(n, lda, uplo, 21 + uint64_t(itype), 0.0);
  auto [b0, fb] = herm_input<T>(n, ldb, uplo, 57, double(n));  // diagonally dominant: positive definite

  // The CPU's eigenvalues of the whole problem pick the range's bounds away from any eigenvalue.
  R vl = 0, vu = 0;
  const int il = 5, iu = n / 2;
  if (range == 'V') {
    Bufs<T> all = fresh<T>(a0, b0, n, ldz, size_t(64 * n + 64));
    call<T>(false, Variant::Dc, itype, 'N', 'A', uplo, n, lda, ldb, ldz, 0, 0, 0, 0, all, 64 * n + 64, int(all.rwork.size()),
            int(all.iwork.size()));
    ASSERT_EQ(all.info, 0);
    vl = (all.w[9] + all.w[10]) / 2;
    vu = (all.w[size_t(n - 12)] + all.w[size_t(n - 11)]) / 2;
  }

  // Workspace sizes from the CPU library; the intercepted query gives the same and stays on the CPU.
  Bufs<T> q = fresh<T>(a0, b0, n, ldz, 1), qg = fresh<T>(a0, b0, n, ldz, 1);
  call<T>(false, v, itype, jobz, range, uplo, n, lda, ldb, ldz, vl, vu, il, iu, q, -1, -1, -1);
  call<T>(true, v, itype, jobz, range, uplo, n, lda, ldb, ldz, vl, vu, il, iu, qg, -1, -1, -1);
  EXPECT_NE(last_call().device, 1);
  ASSERT_EQ(q.info, 0);
  EXPECT_EQ(qg.work[0], q.work[0]);
  const int lwork = int(std::real(q.work[0]));
  const int lrwork = v == Variant::Dc ? std::max(1, int(q.rwork[0])) : int(q.rwork.size());
  const int liwork = v == Variant::Dc ? std::max(1, q.iwork[0]) : int(q.iwork.size());

  Bufs<T> g = fresh<T>(a0, b0, n, ldz, size_t(lwork)), c = fresh<T>(a0, b0, n, ldz, size_t(lwork));
  call<T>(true, v, itype, jobz, range, uplo, n, lda, ldb, ldz, vl, vu, il, iu, g, lwork, lrwork, liwork);
  EXPECT_RAN_ON_GPU();
  call<T>(false, v, itype, jobz, range, uplo, n, lda, ldb, ldz, vl, vu, il, iu, c, lwork, lrwork, liwork);

  ASSERT_EQ(c.info, 0);
  EXPECT_EQ(g.info, c.info);
  const int m = v == Variant::Expert ? c.m : n;
  if (v == Variant::Expert) {
    EXPECT_EQ(g.m, c.m);
    if (range == 'I') { EXPECT_EQ(c.m, iu - il + 1); }
    if (range == 'V') { EXPECT_EQ(c.m, n - 21); }  // w[10] .. w[n-12]
  }
  ASSERT_EQ(v == Variant::Expert ? g.m : n, m);
  EXPECT_LE(rel_diff(g.w.data(), c.w.data(), m, 1, m), tolerance<T>());
  for (int i = 1; i < m; ++i) EXPECT_LE(g.w[size_t(i - 1)], g.w[size_t(i)]) << "ascending at " << i;
  for (int i = m; i < n; ++i) EXPECT_EQ(g.w[size_t(i)], R(-7)) << "w beyond m written at " << i;
  // work[0] / rwork[0] / iwork[0] as the CPU library leaves them after the run.
  EXPECT_EQ(g.work[0], c.work[0]);
  if (v == Variant::Dc) {
    EXPECT_EQ(g.iwork[0], c.iwork[0]);
    if constexpr (is_complex_v<T>) { EXPECT_EQ(g.rwork[0], c.rwork[0]); }
  }
  // B: its Cholesky factor in the uplo triangle, the rest untouched.
  EXPECT_LE(triangle_diff(g.b, c.b, n, ldb, uplo), tolerance<T>());
  EXPECT_TRUE(other_triangle_untouched(g.b, b0, n, ldb, uplo));
  EXPECT_TRUE(gaps_untouched(g.b, b0, n, n, ldb));
  EXPECT_TRUE(gaps_untouched(g.a, a0, n, n, lda));

  const bool vectors_in_a = jobz == 'V' && v != Variant::Expert;
  if (!vectors_in_a) {
    EXPECT_TRUE(other_triangle_untouched(g.a, a0, n, lda, uplo));
    EXPECT_DESTROYED_AS_CPU(g.a, c.a, a0, n, n, lda);
  }
  if (jobz == 'V') {
    const Mat z = vectors_in_a ? from(g.a.data(), n, n, lda) : from(g.z.data(), n, m, ldz);
    std::vector<double> w(g.w.begin(), g.w.begin() + m);
    EXPECT_LE(gen_residual(itype, fa, fb, z, w), tolerance<T>());
    EXPECT_LE(normalisation_error(itype, fb, z), tolerance<T>());
  }
  if (v == Variant::Expert) {
    EXPECT_TRUE(gaps_untouched(g.z, c.z, n, n, ldz));
    if (jobz == 'V') {
      for (int i = 0; i < m; ++i) EXPECT_EQ(g.ifail[size_t(i)], 0) << i;
      for (int j = m; j < n; ++j) EXPECT_EQ(g.z[size_t(j * ldz)], T(-3)) << "z beyond m columns written at " << j;
    } else {
      EXPECT_EQ(g.z, c.z) << "z is not referenced for jobz N";
    }
  }
}

TYPED_TEST(GenEig, SygvHegv) {
  for (int itype : {1, 2, 3})
    for (char jobz : {'N', 'V'})
      for (char uplo : {'U', 'L'}) check_gen_eig<TypeParam>(Variant::Qr, itype, jobz, 'A', uplo, 67, itype == 2 ? 3 : 0);
}

TYPED_TEST(GenEig, SygvdHegvd) {
  for (int itype : {1, 2, 3})
    for (char jobz : {'N', 'V'})
      for (char uplo : {'U', 'L'}) check_gen_eig<TypeParam>(Variant::Dc, itype, jobz, 'A', uplo, 67, itype == 3 ? 3 : 0);
}

TYPED_TEST(GenEig, SygvxHegvx) {
  for (int itype : {1, 2, 3})
    for (char jobz : {'N', 'V'})
      for (char range : {'A', 'V', 'I'})
        for (char uplo : {'U', 'L'}) check_gen_eig<TypeParam>(Variant::Expert, itype, jobz, range, uplo, 67, uplo == 'L' ? 2 : 0);
}

// B not positive definite: the CPU library runs the call and reports its info = n + i, leaving A
// as it was; invalid arguments reach the CPU library too. The direct call of OpenBLAS is no exact
// reference here: its nested ?potrf reaches the preload library at depth 0 and, under --device
// gpu, runs on cuSOLVER, whose partial factor and NaN test differ from OpenBLAS's own (OpenBLAS's
// potrf does not see a NaN on the diagonal; cuSOLVER's does).
TYPED_TEST(GenEig, CpuCases) {
  using T = TypeParam;
  const int n = 40;
  auto [a0, fa] = herm_input<T>(n, n, 'U', 3, 0.0);
  auto [b0, fb] = herm_input<T>(n, n, 'U', 4, 0.0);  // indefinite
  (void)fa, (void)fb;
  for (Variant v : {Variant::Qr, Variant::Dc, Variant::Expert}) {
    SCOPED_TRACE(variant_name(v));
    const int big = 4 * n * n + 64 * n;
    Bufs<T> g = fresh<T>(a0, b0, n, n, size_t(big)), c = fresh<T>(a0, b0, n, n, size_t(big));
    call<T>(true, v, 1, 'V', 'A', 'U', n, n, n, n, 0, 0, 0, 0, g, big, int(g.rwork.size()), int(g.iwork.size()));
    EXPECT_NE(last_call().device, 1);
    call<T>(false, v, 1, 'V', 'A', 'U', n, n, n, n, 0, 0, 0, 0, c, big, int(c.rwork.size()), int(c.iwork.size()));
    EXPECT_GT(c.info, n);
    EXPECT_GT(g.info, n);
    EXPECT_EQ(g.a, a0) << "LAPACK returns before touching A when B is not positive definite";

    // itype 4 is invalid: xerbla's info, nothing computed.
    Bufs<T> gi = fresh<T>(a0, b0, n, n, size_t(big)), ci = fresh<T>(a0, b0, n, n, size_t(big));
    call<T>(true, v, 4, 'V', 'A', 'U', n, n, n, n, 0, 0, 0, 0, gi, big, int(gi.rwork.size()), int(gi.iwork.size()));
    EXPECT_NE(last_call().device, 1);
    call<T>(false, v, 4, 'V', 'A', 'U', n, n, n, n, 0, 0, 0, 0, ci, big, int(ci.rwork.size()), int(ci.iwork.size()));
    EXPECT_EQ(gi.info, ci.info);
    EXPECT_EQ(gi.info, -1);
  }
}

// A NaN in B's referenced triangle sends the call to the CPU.
TYPED_TEST(GenEig, NaNStaysOnCpu) {
  using T = TypeParam;
  const int n = 30;
  auto [a0, fa] = herm_input<T>(n, n, 'L', 5, 0.0);
  auto [b0, fb] = herm_input<T>(n, n, 'L', 6, double(n));
  (void)fa, (void)fb;
  b0[size_t(9 + 2 * n)] = T(std::numeric_limits<real_t<T>>::quiet_NaN());
  const int big = 4 * n * n + 64 * n;
  Bufs<T> g = fresh<T>(a0, b0, n, n, size_t(big));
  call<T>(true, Variant::Dc, 1, 'V', 'A', 'L', n, n, n, n, 0, 0, 0, 0, g, big, int(g.rwork.size()), int(g.iwork.size()));
  EXPECT_NE(last_call().device, 1) << "a NaN in B's triangle must leave the call to the CPU library";
  EXPECT_NE(last_call().reason, -1);
}

// =====================================================================================================
// trtri / potri
// =====================================================================================================
template <class T> class Inverse : public ::testing::Test {};
TYPED_TEST_SUITE(Inverse, Precisions);

template <class T> using inv2 = void (*)(const char*, const int*, T*, const int*, int*, L);              // potri
template <class T> using inv3 = void (*)(const char*, const char*, const int*, T*, const int*, int*, L, L);  // trtri

// A well-conditioned triangle (diagonal 2..3 in modulus) with 1000 in the other triangle.
template <class T> std::vector<T> triangle_input(int n, int ld, char uplo, uint64_t seed) {
  std::vector<T> a = random_matrix<T>(ld, n, ld, seed);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (uplo == 'U' ? i > j : i < j) a[size_t(i + j * ld)] = T(1000);
      else if (i != j) a[size_t(i + j * ld)] *= real_t<T>(0.5 / std::sqrt(double(n)));
    }
  for (int i = 0; i < n; ++i) a[size_t(i + i * ld)] += T(real_t<T>(std::real(a[size_t(i + i * ld)]) >= 0 ? 2 : -2));
  return a;
}

TYPED_TEST(Inverse, Trtri) {
  using T = TypeParam;
  const std::string nm = lapack_name<T>("trtri", "trtri");
  for (char uplo : {'U', 'L'})
    for (char diag : {'N', 'U'})
      for (int pad : {0, 3}) {
        const int n = 70, ld = n + pad;
        SCOPED_TRACE(std::string("uplo=") + uplo + " diag=" + diag + " pad=" + std::to_string(pad));
        const std::vector<T> a0 = triangle_input<T>(n, ld, uplo, 31);
        std::vector<T> g = a0, c = a0;
        int gi = -9, ci = -9;
        intercepted<inv3<T>>(nm.c_str())(&uplo, &diag, &n, g.data(), &ld, &gi, 1, 1);
        EXPECT_RAN_ON_GPU();
        cpu<inv3<T>>(nm.c_str())(&uplo, &diag, &n, c.data(), &ld, &ci, 1, 1);
        EXPECT_EQ(gi, 0);
        EXPECT_EQ(gi, ci);
        EXPECT_LE(triangle_diff(g, c, n, ld, uplo), tolerance<T>());
        EXPECT_TRUE(other_triangle_untouched(g, a0, n, ld, uplo));
        EXPECT_TRUE(gaps_untouched(g, a0, n, n, ld));
        if (diag == 'U') {
          for (int i = 0; i < n; ++i) { EXPECT_EQ(std::memcmp(&g[size_t(i + i * ld)], &a0[size_t(i + i * ld)], sizeof(T)), 0); }
        }
      }
  // An exact zero on the diagonal: LAPACK's info, from the CPU library.
  const int n = 40;
  const char uplo = 'L', diag = 'N';
  std::vector<T> a0 = triangle_input<T>(n, n, uplo, 32);
  a0[size_t(17 + 17 * n)] = T(0);
  std::vector<T> g = a0, c = a0;
  int gi = -9, ci = -9;
  intercepted<inv3<T>>(nm.c_str())(&uplo, &diag, &n, g.data(), &n, &gi, 1, 1);
  EXPECT_NE(last_call().device, 1);
  cpu<inv3<T>>(nm.c_str())(&uplo, &diag, &n, c.data(), &n, &ci, 1, 1);
  EXPECT_EQ(ci, 18);
  EXPECT_EQ(gi, ci);
  EXPECT_EQ(g, c);
}

TYPED_TEST(Inverse, Potri) {
  using T = TypeParam;
  const std::string potrf = lapack_name<T>("potrf", "potrf"), potri = lapack_name<T>("potri", "potri");
  for (char uplo : {'U', 'L'})
    for (int pad : {0, 2}) {
      const int n = 70, ld = n + pad;
      SCOPED_TRACE(std::string("uplo=") + uplo + " pad=" + std::to_string(pad));
      auto [b0, fb] = herm_input<T>(n, ld, uplo, 41, double(n));
      std::vector<T> f = b0;
      int info = -9;
      cpu<inv2<T>>(potrf.c_str())(&uplo, &n, f.data(), &ld, &info, 1);
      ASSERT_EQ(info, 0);
      std::vector<T> g = f, c = f;
      int gi = -9, ci = -9;
      intercepted<inv2<T>>(potri.c_str())(&uplo, &n, g.data(), &ld, &gi, 1);
      EXPECT_RAN_ON_GPU();
      cpu<inv2<T>>(potri.c_str())(&uplo, &n, c.data(), &ld, &ci, 1);
      EXPECT_EQ(gi, 0);
      EXPECT_EQ(gi, ci);
      EXPECT_LE(triangle_diff(g, c, n, ld, uplo), tolerance<T>());
      EXPECT_TRUE(other_triangle_untouched(g, f, n, ld, uplo));
      EXPECT_TRUE(gaps_untouched(g, f, n, n, ld));
    }
}

}  // namespace
