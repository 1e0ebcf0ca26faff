// GPU SVD and least squares (src/cuda/lapack_svd.cpp, lapack_gelsd.cpp: gesvd, gesdd, gelsd) against
// the CPU library, run under LD_PRELOAD=libgpuoffload.so with GPU_OFFLOAD_DEVICE=gpu: every
// precision x variant on copies of the same input. Singular values are compared with the CPU's;
// vectors through orthogonality and reconstruction; info, rank and work[0]/rwork[0]/iwork[0] exactly;
// the gaps a larger leading dimension leaves must stay bit-identical.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "dense_check.h"

namespace {

using namespace gpu_test;
using cd = std::complex<double>;
using L = size_t;  // hidden Fortran string length

using Precisions = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
template <class T> class SvdLsq : public ::testing::Test {};
TYPED_TEST_SUITE(SvdLsq, Precisions);

// =====================================================================================================
// gesvd and gesdd
// =====================================================================================================
template <class T> struct SvdBufs {
  std::vector<T> a, u, vt, work;
  std::vector<real_t<T>> s, rwork;
  std::vector<int> iwork;
  int info = -99;
};

// gesdd when jobz != 0 (then jobu/jobvt are ignored), else gesvd.
template <class T>
void call_svd(bool gpu, char jobz, char jobu, char jobvt, int m, int n, int lda, int ldu, int ldvt, SvdBufs<T>& b,
              int lwork) {
  using R = real_t<T>;
  if (jobz) {
    const std::string nm = lapack_name<T>("gesdd", "gesdd");
    if constexpr (!is_complex_v<T>) {
      using F = void (*)(const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*, const int*, T*,
                         const int*, int*, int*, L);
      fn<F>(gpu, nm)(&jobz, &m, &n, b.a.data(), &lda, b.s.data(), b.u.data(), &ldu, b.vt.data(), &ldvt, b.work.data(),
                     &lwork, b.iwork.data(), &b.info, 1);
    } else {
      using F = void (*)(const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*, const int*, T*,
                         const int*, R*, int*, int*, L);
      fn<F>(gpu, nm)(&jobz, &m, &n, b.a.data(), &lda, b.s.data(), b.u.data(), &ldu, b.vt.data(), &ldvt, b.work.data(),
                     &lwork, b.rwork.data(), b.iwork.data(), &b.info, 1);
    }
  } else {
    const std::string nm = lapack_name<T>("gesvd", "gesvd");
    if constexpr (!is_complex_v<T>) {
      using F = void (*)(const char*, const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*,
                         const int*, T*, const int*, int*, L, L);
      fn<F>(gpu, nm)(&jobu, &jobvt, &m, &n, b.a.data(), &lda, b.s.data(), b.u.data(), &ldu, b.vt.data(), &ldvt,
                     b.work.data(), &lwork, &b.info, 1, 1);
    } else {
      using F = void (*)(const char*, const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*,
                         const int*, T*, const int*, R*, int*, L, L);
      fn<F>(gpu, nm)(&jobu, &jobvt, &m, &n, b.a.data(), &lda, b.s.data(), b.u.data(), &ldu, b.vt.data(), &ldvt,
                     b.work.data(), &lwork, b.rwork.data(), &b.info, 1, 1);
    }
  }
}

// jobz = 0: gesvd with jobu/jobvt; else gesdd with jobz (mapped to where gesdd puts its vectors).
template <class T> void check_svd(char jobz, char jobu, char jobvt, int m, int n, int pad) {
  using R = real_t<T>;
  const int k = std::min(m, n), mx = std::max(m, n);
  if (jobz) {
    jobu = jobvt = jobz;
    if (jobz == 'O') {
      jobu = m >= n ? 'O' : 'A';
      jobvt = m >= n ? 'A' : 'O';
    }
  }
  SCOPED_TRACE(std::string(jobz ? "gesdd jobz=" : "gesvd") + (jobz ? std::string(1, jobz) : "") + " jobu=" + jobu +
               " jobvt=" + jobvt + " m=" + std::to_string(m) + " n=" + std::to_string(n) + " pad=" + std::to_string(pad));
  const int lda = m + pad, ldu = m + pad, ldvt = n + 2 * pad;
  const std::vector<T> a0 = random_matrix<T>(lda, n, lda, 51);
  const std::vector<T> u0 = random_matrix<T>(ldu, m, ldu, 52), vt0 = random_matrix<T>(ldvt, n, ldvt, 53);
  auto fresh = [&](SvdBufs<T>& x, int lwork) {
    x.a = a0;
    x.u = u0;
    x.vt = vt0;
    x.s.assign(size_t(k), R(-7));
    x.work.assign(size_t(lwork), T(0));
    x.rwork.assign(size_t(7 * k * k + 10 * k + 2 * mx * k + 5 * mx), R(0));
    x.iwork.assign(size_t(8 * k), 0);
  };
  SvdBufs<T> q;
  fresh(q, 1);
  call_svd<T>(false, jobz, jobu, jobvt, m, n, lda, ldu, ldvt, q, -1);
  const int lwork = size_of(q.work[0]);
  SvdBufs<T> g, c;
  fresh(g, lwork);
  fresh(c, lwork);
  call_svd<T>(true, jobz, jobu, jobvt, m, n, lda, ldu, ldvt, g, lwork);
  EXPECT_RAN_ON_GPU();
  call_svd<T>(false, jobz, jobu, jobvt, m, n, lda, ldu, ldvt, c, lwork);

  EXPECT_EQ(c.info, 0);
  EXPECT_EQ(g.info, c.info);
  EXPECT_EQ(g.work[0], c.work[0]);
  EXPECT_LE(rel_diff(g.s.data(), c.s.data(), k, 1, k), tolerance<T>());
  for (int i = 1; i < k; ++i) EXPECT_GE(g.s[size_t(i - 1)], g.s[size_t(i)]);
  EXPECT_TRUE(gaps_untouched(g.a, a0, m, n, lda));
  EXPECT_DESTROYED_AS_CPU(g.a, c.a, a0, m, n, lda);
  EXPECT_TRUE(gaps_untouched(g.u, u0, m, m, ldu));
  EXPECT_TRUE(gaps_untouched(g.vt, vt0, n, n, ldvt));

  const Mat a = from(a0.data(), m, n, lda);
  const double anorm = std::max(maxabs(a), 1e-300);
  // The vectors, wherever this job puts them.
  const bool have_u = jobu != 'N', have_vt = jobvt != 'N';
  const int ucols = jobu == 'A' ? m : k, vrows = jobvt == 'A' ? n : k;
  Mat u(m, have_u ? ucols : 0), vt(have_vt ? vrows : 0, n);
  if (jobu == 'O') u = from(g.a.data(), m, k, lda);
  else if (have_u) u = from(g.u.data(), m, ucols, ldu);
  if (jobvt == 'O') vt = from(g.a.data(), k, n, lda);
  else if (have_vt) vt = from(g.vt.data(), vrows, n, ldvt);
  if (have_u) { EXPECT_LE(orth_err(u), tolerance<T>()); }
  if (have_vt) { EXPECT_LE(orth_err(adj(vt)), tolerance<T>()); }
  if (have_u && have_vt) {
    Mat us(m, k);
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < m; ++i) us(i, j) = u(i, j) * double(g.s[size_t(j)]);
    Mat vtk(k, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < k; ++i) vtk(i, j) = vt(i, j);
    Mat r = mul(us, vtk);
    for (size_t i = 0; i < r.v.size(); ++i) r.v[i] -= a.v[i];
    EXPECT_LE(maxabs(r) / (anorm * mx), tolerance<T>());
  } else if (have_u) {  // |A^H u_j| = s_j
    const Mat ahu = mul(adj(a), u);
    for (int j = 0; j < k; ++j) {
      double nrm = 0;
      for (int i = 0; i < n; ++i) nrm += std::norm(ahu(i, j));
      EXPECT_NEAR(std::sqrt(nrm), double(g.s[size_t(j)]), tolerance<T>() * anorm * mx) << "u " << j;
    }
  } else if (have_vt) {  // |A v_j| = s_j
    const Mat av = mul(a, adj(vt));
    for (int j = 0; j < k; ++j) {
      double nrm = 0;
      for (int i = 0; i < m; ++i) nrm += std::norm(av(i, j));
      EXPECT_NEAR(std::sqrt(nrm), double(g.s[size_t(j)]), tolerance<T>() * anorm * mx) << "v " << j;
    }
  }
  // Arrays the job does not reference keep their contents.
  if (!have_u || jobu == 'O') { EXPECT_EQ(std::memcmp(g.u.data(), u0.data(), sizeof(T) * u0.size()), 0); }
  if (!have_vt || jobvt == 'O') { EXPECT_EQ(std::memcmp(g.vt.data(), vt0.data(), sizeof(T) * vt0.size()), 0); }
}

