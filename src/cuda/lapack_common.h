// Helpers shared by the LAPACK routine families (lapack_lu.cpp, lapack_qr.cpp, lapack_syev.cpp,
// lapack_geev.cpp, lapack_svd.cpp, lapack_gelsd.cpp): precision dispatch for the legacy cuSOLVER
// entry points (cuBLAS's is cublas_typed.h), pivot conversion, device scratch, the CPU library's
// workspace answers (work[0]) that LAPACK callers may read, and, for the eigenvalue, SVD and
// least-squares families, their workspace queries, input screening and info handling.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/table.h"
#include "cuda/cublas_typed.h"
#include "cuda/device_matrix.h"
#include "cuda/engine.h"

namespace gofl {
namespace cuda {
namespace lapack {

// ---- types ------------------------------------------------------------------------------------------
// The "conjugate transpose" of the precision: T for real (LAPACK's real routines take 'T'), C for complex.
template <class T> constexpr char ctrans() { return is_complex<T>::value ? 'C' : 'T'; }
template <class T> double modulus(const T& x) { return double(std::abs(x)); }

// Legacy cuSOLVER and cuBLAS entry points take 32-bit sizes: these must fit.
inline bool fits_int(int64_t v) { return v >= 0 && v <= int64_t(INT_MAX); }

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

// Sizes for the memory gate of the LU, Cholesky and QR families (their bytes() may not touch the
// device to ask cuSOLVER): the leading dimension a matrix needs, an r x c matrix's bytes, and a
// guess at a blocked factorization's workspace (panels of a few hundred columns).
inline int64_t max1(int64_t v) { return std::max<int64_t>(1, v); }
template <class T> uint64_t mat_bytes(int64_t r, int64_t c) {
  return uint64_t(sizeof(T)) * uint64_t(std::max<int64_t>(r, 0)) * uint64_t(std::max<int64_t>(c, 0));
}
template <class T> uint64_t panel_bytes(int64_t rows) {
  return uint64_t(sizeof(T)) * uint64_t(max1(rows)) * 512u + (4u << 20);
}

// A cuSOLVER call's device and host workspace (the 64-bit API's two sizes); at least 16 device
// bytes, so that the pool is never asked for 0. It must live until finish_compute(): the queued
// work may still be using it.
struct Workspace {
  DevMem dev;
  size_t dev_bytes = 0;
  std::vector<unsigned char> host;
  Workspace(Engine& e, size_t dbytes, size_t hbytes)
      : dev(e.alloc(std::max<size_t>(dbytes, 16))), dev_bytes(dbytes), host(hbytes) {}
  void* d() const { return dev.get(); }
  void* h() { return host.empty() ? nullptr : host.data(); }
};

// Our own cuSOLVER info words (one per solver call of a routine), zeroed on the stream, so that one
// call's info is not lost (nor a failure overwritten) when the next call reports into another.
// Read after finish_compute().
class Infos {
 public:
  Infos(Engine& e, int count) : e_(e), n_(count), mem_(e.alloc(sizeof(int) * size_t(count))) {
    check(cudaMemsetAsync(mem_.get(), 0, sizeof(int) * size_t(count), e.stream()), "cudaMemsetAsync(info)");
  }
  int* at(int i) const { return mem_.get<int>() + i; }
  // Info word i. A negative value names a wrong argument: a bug here (the arguments were checked),
  // so the call goes back to the CPU library; a positive one is the caller's to report.
  int read(int i, const char* where) const {
    int v = 0;
    e_.read_small(&v, at(i), sizeof v);
    if (v < 0) fail(GOFL_GPU_CUSOLVER_ERROR, where, v);
    return v;
  }
  // Every info word: any nonzero one sends the call to the CPU (the eigenvalue, SVD and
  // least-squares families, whose rules are below).
  void require_zero(const char* where) const {
    std::vector<int> h(static_cast<size_t>(n_));
    e_.read_small(h.data(), mem_.get(), size_t(n_) * sizeof(int));
    for (int v : h)
      if (v != 0) fail(GOFL_GPU_CUSOLVER_ERROR, where, v);
  }

