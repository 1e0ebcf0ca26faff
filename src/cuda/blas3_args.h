// The arguments of the Level-3 BLAS calls both GPU paths run (blas3.cpp on one GPU, split_blas3.cpp
// over several): the call's descriptor (generated/descs.h, row-major CBLAS calls already mapped to the
// column-major call on the same memory), what its shapes mean, and the checks the CPU library would make.
#pragma once

#include <cstdint>

#include "cuda/blas_args.h"
#include "cuda/engine.h"

namespace gofl {
namespace cuda {
namespace blas3 {

// ---- helpers ------------------------------------------------------------------------------------------

using namespace blas_args;  // one_of, max1, is_zero (blas_args.h)

// Real types: 'C' means 'T'.
template <class T> char real_trans(char t) { return (!is_complex<T>::value && t == 'C') ? 'T' : t; }

// ---- gemm ---------------------------------------------------------------------------------------------

// A row-major call arrives as C^T = op(B)^T op(A)^T, the column-major product of the same memory.
template <class T> int64_t ar(const desc::gemm<T>& g) { return g.transa == 'N' ? g.m : g.k; }  // rows of A as stored
template <class T> int64_t ac(const desc::gemm<T>& g) { return g.transa == 'N' ? g.k : g.m; }
template <class T> int64_t br(const desc::gemm<T>& g) { return g.transb == 'N' ? g.k : g.n; }
template <class T> int64_t bc(const desc::gemm<T>& g) { return g.transb == 'N' ? g.n : g.k; }
// B is A, stored alike (a @ a): one device copy serves both.
template <class T> bool b_is_a(const desc::gemm<T>& g) {
  return g.a == g.b && ar(g) == br(g) && ac(g) == bc(g) && g.lda == g.ldb;
}

template <class T> int gemm_supports(const desc::gemm<T>& g) {
  if (!g.layout_ok) return GOFL_GPU_INVALID_ARGS;
  if (!one_of(g.transa, "NTC") || !one_of(g.transb, "NTC") || g.m < 0 || g.n < 0 || g.k < 0 ||
      g.lda < max1(ar(g)) || g.ldb < max1(br(g)) || g.ldc < max1(g.m))
    return GOFL_GPU_INVALID_ARGS;
  if (g.m == 0 || g.n == 0 || g.k == 0 || is_zero(g.alpha)) return GOFL_GPU_UNSUPPORTED;
  // Matrix-vector and outer-product shapes are bound by copying, not arithmetic, and cuBLAS 13.0's
  // 64-bit zgemm crashed (SIGSEGV in cublasLt) on a 1x1x1 product (H200, CUDA 13.0): the CPU runs them.
  if (g.m == 1 || g.n == 1 || g.k == 1) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}


}  // namespace blas3
}  // namespace cuda
}  // namespace gofl
