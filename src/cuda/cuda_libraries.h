// cuBLAS, cuSOLVER and cuFFT, each loaded at its first use, so a program pays only for what it uses. The
// backend links only the CUDA runtime, so loading it (the GPU start's first step) no longer loads cuBLAS
// and cuBLASLt (about 50 ms on the GPU test machine: H200, 16-core host), cuSOLVER or cuFFT. Every function
// of those libraries the backend calls is listed below once, as a macro: a call `cublasDgemm_64(...)`
// (cublas_v2.h makes it cublasDgemm_v2_64) goes through a pointer looked up at that call site's first use,
// which loads the library then. A function missing from the list fails the link (-Wl,--no-undefined), since
// no CUDA library but the runtime is linked.
//
// Include this instead of the libraries' own headers; it includes them first (a library header read
// after the macros would not compile).
#pragma once

#include <cublasXt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>
#include <cusolverDn.h>

#include <initializer_list>

namespace gofl {
namespace cuda {

enum class CudaLibrary { Cublas, Cusolver, Cufft };

// Loads `lib` now if it is not loaded yet (cuSOLVER loads cuBLAS first: it needs it). Thread-safe.
// Throws Failure (the library's error status, "loading cuBLAS", ...) when it cannot be loaded (it
// is not tried again: every later use fails the same way, and the call runs on the CPU).
void load_cuda_library(CudaLibrary lib);
// How long loading `lib` took, to the first one who asks after it loaded (0 before, and after):
// whichever thread loaded it (a call site's first lookup, a handle's helper, the start's), the time
// is noted once, by whoever notes one-time costs next.
double take_load_seconds(CudaLibrary lib);
// Whether `lib` failed to load (then every use of it fails).
bool cuda_library_failed(CudaLibrary lib);

// The address of `name` in `lib`, loading it first if needed. Throws Failure when either is missing.
void* cuda_library_symbol(CudaLibrary lib, const char* name);

// dlopen of a toolkit library: each soname in turn (the search finds it through the backend's
// RUNPATH, LD_LIBRARY_PATH or the system's), then the first one in the toolkit's folder at build
// time. Null when none loads. Also used for cusolverMg (split_engines.cpp).
void* open_toolkit_library(std::initializer_list<const char*> sonames);

}  // namespace cuda
}  // namespace gofl

// A version number macro as text, for sonames: "libcublas.so." GOFL_CUDA_STR(CUBLAS_VER_MAJOR).
#define GOFL_CUDA_STR_(x) #x
#define GOFL_CUDA_STR(x) GOFL_CUDA_STR_(x)

