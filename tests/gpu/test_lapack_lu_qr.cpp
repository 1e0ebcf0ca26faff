// GPU tests of LU, Cholesky, QR and least squares (getrf getrs gesv getri potrf potrs posv geqrf
// orgqr/ungqr gels): every routine x precision x variant is called through its intercepted name (the
// GPU under GPU_OFFLOAD_DEVICE=gpu) and straight in the CPU library, on copies of the same inputs.
// Compared: info exactly, work[0] exactly, pivots exactly, factors and solutions within the verify
// tolerance, untouched triangles / ld gaps / inputs LAPACK must not write bit-exactly.
#include <cstring>  // memcmp in gpu_harness.h

#include "dense_check.h"

#include <cctype>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <algorithm>
#include <random>
#include <vector>

namespace {

using gpu_test::real_t;
using gpu_test::tolerance;

template <class T> constexpr char prec() {
  if constexpr (std::is_same_v<T, float>) return 's';
  else if constexpr (std::is_same_v<T, double>) return 'd';
  else if constexpr (std::is_same_v<T, std::complex<float>>) return 'c';
  else return 'z';
}
template <class T> std::string fname(const char* routine) { return std::string(1, prec<T>()) + routine + "_"; }
template <class T> constexpr bool cplx = gpu_test::is_complex_v<T>;
// The transpose letter the precision's ?gels accepts ('T' real, 'C' complex).
template <class T> constexpr char ctrans() { return cplx<T> ? 'C' : 'T'; }
template <class T> T conj_(T x) {
  if constexpr (cplx<T>) return std::conj(x);
  else return x;
}

// Fortran prototypes, integer width I.
template <class T, class I = int32_t> struct F {
  using getrf = void (*)(const I*, const I*, T*, const I*, I*, I*);
  using getrs = void (*)(const char*, const I*, const I*, const T*, const I*, const I*, T*, const I*, I*, size_t);
  using gesv = void (*)(const I*, const I*, T*, const I*, I*, T*, const I*, I*);
  using getri = void (*)(const I*, T*, const I*, const I*, T*, const I*, I*);
  using potrf = void (*)(const char*, const I*, T*, const I*, I*, size_t);
  using potrs = void (*)(const char*, const I*, const I*, const T*, const I*, T*, const I*, I*, size_t);
  using posv = void (*)(const char*, const I*, const I*, T*, const I*, T*, const I*, I*, size_t);
  using geqrf = void (*)(const I*, const I*, T*, const I*, T*, T*, const I*, I*);
  using orgqr = void (*)(const I*, const I*, const I*, T*, const I*, const T*, T*, const I*, I*);
  using gels = void (*)(const char*, const I*, const I*, const I*, T*, const I*, T*, const I*, T*, const I*, I*, size_t);
};

template <class T> bool bits_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}
template <class T> void expect_close(const std::vector<T>& gpu, const std::vector<T>& cpu, int64_t rows, int64_t cols,
                                     int64_t ld, const char* what) {
  const double d = gpu_test::rel_diff(gpu.data(), cpu.data(), rows, cols, ld);
  EXPECT_LE(d, tolerance<T>()) << what << " differs (relative " << d << ")";
}
// work[0]: LAPACK stores an integer size there; the GPU path must reproduce it exactly.
template <class T> void expect_work0(const T& gpu, const T& cpu) {
  EXPECT_EQ(std::real(gpu), std::real(cpu)) << "work[0]";
  EXPECT_EQ(std::imag(gpu), std::imag(cpu)) << "work[0] (imaginary part)";
}
// The uplo triangle of the leading k x k block, everything else zeroed (for partial-factor compares).
template <class T> std::vector<T> leading_triangle(const std::vector<T>& a, int64_t k, int64_t ld, char uplo) {
  std::vector<T> r(a.size(), T(0));
  for (int64_t j = 0; j < k; ++j)
    for (int64_t i = 0; i < k; ++i)
      if (uplo == 'U' ? i <= j : i >= j) r[i + j * ld] = a[i + j * ld];
  return r;
}

// Matrices: general random, diagonally dominant (no pivoting needed: both sides pick the diagonal),
// Hermitian positive definite.
template <class T> std::vector<T> general(int64_t m, int64_t n, int64_t ld, uint64_t seed) {
  return gpu_test::random_matrix<T>(m, n, ld, seed);
}
template <class T> std::vector<T> dominant(int64_t n, int64_t ld, uint64_t seed) {
  auto a = gpu_test::random_matrix<T>(n, n, ld, seed);
  for (int64_t i = 0; i < n; ++i) a[i + i * ld] += T(real_t<T>(2 * n));
  return a;
}
// Hermitian with a diagonal larger than each row's off-diagonal sum (|a_ij| <= sqrt 2): positive definite.
template <class T> std::vector<T> spd(int64_t n, int64_t ld, uint64_t seed) {
  auto a = gpu_test::random_matrix<T>(n, n, ld, seed);  // the gaps keep random bits
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < j; ++i) a[j + i * ld] = conj_(a[i + j * ld]);
  for (int64_t i = 0; i < n; ++i) a[i + i * ld] = T(real_t<T>(2 * n) + std::abs(std::real(a[i + i * ld])));
  return a;
}

