// GPU nonsymmetric eigensolvers (src/cuda/lapack_geev.cpp, lapack_geevx.cpp: geev, geevx) against
// the CPU library, run under LD_PRELOAD=libgpuoffload.so with GPU_OFFLOAD_DEVICE=gpu: every
// precision x variant on copies of the same input. Eigenvalues are matched with the CPU's; vectors
// (defined up to a scale) through residuals, and geevx's against the CPU's as LAPACK normalises them;
// info and work[0] exactly; what geevx leaves to the CPU library (balancing, back-transform)
// bit-identical; the gaps a larger leading dimension leaves must stay bit-identical.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "dense_check.h"

namespace {

using namespace gpu_test;
using cd = std::complex<double>;
using L = size_t;  // hidden Fortran string length

using Precisions = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
template <class T> class NonsymmetricEig : public ::testing::Test {};
TYPED_TEST_SUITE(NonsymmetricEig, Precisions);

// =====================================================================================================
// geev
// =====================================================================================================
template <class T> struct GeevBufs {
  std::vector<T> a, vl, vr, work, w;
  std::vector<real_t<T>> wr, wi, rwork;
  int info = -99;
  // A copy of a0, VL and VR random (their gaps are checked), the rest zeroed; lwork entries of work.
  void fresh(const std::vector<T>& a0, int64_t n, int64_t ldvl, int64_t ldvr, int64_t lwork) {
    a = a0;
    vl = random_matrix<T>(ldvl, n, ldvl, 41);
    vr = random_matrix<T>(ldvr, n, ldvr, 42);
    w.assign(size_t(n), T(0));
    wr.assign(size_t(n), real_t<T>(0));
    wi.assign(size_t(n), real_t<T>(0));
    work.assign(size_t(lwork), T(0));
    rwork.assign(size_t(2 * n), real_t<T>(0));
  }
};

template <class T>
void call_geev(bool gpu, char jobvl, char jobvr, int n, int lda, int ldvl, int ldvr, GeevBufs<T>& b, int lwork) {
  using R = real_t<T>;
  const std::string nm = lapack_name<T>("geev", "geev");
  if constexpr (!is_complex_v<T>) {
    using F = void (*)(const char*, const char*, const int*, T*, const int*, R*, R*, T*, const int*, T*, const int*, T*,
                       const int*, int*, L, L);
    fn<F>(gpu, nm)(&jobvl, &jobvr, &n, b.a.data(), &lda, b.wr.data(), b.wi.data(), b.vl.data(), &ldvl, b.vr.data(),
                   &ldvr, b.work.data(), &lwork, &b.info, 1, 1);
  } else {
    using F = void (*)(const char*, const char*, const int*, T*, const int*, T*, T*, const int*, T*, const int*, T*,
                       const int*, R*, int*, L, L);
    fn<F>(gpu, nm)(&jobvl, &jobvr, &n, b.a.data(), &lda, b.w.data(), b.vl.data(), &ldvl, b.vr.data(), &ldvr,
                   b.work.data(), &lwork, b.rwork.data(), &b.info, 1, 1);
  }
}

template <class T> std::vector<cd> eigenvalues(const GeevBufs<T>& b, int n) {
  std::vector<cd> w(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) w[size_t(i)] = is_complex_v<T> ? to_cd(b.w[size_t(i)]) : cd(b.wr[size_t(i)], b.wi[size_t(i)]);
  return w;
}
// Right (or left) eigenvectors as complex columns (LAPACK's packed real form unpacked).
template <class T> Mat eigenvectors(const GeevBufs<T>& b, int n, int ld, bool left = false) {
  Mat v = from((left ? b.vl : b.vr).data(), n, n, ld);
  if constexpr (!is_complex_v<T>) {
    for (int j = 0; j < n; ++j)
      if (b.wi[size_t(j)] > 0) {
        for (int i = 0; i < n; ++i) {
          const cd re = v(i, j), im = v(i, j + 1);
          v(i, j) = re + cd(0, 1) * im;
          v(i, j + 1) = re - cd(0, 1) * im;
        }
        ++j;
      }
  }
  return v;
}
// Largest distance from each CPU eigenvalue to its nearest unused GPU one, relative to max |w|.
double match_eigenvalues(const std::vector<cd>& g, const std::vector<cd>& c) {
  std::vector<bool> used(g.size(), false);
  double worst = 0, scale = 0;
  for (const cd& x : c) scale = std::max(scale, std::abs(x));
  for (const cd& x : c) {
    size_t best = g.size();
    double d = 1e300;
    for (size_t i = 0; i < g.size(); ++i)
      if (!used[i] && std::abs(g[i] - x) < d) {
        d = std::abs(g[i] - x);
        best = i;
      }
    if (best < g.size()) used[best] = true;
    worst = std::max(worst, d);
  }
  return scale > 0 ? worst / scale : worst;
}

template <class T> void check_geev(char jobvl, char jobvr, int n, int lda, int ldvr) {
  using R = real_t<T>;
  SCOPED_TRACE(std::string("geev jobvl=") + jobvl + " jobvr=" + jobvr + " lda=" + std::to_string(lda) +
               " ldvr=" + std::to_string(ldvr));
  const std::vector<T> a0 = random_matrix<T>(lda, n, lda, 31);
  const int ldvl = jobvl == 'V' ? ldvr : n;  // the padding of ldvr, so that VL's gaps are checked too
  GeevBufs<T> q;
  q.fresh(a0, n, ldvl, ldvr, 1);
  call_geev<T>(false, jobvl, jobvr, n, lda, ldvl, ldvr, q, -1);
  const int lwork = size_of(q.work[0]);
  GeevBufs<T> g, c;
  g.fresh(a0, n, ldvl, ldvr, lwork);
  c.fresh(a0, n, ldvl, ldvr, lwork);
  call_geev<T>(true, jobvl, jobvr, n, lda, ldvl, ldvr, g, lwork);
  // Left vectors come from V^-1: single precision goes back to the CPU when V is too ill-conditioned
  // for them (lapack_geev.cpp); the results below are checked wherever the call ran.
  if (jobvl == 'N' || std::is_same_v<R, double>) EXPECT_RAN_ON_GPU();
  call_geev<T>(false, jobvl, jobvr, n, lda, ldvl, ldvr, c, lwork);

  EXPECT_EQ(c.info, 0);
  EXPECT_EQ(g.info, c.info);
  EXPECT_EQ(g.work[0], c.work[0]);
  const std::vector<cd> wg = eigenvalues(g, n), wc = eigenvalues(c, n);
  EXPECT_LE(match_eigenvalues(wg, wc), tolerance<T>());
  if constexpr (!is_complex_v<T>) {
    // LAPACK's layout: conjugate pairs adjacent, positive imaginary part first.
    for (int j = 0; j < n; ++j)
      if (g.wi[size_t(j)] != 0) {
        ASSERT_LT(j + 1, n);
        EXPECT_GT(g.wi[size_t(j)], 0);
        EXPECT_EQ(g.wi[size_t(j + 1)], -g.wi[size_t(j)]);
        EXPECT_EQ(g.wr[size_t(j + 1)], g.wr[size_t(j)]);
        ++j;
      }
  }
  EXPECT_TRUE(gaps_untouched(g.a, a0, n, n, lda));
  EXPECT_DESTROYED_AS_CPU(g.a, c.a, a0, n, n, lda);
  // LAPACK's normalisation: Euclidean norm 1, largest component real.
  auto expect_normalised = [&](const Mat& v, const char* which) {
    for (int j = 0; j < n; ++j) {
      double nrm = 0, big = -1;
      cd top;
      for (int i = 0; i < n; ++i) {
        nrm += std::norm(v(i, j));
        if (std::abs(v(i, j)) > big) {
          big = std::abs(v(i, j));
          top = v(i, j);
        }
      }
      EXPECT_NEAR(std::sqrt(nrm), 1.0, tolerance<T>()) << which << " vector " << j;
      EXPECT_LE(std::abs(top.imag()), tolerance<T>() * big) << which << " vector " << j;
    }
  };
  const std::vector<T> vl0 = random_matrix<T>(ldvl, n, ldvl, 41);
  if (jobvl == 'V') {
    EXPECT_TRUE(gaps_untouched(g.vl, vl0, n, n, ldvl));
    // u_j^H A = w_j u_j^H, that is A^H u_j = conj(w_j) u_j.
    const Mat full = from(a0.data(), n, n, lda), u = eigenvectors(g, n, ldvl, true);
    std::vector<cd> wconj;
    for (const cd& x : wg) wconj.push_back(std::conj(x));
    EXPECT_LE(eig_residual(adj(full), u, wconj), tolerance<T>());
    expect_normalised(u, "left");
  } else {
    EXPECT_EQ(std::memcmp(g.vl.data(), vl0.data(), sizeof(T) * vl0.size()), 0);
  }
  const std::vector<T> vr0 = random_matrix<T>(ldvr, n, ldvr, 42);
  if (jobvr == 'V') {
    EXPECT_TRUE(gaps_untouched(g.vr, vr0, n, n, ldvr));
    const Mat full = from(a0.data(), n, n, lda), v = eigenvectors(g, n, ldvr);
    EXPECT_LE(eig_residual(full, v, wg), tolerance<T>());
    expect_normalised(v, "right");
  } else {
    EXPECT_EQ(std::memcmp(g.vr.data(), vr0.data(), sizeof(T) * vr0.size()), 0);
  }
}

TYPED_TEST(NonsymmetricEig, Geev) {
  for (int pad : {0, 3}) {
    check_geev<TypeParam>('N', 'N', 67, 67 + pad, 67 + pad);
    check_geev<TypeParam>('N', 'V', 67, 67 + pad, 67 + 2 * pad);
    check_geev<TypeParam>('V', 'V', 67, 67 + pad, 67 + pad);
    check_geev<TypeParam>('V', 'N', 67, 67 + pad, 67 + 2 * pad);
  }
}

// =====================================================================================================
// geevx (Octave's eig): balancing and back-transform are the CPU library's own (ilo, ihi, scale and
// abnrm must be identical), the eigen-part the GPU's (eigenvalues within tolerance, vectors as
// LAPACK normalises them, up to sign).
// =====================================================================================================
template <class T, class I> struct GeevxFn {
  using R = real_t<T>;
  using Real = void (*)(const char*, const char*, const char*, const char*, const I*, T*, const I*, R*, R*, T*,
                        const I*, T*, const I*, I*, I*, R*, R*, R*, R*, T*, const I*, I*, I*, L, L, L, L);
  using Cplx = void (*)(const char*, const char*, const char*, const char*, const I*, T*, const I*, T*, T*, const I*,
                        T*, const I*, I*, I*, R*, R*, R*, R*, T*, const I*, R*, I*, L, L, L, L);
  using type = std::conditional_t<is_complex_v<T>, Cplx, Real>;
};
template <class T, class I> using geevx_fn = typename GeevxFn<T, I>::type;

template <class T, class I> struct GeevxBufs : GeevBufs<T> {
  std::vector<real_t<T>> scale, rconde, rcondv;
  std::vector<I> iwork;
  I ilo = -7, ihi = -7, info64 = -99;
  real_t<T> abnrm = -1;
};

template <class T, class I>
void call_geevx(geevx_fn<T, I> f, char balanc, char jobvl, char jobvr, char sense, I n, I lda, I ldvl, I ldvr,
                GeevxBufs<T, I>& b, I lwork) {
  if constexpr (!is_complex_v<T>) {
    f(&balanc, &jobvl, &jobvr, &sense, &n, b.a.data(), &lda, b.wr.data(), b.wi.data(), b.vl.data(), &ldvl, b.vr.data(),
      &ldvr, &b.ilo, &b.ihi, b.scale.data(), &b.abnrm, b.rconde.data(), b.rcondv.data(), b.work.data(), &lwork,
      b.iwork.data(), &b.info64, 1, 1, 1, 1);
  } else {
    f(&balanc, &jobvl, &jobvr, &sense, &n, b.a.data(), &lda, b.w.data(), b.vl.data(), &ldvl, b.vr.data(), &ldvr, &b.ilo,
      &b.ihi, b.scale.data(), &b.abnrm, b.rconde.data(), b.rcondv.data(), b.work.data(), &lwork, b.rwork.data(),
      &b.info64, 1, 1, 1, 1);
  }
  b.info = int(b.info64);
}

// A matrix balancing changes: D A D^-1 of a random A with D = diag(4^((i mod 7) - 3)) (entries up to
// 2^24 apart), column 0 zero below its diagonal and row n-1 zero left of it, so that gebal's
// permutation isolates two eigenvalues (ilo = 2, ihi = n - 1) and its scaling has work to do.
template <class T> std::vector<T> balancing_input(int64_t n, int64_t lda, uint64_t seed) {
  std::vector<T> a = random_matrix<T>(lda, n, lda, seed);
  auto e = [](int64_t i) { return int(i % 7) - 3; };
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) a[size_t(i + j * lda)] *= real_t<T>(std::ldexp(1.0, 2 * (e(i) - e(j))));
  for (int64_t i = 1; i < n; ++i) a[size_t(i)] = T(0);
  for (int64_t j = 0; j + 1 < n; ++j) a[size_t(n - 1 + j * lda)] = T(0);
  return a;
}

