// Compact-WY application of QR's Q with 64-bit sizes (householder64.h says why and what).
#include "cuda/householder64.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <type_traits>

namespace gofl {
namespace cuda {
namespace lapack {

namespace {

constexpr int64_t kBlock = 64;  // reflectors per block: LAPACK's usual NB for ?orgqr/?ormqr

// T (kb x kb, upper triangular, column-major) of H(1) ... H(kb) = I - Y T Y^H from G = Y^H Y:
// T(i,i) = tau_i, T(0:i, i) = -tau_i T(0:i, 0:i) G(0:i, i) (?larft's recurrence).
template <class T> std::vector<T> block_factor(const std::vector<T>& g, const T* tau, int64_t kb) {
  std::vector<T> t(size_t(kb * kb), T(0));
  for (int64_t i = 0; i < kb; ++i) {
    for (int64_t r = 0; r < i; ++r) {
      T sum(0);
      for (int64_t c = r; c < i; ++c) sum += t[size_t(r + c * kb)] * g[size_t(c + i * kb)];
      t[size_t(r + i * kb)] = -tau[i] * sum;
    }
    t[size_t(i + i * kb)] = tau[i];
  }
  return t;
}

}  // namespace

template <class T>
void apply_q64(Engine& e, const T* dV, int64_t ldv, const std::vector<T>& tau, int64_t rows, int64_t k, T* dC,
               int64_t ldc, int64_t cols, bool adjoint, bool identity_start) {
  if (k <= 0 || cols <= 0 || rows <= 0) return;
  const int64_t nb = std::min(kBlock, k);
  const cudaStream_t s = e.stream();
  const cublasOperation_t ct = is_complex<T>::value ? CUBLAS_OP_C : CUBLAS_OP_T;
  DevMem dY = alloc_elems<T>(e, rows * nb), dG = alloc_elems<T>(e, nb * nb), dT = alloc_elems<T>(e, nb * nb);
  DevMem dW = alloc_elems<T>(e, nb * cols), dW2 = alloc_elems<T>(e, nb * cols), dOnes = alloc_elems<T>(e, nb);
  const std::vector<T> ones(static_cast<size_t>(nb), T(1));
  check(cudaMemcpyAsync(dOnes.get(), ones.data(), sizeof(T) * size_t(nb), cudaMemcpyHostToDevice, s),
        "cudaMemcpyAsync(ones)");
  const cu_t<T> one = cu_one<T>(), zero{};
  cu_t<T> minus_one;
  {
    const T m1 = T(-1);
    std::memcpy(&minus_one, &m1, sizeof m1);
  }
  host_pointer_mode(e);
  const int64_t blocks = (k + nb - 1) / nb;
  // Q C applies the blocks last to first, Q^H C first to last (each block then as I - Y T^H Y^H).
  for (int64_t step = 0; step < blocks; ++step) {
    const int64_t b = adjoint ? step : blocks - 1 - step;
    const int64_t j = b * nb, kb = std::min(nb, k - j), r = rows - j;
    const int64_t c0 = identity_start ? std::min(j, cols) : 0, nc = cols - c0;
    if (nc <= 0) continue;
    T* Y = dY.get<T>();
    // Y = V(j:rows, j:j+kb) with its unit diagonal and the zeros above it made explicit.
    copy_matrix_d2d(Y, sizeof(T) * size_t(r), dV + j + j * ldv, sizeof(T) * size_t(ldv), sizeof(T) * size_t(r),
                    size_t(kb), s);
    for (int64_t i = 1; i < kb; ++i)
      check(cudaMemsetAsync(Y + i * r, 0, sizeof(T) * size_t(std::min(i, r)), s), "cudaMemsetAsync(Y)");
    check(x_copy<T>(e.blas(), std::min(kb, r), cu(dOnes.get<T>()), 1, cu(Y), r + 1), "cublasXcopy(Y diagonal)");
    // T from G = Y^H Y, on the host (kb^3 / 6 operations).
    check(x_gemm<T>(e.blas(), ct, CUBLAS_OP_N, kb, kb, r, &one, cu(Y), r, cu(Y), r, &zero, cu(dG.get<T>()), kb),
          "cublasXgemm(Y^H Y)");
    std::vector<T> g(static_cast<size_t>(kb * kb));
    e.read_small(g.data(), dG.get(), sizeof(T) * size_t(kb * kb));
    const std::vector<T> t = block_factor(g, tau.data() + j, kb);
    check(cudaMemcpyAsync(dT.get(), t.data(), sizeof(T) * size_t(kb * kb), cudaMemcpyHostToDevice, s),
          "cudaMemcpyAsync(T)");
    // C(j:, c0:) -= Y op(T) (Y^H C(j:, c0:)), op(T) = T or T^H.
    T* Cb = dC + j + c0 * ldc;
    check(x_gemm<T>(e.blas(), ct, CUBLAS_OP_N, kb, nc, r, &one, cu(Y), r, cu(Cb), ldc, &zero, cu(dW.get<T>()), kb),
          "cublasXgemm(Y^H C)");
    check(x_gemm<T>(e.blas(), adjoint ? ct : CUBLAS_OP_N, CUBLAS_OP_N, kb, nc, kb, &one, cu(dT.get<T>()), kb,
                        cu(dW.get<T>()), kb, &zero, cu(dW2.get<T>()), kb),
          "cublasXgemm(T W)");
    check(x_gemm<T>(e.blas(), CUBLAS_OP_N, CUBLAS_OP_N, r, nc, kb, &minus_one, cu(Y), r, cu(dW2.get<T>()), kb, &one,
                        cu(Cb), ldc),
          "cublasXgemm(C - Y W)");
  }
  // `t` and `g` of a block are host vectors that die with the block: the H2D copy from pageable
  // memory has taken them before cudaMemcpyAsync returned. The device buffers live until here, and
  // the pool orders their reuse after this stream's work.
}

template void apply_q64<float>(Engine&, const float*, int64_t, const std::vector<float>&, int64_t, int64_t, float*,
                               int64_t, int64_t, bool, bool);
template void apply_q64<double>(Engine&, const double*, int64_t, const std::vector<double>&, int64_t, int64_t,
                                double*, int64_t, int64_t, bool, bool);
template void apply_q64<std::complex<float>>(Engine&, const std::complex<float>*, int64_t,
                                             const std::vector<std::complex<float>>&, int64_t, int64_t,
                                             std::complex<float>*, int64_t, int64_t, bool, bool);
template void apply_q64<std::complex<double>>(Engine&, const std::complex<double>*, int64_t,
                                              const std::vector<std::complex<double>>&, int64_t, int64_t,
                                              std::complex<double>*, int64_t, int64_t, bool, bool);

}  // namespace lapack
}  // namespace cuda
}  // namespace gofl
