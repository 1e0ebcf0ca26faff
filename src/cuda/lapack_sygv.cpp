// The generalized symmetric-definite eigenproblem on cuSOLVER with the CPU library's semantics:
// sygv/hegv, sygvd/hegvd and sygvx/hegvx, itype 1 (A x = lambda B x), 2 (A B x = lambda x) and
// 3 (B A x = lambda x). The rules these routines share with the other eigenvalue families are in
// lapack_common.h; what is particular to them:
// - LAPACK's QR-iteration sygv, divide-and-conquer sygvd and expert sygvx return the same
//   eigenvalues and eigenvectors to working accuracy: the GPU runs cuSOLVER's sygvd for range 'A'
//   and sygvdx for ranges 'V' and 'I' (abstol is ignored, as in syevr: cuSOLVER has no tolerance and
//   delivers full accuracy).
// - B comes back holding its Cholesky factor in its uplo triangle, as LAPACK leaves it; the other
//   triangle of A and of B is never written. A holds the eigenvectors (sygv/sygvd, jobz 'V') or,
//   where LAPACK documents it as destroyed, what cuSOLVER left in its uplo triangle.
// - B not positive definite (LAPACK's info = n + i) or no convergence: cuSOLVER's info is nonzero
//   and the call runs on the CPU, which reports its own info and leaves its own partial results.
// - sygvx/hegvx: ifail's first m elements are zero (LAPACK's "if INFO = 0"), m eigenvalues in w and,
//   for jobz 'V', m eigenvectors in z.
// - cuSOLVER has these in its 32-bit API only: larger problems stay on the CPU.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
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

// The descriptors of the real (sygv, sygvd, sygvx) or complex (hegv, hegvd, hegvx) routines.
template <class T> using SygvDesc = std::conditional_t<cplx_v<T>, desc::hegv<T>, desc::sygv<T>>;
template <class T> using SygvdDesc = std::conditional_t<cplx_v<T>, desc::hegvd<T>, desc::sygvd<T>>;
template <class T> using SygvxDesc = std::conditional_t<cplx_v<T>, desc::hegvx<T>, desc::sygvx<T>>;

// The largest n run here: cuSOLVER's 32-bit workspace sizes (about 2 n^2 elements for sygvd's
// vectors) must fit an int.
constexpr int64_t kMaxN = 30000;

// ---- cuSOLVER by precision ---------------------------------------------------------------------------
template <class T> cusolverStatus_t sygvd_size(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t jz,
                                               cublasFillMode_t u, int n, const T* a, const T* b,
                                               const real_t<T>* w, int* lwork) {
  if constexpr (std::is_same_v<T, float>) return cusolverDnSsygvd_bufferSize(h, it, jz, u, n, a, n, b, n, w, lwork);
  else if constexpr (std::is_same_v<T, double>) return cusolverDnDsygvd_bufferSize(h, it, jz, u, n, a, n, b, n, w, lwork);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return cusolverDnChegvd_bufferSize(h, it, jz, u, n, cu(a), n, cu(b), n, w, lwork);
  else return cusolverDnZhegvd_bufferSize(h, it, jz, u, n, cu(a), n, cu(b), n, w, lwork);
}
template <class T> cusolverStatus_t sygvd(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t jz,
                                          cublasFillMode_t u, int n, T* a, T* b, real_t<T>* w, T* work, int lwork,
                                          int* info) {
  if constexpr (std::is_same_v<T, float>) return cusolverDnSsygvd(h, it, jz, u, n, a, n, b, n, w, work, lwork, info);
  else if constexpr (std::is_same_v<T, double>) return cusolverDnDsygvd(h, it, jz, u, n, a, n, b, n, w, work, lwork, info);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return cusolverDnChegvd(h, it, jz, u, n, cu(a), n, cu(b), n, w, cu(work), lwork, info);
  else return cusolverDnZhegvd(h, it, jz, u, n, cu(a), n, cu(b), n, w, cu(work), lwork, info);
}
template <class T> cusolverStatus_t sygvdx_size(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t jz,
                                                cusolverEigRange_t rg, cublasFillMode_t u, int n, const T* a,
                                                const T* b, real_t<T> vl, real_t<T> vu, int il, int iu, int* meig,
                                                const real_t<T>* w, int* lwork) {
  if constexpr (std::is_same_v<T, float>)
    return cusolverDnSsygvdx_bufferSize(h, it, jz, rg, u, n, a, n, b, n, vl, vu, il, iu, meig, w, lwork);
  else if constexpr (std::is_same_v<T, double>)
    return cusolverDnDsygvdx_bufferSize(h, it, jz, rg, u, n, a, n, b, n, vl, vu, il, iu, meig, w, lwork);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return cusolverDnChegvdx_bufferSize(h, it, jz, rg, u, n, cu(a), n, cu(b), n, vl, vu, il, iu, meig, w, lwork);
  else return cusolverDnZhegvdx_bufferSize(h, it, jz, rg, u, n, cu(a), n, cu(b), n, vl, vu, il, iu, meig, w, lwork);
}
template <class T> cusolverStatus_t sygvdx(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t jz,
                                           cusolverEigRange_t rg, cublasFillMode_t u, int n, T* a, T* b, real_t<T> vl,
                                           real_t<T> vu, int il, int iu, int* meig, real_t<T>* w, T* work, int lwork,
                                           int* info) {
  if constexpr (std::is_same_v<T, float>)
    return cusolverDnSsygvdx(h, it, jz, rg, u, n, a, n, b, n, vl, vu, il, iu, meig, w, work, lwork, info);
  else if constexpr (std::is_same_v<T, double>)
    return cusolverDnDsygvdx(h, it, jz, rg, u, n, a, n, b, n, vl, vu, il, iu, meig, w, work, lwork, info);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return cusolverDnChegvdx(h, it, jz, rg, u, n, cu(a), n, cu(b), n, vl, vu, il, iu, meig, w, cu(work), lwork, info);
  else return cusolverDnZhegvdx(h, it, jz, rg, u, n, cu(a), n, cu(b), n, vl, vu, il, iu, meig, w, cu(work), lwork, info);
}