// max over the vectors of min(|g_j - c_k|, |g_j + c_k|) for the CPU vector c_k of the eigenvalue
// nearest g's, each against the bound its eigenvalue's gap allows (eps * max|w| / gap, times 1e4).
double vectors_vs_cpu(const Mat& vg, const std::vector<cd>& wg, const Mat& vc, const std::vector<cd>& wc, double eps) {
  double worst = 0, scale = 0;
  for (const cd& x : wc) scale = std::max(scale, std::abs(x));
  for (size_t j = 0; j < wg.size(); ++j) {
    size_t k = 0;
    for (size_t i = 1; i < wc.size(); ++i)
      if (std::abs(wc[i] - wg[j]) < std::abs(wc[k] - wg[j])) k = i;
    double gap = 1e300;
    for (size_t i = 0; i < wc.size(); ++i)
      if (i != k) gap = std::min(gap, std::abs(wc[i] - wc[k]));
    double plus = 0, minus = 0;
    for (int64_t i = 0; i < vg.rows; ++i) {
      plus = std::max(plus, std::abs(vg(i, int64_t(j)) - vc(i, int64_t(k))));
      minus = std::max(minus, std::abs(vg(i, int64_t(j)) + vc(i, int64_t(k))));
    }
    worst = std::max(worst, std::min(plus, minus) / (1e4 * eps * std::max(scale, 1.0) / std::max(gap, 1e-300)));
  }
  return worst;  // <= 1: every vector within its bound
}

