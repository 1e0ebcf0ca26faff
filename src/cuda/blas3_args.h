// The arguments of the Level-3 BLAS calls both GPU paths run (blas3.cpp on one GPU, split_blas3.cpp
// over several): read once, row-major CBLAS calls mapped to the column-major call on the same memory,
// and the checks the CPU library would make.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "cuda/blas_args.h"
#include "cuda/engine.h"
#include "generated/args.h"

namespace gofl {
namespace cuda {
namespace blas3 {

// ---- helpers ------------------------------------------------------------------------------------------

using namespace blas_args;  // one_of, max1, bad_layout, is_zero, flip_ul, flip_side (blas_args.h)

// Real types: 'C' means 'T'.
template <class T> char real_trans(char t) { return (!is_complex<T>::value && t == 'C') ? 'T' : t; }

// ---- gemm ---------------------------------------------------------------------------------------------

template <class T> struct Gemm {
  char ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  T alpha, beta;
  const T *A, *B;
  T* C;
  int64_t ar() const { return ta == 'N' ? m : k; }  // rows of A as stored
  int64_t ac() const { return ta == 'N' ? k : m; }
  int64_t br() const { return tb == 'N' ? k : n; }
  int64_t bc() const { return tb == 'N' ? n : k; }
  // B is A, stored alike (a @ a): one device copy serves both.
  bool b_is_a() const { return A == B && ar() == br() && ac() == bc() && lda == ldb; }

  explicit Gemm(const CallArgs& a) {
    using P = args::gemm_r;
    ta = a.ch(P::transa); tb = a.ch(P::transb);
    m = a.i(P::m); n = a.i(P::n); k = a.i(P::k);
    lda = a.i(P::lda); ldb = a.i(P::ldb); ldc = a.i(P::ldc);
    alpha = a.scalar<T>(P::alpha); beta = a.scalar<T>(P::beta);
    A = a.ptr<const T>(P::a); B = a.ptr<const T>(P::b); C = a.ptr<T>(P::c);
    // Row major: C^T = op(B)^T op(A)^T, the column-major product of the same memory.
    if (a.row_major()) { std::swap(ta, tb); std::swap(m, n); std::swap(A, B); std::swap(lda, ldb); }
  }
};

template <class T> int gemm_supports(const CallArgs& a) {
  if (bad_layout(a)) return GOFL_GPU_INVALID_ARGS;
  const Gemm<T> g(a);
  if (!one_of(g.ta, "NTC") || !one_of(g.tb, "NTC") || g.m < 0 || g.n < 0 || g.k < 0 || g.lda < max1(g.ar()) ||
      g.ldb < max1(g.br()) || g.ldc < max1(g.m))
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
