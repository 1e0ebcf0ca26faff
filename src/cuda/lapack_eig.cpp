// Eigenvalue and singular value routines on cuSOLVER with the CPU library's semantics:
// syevd/heevd, syev/heev, syevr/heevr, geev, and the SVD family gesvd, gesdd, gelsd. One file
// because they share the helpers below (workspace queries, input screening, info handling).
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
#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "cuda/engine.h"

namespace gofl {
namespace cuda {
namespace {

namespace ga = gofl::args;

template <class T> constexpr bool cplx_v = is_complex<T>::value;

// =====================================================================================================
// Shared helpers
// =====================================================================================================

// cuComplex / cuDoubleComplex share std::complex's layout; the cuBLAS entry points want their types.
template <class T> auto cu(T* p) {
  using B = std::remove_const_t<T>;
  using C = std::conditional_t<std::is_same_v<B, std::complex<float>>, cuComplex,
                               std::conditional_t<std::is_same_v<B, std::complex<double>>, cuDoubleComplex, B>>;
  if constexpr (std::is_const_v<T>) return reinterpret_cast<const C*>(p);
  else return reinterpret_cast<C*>(p);
}

template <class T> DevMem alloc_n(Engine& e, int64_t count) {
  return e.alloc(size_t(std::max<int64_t>(count, 1)) * sizeof(T));
}

// Host scalars for alpha/beta and host results for reductions; set on every call because the handle
// is shared with the other routine families.
void host_pointer_mode(Engine& e) {
  check(cublasSetPointerMode(e.blas(), CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
}

// An integer array element (iwork, isuppz) in the caller's width.
void put_int(const CallArgs& c, int pos, int64_t idx, int64_t v) {
  if (c.ilp64()) c.ptr<int64_t>(pos)[idx] = v;
  else c.ptr<int32_t>(pos)[idx] = int32_t(v);
}

// ---- the CPU library's workspace query -----------------------------------------------------------
// call().real has the wrapper's exact prototype; every argument is a pointer except the hidden
// Fortran string lengths, so passing each argv pointer through keeps the ABI.
constexpr size_t kLen = 1;
inline void* arg(const CallArgs& c, int pos) { return c.ptr<void>(pos); }
template <class... Args> void call_cpu(const CallArgs& c, Args... args) {
  reinterpret_cast<void (*)(Args...)>(c.call().real)(args...);
}

// What LAPACK leaves in work[0] / rwork[0] / iwork[0], written at copy-out.
template <class T> struct WorkOut {
  T work0{};
  real_t<T> rwork0{};
  int64_t iwork0 = 0;
  int work_pos = -1, rwork_pos = -1, iwork_pos = -1;
  void write(const CallArgs& c) const {
    c.ptr<T>(work_pos)[0] = work0;
    if (rwork_pos >= 0) c.ptr<real_t<T>>(rwork_pos)[0] = rwork0;
    if (iwork_pos >= 0) put_int(c, iwork_pos, 0, iwork0);
  }
};

// A workspace query's answer (work[0]) for the routine whose argument positions are P; a failed
// query leaves the call to the CPU library.
template <class P, class T> WorkOut<T> query_answer(int64_t info, T w0) {
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "workspace query", int(info));
  WorkOut<T> q;
  q.work_pos = P::work;
  q.work0 = w0;
  return q;
}
// The same with iwork[0] and, for complex T, rwork[0].
template <class P, class T> WorkOut<T> query_answer(int64_t info, T w0, int64_t iw, real_t<T> rw0) {
  WorkOut<T> q = query_answer<P>(info, w0);
  q.iwork_pos = P::iwork;
  q.iwork0 = iw;
  if constexpr (cplx_v<T>) {
    q.rwork_pos = P::rwork;
    q.rwork0 = rw0;
  }
  return q;
}

// ---- device scratch ----------------------------------------------------------------------------------
// A cuSOLVER call's device and host workspace; lives until the end of the routine because the
// stream may still be using it.
struct Work {
  DevMem dev;
  std::vector<unsigned char> host;
  Work(Engine& e, size_t dbytes, size_t hbytes) : dev(e.alloc(std::max<size_t>(dbytes, 16))), host(hbytes) {}
  void* d() const { return dev.get(); }
  void* h() { return host.empty() ? nullptr : host.data(); }
};

// One device info per cuSOLVER call (a later call must not overwrite an earlier failure).
class Infos {
 public:
  Infos(Engine& e, int count) : e_(e), n_(count), mem_(e.alloc(size_t(count) * sizeof(int))) {
    check(cudaMemsetAsync(mem_.get(), 0, size_t(count) * sizeof(int), e.stream()), "cudaMemsetAsync");
  }
  int* at(int i) const { return mem_.get<int>() + i; }
  // After finish_compute(): any nonzero info sends the call to the CPU (see the file comment).
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

// ---- typed cuBLAS entry points --------------------------------------------------------------------
template <class T> cublasStatus_t blas_asum(cublasHandle_t h, int64_t n, const T* x, real_t<T>* r) {
  if constexpr (std::is_same_v<T, float>) return cublasSasum_64(h, n, x, 1, r);
  else if constexpr (std::is_same_v<T, double>) return cublasDasum_64(h, n, x, 1, r);
  else if constexpr (std::is_same_v<T, std::complex<float>>) return cublasScasum_64(h, n, cu(x), 1, r);
  else return cublasDzasum_64(h, n, cu(x), 1, r);
}
template <class T> cublasStatus_t blas_iamax(cublasHandle_t h, int64_t n, const T* x, int64_t* r) {
  if constexpr (std::is_same_v<T, float>) return cublasIsamax_64(h, n, x, 1, r);
  else if constexpr (std::is_same_v<T, double>) return cublasIdamax_64(h, n, x, 1, r);
  else if constexpr (std::is_same_v<T, std::complex<float>>) return cublasIcamax_64(h, n, cu(x), 1, r);
  else return cublasIzamax_64(h, n, cu(x), 1, r);
}
template <class R> cublasStatus_t blas_copy(cublasHandle_t h, int64_t n, const R* x, int64_t incx, R* y) {
  if constexpr (std::is_same_v<R, float>) return cublasScopy_64(h, n, x, incx, y, 1);
  else return cublasDcopy_64(h, n, x, incx, y, 1);
}
template <class R> cublasStatus_t blas_scal(cublasHandle_t h, int64_t n, const R* alpha, R* x, int64_t incx) {
  if constexpr (std::is_same_v<R, float>) return cublasSscal_64(h, n, alpha, x, incx);
  else return cublasDscal_64(h, n, alpha, x, incx);
}
// Full storage -> packed storage of one triangle.
template <class T> cublasStatus_t blas_trttp(cublasHandle_t h, cublasFillMode_t uplo, int n, const T* a, int lda, T* ap) {
  if constexpr (std::is_same_v<T, float>) return cublasStrttp(h, uplo, n, a, lda, ap);
  else if constexpr (std::is_same_v<T, double>) return cublasDtrttp(h, uplo, n, a, lda, ap);
  else if constexpr (std::is_same_v<T, std::complex<float>>) return cublasCtrttp(h, uplo, n, cu(a), lda, cu(ap));
  else return cublasZtrttp(h, uplo, n, cu(a), lda, cu(ap));
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
template <class T> void screen(Engine& e, const T* dev, int64_t count, Bounds b, bool zero_ok) {
  if (count <= 0) return;
  real_t<T> sum = 0;
  check(blas_asum(e.blas(), count, dev, &sum), "cublasAsum");
  if (!std::isfinite(double(sum))) fail(GOFL_GPU_UNSUPPORTED, "non-finite input");
  int64_t idx = 0;
  check(blas_iamax(e.blas(), count, dev, &idx), "cublasIamax");
  if (idx < 1 || idx > count) fail(GOFL_GPU_CUBLAS_ERROR, "cublasIamax");
  T v;
  e.read_small(&v, dev + (idx - 1), sizeof(T));
  const double a = abs1(v);
  if (a > b.hi || (a == 0 ? !zero_ok : a < 2 * b.lo)) fail(GOFL_GPU_UNSUPPORTED, "input outside LAPACK's unscaled range");
}

// Only the uplo triangle of a symmetric/Hermitian matrix is the input (the other may hold anything):
// screen a packed copy of it.
template <class T> void screen_triangle(Engine& e, const T* dA, int64_t n, char uplo, Bounds b) {
  if (n > INT_MAX) fail(GOFL_GPU_UNSUPPORTED, "matrix too large for cublasXtrttp");
  DevMem packed = alloc_n<T>(e, n * (n + 1) / 2);
  check(blas_trttp(e.blas(), fill_of(uplo), int(n), dA, int(n), packed.get<T>()), "cublasXtrttp");
  screen(e, packed.get<T>(), n * (n + 1) / 2, b, true);
}

// LAPACK's zhetrd uses only the real part of the diagonal; make the device copy agree.
template <class T> void zero_diag_imag(Engine& e, T* dA, int64_t n) {
  if constexpr (cplx_v<T>) {
    using R = real_t<T>;
    const R zero = 0;
    check(blas_scal<R>(e.blas(), n, &zero, reinterpret_cast<R*>(dA) + 1, 2 * (n + 1)), "cublasScal");
  }
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

// =====================================================================================================
// syevd / heevd, syev / heev
// =====================================================================================================
template <class T> using SyevdPos = std::conditional_t<cplx_v<T>, ga::heevd_c, ga::syevd_r>;
template <class T> using SyevPos = std::conditional_t<cplx_v<T>, ga::heev_c, ga::syev_r>;

// Reference LAPACK's argument checks: 0 or the (negative) info xerbla would report.
int check_syevd(bool cplx, char jobz, char uplo, int64_t n, int64_t lda, int64_t lwork, int64_t lrwork,
                int64_t liwork) {
  const bool wantz = jobz == 'V';
  if (!wantz && jobz != 'N') return -1;
  if (uplo != 'U' && uplo != 'L') return -2;
  if (n < 0) return -3;
  if (lda < std::max<int64_t>(1, n)) return -5;
  int64_t lwmin = 1, lrwmin = 1, liwmin = 1;
  if (n > 1) {
    if (cplx) {
      lwmin = wantz ? 2 * n + n * n : n + 1;
      lrwmin = wantz ? 1 + 5 * n + 2 * n * n : n;
      liwmin = wantz ? 3 + 5 * n : 1;
    } else {
      lwmin = wantz ? 1 + 6 * n + 2 * n * n : 2 * n + 1;
      liwmin = wantz ? 3 + 5 * n : 1;
    }
  }
  const bool query = lwork == -1 || liwork == -1 || (cplx && lrwork == -1);
  if (query) return 0;
  if (lwork < lwmin) return -8;
  if (cplx) {
    if (lrwork < lrwmin) return -10;
    if (liwork < liwmin) return -12;
  } else if (liwork < liwmin) {
    return -10;
  }
  return 0;
}

int check_syev(bool cplx, char jobz, char uplo, int64_t n, int64_t lda, int64_t lwork) {
  if (jobz != 'V' && jobz != 'N') return -1;
  if (uplo != 'U' && uplo != 'L') return -2;
  if (n < 0) return -3;
  if (lda < std::max<int64_t>(1, n)) return -5;
  if (lwork != -1 && lwork < std::max<int64_t>(1, cplx ? 2 * n - 1 : 3 * n - 1)) return -8;
  return 0;
}

template <class T> int supports_syevd(const CallArgs& c) {
  using P = SyevdPos<T>;
  const int64_t n = c.i(P::n), lwork = c.i(P::lwork), liwork = c.i(P::liwork);
  int64_t lrwork = 0;
  if constexpr (cplx_v<T>) lrwork = c.i(P::lrwork);
  if (check_syevd(cplx_v<T>, c.ch(P::jobz), c.ch(P::uplo), n, c.i(P::lda), lwork, lrwork, liwork))
    return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || liwork == -1 || lrwork == -1) return GOFL_GPU_UNSUPPORTED;  // the CPU answers queries
  if (n <= 1) return GOFL_GPU_UNSUPPORTED;  // LAPACK's quick returns (W(1) = A(1,1))
  return GOFL_GPU_OK;
}

template <class T> int supports_syev(const CallArgs& c) {
  using P = SyevPos<T>;
  const int64_t n = c.i(P::n), lwork = c.i(P::lwork);
  if (check_syev(cplx_v<T>, c.ch(P::jobz), c.ch(P::uplo), n, c.i(P::lda), lwork)) return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || n <= 1) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

// Operands, the screening copy of the triangle and cuSOLVER's syevd workspace (LAPACK's size as
// the estimate).
template <class T> uint64_t sym_eig_bytes(int64_t n) {
  const uint64_t nn = uint64_t(std::max<int64_t>(n, 1));
  return sizeof(T) * (nn * nn + nn * (nn + 1) / 2 + 2 * nn * nn + 64 * nn) + sizeof(real_t<T>) * nn;
}
template <class T> uint64_t bytes_syevd(const CallArgs& c) { return sym_eig_bytes<T>(c.i(SyevdPos<T>::n)); }
template <class T> uint64_t bytes_syev(const CallArgs& c) { return sym_eig_bytes<T>(c.i(SyevPos<T>::n)); }

// The CPU library's workspace answers (work[0], rwork[0], iwork[0]), in the caller's integer width.
template <class T, class I> WorkOut<T> query_syevd_as(const CallArgs& c) {
  using P = SyevdPos<T>;
  using R = real_t<T>;
  I m1 = -1, info = 0, iw = 0;
  T w0{};
  R rw0{};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, arg(c, P::jobz), arg(c, P::uplo), arg(c, P::n), arg(c, P::a), arg(c, P::lda), arg(c, P::w), &w0,
             &m1, &iw, &m1, &info, kLen, kLen);
  } else {
    call_cpu(c, arg(c, P::jobz), arg(c, P::uplo), arg(c, P::n), arg(c, P::a), arg(c, P::lda), arg(c, P::w), &w0,
             &m1, &rw0, &m1, &iw, &m1, &info, kLen, kLen);
  }
  return query_answer<P>(int64_t(info), w0, int64_t(iw), rw0);
}

template <class T, class I> WorkOut<T> query_syev_as(const CallArgs& c) {
  using P = SyevPos<T>;
  using R = real_t<T>;
  I m1 = -1, info = 0;
  T w0{};
  R rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, arg(c, P::jobz), arg(c, P::uplo), arg(c, P::n), arg(c, P::a), arg(c, P::lda), arg(c, P::w), &w0,
             &m1, &info, kLen, kLen);
  } else {
    call_cpu(c, arg(c, P::jobz), arg(c, P::uplo), arg(c, P::n), arg(c, P::a), arg(c, P::lda), arg(c, P::w), &w0,
             &m1, rw0, &info, kLen, kLen);
  }
  return query_answer<P>(int64_t(info), w0);
}

// LAPACK scales when the largest entry of the triangle lies outside [sqrt(smlnum), sqrt(bignum)].
template <class R> Bounds syev_bounds() {
  const double smlnum = double(std::numeric_limits<R>::min()) / double(std::numeric_limits<R>::epsilon());
  return Bounds{std::sqrt(smlnum), std::sqrt(1.0 / smlnum)};
}
// syevr/heevr cap the upper end further at 1/sqrt(sqrt(safmin)).
template <class R> Bounds syevr_bounds() {
  Bounds b = syev_bounds<R>();
  b.hi = std::min(b.hi, 1.0 / std::sqrt(std::sqrt(double(std::numeric_limits<R>::min()))));
  return b;
}

// Common to syevd/heevd and syev/heev (LAPACK's QR-iteration syev and divide-and-conquer syevd
// return the same eigenvalues and eigenvectors to working accuracy; the GPU uses Xsyevd for both).
// jobz='N': A is left as the caller had it (LAPACK leaves dsytrd's reduction in the uplo triangle).
template <class T>
void run_sym_eig(Engine& e, const CallArgs& c, int jobz_pos, int uplo_pos, int n_pos, int a_pos, int lda_pos,
                 int w_pos, int info_pos, const WorkOut<T>& q) {
  using R = real_t<T>;
  const bool wantz = c.ch(jobz_pos) == 'V';
  const char uplo = c.ch(uplo_pos);
  const int64_t n = c.i(n_pos), lda = c.i(lda_pos);
  T* a = c.ptr<T>(a_pos);

  DevMem dA = alloc_n<T>(e, n * n), dW = alloc_n<R>(e, n);
  e.upload(dA.get(), a, n, n, lda, sizeof(T));
  e.begin_compute();
  host_pointer_mode(e);
  screen_triangle(e, dA.get<T>(), n, uplo, syev_bounds<R>());
  zero_diag_imag(e, dA.get<T>(), n);

  Infos infos(e, 1);
  const cusolverEigMode_t mode = wantz ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXsyevd_bufferSize(e.solver(), e.params(), mode, fill_of(uplo), n, data_type<T>(), dA.get(), n,
                                    data_type<R>(), dW.get(), data_type<T>(), &dbytes, &hbytes),
        "cusolverDnXsyevd_bufferSize");
  Work ws(e, dbytes, hbytes);
  check(cusolverDnXsyevd(e.solver(), e.params(), mode, fill_of(uplo), n, data_type<T>(), dA.get(), n,
                         data_type<R>(), dW.get(), data_type<T>(), ws.d(), dbytes, ws.h(), hbytes, infos.at(0)),
        "cusolverDnXsyevd");
  e.finish_compute();
  infos.require_zero("cusolverDnXsyevd info");

