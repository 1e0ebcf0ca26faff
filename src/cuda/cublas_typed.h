// cuBLAS by element type: the one place the backend picks cuBLAS's S, D, C or Z entry point for a
// precision T (float, double, std::complex<float>, std::complex<double>). x_gemm<T>(args...) calls
// the gemm of T with the arguments as given; the pointers are cuBLAS's own types, which cu() makes
// of std::complex pointers. The sizes are 64-bit (the _64 entry points) except where cuBLAS has
// none (trttp, tpttr).
#pragma once

#include <complex>
#include <cstring>
#include <type_traits>

#include "cuda/cuda_libraries.h"

namespace gofl {
namespace cuda {

// ---- element types ------------------------------------------------------------------------------------
template <class T> struct cu_type { using type = T; };
template <> struct cu_type<std::complex<float>> { using type = cuComplex; };
template <> struct cu_type<std::complex<double>> { using type = cuDoubleComplex; };
template <class T> using cu_t = typename cu_type<T>::type;
// std::complex<R> and cuComplex / cuDoubleComplex share their layout (two R, real first).
template <class T> cu_t<T>* cu(T* p) { return reinterpret_cast<cu_t<T>*>(p); }
template <class T> const cu_t<T>* cu(const T* p) { return reinterpret_cast<const cu_t<T>*>(p); }
template <class T> cu_t<T> cu_one() {
  const T one = T(1);
  cu_t<T> r;
  std::memcpy(&r, &one, sizeof r);
  return r;
}

template <class T>
constexpr bool is_cublas_type_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                  std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// ---- entry points -------------------------------------------------------------------------------------
#define GOFL_CUBLAS_BY_TYPE(NAME, S, D, C, Z)                                                    \
  template <class T, class... A> cublasStatus_t NAME(A... a) {                                   \
    static_assert(is_cublas_type_v<T>, "a cuBLAS precision");                                    \
    if constexpr (std::is_same_v<T, float>) return S(a...);                                      \
    else if constexpr (std::is_same_v<T, double>) return D(a...);                                \
    else if constexpr (std::is_same_v<T, std::complex<float>>) return C(a...);                   \
    else return Z(a...);                                                                         \
  }
// Routines BLAS has for complex precisions only.
#define GOFL_CUBLAS_COMPLEX(NAME, C, Z)                                                          \
  template <class T, class... A> cublasStatus_t NAME(A... a) {                                   \
    static_assert(std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>, \
                  "a complex cuBLAS precision");                                                 \
    if constexpr (std::is_same_v<T, std::complex<float>>) return C(a...);                        \
    else return Z(a...);                                                                         \
  }

// Level 3 and the BLAS-like extensions.
GOFL_CUBLAS_BY_TYPE(x_gemm, cublasSgemm_v2_64, cublasDgemm_v2_64, cublasCgemm_v2_64, cublasZgemm_v2_64)
GOFL_CUBLAS_BY_TYPE(x_symm, cublasSsymm_v2_64, cublasDsymm_v2_64, cublasCsymm_v2_64, cublasZsymm_v2_64)
GOFL_CUBLAS_BY_TYPE(x_syrk, cublasSsyrk_v2_64, cublasDsyrk_v2_64, cublasCsyrk_v2_64, cublasZsyrk_v2_64)
GOFL_CUBLAS_BY_TYPE(x_syr2k, cublasSsyr2k_v2_64, cublasDsyr2k_v2_64, cublasCsyr2k_v2_64, cublasZsyr2k_v2_64)
GOFL_CUBLAS_BY_TYPE(x_trmm, cublasStrmm_v2_64, cublasDtrmm_v2_64, cublasCtrmm_v2_64, cublasZtrmm_v2_64)
GOFL_CUBLAS_BY_TYPE(x_trsm, cublasStrsm_v2_64, cublasDtrsm_v2_64, cublasCtrsm_v2_64, cublasZtrsm_v2_64)
GOFL_CUBLAS_COMPLEX(x_hemm, cublasChemm_v2_64, cublasZhemm_v2_64)
GOFL_CUBLAS_COMPLEX(x_herk, cublasCherk_v2_64, cublasZherk_v2_64)
GOFL_CUBLAS_COMPLEX(x_her2k, cublasCher2k_v2_64, cublasZher2k_v2_64)
GOFL_CUBLAS_BY_TYPE(x_geam, cublasSgeam_64, cublasDgeam_64, cublasCgeam_64, cublasZgeam_64)
GOFL_CUBLAS_BY_TYPE(x_dgmm, cublasSdgmm_64, cublasDdgmm_64, cublasCdgmm_64, cublasZdgmm_64)
// Full storage of one triangle to packed storage (trttp) and back (tpttr); 32-bit sizes.
GOFL_CUBLAS_BY_TYPE(x_trttp, cublasStrttp, cublasDtrttp, cublasCtrttp, cublasZtrttp)
GOFL_CUBLAS_BY_TYPE(x_tpttr, cublasStpttr, cublasDtpttr, cublasCtpttr, cublasZtpttr)

// Level 2. symv for real T, hemv for complex T: the one symmetric-type product each precision has in BLAS.
GOFL_CUBLAS_BY_TYPE(x_gemv, cublasSgemv_v2_64, cublasDgemv_v2_64, cublasCgemv_v2_64, cublasZgemv_v2_64)
GOFL_CUBLAS_BY_TYPE(x_trsv, cublasStrsv_v2_64, cublasDtrsv_v2_64, cublasCtrsv_v2_64, cublasZtrsv_v2_64)
GOFL_CUBLAS_BY_TYPE(x_symv_hemv, cublasSsymv_v2_64, cublasDsymv_v2_64, cublasChemv_v2_64, cublasZhemv_v2_64)

// Level 1. asum and iamax of a complex vector sum and compare |re| + |im| (scasum, izamax, ...).
GOFL_CUBLAS_BY_TYPE(x_copy, cublasScopy_v2_64, cublasDcopy_v2_64, cublasCcopy_v2_64, cublasZcopy_v2_64)
GOFL_CUBLAS_BY_TYPE(x_asum, cublasSasum_v2_64, cublasDasum_v2_64, cublasScasum_v2_64, cublasDzasum_v2_64)
GOFL_CUBLAS_BY_TYPE(x_iamax, cublasIsamax_v2_64, cublasIdamax_v2_64, cublasIcamax_v2_64, cublasIzamax_v2_64)

// cuBLASXt (split_blas3.cpp: gemm over several GPUs; size_t sizes).
GOFL_CUBLAS_BY_TYPE(xt_gemm, cublasXtSgemm, cublasXtDgemm, cublasXtCgemm, cublasXtZgemm)

#undef GOFL_CUBLAS_COMPLEX
#undef GOFL_CUBLAS_BY_TYPE

}  // namespace cuda
}  // namespace gofl