template <class T, class I>
void check_geevx(geevx_fn<T, I> gpu_f, geevx_fn<T, I> cpu_f, char balanc, char jobvl, char jobvr, char sense, I n,
                 I lda, I ldvr) {
  using R = real_t<T>;
  SCOPED_TRACE(std::string("geevx balanc=") + balanc + " jobvl=" + jobvl + " jobvr=" + jobvr + " sense=" + sense +
               " lda=" + std::to_string(lda) + " ldvr=" + std::to_string(ldvr));
  const std::vector<T> a0 = balancing_input<T>(n, lda, 57);
  const I ldvl = jobvl == 'V' ? ldvr : n;
  auto fresh = [&](GeevxBufs<T, I>& x, I lwork) {
    x.fresh(a0, n, ldvl, ldvr, lwork);
    x.scale.assign(size_t(n), R(-5));
    x.rconde.assign(size_t(n), R(-6));  // not referenced with sense 'N'
    x.rcondv.assign(size_t(n), R(-6));
    x.iwork.assign(size_t(2 * n), I(0));
  };
  GeevxBufs<T, I> q;
  fresh(q, 1);
  call_geevx<T, I>(cpu_f, balanc, jobvl, jobvr, sense, n, lda, ldvl, ldvr, q, -1);
  const I lwork = I(size_of(q.work[0]));
  GeevxBufs<T, I> g, c;
  fresh(g, lwork);
  fresh(c, lwork);
  call_geevx<T, I>(gpu_f, balanc, jobvl, jobvr, sense, n, lda, ldvl, ldvr, g, lwork);
  // Condition numbers stay on the CPU; left vectors in single precision may too (as geev's).
  if (sense != 'N') expect_not_on_gpu();
  else if (jobvl == 'N' || std::is_same_v<R, double>) EXPECT_RAN_ON_GPU();
  call_geevx<T, I>(cpu_f, balanc, jobvl, jobvr, sense, n, lda, ldvl, ldvr, c, lwork);

  EXPECT_EQ(c.info, 0);
  EXPECT_EQ(g.info, c.info);
  EXPECT_EQ(g.work[0], c.work[0]);
  EXPECT_EQ(g.ilo, c.ilo);
  EXPECT_EQ(g.ihi, c.ihi);
  EXPECT_EQ(std::memcmp(g.scale.data(), c.scale.data(), sizeof(R) * size_t(n)), 0) << "scale differs";
  EXPECT_EQ(g.abnrm, c.abnrm);
  if (balanc == 'P' || balanc == 'B') {
    EXPECT_EQ(c.ilo, 2) << "the input must exercise the permutation";
  }
  if (balanc == 'S' || balanc == 'B') {
    EXPECT_TRUE(std::any_of(c.scale.begin() + 2, c.scale.end() - 1, [](R s) { return s != R(1); }))
        << "the input must exercise the scaling";
  }
  if (sense == 'N') {
    EXPECT_TRUE(std::all_of(g.rconde.begin(), g.rconde.end(), [](R s) { return s == R(-6); }));
    EXPECT_TRUE(std::all_of(g.rcondv.begin(), g.rcondv.end(), [](R s) { return s == R(-6); }));
  } else {
    EXPECT_LE(rel_diff(g.rconde.data(), c.rconde.data(), n, 1, n), tolerance<T>());
  }
  const std::vector<cd> wg = eigenvalues(g, int(n)), wc = eigenvalues(c, int(n));
  // Unscaled ('N', 'P'), the input's eigenvalues are ill-conditioned by design (rows and columns scaled
  // by up to 4^6): on the H200 the CPU library's own result through the wrapper was 1.8-4.3% from
  // the same library called directly, in single and double alike. There, an eigenpair is right when
  // its residual is as small as the CPU's (below); scaled ('S', 'B'), it must also match the CPU's.
  const bool conditioned = balanc == 'S' || balanc == 'B';
  if (conditioned) {
    EXPECT_LE(match_eigenvalues(wg, wc), tolerance<T>());
  }
  EXPECT_TRUE(gaps_untouched(g.a, a0, n, n, lda));
  if (conditioned) {
    EXPECT_DESTROYED_AS_CPU(g.a, c.a, a0, n, n, lda);
  }
  const double eps = std::numeric_limits<R>::epsilon();
  const Mat full = from(a0.data(), n, n, lda);
  if (jobvr == 'V') {
    EXPECT_TRUE(gaps_untouched(g.vr, random_matrix<T>(ldvr, n, ldvr, 42), n, n, ldvr));
    const Mat vg = eigenvectors(g, int(n), int(ldvr)), vc = eigenvectors(c, int(n), int(ldvr));
    EXPECT_LE(eig_residual(full, vg, wg), std::max(tolerance<T>(), 10 * eig_residual(full, vc, wc)));
    if (conditioned) {
      EXPECT_LE(vectors_vs_cpu(vg, wg, vc, wc, eps), 1.0) << "right vectors differ from the CPU's beyond sign";
    }
  }
  if (jobvl == 'V') {
    EXPECT_TRUE(gaps_untouched(g.vl, random_matrix<T>(ldvl, n, ldvl, 41), n, n, ldvl));
    const Mat ug = eigenvectors(g, int(n), int(ldvl), true), uc = eigenvectors(c, int(n), int(ldvl), true);
    std::vector<cd> cg, cc;
    for (const cd& x : wg) cg.push_back(std::conj(x));
    for (const cd& x : wc) cc.push_back(std::conj(x));
    EXPECT_LE(eig_residual(adj(full), ug, cg), std::max(tolerance<T>(), 10 * eig_residual(adj(full), uc, cc)));
    EXPECT_LE(vectors_vs_cpu(ug, wg, uc, wc, eps), 1.0) << "left vectors differ from the CPU's beyond sign";
  }
}

