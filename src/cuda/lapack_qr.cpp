// QR and least squares on cuSOLVER with LAPACK's exact outputs: geqrf, orgqr (s, d), ungqr (c, z), gels.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
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

// The descriptor of orgqr (real T) or ungqr (complex T): the same argument list.
template <class T> using OrgqrDesc = std::conditional_t<cplx_v<T>, desc::ungqr<T>, desc::orgqr<T>>;

// Every check here also asks the call (is there a CPU library: c.real), so the routines are over the
// call (D = gofl_call) and their functions read the descriptor from it.

// ILAENV names for the crossover queries ("DGEQRF", "ZUNGQR").
template <class T> std::string lapack_name(const char* rest) { return std::string(1, prec_letter<T>()) + rest; }

// ---- geqrf ------------------------------------------------------------------------------------------
template <class I, class T> T geqrf_query(const gofl_call& c, const desc::geqrf<T>& d) {
  using Fn = void (*)(const I*, const I*, T*, const I*, T*, T*, const I*, I*);
  const I m = I(d.m), n = I(d.n), lda = I(d.lda), lwork = -1;
  I info = 0;
  T w = T(0);
  reinterpret_cast<Fn>(c.real)(&m, &n, d.a, &lda, d.tau, &w, &lwork, &info);
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "geqrf workspace query", int(info));
  return w;
}
template <class T> int geqrf_supports(const gofl_call& c) {
  const desc::geqrf<T>& d = args_of<desc::geqrf<T>>(c);
  const int64_t m = d.m, n = d.n, lda = d.lda, lwork = d.lwork;
  if (lwork == -1) return GOFL_GPU_UNSUPPORTED;  // workspace queries stay with the CPU library
  if (m < 0 || n < 0 || lda < max1(m)) return GOFL_GPU_INVALID_ARGS;
  if (std::min(m, n) == 0) return GOFL_GPU_UNSUPPORTED;  // quick return
  if (lwork < max1(n)) return GOFL_GPU_INVALID_ARGS;
  if (!c.real) return GOFL_GPU_UNSUPPORTED;  // no CPU library to ask for work[0]
  return GOFL_GPU_OK;
}
template <class T> uint64_t geqrf_bytes(const gofl_call& c) {
  const desc::geqrf<T>& d = args_of<desc::geqrf<T>>(c);
  const int64_t m = d.m, n = d.n;
  return mat_bytes<T>(m, n) + mat_bytes<T>(std::min(m, n), 1) + panel_bytes<T>(std::max(m, n));
}
template <class T> void geqrf_run(Engine& e, const gofl_call& c) {
  const desc::geqrf<T>& d = args_of<desc::geqrf<T>>(c);
  const int64_t m = d.m, n = d.n, lda = d.lda, k = std::min(m, n);
  T* A_ = d.a;
  T* tau = d.tau;
  T* work = d.work;

  // WORK(1) after the call: IWS (lapack_common.h), from the CPU library's LWKOPT and ILAENV crossover.
  const int64_t lwkopt = work_size(d.ilp64 ? geqrf_query<int64_t, T>(c, d) : geqrf_query<int32_t, T>(c, d));
  const std::string name = lapack_name<T>("GEQRF");
  const int64_t nx = cpu_ilaenv(c, 3, name.c_str(), m, n, -1, -1, 128);
  const T work0 = work_value<T>(blocked_iws(lwkopt, n, k, true, nx));

  DevMem dA = alloc_elems<T>(e, m * n);
  DevMem dtau = alloc_elems<T>(e, k);
  Infos info(e, 1);
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXgeqrf_bufferSize(e.solver(), e.params(), m, n, data_type<T>(), dA.get(), m, data_type<T>(),
                                    dtau.get(), data_type<T>(), &dbytes, &hbytes), "cusolverDnXgeqrf_bufferSize");
  Workspace w(e, dbytes, hbytes);
  e.upload(dA.get(), A_, m, n, lda, sizeof(T));
  e.begin_compute();
  check(cusolverDnXgeqrf(e.solver(), e.params(), m, n, data_type<T>(), dA.get(), m, data_type<T>(), dtau.get(),
                         data_type<T>(), w.d(), w.dev_bytes, w.h(), w.host.size(), info.at(0)), "cusolverDnXgeqrf");
  e.finish_compute();
  info.read(0, "cusolverDnXgeqrf info");  // geqrf has no info > 0

  e.download(A_, dA.get(), m, n, lda, sizeof(T));
  e.download_vec(tau, dtau.get(), sizeof(T) * size_t(k));
  work[0] = work0;
  d.info.set(0);
}

