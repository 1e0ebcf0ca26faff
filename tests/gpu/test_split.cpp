// GPU tests of one call over several GPUs (src/cuda/split.h: cuBLASXt gemm, cusolverMg getrf getrs
// potrf potrs syevd heevd). Run as part of the suite (GPU_OFFLOAD_SPLIT unset: auto) they check that with one
// usable GPU auto never splits; run with GPU_OFFLOAD_SPLIT=force (ctest -L gpu_split)
// they check that every split routine, on however many GPUs the process sees (one included), gives
// the CPU library's result with LAPACK's semantics (info, pivots, the untouched triangle and ld
// gaps), that what cusolverMg does not take (upper triangles, op T, singular matrices) is run by one
// GPU instead, and that a failure falls back: to one GPU ("split" fault), or to the CPU ("compute",
// with gemm's C restored for beta != 0).
#include <cstring>  // memcmp in gpu_harness.h

#include "gpu_harness.h"

#include <complex>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using gpu_test::real_t;
using gpu_test::tolerance;
using cf = std::complex<float>;
using cd = std::complex<double>;

enum class Split { Off, Auto, Force };
Split split_setting() {
  const char* v = std::getenv("GPU_OFFLOAD_SPLIT");
  if (!v || !*v || !std::strcmp(v, "auto")) return Split::Auto;
  return !std::strcmp(v, "force") ? Split::Force : Split::Off;
}

int last_split() {
  using fn = int (*)();
  static fn f = reinterpret_cast<fn>(dlsym(RTLD_DEFAULT, "gpu_offload_last_call_split"));
  return f ? f() : -1;
}

// GPUs the driver shows this process (the library has loaded libcuda by the time this is asked).
int visible_gpus() {
  static int n = [] {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    auto init = h ? reinterpret_cast<int (*)(unsigned)>(dlsym(h, "cuInit")) : nullptr;
    auto count = h ? reinterpret_cast<int (*)(int*)>(dlsym(h, "cuDeviceGetCount")) : nullptr;
    int c = 0;
    if (!init || !count || init(0) != 0 || count(&c) != 0) return 0;
    return c;
  }();
  return n;
}

// The path a call the split engines run should have taken.
void expect_split_path(const char* what) {
  const gpu_test::LastCall lc = gpu_test::last_call();
  EXPECT_EQ(lc.device, 1) << what << ": reason " << lc.reason << " gpu status " << lc.gpu_status;
  const Split s = split_setting();
  if (s == Split::Force) {
    EXPECT_GE(last_split(), 1) << what << ": not split under GPU_OFFLOAD_SPLIT=force";
  } else if (s == Split::Off || visible_gpus() == 1) {
    EXPECT_EQ(last_split(), 0) << what << ": split with one GPU under auto";
  }
}
// A call the split engines refuse (or give back): one GPU runs it.
void expect_one_gpu(const char* what) {
  const gpu_test::LastCall lc = gpu_test::last_call();
  EXPECT_EQ(lc.device, 1) << what << ": reason " << lc.reason << " gpu status " << lc.gpu_status;
  EXPECT_EQ(last_split(), 0) << what;
}

template <class T> constexpr char prec() {
  if constexpr (std::is_same_v<T, float>) return 's';
  else if constexpr (std::is_same_v<T, double>) return 'd';
  else if constexpr (std::is_same_v<T, cf>) return 'c';
  else return 'z';
}
template <class T> std::string fname(const char* r) { return std::string(1, prec<T>()) + r + "_"; }
template <class T> T conj_(T x) {
  if constexpr (gpu_test::is_complex_v<T>) return std::conj(x);
  else return x;
}

using I = int32_t;
template <class T> struct F {
  using gemm = void (*)(const char*, const char*, const I*, const I*, const I*, const T*, const T*, const I*, const T*,
                        const I*, const T*, T*, const I*, size_t, size_t);
  using getrf = void (*)(const I*, const I*, T*, const I*, I*, I*);
  using getrs = void (*)(const char*, const I*, const I*, const T*, const I*, const I*, T*, const I*, I*, size_t);
  using potrf = void (*)(const char*, const I*, T*, const I*, I*, size_t);
  using potrs = void (*)(const char*, const I*, const I*, const T*, const I*, T*, const I*, I*, size_t);
  using syevd = void (*)(const char*, const char*, const I*, T*, const I*, real_t<T>*, T*, const I*, I*, const I*, I*,
                         size_t, size_t);
  using heevd = void (*)(const char*, const char*, const I*, T*, const I*, real_t<T>*, T*, const I*, real_t<T>*,
                         const I*, I*, const I*, I*, size_t, size_t);
};

