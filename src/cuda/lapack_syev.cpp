// Symmetric / Hermitian eigenvalues on cuSOLVER with the CPU library's semantics: syevd/heevd,
// syev/heev, syevr/heevr. The rules every routine here follows, and the helpers they share with the
// other eigenvalue, SVD and least-squares families: lapack_common.h.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "cuda/engine.h"
#include "cuda/lapack_common.h"
#include "cuda/lapack_syevd.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using namespace lapack;

// =====================================================================================================
// syevd / heevd, syev / heev
// =====================================================================================================
// The descriptor of syev (real T) or heev (complex T).
template <class T> using SyevDesc = std::conditional_t<cplx_v<T>, desc::heev<T>, desc::syev<T>>;

int check_syev(bool cplx, char jobz, char uplo, int64_t n, int64_t lda, int64_t lwork) {
  if (jobz != 'V' && jobz != 'N') return -1;
  if (uplo != 'U' && uplo != 'L') return -2;
  if (n < 0) return -3;
  if (lda < std::max<int64_t>(1, n)) return -5;
  if (lwork != -1 && lwork < std::max<int64_t>(1, cplx ? 2 * n - 1 : 3 * n - 1)) return -8;
  return 0;
}

template <class T> int supports_syev(const SyevDesc<T>& d) {
  const int64_t n = d.n, lwork = d.lwork;
  if (check_syev(cplx_v<T>, d.jobz, d.uplo, n, d.lda, lwork)) return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || n <= 1) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

// Operands, the screening copy of the triangle and cuSOLVER's syevd workspace (LAPACK's size as
// the estimate).
template <class T> uint64_t sym_eig_bytes(int64_t n) {
  const uint64_t nn = uint64_t(std::max<int64_t>(n, 1));
  return sizeof(T) * (nn * nn + nn * (nn + 1) / 2 + 2 * nn * nn + 64 * nn) + sizeof(real_t<T>) * nn;
}
template <class T> uint64_t bytes_syevd(const SyevdDesc<T>& d) { return sym_eig_bytes<T>(d.n); }
template <class T> uint64_t bytes_syev(const SyevDesc<T>& d) { return sym_eig_bytes<T>(d.n); }

template <class T, class I> WorkOut<T> query_syev_as(const gofl_call& c, const SyevDesc<T>& d) {
  using R = real_t<T>;
  const I n = I(d.n), lda = I(d.lda);
  I m1 = -1, info = 0;
  T w0{};
  R rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &d.jobz, &d.uplo, &n, d.a, &lda, d.w, &w0, &m1, &info, kLen, kLen);
  } else {
    call_cpu(c, &d.jobz, &d.uplo, &n, d.a, &lda, d.w, &w0, &m1, rw0, &info, kLen, kLen);
  }
  return query_answer(d, int64_t(info), w0);
}

// syevr/heevr cap the upper end further at 1/sqrt(sqrt(safmin)).
template <class R> Bounds syevr_bounds() {
  Bounds b = syev_bounds<R>();
  b.hi = std::min(b.hi, 1.0 / std::sqrt(std::sqrt(double(std::numeric_limits<R>::min()))));
  return b;
}

// Common to syevd/heevd and syev/heev (LAPACK's QR-iteration syev and divide-and-conquer syevd
// return the same eigenvalues and eigenvectors to working accuracy; the GPU uses Xsyevd for both).
// jobz='N': A's uplo triangle, which LAPACK destroys (it leaves dsytrd's reduction there), receives
// what Xsyevd left in it; the other triangle is never written.
// D: the descriptor of any of the four (they share jobz, uplo, n, a, lda, w and info).
template <class T, class D> void run_sym_eig(Engine& e, const D& d, const WorkOut<T>& q) {
  using R = real_t<T>;
  const bool wantz = d.jobz == 'V';
  const char uplo = d.uplo;
  const int64_t n = d.n, lda = d.lda;
  T* a = d.a;

  DevMem dA = alloc_elems<T>(e, n * n), dW = alloc_elems<R>(e, n);
  e.upload_triangle(dA.get(), a, n, lda, sizeof(T), uplo);  // only the uplo triangle is read
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
  Workspace ws(e, dbytes, hbytes);
  check(cusolverDnXsyevd(e.solver(), e.params(), mode, fill_of(uplo), n, data_type<T>(), dA.get(), n,
                         data_type<R>(), dW.get(), data_type<T>(), ws.d(), dbytes, ws.h(), hbytes, infos.at(0)),
        "cusolverDnXsyevd");
  e.finish_compute();
  infos.require_zero("cusolverDnXsyevd info");

  const std::vector<R> w = fetch<R>(e, dW.get(), n);
  require_finite(w.data(), n, "non-finite eigenvalues");

  // Copy-out: everything is validated; from here on only the caller's outputs are written.
  if (wantz) e.download(a, dA.get(), n, n, lda, sizeof(T));
  else e.download_triangle(a, dA.get(), n, lda, sizeof(T), uplo);  // destroyed, as LAPACK does
  e.download(d.w, dW.get(), n, 1, n, sizeof(R));
  q.write();
  d.info.set(0);
}