  const std::vector<R> w = fetch<R>(e, dW.get(), n);
  require_finite(w.data(), n, "non-finite eigenvalues");

  // Copy-out: everything is validated; from here on only the caller's outputs are written.
  if (wantz) e.download(a, dA.get(), n, n, lda, sizeof(T));
  e.download(c.ptr<R>(w_pos), dW.get(), n, 1, n, sizeof(R));
  q.write(c);
  c.set_i(info_pos, 0);
}

template <class T> void run_syevd(Engine& e, const CallArgs& c) {
  using P = SyevdPos<T>;
  const WorkOut<T> q = c.ilp64() ? query_syevd_as<T, int64_t>(c) : query_syevd_as<T, int32_t>(c);
  run_sym_eig<T>(e, c, P::jobz, P::uplo, P::n, P::a, P::lda, P::w, P::info, q);
}

template <class T> void run_syev(Engine& e, const CallArgs& c) {
  using P = SyevPos<T>;
  const WorkOut<T> q = c.ilp64() ? query_syev_as<T, int64_t>(c) : query_syev_as<T, int32_t>(c);
  run_sym_eig<T>(e, c, P::jobz, P::uplo, P::n, P::a, P::lda, P::w, P::info, q);
}

// =====================================================================================================
// syevr / heevr: all eigenvalues (range 'A'), those in (vl, vu] ('V') or the il-th to iu-th ('I').
// Range 'A' runs Xsyevd, 'V' and 'I' run Xsyevdx (eigenvectors in the first m columns of A).
// abstol is ignored: cuSOLVER has no tolerance parameter; LAPACK uses it only to steer its
// bisection/inverse-iteration path, and both deliver eigenvalues to working accuracy.
// isuppz: LAPACK sets it only where dstemr runs (jobz='V' with range 'A', or 'I' with il=1, iu=n), as
// the support of the tridiagonal eigenvectors; cuSOLVER gives none, so it is computed from Z as
// the documented "first and last nonzero row" of each eigenvector, in those same cases only.
// A is left as the caller had it (LAPACK destroys its uplo triangle).
// =====================================================================================================
template <class T> using SyevrPos = std::conditional_t<cplx_v<T>, ga::heevr_c, ga::syevr_r>;

template <class R>
int check_syevr(bool cplx, char jobz, char range, char uplo, int64_t n, int64_t lda, R vl, R vu, int64_t il,
                int64_t iu, int64_t ldz, int64_t lwork, int64_t lrwork, int64_t liwork) {
  const bool wantz = jobz == 'V';
  if (!wantz && jobz != 'N') return -1;
  if (range != 'A' && range != 'V' && range != 'I') return -2;
  if (uplo != 'U' && uplo != 'L') return -3;
  if (n < 0) return -4;
  if (lda < std::max<int64_t>(1, n)) return -6;
  if (range == 'V') {
    if (n > 0 && vu <= vl) return -8;
  } else if (range == 'I') {
    if (il < 1 || il > std::max<int64_t>(1, n)) return -9;
    if (iu < std::min(n, il) || iu > n) return -10;
  }
  if (ldz < 1 || (wantz && ldz < n)) return -15;
  const bool query = lwork == -1 || liwork == -1 || (cplx && lrwork == -1);
  if (query) return 0;
  // n = 1 needs 1 since LAPACK 3.12 (26 / 24 / 10 before); n <= 1 runs on the CPU either way.
  const int64_t lwmin = n <= 1 ? 1 : (cplx ? 2 * n : 26 * n);
  const int64_t lrwmin = n <= 1 ? 1 : 24 * n, liwmin = n <= 1 ? 1 : 10 * n;
  if (lwork < lwmin) return -18;
  if (cplx) {
    if (lrwork < lrwmin) return -20;
    if (liwork < liwmin) return -22;
  } else if (liwork < liwmin) {
    return -20;
  }
  return 0;
}

template <class T> int supports_syevr(const CallArgs& c) {
  using P = SyevrPos<T>;
  using R = real_t<T>;
  const int64_t n = c.i(P::n), lwork = c.i(P::lwork), liwork = c.i(P::liwork);
  int64_t lrwork = 0;
  if constexpr (cplx_v<T>) lrwork = c.i(P::lrwork);
  const char range = c.ch(P::range);
  // vl/vu and il/iu are only read for their range (LAPACK never touches the others).
  const R vl = range == 'V' ? c.scalar<R>(P::vl) : R(0), vu = range == 'V' ? c.scalar<R>(P::vu) : R(0);
  const int64_t il = range == 'I' ? c.i(P::il) : 0, iu = range == 'I' ? c.i(P::iu) : 0;
  if (check_syevr<R>(cplx_v<T>, c.ch(P::jobz), range, c.ch(P::uplo), n, c.i(P::lda), vl, vu, il, iu, c.i(P::ldz),
                     lwork, lrwork, liwork))
    return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || liwork == -1 || lrwork == -1) return GOFL_GPU_UNSUPPORTED;
  if (n <= 1) return GOFL_GPU_UNSUPPORTED;
  // NaN bounds make LAPACK's interval tests all false; leave that corner to the CPU.
  if (range == 'V' && !(std::isfinite(double(vl)) && std::isfinite(double(vu)))) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t bytes_syevr(const CallArgs& c) { return sym_eig_bytes<T>(c.i(SyevrPos<T>::n)); }

template <class T, class I> WorkOut<T> query_syevr_as(const CallArgs& c) {
  using P = SyevrPos<T>;
  using R = real_t<T>;
  I m1 = -1, info = 0, iw = 0, m = 0, isuppz[2] = {0, 0};
  T w0{};
  R rw0{};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, arg(c, P::jobz), arg(c, P::range), arg(c, P::uplo), arg(c, P::n), arg(c, P::a), arg(c, P::lda),
             arg(c, P::vl), arg(c, P::vu), arg(c, P::il), arg(c, P::iu), arg(c, P::abstol), &m, arg(c, P::w),
             arg(c, P::z), arg(c, P::ldz), isuppz, &w0, &m1, &iw, &m1, &info, kLen, kLen, kLen);
  } else {
    call_cpu(c, arg(c, P::jobz), arg(c, P::range), arg(c, P::uplo), arg(c, P::n), arg(c, P::a), arg(c, P::lda),
             arg(c, P::vl), arg(c, P::vu), arg(c, P::il), arg(c, P::iu), arg(c, P::abstol), &m, arg(c, P::w),
             arg(c, P::z), arg(c, P::ldz), isuppz, &w0, &m1, &rw0, &m1, &iw, &m1, &info, kLen, kLen, kLen);
  }
  return query_answer<P>(int64_t(info), w0, int64_t(iw), rw0);
}