// ---- reference LAPACK's argument checks: 0 or the (negative) info xerbla would report -----------------
// The checks every variant starts with (positions shift by one in the x variants: `x`).
inline int check_common(int64_t itype, char jobz, char uplo, int64_t n, int64_t lda, int64_t ldb, int x) {
  if (itype < 1 || itype > 3) return -1;
  if (jobz != 'V' && jobz != 'N') return -2;
  if (uplo != 'U' && uplo != 'L') return -3 - x;
  if (n < 0) return -4 - x;
  if (lda < std::max<int64_t>(1, n)) return -6 - x;
  if (ldb < std::max<int64_t>(1, n)) return -8 - x;
  return 0;
}

// What the GPU needs to know of a call, taken from its descriptor (with range 'A', il = 1 and iu = n
// for the variants without a range).
template <class T> struct Problem {
  using R = real_t<T>;
  int64_t itype = 1, n = 0, lda = 0, ldb = 0;
  char jobz = 'N', range = 'A', uplo = 'U';
  R vl = 0, vu = 0;
  int64_t il = 1, iu = 0;
  T* a = nullptr;
  T* b = nullptr;
  R* w = nullptr;
};

// Support once the arguments passed LAPACK's checks: queries and quick returns stay on the CPU.
template <class T> int supported(const Problem<T>& p, bool query) {
  if (query || p.n <= 1) return GOFL_GPU_UNSUPPORTED;
  if (p.n > kMaxN) return GOFL_GPU_UNSUPPORTED;
  // NaN bounds make LAPACK's interval tests all false; leave that corner to the CPU.
  if (p.range == 'V' && !(std::isfinite(double(p.vl)) && std::isfinite(double(p.vu)))) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

// D: the descriptor of any of the six (they share itype, jobz, uplo, n, a, lda, b, ldb and w).
template <class T, class D> Problem<T> problem_of(const D& d) {
  Problem<T> p;
  p.itype = d.itype;
  p.jobz = d.jobz;
  p.uplo = d.uplo;
  p.n = d.n;
  p.lda = d.lda;
  p.ldb = d.ldb;
  p.a = d.a;
  p.b = d.b;
  p.w = d.w;
  p.iu = p.n;
  return p;
}
template <class T> Problem<T> sygvx_problem(const SygvxDesc<T>& d) {
  Problem<T> p = problem_of<T>(d);
  p.range = d.range;
  // vl/vu and il/iu are used only for their range (LAPACK never touches the others).
  if (p.range == 'V') p.vl = d.vl, p.vu = d.vu;
  if (p.range == 'I') p.il = d.il, p.iu = d.iu;
  return p;
}

// ---- supports ------------------------------------------------------------------------------------------
template <class T> int supports_sygv(const SygvDesc<T>& d) {
  const Problem<T> p = problem_of<T>(d);
  const int64_t lwork = d.lwork;
  if (check_common(p.itype, p.jobz, p.uplo, p.n, p.lda, p.ldb, 0)) return GOFL_GPU_INVALID_ARGS;
  const int64_t lwmin = std::max<int64_t>(1, cplx_v<T> ? 2 * p.n - 1 : 3 * p.n - 1);
  if (lwork != -1 && lwork < lwmin) return GOFL_GPU_INVALID_ARGS;
  return supported(p, lwork == -1);
}

template <class T> int supports_sygvd(const SygvdDesc<T>& d) {
  const Problem<T> p = problem_of<T>(d);
  const int64_t n = p.n, lwork = d.lwork, liwork = d.liwork;
  int64_t lrwork = 0;
  if constexpr (cplx_v<T>) lrwork = d.lrwork;
  if (check_common(p.itype, p.jobz, p.uplo, n, p.lda, p.ldb, 0)) return GOFL_GPU_INVALID_ARGS;
  const bool wantz = p.jobz == 'V';
  int64_t lwmin = 1, lrwmin = 1, liwmin = 1;
  if (n > 1) {
    liwmin = wantz ? 3 + 5 * n : 1;
    if (cplx_v<T>) {
      lwmin = wantz ? 2 * n + n * n : n + 1;
      lrwmin = wantz ? 1 + 5 * n + 2 * n * n : n;
    } else {
      lwmin = wantz ? 1 + 6 * n + 2 * n * n : 2 * n + 1;
    }
  }
  const bool query = lwork == -1 || liwork == -1 || (cplx_v<T> && lrwork == -1);
  if (!query && (lwork < lwmin || (cplx_v<T> && lrwork < lrwmin) || liwork < liwmin)) return GOFL_GPU_INVALID_ARGS;
  return supported(p, query);
}

template <class T> int supports_sygvx(const SygvxDesc<T>& d) {
  const Problem<T> p = sygvx_problem<T>(d);
  const int64_t n = p.n, lwork = d.lwork, ldz = d.ldz;
  if (p.itype < 1 || p.itype > 3) return GOFL_GPU_INVALID_ARGS;
  if (p.jobz != 'V' && p.jobz != 'N') return GOFL_GPU_INVALID_ARGS;
  if (p.range != 'A' && p.range != 'V' && p.range != 'I') return GOFL_GPU_INVALID_ARGS;
  if (check_common(p.itype, p.jobz, p.uplo, n, p.lda, p.ldb, 1)) return GOFL_GPU_INVALID_ARGS;
  if (p.range == 'V' && n > 0 && p.vu <= p.vl) return GOFL_GPU_INVALID_ARGS;
  if (p.range == 'I' && (p.il < 1 || p.il > std::max<int64_t>(1, n) || p.iu < std::min(n, p.il) || p.iu > n))
    return GOFL_GPU_INVALID_ARGS;
  if (ldz < 1 || (p.jobz == 'V' && ldz < n)) return GOFL_GPU_INVALID_ARGS;
  const int64_t lwmin = std::max<int64_t>(1, cplx_v<T> ? 2 * n : 8 * n);
  if (lwork != -1 && lwork < lwmin) return GOFL_GPU_INVALID_ARGS;
  return supported(p, lwork == -1);
}

// Both matrices, the screening copy of a triangle and cuSOLVER's workspace (about LAPACK's size).
template <class T> uint64_t gen_eig_bytes(int64_t n) {
  const uint64_t nn = uint64_t(std::max<int64_t>(n, 1));
  return sizeof(T) * (2 * nn * nn + nn * (nn + 1) / 2 + 2 * nn * nn + 64 * nn) + sizeof(real_t<T>) * nn;
}
template <class T> uint64_t bytes_sygv(const SygvDesc<T>& d) { return gen_eig_bytes<T>(d.n); }
template <class T> uint64_t bytes_sygvd(const SygvdDesc<T>& d) { return gen_eig_bytes<T>(d.n); }
template <class T> uint64_t bytes_sygvx(const SygvxDesc<T>& d) { return gen_eig_bytes<T>(d.n); }

// ---- the CPU library's workspace answers -------------------------------------------------------------
template <class T, class I> WorkOut<T> query_sygv_as(const gofl_call& c, const SygvDesc<T>& d) {
  const I itype = I(d.itype), n = I(d.n), lda = I(d.lda), ldb = I(d.ldb);
  I m1 = -1, info = 0;
  T w0{};
  real_t<T> rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &itype, &d.jobz, &d.uplo, &n, d.a, &lda, d.b, &ldb, d.w, &w0, &m1, &info, kLen, kLen);
  } else {
    call_cpu(c, &itype, &d.jobz, &d.uplo, &n, d.a, &lda, d.b, &ldb, d.w, &w0, &m1, rw0, &info, kLen, kLen);
  }
  return query_answer(d, int64_t(info), w0);
}