template <class T> void expect_close(const std::vector<T>& g, const std::vector<T>& c, int64_t rows, int64_t cols,
                                     int64_t ld, const char* what) {
  const double d = gpu_test::rel_diff(g.data(), c.data(), rows, cols, ld);
  EXPECT_LE(d, tolerance<T>()) << what << " differs (relative " << d << ")";
}
template <class T> std::vector<T> spd(int64_t n, int64_t ld, uint64_t seed) {
  auto a = gpu_test::random_matrix<T>(n, n, ld, seed);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < j; ++i) a[j + i * ld] = conj_(a[i + j * ld]);
  for (int64_t i = 0; i < n; ++i) a[i + i * ld] = T(real_t<T>(2 * n) + std::abs(std::real(a[i + i * ld])));
  return a;
}
template <class T> std::vector<T> dominant(int64_t n, int64_t ld, uint64_t seed) {
  auto a = gpu_test::random_matrix<T>(n, n, ld, seed);
  for (int64_t i = 0; i < n; ++i) a[i + i * ld] += T(real_t<T>(2 * n));
  return a;
}

// max |P L U - A| / max |A| for a packed n x n LU with 1-based pivots (when the pivots differ from the
// CPU's: a near tie decided the other way is no error).
template <class T> double lu_residual(const std::vector<T>& lu, const std::vector<I>& piv, const std::vector<T>& a0,
                                      int64_t n, int64_t ld) {
  std::vector<T> p(size_t(n * n), T(0));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      T s = T(0);
      for (int64_t l = 0; l <= std::min(i, j); ++l) s += (l == i ? T(1) : lu[i + l * ld]) * lu[l + j * ld];
      p[i + j * n] = s;
    }
  for (int64_t i = n - 1; i >= 0; --i)
    if (piv[size_t(i)] - 1 != i)
      for (int64_t j = 0; j < n; ++j) std::swap(p[i + j * n], p[piv[size_t(i)] - 1 + j * n]);
  double num = 0, den = 0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      num = std::max(num, double(std::abs(p[i + j * n] - a0[i + j * ld])));
      den = std::max(den, double(std::abs(a0[i + j * ld])));
    }
  return den > 0 ? num / den : num;
}

// The test switch for one test: set, and cleared however the test ends.
struct Fault {
  explicit Fault(const char* spec) { gpu_test::set_fault(spec); }
  ~Fault() { gpu_test::set_fault(nullptr); }
};

template <class T> class SplitCall : public ::testing::Test {};
using Precisions = ::testing::Types<float, double, cf, cd>;
TYPED_TEST_SUITE(SplitCall, Precisions);