// First and last nonzero row (1-based) of each of the m columns of z.
template <class T>
void write_isuppz(const CallArgs& c, int pos, const T* z, int64_t ldz, int64_t n, int64_t m) {
  for (int64_t j = 0; j < m; ++j) {
    const T* col = z + j * ldz;
    int64_t first = 0, last = n - 1;
    while (first < n && col[first] == T(0)) ++first;
    while (last > first && col[last] == T(0)) --last;
    if (first == n) first = last = -1;  // a zero column cannot be an eigenvector; say "empty"
    put_int(c, pos, 2 * j, first + 1);
    put_int(c, pos, 2 * j + 1, last + 1);
  }
}

template <class T> void run_syevr(Engine& e, const CallArgs& c) {
  using P = SyevrPos<T>;
  using R = real_t<T>;
  const WorkOut<T> q = c.ilp64() ? query_syevr_as<T, int64_t>(c) : query_syevr_as<T, int32_t>(c);
  const bool wantz = c.ch(P::jobz) == 'V';
  const char range = c.ch(P::range), uplo = c.ch(P::uplo);
  const int64_t n = c.i(P::n), lda = c.i(P::lda), ldz = c.i(P::ldz);
  R vl = range == 'V' ? c.scalar<R>(P::vl) : R(0), vu = range == 'V' ? c.scalar<R>(P::vu) : R(0);
  const int64_t il = range == 'I' ? c.i(P::il) : 1, iu = range == 'I' ? c.i(P::iu) : n;

  DevMem dA = alloc_n<T>(e, n * n), dW = alloc_n<R>(e, n);
  e.upload(dA.get(), c.ptr<T>(P::a), n, n, lda, sizeof(T));
  e.begin_compute();
  host_pointer_mode(e);
  screen_triangle(e, dA.get<T>(), n, uplo, syevr_bounds<R>());
  zero_diag_imag(e, dA.get<T>(), n);

  Infos infos(e, 1);
  const cusolverEigMode_t mode = wantz ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  int64_t meig = n;
  size_t dbytes = 0, hbytes = 0;
  std::unique_ptr<Work> ws;
  if (range == 'A') {
    check(cusolverDnXsyevd_bufferSize(e.solver(), e.params(), mode, fill_of(uplo), n, data_type<T>(), dA.get(), n,
                                      data_type<R>(), dW.get(), data_type<T>(), &dbytes, &hbytes),
          "cusolverDnXsyevd_bufferSize");
    ws.reset(new Work(e, dbytes, hbytes));
    check(cusolverDnXsyevd(e.solver(), e.params(), mode, fill_of(uplo), n, data_type<T>(), dA.get(), n,
                           data_type<R>(), dW.get(), data_type<T>(), ws->d(), dbytes, ws->h(), hbytes, infos.at(0)),
          "cusolverDnXsyevd");
  } else {
    const cusolverEigRange_t rg = range == 'V' ? CUSOLVER_EIG_RANGE_V : CUSOLVER_EIG_RANGE_I;
    int64_t meig_size = 0;
    check(cusolverDnXsyevdx_bufferSize(e.solver(), e.params(), mode, rg, fill_of(uplo), n, data_type<T>(), dA.get(),
                                       n, &vl, &vu, il, iu, &meig_size, data_type<R>(), dW.get(), data_type<T>(),
                                       &dbytes, &hbytes),
          "cusolverDnXsyevdx_bufferSize");
    ws.reset(new Work(e, dbytes, hbytes));
    check(cusolverDnXsyevdx(e.solver(), e.params(), mode, rg, fill_of(uplo), n, data_type<T>(), dA.get(), n, &vl,
                            &vu, il, iu, &meig, data_type<R>(), dW.get(), data_type<T>(), ws->d(), dbytes, ws->h(),
                            hbytes, infos.at(0)),
          "cusolverDnXsyevdx");
  }
  e.finish_compute();
  infos.require_zero(range == 'A' ? "cusolverDnXsyevd info" : "cusolverDnXsyevdx info");
  if (meig < 0 || meig > n || (range == 'I' && meig != iu - il + 1))
    fail(GOFL_GPU_CUSOLVER_ERROR, "cusolverDnXsyevdx meig", int(meig));

  const std::vector<R> w = fetch<R>(e, dW.get(), meig);
  require_finite(w.data(), meig, "non-finite eigenvalues");
  for (int64_t j = 1; j < meig; ++j)
    if (w[size_t(j)] < w[size_t(j - 1)]) fail(GOFL_GPU_CUSOLVER_ERROR, "eigenvalues not ascending");

  // Copy-out.
  if (wantz && meig > 0) {
    T* z = c.ptr<T>(P::z);
    e.download(z, dA.get(), n, meig, ldz, sizeof(T));
    if (range == 'A' || (range == 'I' && il == 1 && iu == n)) write_isuppz(c, P::isuppz, z, ldz, n, meig);
  }
  e.download(c.ptr<R>(P::w), dW.get(), meig, 1, meig, sizeof(R));
  c.set_i(P::m, meig);
  q.write(c);
  c.set_i(P::info, 0);
}

// =====================================================================================================
// geev: Xgeev. Left eigenvectors (jobvl='V') are UNSUPPORTED: cuSOLVER's Xgeev computes right
// eigenvectors only (jobvl must be CUSOLVER_EIG_MODE_NOVECTOR), and running it again on A^H would
// pair the two sets by matching eigenvalues, which is ambiguous for clustered ones.
// Real input: W comes as n complex values (the data-type combination NVIDIA's Xgeev sample uses:
// real A and VR, complex W; the computation stays real), split on the device into LAPACK's wr/wi;
// VR in LAPACK's packed real form (a complex pair's vector as consecutive columns re, im, the
// eigenvalue with positive imaginary part first). Both are checked on the host, a pair stored the
// other way round is flipped, and anything else falls back to the CPU. The eigenvectors are then
// normalised exactly as LAPACK does (Euclidean norm 1, largest component real), whatever
// normalisation cuSOLVER applied. Eigenvalue order is the order of the computed Schur form, which
// LAPACK does not specify either.
// A is left as the caller had it (LAPACK overwrites it with its Schur form / Hessenberg reduction).
// =====================================================================================================
template <class T> using GeevPos = std::conditional_t<cplx_v<T>, ga::geev_c, ga::geev_r>;