// sygvd/hegvd answer their query with their own minimum, but after a run they leave the larger of
// that and what syevd/heevd answered inside them (LAPACK's LOPT = MAX(LOPT, WORK(1))): both are
// asked, the second under the name the program's library gives syevd/heevd.
template <class T, class I> WorkOut<T> query_sygvd_as(const gofl_call& c, const SygvdDesc<T>& d) {
  using R = real_t<T>;
  const I itype = I(d.itype), n = I(d.n), lda = I(d.lda), ldb = I(d.ldb);
  I m1 = -1, info = 0, iw = 0;
  T w0{};
  R rw0{};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &itype, &d.jobz, &d.uplo, &n, d.a, &lda, d.b, &ldb, d.w, &w0, &m1, &iw, &m1, &info, kLen, kLen);
  } else {
    call_cpu(c, &itype, &d.jobz, &d.uplo, &n, d.a, &lda, d.b, &ldb, d.w, &w0, &m1, &rw0, &m1, &iw, &m1, &info, kLen,
             kLen);
  }
  WorkOut<T> q = query_answer(d, int64_t(info), w0, int64_t(iw), rw0);

  const std::string syevd = std::string(1, char(prec_letter<T>() + ('a' - 'A'))) + (cplx_v<T> ? "heevd" : "syevd");
  void* f = cpu_routine(c, syevd.c_str());
  if (!f) fail(GOFL_GPU_UNSUPPORTED, "the CPU library's syevd/heevd");
  I e_info = 0, e_iw = 0;
  T e_w0{};
  R e_rw0{};
  if constexpr (!cplx_v<T>) {
    using Fn = void (*)(const void*, const void*, const void*, void*, const void*, void*, T*, const I*, I*, const I*,
                        I*, size_t, size_t);
    reinterpret_cast<Fn>(f)(&d.jobz, &d.uplo, &n, d.a, &lda, d.w, &e_w0, &m1, &e_iw, &m1, &e_info, kLen, kLen);
  } else {
    using Fn = void (*)(const void*, const void*, const void*, void*, const void*, void*, T*, const I*, R*, const I*,
                        I*, const I*, I*, size_t, size_t);
    reinterpret_cast<Fn>(f)(&d.jobz, &d.uplo, &n, d.a, &lda, d.w, &e_w0, &m1, &e_rw0, &m1, &e_iw, &m1, &e_info, kLen,
                            kLen);
  }
  if (e_info != 0) fail(GOFL_GPU_UNSUPPORTED, "syevd workspace query", int(e_info));
  q.work0 = work_value<T>(std::max(work_size(q.work0), work_size(e_w0)));
  q.iwork0 = std::max<int64_t>(q.iwork0, int64_t(e_iw));
  if constexpr (cplx_v<T>) q.rwork0 = R(std::max(int64_t(q.rwork0), int64_t(e_rw0)));
  return q;
}