template <class T> void run_syevd(Engine& e, const gofl_call& c, const SyevdDesc<T>& d) {
  const WorkOut<T> q = query_syevd<T>(c, d);
  run_sym_eig<T>(e, d, q);
}

template <class T> void run_syev(Engine& e, const gofl_call& c, const SyevDesc<T>& d) {
  const WorkOut<T> q = d.ilp64 ? query_syev_as<T, int64_t>(c, d) : query_syev_as<T, int32_t>(c, d);
  run_sym_eig<T>(e, d, q);
}

// =====================================================================================================
// syevr / heevr: all eigenvalues (range 'A'), those in (vl, vu] ('V') or the il-th to iu-th ('I').
// Range 'A' runs Xsyevd, 'V' and 'I' run Xsyevdx (eigenvectors in the first m columns of A).
// abstol is ignored: cuSOLVER has no tolerance parameter; LAPACK uses it only to steer its
// bisection/inverse-iteration path, and both deliver eigenvalues to working accuracy.
// isuppz: LAPACK sets it only where dstemr runs (jobz='V' with range 'A', or 'I' with il=1, iu=n), as
// the support of the tridiagonal eigenvectors; cuSOLVER gives none, so it is computed from Z as
// the documented "first and last nonzero row" of each eigenvector, in those same cases only.
// A's uplo triangle, which LAPACK destroys, receives what cuSOLVER left there (the other is never written).
// =====================================================================================================
// The descriptor of syevr (real T) or heevr (complex T).
template <class T> using SyevrDesc = std::conditional_t<cplx_v<T>, desc::heevr<T>, desc::syevr<T>>;

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

template <class T> int supports_syevr(const SyevrDesc<T>& d) {
  using R = real_t<T>;
  const int64_t n = d.n, lwork = d.lwork, liwork = d.liwork;
  int64_t lrwork = 0;
  if constexpr (cplx_v<T>) lrwork = d.lrwork;
  const char range = d.range;
  // vl/vu and il/iu are only used for their range (LAPACK never touches the others).
  const R vl = range == 'V' ? d.vl : R(0), vu = range == 'V' ? d.vu : R(0);
  const int64_t il = range == 'I' ? d.il : 0, iu = range == 'I' ? d.iu : 0;
  if (check_syevr<R>(cplx_v<T>, d.jobz, range, d.uplo, n, d.lda, vl, vu, il, iu, d.ldz, lwork, lrwork, liwork))
    return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || liwork == -1 || lrwork == -1) return GOFL_GPU_UNSUPPORTED;
  if (n <= 1) return GOFL_GPU_UNSUPPORTED;
  // NaN bounds make LAPACK's interval tests all false; leave that corner to the CPU.
  if (range == 'V' && !(std::isfinite(double(vl)) && std::isfinite(double(vu)))) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t bytes_syevr(const SyevrDesc<T>& d) { return sym_eig_bytes<T>(d.n); }

template <class T, class I> WorkOut<T> query_syevr_as(const gofl_call& c, const SyevrDesc<T>& d) {
  using R = real_t<T>;
  const I n = I(d.n), lda = I(d.lda), il = I(d.il), iu = I(d.iu), ldz = I(d.ldz);
  I m1 = -1, info = 0, iw = 0, m = 0, isuppz[2] = {0, 0};
  T w0{};
  R rw0{};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &d.jobz, &d.range, &d.uplo, &n, d.a, &lda, &d.vl, &d.vu, &il, &iu, &d.abstol, &m, d.w, d.z, &ldz,
             isuppz, &w0, &m1, &iw, &m1, &info, kLen, kLen, kLen);
  } else {
    call_cpu(c, &d.jobz, &d.range, &d.uplo, &n, d.a, &lda, &d.vl, &d.vu, &il, &iu, &d.abstol, &m, d.w, d.z, &ldz,
             isuppz, &w0, &m1, &rw0, &m1, &iw, &m1, &info, kLen, kLen, kLen);
  }
  return query_answer(d, int64_t(info), w0, int64_t(iw), rw0);
}

