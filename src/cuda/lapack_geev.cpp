// General (nonsymmetric) eigenvalues on cuSOLVER with the CPU library's semantics: geev (its
// eigen-part, shared with geevx: geev_core.h). The rules every routine here follows, and the helpers
// it shares with the other eigenvalue, SVD and least-squares families: lapack_common.h.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "cuda/engine.h"
#include "cuda/geev_core.h"
#include "cuda/lapack_common.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using namespace lapack;

// =====================================================================================================
// geev: Xgeev. cuSOLVER's Xgeev computes right eigenvectors only (jobvl must be
// CUSOLVER_EIG_MODE_NOVECTOR), and running it again on A^H would pair the two sets by matching
// eigenvalues, which is ambiguous for clustered ones. Left eigenvectors (jobvl='V') come from the
// right ones instead: with V^-1 A V = D, the rows of Q = V^-1 satisfy q_j A = lambda_j q_j, so
// VL = Q^H (real input: Q^T, which is LAPACK's packed form for a pair, u = VL(:,j) + i VL(:,j+1),
// when VR holds v = VR(:,j) + i VR(:,j+1)). Q comes from Xgetrf/Xgetrs of VR on the GPU. Its error
// grows with the condition of V: when cond_1(V) * eps exceeds 1/100 of the verify tolerance the call
// goes back to the CPU (LAPACK's back-substitution in the Schur basis does not need V's inverse).
// Real input: W comes as n complex values (the data-type combination NVIDIA's Xgeev sample uses:
// real A and VR, complex W; the computation stays real), split on the device into LAPACK's wr/wi;
// VR in LAPACK's packed real form (a complex pair's vector as consecutive columns re, im, the
// eigenvalue with positive imaginary part first). Both are checked on the host, a pair stored the
// other way round is flipped, and anything else falls back to the CPU. The eigenvectors are then
// normalised exactly as LAPACK does (Euclidean norm 1, largest component real), whatever
// normalisation cuSOLVER applied. Eigenvalue order is the order of the computed Schur form, which
// LAPACK does not specify either.
// A, which LAPACK overwrites (Schur form / Hessenberg reduction), receives what Xgeev left in it.
// =====================================================================================================
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

template <class T> int supports_geev(const desc::geev<T>& d) {
  const int64_t n = d.n, lwork = d.lwork;
  if (check_geev(cplx_v<T>, d.jobvl, d.jobvr, n, d.lda, d.ldvl, d.ldvr, lwork)) return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || n <= 1) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t bytes_geev(const desc::geev<T>& d) {
  const uint64_t n = uint64_t(std::max<int64_t>(d.n, 1));
  // A, VR, Xgeev's workspace estimate, W; with left vectors V's LU and Q.
  const bool left = d.jobvl == 'V';
  return sizeof(T) * ((left ? 6 : 4) * n * n + 64 * n);
}

template <class T, class I> WorkOut<T> query_geev_as(const gofl_call& c, const desc::geev<T>& d) {
  using R = real_t<T>;
  const I n = I(d.n), lda = I(d.lda), ldvl = I(d.ldvl), ldvr = I(d.ldvr);
  I m1 = -1, info = 0;
  T w0{};
  R rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &d.jobvl, &d.jobvr, &n, d.a, &lda, d.wr, d.wi, d.vl, &ldvl, d.vr, &ldvr, &w0, &m1, &info, kLen, kLen);
  } else {
    call_cpu(c, &d.jobvl, &d.jobvr, &n, d.a, &lda, d.w, d.vl, &ldvl, d.vr, &ldvr, &w0, &m1, rw0, &info, kLen, kLen);
  }
  return query_answer(d, int64_t(info), w0);
}

template <class T> void run_geev(Engine& e, const gofl_call& c, const desc::geev<T>& d) {
  const WorkOut<T> q = d.ilp64 ? query_geev_as<T, int64_t>(c, d) : query_geev_as<T, int32_t>(c, d);
  const int64_t n = d.n;
  GeevSolution<T> s = solve_geev<T>(e, d.a, n, d.lda, d.jobvl == 'V', d.jobvr == 'V');
  normalise_vectors(s, n);
  write_geev_outputs<T>(e, d, s, n);
  q.write();
  d.info.set(0);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine geev_body() { return routine<desc::geev<T>, supports_geev<T>, bytes_geev<T>, run_geev<T>>(); }

GOFL_INSTANTIATE_LAPACK_GEEV

}  // namespace cuda
}  // namespace gofl