 private:
  Engine& e_;
  int n_;
  DevMem mem_;
};

// Host scalars for alpha/beta and host results for reductions; set on every call because the handle
// is shared with the other routine families.
inline void host_pointer_mode(Engine& e) {
  check(cublasSetPointerMode(e.blas(), CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
}

// ---- pivots -----------------------------------------------------------------------------------------
// The caller's pivots (int32 or int64 by its integer width), 1-based, as cuSOLVER's int64.
inline std::vector<int64_t> read_pivots(const desc::IntArray& p, int64_t n) {
  std::vector<int64_t> v(size_t(std::max<int64_t>(n, 0)));
  if (p.ilp64) std::copy(p.as<const int64_t>(), p.as<const int64_t>() + n, v.begin());
  else std::copy(p.as<const int32_t>(), p.as<const int32_t>() + n, v.begin());
  return v;
}
inline void write_pivots(const desc::IntArray& p, const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) p.set(int64_t(i), v[i]);
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

// The CPU library's routine `name` ("ilaenv", "dgebal"), found next to call().real under the name the
// call's scheme gives it ("dgebal_", "dgebal_64_", "scipy_dgebal_64_", ...): the backend links no CPU
// LAPACK of its own, it calls the program's. Null when it cannot be found.
inline void* cpu_routine(const gofl_call& c, const char* name) {
  if (!c.real || c.sym >= GOFL_N_SYMS || c.op >= GOFL_N_OPS) return nullptr;
  std::string sym = gofl_syms[c.sym].name;
  const char* op = gofl_ops[c.op].name;
  const size_t at = sym.find(op);
  if (at == std::string::npos) return nullptr;
  sym.replace(at, std::strlen(op), name);
  Dl_info di{};
  if (!dladdr(c.real, &di) || !di.dli_fname) return nullptr;
  void* lib = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return nullptr;
  void* f = dlsym(lib, sym.c_str());
  dlclose(lib);  // NOLOAD took a reference to a library the program keeps loaded: f stays valid
  return f;
}

// The CPU library's ILAENV; `fallback` when it cannot be found.
inline int64_t cpu_ilaenv(const gofl_call& c, int64_t ispec, const char* name, int64_t n1, int64_t n2,
                          int64_t n3, int64_t n4, int64_t fallback) {
  void* f = cpu_routine(c, "ilaenv");
  if (!f) return fallback;
  const size_t name_len = std::strlen(name), opts_len = 1;
  if (gofl_syms[c.sym].ilp64) {
    using Fn = int64_t (*)(const int64_t*, const char*, const char*, const int64_t*, const int64_t*,
                           const int64_t*, const int64_t*, size_t, size_t);
    return reinterpret_cast<Fn>(f)(&ispec, name, " ", &n1, &n2, &n3, &n4, name_len, opts_len);
  }
  using Fn = int32_t (*)(const int32_t*, const char*, const char*, const int32_t*, const int32_t*,
                         const int32_t*, const int32_t*, size_t, size_t);
  const int32_t s = int32_t(ispec), i1 = int32_t(n1), i2 = int32_t(n2), i3 = int32_t(n3), i4 = int32_t(n4);
  return reinterpret_cast<Fn>(f)(&s, name, " ", &i1, &i2, &i3, &i4, name_len, opts_len);
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

// =====================================================================================================
// The eigenvalue, SVD and least-squares families (lapack_syev.cpp, lapack_geev.cpp, lapack_svd.cpp,
// lapack_gelsd.cpp): what they share (workspace queries, input screening, info handling).
//
// Rules every routine here follows:
// - supports() repeats reference LAPACK's argument checks, so INVALID_ARGS comes exactly where the
//   CPU library would call xerbla (checked against LAPACK 3.11 and the 3.12 in scipy-openblas);
//   workspace queries and quick returns (n <= 1, an empty matrix) stay on the CPU.
// - work[0] / rwork[0] / iwork[0] are what the CPU library's own workspace query answers; the query
//   runs before any GPU work and the values are written at copy-out.
// - LAPACK scales a matrix whose largest entry lies outside a safe range and has routine-specific
//   behaviour for NaN/Inf; cuSOLVER promises neither, so such inputs run on the CPU.
// - cuSOLVER's info > 0 (no convergence) counts come from a different algorithm than the CPU's:
//   the call falls back to the CPU, which reports its own info, instead of returning another number.
// - Arrays LAPACK documents as destroyed (A in syev/syevd with jobz='N', syevr, geev, gelsd, and
//   gesvd/gesdd unless a job is 'O') are left as the caller had them: their content is unspecified
//   (reference LAPACK leaves its tridiagonal / bidiagonal / Hessenberg reduction there) and copying
//   device scratch back would cost a matrix of traffic for nothing. Only the elements LAPACK
//   defines are written; ld gaps never are.
// =====================================================================================================

template <class T> constexpr bool cplx_v = is_complex<T>::value;

// ---- the CPU library's workspace query -----------------------------------------------------------
// call.real has the wrapper's exact prototype: every argument is a pointer except the hidden Fortran
// string lengths (kLen each) and, for CBLAS, values. The caller passes pointers to values of the
// symbol's integer width (I).
constexpr size_t kLen = 1;
template <class... Args> void call_cpu(const gofl_call& c, Args... args) {
  reinterpret_cast<void (*)(Args...)>(c.real)(args...);
}

// What LAPACK leaves in work[0] / rwork[0] / iwork[0], written at copy-out (a null pointer: not written).
template <class T> struct WorkOut {
  T work0{};
  real_t<T> rwork0{};
  int64_t iwork0 = 0;
  T* work = nullptr;
  real_t<T>* rwork = nullptr;
  desc::IntArray iwork;
  void write() const {
    if (work) work[0] = work0;
    if (rwork) rwork[0] = rwork0;
    if (iwork) iwork.set(0, iwork0);
  }
};

// A workspace query's answer (work[0]) for the call with descriptor d; a failed query leaves the call
// to the CPU library.
template <class D, class T> WorkOut<T> query_answer(const D& d, int64_t info, T w0) {
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "workspace query", int(info));
  WorkOut<T> q;
  q.work = d.work;
  q.work0 = w0;
  return q;
}
// The same with iwork[0] and, for complex T, rwork[0].
template <class D, class T> WorkOut<T> query_answer(const D& d, int64_t info, T w0, int64_t iw, real_t<T> rw0) {
  WorkOut<T> q = query_answer(d, info, w0);
  q.iwork = d.iwork;
  q.iwork0 = iw;
  if constexpr (cplx_v<T>) {
    q.rwork = d.rwork;
    q.rwork0 = rw0;
  }
  return q;
}

// ---- input screening ------------------------------------------------------------------------------
// LAPACK scales a matrix whose largest entry lies outside [lo, hi] (0 excluded) before its
// algorithm and unscales after; outside that range, and for NaN/Inf, the CPU runs the call.
struct Bounds {
  double lo, hi;
};

template <class T> double abs1(T v) {
  if constexpr (cplx_v<T>) return std::fabs(double(v.real())) + std::fabs(double(v.imag()));
  else return std::fabs(double(v));
}

// `count` contiguous device elements. asum is NaN/Inf exactly when an element is (or when finite
// values overflow the sum, which only sends a hopeless input to the CPU). amax picks the largest
// |re|+|im|, within a factor sqrt(2) of LAPACK's largest modulus: the margins below cover it.
// cuBLAS's reductions over `count` contiguous device elements, in pieces of at most 2^30: on an H200
// the dgels and dgelsd calls of 2.15e9 elements ended in a CUDA error that left the GPU unusable, and
// these reductions over the whole matrix are what they do and the dorgqr that passed does not (a
// suspicion, not yet confirmed there). The entry of the largest |re| + |im|, and the sum of them.
constexpr int64_t kReductionPiece = int64_t(1) << 30;
template <class T> T largest_entry(Engine& e, const T* dev, int64_t count) {
  T best{};
  for (int64_t at = 0; at < count; at += kReductionPiece) {
    const int64_t n = std::min(kReductionPiece, count - at);
    int64_t idx = 0;
    check(x_iamax<T>(e.blas(), n, cu(dev + at), 1, &idx), "cublasIamax");
    if (idx < 1 || idx > n) fail(GOFL_GPU_CUBLAS_ERROR, "cublasIamax");
    T v;
    e.read_small(&v, dev + at + (idx - 1), sizeof(T));
    if (at == 0 || abs1(v) > abs1(best) || std::isnan(abs1(v))) best = v;
  }
  return best;
}
template <class T> double sum_of_moduli(Engine& e, const T* dev, int64_t count) {
  double total = 0;
  for (int64_t at = 0; at < count; at += kReductionPiece) {
    real_t<T> part = 0;
    check(x_asum<T>(e.blas(), std::min(kReductionPiece, count - at), cu(dev + at), 1, &part), "cublasAsum");
    total += double(part);
  }
  return total;
}

// `count` contiguous device elements. asum is NaN/Inf exactly when an element is (or when finite
// values overflow the sum, which only sends a hopeless input to the CPU). amax picks the largest
// |re|+|im|, within a factor sqrt(2) of LAPACK's largest modulus: the margins below cover it.
template <class T> void screen(Engine& e, const T* dev, int64_t count, Bounds b, bool zero_ok) {
  if (count <= 0) return;
  if (!std::isfinite(sum_of_moduli(e, dev, count))) fail(GOFL_GPU_UNSUPPORTED, "non-finite input");
  const double a = abs1(largest_entry(e, dev, count));
  if (a > b.hi || (a == 0 ? !zero_ok : a < 2 * b.lo)) fail(GOFL_GPU_UNSUPPORTED, "input outside LAPACK's unscaled range");
}

// Only the uplo triangle of a symmetric/Hermitian matrix is the input (the other may hold anything):
// screen a packed copy of it.
template <class T> void screen_triangle(Engine& e, const T* dA, int64_t n, char uplo, Bounds b) {
  if (n > INT_MAX) fail(GOFL_GPU_UNSUPPORTED, "matrix too large for cublasXtrttp");
  DevMem packed = alloc_elems<T>(e, n * (n + 1) / 2);
  check(x_trttp<T>(e.blas(), fill_of(uplo), int(n), cu(dA), int(n), cu(packed.get<T>())), "cublasXtrttp");
  screen(e, packed.get<T>(), n * (n + 1) / 2, b, true);
}

// Device results read back for checking before anything reaches the caller. read_small, unlike
// download(), does not count as writing program memory, so a failed check still sends the call
// to the CPU instead of reporting a half-done copy-out. The caller's arrays are then written with
// download() from the device (or from these copies where the host had to change them).
template <class T> std::vector<T> fetch(Engine& e, const void* dev, int64_t count) {
  std::vector<T> h(static_cast<size_t>(std::max<int64_t>(count, 1)));
  if (count > 0) e.read_small(h.data(), dev, size_t(count) * sizeof(T));
  return h;
}

template <class T> void require_finite(const T* x, int64_t n, const char* where) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(abs1(x[i]))) fail(GOFL_GPU_CUSOLVER_ERROR, where);
}

// dgeev and zgeev scale when the largest entry lies outside [sqrt(safmin)/eps, its inverse].
template <class R> Bounds geev_bounds() {
  const double smlnum = std::sqrt(double(std::numeric_limits<R>::min())) / double(std::numeric_limits<R>::epsilon());
  return Bounds{smlnum, 1.0 / smlnum};
}

// ---- the SVD (lapack_svd.cpp; gelsd takes the SVD of its triangular factor) -------------------------
// ILAENV(6, ...): the row/column ratio beyond which LAPACK's SVD drivers start with a QR/LQ step.
inline int64_t ilaenv6(int64_t m, int64_t n) { return int64_t(float(std::min(m, n)) * 1.6f); }

// out (cols x rows) = a^H for a device rows x cols matrix with leading dimension rows.
template <class T> void adjoint(Engine& e, const T* a, int64_t rows, int64_t cols, T* out) {
  const T one(1), zero(0);  // beta = 0: B (= A, finite) only satisfies the interface
  const cublasOperation_t op = cplx_v<T> ? CUBLAS_OP_C : CUBLAS_OP_T;
  check(x_geam<T>(e.blas(), op, op, cols, rows, cu(&one), cu(a), rows, cu(&zero), cu(a), rows, cu(out), cols),
        "cublasXgeam");
}

// Descending, non-negative singular values, as LAPACK guarantees; anything else goes to the CPU.
template <class R> void require_singular_values(const R* s, int64_t k) {
  require_finite(s, k, "non-finite singular values");
  for (int64_t i = 0; i < k; ++i)
    if (s[i] < R(0) || (i > 0 && s[i] > s[i - 1])) fail(GOFL_GPU_CUSOLVER_ERROR, "singular values not descending");
}

// Xgesvd of the device rows x cols matrix `a` (rows >= cols, leading dimension rows; destroyed),
// jobs in {A, S, N}: U rows x (rows or cols), VT cols x cols, both packed.
template <class T>
void xgesvd(Engine& e, signed char ju, signed char jv, int64_t rows, int64_t cols, T* a, real_t<T>* s, T* u, T* vt,
            int* info, std::vector<std::unique_ptr<Workspace>>& keep) {
  using R = real_t<T>;
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXgesvd_bufferSize(e.solver(), e.params(), ju, jv, rows, cols, data_type<T>(), a, rows,
                                    data_type<R>(), s, data_type<T>(), u, rows, data_type<T>(), vt, cols,
                                    data_type<T>(), &dbytes, &hbytes),
        "cusolverDnXgesvd_bufferSize");
  keep.emplace_back(new Workspace(e, dbytes, hbytes));
  Workspace& ws = *keep.back();
  check(cusolverDnXgesvd(e.solver(), e.params(), ju, jv, rows, cols, data_type<T>(), a, rows, data_type<R>(), s,
                         data_type<T>(), u, rows, data_type<T>(), vt, cols, data_type<T>(), ws.d(), dbytes, ws.h(),
                         hbytes, info),
        "cusolverDnXgesvd");
}

}  // namespace lapack
}  // namespace cuda
}  // namespace gofl