// First and last nonzero row (1-based) of each of the m columns of z.
template <class T>
void write_isuppz(const desc::IntArray& isuppz, const T* z, int64_t ldz, int64_t n, int64_t m) {
  for (int64_t j = 0; j < m; ++j) {
    const T* col = z + j * ldz;
    int64_t first = 0, last = n - 1;
    while (first < n && col[first] == T(0)) ++first;
    while (last > first && col[last] == T(0)) --last;
    if (first == n) first = last = -1;  // a zero column cannot be an eigenvector; say "empty"
    isuppz.set(2 * j, first + 1);
    isuppz.set(2 * j + 1, last + 1);
  }
}

template <class T> void run_syevr(Engine& e, const gofl_call& c, const SyevrDesc<T>& d) {
  using R = real_t<T>;
  const WorkOut<T> q = d.ilp64 ? query_syevr_as<T, int64_t>(c, d) : query_syevr_as<T, int32_t>(c, d);
  const bool wantz = d.jobz == 'V';
  const char range = d.range, uplo = d.uplo;
  const int64_t n = d.n, lda = d.lda, ldz = d.ldz;
  R vl = range == 'V' ? d.vl : R(0), vu = range == 'V' ? d.vu : R(0);
  const int64_t il = range == 'I' ? d.il : 1, iu = range == 'I' ? d.iu : n;

  DevMem dA = alloc_elems<T>(e, n * n), dW = alloc_elems<R>(e, n);
  e.upload_triangle(dA.get(), d.a, n, lda, sizeof(T), uplo);  // only the uplo triangle is read
  e.begin_compute();
  host_pointer_mode(e);
  screen_triangle(e, dA.get<T>(), n, uplo, syevr_bounds<R>());
  zero_diag_imag(e, dA.get<T>(), n);

  Infos infos(e, 1);
  const cusolverEigMode_t mode = wantz ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  int64_t meig = n;
  size_t dbytes = 0, hbytes = 0;
  std::unique_ptr<Workspace> ws;
  if (range == 'A') {
    check(cusolverDnXsyevd_bufferSize(e.solver(), e.params(), mode, fill_of(uplo), n, data_type<T>(), dA.get(), n,
                                      data_type<R>(), dW.get(), data_type<T>(), &dbytes, &hbytes),
          "cusolverDnXsyevd_bufferSize");
    ws.reset(new Workspace(e, dbytes, hbytes));
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
    ws.reset(new Workspace(e, dbytes, hbytes));
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
    T* z = d.z;
    e.download(z, dA.get(), n, meig, ldz, sizeof(T));
    if (range == 'A' || (range == 'I' && il == 1 && iu == n)) write_isuppz(d.isuppz, z, ldz, n, meig);
  }
  e.download(d.w, dW.get(), meig, 1, meig, sizeof(R));
  e.download_triangle(d.a, dA.get(), n, lda, sizeof(T), uplo);  // destroyed, as LAPACK does
  d.m.set(meig);
  q.write();
  d.info.set(0);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine syevd_body() {
  return routine<SyevdDesc<T>, supports_syevd<T>, bytes_syevd<T>, run_syevd<T>>();
}
template <class T> Routine heevd_body() {
  return routine<SyevdDesc<T>, supports_syevd<T>, bytes_syevd<T>, run_syevd<T>>();
}
template <class T> Routine syev_body() { return routine<SyevDesc<T>, supports_syev<T>, bytes_syev<T>, run_syev<T>>(); }
template <class T> Routine heev_body() { return routine<SyevDesc<T>, supports_syev<T>, bytes_syev<T>, run_syev<T>>(); }
template <class T> Routine syevr_body() {
  return routine<SyevrDesc<T>, supports_syevr<T>, bytes_syevr<T>, run_syevr<T>>();
}
template <class T> Routine heevr_body() {
  return routine<SyevrDesc<T>, supports_syevr<T>, bytes_syevr<T>, run_syevr<T>>();
}

GOFL_INSTANTIATE_LAPACK_SYEV

}  // namespace cuda
}  // namespace gofl
