// Shared by the GPU LAPACK tests (test_lapack_sym_eig.cpp, test_lapack_geev.cpp, test_lapack_svd.cpp,
// test_lapack_sygv.cpp, test_lapack_lu_qr.cpp):
// a routine's name in each precision, and the dense complex double matrices in which results are
// checked through residuals rather than compared element by element.
#pragma once

#include <algorithm>
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_harness.h"

namespace gpu_test {

// "dsyevd_" / "zheevd_": the routine's Fortran name in T's precision.
template <class T> std::string lapack_name(const char* real_name, const char* complex_name) {
  const char* p = std::is_same_v<T, float> ? "s" : std::is_same_v<T, double> ? "d" : std::is_same_v<T, std::complex<float>> ? "c" : "z";
  return std::string(p) + (is_complex_v<T> ? complex_name : real_name) + "_";
}
// The routine through the preload library (gpu) or straight in the CPU library.
template <class F> F fn(bool gpu, const std::string& n) { return gpu ? intercepted<F>(n.c_str()) : cpu<F>(n.c_str()); }

// A dense column-major matrix in complex double, for residuals of any precision's results.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<std::complex<double>> v;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(size_t(r * c)) {}
  std::complex<double>& operator()(int64_t i, int64_t j) { return v[size_t(i + j * rows)]; }
  std::complex<double> operator()(int64_t i, int64_t j) const { return v[size_t(i + j * rows)]; }
};
template <class T> std::complex<double> to_cd(T x) {
  if constexpr (is_complex_v<T>) return {double(x.real()), double(x.imag())};
  else return {double(x), 0.0};
}
// The rows x cols matrix a caller's array holds at leading dimension ld.
template <class T> Mat from(const T* a, int64_t rows, int64_t cols, int64_t ld) {
  Mat m(rows, cols);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) m(i, j) = to_cd(a[i + j * ld]);
  return m;
}
inline Mat mul(const Mat& a, const Mat& b) {
  Mat c(a.rows, b.cols);
  for (int64_t j = 0; j < b.cols; ++j)
    for (int64_t k = 0; k < a.cols; ++k) {
      const std::complex<double> bkj = b(k, j);
      for (int64_t i = 0; i < a.rows; ++i) c(i, j) += a(i, k) * bkj;
    }
  return c;
}
// The conjugate transpose.
inline Mat adj(const Mat& a) {
  Mat c(a.cols, a.rows);
  for (int64_t j = 0; j < a.cols; ++j)
    for (int64_t i = 0; i < a.rows; ++i) c(j, i) = std::conj(a(i, j));
  return c;
}
inline double maxabs(const Mat& a) {
  double m = 0;
  for (const std::complex<double>& x : a.v) m = std::max(m, std::abs(x));
  return m;
}
// max |Q^H Q - I|: columns orthonormal.
inline double orth_err(const Mat& q) {
  Mat g = mul(adj(q), q);
  for (int64_t i = 0; i < g.rows; ++i) g(i, i) -= 1.0;
  return maxabs(g);
}

// The integer LAPACK returns in a real or complex workspace entry (work[0] of a query).
template <class T> int size_of(const T& w) { return int(std::real(w)); }

// The last call stayed off the GPU (a query, an argument error, a case the GPU path leaves).
inline void expect_not_on_gpu() {
  auto lc = last_call();
  EXPECT_NE(lc.device, 1) << "reason " << lc.reason << " gpu status " << lc.gpu_status;
}

// max |A V - V diag(w)| relative to max|A| and n.
inline double eig_residual(const Mat& a, const Mat& v, const std::vector<std::complex<double>>& w) {
  Mat r = mul(a, v);
  for (int64_t j = 0; j < v.cols; ++j)
    for (int64_t i = 0; i < v.rows; ++i) r(i, j) -= v(i, j) * w[size_t(j)];
  return maxabs(r) / (std::max(maxabs(a), 1e-300) * double(a.rows));
}

// Bit-exact over the strict `uplo` == 'U' ? lower : upper triangle (the one LAPACK never writes).
template <class T>
bool other_triangle_untouched(const std::vector<T>& a, const std::vector<T>& a0, int64_t n, int64_t ld, char uplo) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const bool other = uplo == 'U' ? i > j : i < j;
      if (other && std::memcmp(&a[size_t(i + j * ld)], &a0[size_t(i + j * ld)], sizeof(T)) != 0) return false;
    }
  return true;
}

}  // namespace gpu_test
