// Level-2 BLAS on cuBLAS: gemv, symv (s/d), hemv (c/z), trsv, Fortran and CBLAS. They read each
// matrix element once, so they are bound by memory speed: worth the GPU when the matrix is already
// there (issue #15's residency). Each routine uploads its matrix in one place, upload_matrix().
//
// Vectors: BLAS semantics, any non-zero increment. A negative increment walks the vector backwards
// from its last element in memory (the array's lowest address is the vector's last element). The
// device always holds the vector packed in its logical order and cuBLAS gets increment 1, so no
// cuBLAS rule on negative increments is relied on: the host gathers and scatters.
//
// Row-major CBLAS calls are mapped to the column-major call on the same memory (the transposed
// matrix, as in blas3.cpp). Where that needs the conjugate of the stored matrix (gemv and trsv
// with ConjTrans, hemv), the problem is conjugated instead: conj(op(A)) x = conj(op(A) conj(x)),
// so x (and y, alpha, beta) go in conjugated and y (x for trsv) comes back conjugated. Conjugation
// flips a sign bit: the result is the exact conjugate of the conjugated problem's.
//
// What stays on the CPU (GOFL_GPU_UNSUPPORTED): empty problems, alpha == 0 (y := beta*y, and the
// quick return alpha == 0 with beta == 1): O(n) work whose exact BLAS semantics the CPU library has.
#include <complex>
#include <vector>

#include "common/table.h"
#include "cuda/blas_args.h"
#include "cuda/cublas_typed.h"
#include "cuda/device_matrix.h"
#include "cuda/engine.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;

// ---- helpers ------------------------------------------------------------------------------------------

using namespace blas_args;  // one_of, max1, bad_layout, is_zero, flip_ul (blas_args.h)

template <class T> T conj_if(const T& v, bool c) {
  if constexpr (is_complex<T>::value) return c ? std::conj(v) : v;
  else return v;
}

// A BLAS vector in host memory: len elements `inc` apart; logical element i lives at
// base[i * inc] for inc > 0 and at base[(len - 1 - i) * -inc] for inc < 0.
template <class T> struct HostVec {
  T* base;
  int64_t len, inc;
  T& at(int64_t i) const { return base[(inc > 0 ? i : len - 1 - i) * (inc > 0 ? inc : -inc)]; }
  bool direct(bool conj) const { return inc > 0 && !conj; }  // the engine copies it as it is
};

// Host vector -> packed device vector in logical order (conjugated when `conj`).
template <class T> void upload_vec(Engine& e, T* dev, const HostVec<T>& v, bool conj) {
  if (v.direct(conj)) return e.upload(dev, v.base, 1, v.len, v.inc, sizeof(T));  // a 1 x len matrix, ld = inc
  std::vector<T> packed(size_t(v.len));
  for (int64_t i = 0; i < v.len; ++i) packed[size_t(i)] = conj_if(v.at(i), conj);
  e.upload(dev, packed.data(), v.len, 1, v.len, sizeof(T));
}

// Packed device vector -> host vector; only its len elements are written, the gaps never.
template <class T> void download_vec(Engine& e, const HostVec<T>& v, const T* dev, bool conj) {
  if (v.direct(conj)) return e.download(v.base, dev, 1, v.len, v.inc, sizeof(T));
  std::vector<T> packed(size_t(v.len));
  e.download(packed.data(), dev, v.len, 1, v.len, sizeof(T));
  for (int64_t i = 0; i < v.len; ++i) v.at(i) = conj_if(packed[size_t(i)], conj);
}

// The one place each routine reads its matrix: the column-major rows x cols matrix A with leading
// dimension lda, from a device copy kept since an earlier call when the host bytes are unchanged
// (residency), else uploaded. The routine only reads it.
template <class T> Engine::Input matrix_in(Engine& e, const T* A, int64_t rows, int64_t cols, int64_t lda) {
  return e.input(A, rows, cols, lda, sizeof(T));
}
// A private device copy of A the routine may change (hemv zeroes the diagonal's imaginary parts).
template <class T> Engine::Input matrix_copy(Engine& e, const T* A, int64_t n, int64_t lda, DevMem* own) {
  *own = e.alloc(size_t(n * n) * sizeof(T));
  e.upload(own->get(), A, n, n, lda, sizeof(T));
  Engine::Input in;
  in.dev = own->get();
  in.ld = n;
  return in;
}

// ---- gemv: y := alpha op(A) x + beta y ------------------------------------------------------------