// max |P L U - A| / max |A| for a packed LU with 1-based pivots: validity when pivots differ.
template <class T> double lu_residual(const std::vector<T>& lu, const std::vector<int32_t>& ipiv, const std::vector<T>& a0,
                                      int64_t m, int64_t n, int64_t ld) {
  const int64_t k = std::min(m, n);
  std::vector<T> p(size_t(m * n), T(0));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      T s = T(0);
      for (int64_t l = 0; l <= std::min({i, j, k - 1}); ++l) {
        const T lil = l == i ? T(1) : lu[i + l * ld];
        s += lil * lu[l + j * ld];
      }
      p[i + j * m] = s;
    }
  for (int64_t i = k - 1; i >= 0; --i) {
    const int64_t r = ipiv[size_t(i)] - 1;
    if (r != i)
      for (int64_t j = 0; j < n; ++j) std::swap(p[i + j * m], p[r + j * m]);
  }
  double num = 0, den = 0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      num = std::max(num, double(std::abs(p[i + j * m] - a0[i + j * ld])));
      den = std::max(den, double(std::abs(a0[i + j * ld])));
    }
  return den > 0 ? num / den : num;
}

template <class T> class LuQr : public ::testing::Test {};
using Precisions = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(LuQr, Precisions);

// ---- getrf ------------------------------------------------------------------------------------------
enum class Kind { Dominant, General, Singular };
template <class T> void check_getrf(int m, int n, int lda, Kind kind, uint64_t seed) {
  SCOPED_TRACE("getrf m=" + std::to_string(m) + " n=" + std::to_string(n) + " lda=" + std::to_string(lda) +
               " kind=" + std::to_string(int(kind)));
  std::vector<T> a0;
  if (kind == Kind::General) {
    a0 = general<T>(m, n, lda, seed);
  } else {
    a0 = general<T>(m, n, lda, seed);
    for (int64_t i = 0; i < std::min(m, n); ++i) a0[i + i * lda] += T(real_t<T>(2 * std::max(m, n)));
    if (kind == Kind::Singular)
      for (int64_t i = 0; i < m; ++i) a0[i + 3 * lda] = T(0);  // column 4 zero: U(4,4) == 0 exactly
  }
  const int k = std::min(m, n);
  auto ag = a0, ac = a0;
  std::vector<int32_t> pg(k, -7), pc(k, -7);
  int32_t ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::getrf>(fname<T>("getrf").c_str())(&m, &n, ag.data(), &lda, pg.data(), &ig);
  EXPECT_RAN_ON_GPU();
  gpu_test::cpu<typename F<T>::getrf>(fname<T>("getrf").c_str())(&m, &n, ac.data(), &lda, pc.data(), &ic);

  EXPECT_EQ(ig, ic) << "info";
  if (kind == Kind::Singular) {
    EXPECT_EQ(ig, 4);
  }
  EXPECT_TRUE(gpu_test::gaps_untouched(ag, a0, m, n, lda)) << "ld gap written";
  if (pg != pc || double(m) * n * k < 1e8) {  // O(m n k) on one core: skipped for large agreeing cases
    EXPECT_LE(lu_residual(ag, pg, a0, m, n, lda), 50 * tolerance<T>()) << "GPU factors do not reproduce A";
  }
  if (kind != Kind::General) {
    EXPECT_EQ(pg, pc) << "pivots (diagonally dominant: no row exchanges expected)";
  }
  if (pg == pc) expect_close(ag, ac, m, n, lda, "LU factors");
  else std::printf("note: %c getrf %dx%d chose other pivots than the CPU; factors checked by residual only\n", prec<T>(), m, n);
}
TYPED_TEST(LuQr, Getrf) {
  using T = TypeParam;
  check_getrf<T>(67, 67, 67, Kind::Dominant, 1);
  check_getrf<T>(67, 67, 75, Kind::General, 2);
  check_getrf<T>(91, 67, 96, Kind::Dominant, 3);   // m > n
  check_getrf<T>(67, 91, 70, Kind::Dominant, 4);   // m < n
  check_getrf<T>(67, 67, 70, Kind::Singular, 5);   // info > 0, factorization completed
  check_getrf<T>(91, 67, 91, Kind::Singular, 6);
  check_getrf<T>(130, 130, 131, Kind::General, 7);
}