const std::pair<int, int> kShapes[] = {{67, 41}, {41, 67}, {50, 50}, {130, 20}, {20, 130}};

TYPED_TEST(SvdLsq, Gesvd) {
  for (auto [m, n] : kShapes)
    for (char ju : {'A', 'S', 'O', 'N'})
      for (char jv : {'A', 'S', 'O', 'N'}) {
        if (ju == 'O' && jv == 'O') continue;  // invalid in LAPACK
        check_svd<TypeParam>(0, ju, jv, m, n, (ju + jv) % 2 ? 3 : 0);
      }
  check_svd<TypeParam>(0, 'S', 'S', 67, 41, 2);
  check_svd<TypeParam>(0, 'A', 'A', 41, 67, 2);
}

TYPED_TEST(SvdLsq, Gesdd) {
  for (auto [m, n] : kShapes)
    for (char jz : {'A', 'S', 'O', 'N'})
      for (int pad : {0, 3}) check_svd<TypeParam>(jz, 0, 0, m, n, pad);
}

// gesvd's own argument rules: jobu = jobvt = 'O' is invalid, lwork below the minimum too; the CPU reports both.
TYPED_TEST(SvdLsq, SvdCpuCases) {
  using T = TypeParam;
  const int m = 30, n = 20;
  const std::vector<T> a0 = random_matrix<T>(m, n, m, 61);
  struct Case {
    char jz, ju, jv;
    int lwork;
  } cases[] = {{0, 'O', 'O', 5000}, {0, 'A', 'A', 3}, {'A', 0, 0, 3}, {0, 'X', 'N', 5000}};
  for (const Case& k : cases) {
    SvdBufs<T> g, c;
    for (SvdBufs<T>* x : {&g, &c}) {
      x->a = a0;
      x->u.assign(size_t(m * m), T(0));
      x->vt.assign(size_t(n * n), T(0));
      x->s.assign(size_t(n), real_t<T>(0));
      x->work.assign(5000, T(0));
      x->rwork.assign(20000, real_t<T>(0));
      x->iwork.assign(size_t(8 * n), 0);
    }
    call_svd<T>(true, k.jz, k.ju, k.jv, m, n, m, m, n, g, k.lwork);
    expect_not_on_gpu();
    call_svd<T>(false, k.jz, k.ju, k.jv, m, n, m, m, n, c, k.lwork);
    EXPECT_EQ(g.info, c.info);
    EXPECT_LT(c.info, 0);
  }
}

