// Minimum-norm least squares on cuSOLVER with the CPU library's semantics: gelsd. The rules every
// routine here follows, and the helpers it shares with the other eigenvalue, SVD and least-squares
// families: lapack_common.h.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "cuda/engine.h"
#include "cuda/householder64.h"
#include "cuda/lapack_common.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using namespace lapack;

// =====================================================================================================
// gelsd: minimum-norm least squares through the SVD, following LAPACK's structure so that every
// output means the same: for m >= n, B := Q^H B after a QR of A (skipped when square), so rows
// n+1..m of B hold the residual's components as in LAPACK (NumPy's lstsq sums their squares for
// its residuals); the n x n factor R is solved through its SVD. For m < n the same runs on A^H
// (A = R^H Q^H) and the solution is Q applied to [y; 0]. rank counts the singular values above
// rcnd * s_max with LAPACK's rcnd: rcond itself when 0 < rcond < 1, else DLAMCH('Epsilon').
// A, which LAPACK destroys, receives what the GPU left of it: the QR factors of A (m > n) or of A^H
// (m < n, in A's m x n shape), or what the SVD left of A (m = n).
// =====================================================================================================
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

template <class T> int supports_gelsd(const desc::gelsd<T>& d) {
  const int64_t m = d.m, n = d.n, nrhs = d.nrhs, lwork = d.lwork;
  if (check_gelsd(cplx_v<T>, m, n, nrhs, d.lda, d.ldb, lwork)) return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1) return GOFL_GPU_UNSUPPORTED;
  // Quick returns, and LAPACK's special rank rule for a single singular value (rank 1 unless zero).
  if (std::min(m, n) < 2 || nrhs == 0) return GOFL_GPU_UNSUPPORTED;
  if (std::isnan(double(d.rcond))) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t bytes_gelsd(const desc::gelsd<T>& d) {
  const uint64_t m = uint64_t(std::max<int64_t>(d.m, 1)), n = uint64_t(std::max<int64_t>(d.n, 1));
  const uint64_t r = uint64_t(std::max<int64_t>(d.nrhs, 1)), k = std::min(m, n), mx = std::max(m, n);
  // Within int sizes cuSOLVER's ?ormqr applies Q (a workspace of up to 64 (mx + r)); beyond them Q
  // is applied in blocks of 64 reflectors made explicit (householder64.h) and Xgeqrf's workspace does
  // not grow with the rows (6 MB at 1,075,000,000 x 2): 64 MB covers it.
  const bool legacy = fits_legacy(int64_t(mx), int64_t(std::max(k, r)));
  const uint64_t q_work = legacy ? 64 * (mx + r) : mx * std::min<uint64_t>(k, 64) + (uint64_t(8) << 20);
  const uint64_t a_copies = m < n ? 2 : 1;  // A, and A^H for the wide case
  // k x k: U, V^H and R, upper_triangle's corner and packed copies (1.5) beside them, gesvd's workspace.
  return sizeof(T) * (a_copies * m * n + 7 * k * k + 2 * mx * r + 4 * k * r + 64 * (k + r) + q_work) +
         sizeof(real_t<T>) * k;
}

template <class T, class I> WorkOut<T> query_gelsd_as(const gofl_call& c, const desc::gelsd<T>& d) {
  using R = real_t<T>;
  const I m = I(d.m), n = I(d.n), nrhs = I(d.nrhs), lda = I(d.lda), ldb = I(d.ldb);
  I m1 = -1, info = 0, rank = 0, iw = 0;
  T w0{};
  R rw0{};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &m, &n, &nrhs, d.a, &lda, d.b, &ldb, d.s, &d.rcond, &rank, &w0, &m1, &iw, &info);
  } else {
    call_cpu(c, &m, &n, &nrhs, d.a, &lda, d.b, &ldb, d.s, &d.rcond, &rank, &w0, &m1, &rw0, &iw, &info);
  }
  return query_answer(d, int64_t(info), w0, int64_t(iw), rw0);
}

// c = op(a) b (m x n; alpha 1, beta 0).
template <class T>
cublasStatus_t multiply(cublasHandle_t h, cublasOperation_t ta, int64_t m, int64_t n, int64_t k, const T* a,
                        int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc) {
  const T one(1), zero(0);
  return x_gemm<T>(h, ta, CUBLAS_OP_N, m, n, k, cu(&one), cu(a), lda, cu(b), ldb, cu(&zero), cu(c), ldc);
}