// ---- getrs ------------------------------------------------------------------------------------------
// The factors of a diagonally dominant matrix (no row interchanges), of one with its rows shuffled
// (getrf interchanges almost every row back; as well conditioned), or the first with pivots drawn
// anywhere in 1..n (LAPACK applies any such).
enum class Pivots { none, from_getrf, any };
template <class T> void check_getrs(char trans, int n, int nrhs, int lda, int ldb, uint64_t seed,
                                    Pivots pivots = Pivots::none) {
  SCOPED_TRACE(std::string("getrs trans=") + trans + " n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs) +
               " pivots " + std::to_string(int(pivots)));
  auto lu = dominant<T>(n, lda, seed);
  if (pivots == Pivots::from_getrf) {
    std::vector<int> order(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) order[size_t(i)] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
    const auto d = lu;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) lu[size_t(i) + size_t(j) * lda] = d[size_t(order[size_t(i)]) + size_t(j) * lda];
  }
  std::vector<int32_t> ipiv(n);
  int32_t info = 0;
  gpu_test::cpu<typename F<T>::getrf>(fname<T>("getrf").c_str())(&n, &n, lu.data(), &lda, ipiv.data(), &info);
  ASSERT_EQ(info, 0);
  if (pivots == Pivots::any) {
    std::mt19937_64 g(seed);
    for (auto& p : ipiv) p = int32_t(g() % uint64_t(n)) + 1;
  }
  if (pivots != Pivots::none) {
    int moved = 0;
    for (int i = 0; i < n; ++i) moved += ipiv[size_t(i)] != i + 1;
    ASSERT_GT(moved, n / 2) << "the test needs row interchanges";
  }
  const auto lu0 = lu;
  const auto b0 = general<T>(n, nrhs, ldb, seed + 1);
  auto bg = b0, bc = b0;
  int32_t ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::getrs>(fname<T>("getrs").c_str())(&trans, &n, &nrhs, lu.data(), &lda, ipiv.data(),
                                                                         bg.data(), &ldb, &ig, 1);
  EXPECT_RAN_ON_GPU();
  gpu_test::cpu<typename F<T>::getrs>(fname<T>("getrs").c_str())(&trans, &n, &nrhs, lu.data(), &lda, ipiv.data(),
                                                                 bc.data(), &ldb, &ic, 1);
  EXPECT_EQ(ig, ic);
  EXPECT_TRUE(bits_equal(lu, lu0)) << "A is input only";
  EXPECT_TRUE(gpu_test::gaps_untouched(bg, b0, n, nrhs, ldb));
  expect_close(bg, bc, n, nrhs, ldb, "X");
}
TYPED_TEST(LuQr, Getrs) {
  using T = TypeParam;
  for (char t : {'N', 'T', 'C'}) {
    check_getrs<T>(t, 67, 5, 67, 67, 10);
    check_getrs<T>(t, 67, 1, 70, 72, 11);
  }
  check_getrs<T>('n', 67, 3, 67, 67, 12);  // lower-case flag
  // Row interchanges (the cases above have none: a dominant matrix keeps its rows). B of 1.3 MB and
  // more is copied by several threads, each a byte range of it.
  for (char t : {'N', 'T', 'C'}) {
    check_getrs<T>(t, 300, 7, 305, 310, 13, Pivots::from_getrf);
    check_getrs<T>(t, 200, 3, 200, 203, 14, Pivots::any);
  }
  check_getrs<T>('N', 1024, 160, 1030, 1024, 15, Pivots::from_getrf);
}