// =====================================================================================================
// gelsd
// =====================================================================================================
template <class T> struct LsqBufs {
  std::vector<T> a, b, work;
  std::vector<real_t<T>> s, rwork;
  std::vector<int> iwork;
  int rank = -1, info = -99;
};

template <class T>
void call_gelsd(bool gpu, int m, int n, int nrhs, int lda, int ldb, real_t<T> rcond, LsqBufs<T>& x, int lwork) {
  using R = real_t<T>;
  const std::string nm = lapack_name<T>("gelsd", "gelsd");
  if constexpr (!is_complex_v<T>) {
    using F = void (*)(const int*, const int*, const int*, T*, const int*, T*, const int*, R*, const R*, int*, T*,
                       const int*, int*, int*);
    fn<F>(gpu, nm)(&m, &n, &nrhs, x.a.data(), &lda, x.b.data(), &ldb, x.s.data(), &rcond, &x.rank, x.work.data(),
                   &lwork, x.iwork.data(), &x.info);
  } else {
    using F = void (*)(const int*, const int*, const int*, T*, const int*, T*, const int*, R*, const R*, int*, T*,
                       const int*, R*, int*, int*);
    fn<F>(gpu, nm)(&m, &n, &nrhs, x.a.data(), &lda, x.b.data(), &ldb, x.s.data(), &rcond, &x.rank, x.work.data(),
                   &lwork, x.rwork.data(), x.iwork.data(), &x.info);
  }
}

