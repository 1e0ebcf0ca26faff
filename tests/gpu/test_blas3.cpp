// Level-3 BLAS on the GPU against the system OpenBLAS: every routine x precision x flag combination,
// through the Fortran and CBLAS (row- and column-major) names, 32- and 64-bit integers, odd sizes,
// ld > rows (the gaps must stay untouched), beta = 0 with NaN in C; then the failure paths.
//
// ILP64 names (dgemm_64_, cblas_dgemm64_, scipy_dgemm_64_, ...) are tested when a CPU library defines
// them: the system OpenBLAS does not, so set GOFL_TEST_OPENBLAS64 to an ILP64 OpenBLAS, e.g. NumPy's
// numpy.libs/libscipy_openblas64_*.so.
#include <cstring>  // gpu_harness.h uses memcmp

#include "gpu_harness.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "cuda/backend_abi.h"
#include "trace/record.h"

extern "C" char* openblas_get_config(void);  // links the test to OpenBLAS (the CPU reference)

namespace {

using gpu_test::is_complex_v;
using gpu_test::real_t;
using gpu_test::tolerance;
using cf = std::complex<float>;
using cd = std::complex<double>;

// ---- the interfaces ---------------------------------------------------------------------------------

struct Api {
  const char* label;
  bool cblas, row, ilp64;
  const char* prefix;
};
const Api kApis[] = {
    {"fortran", false, false, false, ""},
    {"cblas-col", true, false, false, ""},
    {"cblas-row", true, true, false, ""},
    {"fortran-ilp64", false, false, true, ""},
    {"cblas-col-ilp64", true, false, true, ""},
    {"cblas-row-ilp64", true, true, true, ""},
    {"scipy-fortran-ilp64", false, false, true, "scipy_"},
    {"scipy-cblas-row-ilp64", true, true, true, "scipy_"},
};

template <class T> char prec() {
  if constexpr (std::is_same_v<T, float>) return 's';
  else if constexpr (std::is_same_v<T, double>) return 'd';
  else if constexpr (std::is_same_v<T, cf>) return 'c';
  else return 'z';
}

std::string sym(const Api& a, char p, const char* routine) {
  std::string s = a.prefix;
  if (a.cblas) return s + "cblas_" + p + routine + (a.ilp64 ? "64_" : "");
  return s + p + routine + (a.ilp64 ? "_64_" : "_");
}

std::mutex g_skip_m;
std::set<std::string> g_skipped;

// The CPU library's definition. Standard names must exist in the system OpenBLAS; ILP64 ones are
// looked for there and in GOFL_TEST_OPENBLAS64, and their tests are skipped when neither has them.
void* cpu_fn(const Api& a, const std::string& name) {
  if (!a.ilp64 && !*a.prefix) return gpu_test::cpu_symbol(name.c_str());
  static void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
  static void* lib64 = [] {
    const char* p = std::getenv("GOFL_TEST_OPENBLAS64");
    return p && *p ? dlopen(p, RTLD_NOW | RTLD_LOCAL) : nullptr;
  }();
  void* f = lib ? dlsym(lib, name.c_str()) : nullptr;
  if (!f && lib64) f = dlsym(lib64, name.c_str());
  if (!f) {
    std::lock_guard<std::mutex> lk(g_skip_m);
    g_skipped.insert(name);
  }
  return f;
}

int cb_flag(char c, char kind) {
  switch (kind) {
    case 't': return c == 'N' ? 111 : c == 'T' ? 112 : 113;
    case 'u': return c == 'U' ? 121 : 122;
    case 'd': return c == 'N' ? 131 : 132;
    default: return c == 'L' ? 141 : 142;  // side
  }
}
int layout(const Api& a) { return a.row ? 101 : 102; }

// CBLAS passes complex scalars by address, real ones by value.
template <class S> using CScal = std::conditional_t<is_complex_v<S>, const void*, S>;
template <class S> CScal<S> pass(const S& v) {
  if constexpr (is_complex_v<S>) return static_cast<const void*>(&v);
  else return v;
}

// ---- matrices -----------------------------------------------------------------------------------------

// A logical r x c matrix in the call's layout with `pad` extra elements per column (row) of storage.
struct Shape {
  int64_t r, c, ld;
  bool row;
  int64_t inner() const { return row ? c : r; }
  int64_t outer() const { return row ? r : c; }
  size_t at(int64_t i, int64_t j) const { return size_t(row ? i * ld + j : i + j * ld); }
};
Shape shape(int64_t r, int64_t c, bool row, int64_t pad) {
  Shape s{r, c, 0, row};
  s.ld = std::max<int64_t>(1, s.inner() + pad);
  return s;
}
template <class T> std::vector<T> fill(const Shape& s, uint64_t seed) {
  return gpu_test::random_matrix<T>(s.inner(), s.outer(), s.ld, seed);
}
template <class T> T scal(double re, double im) {
  if constexpr (is_complex_v<T>) return T(real_t<T>(re), real_t<T>(im));
  else return T(re);
}
template <class T> bool has_nan(const T& v) {
  if constexpr (is_complex_v<T>) return std::isnan(v.real()) || std::isnan(v.imag());
  else return std::isnan(v);
}
template <class T> void fill_nan(std::vector<T>& v) {
  const real_t<T> q = std::numeric_limits<real_t<T>>::quiet_NaN();
  for (auto& x : v) x = scal<T>(q, q);
}
// A triangular operand that is well conditioned for trsm: small off-diagonal, diagonal near 2.
template <class T> void condition(std::vector<T>& a, const Shape& s, int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      T& x = a[s.at(i, j)];
      x = i == j ? x + T(real_t<T>(2.5)) : x * T(real_t<T>(0.5 / double(n)));
    }
}