TYPED_TEST(NonsymmetricEig, Geevx) {
  using T = TypeParam;
  const std::string nm = lapack_name<T>("geevx", "geevx");
  const auto gpu_f = intercepted<geevx_fn<T, int>>(nm.c_str()), cpu_f = cpu<geevx_fn<T, int>>(nm.c_str());
  for (char balanc : {'B', 'N', 'P', 'S'}) {
    check_geevx<T, int>(gpu_f, cpu_f, balanc, 'N', 'V', 'N', 67, 70, 71);  // Octave's [V, D] = eig(A)
    check_geevx<T, int>(gpu_f, cpu_f, balanc, 'N', 'N', 'N', 67, 67, 67);  // eig(A)
  }
  check_geevx<T, int>(gpu_f, cpu_f, 'B', 'V', 'V', 'N', 67, 67, 69);  // [V, D, W] = eig(A)
  check_geevx<T, int>(gpu_f, cpu_f, 'B', 'V', 'N', 'N', 67, 70, 67);
  check_geevx<T, int>(gpu_f, cpu_f, 'B', 'V', 'V', 'E', 67, 67, 67);  // condition numbers: the CPU's
}

// ILP64 names: 64-bit info. Needs a CPU library exporting them: an OpenBLAS built with
// SYMBOLSUFFIX=64_ (dgeev_64_), or NumPy's scipy-openblas64 named by GOFL_TEST_OPENBLAS64 (scipy_dgeev_64_).
TEST(NonsymmetricEigIlp64, Geev) {
  using I = int64_t;
  const gpu_test::Ilp64Lib lib = gpu_test::ilp64_lib({"dgeev"});
  if (!lib.handle) GTEST_SKIP() << "no CPU library exports ILP64 LAPACK names (dgeev_64_, or scipy_dgeev_64_ via GOFL_TEST_OPENBLAS64)";
  const I n = 67, lda = 70;
  {  // dgeev, right eigenvectors
    using F = void (*)(const char*, const char*, const I*, double*, const I*, double*, double*, double*, const I*, double*,
                       const I*, double*, const I*, I*, L, L);
    const auto a0 = random_matrix<double>(lda, n, lda, 86);
    const I one = 1;
    double q = 0, dummy = 0;
    I m1 = -1, info = -99;
    std::vector<double> wr(n), wi(n), vr(lda * n);
    auto t = a0;
    lib.cpu<F>("dgeev")("N", "V", &n, t.data(), &lda, wr.data(), wi.data(), &dummy, &one, vr.data(), &lda, &q, &m1, &info, 1, 1);
    const I lwork = I(q);
    GeevBufs<double> g, c;
    for (GeevBufs<double>* x : {&g, &c}) {
      x->a = a0;
      x->wr.assign(n, 0);
      x->wi.assign(n, 0);
      x->vr.assign(lda * n, 0);
      x->work.assign(lwork, 0);
    }
    I ig = -99, ic = -99;
    lib.gpu<F>("dgeev")("N", "V", &n, g.a.data(), &lda, g.wr.data(), g.wi.data(), &dummy, &one, g.vr.data(), &lda, g.work.data(), &lwork, &ig, 1, 1);
    EXPECT_RAN_ON_GPU();
    lib.cpu<F>("dgeev")("N", "V", &n, c.a.data(), &lda, c.wr.data(), c.wi.data(), &dummy, &one, c.vr.data(), &lda, c.work.data(), &lwork, &ic, 1, 1);
    EXPECT_EQ(ig, 0);
    EXPECT_EQ(ig, ic);
    EXPECT_EQ(g.work[0], c.work[0]);
    EXPECT_LE(match_eigenvalues(eigenvalues(g, int(n)), eigenvalues(c, int(n))), tolerance<double>());
    EXPECT_LE(eig_residual(from(a0.data(), n, n, lda), eigenvectors(g, int(n), int(lda)), eigenvalues(g, int(n))),
              tolerance<double>());
  }
}

// dgeevx through the ILP64 names: the CPU library's dgebal_64_/dgebak_64_/dlange_64_ (or scipy_…_64_)
// with 64-bit ilo, ihi and info.
TEST(NonsymmetricEigIlp64, Geevx) {
  using I = int64_t;
  const gpu_test::Ilp64Lib lib = gpu_test::ilp64_lib({"dgeevx", "dgebal", "dgebak"});
  if (!lib.handle) GTEST_SKIP() << "no CPU library exports ILP64 LAPACK names (dgeevx_64_, or scipy_dgeevx_64_ via GOFL_TEST_OPENBLAS64)";
  const auto gpu_f = lib.gpu<geevx_fn<double, I>>("dgeevx"), cpu_f = lib.cpu<geevx_fn<double, I>>("dgeevx");
  check_geevx<double, I>(gpu_f, cpu_f, 'B', 'N', 'V', 'N', 67, 70, 71);
  check_geevx<double, I>(gpu_f, cpu_f, 'B', 'V', 'V', 'N', 67, 67, 67);
}

}  // namespace