template <class T, class I> WorkOut<T> query_sygvx_as(const gofl_call& c, const SygvxDesc<T>& d) {
  const I itype = I(d.itype), n = I(d.n), lda = I(d.lda), ldb = I(d.ldb), il = I(d.il), iu = I(d.iu),
          ldz = I(d.ldz);
  I m1 = -1, info = 0, m = 0, iw = 0, ifail = 0;
  T w0{};
  real_t<T> rw0{};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &itype, &d.jobz, &d.range, &d.uplo, &n, d.a, &lda, d.b, &ldb, &d.vl, &d.vu, &il, &iu, &d.abstol, &m,
             d.w, d.z, &ldz, &w0, &m1, &iw, &ifail, &info, kLen, kLen, kLen);
  } else {
    call_cpu(c, &itype, &d.jobz, &d.range, &d.uplo, &n, d.a, &lda, d.b, &ldb, &d.vl, &d.vu, &il, &iu, &d.abstol, &m,
             d.w, d.z, &ldz, &w0, &m1, &rw0, &iw, &ifail, &info, kLen, kLen, kLen);
  }
  return query_answer(d, int64_t(info), w0);
}

// ---- the GPU work ------------------------------------------------------------------------------------------
// Runs the problem on the device; on return dA holds the eigenvectors (jobz 'V', in its first m
// columns) or cuSOLVER's leftovers, dB the Cholesky factor, and the m eigenvalues are checked.
template <class T> struct Solved {
  DevMem dA, dB, dW;
  int64_t m = 0;
};