int check_geev(bool cplx, char jobvl, char jobvr, int64_t n, int64_t lda, int64_t ldvl, int64_t ldvr,
               int64_t lwork) {
  const bool wantvl = jobvl == 'V', wantvr = jobvr == 'V';
  if (!wantvl && jobvl != 'N') return -1;
  if (!wantvr && jobvr != 'N') return -2;
  if (n < 0) return -3;
  if (lda < std::max<int64_t>(1, n)) return -5;
  if (ldvl < 1 || (wantvl && ldvl < n)) return cplx ? -8 : -9;
  if (ldvr < 1 || (wantvr && ldvr < n)) return cplx ? -10 : -11;
  int64_t minwrk = 1;
  if (n > 0) minwrk = cplx ? 2 * n : ((wantvl || wantvr) ? 4 * n : 3 * n);
  if (lwork != -1 && lwork < minwrk) return cplx ? -12 : -13;
  return 0;
}

template <class T> int supports_geev(const CallArgs& c) {
  using P = GeevPos<T>;
  const int64_t n = c.i(P::n), lwork = c.i(P::lwork);
  const char jobvl = c.ch(P::jobvl);
  if (check_geev(cplx_v<T>, jobvl, c.ch(P::jobvr), n, c.i(P::lda), c.i(P::ldvl), c.i(P::ldvr), lwork))
    return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || n <= 1) return GOFL_GPU_UNSUPPORTED;
  if (jobvl == 'V') return GOFL_GPU_UNSUPPORTED;  // Xgeev has no left eigenvectors (see above)
  return GOFL_GPU_OK;
}

template <class T> uint64_t bytes_geev(const CallArgs& c) {
  const uint64_t n = uint64_t(std::max<int64_t>(c.i(GeevPos<T>::n), 1));
  return sizeof(T) * (4 * n * n + 64 * n);  // A, VR, Xgeev's workspace estimate, W
}

template <class T, class I> WorkOut<T> query_geev_as(const CallArgs& c) {
  using P = GeevPos<T>;
  using R = real_t<T>;
  I m1 = -1, info = 0;
  T w0{};
  R rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, arg(c, P::jobvl), arg(c, P::jobvr), arg(c, P::n), arg(c, P::a), arg(c, P::lda), arg(c, P::wr),
             arg(c, P::wi), arg(c, P::vl), arg(c, P::ldvl), arg(c, P::vr), arg(c, P::ldvr), &w0, &m1, &info, kLen,
             kLen);
  } else {
    call_cpu(c, arg(c, P::jobvl), arg(c, P::jobvr), arg(c, P::n), arg(c, P::a), arg(c, P::lda), arg(c, P::w),
             arg(c, P::vl), arg(c, P::ldvl), arg(c, P::vr), arg(c, P::ldvr), &w0, &m1, rw0, &info, kLen, kLen);
  }
  return query_answer<P>(int64_t(info), w0);
}

// Euclidean norm without overflow for vectors of any scale (LAPACK's dnrm2 guarantee).
template <class T> double norm2(const T* x, int64_t n) {
  double scale = 0;
  for (int64_t i = 0; i < n; ++i) scale = std::max(scale, double(std::abs(x[i])));
  if (scale == 0 || !std::isfinite(scale)) return scale;
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = double(std::abs(x[i])) / scale;
    s += v * v;
  }
  return scale * std::sqrt(s);
}

// dlartg (LAPACK >= 3.10): r = sign(f) * hypot(f, g), c = f / r, s = g / r.
template <class R> void lartg(R f, R g, R& cs, R& sn) {
  if (g == R(0)) {
    cs = 1;
    sn = 0;
  } else if (f == R(0)) {
    cs = 0;
    sn = g > 0 ? R(1) : R(-1);
  } else {
    const R d = std::hypot(f, g), r = f > 0 ? d : -d;
    cs = f / r;
    sn = g / r;
  }
}

// dgeev's normalisation of packed real eigenvectors (vr: n x n, leading dimension n).
template <class R> void normalise_real_vectors(R* vr, const R* wi, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    R* x = vr + i * n;
    if (wi[i] == R(0)) {
      const double nrm = norm2(x, n);
      if (!(nrm > 0) || !std::isfinite(nrm)) fail(GOFL_GPU_CUSOLVER_ERROR, "degenerate eigenvector");
      const R scl = R(1.0 / nrm);
      for (int64_t k = 0; k < n; ++k) x[k] *= scl;
    } else if (wi[i] > R(0)) {
      R* y = x + n;
      const double nrm = std::hypot(norm2(x, n), norm2(y, n));
      if (!(nrm > 0) || !std::isfinite(nrm)) fail(GOFL_GPU_CUSOLVER_ERROR, "degenerate eigenvector");
      const R scl = R(1.0 / nrm);
      for (int64_t k = 0; k < n; ++k) {
        x[k] *= scl;
        y[k] *= scl;
      }
      int64_t kmax = 0;
      R best = -1;
      for (int64_t k = 0; k < n; ++k) {
        const R v = x[k] * x[k] + y[k] * y[k];
        if (v > best) {
          best = v;
          kmax = k;
        }
      }
      R cs, sn;
      lartg(x[kmax], y[kmax], cs, sn);
      for (int64_t k = 0; k < n; ++k) {  // drot: rotate the pair so component kmax becomes real
        const R xr = cs * x[k] + sn * y[k], yr = cs * y[k] - sn * x[k];
        x[k] = xr;
        y[k] = yr;
      }
      y[kmax] = 0;
    }
  }
}

// zgeev's normalisation: norm 1, then the largest component (by |re|^2 + |im|^2) made real.
template <class T> void normalise_complex_vectors(T* vr, int64_t n) {
  using R = real_t<T>;
  for (int64_t i = 0; i < n; ++i) {
    T* x = vr + i * n;
    const double nrm = norm2(x, n);
    if (!(nrm > 0) || !std::isfinite(nrm)) fail(GOFL_GPU_CUSOLVER_ERROR, "degenerate eigenvector");
    const R scl = R(1.0 / nrm);
    for (int64_t k = 0; k < n; ++k) x[k] *= scl;
    int64_t kmax = 0;
    R best = -1;
    for (int64_t k = 0; k < n; ++k) {
      const R v = x[k].real() * x[k].real() + x[k].imag() * x[k].imag();
      if (v > best) {
        best = v;
        kmax = k;
      }
    }
    const T tmp = std::conj(x[kmax]) / std::sqrt(best);
    for (int64_t k = 0; k < n; ++k) x[k] *= tmp;
    x[kmax] = T(x[kmax].real(), R(0));
  }
}

// LAPACK's real layout: conjugate pairs adjacent, equal real parts, positive imaginary part first.
// A pair stored negative-first is flipped (its vector conjugated: the imaginary column negated).
template <class R> void canonical_pairs(R* wr, R* wi, R* vr, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    if (wi[j] == R(0)) continue;
    if (j + 1 >= n || wr[j + 1] != wr[j] || wi[j + 1] != -wi[j])
      fail(GOFL_GPU_CUSOLVER_ERROR, "eigenvalue pairs not in LAPACK's layout");
    if (wi[j] < R(0)) {
      wi[j] = -wi[j];
      wi[j + 1] = -wi[j + 1];
      if (vr)
        for (int64_t k = 0; k < n; ++k) vr[(j + 1) * n + k] = -vr[(j + 1) * n + k];
    }
    ++j;
  }
}

// dgeev and zgeev scale when the largest entry lies outside [sqrt(safmin)/eps, its inverse].
template <class R> Bounds geev_bounds() {
  const double smlnum = std::sqrt(double(std::numeric_limits<R>::min())) / double(std::numeric_limits<R>::epsilon());
  return Bounds{smlnum, 1.0 / smlnum};
}

template <class T> void run_geev(Engine& e, const CallArgs& c) {
  using P = GeevPos<T>;
  using R = real_t<T>;
  const WorkOut<T> q = c.ilp64() ? query_geev_as<T, int64_t>(c) : query_geev_as<T, int32_t>(c);
  const bool wantvr = c.ch(P::jobvr) == 'V';
  const int64_t n = c.i(P::n), lda = c.i(P::lda), ldvr = c.i(P::ldvr);

  // W: n complex values for either input; for real input split into dWri = [wr | wi] below.
  DevMem dA = alloc_n<T>(e, n * n), dW = alloc_n<R>(e, 2 * n), dWri;
  DevMem dVR;
  if (wantvr) dVR = alloc_n<T>(e, n * n);
  e.upload(dA.get(), c.ptr<T>(P::a), n, n, lda, sizeof(T));
  e.begin_compute();
  host_pointer_mode(e);
  screen(e, dA.get<T>(), n * n, geev_bounds<R>(), true);

  Infos infos(e, 1);
  const cudaDataType tw = data_type<std::complex<R>>();
  const cusolverEigMode_t vmode = wantvr ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int64_t ldvr_dev = wantvr ? n : 1;
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXgeev_bufferSize(e.solver(), e.params(), CUSOLVER_EIG_MODE_NOVECTOR, vmode, n, data_type<T>(),
                                   dA.get(), n, tw, dW.get(), data_type<T>(), nullptr, 1, data_type<T>(), dVR.get(),
                                   ldvr_dev, data_type<T>(), &dbytes, &hbytes),
        "cusolverDnXgeev_bufferSize");
  Work ws(e, dbytes, hbytes);
  check(cusolverDnXgeev(e.solver(), e.params(), CUSOLVER_EIG_MODE_NOVECTOR, vmode, n, data_type<T>(), dA.get(), n, tw,
                        dW.get(), data_type<T>(), nullptr, 1, data_type<T>(), dVR.get(), ldvr_dev, data_type<T>(),
                        ws.d(), dbytes, ws.h(), hbytes, infos.at(0)),
        "cusolverDnXgeev");
  if constexpr (!cplx_v<T>) {
    dWri = alloc_n<R>(e, 2 * n);
    check(blas_copy<R>(e.blas(), n, dW.get<R>(), 2, dWri.get<R>()), "cublasXcopy");
    check(blas_copy<R>(e.blas(), n, dW.get<R>() + 1, 2, dWri.get<R>() + n), "cublasXcopy");
  }
  e.finish_compute();
  infos.require_zero("cusolverDnXgeev info");

  std::vector<T> vr;
  if (wantvr) {
    vr = fetch<T>(e, dVR.get(), n * n);
    require_finite(vr.data(), n * n, "non-finite eigenvectors");
  }
  std::vector<R> w = fetch<R>(e, cplx_v<T> ? dW.get() : dWri.get(), 2 * n);  // real: [wr | wi]
  require_finite(w.data(), 2 * n, "non-finite eigenvalues");
  if constexpr (cplx_v<T>) {
    if (wantvr) normalise_complex_vectors(vr.data(), n);
    // Copy-out: the eigenvalues as cuSOLVER left them.
    e.download(c.ptr<T>(P::w), dW.get(), n, 1, n, sizeof(T));
  } else {
    R *wr = w.data(), *wi = w.data() + n;
    canonical_pairs(wr, wi, wantvr ? vr.data() : nullptr, n);
    if (wantvr) normalise_real_vectors(vr.data(), wi, n);
    // Copy-out: the real parts as cuSOLVER left them (a flip changes only wi and VR).
    e.download(c.ptr<R>(P::wr), dWri.get(), n, 1, n, sizeof(R));
    std::memcpy(c.ptr<R>(P::wi), wi, size_t(n) * sizeof(R));
  }
  if (wantvr) {
    T* out = c.ptr<T>(P::vr);
    for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * ldvr, vr.data() + j * n, size_t(n) * sizeof(T));
  }
  q.write(c);
  c.set_i(P::info, 0);
}