// c = diag(x) a (m x n, leading dimensions m).
template <class T> cublasStatus_t scale_rows(cublasHandle_t h, int64_t m, int64_t n, const T* a, const T* x, T* c) {
  return x_dgmm<T>(h, CUBLAS_SIDE_LEFT, m, n, cu(a), m, cu(x), 1, cu(c), m);
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
void xgeqrf(Engine& e, int64_t rows, int64_t cols, T* a, T* tau, int* info,
            std::vector<std::unique_ptr<Workspace>>& keep) {
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXgeqrf_bufferSize(e.solver(), e.params(), rows, cols, data_type<T>(), a, rows, data_type<T>(), tau,
                                    data_type<T>(), &dbytes, &hbytes),
        "cusolverDnXgeqrf_bufferSize");
  keep.emplace_back(new Workspace(e, dbytes, hbytes));
  Workspace& ws = *keep.back();
  check(cusolverDnXgeqrf(e.solver(), e.params(), rows, cols, data_type<T>(), a, rows, data_type<T>(), tau,
                         data_type<T>(), ws.d(), dbytes, ws.h(), hbytes, info),
        "cusolverDnXgeqrf");
}

// c (rows x n, leading dimension rows) := op(Q) c, Q from xgeqrf of the rows x k matrix a: cuSOLVER's
// ?ormqr where every size fits an int, else the 64-bit compact-WY route (tau read back first).
template <class T>
void apply_q(Engine& e, cublasOperation_t op, int64_t rows, int64_t n, int64_t k, const T* a, const T* tau, T* c,
             int* info, std::vector<std::unique_ptr<Workspace>>& keep) {
  if (use_qr64(e, rows, std::max(n, k))) {
    std::vector<T> h(static_cast<size_t>(k));
    e.read_small(h.data(), tau, sizeof(T) * size_t(k));
    apply_q64<T>(e, a, rows, h, rows, k, c, rows, n, op != CUBLAS_OP_N, false);
    return;
  }
  int lwork = 0;
  check(solver_ormqr_size<T>(e.solver(), op, int(rows), int(n), int(k), a, int(rows), tau, c, int(rows), &lwork),
        "cusolverDnXormqr_bufferSize");
  keep.emplace_back(new Workspace(e, size_t(std::max(lwork, 1)) * sizeof(T), 0));
  check(solver_ormqr<T>(e.solver(), op, int(rows), int(n), int(k), a, int(rows), tau, c, int(rows),
                        static_cast<T*>(keep.back()->d()), lwork, info),
        "cusolverDnXormqr");
}

// out (k x k, zeroed below the diagonal) = the upper triangle of a (leading dimension lda, which may
// exceed an int: the k x k corner is copied out first, trttp/tpttr then work on leading dimension k).
template <class T> void upper_triangle(Engine& e, const T* a, int64_t lda, int64_t k, T* out) {
  DevMem packed = alloc_elems<T>(e, k * (k + 1) / 2), corner = alloc_elems<T>(e, k * k);
  copy_matrix_d2d(corner.get(), sizeof(T) * size_t(k), a, sizeof(T) * size_t(lda), sizeof(T) * size_t(k), size_t(k),
                  e.stream());
  check(cudaMemsetAsync(out, 0, size_t(k * k) * sizeof(T), e.stream()), "cudaMemsetAsync");
  check(x_trttp<T>(e.blas(), CUBLAS_FILL_MODE_UPPER, int(k), cu(corner.get<T>()), int(k), cu(packed.get<T>())),
        "cublasXtrttp");
  check(x_tpttr<T>(e.blas(), CUBLAS_FILL_MODE_UPPER, int(k), cu(packed.get<T>()), cu(out), int(k)), "cublasXtpttr");
  // `packed` and `corner` return to the pool here; the stream orders their reuse after tpttr.
}

// gelsd scales A and B when their largest entries lie outside [safmin/eps, its inverse].
template <class R> Bounds gelsd_bounds() {
  const double smlnum = double(std::numeric_limits<R>::min()) / double(std::numeric_limits<R>::epsilon());
  return Bounds{smlnum, 1.0 / smlnum};
}