// One call site's pointer to `name`: looked up at its first use, kept in a static of its own.
#define GOFL_CUDA_LIBRARY_FN(lib, name)                                                  \
  ([]() -> decltype(&::name) {                                                           \
    using Fn = decltype(&::name);                                                        \
    static const Fn fn = reinterpret_cast<Fn>(                                           \
        ::gofl::cuda::cuda_library_symbol(::gofl::cuda::CudaLibrary::lib, #name));       \
    return fn;                                                                           \
  }())

// cuBLAS (cuBLASXt is part of it)
#define cublasCcopy_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCcopy_v2_64)
#define cublasCdgmm_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCdgmm_64)
#define cublasCgeam_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCgeam_64)
#define cublasCgemm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCgemm_v2_64)
#define cublasCgemv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCgemv_v2_64)
#define cublasChemm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasChemm_v2_64)
#define cublasChemv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasChemv_v2_64)
#define cublasCher2k_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCher2k_v2_64)
#define cublasCherk_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCherk_v2_64)
#define cublasCreate_v2 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCreate_v2)
#define cublasCsymm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCsymm_v2_64)
#define cublasCsyr2k_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCsyr2k_v2_64)
#define cublasCsyrk_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCsyrk_v2_64)
#define cublasCtpttr GOFL_CUDA_LIBRARY_FN(Cublas, cublasCtpttr)
#define cublasCtrmm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCtrmm_v2_64)
#define cublasCtrsm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCtrsm_v2_64)
#define cublasCtrsv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasCtrsv_v2_64)
#define cublasCtrttp GOFL_CUDA_LIBRARY_FN(Cublas, cublasCtrttp)
#define cublasDasum_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDasum_v2_64)
#define cublasDcopy_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDcopy_v2_64)
#define cublasDdgmm_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDdgmm_64)
#define cublasDestroy_v2 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDestroy_v2)
#define cublasDgeam_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDgeam_64)
#define cublasDgemm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDgemm_v2_64)
#define cublasDgemv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDgemv_v2_64)
#define cublasDscal_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDscal_v2_64)
#define cublasDsymm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDsymm_v2_64)
#define cublasDsymv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDsymv_v2_64)
#define cublasDsyr2k_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDsyr2k_v2_64)
#define cublasDsyrk_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDsyrk_v2_64)
#define cublasDtpttr GOFL_CUDA_LIBRARY_FN(Cublas, cublasDtpttr)
#define cublasDtrmm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDtrmm_v2_64)
#define cublasDtrsm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDtrsm_v2_64)
#define cublasDtrsv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDtrsv_v2_64)
#define cublasDtrttp GOFL_CUDA_LIBRARY_FN(Cublas, cublasDtrttp)
#define cublasDzasum_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasDzasum_v2_64)
#define cublasIcamax_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasIcamax_v2_64)
#define cublasIdamax_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasIdamax_v2_64)
#define cublasIsamax_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasIsamax_v2_64)
#define cublasIzamax_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasIzamax_v2_64)
#define cublasSasum_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSasum_v2_64)
#define cublasScasum_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasScasum_v2_64)
#define cublasScopy_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasScopy_v2_64)
#define cublasSdgmm_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSdgmm_64)
#define cublasSetPointerMode_v2 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSetPointerMode_v2)
#define cublasSetStream_v2 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSetStream_v2)
#define cublasSgeam_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSgeam_64)
#define cublasSgemm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSgemm_v2_64)
#define cublasSgemv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSgemv_v2_64)
#define cublasSscal_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSscal_v2_64)
#define cublasSsymm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSsymm_v2_64)
#define cublasSsymv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSsymv_v2_64)
#define cublasSsyr2k_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSsyr2k_v2_64)
#define cublasSsyrk_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasSsyrk_v2_64)
#define cublasStpttr GOFL_CUDA_LIBRARY_FN(Cublas, cublasStpttr)
#define cublasStrmm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasStrmm_v2_64)
#define cublasStrsm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasStrsm_v2_64)
#define cublasStrsv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasStrsv_v2_64)
#define cublasStrttp GOFL_CUDA_LIBRARY_FN(Cublas, cublasStrttp)
#define cublasXtCgemm GOFL_CUDA_LIBRARY_FN(Cublas, cublasXtCgemm)
#define cublasXtCreate GOFL_CUDA_LIBRARY_FN(Cublas, cublasXtCreate)
#define cublasXtDestroy GOFL_CUDA_LIBRARY_FN(Cublas, cublasXtDestroy)
#define cublasXtDeviceSelect GOFL_CUDA_LIBRARY_FN(Cublas, cublasXtDeviceSelect)
#define cublasXtDgemm GOFL_CUDA_LIBRARY_FN(Cublas, cublasXtDgemm)
#define cublasXtSetBlockDim GOFL_CUDA_LIBRARY_FN(Cublas, cublasXtSetBlockDim)
#define cublasXtSetPinningMemMode GOFL_CUDA_LIBRARY_FN(Cublas, cublasXtSetPinningMemMode)
#define cublasXtSgemm GOFL_CUDA_LIBRARY_FN(Cublas, cublasXtSgemm)
#define cublasZcopy_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZcopy_v2_64)
#define cublasZdgmm_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZdgmm_64)
#define cublasZgeam_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZgeam_64)
#define cublasZgemm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZgemm_v2_64)
#define cublasZgemv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZgemv_v2_64)
#define cublasZhemm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZhemm_v2_64)
#define cublasZhemv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZhemv_v2_64)
#define cublasZher2k_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZher2k_v2_64)
#define cublasZherk_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZherk_v2_64)
#define cublasZsymm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZsymm_v2_64)
#define cublasZsyr2k_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZsyr2k_v2_64)
#define cublasZsyrk_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZsyrk_v2_64)
#define cublasZtpttr GOFL_CUDA_LIBRARY_FN(Cublas, cublasZtpttr)
#define cublasZtrmm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZtrmm_v2_64)
#define cublasZtrsm_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZtrsm_v2_64)
#define cublasZtrsv_v2_64 GOFL_CUDA_LIBRARY_FN(Cublas, cublasZtrsv_v2_64)
#define cublasZtrttp GOFL_CUDA_LIBRARY_FN(Cublas, cublasZtrttp)

// cuSOLVER
#define cusolverDnChegvd GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnChegvd)
#define cusolverDnChegvd_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnChegvd_bufferSize)
#define cusolverDnChegvdx GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnChegvdx)
#define cusolverDnChegvdx_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnChegvdx_bufferSize)
#define cusolverDnCpotri GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnCpotri)
#define cusolverDnCpotri_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnCpotri_bufferSize)
#define cusolverDnCreate GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnCreate)
#define cusolverDnCreateParams GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnCreateParams)
#define cusolverDnCungqr GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnCungqr)
#define cusolverDnCungqr_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnCungqr_bufferSize)
#define cusolverDnCunmqr GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnCunmqr)
#define cusolverDnCunmqr_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnCunmqr_bufferSize)
#define cusolverDnDestroy GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDestroy)
#define cusolverDnDestroyParams GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDestroyParams)
#define cusolverDnDorgqr GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDorgqr)
#define cusolverDnDorgqr_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDorgqr_bufferSize)
#define cusolverDnDormqr GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDormqr)
#define cusolverDnDormqr_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDormqr_bufferSize)
#define cusolverDnDpotri GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDpotri)
#define cusolverDnDpotri_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDpotri_bufferSize)
#define cusolverDnDsygvd GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDsygvd)
#define cusolverDnDsygvd_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDsygvd_bufferSize)
#define cusolverDnDsygvdx GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDsygvdx)
#define cusolverDnDsygvdx_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnDsygvdx_bufferSize)
#define cusolverDnSetStream GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSetStream)
#define cusolverDnSorgqr GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSorgqr)
#define cusolverDnSorgqr_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSorgqr_bufferSize)
#define cusolverDnSormqr GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSormqr)
#define cusolverDnSormqr_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSormqr_bufferSize)
#define cusolverDnSpotri GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSpotri)
#define cusolverDnSpotri_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSpotri_bufferSize)
#define cusolverDnSsygvd GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSsygvd)
#define cusolverDnSsygvd_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSsygvd_bufferSize)
#define cusolverDnSsygvdx GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSsygvdx)
#define cusolverDnSsygvdx_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnSsygvdx_bufferSize)
#define cusolverDnXgeev GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXgeev)
#define cusolverDnXgeev_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXgeev_bufferSize)
#define cusolverDnXgeqrf GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXgeqrf)
#define cusolverDnXgeqrf_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXgeqrf_bufferSize)
#define cusolverDnXgesvd GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXgesvd)
#define cusolverDnXgesvd_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXgesvd_bufferSize)
#define cusolverDnXgetrf GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXgetrf)
#define cusolverDnXgetrf_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXgetrf_bufferSize)
#define cusolverDnXgetrs GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXgetrs)
#define cusolverDnXpotrf GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXpotrf)
#define cusolverDnXpotrf_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXpotrf_bufferSize)
#define cusolverDnXpotrs GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXpotrs)
#define cusolverDnXsyevd GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXsyevd)
#define cusolverDnXsyevd_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXsyevd_bufferSize)
#define cusolverDnXsyevdx GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXsyevdx)
#define cusolverDnXsyevdx_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXsyevdx_bufferSize)
#define cusolverDnXtrtri GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXtrtri)
#define cusolverDnXtrtri_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnXtrtri_bufferSize)
#define cusolverDnZhegvd GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnZhegvd)
#define cusolverDnZhegvd_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnZhegvd_bufferSize)
#define cusolverDnZhegvdx GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnZhegvdx)
#define cusolverDnZhegvdx_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnZhegvdx_bufferSize)
#define cusolverDnZpotri GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnZpotri)
#define cusolverDnZpotri_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnZpotri_bufferSize)
#define cusolverDnZungqr GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnZungqr)
#define cusolverDnZungqr_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnZungqr_bufferSize)
#define cusolverDnZunmqr GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnZunmqr)
#define cusolverDnZunmqr_bufferSize GOFL_CUDA_LIBRARY_FN(Cusolver, cusolverDnZunmqr_bufferSize)

// cuFFT
#define cufftCreate GOFL_CUDA_LIBRARY_FN(Cufft, cufftCreate)
#define cufftDestroy GOFL_CUDA_LIBRARY_FN(Cufft, cufftDestroy)
#define cufftExecC2C GOFL_CUDA_LIBRARY_FN(Cufft, cufftExecC2C)
#define cufftExecC2R GOFL_CUDA_LIBRARY_FN(Cufft, cufftExecC2R)
#define cufftExecD2Z GOFL_CUDA_LIBRARY_FN(Cufft, cufftExecD2Z)
#define cufftExecR2C GOFL_CUDA_LIBRARY_FN(Cufft, cufftExecR2C)
#define cufftExecZ2D GOFL_CUDA_LIBRARY_FN(Cufft, cufftExecZ2D)
#define cufftExecZ2Z GOFL_CUDA_LIBRARY_FN(Cufft, cufftExecZ2Z)
#define cufftMakePlanMany64 GOFL_CUDA_LIBRARY_FN(Cufft, cufftMakePlanMany64)
#define cufftSetAutoAllocation GOFL_CUDA_LIBRARY_FN(Cufft, cufftSetAutoAllocation)
#define cufftSetStream GOFL_CUDA_LIBRARY_FN(Cufft, cufftSetStream)
#define cufftSetWorkArea GOFL_CUDA_LIBRARY_FN(Cufft, cufftSetWorkArea)
