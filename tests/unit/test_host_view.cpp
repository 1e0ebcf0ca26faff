// The host side of a transfer (src/cuda/host_view.h), without a GPU: the copy-in that applies an LU
// factorization's row interchanges on the way (Engine::upload_rows, used by ?getrs) gives exactly
// the bytes OpenBLAS's own ?laswp leaves in B, packed, for every element size, leading dimensions
// above the rows, and ranges cut anywhere, inside elements too (the copy threads' parts are byte
// ranges); a triangle's copy-in writes only its elements; and LAPACK's pivots become the permutation
// laswp applies.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "cuda/host_view.h"

extern "C" {
void slaswp_(const int* n, float* a, const int* lda, const int* k1, const int* k2, const int* ipiv, const int* incx);
void dlaswp_(const int* n, double* a, const int* lda, const int* k1, const int* k2, const int* ipiv, const int* incx);
void zlaswp_(const int* n, std::complex<double>* a, const int* lda, const int* k1, const int* k2, const int* ipiv,
             const int* incx);
}

namespace {
using gofl::cuda::HostView;
using gofl::cuda::rows_from_pivots;
using gofl::cuda::pivots_interchange;

// Pivots as ?getrf leaves them (row i swapped with a row at or below it), or any row (LAPACK's ?laswp
// takes any in range).
std::vector<int> pivots(int n, bool any, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<int> p(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) p[size_t(i)] = any ? int(g() % unsigned(n)) + 1 : i + 1 + int(g() % unsigned(n - i));
  return p;
}

template <class T> void laswp(int cols, T* a, int lda, int n, const int* ipiv) {
  const int one = 1;
  if constexpr (std::is_same_v<T, float>) slaswp_(&cols, a, &lda, &one, &n, ipiv, &one);
  else if constexpr (std::is_same_v<T, double>) dlaswp_(&cols, a, &lda, &one, &n, ipiv, &one);
  else zlaswp_(&cols, a, &lda, &one, &n, ipiv, &one);
}

// Every way of cutting the packed bytes into ranges gives laswp's B, packed.
template <class T> void check_gather(int rows, int cols, int ld, bool any, unsigned seed) {
  std::vector<T> b(size_t(ld) * size_t(cols));
  for (size_t i = 0; i < b.size(); ++i) {
    if constexpr (std::is_same_v<T, std::complex<double>>) b[i] = T(double(i) + 0.25, -double(i));
    else b[i] = T(i) + T(0.5);
  }
  const std::vector<int> piv = pivots(rows, any, seed);
  std::vector<T> want = b;
  laswp(cols, want.data(), ld, rows, piv.data());
  std::vector<T> packed(size_t(rows) * size_t(cols));
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) packed[size_t(j) * rows + i] = want[size_t(j) * ld + i];

  const std::vector<int64_t> from = rows_from_pivots(std::vector<int64_t>(piv.begin(), piv.end()));
  const HostView v{reinterpret_cast<char*>(b.data()), rows, cols, ld, sizeof(T), 0, from.data()};
  const size_t total = v.total();
  ASSERT_EQ(total, packed.size() * sizeof(T));
  for (size_t step : {total, sizeof(T), size_t(3), size_t(1000), total / 7 + 1}) {
    std::vector<char> stage(total, 0x5a);
    for (size_t at = 0; at < total; at += step) v.copy(stage.data(), 0, at, std::min(total, at + step), false);
    ASSERT_EQ(std::memcmp(stage.data(), packed.data(), total), 0)
        << sizeof(T) << "-byte elements, " << rows << " x " << cols << ", ld " << ld << ", ranges of " << step;
  }
  // A range staged at an offset (a later piece of the transfer lands at the start of its buffer).
  const size_t b0 = total / 3 + 5, e0 = total - 11;
  std::vector<char> stage(e0 - b0);
  v.copy(stage.data(), b0, b0, e0, false);
  EXPECT_EQ(std::memcmp(stage.data(), reinterpret_cast<const char*>(packed.data()) + b0, e0 - b0), 0);
}

TEST(HostView, CopyInWithRowsPermutedGivesLaswpsResult) {
  check_gather<double>(257, 9, 257, false, 1);
  check_gather<double>(200, 7, 213, true, 2);
  check_gather<float>(131, 5, 140, false, 3);
  check_gather<std::complex<double>>(97, 4, 101, true, 4);
  check_gather<double>(1, 3, 1, false, 5);
}

// A triangle's copy-in (Engine::upload_triangle): in whatever ranges the copy threads take, the
// uplo triangle's elements land at their packed places and no other byte of the stage is written.
template <class T> void check_triangle_in(int n, int ld, char uplo) {
  std::vector<T> a(size_t(ld) * size_t(n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = T(double(i) + 0.5);
  const HostView v{reinterpret_cast<char*>(a.data()), n, n, ld, sizeof(T), uplo};
  const size_t total = v.total();
  std::vector<char> want(total, 0x5a);
  for (int j = 0; j < n; ++j)
    for (int i = uplo == 'U' ? 0 : j; i < (uplo == 'U' ? j + 1 : n); ++i)
      std::memcpy(&want[(size_t(j) * n + i) * sizeof(T)], &a[size_t(j) * ld + i], sizeof(T));
  for (size_t step : {total, sizeof(T), size_t(3), size_t(1000), total / 7 + 1}) {
    std::vector<char> stage(total, 0x5a);
    for (size_t at = 0; at < total; at += step) v.copy(stage.data(), 0, at, std::min(total, at + step), false);
    ASSERT_EQ(std::memcmp(stage.data(), want.data(), total), 0)
        << sizeof(T) << "-byte elements, n " << n << ", ld " << ld << ", uplo " << uplo << ", ranges of " << step;
  }
  if (total < 64) return;
  const size_t b0 = total / 3 + 5, e0 = total - 11;  // a range staged at an offset
  std::vector<char> stage(e0 - b0, 0x5a);
  v.copy(stage.data(), b0, b0, e0, false);
  EXPECT_EQ(std::memcmp(stage.data(), want.data() + b0, e0 - b0), 0);
}

TEST(HostView, CopyInOfATriangleWritesOnlyItsElements) {
  for (char uplo : {'U', 'L'}) {
    check_triangle_in<double>(67, 70, uplo);
    check_triangle_in<float>(33, 33, uplo);
    check_triangle_in<std::complex<double>>(20, 25, uplo);
    check_triangle_in<double>(1, 1, uplo);
  }
}

TEST(HostView, PivotsBecomeThePermutationLaswpApplies) {
  // getrf's pivots of a 4 x 4: rows 1<->3, 2<->2, 3<->4, 4<->4 (1-based) move rows 3, 2, 4, 1 up.
  EXPECT_EQ(rows_from_pivots({3, 2, 4, 4}), (std::vector<int64_t>{2, 1, 3, 0}));
  EXPECT_EQ(rows_from_pivots({1, 2, 3}), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(rows_from_pivots({}).empty());
  // Whether any row moves at all (a diagonally dominant or SPD matrix's getrf moves none).
  EXPECT_TRUE(pivots_interchange({3, 2, 4, 4}));
  EXPECT_TRUE(pivots_interchange({1, 1}));
  EXPECT_FALSE(pivots_interchange({1, 2, 3}));
  EXPECT_FALSE(pivots_interchange({}));
}
}  // namespace