// ---- orgqr / ungqr ----------------------------------------------------------------------------------
template <class I, class T> T orgqr_query(const gofl_call& c, const OrgqrDesc<T>& d) {
  using Fn = void (*)(const I*, const I*, const I*, T*, const I*, const T*, T*, const I*, I*);
  const I m = I(d.m), n = I(d.n), k = I(d.k), lda = I(d.lda), lwork = -1;
  I info = 0;
  T w = T(0);
  reinterpret_cast<Fn>(c.real)(&m, &n, &k, d.a, &lda, d.tau, &w, &lwork, &info);
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "orgqr workspace query", int(info));
  return w;
}
template <class T> int orgqr_supports(const gofl_call& c) {
  const OrgqrDesc<T>& d = args_of<OrgqrDesc<T>>(c);
  const int64_t m = d.m, n = d.n, k = d.k, lda = d.lda, lwork = d.lwork;
  if (lwork == -1) return GOFL_GPU_UNSUPPORTED;  // workspace queries stay with the CPU library
  if (m < 0 || n < 0 || n > m || k < 0 || k > n || lda < max1(m) || lwork < max1(n)) return GOFL_GPU_INVALID_ARGS;
  if (n == 0) return GOFL_GPU_UNSUPPORTED;  // quick return
  if (k == 0) return GOFL_GPU_UNSUPPORTED;  // Q is the identity's first columns: nothing worth a GPU trip
  if (!c.real) return GOFL_GPU_UNSUPPORTED;  // no CPU library to ask for work[0]
  return GOFL_GPU_OK;
}
template <class T> uint64_t orgqr_bytes(const gofl_call& c) {
  const OrgqrDesc<T>& d = args_of<OrgqrDesc<T>>(c);
  const int64_t m = d.m, n = d.n, k = d.k;
  // The 64-bit route: the reflectors, Q, one block of them made explicit (householder64.h).
  if (!fits_legacy(m, n)) return mat_bytes<T>(m, k) + mat_bytes<T>(m, n) + mat_bytes<T>(m, std::min<int64_t>(k, 64)) + (64u << 20);
  return mat_bytes<T>(m, n) + mat_bytes<T>(k, 1) + panel_bytes<T>(m);
}
// Beyond int sizes or element offsets (cuSOLVER's ?orgqr is 32-bit): Q built from the identity by
// the reflectors in compact WY blocks (householder64.h). Only A's reflector columns go up.
template <class T> void orgqr_run64(Engine& e, const OrgqrDesc<T>& d, T work0) {
  const int64_t m = d.m, n = d.n, k = d.k, lda = d.lda;
  T* A_ = d.a;
  const std::vector<T> tau(d.tau, d.tau + k);
  const std::vector<T> ones(static_cast<size_t>(n), T(1));
  DevMem dV = alloc_elems<T>(e, m * k), dQ = alloc_elems<T>(e, m * n), dOnes = alloc_elems<T>(e, n);
  e.upload(dV.get(), A_, m, k, lda, sizeof(T));
  e.upload_vec(dOnes.get(), ones.data(), sizeof(T) * size_t(n));
  e.begin_compute();
  check(cudaMemsetAsync(dQ.get(), 0, sizeof(T) * size_t(m * n), e.stream()), "cudaMemsetAsync(Q)");
  check(x_copy<T>(e.blas(), n, cu(dOnes.get<T>()), 1, cu(dQ.get<T>()), m + 1), "cublasXcopy(identity)");
  apply_q64<T>(e, dV.get<T>(), m, tau, m, k, dQ.get<T>(), m, n, false, true);
  e.finish_compute();

  e.download(A_, dQ.get(), m, n, lda, sizeof(T));
  d.work[0] = work0;
  d.info.set(0);
}