template <class T> struct Gemv {
  char trans;
  int64_t m, n, lda, incx, incy;  // m x n: A as column-major memory (row major: the caller's n x m)
  T alpha, beta;
  const T* A;
  const T* x;
  T* y;
  bool conj = false;  // row-major ConjTrans: the conjugated problem (see the top of the file)
  int64_t xlen() const { return trans == 'N' ? n : m; }
  int64_t ylen() const { return trans == 'N' ? m : n; }

  explicit Gemv(const CallArgs& a) {
    using P = args::gemv_r;
    trans = a.ch(P::trans);
    if (!is_complex<T>::value && trans == 'C') trans = 'T';
    m = a.i(P::m); n = a.i(P::n); lda = a.i(P::lda); incx = a.i(P::incx); incy = a.i(P::incy);
    alpha = a.scalar<T>(P::alpha); beta = a.scalar<T>(P::beta);
    A = a.ptr<const T>(P::a); x = a.ptr<const T>(P::x); y = a.ptr<T>(P::y);
    // Row major: the memory is A^T (n x m column major); op(A) = A is op'(A^T) with op' = T, and
    // A^T is A^T itself; A^H = conj(A^T): the conjugated problem with op' = N.
    if (a.row_major()) {
      std::swap(m, n);
      conj = trans == 'C';
      trans = trans == 'N' ? 'T' : (one_of(trans, "TC") ? 'N' : '?');
    }
  }
};

