// The singular value decomposition on cuSOLVER with the CPU library's semantics: gesvd, gesdd. The
// rules every routine here follows, and the helpers they share with the other eigenvalue, SVD and
// least-squares families (xgesvd among them, which gelsd uses too): lapack_common.h.
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
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using namespace lapack;

// =====================================================================================================
// gesvd, gesdd: both on Xgesvd (cuSOLVER has no divide-and-conquer SVD; its polar-decomposition
// gesvdp may not return unitary factors for rank-deficient A, which NumPy's matrix_rank/pinv
// feed it). cuSOLVER's gesvd needs rows >= columns: for m < n the SVD of A^H is computed and its
// factors swapped and adjoined. Vectors LAPACK writes into A (jobu/jobvt/jobz = 'O') are computed
// into a separate buffer and copied into A at copy-out. Otherwise A, which LAPACK destroys, receives
// what Xgesvd left of its input (for m < n the destroyed A^H, in A's m x n shape): programs can tell
// a destroyed array from an untouched one (SciPy's overwrite_a tests do), and the copy is the cost.
// gesdd is gesvd with gesdd's outputs: 'A' and 'S' as in gesvd; 'O' with m >= n gives U in A and
// VT (n x n) in VT, with m < n U (m x m) in U and VT in A; 'N' singular values only.
// =====================================================================================================

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

template <class T> int supports_gesvd(const desc::gesvd<T>& d) {
  const int64_t m = d.m, n = d.n, lwork = d.lwork;
  if (check_gesvd(cplx_v<T>, d.jobu, d.jobvt, m, n, d.lda, d.ldu, d.ldvt, lwork)) return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || std::min(m, n) == 0) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> int supports_gesdd(const desc::gesdd<T>& d) {
  const int64_t m = d.m, n = d.n, lwork = d.lwork;
  if (check_gesdd(cplx_v<T>, d.jobz, m, n, d.lda, d.ldu, d.ldvt, lwork)) return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || std::min(m, n) == 0) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

// A, its adjoint, U (up to max(m,n)^2), VT, S and Xgesvd's workspace (estimated).
template <class T> uint64_t svd_bytes(int64_t m, int64_t n) {
  const uint64_t um = uint64_t(std::max<int64_t>(m, 1)), un = uint64_t(std::max<int64_t>(n, 1));
  return sizeof(T) * (3 * um * un + um * um + un * un + 64 * (um + un)) + sizeof(real_t<T>) * std::min(um, un);
}
template <class T> uint64_t bytes_gesvd(const desc::gesvd<T>& d) { return svd_bytes<T>(d.m, d.n); }
template <class T> uint64_t bytes_gesdd(const desc::gesdd<T>& d) { return svd_bytes<T>(d.m, d.n); }

template <class T, class I> WorkOut<T> query_gesvd_as(const gofl_call& c, const desc::gesvd<T>& d) {
  using R = real_t<T>;
  const I m = I(d.m), n = I(d.n), lda = I(d.lda), ldu = I(d.ldu), ldvt = I(d.ldvt);
  I m1 = -1, info = 0;
  T w0{};
  R rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &d.jobu, &d.jobvt, &m, &n, d.a, &lda, d.s, d.u, &ldu, d.vt, &ldvt, &w0, &m1, &info, kLen, kLen);
  } else {
    call_cpu(c, &d.jobu, &d.jobvt, &m, &n, d.a, &lda, d.s, d.u, &ldu, d.vt, &ldvt, &w0, &m1, rw0, &info, kLen, kLen);
  }
  return query_answer(d, int64_t(info), w0);
}

template <class T, class I> WorkOut<T> query_gesdd_as(const gofl_call& c, const desc::gesdd<T>& d) {
  using R = real_t<T>;
  const I m = I(d.m), n = I(d.n), lda = I(d.lda), ldu = I(d.ldu), ldvt = I(d.ldvt);
  I m1 = -1, info = 0, iw[1] = {0};
  T w0{};
  R rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &d.jobz, &m, &n, d.a, &lda, d.s, d.u, &ldu, d.vt, &ldvt, &w0, &m1, iw, &info, kLen);
  } else {
    call_cpu(c, &d.jobz, &m, &n, d.a, &lda, d.s, d.u, &ldu, d.vt, &ldvt, &w0, &m1, rw0, iw, &info, kLen);
  }
  return query_answer(d, int64_t(info), w0);
}


// gesvd/gesdd (and geev) scale when the largest entry lies outside [sqrt(safmin)/eps, its inverse].
template <class R> Bounds svd_bounds() { return geev_bounds<R>(); }