// ---- gemm (cuBLASXt) -------------------------------------------------------------------------------
// Sizes that are not multiples of cuBLASXt's tiles; ld gaps; beta = 0 (C not read) and beta != 0.
enum class Expect { SplitPath, OneGpu, Cpu };  // where the call must have run
template <class T> void check_gemm(char ta, char tb, int m, int n, int k, T beta, uint64_t seed,
                                   Expect where = Expect::SplitPath) {
  SCOPED_TRACE(std::string("gemm ") + ta + tb + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
  const int lda = (ta == 'N' ? m : k) + 3, ldb = (tb == 'N' ? k : n) + 2, ldc = m + 5;
  const auto a = gpu_test::random_matrix<T>(0, ta == 'N' ? k : m, lda, seed);
  const auto b = gpu_test::random_matrix<T>(0, tb == 'N' ? n : k, ldb, seed + 1);
  const auto c0 = gpu_test::random_matrix<T>(0, n, ldc, seed + 2);
  const T alpha = T(real_t<T>(0.75));
  auto cg = c0, cc = c0;
  gpu_test::intercepted<typename F<T>::gemm>(fname<T>("gemm").c_str())(&ta, &tb, &m, &n, &k, &alpha, a.data(), &lda,
                                                                       b.data(), &ldb, &beta, cg.data(), &ldc, 1, 1);
  if (where == Expect::Cpu) EXPECT_EQ(gpu_test::last_call().device, 0) << "an injected failure must leave the call to the CPU";
  else if (where == Expect::OneGpu) expect_one_gpu("gemm");
  else expect_split_path("gemm");
  gpu_test::cpu<typename F<T>::gemm>(fname<T>("gemm").c_str())(&ta, &tb, &m, &n, &k, &alpha, a.data(), &lda, b.data(),
                                                               &ldb, &beta, cc.data(), &ldc, 1, 1);
  expect_close(cg, cc, m, n, ldc, "C");
  EXPECT_TRUE(gpu_test::gaps_untouched(cg, c0, m, n, ldc)) << "ld gap of C written";
}

TYPED_TEST(SplitCall, Gemm) {
  using T = TypeParam;
  // zgemm is not split (cuBLASXt's crashed on the H200): it runs on one GPU.
  const Expect where = std::is_same_v<T, std::complex<double>> ? Expect::OneGpu : Expect::SplitPath;
  check_gemm<T>('N', 'N', 700, 650, 600, T(0), 1, where);
  check_gemm<T>('T', 'N', 513, 300, 257, T(real_t<T>(0.5)), 2, where);
  check_gemm<T>('N', gpu_test::is_complex_v<T> ? 'C' : 'T', 300, 513, 400, T(real_t<T>(-1)), 3, where);
}

TEST(SplitCall, CblasRowMajorGemm) {
  using fn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
  const int m = 400, n = 333, k = 301, lda = k + 1, ldb = n + 2, ldc = n + 3;  // row major: ld >= columns
  const auto a = gpu_test::random_matrix<double>(0, m, lda, 11), b = gpu_test::random_matrix<double>(0, k, ldb, 12);
  const auto c0 = gpu_test::random_matrix<double>(0, m, ldc, 13);
  auto cg = c0, cc = c0;
  gpu_test::intercepted<fn>("cblas_dgemm")(101, 111, 111, m, n, k, 1.5, a.data(), lda, b.data(), ldb, 0.25, cg.data(), ldc);
  expect_split_path("cblas_dgemm row major");
  gpu_test::cpu<fn>("cblas_dgemm")(101, 111, 111, m, n, k, 1.5, a.data(), lda, b.data(), ldb, 0.25, cc.data(), ldc);
  expect_close(cg, cc, n, m, ldc, "C (row major)");
}

// ---- getrf / getrs (cusolverMg) ---------------------------------------------------------------------
TYPED_TEST(SplitCall, GetrfGetrs) {
  using T = TypeParam;
  for (const int n : {600, 257}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const int lda = n + 7, ldb = n + 3, nrhs = 5;
    const auto a0 = gpu_test::random_matrix<T>(n, n, lda, 20 + n);  // general: partial pivoting exchanges rows
    auto ag = a0, ac = a0;
    std::vector<I> pg(n, -7), pc(n, -7);
    I ig = -99, ic = -99;
    gpu_test::intercepted<typename F<T>::getrf>(fname<T>("getrf").c_str())(&n, &n, ag.data(), &lda, pg.data(), &ig);
    expect_split_path("getrf");
    gpu_test::cpu<typename F<T>::getrf>(fname<T>("getrf").c_str())(&n, &n, ac.data(), &lda, pc.data(), &ic);
    EXPECT_EQ(ig, ic) << "info";
    if (pg == pc) expect_close(ag, ac, n, n, lda, "LU factors");
    else EXPECT_LE(lu_residual(ag, pg, a0, n, lda), 50 * tolerance<T>()) << "pivots differ and P L U is not A";
    EXPECT_TRUE(gpu_test::gaps_untouched(ag, a0, n, n, lda)) << "ld gap of A written";

    // getrs 'N' on the CPU's factors: split; 'T' (cusolverMg refuses it): one GPU.
    for (const char trans : {'N', 'T'}) {
      const auto b0 = gpu_test::random_matrix<T>(n, nrhs, ldb, 30 + n);
      auto bg = b0, bc = b0;
      const auto lu0 = ac;
      gpu_test::intercepted<typename F<T>::getrs>(fname<T>("getrs").c_str())(&trans, &n, &nrhs, ac.data(), &lda, pc.data(),
                                                                             bg.data(), &ldb, &ig, 1);
      if (trans == 'N') expect_split_path("getrs N");
      else expect_one_gpu("getrs T");
      gpu_test::cpu<typename F<T>::getrs>(fname<T>("getrs").c_str())(&trans, &n, &nrhs, ac.data(), &lda, pc.data(),
                                                                     bc.data(), &ldb, &ic, 1);
      EXPECT_EQ(ig, ic);
      EXPECT_EQ(std::memcmp(ac.data(), lu0.data(), ac.size() * sizeof(T)), 0) << "A is input only";
      expect_close(bg, bc, n, nrhs, ldb, "X");
      EXPECT_TRUE(gpu_test::gaps_untouched(bg, b0, n, nrhs, ldb));
    }
  }
}

// A singular matrix: cusolverMg's info > 0 is given back, and one GPU reproduces LAPACK's partial LU.
TYPED_TEST(SplitCall, SingularGetrfFallsBackToOneGpu) {
  using T = TypeParam;
  const int n = 300, lda = 300;
  auto a0 = dominant<T>(n, lda, 40);
  for (int i = 0; i < n; ++i) a0[i + 3 * lda] = T(0);  // column 4 zero: U(4,4) == 0 exactly
  auto ag = a0, ac = a0;
  std::vector<I> pg(n), pc(n);
  I ig = -99, ic = -99;
  gpu_test::intercepted<typename F<T>::getrf>(fname<T>("getrf").c_str())(&n, &n, ag.data(), &lda, pg.data(), &ig);
  if (split_setting() == Split::Force) expect_one_gpu("singular getrf");
  gpu_test::cpu<typename F<T>::getrf>(fname<T>("getrf").c_str())(&n, &n, ac.data(), &lda, pc.data(), &ic);
  EXPECT_EQ(ig, 4);
  EXPECT_EQ(ig, ic);
  EXPECT_EQ(pg, pc);
  expect_close(ag, ac, n, n, lda, "partial LU");
}

// ---- potrf / potrs (cusolverMg: the lower triangle; the upper goes to one GPU) ----------------------
TYPED_TEST(SplitCall, PotrfPotrs) {
  using T = TypeParam;
  for (const char uplo : {'L', 'U'}) {
    SCOPED_TRACE(std::string("uplo ") + uplo);
    const int n = 600, lda = 605, ldb = 601, nrhs = 4;
    const auto a0 = spd<T>(n, lda, 50);
    auto ag = a0, ac = a0;
    I ig = -99, ic = -99;
    gpu_test::intercepted<typename F<T>::potrf>(fname<T>("potrf").c_str())(&uplo, &n, ag.data(), &lda, &ig, 1);
    if (uplo == 'L') expect_split_path("potrf L");
    else expect_one_gpu("potrf U");
    gpu_test::cpu<typename F<T>::potrf>(fname<T>("potrf").c_str())(&uplo, &n, ac.data(), &lda, &ic, 1);
    EXPECT_EQ(ig, ic);
    expect_close(ag, ac, n, n, lda, "Cholesky factor");
    // The other triangle and the gaps: bit for bit what they were.
    bool other = true;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < lda; ++i) {
        const bool untouched = i >= n || (uplo == 'L' ? i < j : i > j);
        if (untouched && std::memcmp(&ag[i + j * lda], &a0[i + j * lda], sizeof(T)) != 0) other = false;
      }
    EXPECT_TRUE(other) << "potrf wrote outside its triangle";

    const auto b0 = gpu_test::random_matrix<T>(n, nrhs, ldb, 51);
    auto bg = b0, bc = b0;
    gpu_test::intercepted<typename F<T>::potrs>(fname<T>("potrs").c_str())(&uplo, &n, &nrhs, ac.data(), &lda, bg.data(),
                                                                           &ldb, &ig, 1);
    if (uplo == 'L') expect_split_path("potrs L");
    else expect_one_gpu("potrs U");
    gpu_test::cpu<typename F<T>::potrs>(fname<T>("potrs").c_str())(&uplo, &n, &nrhs, ac.data(), &lda, bc.data(), &ldb,
                                                                   &ic, 1);
    EXPECT_EQ(ig, ic);
    expect_close(bg, bc, n, nrhs, ldb, "X");
  }
}