// =====================================================================================================
// gesvd, gesdd: both on Xgesvd (cuSOLVER has no divide-and-conquer SVD; its polar-decomposition
// gesvdp may not return unitary factors for rank-deficient A, which NumPy's matrix_rank/pinv
// feed it). cuSOLVER's gesvd needs rows >= columns: for m < n the SVD of A^H is computed and its
// factors swapped and adjoined. Vectors LAPACK writes into A (jobu/jobvt/jobz = 'O') are computed
// into a separate buffer and copied into A at copy-out. Otherwise A is left as the caller had it
// (LAPACK destroys it).
// gesdd is gesvd with gesdd's outputs: 'A' and 'S' as in gesvd; 'O' with m >= n gives U in A and
// VT (n x n) in VT, with m < n U (m x m) in U and VT in A; 'N' singular values only.
// =====================================================================================================
template <class T> using GesvdPos = std::conditional_t<cplx_v<T>, ga::gesvd_c, ga::gesvd_r>;
template <class T> using GesddPos = std::conditional_t<cplx_v<T>, ga::gesdd_c, ga::gesdd_r>;

// ILAENV(6, ...): the row/column ratio beyond which LAPACK's SVD drivers start with a QR/LQ step.
int64_t ilaenv6(int64_t m, int64_t n) { return int64_t(float(std::min(m, n)) * 1.6f); }

int check_gesvd(bool cplx, char jobu, char jobvt, int64_t m, int64_t n, int64_t lda, int64_t ldu, int64_t ldvt,
                int64_t lwork) {
  const int64_t minmn = std::min(m, n);
  const bool ua = jobu == 'A', us = jobu == 'S', uo = jobu == 'O', un = jobu == 'N';
  const bool va = jobvt == 'A', vs = jobvt == 'S', vo = jobvt == 'O', vn = jobvt == 'N';
  if (!(ua || us || uo || un)) return -1;
  if (!(va || vs || vo || vn) || (vo && uo)) return -2;
  if (m < 0) return -3;
  if (n < 0) return -4;
  if (lda < std::max<int64_t>(1, m)) return -6;
  if (ldu < 1 || ((ua || us) && ldu < m)) return -9;
  if (ldvt < 1 || (va && ldvt < n) || (vs && ldvt < minmn)) return -11;
  if (lwork == -1) return 0;
  int64_t minwrk = 1;
  if (minmn > 0) {
    const int64_t mx = std::max(m, n), mn = minmn;
    // Path 1 / 1t (much taller or wider, no vectors on the long side) needs less.
    const bool path1 = m >= n ? (m >= ilaenv6(m, n) && un) : (n >= ilaenv6(m, n) && vn);
    if (cplx) minwrk = path1 ? 3 * mn : 2 * mn + mx;
    else minwrk = path1 ? std::max(4 * mn, 5 * mn) : std::max(3 * mn + mx, 5 * mn);
  }
  if (lwork < minwrk) return -13;
  return 0;
}

int check_gesdd(bool cplx, char jobz, int64_t m, int64_t n, int64_t lda, int64_t ldu, int64_t ldvt, int64_t lwork) {
  const int64_t minmn = std::min(m, n);
  const bool qa = jobz == 'A', qs = jobz == 'S', qo = jobz == 'O', qn = jobz == 'N';
  if (!(qa || qs || qo || qn)) return -1;
  if (m < 0) return -2;
  if (n < 0) return -3;
  if (lda < std::max<int64_t>(1, m)) return -5;
  if (ldu < 1 || ((qa || qs) && ldu < m) || (qo && m < n && ldu < m)) return -8;
  if (ldvt < 1 || (qa && ldvt < n) || (qs && ldvt < minmn) || (qo && m >= n && ldvt < n)) return -10;
  if (lwork == -1) return 0;
  int64_t minwrk = 1;
  if (minmn > 0) {
    const int64_t mx = std::max(m, n), mn = minmn;
    if (!cplx) {
      const int64_t mnthr = int64_t(double(mn) * 11.0 / 6.0);
      const int64_t bdspac = qn ? 7 * mn : 3 * mn * mn + 4 * mn;
      if (mx >= mnthr) minwrk = qn ? bdspac + mn : qo ? bdspac + 2 * mn * mn + 3 * mn : bdspac + mn * mn + 3 * mn;
      else minwrk = qo ? 3 * mn + std::max(mx, mn * mn + bdspac) : 3 * mn + std::max(mx, bdspac);
    } else {
      const int64_t mnthr1 = int64_t(double(mn) * 17.0 / 9.0);
      if (mx >= mnthr1) minwrk = qn ? 3 * mn : qo ? 2 * mn * mn + 3 * mn : mn * mn + (qs ? 3 * mn : std::max(3 * mn, mn + mx));
      else minwrk = 2 * mn + mx + (qo ? mn * mn : 0);
    }
  }
  if (lwork < minwrk) return -12;
  return 0;
}

template <class T> int supports_gesvd(const CallArgs& c) {
  using P = GesvdPos<T>;
  const int64_t m = c.i(P::m), n = c.i(P::n), lwork = c.i(P::lwork);
  if (check_gesvd(cplx_v<T>, c.ch(P::jobu), c.ch(P::jobvt), m, n, c.i(P::lda), c.i(P::ldu), c.i(P::ldvt), lwork))
    return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || std::min(m, n) == 0) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> int supports_gesdd(const CallArgs& c) {
  using P = GesddPos<T>;
  const int64_t m = c.i(P::m), n = c.i(P::n), lwork = c.i(P::lwork);
  if (check_gesdd(cplx_v<T>, c.ch(P::jobz), m, n, c.i(P::lda), c.i(P::ldu), c.i(P::ldvt), lwork))
    return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || std::min(m, n) == 0) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

// A, its adjoint, U (up to max(m,n)^2), VT, S and Xgesvd's workspace (estimated).
template <class T> uint64_t svd_bytes(int64_t m, int64_t n) {
  const uint64_t um = uint64_t(std::max<int64_t>(m, 1)), un = uint64_t(std::max<int64_t>(n, 1));
  return sizeof(T) * (3 * um * un + um * um + un * un + 64 * (um + un)) + sizeof(real_t<T>) * std::min(um, un);
}
template <class T> uint64_t bytes_gesvd(const CallArgs& c) { return svd_bytes<T>(c.i(GesvdPos<T>::m), c.i(GesvdPos<T>::n)); }
template <class T> uint64_t bytes_gesdd(const CallArgs& c) { return svd_bytes<T>(c.i(GesddPos<T>::m), c.i(GesddPos<T>::n)); }

template <class T, class I> WorkOut<T> query_gesvd_as(const CallArgs& c) {
  using P = GesvdPos<T>;
  using R = real_t<T>;
  I m1 = -1, info = 0;
  T w0{};
  R rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, arg(c, P::jobu), arg(c, P::jobvt), arg(c, P::m), arg(c, P::n), arg(c, P::a), arg(c, P::lda),
             arg(c, P::s), arg(c, P::u), arg(c, P::ldu), arg(c, P::vt), arg(c, P::ldvt), &w0, &m1, &info, kLen, kLen);
  } else {
    call_cpu(c, arg(c, P::jobu), arg(c, P::jobvt), arg(c, P::m), arg(c, P::n), arg(c, P::a), arg(c, P::lda),
             arg(c, P::s), arg(c, P::u), arg(c, P::ldu), arg(c, P::vt), arg(c, P::ldvt), &w0, &m1, rw0, &info, kLen,
             kLen);
  }
  return query_answer<P>(int64_t(info), w0);
}

template <class T, class I> WorkOut<T> query_gesdd_as(const CallArgs& c) {
  using P = GesddPos<T>;
  using R = real_t<T>;
  I m1 = -1, info = 0, iw[1] = {0};
  T w0{};
  R rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, arg(c, P::jobz), arg(c, P::m), arg(c, P::n), arg(c, P::a), arg(c, P::lda), arg(c, P::s),
             arg(c, P::u), arg(c, P::ldu), arg(c, P::vt), arg(c, P::ldvt), &w0, &m1, iw, &info, kLen);
  } else {
    call_cpu(c, arg(c, P::jobz), arg(c, P::m), arg(c, P::n), arg(c, P::a), arg(c, P::lda), arg(c, P::s),
             arg(c, P::u), arg(c, P::ldu), arg(c, P::vt), arg(c, P::ldvt), &w0, &m1, rw0, iw, &info, kLen);
  }
  return query_answer<P>(int64_t(info), w0);
}