template <class T> Solved<T> solve_on_gpu(Engine& e, const Problem<T>& p) {
  using R = real_t<T>;
  const int64_t n = p.n;
  Solved<T> s{alloc_elems<T>(e, n * n), alloc_elems<T>(e, n * n), alloc_elems<R>(e, n), 0};
  T* const dA = static_cast<T*>(s.dA.get());
  T* const dB = static_cast<T*>(s.dB.get());
  R* const dW = static_cast<R*>(s.dW.get());
  // Only the uplo triangles are inputs: only they cross the host.
  e.upload_triangle(s.dA.get(), p.a, n, p.lda, sizeof(T), p.uplo);
  e.upload_triangle(s.dB.get(), p.b, n, p.ldb, sizeof(T), p.uplo);
  e.begin_compute();
  host_pointer_mode(e);
  // LAPACK scales the reduced matrix when its entries lie outside the safe range; cuSOLVER does not:
  // A outside it, or anything not finite, runs on the CPU.
  screen_triangle(e, dA, n, p.uplo, syev_bounds<R>());
  screen_triangle(e, dB, n, p.uplo, Bounds{0.0, std::numeric_limits<double>::max()});
  // zhegst and zpotrf read only the real part of a diagonal entry: the device copies agree.
  zero_diag_imag(e, dA, n);
  zero_diag_imag(e, dB, n);

  const cusolverEigType_t it = p.itype == 1 ? CUSOLVER_EIG_TYPE_1 : p.itype == 2 ? CUSOLVER_EIG_TYPE_2 : CUSOLVER_EIG_TYPE_3;
  const cusolverEigMode_t jz = p.jobz == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int ni = int(n);
  Infos infos(e, 1);
  int lwork = 0, meig = ni;
  if (p.range == 'A') {
    check(sygvd_size<T>(e.solver(), it, jz, fill_of(p.uplo), ni, dA, dB, dW, &lwork),
          "cusolverDnXsygvd_bufferSize");
    DevMem work = alloc_elems<T>(e, lwork);
    check(sygvd<T>(e.solver(), it, jz, fill_of(p.uplo), ni, dA, dB, dW, static_cast<T*>(work.get()),
                   lwork, infos.at(0)),
          "cusolverDnXsygvd");
    e.finish_compute();
  } else {
    const cusolverEigRange_t rg = p.range == 'V' ? CUSOLVER_EIG_RANGE_V : CUSOLVER_EIG_RANGE_I;
    const int il = int(p.il), iu = int(p.iu);
    check(sygvdx_size<T>(e.solver(), it, jz, rg, fill_of(p.uplo), ni, dA, dB, p.vl, p.vu, il,
                         iu, &meig, dW, &lwork),
          "cusolverDnXsygvdx_bufferSize");
    DevMem work = alloc_elems<T>(e, lwork);
    check(sygvdx<T>(e.solver(), it, jz, rg, fill_of(p.uplo), ni, dA, dB, p.vl, p.vu, il, iu,
                    &meig, dW, static_cast<T*>(work.get()), lwork, infos.at(0)),
          "cusolverDnXsygvdx");
    e.finish_compute();
  }
  infos.require_zero(p.range == 'A' ? "cusolverDnXsygvd info" : "cusolverDnXsygvdx info");
  if (meig < 0 || meig > ni || (p.range == 'I' && int64_t(meig) != p.iu - p.il + 1))
    fail(GOFL_GPU_CUSOLVER_ERROR, "cusolverDnXsygvdx meig", meig);
  s.m = meig;

  const std::vector<R> w = fetch<R>(e, s.dW.get(), s.m);
  require_finite(w.data(), s.m, "non-finite eigenvalues");
  for (int64_t j = 1; j < s.m; ++j)
    if (w[size_t(j)] < w[size_t(j - 1)]) fail(GOFL_GPU_CUSOLVER_ERROR, "eigenvalues not ascending");
  return s;
}

