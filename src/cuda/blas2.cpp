// Level-2 BLAS on cuBLAS: gemv, symv (s/d), hemv (c/z), trsv, Fortran and CBLAS. They read each
// matrix element once, so they are bound by memory speed: worth the GPU when the matrix is already
// there (kept device copies: resident.h). Each routine uploads its matrix in one place, upload_matrix().
//
// Vectors: BLAS semantics, any non-zero increment. A negative increment walks the vector backwards
// from its last element in memory (the array's lowest address is the vector's last element). The
// device always holds the vector packed in its logical order and cuBLAS gets increment 1, so no
// cuBLAS rule on negative increments is relied on: the host gathers and scatters.
//
// Row-major CBLAS calls arrive mapped to the column-major call on the same memory (the transposed
// matrix; the descriptor's mapping, generated/descs.h). Where that needs the conjugate of the stored
// matrix (gemv and trsv with ConjTrans, hemv), the descriptor says so (desc::Head::conj) and the
// problem is conjugated instead: conj(op(A)) x = conj(op(A) conj(x)), so x (and y, alpha, beta) go
// in conjugated and y (x for trsv) comes back conjugated. Conjugation flips a sign bit: the result
// is the exact conjugate of the conjugated problem's.
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

using namespace blas_args;  // one_of, max1, is_zero (blas_args.h)

// A real routine's 'C' is 'T' (the descriptor keeps the caller's flag).
template <class T> char real_conj_is_trans(char trans) { return !is_complex<T>::value && trans == 'C' ? 'T' : trans; }

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
// The same for a square A of which the routine reads only the uplo triangle (symv, trsv): an
// upload copies only that triangle on the host (Engine::input_triangle).
template <class T> Engine::Input triangle_in(Engine& e, const T* A, int64_t n, int64_t lda, char uplo) {
  return e.input_triangle(A, n, lda, sizeof(T), uplo);
}
// A private device copy of A's uplo triangle the routine may change (hemv zeroes the diagonal's
// imaginary parts).
template <class T> Engine::Input matrix_copy(Engine& e, const T* A, int64_t n, int64_t lda, char uplo, DevMem* own) {
  *own = e.alloc(size_t(n * n) * sizeof(T));
  e.upload_triangle(own->get(), A, n, lda, sizeof(T), uplo);
  Engine::Input in;
  in.dev = own->get();
  in.ld = n;
  return in;
}

// ---- gemv: y := alpha op(A) x + beta y ------------------------------------------------------------

// Row major (the descriptor's mapping): the memory is A^T (n x m column major); op(A) = A is op'(A^T)
// with op' = T, and A^T is A^T itself; A^H = conj(A^T): the conjugated problem (d.conj) with op' = N.
// d.m x d.n is A as column-major memory (row major: the caller's n x m); x's and y's lengths:
template <class T> int64_t gemv_xlen(const desc::gemv<T>& d) { return d.trans == 'N' ? d.n : d.m; }
template <class T> int64_t gemv_ylen(const desc::gemv<T>& d) { return d.trans == 'N' ? d.m : d.n; }

