// A call with more than 2^31 elements through the ILP64 names (#16): sizes, leading dimensions and
// element offsets past 32 bits on the GPU path, checked against sampled entries that the CPU library
// computes. About 9.2 GB of host memory and as much on the GPU.
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

}  // namespace