template <class T>
cublasStatus_t blas_geam(cublasHandle_t h, cublasOperation_t op, int64_t m, int64_t n, const T* a, int64_t lda, T* c,
                         int64_t ldc) {
  const T one(1), zero(0);  // beta = 0: B (= A, finite) only satisfies the interface
  if constexpr (std::is_same_v<T, float>) return cublasSgeam_64(h, op, op, m, n, &one, a, lda, &zero, a, lda, c, ldc);
  else if constexpr (std::is_same_v<T, double>) return cublasDgeam_64(h, op, op, m, n, &one, a, lda, &zero, a, lda, c, ldc);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return cublasCgeam_64(h, op, op, m, n, cu(&one), cu(a), lda, cu(&zero), cu(a), lda, cu(c), ldc);
  else return cublasZgeam_64(h, op, op, m, n, cu(&one), cu(a), lda, cu(&zero), cu(a), lda, cu(c), ldc);
}

// out (cols x rows) = a^H for a device rows x cols matrix with leading dimension rows.
template <class T> void adjoint(Engine& e, const T* a, int64_t rows, int64_t cols, T* out) {
  check(blas_geam<T>(e.blas(), cplx_v<T> ? CUBLAS_OP_C : CUBLAS_OP_T, cols, rows, a, rows, out, cols), "cublasXgeam");
}

// gesvd/gesdd (and geev) scale when the largest entry lies outside [sqrt(safmin)/eps, its inverse].
template <class R> Bounds svd_bounds() { return geev_bounds<R>(); }

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
            int* info, std::vector<std::unique_ptr<Work>>& keep) {
  using R = real_t<T>;
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXgesvd_bufferSize(e.solver(), e.params(), ju, jv, rows, cols, data_type<T>(), a, rows,
                                    data_type<R>(), s, data_type<T>(), u, rows, data_type<T>(), vt, cols,
                                    data_type<T>(), &dbytes, &hbytes),
        "cusolverDnXgesvd_bufferSize");
  keep.emplace_back(new Work(e, dbytes, hbytes));
  Work& ws = *keep.back();
  check(cusolverDnXgesvd(e.solver(), e.params(), ju, jv, rows, cols, data_type<T>(), a, rows, data_type<R>(), s,
                         data_type<T>(), u, rows, data_type<T>(), vt, cols, data_type<T>(), ws.d(), dbytes, ws.h(),
                         hbytes, info),
        "cusolverDnXgesvd");
}

// The SVD with gesvd's job letters (never both 'O').
template <class T>
void run_svd(Engine& e, const CallArgs& c, char jobu, char jobvt, int64_t m, int64_t n, int a_pos, int lda_pos,
             int s_pos, int u_pos, int ldu_pos, int vt_pos, int ldvt_pos, int info_pos, const WorkOut<T>& q) {
  using R = real_t<T>;
  const int64_t k = std::min(m, n), lda = c.i(lda_pos);
  T* a = c.ptr<T>(a_pos);
  const bool tr = m < n;
  const int64_t rows = tr ? n : m, cols = k;                    // the factored matrix: A or A^H
  const char ju = tr ? jobvt : jobu, jv = tr ? jobu : jobvt;   // its jobs (A^H = V S U^H)
  const signed char cju = ju == 'N' ? 'N' : (ju == 'A' ? 'A' : 'S');
  const signed char cjv = jv == 'N' ? 'N' : 'S';               // its VT is cols x cols for 'A' and 'S'
  const int64_t ucols = cju == 'A' ? rows : cols;

  DevMem dA = alloc_n<T>(e, m * n);
  e.upload(dA.get(), a, m, n, lda, sizeof(T));
  e.begin_compute();
  host_pointer_mode(e);
  screen(e, dA.get<T>(), m * n, svd_bounds<R>(), true);
  DevMem dAt;
  T* src = dA.get<T>();
  if (tr) {
    dAt = alloc_n<T>(e, m * n);
    adjoint(e, src, m, n, dAt.get<T>());
    src = dAt.get<T>();
  }
  DevMem dS = alloc_n<R>(e, k), dU, dVT;
  if (cju != 'N') dU = alloc_n<T>(e, rows * ucols);
  if (cjv != 'N') dVT = alloc_n<T>(e, cols * cols);
  Infos infos(e, 1);
  std::vector<std::unique_ptr<Work>> keep;
  xgesvd(e, cju, cjv, rows, cols, src, dS.get<R>(), dU.get<T>(), dVT.get<T>(), infos.at(0), keep);

  // A's factors: U (m x ucols_a) and VT (vrows_a x n), packed.
  const T *ua = dU.get<T>(), *vta = dVT.get<T>();
  int64_t ucols_a = ucols, vrows_a = cols;
  DevMem dUa, dVTa;
  if (tr) {  // A = (A^H)^H: U_A = VT_B^H (m x m), VT_A = U_B^H (ucols x n)
    ucols_a = m;
    vrows_a = ucols;
    if (jobu != 'N') {
      dUa = alloc_n<T>(e, m * m);
      adjoint(e, dVT.get<T>(), m, m, dUa.get<T>());
      ua = dUa.get<T>();
    }
    if (jobvt != 'N') {
      dVTa = alloc_n<T>(e, ucols * n);
      adjoint(e, dU.get<T>(), n, ucols, dVTa.get<T>());
      vta = dVTa.get<T>();
    }
  }
  e.finish_compute();
  infos.require_zero("cusolverDnXgesvd info");
  const std::vector<R> s = fetch<R>(e, dS.get(), k);
  require_singular_values(s.data(), k);

  // Copy-out.
  if (jobu == 'A' || jobu == 'S') e.download(c.ptr<T>(u_pos), ua, m, ucols_a, c.i(ldu_pos), sizeof(T));
  else if (jobu == 'O') e.download(a, ua, m, k, lda, sizeof(T));
  if (jobvt == 'A' || jobvt == 'S') e.download(c.ptr<T>(vt_pos), vta, vrows_a, n, c.i(ldvt_pos), sizeof(T));
  else if (jobvt == 'O') e.download(a, vta, k, n, lda, sizeof(T));
  e.download(c.ptr<R>(s_pos), dS.get(), k, 1, k, sizeof(R));
  q.write(c);
  c.set_i(info_pos, 0);
}

template <class T> void run_gesvd(Engine& e, const CallArgs& c) {
  using P = GesvdPos<T>;
  const WorkOut<T> q = c.ilp64() ? query_gesvd_as<T, int64_t>(c) : query_gesvd_as<T, int32_t>(c);
  run_svd<T>(e, c, c.ch(P::jobu), c.ch(P::jobvt), c.i(P::m), c.i(P::n), P::a, P::lda, P::s, P::u, P::ldu, P::vt,
             P::ldvt, P::info, q);
}

template <class T> void run_gesdd(Engine& e, const CallArgs& c) {
  using P = GesddPos<T>;
  const WorkOut<T> q = c.ilp64() ? query_gesdd_as<T, int64_t>(c) : query_gesdd_as<T, int32_t>(c);
  const char jobz = c.ch(P::jobz);
  const int64_t m = c.i(P::m), n = c.i(P::n);
  char ju = jobz, jv = jobz;
  if (jobz == 'O') {  // the long side's vectors go into A
    ju = m >= n ? 'O' : 'S';
    jv = m >= n ? 'S' : 'O';
  }
  run_svd<T>(e, c, ju, jv, m, n, P::a, P::lda, P::s, P::u, P::ldu, P::vt, P::ldvt, P::info, q);
}

// =====================================================================================================
// gelsd: minimum-norm least squares through the SVD, following LAPACK's structure so that every
// output means the same: for m >= n, B := Q^H B after a QR of A (skipped when square), so rows
// n+1..m of B hold the residual's components as in LAPACK (NumPy's lstsq sums their squares for
// its residuals); the n x n factor R is solved through its SVD. For m < n the same runs on A^H
// (A = R^H Q^H) and the solution is Q applied to [y; 0]. rank counts the singular values above
// rcnd * s_max with LAPACK's rcnd: rcond itself when 0 < rcond < 1, else DLAMCH('Epsilon').
// A is left as the caller had it (LAPACK destroys it).
// =====================================================================================================
template <class T> using GelsdPos = std::conditional_t<cplx_v<T>, ga::gelsd_c, ga::gelsd_r>;

int check_gelsd(bool cplx, int64_t m, int64_t n, int64_t nrhs, int64_t lda, int64_t ldb, int64_t lwork) {
  if (m < 0) return -1;
  if (n < 0) return -2;
  if (nrhs < 0) return -3;
  if (lda < std::max<int64_t>(1, m)) return -5;
  if (ldb < std::max<int64_t>({1, m, n})) return -7;
  if (lwork == -1) return 0;
  const int64_t smlsiz = 25;  // ILAENV(9, 'xGELSD', ...)
  const int64_t minmn = std::max<int64_t>(1, std::min(m, n));
  const int64_t nlvl =
      std::max<int64_t>(int64_t(std::log(double(minmn) / double(smlsiz + 1)) / std::log(2.0)) + 1, 0);
  const int64_t mnthr = ilaenv6(m, n);
  int64_t minwrk = 1;
  if (!cplx) {
    if (m >= n) {
      const int64_t mm = m >= mnthr ? n : m;
      const int64_t wlalsd = 9 * n + 2 * n * smlsiz + 8 * n * nlvl + n * nrhs + (smlsiz + 1) * (smlsiz + 1);
      minwrk = std::max({3 * n + mm, 3 * n + nrhs, 3 * n + wlalsd});
    } else {
      const int64_t wlalsd = 9 * m + 2 * m * smlsiz + 8 * m * nlvl + m * nrhs + (smlsiz + 1) * (smlsiz + 1);
      minwrk = std::max({3 * m + nrhs, 3 * m + m, 3 * m + wlalsd});
    }
  } else if (std::min(m, n) > 0) {
    if (m >= n) {
      const int64_t mm = m >= mnthr ? n : m;
      minwrk = std::max(2 * n + mm, 2 * n + n * nrhs);
    } else {
      minwrk = std::max(2 * m + n, 2 * m + m * nrhs);
    }
  }
  if (lwork < minwrk) return -12;
  return 0;
}