// Not positive definite: cusolverMg's info > 0 is given back; one GPU gives LAPACK's info.
TEST(SplitCall, IndefinitePotrfFallsBackToOneGpu) {
  const int n = 300, lda = 300;
  auto a0 = spd<double>(n, lda, 60);
  a0[10 + 10 * lda] = -1.0;
  auto ag = a0, ac = a0;
  I ig = -99, ic = -99;
  const char uplo = 'L';
  gpu_test::intercepted<F<double>::potrf>("dpotrf_")(&uplo, &n, ag.data(), &lda, &ig, 1);
  if (split_setting() == Split::Force) expect_one_gpu("indefinite potrf");
  gpu_test::cpu<F<double>::potrf>("dpotrf_")(&uplo, &n, ac.data(), &lda, &ic, 1);
  EXPECT_GT(ig, 0);
  EXPECT_EQ(ig, ic);
}

// ---- syevd / heevd (cusolverMg: the lower triangle; the upper goes to one GPU) ---------------------
// Eigenvalues against the CPU's; eigenvectors by A V = V diag(w) (each is defined up to sign or phase);
// work[0], rwork[0], iwork[0] and info exactly; jobz = 'N' destroys the triangle where LAPACK does.
template <class T> void call_eig(bool gpu, char jobz, char uplo, I n, std::vector<T>& a, I lda, std::vector<real_t<T>>& w,
                                 T& work0, real_t<T>& rwork0, I& iwork0, I& info) {
  using R = real_t<T>;
  const std::string name = gpu_test::is_complex_v<T> ? std::string(1, prec<T>()) + "heevd_" : fname<T>("syevd");
  // The CPU library's workspace sizes, then the call with them.
  T wq{};
  R rq{};
  I iq = 0, m1 = -1, qinfo = 0;
  if constexpr (gpu_test::is_complex_v<T>) {
    gpu_test::cpu<typename F<T>::heevd>(name.c_str())(&jobz, &uplo, &n, a.data(), &lda, w.data(), &wq, &m1, &rq, &m1,
                                                      &iq, &m1, &qinfo, 1, 1);
  } else {
    gpu_test::cpu<typename F<T>::syevd>(name.c_str())(&jobz, &uplo, &n, a.data(), &lda, w.data(), &wq, &m1, &iq, &m1,
                                                      &qinfo, 1, 1);
  }
  const I lwork = I(std::real(wq)), lrwork = I(rq), liwork = iq;
  std::vector<T> work(size_t(std::max<I>(lwork, 1)));
  std::vector<R> rwork(size_t(std::max<I>(lrwork, 1)));
  std::vector<I> iwork(size_t(std::max<I>(liwork, 1)));
  if constexpr (gpu_test::is_complex_v<T>) {
    auto f = gpu ? gpu_test::intercepted<typename F<T>::heevd>(name.c_str()) : gpu_test::cpu<typename F<T>::heevd>(name.c_str());
    f(&jobz, &uplo, &n, a.data(), &lda, w.data(), work.data(), &lwork, rwork.data(), &lrwork, iwork.data(), &liwork, &info,
      1, 1);
  } else {
    auto f = gpu ? gpu_test::intercepted<typename F<T>::syevd>(name.c_str()) : gpu_test::cpu<typename F<T>::syevd>(name.c_str());
    f(&jobz, &uplo, &n, a.data(), &lda, w.data(), work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  }
  work0 = work[0];
  rwork0 = rwork[0];
  iwork0 = iwork[0];
}

TYPED_TEST(SplitCall, SyevdHeevd) {
  using T = TypeParam;
  using R = real_t<T>;
  const I n = 300, lda = 304;
  for (const char jobz : {'V', 'N'})
    for (const char uplo : {'L', 'U'}) {
      SCOPED_TRACE(std::string("jobz ") + jobz + " uplo " + uplo);
      auto a0 = spd<T>(n, lda, 90);
      for (I i = 0; i < n; ++i) a0[i + i * lda] -= T(R(2 * n));  // indefinite, eigenvalues spread around 0
      auto ag = a0, ac = a0;
      std::vector<R> wg(n), wc(n);
      T g0{}, c0{};
      R gr{}, cr{};
      I gi = 0, ci = 0, ig = -99, ic = -99;
      call_eig<T>(true, jobz, uplo, n, ag, lda, wg, g0, gr, gi, ig);
      if (uplo == 'L') expect_split_path("syevd L");
      else expect_one_gpu("syevd U");
      call_eig<T>(false, jobz, uplo, n, ac, lda, wc, c0, cr, ci, ic);
      EXPECT_EQ(ig, ic);
      EXPECT_EQ(ig, 0);
      EXPECT_LE(gpu_test::rel_diff(wg.data(), wc.data(), n, 1, n), tolerance<T>()) << "eigenvalues";
      EXPECT_EQ(g0, c0) << "work[0]";
      EXPECT_EQ(gr, cr) << "rwork[0]";
      EXPECT_EQ(gi, ci) << "iwork[0]";
      EXPECT_TRUE(gpu_test::gaps_untouched(ag, a0, n, n, lda)) << "ld gap of A written";
      if (jobz == 'V') {
        // A V - V diag(w), with A the full Hermitian matrix the triangle defines.
        double r = 0, an = 0;
        for (I j = 0; j < n; ++j)
          for (I i = 0; i < n; ++i) {
            T s = T(0);
            for (I k = 0; k < n; ++k) {
              const bool in_tri = uplo == 'L' ? i >= k : i <= k;
              const T aik = in_tri ? a0[i + k * lda] : conj_(a0[k + i * lda]);
              s += (i == k ? T(std::real(aik)) : aik) * ag[k + j * lda];
            }
            r = std::max(r, double(std::abs(s - wg[j] * ag[i + j * lda])));
            an = std::max(an, double(std::abs(a0[i + j * lda])));
          }
        EXPECT_LE(r / (an * n), tolerance<T>()) << "A V != V diag(w)";
      } else {
        EXPECT_DESTROYED_AS_CPU(ag, ac, a0, n, n, lda);
        bool other = true;  // the strict other triangle: never written
        for (I j = 0; j < n; ++j)
          for (I i = 0; i < n; ++i)
            if ((uplo == 'L' ? i < j : i > j) && std::memcmp(&ag[i + j * lda], &a0[i + j * lda], sizeof(T)) != 0)
              other = false;
        EXPECT_TRUE(other) << "syevd wrote its other triangle";
      }
    }
}

// ---- failures -----------------------------------------------------------------------------------------
// The split engines fail: one GPU runs the call, with the CPU's result.
TEST(SplitCall, SplitFailureFallsBackToOneGpu) {
  const Fault fault("split");
  const int n = 400, lda = 400;
  const auto a0 = spd<double>(n, lda, 70);
  auto ag = a0, ac = a0;
  I ig = -1, ic = -1;
  const char uplo = 'L';
  gpu_test::intercepted<F<double>::potrf>("dpotrf_")(&uplo, &n, ag.data(), &lda, &ig, 1);
  expect_one_gpu("potrf with the split engines failing");
  gpu_test::cpu<F<double>::potrf>("dpotrf_")(&uplo, &n, ac.data(), &lda, &ic, 1);
  EXPECT_EQ(ig, ic);
  expect_close(ag, ac, n, n, lda, "Cholesky factor");
  check_gemm<double>('N', 'N', 500, 400, 300, 0.5, 71, Expect::OneGpu);  // and gemm: to one GPU too
}

// Every GPU path fails after cuBLASXt wrote C: C (beta != 0, so an input too) is put back and the
// CPU library computes the right result from it; the same for LU through cusolverMg.
TYPED_TEST(SplitCall, ComputeFailureFallsBackToCpu) {
  using T = TypeParam;
  const Fault fault("compute");
  check_gemm<T>('N', 'N', 500, 400, 300, T(real_t<T>(0.5)), 80, Expect::Cpu);
  check_gemm<T>('T', 'N', 300, 200, 500, T(0), 81, Expect::Cpu);
  const int n = 300, lda = 301;
  const auto a0 = gpu_test::random_matrix<T>(n, n, lda, 82);
  auto ag = a0, ac = a0;
  std::vector<I> pg(n), pc(n);
  I ig = -1, ic = -1;
  gpu_test::intercepted<typename F<T>::getrf>(fname<T>("getrf").c_str())(&n, &n, ag.data(), &lda, pg.data(), &ig);
  EXPECT_EQ(gpu_test::last_call().device, 0);
  gpu_test::cpu<typename F<T>::getrf>(fname<T>("getrf").c_str())(&n, &n, ac.data(), &lda, pc.data(), &ic);
  EXPECT_EQ(ig, ic);
  EXPECT_EQ(pg, pc);
  expect_close(ag, ac, n, n, lda, "LU factors (the CPU library's)");
}

}  // namespace