// ---- gesv -------------------------------------------------------------------------------------------
template <class T> void check_gesv(int n, int nrhs, int lda, int ldb, bool singular, uint64_t seed) {
  SCOPED_TRACE("gesv n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs) + (singular ? " singular" : ""));
  auto a0 = dominant<T>(n, lda, seed);
  if (singular)
    for (int64_t i = 0; i < n; ++i) a0[i + 3 * lda] = T(0);
  const auto b0 = general<T>(n, nrhs, ldb, seed + 1);
  auto ag = a0, ac = a0, bg = b0, bc = b0;
  std::vector<int32_t> pg(n, -7), pc(n, -7);
  int32_t ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::gesv>(fname<T>("gesv").c_str())(&n, &nrhs, ag.data(), &lda, pg.data(), bg.data(),
                                                                       &ldb, &ig);
  EXPECT_RAN_ON_GPU();
  gpu_test::cpu<typename F<T>::gesv>(fname<T>("gesv").c_str())(&n, &nrhs, ac.data(), &lda, pc.data(), bc.data(), &ldb, &ic);
  EXPECT_EQ(ig, ic);
  EXPECT_EQ(pg, pc);
  EXPECT_TRUE(gpu_test::gaps_untouched(ag, a0, n, n, lda));
  EXPECT_TRUE(gpu_test::gaps_untouched(bg, b0, n, nrhs, ldb));
  if (pg == pc) expect_close(ag, ac, n, n, lda, "LU factors");
  if (singular) {
    EXPECT_EQ(ig, 4);
    EXPECT_TRUE(bits_equal(bg, b0)) << "B must stay untouched when info > 0";
  } else {
    expect_close(bg, bc, n, nrhs, ldb, "X");
  }
}
TYPED_TEST(LuQr, Gesv) {
  using T = TypeParam;
  check_gesv<T>(67, 4, 67, 67, false, 20);
  check_gesv<T>(67, 67, 70, 75, false, 21);  // numpy.linalg.inv's shape
  check_gesv<T>(67, 2, 71, 67, true, 22);
}

// ---- getri ------------------------------------------------------------------------------------------
template <class T> void check_getri(int n, int lda, bool singular, bool small_work, uint64_t seed) {
  SCOPED_TRACE("getri n=" + std::to_string(n) + " lda=" + std::to_string(lda) + (singular ? " singular" : "") +
               (small_work ? " lwork=n" : ""));
  auto a = dominant<T>(n, lda, seed);
  if (singular)
    for (int64_t i = 0; i < n; ++i) a[i + 3 * lda] = T(0);
  std::vector<int32_t> ipiv(n);
  int32_t info = 0;
  gpu_test::cpu<typename F<T>::getrf>(fname<T>("getrf").c_str())(&n, &n, a.data(), &lda, ipiv.data(), &info);
  ASSERT_EQ(info, singular ? 4 : 0);
  auto cpu_getri = gpu_test::cpu<typename F<T>::getri>(fname<T>("getri").c_str());
  T q = T(0);
  int32_t lw = -1;
  cpu_getri(&n, a.data(), &lda, ipiv.data(), &q, &lw, &info);
  int32_t lwork = small_work ? n : std::max<int32_t>(n, int32_t(std::real(q)));
  const auto a0 = a;
  auto ag = a0, ac = a0;
  std::vector<T> wg(lwork, T(-5)), wc(lwork, T(-5));
  int32_t ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::getri>(fname<T>("getri").c_str())(&n, ag.data(), &lda, ipiv.data(), wg.data(),
                                                                         &lwork, &ig);
  EXPECT_RAN_ON_GPU();
  cpu_getri(&n, ac.data(), &lda, ipiv.data(), wc.data(), &lwork, &ic);
  EXPECT_EQ(ig, ic);
  expect_work0(wg[0], wc[0]);
  EXPECT_TRUE(gpu_test::gaps_untouched(ag, a0, n, n, lda));
  if (singular) {
    EXPECT_EQ(ig, 4);
    EXPECT_TRUE(bits_equal(ag, a0)) << "A must stay untouched when U is singular";
  } else {
    expect_close(ag, ac, n, n, lda, "inverse");
  }
}
TYPED_TEST(LuQr, Getri) {
  using T = TypeParam;
  check_getri<T>(67, 67, false, false, 30);
  check_getri<T>(67, 73, false, false, 31);
  check_getri<T>(150, 150, false, false, 32);  // n > NB: blocked, work[0] = n*NB
  check_getri<T>(150, 150, false, true, 33);   // lwork = n: WORK(1) still reports n*NB
  check_getri<T>(67, 67, true, false, 34);
}

// ---- potrf ------------------------------------------------------------------------------------------
template <class T> void check_potrf(char uplo, int n, int lda, bool indefinite, uint64_t seed) {
  SCOPED_TRACE(std::string("potrf uplo=") + uplo + " n=" + std::to_string(n) + " lda=" + std::to_string(lda) +
               (indefinite ? " indefinite" : ""));
  auto a0 = spd<T>(n, lda, seed);
  if (indefinite) a0[5 + 5 * lda] = T(-1);  // leading minor of order 6 not positive: info = 6
  auto ag = a0, ac = a0;
  int32_t ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::potrf>(fname<T>("potrf").c_str())(&uplo, &n, ag.data(), &lda, &ig, 1);
  EXPECT_RAN_ON_GPU();
  gpu_test::cpu<typename F<T>::potrf>(fname<T>("potrf").c_str())(&uplo, &n, ac.data(), &lda, &ic, 1);
  EXPECT_EQ(ig, ic);
  EXPECT_TRUE(gpu_test::other_triangle_untouched(ag, a0, n, lda, char(std::toupper(uplo)))) << "other triangle written";
  EXPECT_TRUE(gpu_test::gaps_untouched(ag, a0, n, n, lda));
  if (indefinite) {
    EXPECT_EQ(ig, 6);
    // Only the leading (info-1) block is defined by LAPACK; the rest is algorithm-dependent.
    const int64_t k = ig > 0 ? ig - 1 : 0;
    const char u = char(std::toupper(uplo));
    expect_close(leading_triangle(ag, k, lda, u), leading_triangle(ac, k, lda, u), k, k, lda, "partial factor");
  } else {
    expect_close(ag, ac, n, n, lda, "Cholesky factor");
  }
}
TYPED_TEST(LuQr, Potrf) {
  using T = TypeParam;
  for (char u : {'U', 'L'}) {
    check_potrf<T>(u, 67, 67, false, 40);
    check_potrf<T>(u, 67, 72, false, 41);
    check_potrf<T>(u, 67, 70, true, 42);
  }
  check_potrf<T>('l', 130, 131, false, 43);
}

// ---- potrs ------------------------------------------------------------------------------------------
template <class T> void check_potrs(char uplo, int n, int nrhs, int lda, int ldb, uint64_t seed) {
  SCOPED_TRACE(std::string("potrs uplo=") + uplo + " n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs));
  auto a = spd<T>(n, lda, seed);
  int32_t info = 0;
  gpu_test::cpu<typename F<T>::potrf>(fname<T>("potrf").c_str())(&uplo, &n, a.data(), &lda, &info, 1);
  ASSERT_EQ(info, 0);
  const auto a0 = a;
  const auto b0 = general<T>(n, nrhs, ldb, seed + 1);
  auto bg = b0, bc = b0;
  int32_t ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::potrs>(fname<T>("potrs").c_str())(&uplo, &n, &nrhs, a.data(), &lda, bg.data(), &ldb,
                                                                         &ig, 1);
  EXPECT_RAN_ON_GPU();
  gpu_test::cpu<typename F<T>::potrs>(fname<T>("potrs").c_str())(&uplo, &n, &nrhs, a.data(), &lda, bc.data(), &ldb, &ic, 1);
  EXPECT_EQ(ig, ic);
  EXPECT_TRUE(bits_equal(a, a0));
  EXPECT_TRUE(gpu_test::gaps_untouched(bg, b0, n, nrhs, ldb));
  expect_close(bg, bc, n, nrhs, ldb, "X");
}
TYPED_TEST(LuQr, Potrs) {
  using T = TypeParam;
  for (char u : {'U', 'L'}) {
    check_potrs<T>(u, 67, 3, 67, 67, 50);
    check_potrs<T>(u, 67, 8, 69, 71, 51);
  }
}

// ---- posv -------------------------------------------------------------------------------------------
template <class T> void check_posv(char uplo, int n, int nrhs, int lda, int ldb, bool indefinite, uint64_t seed) {
  SCOPED_TRACE(std::string("posv uplo=") + uplo + " n=" + std::to_string(n) + (indefinite ? " indefinite" : ""));
  auto a0 = spd<T>(n, lda, seed);
  if (indefinite) a0[5 + 5 * lda] = T(-1);
  const auto b0 = general<T>(n, nrhs, ldb, seed + 1);
  auto ag = a0, ac = a0, bg = b0, bc = b0;
  int32_t ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::posv>(fname<T>("posv").c_str())(&uplo, &n, &nrhs, ag.data(), &lda, bg.data(), &ldb,
                                                                       &ig, 1);
  EXPECT_RAN_ON_GPU();
  gpu_test::cpu<typename F<T>::posv>(fname<T>("posv").c_str())(&uplo, &n, &nrhs, ac.data(), &lda, bc.data(), &ldb, &ic, 1);
  EXPECT_EQ(ig, ic);
  EXPECT_TRUE(gpu_test::other_triangle_untouched(ag, a0, n, lda, uplo));
  EXPECT_TRUE(gpu_test::gaps_untouched(ag, a0, n, n, lda));
  EXPECT_TRUE(gpu_test::gaps_untouched(bg, b0, n, nrhs, ldb));
  if (indefinite) {
    EXPECT_EQ(ig, 6);
    EXPECT_TRUE(bits_equal(bg, b0)) << "B must stay untouched when A is not positive definite";
    const int64_t k = ig > 0 ? ig - 1 : 0;
    expect_close(leading_triangle(ag, k, lda, uplo), leading_triangle(ac, k, lda, uplo), k, k, lda, "partial factor");
  } else {
    expect_close(ag, ac, n, n, lda, "Cholesky factor");
    expect_close(bg, bc, n, nrhs, ldb, "X");
  }
}
TYPED_TEST(LuQr, Posv) {
  using T = TypeParam;
  for (char u : {'U', 'L'}) {
    check_posv<T>(u, 67, 3, 67, 67, false, 60);
    check_posv<T>(u, 67, 5, 70, 68, false, 61);
    check_posv<T>(u, 67, 2, 67, 67, true, 62);
  }
}

// ---- geqrf ------------------------------------------------------------------------------------------
template <class T> void check_geqrf(int m, int n, int lda, bool optimal_work, uint64_t seed) {
  SCOPED_TRACE("geqrf m=" + std::to_string(m) + " n=" + std::to_string(n) + " lda=" + std::to_string(lda));
  const auto a0 = general<T>(m, n, lda, seed);
  auto cpu_geqrf = gpu_test::cpu<typename F<T>::geqrf>(fname<T>("geqrf").c_str());
  T q = T(0);
  int32_t lw = -1, info = 0;
  auto tmp = a0;
  std::vector<T> tau_q(std::max(1, std::min(m, n)));
  cpu_geqrf(&m, &n, tmp.data(), &lda, tau_q.data(), &q, &lw, &info);
  int32_t lwork = optimal_work ? int32_t(std::real(q)) : std::max(1, n);
  const int k = std::min(m, n);
  auto ag = a0, ac = a0;
  std::vector<T> tg(k, T(-3)), tc(k, T(-3)), wg(lwork, T(-5)), wc(lwork, T(-5));
  int32_t ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::geqrf>(fname<T>("geqrf").c_str())(&m, &n, ag.data(), &lda, tg.data(), wg.data(),
                                                                         &lwork, &ig);
  EXPECT_RAN_ON_GPU();
  cpu_geqrf(&m, &n, ac.data(), &lda, tc.data(), wc.data(), &lwork, &ic);
  EXPECT_EQ(ig, ic);
  expect_work0(wg[0], wc[0]);
  EXPECT_TRUE(gpu_test::gaps_untouched(ag, a0, m, n, lda));
  expect_close(ag, ac, m, n, lda, "R and reflectors");
  expect_close(tg, tc, k, 1, k, "tau");
}
TYPED_TEST(LuQr, Geqrf) {
  using T = TypeParam;
  check_geqrf<T>(67, 67, 67, true, 70);     // K <= NX: unblocked, work[0] = n
  check_geqrf<T>(91, 67, 95, true, 71);     // m > n
  check_geqrf<T>(67, 91, 67, true, 72);     // m < n
  check_geqrf<T>(200, 150, 203, true, 73);  // K > NX: blocked, work[0] = n*NB
  check_geqrf<T>(200, 150, 200, false, 74); // lwork = n: WORK(1) still reports n*NB
}

// ---- orgqr / ungqr ----------------------------------------------------------------------------------
template <class T> void check_orgqr(int m, int n, int k, int lda, uint64_t seed) {
  SCOPED_TRACE("orgqr m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
  auto a = general<T>(m, n, lda, seed);
  std::vector<T> tau(n);
  {
    T q = T(0);
    int32_t lw = -1, info = 0;
    auto cpu_geqrf = gpu_test::cpu<typename F<T>::geqrf>(fname<T>("geqrf").c_str());
    cpu_geqrf(&m, &n, a.data(), &lda, tau.data(), &q, &lw, &info);
    std::vector<T> w(std::max<size_t>(1, size_t(std::real(q))));
    lw = int32_t(w.size());
    cpu_geqrf(&m, &n, a.data(), &lda, tau.data(), w.data(), &lw, &info);
    ASSERT_EQ(info, 0);
  }
  const char* routine = cplx<T> ? "ungqr" : "orgqr";
  auto cpu_orgqr = gpu_test::cpu<typename F<T>::orgqr>(fname<T>(routine).c_str());
  T q = T(0);
  int32_t lw = -1, info = 0;
  auto tmp = a;
  cpu_orgqr(&m, &n, &k, tmp.data(), &lda, tau.data(), &q, &lw, &info);
  int32_t lwork = std::max<int32_t>(n, int32_t(std::real(q)));
  const auto a0 = a;
  auto ag = a0, ac = a0;
  std::vector<T> wg(lwork, T(-5)), wc(lwork, T(-5));
  int32_t ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::orgqr>(fname<T>(routine).c_str())(&m, &n, &k, ag.data(), &lda, tau.data(), wg.data(),
                                                                         &lwork, &ig);
  EXPECT_RAN_ON_GPU();
  cpu_orgqr(&m, &n, &k, ac.data(), &lda, tau.data(), wc.data(), &lwork, &ic);
  EXPECT_EQ(ig, ic);
  expect_work0(wg[0], wc[0]);
  EXPECT_TRUE(gpu_test::gaps_untouched(ag, a0, m, n, lda));
  expect_close(ag, ac, m, n, lda, "Q");
}
TYPED_TEST(LuQr, Orgqr) {
  using T = TypeParam;
  check_orgqr<T>(67, 67, 67, 67, 80);
  check_orgqr<T>(91, 67, 67, 94, 81);
  check_orgqr<T>(91, 67, 50, 91, 82);     // k < n
  check_orgqr<T>(200, 150, 150, 200, 83); // k > NX: blocked, work[0] = n*NB
}
// The compact-WY route that sizes beyond int take (blocks of 64 reflectors: 150 is three, the last partial).
TYPED_TEST(LuQr, Orgqr64BitRoute) {
  using T = TypeParam;
  const gpu_test::Qr64Route route;
  check_orgqr<T>(91, 67, 50, 91, 82);
  check_orgqr<T>(200, 150, 150, 203, 83);
  check_orgqr<T>(200, 150, 100, 200, 84);  // k < n: the identity's columns past k stay unit vectors, then change
}

// ---- gels -------------------------------------------------------------------------------------------
// rank_deficient: a zero column of A (m >= n) or a zero row (m < n) makes the triangular factor's
// diagonal exactly zero: info > 0.
template <class T> void check_gels(char trans, int m, int n, int nrhs, int lda, int ldb, bool rank_deficient, uint64_t seed) {
  SCOPED_TRACE(std::string("gels trans=") + trans + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " nrhs=" + std::to_string(nrhs) + (rank_deficient ? " rank-deficient" : ""));
  auto a0 = general<T>(m, n, lda, seed);
  if (rank_deficient) {
    if (m >= n)
      for (int64_t i = 0; i < m; ++i) a0[i + 4 * lda] = T(0);
    else
      for (int64_t j = 0; j < n; ++j) a0[4 + j * lda] = T(0);
  }
  const auto b0 = general<T>(std::max(m, n), nrhs, ldb, seed + 1);
  auto cpu_gels = gpu_test::cpu<typename F<T>::gels>(fname<T>("gels").c_str());
  T q = T(0);
  int32_t lw = -1, info = 0;
  {
    auto ta = a0;
    auto tb = b0;
    cpu_gels(&trans, &m, &n, &nrhs, ta.data(), &lda, tb.data(), &ldb, &q, &lw, &info, 1);
  }
  int32_t lwork = int32_t(std::real(q));
  auto ag = a0, ac = a0, bg = b0, bc = b0;
  std::vector<T> wg(lwork, T(-5)), wc(lwork, T(-5));
  int32_t ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::gels>(fname<T>("gels").c_str())(&trans, &m, &n, &nrhs, ag.data(), &lda, bg.data(),
                                                                       &ldb, wg.data(), &lwork, &ig, 1);
  EXPECT_RAN_ON_GPU();
  cpu_gels(&trans, &m, &n, &nrhs, ac.data(), &lda, bc.data(), &ldb, wc.data(), &lwork, &ic, 1);
  EXPECT_EQ(ig, ic);
  const int p = std::max(m, n);
  EXPECT_TRUE(gpu_test::gaps_untouched(ag, a0, m, n, lda));
  EXPECT_TRUE(gpu_test::gaps_untouched(bg, b0, p, nrhs, ldb));
  expect_close(ag, ac, m, n, lda, "QR / LQ factors");
  const bool least_squares = (trans == 'N') == (m >= n);
  if (rank_deficient) {
    EXPECT_EQ(ig, 5);
    // ?gels returns early: WORK(1) holds TAU(1), a computed value.
    EXPECT_LE(std::abs(wg[0] - wc[0]), tolerance<T>() * std::max(1.0, double(std::abs(wc[0])))) << "work[0] (tau(1))";
    if (least_squares) {
      expect_close(bg, bc, p, nrhs, ldb, "Q^H B");
    } else {
      EXPECT_TRUE(bits_equal(bg, b0)) << "B must stay untouched";
    }
  } else {
    expect_work0(wg[0], wc[0]);
    expect_close(bg, bc, p, nrhs, ldb, "solution (and residual rows)");
  }
}
TYPED_TEST(LuQr, Gels) {
  using T = TypeParam;
  for (char t : {'N', ctrans<T>()}) {
    check_gels<T>(t, 91, 67, 3, 91, 91, false, 90);   // tall
    check_gels<T>(t, 91, 67, 70, 95, 97, false, 91);  // nrhs > n, ld > rows
    check_gels<T>(t, 67, 91, 4, 70, 93, false, 92);   // wide
    check_gels<T>(t, 67, 67, 2, 67, 67, false, 93);   // square
    check_gels<T>(t, 91, 67, 3, 91, 91, true, 94);
    check_gels<T>(t, 67, 91, 3, 67, 91, true, 95);
  }
}
TYPED_TEST(LuQr, Gels64BitRoute) {
  using T = TypeParam;
  const gpu_test::Qr64Route route;
  for (char t : {'N', ctrans<T>()}) {
    check_gels<T>(t, 150, 130, 3, 151, 152, false, 96);  // tall: Q^H B (least squares) or Q B (minimum norm)
    check_gels<T>(t, 130, 150, 70, 133, 151, false, 97); // wide
    check_gels<T>(t, 150, 130, 3, 150, 150, true, 98);   // info > 0: B holds Q^H B or stays
  }
}

// ---- invalid arguments stay with the CPU library (its xerbla) -----------------------------------------
TYPED_TEST(LuQr, InvalidArgumentsStayOnCpu) {
  using T = TypeParam;
  int m = 20, n = 20, lda = 10;  // lda < m
  std::vector<T> a(400, T(1));
  std::vector<int32_t> ipiv(20);
  int32_t info = 0;
  gpu_test::intercepted<typename F<T>::getrf>(fname<T>("getrf").c_str())(&m, &n, a.data(), &lda, ipiv.data(), &info);
  EXPECT_NE(gpu_test::last_call().device, 1);
  EXPECT_EQ(info, -4);
}

// ---- ?gels inputs LAPACK would rescale go back to the CPU library ----------------------------------------
TEST(LuQrGels, ScaledInputsStayOnCpu) {
  int m = 91, n = 67, nrhs = 2, lda = 91, ldb = 91;
  auto a = general<double>(m, n, lda, 200);
  for (auto& x : a) x *= 1e-300;  // max |a| < SMLNUM: ?gels scales A first
  auto b = general<double>(m, nrhs, ldb, 201);
  double q = 0;
  int32_t lw = -1, info = 0;
  auto ta = a, tb = b;
  gpu_test::cpu<F<double>::gels>("dgels_")("N", &m, &n, &nrhs, ta.data(), &lda, tb.data(), &ldb, &q, &lw, &info, 1);
  int32_t lwork = int32_t(q);
  std::vector<double> w(lwork);
  gpu_test::intercepted<F<double>::gels>("dgels_")("N", &m, &n, &nrhs, a.data(), &lda, b.data(), &ldb, w.data(), &lwork, &info, 1);
  EXPECT_NE(gpu_test::last_call().device, 1) << "the scaled path belongs to the CPU library";
  EXPECT_EQ(info, 0);
}

// ---- ILP64 names: 64-bit pivots and info ----------------------------------------------------------------
// An OpenBLAS built with SYMBOLSUFFIX=64_ exports dgetrf_64_; NumPy's scipy-openblas64 exports
// scipy_dgetrf_64_ (set GOFL_TEST_OPENBLAS64 to its path to test those names).
TEST(LuQrIlp64, GetrfGesvGetriGels) {
  using T = double;
  using I = int64_t;
  const gpu_test::Ilp64Lib lib = gpu_test::ilp64_lib({"dgetrf", "dgesv", "dgetri", "dgels"});
  if (!lib.handle) GTEST_SKIP() << "no CPU library exports ILP64 LAPACK names (dgetrf_64_ or, via GOFL_TEST_OPENBLAS64, scipy_dgetrf_64_)";
  I n = 67, lda = 70, nrhs = 3, ldb = 67;
  // getrf, singular: 64-bit info and pivots
  auto a0 = dominant<T>(n, lda, 100);
  for (I i = 0; i < n; ++i) a0[i + 3 * lda] = 0;
  auto ag = a0, ac = a0;
  std::vector<I> pg(n, -7), pc(n, -7);
  I ig = -99, ic = -99;
  lib.gpu<F<T, I>::getrf>("dgetrf")(&n, &n, ag.data(), &lda, pg.data(), &ig);
  EXPECT_RAN_ON_GPU();
  lib.cpu<F<T, I>::getrf>("dgetrf")(&n, &n, ac.data(), &lda, pc.data(), &ic);
  EXPECT_EQ(ig, ic);
  EXPECT_EQ(ig, 4);
  EXPECT_EQ(pg, pc);
  expect_close(ag, ac, n, n, lda, "LU factors");
  // getri on a regular LU: work[0] from the ILP64 query
  auto lu = dominant<T>(n, lda, 101);
  std::vector<I> ipiv(n);
  I info = 0;
  lib.cpu<F<T, I>::getrf>("dgetrf")(&n, &n, lu.data(), &lda, ipiv.data(), &info);
  auto cpu_getri = lib.cpu<F<T, I>::getri>("dgetri");
  T q = 0;
  I lw = -1;
  cpu_getri(&n, lu.data(), &lda, ipiv.data(), &q, &lw, &info);
  I lwork = std::max<I>(n, I(q));
  auto lg = lu, lc = lu;
  std::vector<T> wg(lwork), wc(lwork);
  lib.gpu<F<T, I>::getri>("dgetri")(&n, lg.data(), &lda, ipiv.data(), wg.data(), &lwork, &ig);
  EXPECT_RAN_ON_GPU();
  cpu_getri(&n, lc.data(), &lda, ipiv.data(), wc.data(), &lwork, &ic);
  EXPECT_EQ(ig, ic);
  EXPECT_EQ(wg[0], wc[0]);
  expect_close(lg, lc, n, n, lda, "inverse");
  // gesv
  auto a1 = dominant<T>(n, lda, 102);
  const auto b0 = general<T>(n, nrhs, ldb, 103);
  auto a1g = a1, a1c = a1, bg = b0, bc = b0;
  lib.gpu<F<T, I>::gesv>("dgesv")(&n, &nrhs, a1g.data(), &lda, pg.data(), bg.data(), &ldb, &ig);
  EXPECT_RAN_ON_GPU();
  lib.cpu<F<T, I>::gesv>("dgesv")(&n, &nrhs, a1c.data(), &lda, pc.data(), bc.data(), &ldb, &ic);
  EXPECT_EQ(ig, ic);
  EXPECT_EQ(pg, pc);
  expect_close(bg, bc, n, nrhs, ldb, "X");
  // gels (tall): work[0] from the ILP64 query
  I m = 91, ldb2 = 91;
  auto g0 = general<T>(m, n, m, 104);
  const auto gb0 = general<T>(m, nrhs, ldb2, 105);
  auto cpu_gels = lib.cpu<F<T, I>::gels>("dgels");
  {
    auto ta = g0;
    auto tb = gb0;
    lw = -1;
    cpu_gels("N", &m, &n, &nrhs, ta.data(), &m, tb.data(), &ldb2, &q, &lw, &info, 1);
  }
  lwork = I(q);
  auto gag = g0, gac = g0, gbg = gb0, gbc = gb0;
  std::vector<T> w2g(lwork), w2c(lwork);
  lib.gpu<F<T, I>::gels>("dgels")("N", &m, &n, &nrhs, gag.data(), &m, gbg.data(), &ldb2, w2g.data(), &lwork, &ig, 1);
  EXPECT_RAN_ON_GPU();
  cpu_gels("N", &m, &n, &nrhs, gac.data(), &m, gbc.data(), &ldb2, w2c.data(), &lwork, &ic, 1);
  EXPECT_EQ(ig, ic);
  EXPECT_EQ(w2g[0], w2c[0]);
  expect_close(gbg, gbc, m, nrhs, ldb2, "X");
}

}  // namespace