template <class T> int supports_gelsd(const CallArgs& c) {
  using P = GelsdPos<T>;
  using R = real_t<T>;
  const int64_t m = c.i(P::m), n = c.i(P::n), nrhs = c.i(P::nrhs), lwork = c.i(P::lwork);
  if (check_gelsd(cplx_v<T>, m, n, nrhs, c.i(P::lda), c.i(P::ldb), lwork)) return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1) return GOFL_GPU_UNSUPPORTED;
  // Quick returns, and LAPACK's special rank rule for a single singular value (rank 1 unless zero).
  if (std::min(m, n) < 2 || nrhs == 0) return GOFL_GPU_UNSUPPORTED;
  if (std::isnan(double(c.scalar<R>(P::rcond)))) return GOFL_GPU_UNSUPPORTED;
  // ormqr/unmqr and trttp/tpttr take int sizes.
  if (std::max({m, n, nrhs}) > INT_MAX) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t bytes_gelsd(const CallArgs& c) {
  using P = GelsdPos<T>;
  const uint64_t m = uint64_t(std::max<int64_t>(c.i(P::m), 1)), n = uint64_t(std::max<int64_t>(c.i(P::n), 1));
  const uint64_t r = uint64_t(std::max<int64_t>(c.i(P::nrhs), 1)), k = std::min(m, n), mx = std::max(m, n);
  return sizeof(T) * (2 * m * n + 4 * k * k + 2 * mx * r + 3 * k * r + 64 * (mx + r)) + sizeof(real_t<T>) * k;
}

template <class T, class I> WorkOut<T> query_gelsd_as(const CallArgs& c) {
  using P = GelsdPos<T>;
  using R = real_t<T>;
  I m1 = -1, info = 0, rank = 0, iw = 0;
  T w0{};
  R rw0{};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, arg(c, P::m), arg(c, P::n), arg(c, P::nrhs), arg(c, P::a), arg(c, P::lda), arg(c, P::b),
             arg(c, P::ldb), arg(c, P::s), arg(c, P::rcond), &rank, &w0, &m1, &iw, &info);
  } else {
    call_cpu(c, arg(c, P::m), arg(c, P::n), arg(c, P::nrhs), arg(c, P::a), arg(c, P::lda), arg(c, P::b),
             arg(c, P::ldb), arg(c, P::s), arg(c, P::rcond), &rank, &w0, &m1, &rw0, &iw, &info);
  }
  return query_answer<P>(int64_t(info), w0, int64_t(iw), rw0);
}

template <class T> cublasStatus_t blas_tpttr(cublasHandle_t h, cublasFillMode_t uplo, int n, const T* ap, T* a, int lda) {
  if constexpr (std::is_same_v<T, float>) return cublasStpttr(h, uplo, n, ap, a, lda);
  else if constexpr (std::is_same_v<T, double>) return cublasDtpttr(h, uplo, n, ap, a, lda);
  else if constexpr (std::is_same_v<T, std::complex<float>>) return cublasCtpttr(h, uplo, n, cu(ap), cu(a), lda);
  else return cublasZtpttr(h, uplo, n, cu(ap), cu(a), lda);
}

template <class T>
cublasStatus_t blas_gemm(cublasHandle_t h, cublasOperation_t ta, int64_t m, int64_t n, int64_t k, const T* a,
                         int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc) {
  const T one(1), zero(0);
  const cublasOperation_t tb = CUBLAS_OP_N;
  if constexpr (std::is_same_v<T, float>) return cublasSgemm_64(h, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
  else if constexpr (std::is_same_v<T, double>) return cublasDgemm_64(h, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return cublasCgemm_64(h, ta, tb, m, n, k, cu(&one), cu(a), lda, cu(b), ldb, cu(&zero), cu(c), ldc);
  else return cublasZgemm_64(h, ta, tb, m, n, k, cu(&one), cu(a), lda, cu(b), ldb, cu(&zero), cu(c), ldc);
}

// c = diag(x) a (m x n, leading dimensions m).
template <class T> cublasStatus_t blas_dgmm_left(cublasHandle_t h, int64_t m, int64_t n, const T* a, const T* x, T* c) {
  const cublasSideMode_t left = CUBLAS_SIDE_LEFT;
  if constexpr (std::is_same_v<T, float>) return cublasSdgmm_64(h, left, m, n, a, m, x, 1, c, m);
  else if constexpr (std::is_same_v<T, double>) return cublasDdgmm_64(h, left, m, n, a, m, x, 1, c, m);
  else if constexpr (std::is_same_v<T, std::complex<float>>) return cublasCdgmm_64(h, left, m, n, cu(a), m, cu(x), 1, cu(c), m);
  else return cublasZdgmm_64(h, left, m, n, cu(a), m, cu(x), 1, cu(c), m);
}

template <class T>
cusolverStatus_t solver_ormqr_size(cusolverDnHandle_t h, cublasOperation_t tr, int m, int n, int k, const T* a, int lda,
                                   const T* tau, const T* c, int ldc, int* lwork) {
  const cublasSideMode_t left = CUBLAS_SIDE_LEFT;
  if constexpr (std::is_same_v<T, float>) return cusolverDnSormqr_bufferSize(h, left, tr, m, n, k, a, lda, tau, c, ldc, lwork);
  else if constexpr (std::is_same_v<T, double>) return cusolverDnDormqr_bufferSize(h, left, tr, m, n, k, a, lda, tau, c, ldc, lwork);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return cusolverDnCunmqr_bufferSize(h, left, tr, m, n, k, cu(a), lda, cu(tau), cu(c), ldc, lwork);
  else return cusolverDnZunmqr_bufferSize(h, left, tr, m, n, k, cu(a), lda, cu(tau), cu(c), ldc, lwork);
}

template <class T>
cusolverStatus_t solver_ormqr(cusolverDnHandle_t h, cublasOperation_t tr, int m, int n, int k, const T* a, int lda,
                              const T* tau, T* c, int ldc, T* work, int lwork, int* info) {
  const cublasSideMode_t left = CUBLAS_SIDE_LEFT;
  if constexpr (std::is_same_v<T, float>) return cusolverDnSormqr(h, left, tr, m, n, k, a, lda, tau, c, ldc, work, lwork, info);
  else if constexpr (std::is_same_v<T, double>) return cusolverDnDormqr(h, left, tr, m, n, k, a, lda, tau, c, ldc, work, lwork, info);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return cusolverDnCunmqr(h, left, tr, m, n, k, cu(a), lda, cu(tau), cu(c), ldc, cu(work), lwork, info);
  else return cusolverDnZunmqr(h, left, tr, m, n, k, cu(a), lda, cu(tau), cu(c), ldc, cu(work), lwork, info);
}

// QR of the device rows x cols matrix a (leading dimension rows) in place; tau gets cols entries.
template <class T>
void xgeqrf(Engine& e, int64_t rows, int64_t cols, T* a, T* tau, int* info, std::vector<std::unique_ptr<Work>>& keep) {
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXgeqrf_bufferSize(e.solver(), e.params(), rows, cols, data_type<T>(), a, rows, data_type<T>(), tau,
                                    data_type<T>(), &dbytes, &hbytes),
        "cusolverDnXgeqrf_bufferSize");
  keep.emplace_back(new Work(e, dbytes, hbytes));
  Work& ws = *keep.back();
  check(cusolverDnXgeqrf(e.solver(), e.params(), rows, cols, data_type<T>(), a, rows, data_type<T>(), tau,
                         data_type<T>(), ws.d(), dbytes, ws.h(), hbytes, info),
        "cusolverDnXgeqrf");
}

// c (rows x n, leading dimension rows) := op(Q) c, Q from xgeqrf of the rows x k matrix a.
template <class T>
void apply_q(Engine& e, cublasOperation_t op, int64_t rows, int64_t n, int64_t k, const T* a, const T* tau, T* c,
             int* info, std::vector<std::unique_ptr<Work>>& keep) {
  int lwork = 0;
  check(solver_ormqr_size<T>(e.solver(), op, int(rows), int(n), int(k), a, int(rows), tau, c, int(rows), &lwork),
        "cusolverDnXormqr_bufferSize");
  keep.emplace_back(new Work(e, size_t(std::max(lwork, 1)) * sizeof(T), 0));
  check(solver_ormqr<T>(e.solver(), op, int(rows), int(n), int(k), a, int(rows), tau, c, int(rows),
                        static_cast<T*>(keep.back()->d()), lwork, info),
        "cusolverDnXormqr");
}

// out (k x k, zeroed below the diagonal) = the upper triangle of a (leading dimension lda).
template <class T> void upper_triangle(Engine& e, const T* a, int64_t lda, int64_t k, T* out) {
  DevMem packed = alloc_n<T>(e, k * (k + 1) / 2);
  check(cudaMemsetAsync(out, 0, size_t(k * k) * sizeof(T), e.stream()), "cudaMemsetAsync");
  check(blas_trttp<T>(e.blas(), CUBLAS_FILL_MODE_UPPER, int(k), a, int(lda), packed.get<T>()), "cublasXtrttp");
  check(blas_tpttr<T>(e.blas(), CUBLAS_FILL_MODE_UPPER, int(k), packed.get<T>(), out, int(k)), "cublasXtpttr");
  // `packed` returns to the pool here; the stream orders its reuse after tpttr.
}

// gelsd scales A and B when their largest entries lie outside [safmin/eps, its inverse].
template <class R> Bounds gelsd_bounds() {
  const double smlnum = double(std::numeric_limits<R>::min()) / double(std::numeric_limits<R>::epsilon());
  return Bounds{smlnum, 1.0 / smlnum};
}

template <class T> void run_gelsd(Engine& e, const CallArgs& c) {
  using P = GelsdPos<T>;
  using R = real_t<T>;
  const WorkOut<T> q = c.ilp64() ? query_gelsd_as<T, int64_t>(c) : query_gelsd_as<T, int32_t>(c);
  const int64_t m = c.i(P::m), n = c.i(P::n), nrhs = c.i(P::nrhs), lda = c.i(P::lda), ldb = c.i(P::ldb);
  const int64_t k = std::min(m, n);
  const R rcond = c.scalar<R>(P::rcond);
  T *a = c.ptr<T>(P::a), *b = c.ptr<T>(P::b);
  const cublasOperation_t adj = cplx_v<T> ? CUBLAS_OP_C : CUBLAS_OP_T;

  DevMem dA = alloc_n<T>(e, m * n), dB = alloc_n<T>(e, m * nrhs);
  e.upload(dA.get(), a, m, n, lda, sizeof(T));
  e.upload(dB.get(), b, m, nrhs, ldb, sizeof(T));
  e.begin_compute();
  host_pointer_mode(e);
  screen(e, dA.get<T>(), m * n, gelsd_bounds<R>(), false);  // A = 0: LAPACK's zero-solution path
  screen(e, dB.get<T>(), m * nrhs, gelsd_bounds<R>(), true);

  Infos infos(e, 3);
  std::vector<std::unique_ptr<Work>> keep;
  DevMem dAt, dTau, dR, dU = alloc_n<T>(e, k * k), dVT = alloc_n<T>(e, k * k), dS = alloc_n<R>(e, k);
  // The k x k factor whose SVD is taken: R of A = QR (m > n), of A^H = QR (m < n), or A itself.
  T* f = dA.get<T>();
  if (m != n) {
    dTau = alloc_n<T>(e, k);
    dR = alloc_n<T>(e, k * k);
    if (m > n) {
      xgeqrf(e, m, n, dA.get<T>(), dTau.get<T>(), infos.at(0), keep);
      apply_q(e, adj, m, nrhs, n, dA.get<T>(), dTau.get<T>(), dB.get<T>(), infos.at(1), keep);  // B := Q^H B
      upper_triangle(e, dA.get<T>(), m, n, dR.get<T>());
    } else {
      dAt = alloc_n<T>(e, n * m);
      adjoint(e, dA.get<T>(), m, n, dAt.get<T>());
      xgeqrf(e, n, m, dAt.get<T>(), dTau.get<T>(), infos.at(0), keep);
      upper_triangle(e, dAt.get<T>(), n, m, dR.get<T>());
    }
    f = dR.get<T>();
  }
  xgesvd(e, 'S', 'S', k, k, f, dS.get<R>(), dU.get<T>(), dVT.get<T>(), infos.at(2), keep);

  // The rank decision needs the singular values on the host (a failed SVD is caught below, after
  // finish_compute, and nothing computed from it reaches the caller).
  std::vector<R> s(static_cast<size_t>(k));
  e.read_small(s.data(), dS.get(), size_t(k) * sizeof(R));
  const R eps = std::numeric_limits<R>::epsilon() / 2;  // DLAMCH('Epsilon')
  const R rcnd = (rcond <= R(0) || rcond >= R(1)) ? eps : rcond;
  R smax = 0;
  for (R v : s) smax = std::max(smax, std::fabs(v));
  const R tol = rcnd * smax;
  int64_t rank = 0;
  std::vector<T> inv(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) {
    if (s[size_t(i)] > tol) {
      inv[size_t(i)] = T(R(1) / s[size_t(i)]);
      ++rank;
    } else {
      inv[size_t(i)] = T(0);
    }
  }
  DevMem dInv = alloc_n<T>(e, k), dT = alloc_n<T>(e, k * nrhs), dT2 = alloc_n<T>(e, k * nrhs);
  e.upload_vec(dInv.get(), inv.data(), size_t(k) * sizeof(T));
  DevMem dX;
  if (m >= n) {
    // x = V S^+ U^H c with c = (Q^H b)(1:n): into the first n rows of B; rows n+1..m keep Q^H b.
    check(blas_gemm<T>(e.blas(), adj, n, nrhs, n, dU.get<T>(), n, dB.get<T>(), m, dT.get<T>(), n), "cublasXgemm");
    check(blas_dgmm_left<T>(e.blas(), n, nrhs, dT.get<T>(), dInv.get<T>(), dT2.get<T>()), "cublasXdgmm");
    check(blas_gemm<T>(e.blas(), adj, n, nrhs, n, dVT.get<T>(), n, dT2.get<T>(), n, dB.get<T>(), m), "cublasXgemm");
  } else {
    // A = R^H Q^H with R = U S V^H: x = Q [U S^+ V^H b; 0].
    dX = alloc_n<T>(e, n * nrhs);
    check(cudaMemsetAsync(dX.get(), 0, size_t(n * nrhs) * sizeof(T), e.stream()), "cudaMemsetAsync");
    check(blas_gemm<T>(e.blas(), CUBLAS_OP_N, m, nrhs, m, dVT.get<T>(), m, dB.get<T>(), m, dT.get<T>(), m), "cublasXgemm");
    check(blas_dgmm_left<T>(e.blas(), m, nrhs, dT.get<T>(), dInv.get<T>(), dT2.get<T>()), "cublasXdgmm");
    check(blas_gemm<T>(e.blas(), CUBLAS_OP_N, m, nrhs, m, dU.get<T>(), m, dT2.get<T>(), m, dX.get<T>(), n), "cublasXgemm");
    apply_q(e, CUBLAS_OP_N, n, nrhs, m, dAt.get<T>(), dTau.get<T>(), dX.get<T>(), infos.at(1), keep);
  }
  e.finish_compute();
  infos.require_zero("cusolver gelsd info");
  require_singular_values(s.data(), k);

  const int64_t xrows = m >= n ? m : n;
  const void* dx = m >= n ? dB.get() : dX.get();
  require_finite(fetch<T>(e, dx, xrows * nrhs).data(), xrows * nrhs, "non-finite solution");

  // Copy-out.
  e.download(b, dx, xrows, nrhs, ldb, sizeof(T));
  e.download(c.ptr<R>(P::s), dS.get(), k, 1, k, sizeof(R));
  c.set_i(P::rank, rank);
  q.write(c);
  c.set_i(P::info, 0);
}

}  // namespace