// Copy-out common to every variant: B's factor, the eigenvalues and A (eigenvectors in place, or
// its uplo triangle where LAPACK destroys it).
template <class T> void write_common(Engine& e, const Problem<T>& p, const Solved<T>& s, bool vectors_in_a) {
  const int64_t n = p.n;
  if (vectors_in_a) e.download(p.a, s.dA.get(), n, n, p.lda, sizeof(T));
  else e.download_triangle(p.a, s.dA.get(), n, p.lda, sizeof(T), p.uplo);  // destroyed, as LAPACK does
  e.download_triangle(p.b, s.dB.get(), n, p.ldb, sizeof(T), p.uplo);       // the Cholesky factor
  e.download(p.w, s.dW.get(), s.m, 1, s.m, sizeof(real_t<T>));
}

template <class T> void run_sygv(Engine& e, const gofl_call& c, const SygvDesc<T>& d) {
  const WorkOut<T> q = d.ilp64 ? query_sygv_as<T, int64_t>(c, d) : query_sygv_as<T, int32_t>(c, d);
  const Problem<T> p = problem_of<T>(d);
  const Solved<T> s = solve_on_gpu<T>(e, p);
  write_common<T>(e, p, s, p.jobz == 'V');
  q.write();
  d.info.set(0);
}

template <class T> void run_sygvd(Engine& e, const gofl_call& c, const SygvdDesc<T>& d) {
  const WorkOut<T> q = d.ilp64 ? query_sygvd_as<T, int64_t>(c, d) : query_sygvd_as<T, int32_t>(c, d);
  const Problem<T> p = problem_of<T>(d);
  const Solved<T> s = solve_on_gpu<T>(e, p);
  write_common<T>(e, p, s, p.jobz == 'V');
  q.write();
  d.info.set(0);
}

template <class T> void run_sygvx(Engine& e, const gofl_call& c, const SygvxDesc<T>& d) {
  const WorkOut<T> q = d.ilp64 ? query_sygvx_as<T, int64_t>(c, d) : query_sygvx_as<T, int32_t>(c, d);
  const Problem<T> p = sygvx_problem<T>(d);
  const Solved<T> s = solve_on_gpu<T>(e, p);
  write_common<T>(e, p, s, false);
  if (p.jobz == 'V' && s.m > 0) {
    e.download(d.z, s.dA.get(), p.n, s.m, d.ldz, sizeof(T));
    for (int64_t i = 0; i < s.m; ++i) d.ifail.set(i, 0);
  }
  d.m.set(s.m);
  q.write();
  d.info.set(0);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine sygv_body() { return routine<SygvDesc<T>, supports_sygv<T>, bytes_sygv<T>, run_sygv<T>>(); }
template <class T> Routine hegv_body() { return routine<SygvDesc<T>, supports_sygv<T>, bytes_sygv<T>, run_sygv<T>>(); }
template <class T> Routine sygvd_body() {
  return routine<SygvdDesc<T>, supports_sygvd<T>, bytes_sygvd<T>, run_sygvd<T>>();
}
template <class T> Routine hegvd_body() {
  return routine<SygvdDesc<T>, supports_sygvd<T>, bytes_sygvd<T>, run_sygvd<T>>();
}
template <class T> Routine sygvx_body() {
  return routine<SygvxDesc<T>, supports_sygvx<T>, bytes_sygvx<T>, run_sygvx<T>>();
}
template <class T> Routine hegvx_body() {
  return routine<SygvxDesc<T>, supports_sygvx<T>, bytes_sygvx<T>, run_sygvx<T>>();
}

GOFL_INSTANTIATE_LAPACK_SYGV

}  // namespace cuda
}  // namespace gofl