template <class T> int gemv_supports(const desc::gemv<T>& d) {
  if (!d.layout_ok) return GOFL_GPU_INVALID_ARGS;
  if (!one_of(d.trans, "NTC") || d.m < 0 || d.n < 0 || d.lda < max1(d.m) || d.incx == 0 || d.incy == 0)
    return GOFL_GPU_INVALID_ARGS;
  if (d.m == 0 || d.n == 0 || is_zero(d.alpha)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t gemv_bytes(const desc::gemv<T>& d) {
  return uint64_t(d.m * d.n + d.m + d.n) * sizeof(T);
}

template <class T> void gemv_run(Engine& e, const desc::gemv<T>& d) {
  const char trans = real_conj_is_trans<T>(d.trans);
  const HostVec<T> x{const_cast<T*>(d.x), gemv_xlen(d), d.incx}, y{d.y, gemv_ylen(d), d.incy};
  const Engine::Input inA = matrix_in(e, d.a, d.m, d.n, d.lda);
  DevMem dx = e.alloc(size_t(x.len) * sizeof(T)), dy = e.alloc(size_t(y.len) * sizeof(T));
  upload_vec(e, dx.get<T>(), x, d.conj);
  // beta == 0: y is not read (NaNs in it must not propagate); cuBLAS does not read it either.
  if (!is_zero(d.beta)) upload_vec(e, dy.get<T>(), y, d.conj);
  const T alpha = conj_if(d.alpha, d.conj), beta = conj_if(d.beta, d.conj);
  e.begin_compute();
  check(x_gemv<T>(e.blas(), op_of(trans), d.m, d.n, cu(&alpha), cu(inA.get<T>()), inA.ld, cu(dx.get<const T>()),
                  int64_t(1), cu(&beta), cu(dy.get<T>()), int64_t(1)),
        "cublasXgemv");
  e.finish_compute();
  download_vec(e, y, dy.get<T>(), d.conj);
}

// ---- symv (real) / hemv (complex): y := alpha A x + beta y, A symmetric / Hermitian ----------------

// Row major (the descriptor's mapping): the memory is A^T, stored in the other triangle; A^T = A
// (symmetric), and A^T = conj(A) (Hermitian: A^T is Hermitian too): the conjugated problem (d.conj).
template <class T> using SymvDesc = std::conditional_t<is_complex<T>::value, desc::hemv<T>, desc::symv<T>>;

template <class T> int symv_supports(const SymvDesc<T>& d) {
  if (!d.layout_ok) return GOFL_GPU_INVALID_ARGS;
  if (!one_of(d.uplo, "UL") || d.n < 0 || d.lda < max1(d.n) || d.incx == 0 || d.incy == 0)
    return GOFL_GPU_INVALID_ARGS;
  if (d.n == 0 || is_zero(d.alpha)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t symv_bytes(const SymvDesc<T>& d) {
  return uint64_t(d.n * d.n + 2 * d.n) * sizeof(T);
}

template <class T> void symv_run(Engine& e, const SymvDesc<T>& d) {
  const HostVec<T> x{const_cast<T*>(d.x), d.n, d.incx}, y{d.y, d.n, d.incy};
  // symv reads A's triangle as it is (kept copies serve); hemv zeroes its diagonal's imaginary parts:
  // a copy.
  DevMem own;
  const Engine::Input inA =
      is_complex<T>::value ? matrix_copy(e, d.a, d.n, d.lda, d.uplo, &own) : triangle_in(e, d.a, d.n, d.lda, d.uplo);
  if constexpr (is_complex<T>::value) zero_diag_imag(e, own.get<T>(), d.n);
  DevMem dx = e.alloc(size_t(d.n) * sizeof(T)), dy = e.alloc(size_t(d.n) * sizeof(T));
  upload_vec(e, dx.get<T>(), x, d.conj);
  if (!is_zero(d.beta)) upload_vec(e, dy.get<T>(), y, d.conj);
  const T alpha = conj_if(d.alpha, d.conj), beta = conj_if(d.beta, d.conj);
  e.begin_compute();
  check(x_symv_hemv<T>(e.blas(), fill_of(d.uplo), d.n, cu(&alpha), cu(inA.get<T>()), inA.ld, cu(dx.get<const T>()),
                       int64_t(1), cu(&beta), cu(dy.get<T>()), int64_t(1)),
        "cublasXsymv/hemv");
  e.finish_compute();
  download_vec(e, y, dy.get<T>(), d.conj);
}

// ---- trsv: x := op(A)^-1 x, A triangular ------------------------------------------------------------

// Row major (the descriptor's mapping): the memory is A^T in the other triangle; A = (A^T)^T, A^T
// itself, and A^H = conj(A^T): solving conj(A^T) x = b is solving A^T conj(x) = conj(b) (d.conj).
template <class T> int trsv_supports(const desc::trsv<T>& d) {
  if (!d.layout_ok) return GOFL_GPU_INVALID_ARGS;
  if (!one_of(d.uplo, "UL") || !one_of(d.trans, "NTC") || !one_of(d.diag, "UN") || d.n < 0 || d.lda < max1(d.n) ||
      d.incx == 0)
    return GOFL_GPU_INVALID_ARGS;
  if (d.n == 0) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t trsv_bytes(const desc::trsv<T>& d) {
  return uint64_t(d.n * d.n + d.n) * sizeof(T);
}

template <class T> void trsv_run(Engine& e, const desc::trsv<T>& d) {
  const char trans = real_conj_is_trans<T>(d.trans);
  const HostVec<T> x{d.x, d.n, d.incx};
  const Engine::Input inA = triangle_in(e, d.a, d.n, d.lda, d.uplo);
  DevMem dx = e.alloc(size_t(d.n) * sizeof(T));
  upload_vec(e, dx.get<T>(), x, d.conj);
  e.begin_compute();
  check(x_trsv<T>(e.blas(), fill_of(d.uplo), op_of(trans), diag_of(d.diag), d.n, cu(inA.get<T>()), inA.ld,
                  cu(dx.get<T>()), int64_t(1)),
        "cublasXtrsv");
  e.finish_compute();
  download_vec(e, x, dx.get<T>(), d.conj);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine gemv_body() { return routine<desc::gemv<T>, gemv_supports<T>, gemv_bytes<T>, gemv_run<T>>(); }
template <class T> Routine symv_body() { return routine<SymvDesc<T>, symv_supports<T>, symv_bytes<T>, symv_run<T>>(); }
template <class T> Routine hemv_body() { return routine<SymvDesc<T>, symv_supports<T>, symv_bytes<T>, symv_run<T>>(); }
template <class T> Routine trsv_body() { return routine<desc::trsv<T>, trsv_supports<T>, trsv_bytes<T>, trsv_run<T>>(); }

GOFL_INSTANTIATE_BLAS2

}  // namespace cuda
}  // namespace gofl