template <class T> void orgqr_run(Engine& e, const gofl_call& c) {
  const OrgqrDesc<T>& d = args_of<OrgqrDesc<T>>(c);
  const int64_t m = d.m, n = d.n, k = d.k, lda = d.lda;
  T* A_ = d.a;
  T* work = d.work;

  const int64_t lwkopt = work_size(d.ilp64 ? orgqr_query<int64_t, T>(c, d) : orgqr_query<int32_t, T>(c, d));
  const std::string name = lapack_name<T>(is_complex<T>::value ? "UNGQR" : "ORGQR");
  const int64_t nx = cpu_ilaenv(c, 3, name.c_str(), m, n, k, -1, 128);
  const T work0 = work_value<T>(blocked_iws(lwkopt, n, k, true, nx));
  if (use_qr64(e, m, n)) return orgqr_run64<T>(e, d, work0);

  DevMem dA = alloc_elems<T>(e, m * n);
  DevMem dtau = alloc_elems<T>(e, k);
  Infos info(e, 1);
  int lwork = 0;
  check(Qr<T>::gen_size(e.solver(), int(m), int(n), int(k), cu(dA.get<T>()), int(m), cu(dtau.get<T>()), &lwork),
        "cusolverDn?orgqr_bufferSize");
  DevMem dwork = alloc_elems<T>(e, lwork);
  e.upload(dA.get(), A_, m, n, lda, sizeof(T));
  e.upload_vec(dtau.get(), d.tau, sizeof(T) * size_t(k));
  e.begin_compute();
  check(Qr<T>::gen_q(e.solver(), int(m), int(n), int(k), cu(dA.get<T>()), int(m), cu(dtau.get<T>()),
                     cu(dwork.get<T>()), lwork, info.at(0)), "cusolverDn?orgqr");
  e.finish_compute();
  info.read(0, "cusolverDn?orgqr info");  // orgqr has no info > 0

  e.download(A_, dA.get(), m, n, lda, sizeof(T));
  work[0] = work0;
  d.info.set(0);
}

