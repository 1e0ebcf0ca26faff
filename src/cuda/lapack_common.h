// Helpers shared by the LAPACK routine families (lapack_lu.cpp, lapack_qr.cpp): precision dispatch
// for the cuBLAS / legacy cuSOLVER entry points, pivot conversion, device scratch, and the CPU
// library's workspace answers (work[0]) that LAPACK callers may read.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/table.h"
#include "cuda/engine.h"

namespace gofl {
namespace cuda {
namespace lapack {

// ---- types ------------------------------------------------------------------------------------------
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
// The "conjugate transpose" of the precision: T for real (LAPACK's real routines take 'T'), C for complex.
template <class T> constexpr char ctrans() { return is_complex<T>::value ? 'C' : 'T'; }
template <class T> double modulus(const T& x) { return double(std::abs(x)); }

// Legacy cuSOLVER and cuBLAS entry points take 32-bit sizes: these must fit.
inline bool fits_int(int64_t v) { return v >= 0 && v <= int64_t(INT_MAX); }

// ---- cuBLAS by precision (64-bit-size API) ---------------------------------------------------------
template <class T> struct Blas;
#define GOFL_BLAS_PREC(T, p, I)                                                                          \
  template <> struct Blas<T> {                                                                           \
    static cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u,                 \
                               cublasOperation_t t, cublasDiagType_t d, int64_t m, int64_t n,            \
                               const cu_t<T>* alpha, const cu_t<T>* A, int64_t lda, cu_t<T>* B,          \
                               int64_t ldb) {                                                            \
      return cublas##p##trsm_64(h, s, u, t, d, m, n, alpha, A, lda, B, ldb);                             \
    }                                                                                                    \
    static cublasStatus_t geam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,  \
                               int64_t n, const cu_t<T>* alpha, const cu_t<T>* A, int64_t lda,           \
                               const cu_t<T>* beta, const cu_t<T>* B, int64_t ldb, cu_t<T>* C,           \
                               int64_t ldc) {                                                            \
      return cublas##p##geam_64(h, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);                   \
    }                                                                                                    \
    static cublasStatus_t copy(cublasHandle_t h, int64_t n, const cu_t<T>* x, int64_t incx, cu_t<T>* y,  \
                               int64_t incy) {                                                           \
      return cublas##p##copy_64(h, n, x, incx, y, incy);                                                 \
    }                                                                                                    \
    static cublasStatus_t iamax(cublasHandle_t h, int64_t n, const cu_t<T>* x, int64_t incx,             \
                                int64_t* r) {                                                            \
      return cublasI##I##amax_64(h, n, x, incx, r);                                                      \
    }                                                                                                    \
  };
GOFL_BLAS_PREC(float, S, s)
GOFL_BLAS_PREC(double, D, d)
GOFL_BLAS_PREC(std::complex<float>, C, c)
GOFL_BLAS_PREC(std::complex<double>, Z, z)
#undef GOFL_BLAS_PREC

// ---- legacy cuSOLVER by precision (no 64-bit API exists for these) ---------------------------------
// orgqr/ungqr: form Q; ormqr/unmqr: apply Q or Q^H.
template <class T> struct Qr;
#define GOFL_QR_PREC(T, p, gen, apply)                                                                   \
  template <> struct Qr<T> {                                                                             \
    static cusolverStatus_t gen_size(cusolverDnHandle_t h, int m, int n, int k, const cu_t<T>* A,        \
                                     int lda, const cu_t<T>* tau, int* lwork) {                          \
      return cusolverDn##p##gen##_bufferSize(h, m, n, k, A, lda, tau, lwork);                            \
    }                                                                                                    \
    static cusolverStatus_t gen_q(cusolverDnHandle_t h, int m, int n, int k, cu_t<T>* A, int lda,        \
                                  const cu_t<T>* tau, cu_t<T>* w, int lwork, int* info) {                \
      return cusolverDn##p##gen(h, m, n, k, A, lda, tau, w, lwork, info);                                \
    }                                                                                                    \
    static cusolverStatus_t apply_size(cusolverDnHandle_t h, cublasSideMode_t s, cublasOperation_t t,    \
                                       int m, int n, int k, const cu_t<T>* A, int lda,                   \
                                       const cu_t<T>* tau, const cu_t<T>* C, int ldc, int* lwork) {      \
      return cusolverDn##p##apply##_bufferSize(h, s, t, m, n, k, A, lda, tau, C, ldc, lwork);            \
    }                                                                                                    \
    static cusolverStatus_t apply_q(cusolverDnHandle_t h, cublasSideMode_t s, cublasOperation_t t,       \
                                    int m, int n, int k, const cu_t<T>* A, int lda, const cu_t<T>* tau,  \
                                    cu_t<T>* C, int ldc, cu_t<T>* w, int lwork, int* info) {             \
      return cusolverDn##p##apply(h, s, t, m, n, k, A, lda, tau, C, ldc, w, lwork, info);                \
    }                                                                                                    \
  };
GOFL_QR_PREC(float, S, orgqr, ormqr)
GOFL_QR_PREC(double, D, orgqr, ormqr)
GOFL_QR_PREC(std::complex<float>, C, ungqr, unmqr)
GOFL_QR_PREC(std::complex<double>, Z, ungqr, unmqr)
#undef GOFL_QR_PREC

// ---- device scratch ---------------------------------------------------------------------------------
// At least one element, so that an empty operand never asks the pool for 0 bytes.
template <class T> DevMem alloc_elems(Engine& e, int64_t n) {
  return e.alloc(sizeof(T) * size_t(std::max<int64_t>(n, 1)));
}

// Device and host workspace of the 64-bit cuSOLVER API.
struct Workspace {
  DevMem dev;
  size_t dev_bytes = 0;
  std::vector<unsigned char> host;
  void* d() const { return dev.get(); }
  void* h() { return host.empty() ? nullptr : host.data(); }
};
inline Workspace make_workspace(Engine& e, size_t dev_bytes, size_t host_bytes) {
  Workspace w;
  w.dev = e.alloc(std::max<size_t>(dev_bytes, 16));
  w.dev_bytes = dev_bytes;
  w.host.resize(host_bytes);
  return w;
}

// Our own cuSOLVER info words (one per solver call of a routine), zeroed on the stream, so that one
// call's info is not lost when the next call of the same routine reports into another.
struct DevInfo {
  DevMem mem;
  int* at(int i) const { return mem.get<int>() + i; }
};
inline DevInfo make_info(Engine& e, int count) {
  DevInfo d{e.alloc(sizeof(int) * size_t(count))};
  check(cudaMemsetAsync(d.mem.get(), 0, sizeof(int) * size_t(count), e.stream()), "cudaMemsetAsync(info)");
  return d;
}
// Reads a cuSOLVER info word after finish_compute(). A negative value names a wrong argument: a bug
// here (the arguments were checked), so the call goes back to the CPU library.
inline int read_info(Engine& e, const DevInfo& d, int i, const char* where) {
  int v = 0;
  e.read_small(&v, d.at(i), sizeof v);
  if (v < 0) fail(GOFL_GPU_CUSOLVER_ERROR, where, v);
  return v;
}

// Host scalars for cuBLAS (alpha): make sure the handle reads them from the host.
inline void host_pointer_mode(Engine& e) {
  check(cublasSetPointerMode(e.blas(), CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
}

// ---- pivots -----------------------------------------------------------------------------------------
// The caller's pivots (int32 or int64 by its integer width), 1-based, as cuSOLVER's int64.
inline std::vector<int64_t> read_pivots(const CallArgs& a, int pos, int64_t n) {
  std::vector<int64_t> v(size_t(std::max<int64_t>(n, 0)));
  if (a.ilp64()) {
    const int64_t* p = a.ptr<const int64_t>(pos);
    std::copy(p, p + n, v.begin());
  } else {
    const int32_t* p = a.ptr<const int32_t>(pos);
    std::copy(p, p + n, v.begin());
  }
  return v;
}
inline void write_pivots(const CallArgs& a, int pos, const std::vector<int64_t>& v) {
  if (a.ilp64()) {
    std::copy(v.begin(), v.end(), a.ptr<int64_t>(pos));
  } else {
    int32_t* p = a.ptr<int32_t>(pos);
    for (size_t i = 0; i < v.size(); ++i) p[i] = int32_t(v[i]);
  }
}
// Pivots LAPACK would use as row indices: out-of-range ones would make cuSOLVER touch memory outside
// the matrix, so such calls stay with the CPU library (whatever it does with them).
inline bool pivots_in_range(const std::vector<int64_t>& v, int64_t n) {
  for (int64_t p : v)
    if (p < 1 || p > n) return false;
  return true;
}

// ---- triangles and diagonals ------------------------------------------------------------------------
// First i (1-based) with A(i,i) exactly zero, 0 if none: the singularity test of LAPACK's ?trtri and
// ?trtrs (NaN is not zero there either).
template <class T> int64_t first_zero_diagonal(const T* a, int64_t n, int64_t ld) {
  for (int64_t i = 0; i < n; ++i)
    if (a[i + i * ld] == T(0)) return i + 1;
  return 0;
}

// ---- the CPU library's workspace answers ------------------------------------------------------------
// work[0] is an output callers may read. After a query (lwork = -1) LAPACK returns LWKOPT = N*NB;
// after a real call some routines (?getri, ?geqrf, ?orgqr/?ungqr) overwrite it with IWS, the
// workspace the blocked code used: N*NB if the blocked code runs (NB > 1, NB < K and, where the
// routine has one, the crossover NX < K), else N. We ask the CPU library for LWKOPT (hence NB) and
// for NX through its own ILAENV, and rebuild IWS exactly as the reference code does.

// The CPU library's ILAENV, found next to call().real under the name the call's scheme gives it
// ("ilaenv_", "ilaenv_64_", "scipy_ilaenv_64_", ...); `fallback` when it cannot be found.
inline int64_t cpu_ilaenv(const CallArgs& a, int64_t ispec, const char* name, int64_t n1, int64_t n2,
                          int64_t n3, int64_t n4, int64_t fallback) {
  const gofl_call& c = a.call();
  if (!c.real || c.sym >= GOFL_N_SYMS || c.op >= GOFL_N_OPS) return fallback;
  std::string sym = gofl_syms[c.sym].name;
  const char* op = gofl_ops[c.op].name;
  const size_t at = sym.find(op);
  if (at == std::string::npos) return fallback;
  sym.replace(at, std::strlen(op), "ilaenv");
  Dl_info di{};
  if (!dladdr(c.real, &di) || !di.dli_fname) return fallback;
  void* lib = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return fallback;
  int64_t r = fallback;
  if (void* f = dlsym(lib, sym.c_str())) {
    const size_t name_len = std::strlen(name), opts_len = 1;
    if (a.ilp64()) {
      using Fn = int64_t (*)(const int64_t*, const char*, const char*, const int64_t*, const int64_t*,
                             const int64_t*, const int64_t*, size_t, size_t);
      r = reinterpret_cast<Fn>(f)(&ispec, name, " ", &n1, &n2, &n3, &n4, name_len, opts_len);
    } else {
      using Fn = int32_t (*)(const int32_t*, const char*, const char*, const int32_t*, const int32_t*,
                             const int32_t*, const int32_t*, size_t, size_t);
      const int32_t s = int32_t(ispec), i1 = int32_t(n1), i2 = int32_t(n2), i3 = int32_t(n3), i4 = int32_t(n4);
      r = reinterpret_cast<Fn>(f)(&s, name, " ", &i1, &i2, &i3, &i4, name_len, opts_len);
    }
  }
  dlclose(lib);
  return r;
}

// IWS of the blocked routines, from LWKOPT = ldwork * NB (the query) and the crossover check.
inline int64_t blocked_iws(int64_t lwkopt, int64_t ldwork, int64_t k, bool has_nx, int64_t nx) {
  const int64_t nb = ldwork > 0 ? lwkopt / ldwork : 1;
  if (nb > 1 && nb < k && (!has_nx || nx < k)) return std::max<int64_t>(ldwork * nb, 1);
  return ldwork;
}

// The precision's name letter for ILAENV names ("DGEQRF", "ZUNGQR", ...).
template <class T> constexpr char prec_letter() {
  if constexpr (std::is_same_v<T, float>) return 'S';
  else if constexpr (std::is_same_v<T, double>) return 'D';
  else if constexpr (std::is_same_v<T, std::complex<float>>) return 'C';
  else return 'Z';
}

// The value LAPACK stores in a WORK(1) of precision T for an integer size.
template <class T> T work_value(int64_t v) { return T(real_t<T>(v)); }
template <class T> int64_t work_size(const T& w) { return int64_t(std::real(w)); }

}  // namespace lapack
}  // namespace cuda
}  // namespace gofl
