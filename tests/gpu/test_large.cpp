// Calls with more than 2^31 elements through the ILP64 names: sizes, leading dimensions and
// element offsets past 32 bits on the GPU path, checked against what the CPU library computes.
// sgemm: about 9.2 GB of host memory and as much on the GPU. The QR family (orgqr, gels, gelsd),
// which takes the 64-bit compact-WY route beyond int (src/cuda/householder64.h): up to 53 GB of host
// memory and about 60 GB on the GPU each. Run them alone with --gtest_filter='Ilp64Large.*'.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu_harness.h"

namespace {

using I = int64_t;
using Sgemm = void (*)(const char*, const char*, const I*, const I*, const I*, const float*, const float*, const I*,
                       const float*, const I*, const float*, float*, const I*, size_t, size_t);

// Exactly representable values, cheap to make for 2.3e9 elements: the result is checked, not the data.
float pattern(I i, I p) { return float(int((i * 7 + p * 13) % 101) - 50) / 64.0f; }

TEST(Ilp64Large, SgemmWithMoreThan2To31Elements) {
  const gpu_test::Ilp64Lib lib = gpu_test::ilp64_lib({"sgemm"});
  if (!lib.handle) GTEST_SKIP() << "no CPU library exports ILP64 names (sgemm_64_, or scipy_sgemm_64_ via GOFL_TEST_OPENBLAS64)";
  // A is m x k with m * k = 2,293,760,000 > 2^31; the last rows sit past every 32-bit offset.
  const I m = 70000, k = 32768, n = 4;
  ASSERT_GT(m * k, (I(1) << 31));
  std::vector<float> a;
  try {
    a.resize(size_t(m * k));
  } catch (const std::bad_alloc&) {
    GTEST_SKIP() << "not enough host memory for A (" << m * k * 4 / 1e9 << " GB)";
  }
  for (I p = 0; p < k; ++p)
    for (I i = 0; i < m; ++i) a[size_t(i + p * m)] = pattern(i, p);
  std::vector<float> b(size_t(k * n)), c(size_t(m * n), -7.0f);
  for (I j = 0; j < n; ++j)
    for (I p = 0; p < k; ++p) b[size_t(p + j * k)] = float(int((p * 3 + j * 5) % 17) - 8) / 16.0f;
  const float one = 1, zero = 0;
  lib.gpu<Sgemm>("sgemm")("N", "N", &m, &n, &k, &one, a.data(), &m, b.data(), &k, &zero, c.data(), &m, 1, 1);
  EXPECT_RAN_ON_GPU();

  // Sampled rows, the last ones included, each computed by the CPU library as a 1 x n product of the
  // same A (row i: leading dimension m) and B.
  std::vector<I> rows = {0, 1, m / 2, m - 2, m - 1};
  for (I r = 0; r < 64; ++r) rows.push_back((r * 104729) % m);
  auto cpu = lib.cpu<Sgemm>("sgemm");
  const I one_row = 1;
  for (I i : rows) {
    float ref[4] = {0, 0, 0, 0};
    cpu("N", "N", &one_row, &n, &k, &one, a.data() + i, &m, b.data(), &k, &zero, ref, &one_row, 1, 1);
    for (I j = 0; j < n; ++j) {
      double scale = 0;  // sum of |a_ip b_pj|: the bound a float sum's rounding error scales with
      for (I p = 0; p < k; ++p) scale += std::fabs(double(a[size_t(i + p * m)]) * b[size_t(p + j * k)]);
      EXPECT_LE(std::fabs(double(c[size_t(i + j * m)]) - ref[j]), 1e-5 * scale + 1e-6)
          << "C(" << i << ", " << j << "): GPU " << c[size_t(i + j * m)] << ", CPU " << ref[j];
    }
  }
}

// ---- the QR family -----------------------------------------------------------------------------------
// A is m x 2 with m * 2 = 2,150,000,000 > 2^31 (17.2 GB in double): only the 64-bit route can run it.
constexpr I kRows = 1'075'000'000, kCols = 2;

// Small integers: exactly representable, and Householder vectors of them keep orgqr's sums exact.
double small_int(I i, I j, int period) { return double(int((i * 7 + j * 13) % period) - period / 2); }

template <class T> bool try_resize(std::vector<T>& v, I n) {
  try {
    v.resize(size_t(n));
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

// max |g - c| over every element, relative to max |c|.
double max_rel_diff(const std::vector<double>& g, const std::vector<double>& c) {
  double num = 0, den = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    num = std::max(num, std::fabs(g[i] - c[i]));
    den = std::max(den, std::fabs(c[i]));
  }
  return den > 0 ? num / den : num;
}

TEST(Ilp64Large, DorgqrWithMoreThan2To31Elements) {
  using Fn = void (*)(const I*, const I*, const I*, double*, const I*, const double*, double*, const I*, I*);
  const gpu_test::Ilp64Lib lib = gpu_test::ilp64_lib({"dorgqr"});
  if (!lib.handle) GTEST_SKIP() << "no CPU library exports ILP64 names (dorgqr_64_, or scipy_dorgqr_64_ via GOFL_TEST_OPENBLAS64)";
  const I m = kRows, n = kCols, k = kCols;
  ASSERT_GT(m * n, (I(1) << 31));
  std::vector<double> a, c;
  if (!try_resize(a, m * n) || !try_resize(c, m * n)) GTEST_SKIP() << "not enough host memory (2 x 17.2 GB)";
  // Reflector entries in {-1, 0, 1} and power-of-two tau: Q's entries below the diagonal are
  // multiples of 2^-31, so a row or column taken from the wrong offset shows far above the tolerance.
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < m; ++i) a[size_t(i + j * m)] = small_int(i, j, 3);
  const std::vector<double> tau = {std::ldexp(1.0, -30), std::ldexp(1.0, -31)};
  double q = 0;
  I m1 = -1, info = -99;
  lib.cpu<Fn>("dorgqr")(&m, &n, &k, a.data(), &m, tau.data(), &q, &m1, &info);
  ASSERT_EQ(info, 0);
  const I lwork = std::max<I>(I(q), n);
  std::vector<double> wg(static_cast<size_t>(lwork)), wc(static_cast<size_t>(lwork));
  std::copy(a.begin(), a.end(), c.begin());
  I ig = -99, ic = -99;
  lib.gpu<Fn>("dorgqr")(&m, &n, &k, a.data(), &m, tau.data(), wg.data(), &lwork, &ig);
  EXPECT_RAN_ON_GPU();
  lib.cpu<Fn>("dorgqr")(&m, &n, &k, c.data(), &m, tau.data(), wc.data(), &lwork, &ic);
  EXPECT_EQ(ig, 0);
  EXPECT_EQ(ig, ic);
  EXPECT_EQ(wg[0], wc[0]);
  EXPECT_LE(max_rel_diff(a, c), 1e-12) << "Q";
  EXPECT_NE(a[size_t(m - 1)], 0.0) << "the last row of Q must be reached";
}

// A = [small_int(., 0, 101), small_int(., 1, 7)] (independent columns) and b from small_int(., 5, 11):
// the solution, the residual's components in b's tail and the factors in A against the CPU's.
template <class Call> void check_large_least_squares(const char* routine, Call call) {
  const I m = kRows, n = kCols;
  ASSERT_GT(m * n, (I(1) << 31));
  std::vector<double> a, b, ac, bc;
  if (!try_resize(a, m * n) || !try_resize(ac, m * n) || !try_resize(b, m) || !try_resize(bc, m))
    GTEST_SKIP() << "not enough host memory (2 x 25.8 GB)";
  for (I i = 0; i < m; ++i) {
    a[size_t(i)] = small_int(i, 0, 101);
    a[size_t(i + m)] = small_int(i, 1, 7);
    b[size_t(i)] = small_int(i, 5, 11);
  }
  std::copy(a.begin(), a.end(), ac.begin());
  std::copy(b.begin(), b.end(), bc.begin());
  SCOPED_TRACE(routine);
  call(true, a, b);
  EXPECT_RAN_ON_GPU();
  call(false, ac, bc);
  const std::vector<double> xg(b.begin(), b.begin() + n), xc(bc.begin(), bc.begin() + n);
  EXPECT_LE(max_rel_diff(xg, xc), 1e-8) << "solution: GPU " << xg[0] << ", " << xg[1] << "; CPU " << xc[0] << ", " << xc[1];
  EXPECT_LE(max_rel_diff(b, bc), 1e-6) << "B: solution and the residual's components";
  // A: the Householder vectors below R, which both leave there (gelsd reduces R further in place).
  double num = 0, den = 0;
  for (I j = 0; j < n; ++j)
    for (I i = n; i < m; ++i) {
      num = std::max(num, std::fabs(a[size_t(i + j * m)] - ac[size_t(i + j * m)]));
      den = std::max(den, std::fabs(ac[size_t(i + j * m)]));
    }
  EXPECT_LE(num, 1e-6 * den) << "A: the Householder vectors of the QR factorization";
}

TEST(Ilp64Large, DgelsWithMoreThan2To31Elements) {
  using Fn = void (*)(const char*, const I*, const I*, const I*, double*, const I*, double*, const I*, double*, const I*,
                      I*, size_t);
  const gpu_test::Ilp64Lib lib = gpu_test::ilp64_lib({"dgels"});
  if (!lib.handle) GTEST_SKIP() << "no CPU library exports ILP64 names (dgels_64_, or scipy_dgels_64_ via GOFL_TEST_OPENBLAS64)";
  check_large_least_squares("dgels", [&](bool gpu, std::vector<double>& a, std::vector<double>& b) {
    const I m = kRows, n = kCols, nrhs = 1, m1 = -1;
    I info = -99;
    double q = 0;
    lib.cpu<Fn>("dgels")("N", &m, &n, &nrhs, a.data(), &m, b.data(), &m, &q, &m1, &info, 1);
    ASSERT_EQ(info, 0);
    const I lwork = I(q);
    std::vector<double> work(static_cast<size_t>(lwork));
    (gpu ? lib.gpu<Fn>("dgels") : lib.cpu<Fn>("dgels"))("N", &m, &n, &nrhs, a.data(), &m, b.data(), &m, work.data(),
                                                         &lwork, &info, 1);
    EXPECT_EQ(info, 0);
  });
}

TEST(Ilp64Large, DgelsdWithMoreThan2To31Elements) {
  using Fn = void (*)(const I*, const I*, const I*, double*, const I*, double*, const I*, double*, const double*, I*,
                      double*, const I*, I*, I*);
  const gpu_test::Ilp64Lib lib = gpu_test::ilp64_lib({"dgelsd"});
  if (!lib.handle) GTEST_SKIP() << "no CPU library exports ILP64 names (dgelsd_64_, or scipy_dgelsd_64_ via GOFL_TEST_OPENBLAS64)";
  std::vector<double> s_gpu;
  check_large_least_squares("dgelsd", [&](bool gpu, std::vector<double>& a, std::vector<double>& b) {
    const I m = kRows, n = kCols, nrhs = 1, m1 = -1;
    const double rcond = -1;
    I info = -99, rank = -1, iq = 0;
    double q = 0;
    std::vector<double> s(static_cast<size_t>(n));
    lib.cpu<Fn>("dgelsd")(&m, &n, &nrhs, a.data(), &m, b.data(), &m, s.data(), &rcond, &rank, &q, &m1, &iq, &info);
    ASSERT_EQ(info, 0);
    const I lwork = I(q);
    std::vector<double> work(static_cast<size_t>(lwork));
    std::vector<I> iwork(size_t(std::max<I>(iq, 1)));
    (gpu ? lib.gpu<Fn>("dgelsd") : lib.cpu<Fn>("dgelsd"))(&m, &n, &nrhs, a.data(), &m, b.data(), &m, s.data(), &rcond,
                                                           &rank, work.data(), &lwork, iwork.data(), &info);
    EXPECT_EQ(info, 0);
    EXPECT_EQ(rank, n);
    if (gpu) s_gpu = s;
    else EXPECT_LE(max_rel_diff(s_gpu, s), 1e-8) << "singular values";
  });
}

}  // namespace