template <class T> int gemv_supports(const CallArgs& a) {
  if (bad_layout(a)) return GOFL_GPU_INVALID_ARGS;
  const Gemv<T> g(a);
  if (!one_of(g.trans, "NTC") || g.m < 0 || g.n < 0 || g.lda < max1(g.m) || g.incx == 0 || g.incy == 0)
    return GOFL_GPU_INVALID_ARGS;
  if (g.m == 0 || g.n == 0 || is_zero(g.alpha)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t gemv_bytes(const CallArgs& a) {
  const Gemv<T> g(a);
  return uint64_t(g.m * g.n + g.m + g.n) * sizeof(T);
}

template <class T> void gemv_run(Engine& e, const CallArgs& a) {
  const Gemv<T> g(a);
  const HostVec<T> x{const_cast<T*>(g.x), g.xlen(), g.incx}, y{g.y, g.ylen(), g.incy};
  const Engine::Input inA = matrix_in(e, g.A, g.m, g.n, g.lda);
  DevMem dx = e.alloc(size_t(x.len) * sizeof(T)), dy = e.alloc(size_t(y.len) * sizeof(T));
  upload_vec(e, dx.get<T>(), x, g.conj);
  // beta == 0: y is not read (NaNs in it must not propagate); cuBLAS does not read it either.
  if (!is_zero(g.beta)) upload_vec(e, dy.get<T>(), y, g.conj);
  const T alpha = conj_if(g.alpha, g.conj), beta = conj_if(g.beta, g.conj);
  e.begin_compute();
  check(x_gemv<T>(e.blas(), op_of(g.trans), g.m, g.n, cu(&alpha), cu(inA.get<T>()), inA.ld, cu(dx.get<const T>()),
                  int64_t(1), cu(&beta), cu(dy.get<T>()), int64_t(1)),
        "cublasXgemv");
  e.finish_compute();
  download_vec(e, y, dy.get<T>(), g.conj);
}

// ---- symv (real) / hemv (complex): y := alpha A x + beta y, A symmetric / Hermitian ----------------

template <class T> struct Symv {
  char uplo;
  int64_t n, lda, incx, incy;
  T alpha, beta;
  const T* A;
  const T* x;
  T* y;
  bool conj = false;

  explicit Symv(const CallArgs& a) {
    using P = std::conditional_t<is_complex<T>::value, args::hemv_c, args::symv_r>;
    uplo = a.ch(P::uplo);
    n = a.i(P::n); lda = a.i(P::lda); incx = a.i(P::incx); incy = a.i(P::incy);
    alpha = a.scalar<T>(P::alpha); beta = a.scalar<T>(P::beta);
    A = a.ptr<const T>(P::a); x = a.ptr<const T>(P::x); y = a.ptr<T>(P::y);
    // Row major: the memory is A^T, stored in the other triangle; A^T = A (symmetric), and
    // A^T = conj(A) (Hermitian: A^T is Hermitian too): the conjugated problem.
    if (a.row_major()) {
      uplo = flip_ul(uplo);
      conj = is_complex<T>::value;
    }
  }
};

template <class T> int symv_supports(const CallArgs& a) {
  if (bad_layout(a)) return GOFL_GPU_INVALID_ARGS;
  const Symv<T> s(a);
  if (!one_of(s.uplo, "UL") || s.n < 0 || s.lda < max1(s.n) || s.incx == 0 || s.incy == 0)
    return GOFL_GPU_INVALID_ARGS;
  if (s.n == 0 || is_zero(s.alpha)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t symv_bytes(const CallArgs& a) {
  const Symv<T> s(a);
  return uint64_t(s.n * s.n + 2 * s.n) * sizeof(T);
}

template <class T> void symv_run(Engine& e, const CallArgs& a) {
  const Symv<T> s(a);
  const HostVec<T> x{const_cast<T*>(s.x), s.n, s.incx}, y{s.y, s.n, s.incy};
  // symv reads A as it is (kept copies serve); hemv zeroes its diagonal's imaginary parts: a copy.
  DevMem own;
  const Engine::Input inA = is_complex<T>::value ? matrix_copy(e, s.A, s.n, s.lda, &own) : matrix_in(e, s.A, s.n, s.n, s.lda);
  if constexpr (is_complex<T>::value) zero_diag_imag(e, own.get<T>(), s.n);
  DevMem dx = e.alloc(size_t(s.n) * sizeof(T)), dy = e.alloc(size_t(s.n) * sizeof(T));
  upload_vec(e, dx.get<T>(), x, s.conj);
  if (!is_zero(s.beta)) upload_vec(e, dy.get<T>(), y, s.conj);
  const T alpha = conj_if(s.alpha, s.conj), beta = conj_if(s.beta, s.conj);
  e.begin_compute();
  check(x_symv_hemv<T>(e.blas(), fill_of(s.uplo), s.n, cu(&alpha), cu(inA.get<T>()), inA.ld, cu(dx.get<const T>()),
                       int64_t(1), cu(&beta), cu(dy.get<T>()), int64_t(1)),
        "cublasXsymv/hemv");
  e.finish_compute();
  download_vec(e, y, dy.get<T>(), s.conj);
}

// ---- trsv: x := op(A)^-1 x, A triangular ------------------------------------------------------------

template <class T> struct Trsv {
  char uplo, trans, diag;
  int64_t n, lda, incx;
  const T* A;
  T* x;
  bool conj = false;

  explicit Trsv(const CallArgs& a) {
    using P = args::trsv_r;
    uplo = a.ch(P::uplo); trans = a.ch(P::trans); diag = a.ch(P::diag);
    if (!is_complex<T>::value && trans == 'C') trans = 'T';
    n = a.i(P::n); lda = a.i(P::lda); incx = a.i(P::incx);
    A = a.ptr<const T>(P::a); x = a.ptr<T>(P::x);
    // Row major: the memory is A^T in the other triangle; A = (A^T)^T, A^T itself, and
    // A^H = conj(A^T): solving conj(A^T) x = b is solving A^T conj(x) = conj(b).
    if (a.row_major()) {
      uplo = flip_ul(uplo);
      conj = trans == 'C';
      trans = trans == 'N' ? 'T' : (one_of(trans, "TC") ? 'N' : '?');
    }
  }
};

template <class T> int trsv_supports(const CallArgs& a) {
  if (bad_layout(a)) return GOFL_GPU_INVALID_ARGS;
  const Trsv<T> t(a);
  if (!one_of(t.uplo, "UL") || !one_of(t.trans, "NTC") || !one_of(t.diag, "UN") || t.n < 0 || t.lda < max1(t.n) ||
      t.incx == 0)
    return GOFL_GPU_INVALID_ARGS;
  if (t.n == 0) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t trsv_bytes(const CallArgs& a) {
  const Trsv<T> t(a);
  return uint64_t(t.n * t.n + t.n) * sizeof(T);
}

template <class T> void trsv_run(Engine& e, const CallArgs& a) {
  const Trsv<T> t(a);
  const HostVec<T> x{t.x, t.n, t.incx};
  const Engine::Input inA = matrix_in(e, t.A, t.n, t.n, t.lda);
  DevMem dx = e.alloc(size_t(t.n) * sizeof(T));
  upload_vec(e, dx.get<T>(), x, t.conj);
  e.begin_compute();
  check(x_trsv<T>(e.blas(), fill_of(t.uplo), op_of(t.trans), diag_of(t.diag), t.n, cu(inA.get<T>()), inA.ld,
                  cu(dx.get<T>()), int64_t(1)),
        "cublasXtrsv");
  e.finish_compute();
  download_vec(e, x, dx.get<T>(), t.conj);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine gemv_body() { return {gemv_supports<T>, gemv_bytes<T>, gemv_run<T>}; }
template <class T> Routine symv_body() { return {symv_supports<T>, symv_bytes<T>, symv_run<T>}; }
template <class T> Routine hemv_body() { return {symv_supports<T>, symv_bytes<T>, symv_run<T>}; }
template <class T> Routine trsv_body() { return {trsv_supports<T>, trsv_bytes<T>, trsv_run<T>}; }

GOFL_INSTANTIATE_BLAS2

}  // namespace cuda
}  // namespace gofl