// GPU and CPU results agree, NaN for NaN, and the gaps between columns are as they were.
template <class T>
void expect_same(const std::vector<T>& gpu, const std::vector<T>& cpu, const std::vector<T>& orig, const Shape& s) {
  int64_t nan_mismatch = 0;
  for (int64_t j = 0; j < s.outer(); ++j)
    for (int64_t i = 0; i < s.inner(); ++i) {
      const size_t p = size_t(i + j * s.ld);
      nan_mismatch += has_nan(gpu[p]) != has_nan(cpu[p]);
    }
  EXPECT_EQ(nan_mismatch, 0) << "elements NaN on one device only";
  EXPECT_LE(gpu_test::rel_diff(gpu.data(), cpu.data(), s.inner(), s.outer(), s.ld), tolerance<T>());
  EXPECT_TRUE(gpu_test::gaps_untouched(gpu, orig, s.inner(), s.outer(), s.ld)) << "ld gaps written";
}
template <class T> void expect_finite(const std::vector<T>& v, const Shape& s) {
  int64_t bad = 0;
  for (int64_t j = 0; j < s.outer(); ++j)
    for (int64_t i = 0; i < s.inner(); ++i) bad += has_nan(v[size_t(i + j * s.ld)]);
  EXPECT_EQ(bad, 0) << "NaN in C propagated although beta = 0";
}
// syrk & co. write only the uplo triangle of C: the other one must be bit-identical to the input.
template <class T>
void expect_other_triangle(const std::vector<T>& gpu, const std::vector<T>& orig, const Shape& s, char uplo) {
  int64_t changed = 0;
  for (int64_t j = 0; j < s.c; ++j)
    for (int64_t i = 0; i < s.r; ++i) {
      const bool in = uplo == 'U' ? i <= j : i >= j;
      if (!in) changed += std::memcmp(&gpu[s.at(i, j)], &orig[s.at(i, j)], sizeof(T)) != 0;
    }
  EXPECT_EQ(changed, 0) << "elements of the other triangle written";
}

// The elements of a square operand that BLAS never reads: the triangle opposite `uplo` (logical
// indices, so a row-major call's too) and, with a unit diagonal, the diagonal. They become NaN: a
// result that reads them (or a copy that moves the wrong triangle) is NaN where the CPU's is not.
template <class T> void poison_unread(std::vector<T>& A, const Shape& s, char uplo, bool unit_diag = false) {
  const real_t<T> q = std::numeric_limits<real_t<T>>::quiet_NaN();
  for (int64_t j = 0; j < s.c; ++j)
    for (int64_t i = 0; i < s.r; ++i)
      if ((uplo == 'U' ? i > j : i < j) || (unit_diag && i == j)) A[s.at(i, j)] = T(q);
}

#define EXPECT_GPU(lc)                                                                              \
  EXPECT_EQ((lc).device, 1) << "reason " << (lc).reason << " gpu status " << (lc).gpu_status

std::string what(const Api& a, const std::string& name, const std::string& flags) {
  return name + " [" + a.label + "] " + flags;
}

// ---- gemm ---------------------------------------------------------------------------------------------