// The SVD with gesvd's job letters (never both 'O'), into the arrays of d (gesvd's or gesdd's descriptor).
template <class T, class D> void run_svd(Engine& e, const D& d, char jobu, char jobvt, const WorkOut<T>& q) {
  using R = real_t<T>;
  const int64_t m = d.m, n = d.n;
  const int64_t k = std::min(m, n), lda = d.lda;
  T* a = d.a;
  const bool tr = m < n;
  const int64_t rows = tr ? n : m, cols = k;                    // the factored matrix: A or A^H
  const char ju = tr ? jobvt : jobu, jv = tr ? jobu : jobvt;   // its jobs (A^H = V S U^H)
  const signed char cju = ju == 'N' ? 'N' : (ju == 'A' ? 'A' : 'S');
  const signed char cjv = jv == 'N' ? 'N' : 'S';               // its VT is cols x cols for 'A' and 'S'
  const int64_t ucols = cju == 'A' ? rows : cols;

  DevMem dA = alloc_elems<T>(e, m * n);
  e.upload(dA.get(), a, m, n, lda, sizeof(T));
  e.begin_compute();
  host_pointer_mode(e);
  screen(e, dA.get<T>(), m * n, svd_bounds<R>(), true);
  DevMem dAt;
  T* src = dA.get<T>();
  if (tr) {
    dAt = alloc_elems<T>(e, m * n);
    adjoint(e, src, m, n, dAt.get<T>());
    src = dAt.get<T>();
  }
  DevMem dS = alloc_elems<R>(e, k), dU, dVT;
  if (cju != 'N') dU = alloc_elems<T>(e, rows * ucols);
  if (cjv != 'N') dVT = alloc_elems<T>(e, cols * cols);
  Infos infos(e, 1);
  std::vector<std::unique_ptr<Workspace>> keep;
  xgesvd(e, cju, cjv, rows, cols, src, dS.get<R>(), dU.get<T>(), dVT.get<T>(), infos.at(0), keep);

  // A's factors: U (m x ucols_a) and VT (vrows_a x n), packed.
  const T *ua = dU.get<T>(), *vta = dVT.get<T>();
  int64_t ucols_a = ucols, vrows_a = cols;
  DevMem dUa, dVTa;
  if (tr) {  // A = (A^H)^H: U_A = VT_B^H (m x m), VT_A = U_B^H (ucols x n)
    ucols_a = m;
    vrows_a = ucols;
    if (jobu != 'N') {
      dUa = alloc_elems<T>(e, m * m);
      adjoint(e, dVT.get<T>(), m, m, dUa.get<T>());
      ua = dUa.get<T>();
    }
    if (jobvt != 'N') {
      dVTa = alloc_elems<T>(e, ucols * n);
      adjoint(e, dU.get<T>(), n, ucols, dVTa.get<T>());
      vta = dVTa.get<T>();
    }
  }
  e.finish_compute();
  infos.require_zero("cusolverDnXgesvd info");
  const std::vector<R> s = fetch<R>(e, dS.get(), k);
  require_singular_values(s.data(), k);

  // Copy-out.
  if (jobu == 'A' || jobu == 'S') e.download(d.u, ua, m, ucols_a, d.ldu, sizeof(T));
  else if (jobu == 'O') e.download(a, ua, m, k, lda, sizeof(T));
  if (jobvt == 'A' || jobvt == 'S') e.download(d.vt, vta, vrows_a, n, d.ldvt, sizeof(T));
  else if (jobvt == 'O') e.download(a, vta, k, n, lda, sizeof(T));
  e.download(d.s, dS.get(), k, 1, k, sizeof(R));
  if (jobu != 'O' && jobvt != 'O') e.download(a, src, m, n, lda, sizeof(T));  // destroyed, as LAPACK does
  q.write();
  d.info.set(0);
}

template <class T> void run_gesvd(Engine& e, const gofl_call& c, const desc::gesvd<T>& d) {
  const WorkOut<T> q = d.ilp64 ? query_gesvd_as<T, int64_t>(c, d) : query_gesvd_as<T, int32_t>(c, d);
  run_svd<T>(e, d, d.jobu, d.jobvt, q);
}

template <class T> void run_gesdd(Engine& e, const gofl_call& c, const desc::gesdd<T>& d) {
  const WorkOut<T> q = d.ilp64 ? query_gesdd_as<T, int64_t>(c, d) : query_gesdd_as<T, int32_t>(c, d);
  const char jobz = d.jobz;
  const int64_t m = d.m, n = d.n;
  char ju = jobz, jv = jobz;
  if (jobz == 'O') {  // the long side's vectors go into A
    ju = m >= n ? 'O' : 'S';
    jv = m >= n ? 'S' : 'O';
  }
  run_svd<T>(e, d, ju, jv, q);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine gesvd_body() {
  return routine<desc::gesvd<T>, supports_gesvd<T>, bytes_gesvd<T>, run_gesvd<T>>();
}
template <class T> Routine gesdd_body() {
  return routine<desc::gesdd<T>, supports_gesdd<T>, bytes_gesdd<T>, run_gesdd<T>>();
}

GOFL_INSTANTIATE_LAPACK_SVD

}  // namespace cuda
}  // namespace gofl