template <class T> void run_gelsd(Engine& e, const gofl_call& c, const desc::gelsd<T>& d) {
  using R = real_t<T>;
  const WorkOut<T> q = d.ilp64 ? query_gelsd_as<T, int64_t>(c, d) : query_gelsd_as<T, int32_t>(c, d);
  const int64_t m = d.m, n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  const int64_t k = std::min(m, n);
  const R rcond = d.rcond;
  T *a = d.a, *b = d.b;
  const cublasOperation_t adj = cplx_v<T> ? CUBLAS_OP_C : CUBLAS_OP_T;

  DevMem dA = alloc_elems<T>(e, m * n), dB = alloc_elems<T>(e, m * nrhs);
  e.upload(dA.get(), a, m, n, lda, sizeof(T));
  e.upload(dB.get(), b, m, nrhs, ldb, sizeof(T));
  e.begin_compute();
  host_pointer_mode(e);
  screen(e, dA.get<T>(), m * n, gelsd_bounds<R>(), false);  // A = 0: LAPACK's zero-solution path
  screen(e, dB.get<T>(), m * nrhs, gelsd_bounds<R>(), true);

  Infos infos(e, 3);
  std::vector<std::unique_ptr<Workspace>> keep;
  DevMem dAt, dTau, dR, dU = alloc_elems<T>(e, k * k), dVT = alloc_elems<T>(e, k * k), dS = alloc_elems<R>(e, k);
  // The k x k factor whose SVD is taken: R of A = QR (m > n), of A^H = QR (m < n), or A itself.
  T* f = dA.get<T>();
  if (m != n) {
    dTau = alloc_elems<T>(e, k);
    dR = alloc_elems<T>(e, k * k);
    if (m > n) {
      xgeqrf(e, m, n, dA.get<T>(), dTau.get<T>(), infos.at(0), keep);
      apply_q(e, adj, m, nrhs, n, dA.get<T>(), dTau.get<T>(), dB.get<T>(), infos.at(1), keep);  // B := Q^H B
      upper_triangle(e, dA.get<T>(), m, n, dR.get<T>());
    } else {
      dAt = alloc_elems<T>(e, n * m);
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
  DevMem dInv = alloc_elems<T>(e, k), dT = alloc_elems<T>(e, k * nrhs), dT2 = alloc_elems<T>(e, k * nrhs);
  e.upload_vec(dInv.get(), inv.data(), size_t(k) * sizeof(T));
  DevMem dX;
  if (m >= n) {
    // x = V S^+ U^H c with c = (Q^H b)(1:n): into the first n rows of B; rows n+1..m keep Q^H b. c is
    // worked on in a compact n x nrhs copy: cuBLAS fails on leading dimensions of several GB (see
    // ?gels in lapack_qr.cpp).
    DevMem dC = alloc_elems<T>(e, n * nrhs);
    const size_t row = sizeof(T) * size_t(n), pitch = sizeof(T) * size_t(m);
    copy_matrix_d2d(dC.get(), row, dB.get(), pitch, row, size_t(nrhs), e.stream());
    check(multiply<T>(e.blas(), adj, n, nrhs, n, dU.get<T>(), n, dC.get<T>(), n, dT.get<T>(), n), "cublasXgemm");
    check(scale_rows<T>(e.blas(), n, nrhs, dT.get<T>(), dInv.get<T>(), dT2.get<T>()), "cublasXdgmm");
    check(multiply<T>(e.blas(), adj, n, nrhs, n, dVT.get<T>(), n, dT2.get<T>(), n, dC.get<T>(), n), "cublasXgemm");
    copy_matrix_d2d(dB.get(), pitch, dC.get(), row, row, size_t(nrhs), e.stream());
  } else {
    // A = R^H Q^H with R = U S V^H: x = Q [U S^+ V^H b; 0].
    dX = alloc_elems<T>(e, n * nrhs);
    check(cudaMemsetAsync(dX.get(), 0, size_t(n * nrhs) * sizeof(T), e.stream()), "cudaMemsetAsync");
    check(multiply<T>(e.blas(), CUBLAS_OP_N, m, nrhs, m, dVT.get<T>(), m, dB.get<T>(), m, dT.get<T>(), m), "cublasXgemm");
    check(scale_rows<T>(e.blas(), m, nrhs, dT.get<T>(), dInv.get<T>(), dT2.get<T>()), "cublasXdgmm");
    check(multiply<T>(e.blas(), CUBLAS_OP_N, m, nrhs, m, dU.get<T>(), m, dT2.get<T>(), m, dX.get<T>(), n), "cublasXgemm");
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
  e.download(d.s, dS.get(), k, 1, k, sizeof(R));
  e.download(a, m >= n ? dA.get() : dAt.get(), m, n, lda, sizeof(T));  // destroyed, as LAPACK does
  d.rank.set(rank);
  q.write();
  d.info.set(0);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine gelsd_body() {
  return routine<desc::gelsd<T>, supports_gelsd<T>, bytes_gelsd<T>, run_gelsd<T>>();
}

GOFL_INSTANTIATE_LAPACK_GELSD

}  // namespace cuda
}  // namespace gofl