void register_eig_svd() {
  Routine* r = routines();
  using C = std::complex<float>;
  using Z = std::complex<double>;
  r[OP_ssyevd] = Routine{&supports_syevd<float>, &bytes_syevd<float>, &run_syevd<float>};
  r[OP_dsyevd] = Routine{&supports_syevd<double>, &bytes_syevd<double>, &run_syevd<double>};
  r[OP_cheevd] = Routine{&supports_syevd<C>, &bytes_syevd<C>, &run_syevd<C>};
  r[OP_zheevd] = Routine{&supports_syevd<Z>, &bytes_syevd<Z>, &run_syevd<Z>};
  r[OP_ssyev] = Routine{&supports_syev<float>, &bytes_syev<float>, &run_syev<float>};
  r[OP_dsyev] = Routine{&supports_syev<double>, &bytes_syev<double>, &run_syev<double>};
  r[OP_cheev] = Routine{&supports_syev<C>, &bytes_syev<C>, &run_syev<C>};
  r[OP_zheev] = Routine{&supports_syev<Z>, &bytes_syev<Z>, &run_syev<Z>};
  r[OP_ssyevr] = Routine{&supports_syevr<float>, &bytes_syevr<float>, &run_syevr<float>};
  r[OP_dsyevr] = Routine{&supports_syevr<double>, &bytes_syevr<double>, &run_syevr<double>};
  r[OP_cheevr] = Routine{&supports_syevr<C>, &bytes_syevr<C>, &run_syevr<C>};
  r[OP_zheevr] = Routine{&supports_syevr<Z>, &bytes_syevr<Z>, &run_syevr<Z>};
  r[OP_sgeev] = Routine{&supports_geev<float>, &bytes_geev<float>, &run_geev<float>};
  r[OP_dgeev] = Routine{&supports_geev<double>, &bytes_geev<double>, &run_geev<double>};
  r[OP_cgeev] = Routine{&supports_geev<C>, &bytes_geev<C>, &run_geev<C>};
  r[OP_zgeev] = Routine{&supports_geev<Z>, &bytes_geev<Z>, &run_geev<Z>};
  r[OP_sgesvd] = Routine{&supports_gesvd<float>, &bytes_gesvd<float>, &run_gesvd<float>};
  r[OP_dgesvd] = Routine{&supports_gesvd<double>, &bytes_gesvd<double>, &run_gesvd<double>};
  r[OP_cgesvd] = Routine{&supports_gesvd<C>, &bytes_gesvd<C>, &run_gesvd<C>};
  r[OP_zgesvd] = Routine{&supports_gesvd<Z>, &bytes_gesvd<Z>, &run_gesvd<Z>};
  r[OP_sgesdd] = Routine{&supports_gesdd<float>, &bytes_gesdd<float>, &run_gesdd<float>};
  r[OP_dgesdd] = Routine{&supports_gesdd<double>, &bytes_gesdd<double>, &run_gesdd<double>};
  r[OP_cgesdd] = Routine{&supports_gesdd<C>, &bytes_gesdd<C>, &run_gesdd<C>};
  r[OP_zgesdd] = Routine{&supports_gesdd<Z>, &bytes_gesdd<Z>, &run_gesdd<Z>};
  r[OP_sgelsd] = Routine{&supports_gelsd<float>, &bytes_gelsd<float>, &run_gelsd<float>};
  r[OP_dgelsd] = Routine{&supports_gelsd<double>, &bytes_gelsd<double>, &run_gelsd<double>};
  r[OP_cgelsd] = Routine{&supports_gelsd<C>, &bytes_gelsd<C>, &run_gelsd<C>};
  r[OP_zgelsd] = Routine{&supports_gelsd<Z>, &bytes_gelsd<Z>, &run_gelsd<Z>};
}

}  // namespace cuda
}  // namespace gofl