template <class T, class I>
void call_gemm(void* fn, const Api& a, char ta, char tb, I m, I n, I k, T alpha, const T* A, I lda, const T* B, I ldb,
               T beta, T* C, I ldc) {
  if (!a.cblas) {
    using F = void (*)(const char*, const char*, const I*, const I*, const I*, const T*, const T*, const I*, const T*,
                       const I*, const T*, T*, const I*, size_t, size_t);
    reinterpret_cast<F>(fn)(&ta, &tb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
  } else {
    using F = void (*)(int, int, int, I, I, I, CScal<T>, const T*, I, const T*, I, CScal<T>, T*, I);
    reinterpret_cast<F>(fn)(layout(a), cb_flag(ta, 't'), cb_flag(tb, 't'), m, n, k, pass(alpha), A, lda, B, ldb,
                            pass(beta), C, ldc);
  }
}

struct GemmCase {
  char ta, tb;
  int64_t m, n, k, pad;
  bool nan_c = false;
  double alpha = 0.8;
  bool expect_gpu = true;
};

// Returns false when the CPU library lacks the name (the case is skipped).
template <class T, class I> bool gemm_case(const Api& a, const GemmCase& g, uint64_t seed) {
  const std::string name = sym(a, prec<T>(), "gemm");
  void* cpu = cpu_fn(a, name);
  if (!cpu) return false;
  void* gpu = gpu_test::intercepted<void*>(name.c_str());
  SCOPED_TRACE(what(a, name, std::string("trans ") + g.ta + g.tb + " m n k " + std::to_string(g.m) + " " +
                                 std::to_string(g.n) + " " + std::to_string(g.k) + " pad " + std::to_string(g.pad) +
                                 (g.nan_c ? " beta 0, NaN C" : "")));
  const Shape sa = shape(g.ta == 'N' ? g.m : g.k, g.ta == 'N' ? g.k : g.m, a.row, g.pad);
  const Shape sb = shape(g.tb == 'N' ? g.k : g.n, g.tb == 'N' ? g.n : g.k, a.row, g.pad);
  const Shape sc = shape(g.m, g.n, a.row, g.pad);
  const auto A = fill<T>(sa, seed), B = fill<T>(sb, seed + 1);
  auto C0 = fill<T>(sc, seed + 2);
  if (g.nan_c) fill_nan(C0);
  const T alpha = scal<T>(g.alpha, g.alpha == 0 ? 0 : 0.3), beta = g.nan_c ? T(0) : scal<T>(0.7, -0.2);
  auto Cg = C0, Cc = C0;
  call_gemm<T, I>(gpu, a, g.ta, g.tb, I(g.m), I(g.n), I(g.k), alpha, A.data(), I(sa.ld), B.data(), I(sb.ld), beta,
                  Cg.data(), I(sc.ld));
  const auto lc = gpu_test::last_call();
  call_gemm<T, I>(cpu, a, g.ta, g.tb, I(g.m), I(g.n), I(g.k), alpha, A.data(), I(sa.ld), B.data(), I(sb.ld), beta,
                  Cc.data(), I(sc.ld));
  if (g.expect_gpu) {
    EXPECT_GPU(lc);
  }
  expect_same(Cg, Cc, C0, sc);
  if (g.nan_c) expect_finite(Cg, sc);
  return true;
}

template <class T> bool gemm_any(const Api& a, const GemmCase& g, uint64_t seed) {
  return a.ilp64 ? gemm_case<T, int64_t>(a, g, seed) : gemm_case<T, int32_t>(a, g, seed);
}

// ---- symm / hemm --------------------------------------------------------------------------------------

template <class T, class I>
void call_symm(void* fn, const Api& a, char side, char uplo, I m, I n, T alpha, const T* A, I lda, const T* B, I ldb,
               T beta, T* C, I ldc) {
  if (!a.cblas) {
    using F = void (*)(const char*, const char*, const I*, const I*, const T*, const T*, const I*, const T*, const I*,
                       const T*, T*, const I*, size_t, size_t);
    reinterpret_cast<F>(fn)(&side, &uplo, &m, &n, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
  } else {
    using F = void (*)(int, int, int, I, I, CScal<T>, const T*, I, const T*, I, CScal<T>, T*, I);
    reinterpret_cast<F>(fn)(layout(a), cb_flag(side, 's'), cb_flag(uplo, 'u'), m, n, pass(alpha), A, lda, B, ldb,
                            pass(beta), C, ldc);
  }
}

template <class T, class I>
bool symm_case(const Api& a, const char* routine, char side, char uplo, int64_t m, int64_t n, int64_t pad, bool nan_c,
               uint64_t seed, bool nan_unread = false) {
  const std::string name = sym(a, prec<T>(), routine);
  void* cpu = cpu_fn(a, name);
  if (!cpu) return false;
  void* gpu = gpu_test::intercepted<void*>(name.c_str());
  SCOPED_TRACE(what(a, name, std::string("side ") + side + " uplo " + uplo + (nan_c ? " beta 0, NaN C" : "")));
  const int64_t ka = side == 'L' ? m : n;
  const Shape sa = shape(ka, ka, a.row, pad), sb = shape(m, n, a.row, pad), sc = shape(m, n, a.row, pad);
  auto A = fill<T>(sa, seed);
  const auto B = fill<T>(sb, seed + 1);
  if (nan_unread) poison_unread(A, sa, uplo);
  auto C0 = fill<T>(sc, seed + 2);
  if (nan_c) fill_nan(C0);
  const T alpha = scal<T>(0.8, 0.3), beta = nan_c ? T(0) : scal<T>(0.7, -0.2);
  auto Cg = C0, Cc = C0;
  call_symm<T, I>(gpu, a, side, uplo, I(m), I(n), alpha, A.data(), I(sa.ld), B.data(), I(sb.ld), beta, Cg.data(), I(sc.ld));
  const auto lc = gpu_test::last_call();
  call_symm<T, I>(cpu, a, side, uplo, I(m), I(n), alpha, A.data(), I(sa.ld), B.data(), I(sb.ld), beta, Cc.data(), I(sc.ld));
  EXPECT_GPU(lc);
  expect_same(Cg, Cc, C0, sc);
  if (nan_c) expect_finite(Cg, sc);
  return true;
}

// ---- syrk / herk / syr2k / her2k ----------------------------------------------------------------------

// Sa: alpha's type (real for herk), Sb: beta's (real for herk, her2k). Two: syr2k/her2k.
template <class T, class Sa, class Sb, bool Two, class I>
void call_rank(void* fn, const Api& a, char uplo, char trans, I n, I k, Sa alpha, const T* A, I lda, const T* B, I ldb,
               Sb beta, T* C, I ldc) {
  if (!a.cblas) {
    if constexpr (Two) {
      using F = void (*)(const char*, const char*, const I*, const I*, const Sa*, const T*, const I*, const T*, const I*,
                         const Sb*, T*, const I*, size_t, size_t);
      reinterpret_cast<F>(fn)(&uplo, &trans, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
    } else {
      using F = void (*)(const char*, const char*, const I*, const I*, const Sa*, const T*, const I*, const Sb*, T*,
                         const I*, size_t, size_t);
      reinterpret_cast<F>(fn)(&uplo, &trans, &n, &k, &alpha, A, &lda, &beta, C, &ldc, 1, 1);
    }
  } else {
    if constexpr (Two) {
      using F = void (*)(int, int, int, I, I, CScal<Sa>, const T*, I, const T*, I, CScal<Sb>, T*, I);
      reinterpret_cast<F>(fn)(layout(a), cb_flag(uplo, 'u'), cb_flag(trans, 't'), n, k, pass(alpha), A, lda, B, ldb,
                              pass(beta), C, ldc);
    } else {
      using F = void (*)(int, int, int, I, I, CScal<Sa>, const T*, I, CScal<Sb>, T*, I);
      reinterpret_cast<F>(fn)(layout(a), cb_flag(uplo, 'u'), cb_flag(trans, 't'), n, k, pass(alpha), A, lda,
                              pass(beta), C, ldc);
    }
  }
}

template <class T, class Sa, class Sb, bool Two, class I>
bool rank_case(const Api& a, const char* routine, char uplo, char trans, int64_t n, int64_t k, int64_t pad, bool nan_c,
               uint64_t seed) {
  const std::string name = sym(a, prec<T>(), routine);
  void* cpu = cpu_fn(a, name);
  if (!cpu) return false;
  void* gpu = gpu_test::intercepted<void*>(name.c_str());
  SCOPED_TRACE(what(a, name, std::string("uplo ") + uplo + " trans " + trans + " n k " + std::to_string(n) + " " +
                                 std::to_string(k) + (nan_c ? " beta 0, NaN C" : "")));
  const Shape sa = shape(trans == 'N' ? n : k, trans == 'N' ? k : n, a.row, pad), sc = shape(n, n, a.row, pad);
  const auto A = fill<T>(sa, seed), B = fill<T>(sa, seed + 1);
  auto C0 = fill<T>(sc, seed + 2);
  if (nan_c) fill_nan(C0);
  const Sa alpha = scal<Sa>(0.8, 0.3);
  const Sb beta = nan_c ? Sb(0) : scal<Sb>(0.7, -0.2);
  auto Cg = C0, Cc = C0;
  call_rank<T, Sa, Sb, Two, I>(gpu, a, uplo, trans, I(n), I(k), alpha, A.data(), I(sa.ld), B.data(), I(sa.ld), beta,
                               Cg.data(), I(sc.ld));
  const auto lc = gpu_test::last_call();
  call_rank<T, Sa, Sb, Two, I>(cpu, a, uplo, trans, I(n), I(k), alpha, A.data(), I(sa.ld), B.data(), I(sa.ld), beta,
                               Cc.data(), I(sc.ld));
  EXPECT_GPU(lc);
  expect_same(Cg, Cc, C0, sc);
  expect_other_triangle(Cg, C0, sc, uplo);
  if (nan_c) {
    // Only the computed triangle is free of NaN; the other one keeps the input.
    int64_t bad = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i)
        if (uplo == 'U' ? i <= j : i >= j) bad += has_nan(Cg[sc.at(i, j)]);
    EXPECT_EQ(bad, 0) << "NaN in C propagated although beta = 0";
  }
  return true;
}

// ---- trmm / trsm --------------------------------------------------------------------------------------

template <class T, class I>
void call_tri(void* fn, const Api& a, char side, char uplo, char trans, char diag, I m, I n, T alpha, const T* A, I lda,
              T* B, I ldb) {
  if (!a.cblas) {
    using F = void (*)(const char*, const char*, const char*, const char*, const I*, const I*, const T*, const T*,
                       const I*, T*, const I*, size_t, size_t, size_t, size_t);
    reinterpret_cast<F>(fn)(&side, &uplo, &trans, &diag, &m, &n, &alpha, A, &lda, B, &ldb, 1, 1, 1, 1);
  } else {
    using F = void (*)(int, int, int, int, int, I, I, CScal<T>, const T*, I, T*, I);
    reinterpret_cast<F>(fn)(layout(a), cb_flag(side, 's'), cb_flag(uplo, 'u'), cb_flag(trans, 't'), cb_flag(diag, 'd'),
                            m, n, pass(alpha), A, lda, B, ldb);
  }
}

template <class T, class I>
bool tri_case(const Api& a, const char* routine, char side, char uplo, char trans, char diag, int64_t m, int64_t n,
              int64_t pad, uint64_t seed, bool nan_unread = false) {
  const std::string name = sym(a, prec<T>(), routine);
  void* cpu = cpu_fn(a, name);
  if (!cpu) return false;
  void* gpu = gpu_test::intercepted<void*>(name.c_str());
  SCOPED_TRACE(what(a, name, std::string("side ") + side + " uplo " + uplo + " trans " + trans + " diag " + diag));
  const int64_t ka = side == 'L' ? m : n;
  const Shape sa = shape(ka, ka, a.row, pad), sb = shape(m, n, a.row, pad);
  auto A = fill<T>(sa, seed);
  condition(A, sa, ka);
  if (nan_unread) poison_unread(A, sa, uplo, diag == 'U');
  auto B0 = fill<T>(sb, seed + 1);
  const T alpha = scal<T>(0.8, 0.3);
  auto Bg = B0, Bc = B0;
  call_tri<T, I>(gpu, a, side, uplo, trans, diag, I(m), I(n), alpha, A.data(), I(sa.ld), Bg.data(), I(sb.ld));
  const auto lc = gpu_test::last_call();
  call_tri<T, I>(cpu, a, side, uplo, trans, diag, I(m), I(n), alpha, A.data(), I(sa.ld), Bc.data(), I(sb.ld));
  EXPECT_GPU(lc);
  expect_same(Bg, Bc, B0, sb);
  return true;
}

// ---- the suites ---------------------------------------------------------------------------------------

// Odd sizes (not multiples of any tile), and one extra element per column in most cases.
constexpr int64_t M = 67, N = 45, K = 33;

template <class T> class Blas3 : public ::testing::Test {};
using AllTypes = ::testing::Types<float, double, cf, cd>;
TYPED_TEST_SUITE(Blas3, AllTypes);

template <class T> class Blas3Complex : public ::testing::Test {};
using ComplexTypes = ::testing::Types<cf, cd>;
TYPED_TEST_SUITE(Blas3Complex, ComplexTypes);

template <class T> const char* trans_set(bool herm) { return herm ? "NC" : (is_complex_v<T> ? "NT" : "NTC"); }

TYPED_TEST(Blas3, Gemm) {
  using T = TypeParam;
  uint64_t seed = 1;
  for (const Api& a : kApis)
    for (char ta : {'N', 'T', 'C'})
      for (char tb : {'N', 'T', 'C'})
        for (int64_t pad : {0, 3}) {
          if (!gemm_any<T>(a, GemmCase{ta, tb, M, N, K, pad}, seed++)) break;
        }
}

TYPED_TEST(Blas3, GemmBetaZeroIgnoresNaN) {
  using T = TypeParam;
  for (const Api& a : kApis)
    for (char ta : {'N', 'T'}) {
      GemmCase g{ta, 'N', M, N, K, 2};
      g.nan_c = true;
      if (!gemm_any<T>(a, g, 100 + uint64_t(ta))) break;
    }
}

TYPED_TEST(Blas3, GemmEdgeCases) {
  using T = TypeParam;
  const Api& f = kApis[0];
  const Api& row = kApis[2];
  // Vectors and a single element: matrix-vector shaped products stay on the CPU (cuBLAS 13.0's
  // zgemm crashed on a 1x1x1 product on the H200), with the CPU's exact result.
  gemm_any<T>(f, GemmCase{'N', 'N', 1, 1, 1, 0, false, 0.8, false}, 200);
  gemm_any<T>(f, GemmCase{'T', 'N', 1, N, K, 1, false, 0.8, false}, 201);
  gemm_any<T>(row, GemmCase{'N', 'C', M, 1, K, 1, false, 0.8, false}, 202);
  gemm_any<T>(f, GemmCase{'N', 'T', M, N, 1, 1, false, 0.8, false}, 206);
  // Quick returns and C = beta C: the CPU's exact result, whichever device ran it.
  GemmCase z{'N', 'N', M, N, K, 1};
  z.alpha = 0;
  z.expect_gpu = false;
  gemm_any<T>(f, z, 203);
  gemm_any<T>(row, GemmCase{'N', 'N', M, N, 0, 1, false, 0.8, false}, 204);
  gemm_any<T>(f, GemmCase{'N', 'N', 0, N, K, 1, false, 0.8, false}, 205);
}

TYPED_TEST(Blas3, Symm) {
  using T = TypeParam;
  uint64_t seed = 300;
  for (const Api& a : kApis)
    for (char side : {'L', 'R'})
      for (char uplo : {'U', 'L'}) {
        const bool ok = a.ilp64 ? symm_case<T, int64_t>(a, "symm", side, uplo, M, N, 3, false, seed++)
                                : symm_case<T, int32_t>(a, "symm", side, uplo, M, N, 3, side == 'R', seed++);
        if (!ok) break;
      }
}

TYPED_TEST(Blas3Complex, Hemm) {
  using T = TypeParam;
  uint64_t seed = 400;
  for (const Api& a : kApis)
    for (char side : {'L', 'R'})
      for (char uplo : {'U', 'L'}) {
        const bool ok = a.ilp64 ? symm_case<T, int64_t>(a, "hemm", side, uplo, M, N, 3, false, seed++)
                                : symm_case<T, int32_t>(a, "hemm", side, uplo, M, N, 3, uplo == 'L', seed++);
        if (!ok) break;
      }
}

template <class T, class Sa, class Sb, bool Two>
void rank_all(const char* routine, bool herm, uint64_t seed) {
  for (const Api& a : kApis) {
    bool ok = true;
    for (char uplo : {'U', 'L'}) {
      for (const char* t = trans_set<T>(herm); *t && ok; ++t) {
        for (int64_t pad : {0, 3}) {
          const bool nan_c = pad == 0 && *t == 'N';
          ok = a.ilp64 ? rank_case<T, Sa, Sb, Two, int64_t>(a, routine, uplo, *t, N, K, pad, nan_c, seed++)
                       : rank_case<T, Sa, Sb, Two, int32_t>(a, routine, uplo, *t, N, K, pad, nan_c, seed++);
          if (!ok) break;
        }
      }
    }
  }
}

TYPED_TEST(Blas3, Syrk) { rank_all<TypeParam, TypeParam, TypeParam, false>("syrk", false, 500); }
TYPED_TEST(Blas3, Syr2k) { rank_all<TypeParam, TypeParam, TypeParam, true>("syr2k", false, 600); }
TYPED_TEST(Blas3Complex, Herk) {
  using R = real_t<TypeParam>;
  rank_all<TypeParam, R, R, false>("herk", true, 700);
}
TYPED_TEST(Blas3Complex, Her2k) {
  using R = real_t<TypeParam>;
  rank_all<TypeParam, TypeParam, R, true>("her2k", true, 800);
}

template <class T> void tri_all(const char* routine, uint64_t seed) {
  for (const Api& a : kApis) {
    bool ok = true;
    for (char side : {'L', 'R'})
      for (char uplo : {'U', 'L'})
        for (char trans : {'N', 'T', 'C'})
          for (char diag : {'N', 'U'}) {
            if (!ok) break;
            ok = a.ilp64 ? tri_case<T, int64_t>(a, routine, side, uplo, trans, diag, M, N, 2, seed++)
                         : tri_case<T, int32_t>(a, routine, side, uplo, trans, diag, M, N, 2, seed++);
          }
  }
}

TYPED_TEST(Blas3, Trmm) { tri_all<TypeParam>("trmm", 900); }
TYPED_TEST(Blas3, Trsm) { tri_all<TypeParam>("trsm", 1000); }

// dgemm_ as the tests call it (Fortran, with the two hidden string lengths).
using DgemmF = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                        const int*, const double*, const int*, const double*, double*, const int*, size_t, size_t);

// One dgemm ("N", "N") through the wrapper and, with the same inputs, through the CPU library.
struct DgemmShape {
  int m, n, k, lda, ldb, ldc;
  double alpha, beta;
};
constexpr DgemmShape kSmallDgemm{129, 77, 65, 131, 66, 130, 1.25, -0.5};
struct Pair {
  std::vector<double> gpu, cpu;
  gpu_test::LastCall lc;
};
Pair dgemm_pair(uint64_t seed, const DgemmShape& s = kSmallDgemm) {
  const auto A = gpu_test::random_matrix<double>(s.m, s.k, s.lda, seed);
  const auto B = gpu_test::random_matrix<double>(s.k, s.n, s.ldb, seed + 1);
  const auto C = gpu_test::random_matrix<double>(s.m, s.n, s.ldc, seed + 2);
  Pair p{C, C, {}};
  gpu_test::intercepted<DgemmF>("dgemm_")("N", "N", &s.m, &s.n, &s.k, &s.alpha, A.data(), &s.lda, B.data(), &s.ldb,
                                          &s.beta, p.gpu.data(), &s.ldc, 1, 1);
  p.lc = gpu_test::last_call();
  gpu_test::cpu<DgemmF>("dgemm_")("N", "N", &s.m, &s.n, &s.k, &s.alpha, A.data(), &s.lda, B.data(), &s.ldb, &s.beta,
                                  p.cpu.data(), &s.ldc, 1, 1);
  return p;
}

// Sizes that need several staging chunks (8 MB each by default): the pinned ring wraps around,
// columns straddle chunks, one column is larger than a chunk, and triangles span chunks.
TEST(Blas3Large, MultiChunkCopies) {
  const Api& f = kApis[0];
  const Api& row = kApis[2];
  gemm_any<double>(f, GemmCase{'N', 'T', 4100, 4100, 700, 5}, 1100);
  gemm_any<float>(row, GemmCase{'T', 'N', 3000, 5000, 300, 0}, 1101);
  gemm_any<double>(f, GemmCase{'N', 'N', 5000000, 2, 3, 7}, 1102);
  for (char uplo : {'U', 'L'}) {
    rank_case<double, double, double, false, int32_t>(f, "syrk", uplo, 'N', 4100, 300, 3, false, 1103);
    rank_case<cd, double, double, false, int32_t>(row, "herk", uplo, 'C', 2100, 200, 1, false, 1104);
  }
}

// A dgemm whose A (72 MB of NaN) passes through every pinned staging buffer: after it, what an upload
// leaves unwritten in a buffer is NaN, and so is the device copy's other triangle after an upload of
// one triangle. A routine that read it would give NaN where the CPU library does not. (Two columns of
// B: a matrix-vector shape stays on the CPU, blas3_args.h.)
void fill_staging_with_nan() {
  const int m = 3000, k = 3000, n = 2;
  const std::vector<double> A(size_t(m) * k, std::numeric_limits<double>::quiet_NaN()), B(size_t(k) * n, 1.0);
  std::vector<double> C(size_t(m) * n);
  const double one = 1, zero = 0;
  gpu_test::intercepted<DgemmF>("dgemm_")("N", "N", &m, &n, &k, &one, A.data(), &m, B.data(), &k, &zero, C.data(), &m,
                                          1, 1);
  EXPECT_GPU(gpu_test::last_call());
}

// A symmetric or triangular operand crosses the host one triangle at a time (Engine::upload_triangle):
// over several chunks, split between copy threads, row-major too, its unread elements NaN on the host
// and, through the staging buffers, on the device; and the same host matrix read whole by a gemm after
// residency kept it (a kept copy must not be a triangle's).
TEST(Blas3Large, OneTriangleOfAnOperandIsRead) {
  const Api& f = kApis[0];
  const Api& row = kApis[2];
  for (char uplo : {'U', 'L'}) {
    fill_staging_with_nan();
    EXPECT_TRUE((symm_case<double, int32_t>(f, "symm", 'L', uplo, 3000, 200, 3, false, 1110, true)));
    fill_staging_with_nan();
    EXPECT_TRUE((symm_case<cd, int32_t>(row, "hemm", 'R', uplo, 150, 2100, 1, true, 1111, true)));
    fill_staging_with_nan();
    EXPECT_TRUE((tri_case<double, int32_t>(f, "trsm", 'L', uplo, 'T', 'N', 3000, 100, 2, 1112, true)));
    fill_staging_with_nan();
    EXPECT_TRUE((tri_case<cf, int32_t>(row, "trmm", 'R', uplo, 'N', 'U', 120, 2900, 0, 1113, true)));
    fill_staging_with_nan();
    EXPECT_TRUE((rank_case<float, float, float, true, int32_t>(f, "syr2k", uplo, 'N', 4100, 64, 5, false, 1114)));
  }
  // The same A in two dsymm calls: residency keeps the second upload (keep_history.h), whole; a gemm
  // that reads all of A is then served by that copy and must see A's whole, not one triangle. A
  // thread-staged call (the gpu_staged entry) keeps nothing: its upload serves that call only.
  const int64_t n = 2100;
  const Shape sa = shape(n, n, false, 0), sb = shape(n, 64, false, 0), sc = shape(n, 64, false, 0);
  const auto A = fill<double>(sa, 1120), B = fill<double>(sb, 1121);
  const double one = 1, zero = 0;
  const int ni = int(n), k = 64;
  using DsymmF = void (*)(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
                          const double*, const int*, const double*, double*, const int*, size_t, size_t);
  bool staged = false;
  for (int round = 0; round < 2; ++round) {
    fill_staging_with_nan();
    std::vector<double> Cg(size_t(n) * 64), Cc(Cg.size());
    gpu_test::intercepted<DsymmF>("dsymm_")("L", "U", &ni, &k, &one, A.data(), &ni, B.data(), &ni, &zero, Cg.data(),
                                            &ni, 1, 1);
    const auto lc = gpu_test::last_call();
    staged = gpu_test::last_call_staged() == 1;
    gpu_test::cpu<DsymmF>("dsymm_")("L", "U", &ni, &k, &one, A.data(), &ni, B.data(), &ni, &zero, Cc.data(), &ni, 1,
                                    1);
    EXPECT_GPU(lc);
    expect_same(Cg, Cc, std::vector<double>(Cg.size()), sc);
  }
  std::vector<double> Cg(size_t(n) * 64), Cc(Cg.size());
  gpu_test::intercepted<DgemmF>("dgemm_")("N", "N", &ni, &k, &ni, &one, A.data(), &ni, B.data(), &ni, &zero, Cg.data(),
                                          &ni, 1, 1);
  const auto lc = gpu_test::last_call();
  const unsigned resident = gpu_test::last_call_resident();
  gpu_test::cpu<DgemmF>("dgemm_")("N", "N", &ni, &k, &ni, &one, A.data(), &ni, B.data(), &ni, &zero, Cc.data(), &ni, 1,
                                  1);
  EXPECT_GPU(lc);
  if (!staged) {
    EXPECT_EQ(GOFL_RESIDENCY_OF(resident, 0), unsigned(GOFL_RES_KEPT)) << "the gemm's A was not served by a kept copy";
  }
  expect_same(Cg, Cc, std::vector<double>(Cg.size()), sc);
}

// Products large enough to run in column panels with the copies overlapped (n >= 2048, m >= 128,
// k >= 256): op(B) by columns ('N') and by rows ('T', 'C'), beta = 0 (C streamed back panel by
// panel) and beta != 0 (C copied in per panel, back after the last), a last panel narrower than
// the others, row-major calls, and a @ a (one operand used twice).
TEST(Blas3Large, PanelledProducts) {
  const Api& f = kApis[0];
  const Api& row = kApis[2];
  gemm_any<double>(f, GemmCase{'N', 'N', 1100, 2300, 300, 3}, 1200);
  gemm_any<double>(f, GemmCase{'T', 'T', 1030, 4100, 257, 0, true}, 1201);
  gemm_any<cd>(f, GemmCase{'C', 'C', 1024, 2049, 300, 1, true}, 1202);
  gemm_any<float>(row, GemmCase{'N', 'T', 2050, 3001, 400, 2}, 1203);
  gemm_any<cf>(row, GemmCase{'N', 'N', 1500, 2500, 260, 0, true}, 1204);
  // Short C: NumPy's A @ X with a thin X (row-major: m = 256 columns of C), beta 0 and beta != 0.
  gemm_any<double>(row, GemmCase{'N', 'N', 4096, 256, 4096, 0, true}, 1205);
  gemm_any<double>(f, GemmCase{'T', 'N', 130, 2100, 600, 2}, 1206);
  for (char tb : {'N', 'T'}) {  // C = A op(A): the same memory as both operands
    const int n = 2100, ld = 2103;
    const double alpha = 1, beta = 0;
    const auto A = gpu_test::random_matrix<double>(n, n, ld, 1210);
    const std::vector<double> C0(size_t(ld) * n, 5.0);
    std::vector<double> Cg = C0, Cc = C0;
    gpu_test::intercepted<DgemmF>("dgemm_")("N", &tb, &n, &n, &n, &alpha, A.data(), &ld, A.data(), &ld, &beta,
                                            Cg.data(), &ld, 1, 1);
    const auto lc = gpu_test::last_call();
    gpu_test::cpu<DgemmF>("dgemm_")("N", &tb, &n, &n, &n, &alpha, A.data(), &ld, A.data(), &ld, &beta, Cc.data(), &ld,
                                    1, 1);
    EXPECT_GPU(lc);
    EXPECT_LE(gpu_test::rel_diff(Cg.data(), Cc.data(), n, n, ld), tolerance<double>()) << "a @ op(a), op " << tb;
    ASSERT_TRUE(gpu_test::gaps_untouched(Cg, C0, n, n, ld)) << "ld gap written, op " << tb;
  }
}

// A product large enough for column panels, with beta = 0 (C is streamed back panel by panel).
constexpr DgemmShape kPanelledDgemm{1500, 4096, 300, 1500, 300, 1500, 1.5, 0};

// A failure after the first panels of C were written (beta = 0): the CPU library computes the
// whole product again, so the program gets its result, not a mixture.
TEST(Blas3Large, FailureBetweenPanelsGivesTheCpuResult) {
  for (const char* fault : {"panel", "compute", "d2h-before"}) {
    gpu_test::set_fault(fault);
    const Pair p = dgemm_pair(1220, kPanelledDgemm);
    gpu_test::set_fault(nullptr);
    EXPECT_EQ(p.lc.device, 0) << fault;
    EXPECT_EQ(p.lc.reason, GOFL_R_GPU_FAILED) << fault;
    EXPECT_EQ(p.lc.gpu_status, GOFL_GPU_INJECTED) << fault;
    EXPECT_EQ(std::memcmp(p.gpu.data(), p.cpu.data(), p.cpu.size() * sizeof(double)), 0)
        << fault << ": not the CPU's result";
  }
}

// The verify-mode switch on a panelled product: exactly C(0,0) is changed, once, and the rest of
// C is the product (the panels come back in one copy pipeline; the switch acts on the first).
TEST(Blas3Large, CorruptSwitchChangesOnlyTheFirstElementOfPanelledProducts) {
  gpu_test::set_fault("corrupt");
  Pair p = dgemm_pair(1230, kPanelledDgemm);
  gpu_test::set_fault(nullptr);
  EXPECT_GPU(p.lc);
  EXPECT_GT(std::fabs(p.gpu[0] - p.cpu[0]), 0.5) << "C(0,0) not corrupted";
  p.gpu[0] = p.cpu[0];
  const DgemmShape& s = kPanelledDgemm;
  EXPECT_LE(gpu_test::rel_diff(p.gpu.data(), p.cpu.data(), s.m, s.n, s.ldc), tolerance<double>())
      << "more than C(0,0) changed";
}

// ---- arguments the CPU library rejects ----------------------------------------------------------------

TEST(Blas3Errors, InvalidArgumentsStayWithTheCpuLibrary) {
  auto gpu = gpu_test::intercepted<DgemmF>("dgemm_");
  const int m = 20, n = 20, k = 20, bad_lda = 10, ld = 20;
  const double alpha = 1, beta = 0;
  std::vector<double> A(400, 1.0), B(400, 1.0), C(400, 7.0);
  // OpenBLAS's xerbla prints a line about parameter 8 here: expected.
  gpu("N", "N", &m, &n, &k, &alpha, A.data(), &bad_lda, B.data(), &ld, &beta, C.data(), &ld, 1, 1);
  const auto lc = gpu_test::last_call();
  EXPECT_EQ(lc.device, 0);
  EXPECT_EQ(lc.reason, GOFL_R_INVALID_ARGS);
  for (double x : C) ASSERT_EQ(x, 7.0);
}

// ---- failures: the CPU result, nothing lost -----------------------------------------------------------

class Blas3Faults : public ::testing::TestWithParam<const char*> {
 protected:
  void TearDown() override { gpu_test::set_fault(nullptr); }
};

TEST_P(Blas3Faults, CpuRunsTheCallAndTheGpuComesBack) {
  dgemm_pair(1);  // the GPU is started, so the fault reaches the backend
  gpu_test::set_fault(GetParam());
  const Pair p = dgemm_pair(2);
  EXPECT_EQ(p.lc.device, 0);
  EXPECT_EQ(p.lc.reason, GOFL_R_GPU_FAILED) << "gpu status " << p.lc.gpu_status;
  EXPECT_EQ(p.lc.gpu_status, GOFL_GPU_INJECTED);
  EXPECT_EQ(std::memcmp(p.gpu.data(), p.cpu.data(), p.cpu.size() * sizeof(double)), 0) << "not the CPU's result";
  gpu_test::set_fault(nullptr);
  const Pair q = dgemm_pair(3);
  EXPECT_GPU(q.lc);
  EXPECT_LE(gpu_test::rel_diff(q.gpu.data(), q.cpu.data(), 129, 77, 130), tolerance<double>());
}
INSTANTIATE_TEST_SUITE_P(Steps, Blas3Faults, ::testing::Values("alloc", "h2d", "compute", "d2h-before"));

// The verify-mode switch: the GPU result is really changed (verify mode must then catch it).
TEST(Blas3Corrupt, CorruptSwitchChangesTheGpuResult) {
  dgemm_pair(4);
  gpu_test::set_fault("corrupt");
  const Pair p = dgemm_pair(5);
  gpu_test::set_fault(nullptr);
  EXPECT_GPU(p.lc);
  EXPECT_GT(gpu_test::rel_diff(p.gpu.data(), p.cpu.data(), 129, 77, 130), 1e-3);
  const Pair q = dgemm_pair(6);
  EXPECT_LE(gpu_test::rel_diff(q.gpu.data(), q.cpu.data(), 129, 77, 130), tolerance<double>());
}

// Many threads at once: one GPU call at a time, the others wait for it (a call without a prediction
// up to 0.25 s), so every call runs on the GPU once the routine's first call set it up; every result
// right, those of the calls that the thread holding the GPU ran for them too (GPU_OFFLOAD_LINE_SERVES,
// the gpu_line_serves entry; none without it).
TEST(Blas3Threads, EightThreadsAtOnce) {
  ASSERT_GE(gpu_test::last_call_served(), 0) << "libgpuoffload.so is not preloaded";
  EXPECT_GPU(dgemm_pair(4999).lc);  // the routine's first GPU call (its handle, workspace) out of the race
  std::atomic<int> wrong{0}, on_gpu{0}, by_holder{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&, t] {
      for (int r = 0; r < 4; ++r) {
        const Pair p = dgemm_pair(uint64_t(5000 + 10 * t + r));
        if (gpu_test::rel_diff(p.gpu.data(), p.cpu.data(), 129, 77, 130) > tolerance<double>()) ++wrong;
        if (p.lc.device == 1) ++on_gpu;
        by_holder += gpu_test::last_call_served();  // the intercepted call's (the CPU reference is called directly)
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(on_gpu.load(), 32);
  const char* serves = std::getenv("GPU_OFFLOAD_LINE_SERVES");  // gpu_line_serves: 8; else unset (0)
  if (serves && std::atoi(serves) > 0) EXPECT_GE(by_holder.load(), 1) << "no call was run by the thread holding the GPU";
  else EXPECT_EQ(by_holder.load(), 0);
}

// A GPU call made while another thread of the program is inside a CPU call (a measured-only dsytrd,
// n = 1536, on OpenBLAS's threads) knows the cores are held: its host copies ran on the calling thread
// alone (several staging chunks each way), and its result is right. Once that thread's calls have
// returned, a GPU call sees none beside it again.
TEST(Blas3Threads, AGpuCallBesideTheProgramsCpuCallsCopiesAlone) {
  using SytrdF = void (*)(const char*, const int*, double*, const int*, double*, double*, double*, double*,
                          const int*, int*, size_t);
  using BesideF = unsigned (*)();
  const auto beside = reinterpret_cast<BesideF>(dlsym(RTLD_DEFAULT, "gpu_offload_last_call_cpu_beside"));
  ASSERT_NE(beside, nullptr) << "libgpuoffload.so is not preloaded";
  const DgemmShape big{1500, 1400, 1300, 1500, 1300, 1500, 1.0, 0.5};  // A, B, C 14-17 MB: 2-3 chunks each
  EXPECT_GPU(dgemm_pair(6000, big).lc);
  EXPECT_EQ(beside(), 0u);
  std::atomic<bool> stop{false}, started{false};
  std::atomic<int> cpu_calls{0}, not_cpu{0};
  std::thread cpu([&] {
    const int n = 1536, lwork = 64 * n;
    std::vector<double> d(n), e(n), tau(n), work(static_cast<size_t>(lwork));
    while (!stop.load()) {
      auto a = gpu_test::random_matrix<double>(n, n, n, 6001);
      int info = 0;
      started = true;
      gpu_test::intercepted<SytrdF>("dsytrd_")("L", &n, a.data(), &n, d.data(), e.data(), tau.data(), work.data(),
                                              &lwork, &info, 1);
      if (gpu_test::last_call().device != 0) ++not_cpu;
      ++cpu_calls;
    }
  });
  while (!started.load()) std::this_thread::yield();
  unsigned seen = 0;
  double worst = 0;
  for (int r = 0; r < 40 && seen == 0; ++r) {  // the dsytrd thread is between calls only for microseconds
    const Pair p = dgemm_pair(uint64_t(6002 + r), big);
    EXPECT_GPU(p.lc);
    seen = beside();
    worst = std::max(worst, gpu_test::rel_diff(p.gpu.data(), p.cpu.data(), big.m, big.n, big.ldc));
  }
  stop = true;
  cpu.join();
  EXPECT_GE(seen, 1u) << "no GPU call saw the dsytrd thread inside its call (" << cpu_calls.load() << " calls made)";
  EXPECT_LE(worst, tolerance<double>());
  EXPECT_EQ(not_cpu.load(), 0) << "dsytrd is measured only: the CPU runs it";
  const Pair after = dgemm_pair(6100, big);
  EXPECT_GPU(after.lc);
  EXPECT_EQ(beside(), 0u);
  EXPECT_LE(gpu_test::rel_diff(after.gpu.data(), after.cpu.data(), big.m, big.n, big.ldc), tolerance<double>());
}

// Names no CPU library here defines: listed once, so a skipped ILP64 interface is visible.
class ReportSkipped : public ::testing::Environment {
 public:
  void SetUp() override { std::printf("CPU reference: %s\n", openblas_get_config()); }
  void TearDown() override {
    if (g_skipped.empty()) return;
    std::printf("skipped %zu names with no CPU definition (set GOFL_TEST_OPENBLAS64 to an ILP64 OpenBLAS), e.g.",
                g_skipped.size());
    int shown = 0;
    for (const auto& s : g_skipped)
      if (shown++ < 6) std::printf(" %s", s.c_str());
    std::printf("\n");
  }
};
const auto* const g_report = ::testing::AddGlobalTestEnvironment(new ReportSkipped);

}  // namespace