// rank_k > 0: A = B C with inner dimension rank_k (rank-deficient).
template <class T> void check_gelsd(int m, int n, int nrhs, int rank_k, real_t<T> rcond, int pad) {
  using R = real_t<T>;
  SCOPED_TRACE("gelsd m=" + std::to_string(m) + " n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs) +
               " rank_k=" + std::to_string(rank_k) + " rcond=" + std::to_string(double(rcond)) + " pad=" + std::to_string(pad));
  const int k = std::min(m, n), mx = std::max(m, n), lda = m + pad, ldb = mx + pad;
  std::vector<T> a0 = random_matrix<T>(lda, n, lda, 71);
  if (rank_k > 0) {
    const Mat bb = from(random_matrix<T>(m, rank_k, m, 72).data(), m, rank_k, m);
    const Mat cc = from(random_matrix<T>(rank_k, n, rank_k, 73).data(), rank_k, n, rank_k);
    const Mat p = mul(bb, cc);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        if constexpr (is_complex_v<T>) a0[size_t(i + j * lda)] = T(R(p(i, j).real()), R(p(i, j).imag()));
        else a0[size_t(i + j * lda)] = T(p(i, j).real());
      }
  }
  const std::vector<T> b0 = random_matrix<T>(ldb, nrhs, ldb, 74);
  auto fresh = [&](LsqBufs<T>& x, int lwork, int lrwork, int liwork) {
    x.a = a0;
    x.b = b0;
    x.s.assign(size_t(k), R(-7));
    x.work.assign(size_t(lwork), T(0));
    x.rwork.assign(size_t(lrwork), R(0));
    x.iwork.assign(size_t(liwork), 0);
  };
  LsqBufs<T> q;
  fresh(q, 1, 1, 1);
  call_gelsd<T>(false, m, n, nrhs, lda, ldb, rcond, q, -1);
  const int lwork = size_of(q.work[0]), lrwork = std::max(1, int(q.rwork[0])), liwork = std::max(1, q.iwork[0]);
  LsqBufs<T> g, c;
  fresh(g, lwork, lrwork, liwork);
  fresh(c, lwork, lrwork, liwork);
  call_gelsd<T>(true, m, n, nrhs, lda, ldb, rcond, g, lwork);
  EXPECT_RAN_ON_GPU();
  call_gelsd<T>(false, m, n, nrhs, lda, ldb, rcond, c, lwork);

  EXPECT_EQ(c.info, 0);
  EXPECT_EQ(g.info, c.info);
  EXPECT_EQ(g.rank, c.rank);
  EXPECT_EQ(c.rank, rank_k > 0 ? rank_k : k);
  EXPECT_EQ(g.work[0], c.work[0]);
  EXPECT_EQ(g.iwork[0], c.iwork[0]);
  if constexpr (is_complex_v<T>) { EXPECT_EQ(g.rwork[0], c.rwork[0]); }
  EXPECT_LE(rel_diff(g.s.data(), c.s.data(), k, 1, k), tolerance<T>());
  // The minimum-norm solution is unique: compare it (rows 1..n) with the CPU's.
  EXPECT_LE(rel_diff(g.b.data(), c.b.data(), n, nrhs, ldb), 10 * tolerance<T>());
  // Full column rank, m > n: rows n+1..m hold the residual's components (NumPy sums their squares).
  if (m > n && c.rank == n)
    for (int j = 0; j < nrhs; ++j) {
      double rg = 0, rc = 0;
      for (int i = n; i < m; ++i) {
        rg += std::norm(to_cd(g.b[size_t(i + j * ldb)]));
        rc += std::norm(to_cd(c.b[size_t(i + j * ldb)]));
      }
      EXPECT_NEAR(rg, rc, tolerance<T>() * rc) << "residual of column " << j;
    }
  EXPECT_TRUE(gaps_untouched(g.b, b0, mx, nrhs, ldb));
  EXPECT_TRUE(gaps_untouched(g.a, a0, m, n, lda));
  EXPECT_DESTROYED_AS_CPU(g.a, c.a, a0, m, n, lda);
}

TYPED_TEST(SvdLsq, Gelsd) {
  using R = real_t<TypeParam>;
  for (int pad : {0, 2})
    for (int nrhs : {1, 3}) {
      check_gelsd<TypeParam>(90, 41, nrhs, 0, R(-1), pad);   // overdetermined
      check_gelsd<TypeParam>(41, 90, nrhs, 0, R(-1), pad);   // underdetermined: minimum norm
      check_gelsd<TypeParam>(50, 50, nrhs, 0, R(0), pad);    // square; rcond 0 means eps too
      check_gelsd<TypeParam>(90, 41, nrhs, 17, R(1e-3), pad);  // rank-deficient
      check_gelsd<TypeParam>(41, 90, nrhs, 17, R(1e-3), pad);
    }
}
// Q^H B and Q [y; 0] by the compact-WY route that sizes beyond int take (130 reflectors: three blocks).
TYPED_TEST(SvdLsq, Gelsd64BitRoute) {
  using R = real_t<TypeParam>;
  const gpu_test::Qr64Route route;
  for (int nrhs : {1, 3}) {
    check_gelsd<TypeParam>(170, 130, nrhs, 0, R(-1), 2);
    check_gelsd<TypeParam>(130, 170, nrhs, 0, R(-1), 0);
    check_gelsd<TypeParam>(170, 130, nrhs, 60, R(1e-3), 0);
  }
}

