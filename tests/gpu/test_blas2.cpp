// Level-2 BLAS on the GPU against the system OpenBLAS: gemv, symv/hemv and trsv in every precision,
// through the Fortran and CBLAS (column- and row-major) names, every trans/uplo/diag, increments
// 1, 2, -1 and -3 (a negative one walks the vector backwards), beta 0 (NaN in y), 1 and another
// value. The elements of a strided vector between and after its own are poisoned and must come
// back bit-identical, as must the matrix; then quick returns, invalid arguments and failures.
#include <cstring>  // gpu_harness.h uses memcmp

#include "gpu_harness.h"

#include <cmath>
#include <limits>
#include <string>

#include "cuda/backend_abi.h"
#include "trace/record.h"

namespace {

using gpu_test::is_complex_v;
using gpu_test::real_t;
using gpu_test::tolerance;
using cf = std::complex<float>;
using cd = std::complex<double>;

struct Api {
  const char* label;
  bool cblas, row;
};
const Api kApis[] = {{"fortran", false, false}, {"cblas-col", true, false}, {"cblas-row", true, true}};
const int kIncs[] = {1, 2, -1, -3};

template <class T> char prec() {
  if constexpr (std::is_same_v<T, float>) return 's';
  else if constexpr (std::is_same_v<T, double>) return 'd';
  else if constexpr (std::is_same_v<T, cf>) return 'c';
  else return 'z';
}
std::string sym(const Api& a, char p, const char* routine) {
  return a.cblas ? std::string("cblas_") + p + routine : std::string(1, p) + routine + "_";
}
int cb_flag(char c, char kind) {
  switch (kind) {
    case 't': return c == 'N' ? 111 : c == 'T' ? 112 : 113;
    case 'u': return c == 'U' ? 121 : 122;
    default: return c == 'N' ? 131 : 132;  // diag
  }
}
int layout(const Api& a) { return a.row ? 101 : 102; }
template <class S> using CScal = std::conditional_t<is_complex_v<S>, const void*, S>;
template <class S> CScal<S> pass(const S& v) {
  if constexpr (is_complex_v<S>) return static_cast<const void*>(&v);
  else return v;
}
template <class T> T scal(double re, double im) {
  if constexpr (is_complex_v<T>) return T(real_t<T>(re), real_t<T>(im));
  else return T(re);
}
template <class T> bool has_nan(const T& v) {
  if constexpr (is_complex_v<T>) return std::isnan(v.real()) || std::isnan(v.imag());
  else return std::isnan(v);
}

// ---- operands -----------------------------------------------------------------------------------------

// A strided vector of `len` logical elements: storage 1 + (len - 1) * |inc| elements plus a tail,
// every storage element not in the vector holding a poison value.
template <class T> struct Vec {
  int64_t len, inc;
  std::vector<T> s;
  size_t at(int64_t i) const { return size_t(inc > 0 ? i * inc : (len - 1 - i) * -inc); }
  bool logical(size_t p) const {
    const int64_t step = inc > 0 ? inc : -inc;
    return int64_t(p) % step == 0 && int64_t(p) / step < len;
  }
};
template <class T> Vec<T> make_vec(int64_t len, int64_t inc, uint64_t seed, bool nan) {
  const int64_t step = inc > 0 ? inc : -inc;
  Vec<T> v{len, inc, std::vector<T>(size_t(std::max<int64_t>(1 + (len - 1) * step, 0) + 5), scal<T>(1234.5, -678.25))};
  const auto r = gpu_test::random_matrix<T>(len, 1, len, seed);
  const real_t<T> q = std::numeric_limits<real_t<T>>::quiet_NaN();
  for (int64_t i = 0; i < len; ++i) v.s[v.at(i)] = nan ? scal<T>(q, q) : r[size_t(i)];
  return v;
}

// Logical elements agree (NaN for NaN, within the tolerance); poisoned storage is untouched.
template <class T> void expect_same(const Vec<T>& gpu, const Vec<T>& cpu, const Vec<T>& orig, bool no_nan) {
  double num = 0, den = 0;
  int nan_mismatch = 0, nans = 0, poison_written = 0;
  for (int64_t i = 0; i < gpu.len; ++i) {
    const T g = gpu.s[gpu.at(i)], c = cpu.s[cpu.at(i)];
    nan_mismatch += has_nan(g) != has_nan(c);
    nans += has_nan(g);
    num = std::max(num, double(std::abs(g - c)));
    den = std::max(den, double(std::abs(c)));
  }
  for (size_t p = 0; p < gpu.s.size(); ++p)
    if (!gpu.logical(p)) poison_written += std::memcmp(&gpu.s[p], &orig.s[p], sizeof(T)) != 0;
  EXPECT_EQ(nan_mismatch, 0) << "elements NaN on one device only";
  EXPECT_LE(den > 0 ? num / den : num, tolerance<T>());
  EXPECT_EQ(poison_written, 0) << "storage between or after the vector's elements written";
  if (no_nan) {
    EXPECT_EQ(nans, 0) << "NaN in y propagated although beta = 0";
  }
}

// A rows x cols matrix in the call's layout, random everywhere (the ld gaps included).
struct Mat {
  int64_t ld;
  bool row;
  size_t at(int64_t i, int64_t j) const { return size_t(row ? i * ld + j : i + j * ld); }
};
template <class T> std::vector<T> make_mat(const Mat& m, int64_t rows, int64_t cols, uint64_t seed) {
  return gpu_test::random_matrix<T>(m.row ? cols : rows, m.row ? rows : cols, m.ld, seed);
}

#define EXPECT_GPU(lc) EXPECT_EQ((lc).device, 1) << "reason " << (lc).reason << " gpu status " << (lc).gpu_status

// ---- calls --------------------------------------------------------------------------------------------

template <class T>
void call_gemv(void* fn, const Api& a, char tr, int m, int n, T alpha, const T* A, int lda, const T* x, int incx,
               T beta, T* y, int incy) {
  if (!a.cblas) {
    using F = void (*)(const char*, const int*, const int*, const T*, const T*, const int*, const T*, const int*,
                       const T*, T*, const int*, size_t);
    reinterpret_cast<F>(fn)(&tr, &m, &n, &alpha, A, &lda, x, &incx, &beta, y, &incy, 1);
  } else {
    using F = void (*)(int, int, int, int, CScal<T>, const T*, int, const T*, int, CScal<T>, T*, int);
    reinterpret_cast<F>(fn)(layout(a), cb_flag(tr, 't'), m, n, pass(alpha), A, lda, x, incx, pass(beta), y, incy);
  }
}

template <class T>
void call_symv(void* fn, const Api& a, char uplo, int n, T alpha, const T* A, int lda, const T* x, int incx, T beta,
               T* y, int incy) {
  if (!a.cblas) {
    using F = void (*)(const char*, const int*, const T*, const T*, const int*, const T*, const int*, const T*, T*,
                       const int*, size_t);
    reinterpret_cast<F>(fn)(&uplo, &n, &alpha, A, &lda, x, &incx, &beta, y, &incy, 1);
  } else {
    using F = void (*)(int, int, int, CScal<T>, const T*, int, const T*, int, CScal<T>, T*, int);
    reinterpret_cast<F>(fn)(layout(a), cb_flag(uplo, 'u'), n, pass(alpha), A, lda, x, incx, pass(beta), y, incy);
  }
}

template <class T>
void call_trsv(void* fn, const Api& a, char uplo, char tr, char diag, int n, const T* A, int lda, T* x, int incx) {
  if (!a.cblas) {
    using F = void (*)(const char*, const char*, const char*, const int*, const T*, const int*, T*, const int*, size_t,
                       size_t, size_t);
    reinterpret_cast<F>(fn)(&uplo, &tr, &diag, &n, A, &lda, x, &incx, 1, 1, 1);
  } else {
    using F = void (*)(int, int, int, int, int, const T*, int, T*, int);
    reinterpret_cast<F>(fn)(layout(a), cb_flag(uplo, 'u'), cb_flag(tr, 't'), cb_flag(diag, 'd'), n, A, lda, x, incx);
  }
}

// The three betas: 0 with NaN in y (y must not be read), 1, and another value.
enum class Beta { Zero, One, Other };
template <class T> T beta_of(Beta b) { return b == Beta::Zero ? T(0) : b == Beta::One ? T(1) : scal<T>(0.7, -0.2); }
const char* beta_name(Beta b) { return b == Beta::Zero ? "beta 0 (NaN y)" : b == Beta::One ? "beta 1" : "beta 0.7"; }

// Odd sizes, one extra element per column (row) of the matrix.
constexpr int M = 67, N = 45, PAD = 1;

template <class T> void gemv_case(const Api& a, char tr, int incx, int incy, Beta b, uint64_t seed) {
  const std::string name = sym(a, prec<T>(), "gemv");
  SCOPED_TRACE(name + " [" + a.label + "] trans " + tr + " incx " + std::to_string(incx) + " incy " +
               std::to_string(incy) + " " + beta_name(b));
  const Mat ma{(a.row ? N : M) + PAD, a.row};
  const auto A = make_mat<T>(ma, M, N, seed), A0 = A;
  const int xl = tr == 'N' ? N : M, yl = tr == 'N' ? M : N;
  const auto x = make_vec<T>(xl, incx, seed + 1, false), x0 = x;
  const auto y0 = make_vec<T>(yl, incy, seed + 2, b == Beta::Zero);
  auto yg = y0, yc = y0;
  const T alpha = scal<T>(0.8, 0.3), beta = beta_of<T>(b);
  call_gemv<T>(gpu_test::intercepted<void*>(name.c_str()), a, tr, M, N, alpha, A.data(), int(ma.ld), x.s.data(), incx,
               beta, yg.s.data(), incy);
  const auto lc = gpu_test::last_call();
  call_gemv<T>(gpu_test::cpu_symbol(name.c_str()), a, tr, M, N, alpha, A.data(), int(ma.ld), x.s.data(), incx, beta,
               yc.s.data(), incy);
  EXPECT_GPU(lc);
  expect_same(yg, yc, y0, b == Beta::Zero);
  EXPECT_EQ(std::memcmp(A.data(), A0.data(), A.size() * sizeof(T)), 0) << "A written";
  EXPECT_EQ(std::memcmp(x.s.data(), x0.s.data(), x.s.size() * sizeof(T)), 0) << "x written";
}

// symv (real) / hemv (complex); the random diagonal has imaginary parts, which hemv must ignore.
template <class T> void symv_case(const Api& a, char uplo, int incx, int incy, Beta b, uint64_t seed) {
  const std::string name = sym(a, prec<T>(), is_complex_v<T> ? "hemv" : "symv");
  SCOPED_TRACE(name + " [" + a.label + "] uplo " + uplo + " incx " + std::to_string(incx) + " incy " +
               std::to_string(incy) + " " + beta_name(b));
  const Mat ma{M + PAD, a.row};
  const auto A = make_mat<T>(ma, M, M, seed);
  const auto x = make_vec<T>(M, incx, seed + 1, false);
  const auto y0 = make_vec<T>(M, incy, seed + 2, b == Beta::Zero);
  auto yg = y0, yc = y0;
  const T alpha = scal<T>(0.8, 0.3), beta = beta_of<T>(b);
  call_symv<T>(gpu_test::intercepted<void*>(name.c_str()), a, uplo, M, alpha, A.data(), int(ma.ld), x.s.data(), incx,
               beta, yg.s.data(), incy);
  const auto lc = gpu_test::last_call();
  call_symv<T>(gpu_test::cpu_symbol(name.c_str()), a, uplo, M, alpha, A.data(), int(ma.ld), x.s.data(), incx, beta,
               yc.s.data(), incy);
  EXPECT_GPU(lc);
  expect_same(yg, yc, y0, b == Beta::Zero);
}

// A well-conditioned triangle: diagonal near 2.5, small off-diagonal elements.
template <class T> void trsv_case(const Api& a, char uplo, char tr, char diag, int incx, uint64_t seed) {
  const std::string name = sym(a, prec<T>(), "trsv");
  SCOPED_TRACE(name + " [" + a.label + "] uplo " + uplo + " trans " + tr + " diag " + diag + " incx " +
               std::to_string(incx));
  const Mat ma{M + PAD, a.row};
  auto A = make_mat<T>(ma, M, M, seed);
  for (int j = 0; j < M; ++j)
    for (int i = 0; i < M; ++i) {
      T& v = A[ma.at(i, j)];
      v = i == j ? v + T(real_t<T>(2.5)) : v * T(real_t<T>(0.5 / M));
    }
  const auto A0 = A;
  const auto x0 = make_vec<T>(M, incx, seed + 1, false);
  auto xg = x0, xc = x0;
  call_trsv<T>(gpu_test::intercepted<void*>(name.c_str()), a, uplo, tr, diag, M, A.data(), int(ma.ld), xg.s.data(), incx);
  const auto lc = gpu_test::last_call();
  call_trsv<T>(gpu_test::cpu_symbol(name.c_str()), a, uplo, tr, diag, M, A.data(), int(ma.ld), xc.s.data(), incx);
  EXPECT_GPU(lc);
  expect_same(xg, xc, x0, false);
  EXPECT_EQ(std::memcmp(A.data(), A0.data(), A.size() * sizeof(T)), 0) << "A written";
}

// ---- the suites ---------------------------------------------------------------------------------------

template <class T> class Blas2 : public ::testing::Test {};
using AllTypes = ::testing::Types<float, double, cf, cd>;
TYPED_TEST_SUITE(Blas2, AllTypes);

TYPED_TEST(Blas2, Gemv) {
  uint64_t seed = 1;
  for (const Api& a : kApis)
    for (char tr : {'N', 'T', 'C'})
      for (int incx : kIncs)
        for (int incy : kIncs)
          for (Beta b : {Beta::Zero, Beta::One, Beta::Other}) gemv_case<TypeParam>(a, tr, incx, incy, b, seed += 3);
}

TYPED_TEST(Blas2, SymvHemv) {
  uint64_t seed = 10000;
  for (const Api& a : kApis)
    for (char uplo : {'U', 'L'})
      for (int incx : kIncs)
        for (int incy : kIncs)
          for (Beta b : {Beta::Zero, Beta::One, Beta::Other}) symv_case<TypeParam>(a, uplo, incx, incy, b, seed += 3);
}

TYPED_TEST(Blas2, Trsv) {
  uint64_t seed = 20000;
  for (const Api& a : kApis)
    for (char uplo : {'U', 'L'})
      for (char tr : {'N', 'T', 'C'})
        for (char diag : {'N', 'U'})
          for (int incx : kIncs) trsv_case<TypeParam>(a, uplo, tr, diag, incx, seed += 2);
}

// Quick returns and y := beta y stay on the CPU: the program gets the CPU library's exact result.
TYPED_TEST(Blas2, QuickReturnsStayOnTheCpu) {
  using T = TypeParam;
  const Api& f = kApis[0];
  const std::string gemv = sym(f, prec<T>(), "gemv");
  const std::string symv = sym(f, prec<T>(), is_complex_v<T> ? "hemv" : "symv");
  const auto A = gpu_test::random_matrix<T>(M, M, M, 7);
  const auto x = make_vec<T>(M, 1, 8, false), y0 = make_vec<T>(M, -2, 9, false);
  auto check = [&](const char* what, auto&& run) {
    SCOPED_TRACE(what);
    auto yg = y0, yc = y0;
    run(gpu_test::intercepted<void*>(gemv.c_str()), gpu_test::intercepted<void*>(symv.c_str()), yg);
    const auto lc = gpu_test::last_call();
    run(gpu_test::cpu_symbol(gemv.c_str()), gpu_test::cpu_symbol(symv.c_str()), yc);
    EXPECT_EQ(lc.device, 0);
    EXPECT_EQ(std::memcmp(yg.s.data(), yc.s.data(), yc.s.size() * sizeof(T)), 0) << "not the CPU's result";
  };
  const T zero = T(0), half = scal<T>(0.5, 0.25), one = T(1);
  check("gemv alpha 0", [&](void* g, void*, Vec<T>& y) { call_gemv<T>(g, f, 'N', M, M, zero, A.data(), M, x.s.data(), 1, half, y.s.data(), -2); });
  check("gemv alpha 0 beta 1", [&](void* g, void*, Vec<T>& y) { call_gemv<T>(g, f, 'T', M, M, zero, A.data(), M, x.s.data(), 1, one, y.s.data(), -2); });
  check("gemv n 0", [&](void* g, void*, Vec<T>& y) { call_gemv<T>(g, f, 'N', M, 0, half, A.data(), M, x.s.data(), 1, half, y.s.data(), -2); });
  check("symv alpha 0", [&](void*, void* s, Vec<T>& y) { call_symv<T>(s, f, 'U', M, zero, A.data(), M, x.s.data(), 1, half, y.s.data(), -2); });
}

// ---- arguments the CPU library rejects ----------------------------------------------------------------

TEST(Blas2Errors, InvalidArgumentsStayWithTheCpuLibrary) {
  const int n = 20, bad_lda = 10, ld = 20, inc = 1, zero_inc = 0;
  const double alpha = 1, beta = 0;
  std::vector<double> A(400, 1.0), x(40, 1.0), y(20, 7.0);
  auto expect_cpu_reported = [&](const char* what) {
    SCOPED_TRACE(what);
    const auto lc = gpu_test::last_call();
    EXPECT_EQ(lc.device, 0);
    EXPECT_EQ(lc.reason, GOFL_R_INVALID_ARGS);
    for (double v : y) ASSERT_EQ(v, 7.0);
  };
  // OpenBLAS's xerbla prints a line for each of these: expected.
  using Gemv = void (*)(const char*, const int*, const int*, const double*, const double*, const int*, const double*,
                        const int*, const double*, double*, const int*, size_t);
  gpu_test::intercepted<Gemv>("dgemv_")("N", &n, &n, &alpha, A.data(), &bad_lda, x.data(), &inc, &beta, y.data(), &inc, 1);
  expect_cpu_reported("dgemv_ lda < m");
  gpu_test::intercepted<Gemv>("dgemv_")("X", &n, &n, &alpha, A.data(), &ld, x.data(), &inc, &beta, y.data(), &inc, 1);
  expect_cpu_reported("dgemv_ trans X");
  gpu_test::intercepted<Gemv>("dgemv_")("N", &n, &n, &alpha, A.data(), &ld, x.data(), &inc, &beta, y.data(), &zero_inc, 1);
  expect_cpu_reported("dgemv_ incy 0");
  using CGemv = void (*)(int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
  // Row major: lda must be at least n (here the m = 20 rows are 30 long, lda 20 < 30).
  gpu_test::intercepted<CGemv>("cblas_dgemv")(101, 111, 10, 30, alpha, A.data(), 20, x.data(), 1, beta, y.data(), 1);
  expect_cpu_reported("cblas_dgemv row major lda < n");
  using Symv = void (*)(const char*, const int*, const double*, const double*, const int*, const double*, const int*,
                        const double*, double*, const int*, size_t);
  gpu_test::intercepted<Symv>("dsymv_")("U", &n, &alpha, A.data(), &ld, x.data(), &zero_inc, &beta, y.data(), &inc, 1);
  expect_cpu_reported("dsymv_ incx 0");
  using Trsv = void (*)(const char*, const char*, const char*, const int*, const double*, const int*, double*,
                        const int*, size_t, size_t, size_t);
  gpu_test::intercepted<Trsv>("dtrsv_")("U", "N", "X", &n, A.data(), &ld, y.data(), &inc, 1, 1, 1);
  expect_cpu_reported("dtrsv_ diag X");
}

// ---- failures: the CPU result, nothing lost -----------------------------------------------------------

struct DgemvPair {
  Vec<double> orig, gpu, cpu;
  gpu_test::LastCall lc;
};
DgemvPair dgemv_pair(uint64_t seed, int incy) {
  const Api& f = kApis[0];
  const auto A = gpu_test::random_matrix<double>(M, N, M, seed);
  const auto x = make_vec<double>(N, 1, seed + 1, false), y = make_vec<double>(M, incy, seed + 2, false);
  DgemvPair p{y, y, y, {}};
  call_gemv<double>(gpu_test::intercepted<void*>("dgemv_"), f, 'N', M, N, 1.25, A.data(), M, x.s.data(), 1, -0.5,
                    p.gpu.s.data(), incy);
  p.lc = gpu_test::last_call();
  call_gemv<double>(gpu_test::cpu_symbol("dgemv_"), f, 'N', M, N, 1.25, A.data(), M, x.s.data(), 1, -0.5, p.cpu.s.data(),
                    incy);
  return p;
}

class Blas2Faults : public ::testing::TestWithParam<const char*> {
 protected:
  void TearDown() override { gpu_test::set_fault(nullptr); }
};

TEST_P(Blas2Faults, CpuRunsTheCallAndTheGpuComesBack) {
  for (int incy : {1, -3}) {  // the direct strided copy and the host-side gather/scatter
    SCOPED_TRACE("incy " + std::to_string(incy));
    dgemv_pair(1, incy);  // the GPU is started, so the fault reaches the backend
    gpu_test::set_fault(GetParam());
    const DgemvPair p = dgemv_pair(2, incy);
    EXPECT_EQ(p.lc.device, 0);
    EXPECT_EQ(p.lc.reason, GOFL_R_GPU_FAILED) << "gpu status " << p.lc.gpu_status;
    EXPECT_EQ(p.lc.gpu_status, GOFL_GPU_INJECTED);
    // The failure and its step, as gpu_offload_last_call_failure and the summary say them.
    EXPECT_EQ(p.lc.failure.rfind("injected fault (test) 0 at ", 0), 0u) << p.lc.failure;
    EXPECT_NE(p.lc.failure.find("(injected)"), std::string::npos) << p.lc.failure;
    EXPECT_EQ(std::memcmp(p.gpu.s.data(), p.cpu.s.data(), p.cpu.s.size() * sizeof(double)), 0) << "not the CPU's result";
    gpu_test::set_fault(nullptr);
    const DgemvPair q = dgemv_pair(3, incy);
    EXPECT_GPU(q.lc);
    expect_same(q.gpu, q.cpu, q.orig, false);
  }
}
INSTANTIATE_TEST_SUITE_P(Steps, Blas2Faults, ::testing::Values("alloc", "h2d", "compute", "d2h-before"));

// The verify-mode switch reaches gemv's result (through the gather/scatter path too).
TEST(Blas2Corrupt, CorruptSwitchChangesTheGpuResult) {
  for (int incy : {1, -1}) {
    SCOPED_TRACE("incy " + std::to_string(incy));
    dgemv_pair(4, incy);
    gpu_test::set_fault("corrupt");
    const DgemvPair p = dgemv_pair(5, incy);
    gpu_test::set_fault(nullptr);
    EXPECT_GPU(p.lc);
    double diff = 0;
    for (int64_t i = 0; i < p.gpu.len; ++i) diff = std::max(diff, std::fabs(p.gpu.s[p.gpu.at(i)] - p.cpu.s[p.cpu.at(i)]));
    EXPECT_GT(diff, 0.5);
  }
}

}  // namespace