// ---- gels -------------------------------------------------------------------------------------------
// All four cases run on one QR: W = A when m >= n, W = A^H when m < n (A^H = QR is A's LQ
// factorization conjugate-transposed: same reflectors and tau, so A's output is W^H as ?gelqf leaves
// it). W is p x q with p = max(m, n), q = min(m, n). Then either
//   least squares on W   (m >= n, 'N'  or  m < n, 'T'/'C'):  B := Q^H B;  B(1:q) := R^-1 B(1:q)
//   minimum norm, W^H X = B (m >= n, 'T'/'C' or m < n, 'N'):  B(1:q) := R^-H B(1:q);  B(q+1:p) := 0;  B := Q B
// which is what ?gels does with ?geqrf/?ormqr or ?gelqf/?ormlq.
template <class I, class T> T gels_query(const gofl_call& c, const desc::gels<T>& d) {
  using Fn = void (*)(const char*, const I*, const I*, const I*, T*, const I*, T*, const I*, T*, const I*, I*, size_t);
  const char t = d.trans;
  const I m = I(d.m), n = I(d.n), nrhs = I(d.nrhs), lda = I(d.lda), ldb = I(d.ldb);
  const I lwork = -1;
  I info = 0;
  T w = T(0);
  reinterpret_cast<Fn>(c.real)(&t, &m, &n, &nrhs, d.a, &lda, d.b, &ldb, &w, &lwork, &info, 1);
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "gels workspace query", int(info));
  return w;
}
template <class T> int gels_supports(const gofl_call& c) {
  const desc::gels<T>& d = args_of<desc::gels<T>>(c);
  const char t = d.trans;
  const int64_t m = d.m, n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  const int64_t lwork = d.lwork, mn = std::min(m, n);
  if (lwork == -1) return GOFL_GPU_UNSUPPORTED;  // workspace queries stay with the CPU library
  // ?gels takes 'N' or 'T' (real), 'N' or 'C' (complex).
  if (t != 'N' && t != ctrans<T>()) return GOFL_GPU_INVALID_ARGS;
  if (m < 0 || n < 0 || nrhs < 0 || lda < max1(m) || ldb < max1(std::max(m, n))) return GOFL_GPU_INVALID_ARGS;
  if (lwork < max1(mn + std::max(mn, nrhs))) return GOFL_GPU_INVALID_ARGS;
  if (std::min(mn, nrhs) == 0) return GOFL_GPU_UNSUPPORTED;  // quick return (B := 0 on the CPU)
  if (!c.real) return GOFL_GPU_UNSUPPORTED;  // no CPU library to ask for work[0]
  return GOFL_GPU_OK;
}
template <class T> uint64_t gels_bytes(const gofl_call& c) {
  const desc::gels<T>& d = args_of<desc::gels<T>>(c);
  const int64_t m = d.m, n = d.n, nrhs = d.nrhs, p = std::max(m, n), q = std::min(m, n);
  const uint64_t w = m < n ? mat_bytes<T>(p, q) : 0;  // A^H beside A for the wide case
  // The 64-bit route: one block of reflectors made explicit instead of ?ormqr's workspace, and a
  // guess of Xgeqrf's (a few dozen columns).
  if (!fits_legacy(p, std::max(q, nrhs)))
    return mat_bytes<T>(m, n) + w + mat_bytes<T>(p, nrhs) + 2 * mat_bytes<T>(p, std::min<int64_t>(q, 64)) +
           mat_bytes<T>(q, q) + mat_bytes<T>(q, nrhs) + (64u << 20);  // compact R and B(1:q, :) too
  return mat_bytes<T>(m, n) + w + mat_bytes<T>(p, nrhs) + 2 * mat_bytes<T>(q, 1) + panel_bytes<T>(p) +
         mat_bytes<T>(std::max<int64_t>(nrhs, 1), 256);
}
template <class T> void gels_run(Engine& e, const gofl_call& c) {
  using R = real_t<T>;
  const desc::gels<T>& d = args_of<desc::gels<T>>(c);
  const char t = d.trans;
  const int64_t m = d.m, n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  T* A_ = d.a;
  T* B = d.b;
  T* work = d.work;
  const bool tall = m >= n;
  const int64_t p = std::max(m, n), q = std::min(m, n);
  const bool least_squares = (t == 'N') == tall;
  const cublasOperation_t ct = op_of(ctrans<T>());

  // On success ?gels leaves WORK(1) = its query answer (WSIZE).
  const T wsize = d.ilp64 ? gels_query<int64_t, T>(c, d) : gels_query<int32_t, T>(c, d);

  // ?gels scales A and B when their largest entry lies outside [SMLNUM, BIGNUM] (and returns B = 0
  // for A = 0); those rare calls go back to the CPU library, so the GPU never needs the scaled path.
  const double smlnum = double(std::numeric_limits<R>::min()) / double(std::numeric_limits<R>::epsilon());
  const double bignum = 1.0 / smlnum;
  {
    const int64_t brow = t == 'N' ? m : n;  // rows of the right-hand sides on entry
    double bnrm = 0;
    for (int64_t j = 0; j < nrhs; ++j)
      for (int64_t i = 0; i < brow; ++i) {
        const double v = modulus(B[i + j * ldb]);
        if (!(v <= bnrm)) bnrm = v;  // NaN sticks
      }
    if (!(bnrm == 0 || (bnrm >= smlnum && bnrm <= bignum))) fail(GOFL_GPU_UNSUPPORTED, "gels: B needs scaling");
  }

  DevMem dA = alloc_elems<T>(e, m * n);
  DevMem dWide = tall ? DevMem() : alloc_elems<T>(e, p * q);
  T* W = tall ? dA.get<T>() : dWide.get<T>();
  DevMem dtau = alloc_elems<T>(e, q);
  DevMem dB = alloc_elems<T>(e, p * nrhs);
  DevMem ddiag = alloc_elems<T>(e, q);
  Infos info(e, 2);
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXgeqrf_bufferSize(e.solver(), e.params(), p, q, data_type<T>(), W, p, data_type<T>(), dtau.get(),
                                    data_type<T>(), &dbytes, &hbytes), "cusolverDnXgeqrf_bufferSize");
  Workspace wq(e, dbytes, hbytes);
  // cuSOLVER's ?ormqr where every size fits an int, else the 64-bit compact-WY route.
  const bool legacy = !use_qr64(e, p, std::max(q, nrhs));
  int lwork = 0;
  if (legacy)
    check(Qr<T>::apply_size(e.solver(), CUBLAS_SIDE_LEFT, least_squares ? ct : CUBLAS_OP_N, int(p), int(nrhs), int(q),
                            cu(W), int(p), cu(dtau.get<T>()), cu(dB.get<T>()), int(p), &lwork),
          "cusolverDn?ormqr_bufferSize");
  DevMem dwork = alloc_elems<T>(e, lwork);
  // B := op(Q) B; the 64-bit route needs tau on the host (read after Xgeqrf, a synchronisation).
  auto apply_q = [&](cublasOperation_t op) {
    if (legacy) {
      check(Qr<T>::apply_q(e.solver(), CUBLAS_SIDE_LEFT, op, int(p), int(nrhs), int(q), cu(W), int(p),
                           cu(dtau.get<T>()), cu(dB.get<T>()), int(p), cu(dwork.get<T>()), lwork, info.at(1)),
            "cusolverDn?ormqr");
      return;
    }
    std::vector<T> tau(static_cast<size_t>(q));
    e.read_small(tau.data(), dtau.get(), sizeof(T) * size_t(q));
    apply_q64<T>(e, W, p, tau, p, q, dB.get<T>(), p, nrhs, op != CUBLAS_OP_N, false);
  };

  // All p rows of B go up: rows beyond the right-hand sides are read, never trusted (zeroed below).
  e.upload(dA.get(), A_, m, n, lda, sizeof(T));
  e.upload(dB.get(), B, p, nrhs, ldb, sizeof(T));
  e.begin_compute();
  host_pointer_mode(e);
  const cu_t<T> one = cu_one<T>(), zero{};

  {  // A's largest entry: |re| + |im| (cuBLAS) is within [|a|, sqrt(2) |a|]; keep a margin of 2.
    const double s1 = abs1(largest_entry(e, dA.get<T>(), m * n));
    if (!(s1 >= 2 * smlnum && s1 <= 0.5 * bignum)) fail(GOFL_GPU_UNSUPPORTED, "gels: A needs scaling");
  }
  if (!tall) {  // W = A^H (n x m); zeroed first so the in-place beta = 0 term never sees garbage
    check(cudaMemsetAsync(W, 0, sizeof(T) * size_t(p * q), e.stream()), "cudaMemsetAsync(W)");
    check(x_geam<T>(e.blas(), ct, CUBLAS_OP_N, n, m, &one, cu(dA.get<T>()), m, &zero, cu(W), n, cu(W), n),
          "cublas?geam(A^H)");
  }
  check(cusolverDnXgeqrf(e.solver(), e.params(), p, q, data_type<T>(), W, p, data_type<T>(), dtau.get(),
                         data_type<T>(), wq.d(), wq.dev_bytes, wq.h(), wq.host.size(), info.at(0)), "cusolverDnXgeqrf");

  // R, for the diagonal check and the triangular solves. On the 64-bit route R is first copied out of
  // W into a compact q x q matrix, and the solves work on a compact copy of B's first q rows: cuBLAS's
  // trsm fails with an illegal address on a leading dimension of 1,075,000,000 (8.6 GB), through its
  // 64-bit API too (H200, CUDA 13; bench/probes/qr64_probe.cpp, step trsm).
  DevMem dRc = legacy ? DevMem() : alloc_elems<T>(e, q * q);
  if (!legacy) copy_matrix_d2d(dRc.get(), sizeof(T) * size_t(q), W, sizeof(T) * size_t(p), sizeof(T) * size_t(q), size_t(q), e.stream());
  const T* Rf = legacy ? W : dRc.get<T>();
  const int64_t ldr = legacy ? p : q;
  auto solve_r = [&](cublasOperation_t op) {  // B(1:q, :) := op(R)^-1 B(1:q, :)
    DevMem dBc = legacy ? DevMem() : alloc_elems<T>(e, q * nrhs);
    T* x = legacy ? dB.get<T>() : dBc.get<T>();
    const size_t row = sizeof(T) * size_t(q), pitch = sizeof(T) * size_t(p);
    if (!legacy) copy_matrix_d2d(x, row, dB.get(), pitch, row, size_t(nrhs), e.stream());
    check(x_trsm<T>(e.blas(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, op, CUBLAS_DIAG_NON_UNIT, q, nrhs, &one,
                        cu(Rf), ldr, cu(x), legacy ? p : q), "cublas?trsm");
    if (!legacy) copy_matrix_d2d(dB.get(), pitch, x, row, row, size_t(nrhs), e.stream());
  };

  // LAPACK's ?trtrs refuses a triangular factor with an exactly zero diagonal entry (info = its
  // index) before solving; what B holds then depends on whether Q^H was applied first.
  std::vector<T> diag(static_cast<size_t>(q));
  check(x_copy<T>(e.blas(), q, cu(Rf), ldr + 1, cu(ddiag.get<T>()), 1), "cublas?copy(diag)");
  e.read_small(diag.data(), ddiag.get(), sizeof(T) * size_t(q));
  int64_t zero_at = 0;  // 1-based, as ?trtrs reports it
  for (int64_t i = 0; i < q && !zero_at; ++i)
    if (diag[size_t(i)] == T(0)) zero_at = i + 1;

  if (least_squares) {
    apply_q(ct);
    if (!zero_at) solve_r(CUBLAS_OP_N);
  } else if (!zero_at) {
    solve_r(ct);
    if (p > q)
      zero_matrix(dB.get<T>() + q, sizeof(T) * size_t(p), sizeof(T) * size_t(p - q), size_t(nrhs), e.stream());
    apply_q(CUBLAS_OP_N);
  }
  if (!tall) {  // A := W^H, the LQ factorization ?gelqf would have left
    check(cudaMemsetAsync(dA.get(), 0, sizeof(T) * size_t(m * n), e.stream()), "cudaMemsetAsync(A)");
    check(x_geam<T>(e.blas(), ct, CUBLAS_OP_N, m, n, &one, cu(W), n, &zero, cu(dA.get<T>()), m, cu(dA.get<T>()), m),
          "cublas?geam(W^H)");
  }
  e.finish_compute();
  info.read(0, "cusolverDnXgeqrf info");
  info.read(1, "cusolverDn?ormqr info");
  // With info > 0 ?gels returns before setting WORK(1) = WSIZE: WORK(1) still holds TAU(1), which
  // ?geqrf / ?gelqf wrote there.
  T tau0 = T(0);
  if (zero_at) e.read_small(&tau0, dtau.get(), sizeof(T));

  e.download(A_, dA.get(), m, n, lda, sizeof(T));
  if (least_squares || !zero_at) e.download(B, dB.get(), p, nrhs, ldb, sizeof(T));
  work[0] = zero_at ? tau0 : wsize;
  d.info.set(zero_at);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine geqrf_body() {
  return routine<gofl_call, geqrf_supports<T>, geqrf_bytes<T>, geqrf_run<T>>();
}
template <class T> Routine orgqr_body() {
  return routine<gofl_call, orgqr_supports<T>, orgqr_bytes<T>, orgqr_run<T>>();
}
template <class T> Routine ungqr_body() {
  return routine<gofl_call, orgqr_supports<T>, orgqr_bytes<T>, orgqr_run<T>>();
}
template <class T> Routine gels_body() {
  return routine<gofl_call, gels_supports<T>, gels_bytes<T>, gels_run<T>>();
}

GOFL_INSTANTIATE_LAPACK_QR

}  // namespace cuda
}  // namespace gofl