// ILP64 names: 64-bit info, rank and iwork[0]. Needs a CPU library exporting them: an OpenBLAS built with
// SYMBOLSUFFIX=64_ (dgesdd_64_), or NumPy's scipy-openblas64 named by GOFL_TEST_OPENBLAS64 (scipy_dgesdd_64_).
TEST(SvdLsqIlp64, GesddGelsd) {
  using I = int64_t;
  const gpu_test::Ilp64Lib lib = gpu_test::ilp64_lib({"dgesdd", "dgelsd"});
  if (!lib.handle) GTEST_SKIP() << "no CPU library exports ILP64 LAPACK names (dgesdd_64_, or scipy_dgesdd_64_ via GOFL_TEST_OPENBLAS64)";
  {  // dgesdd jobz='S'
    using F = void (*)(const char*, const I*, const I*, double*, const I*, double*, double*, const I*, double*, const I*,
                       double*, const I*, I*, I*, L);
    const I m = 67, nn = 41, ld = 67;
    const auto a0 = random_matrix<double>(ld, nn, ld, 83);
    double q = 0;
    I m1 = -1, info = -99;
    std::vector<double> s(nn), u(ld * nn), vt(nn * nn);
    std::vector<I> iw(8 * nn);
    auto t = a0;
    lib.cpu<F>("dgesdd")("S", &m, &nn, t.data(), &ld, s.data(), u.data(), &ld, vt.data(), &nn, &q, &m1, iw.data(), &info, 1);
    const I lwork = I(q);
    auto ag = a0, ac = a0;
    std::vector<double> sg(nn), sc(nn), ug(ld * nn), uc(ld * nn), vtg(nn * nn), vtc(nn * nn), wg(lwork), wc(lwork);
    I ig = -99, ic = -99;
    lib.gpu<F>("dgesdd")("S", &m, &nn, ag.data(), &ld, sg.data(), ug.data(), &ld, vtg.data(), &nn, wg.data(), &lwork, iw.data(), &ig, 1);
    EXPECT_RAN_ON_GPU();
    lib.cpu<F>("dgesdd")("S", &m, &nn, ac.data(), &ld, sc.data(), uc.data(), &ld, vtc.data(), &nn, wc.data(), &lwork, iw.data(), &ic, 1);
    EXPECT_EQ(ig, 0);
    EXPECT_EQ(ig, ic);
    EXPECT_EQ(wg[0], wc[0]);
    EXPECT_LE(rel_diff(sg.data(), sc.data(), nn, 1, nn), tolerance<double>());
    EXPECT_LE(orth_err(from(ug.data(), m, nn, ld)), tolerance<double>());
  }
  {  // dgelsd: rank and iwork[0] as int64
    using F = void (*)(const I*, const I*, const I*, double*, const I*, double*, const I*, double*, const double*, I*,
                       double*, const I*, I*, I*);
    const I m = 90, nn = 41, nrhs = 2, ldb = 90;
    const auto a0 = random_matrix<double>(m, nn, m, 84), b0 = random_matrix<double>(ldb, nrhs, ldb, 85);
    const double rcond = -1;
    double q = 0;
    I m1 = -1, iq = 0, rank = -1, info = -99;
    std::vector<double> s(nn);
    auto ta = a0, tb = b0;
    lib.cpu<F>("dgelsd")(&m, &nn, &nrhs, ta.data(), &m, tb.data(), &ldb, s.data(), &rcond, &rank, &q, &m1, &iq, &info);
    const I lwork = I(q), liwork = iq;
    auto ag = a0, ac = a0, bg = b0, bc = b0;
    std::vector<double> sg(nn), sc(nn), wg(lwork), wc(lwork);
    std::vector<I> iwg(liwork), iwc(liwork);
    I rg = -1, rc = -1, ig = -99, ic = -99;
    lib.gpu<F>("dgelsd")(&m, &nn, &nrhs, ag.data(), &m, bg.data(), &ldb, sg.data(), &rcond, &rg, wg.data(), &lwork, iwg.data(), &ig);
    EXPECT_RAN_ON_GPU();
    lib.cpu<F>("dgelsd")(&m, &nn, &nrhs, ac.data(), &m, bc.data(), &ldb, sc.data(), &rcond, &rc, wc.data(), &lwork, iwc.data(), &ic);
    EXPECT_EQ(ig, 0);
    EXPECT_EQ(ig, ic);
    EXPECT_EQ(rg, rc);
    EXPECT_EQ(iwg[0], iwc[0]);
    EXPECT_EQ(wg[0], wc[0]);
    EXPECT_LE(rel_diff(bg.data(), bc.data(), nn, nrhs, ldb), 10 * tolerance<double>());
  }
}

}  // namespace
