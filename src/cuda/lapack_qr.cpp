// QR and least squares on cuSOLVER with LAPACK's exact outputs: geqrf, orgqr (s, d), ungqr (c, z), gels.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

#include "cuda/engine.h"
#include "cuda/householder64.h"
#include "cuda/lapack_common.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using namespace lapack;
namespace A = gofl::args;

static_assert(int(A::geqrf_r::info) == int(A::geqrf_c::info) && int(A::orgqr_r::info) == int(A::ungqr_c::info) &&
              int(A::orgqr_r::tau) == int(A::ungqr_c::tau) && int(A::gels_r::info) == int(A::gels_c::info),
              "real and complex argument positions differ");

// ILAENV names for the crossover queries ("DGEQRF", "ZUNGQR").
template <class T> std::string lapack_name(const char* rest) { return std::string(1, prec_letter<T>()) + rest; }

// ---- geqrf ------------------------------------------------------------------------------------------
template <class I, class T> T geqrf_query(const CallArgs& a) {
  using P = A::geqrf_r;
  using Fn = void (*)(const I*, const I*, T*, const I*, T*, T*, const I*, I*);
  const I m = I(a.i(P::m)), n = I(a.i(P::n)), lda = I(a.i(P::lda)), lwork = -1;
  I info = 0;
  T w = T(0);
  reinterpret_cast<Fn>(a.call().real)(&m, &n, a.ptr<T>(P::a), &lda, a.ptr<T>(P::tau), &w, &lwork, &info);
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "geqrf workspace query", int(info));
  return w;
}
template <class T> int geqrf_supports(const CallArgs& a) {
  using P = A::geqrf_r;
  const int64_t m = a.i(P::m), n = a.i(P::n), lda = a.i(P::lda), lwork = a.i(P::lwork);
  if (lwork == -1) return GOFL_GPU_UNSUPPORTED;  // workspace queries stay with the CPU library
  if (m < 0 || n < 0 || lda < max1(m)) return GOFL_GPU_INVALID_ARGS;
  if (std::min(m, n) == 0) return GOFL_GPU_UNSUPPORTED;  // quick return
  if (lwork < max1(n)) return GOFL_GPU_INVALID_ARGS;
  if (!a.call().real) return GOFL_GPU_UNSUPPORTED;  // no CPU library to ask for work[0]
  return GOFL_GPU_OK;
}
template <class T> uint64_t geqrf_bytes(const CallArgs& a) {
  using P = A::geqrf_r;
  const int64_t m = a.i(P::m), n = a.i(P::n);
  return mat_bytes<T>(m, n) + mat_bytes<T>(std::min(m, n), 1) + panel_bytes<T>(std::max(m, n));
}
template <class T> void geqrf_run(Engine& e, const CallArgs& a) {
  using P = A::geqrf_r;
  const int64_t m = a.i(P::m), n = a.i(P::n), lda = a.i(P::lda), k = std::min(m, n);
  T* A_ = a.ptr<T>(P::a);
  T* tau = a.ptr<T>(P::tau);
  T* work = a.ptr<T>(P::work);

  // WORK(1) after the call: IWS (lapack_common.h), from the CPU library's LWKOPT and ILAENV crossover.
  const int64_t lwkopt = work_size(a.ilp64() ? geqrf_query<int64_t, T>(a) : geqrf_query<int32_t, T>(a));
  const std::string name = lapack_name<T>("GEQRF");
  const int64_t nx = cpu_ilaenv(a, 3, name.c_str(), m, n, -1, -1, 128);
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
  a.set_i(P::info, 0);
}

// ---- orgqr / ungqr ----------------------------------------------------------------------------------
template <class I, class T> T orgqr_query(const CallArgs& a) {
  using P = A::orgqr_r;
  using Fn = void (*)(const I*, const I*, const I*, T*, const I*, const T*, T*, const I*, I*);
  const I m = I(a.i(P::m)), n = I(a.i(P::n)), k = I(a.i(P::k)), lda = I(a.i(P::lda)), lwork = -1;
  I info = 0;
  T w = T(0);
  reinterpret_cast<Fn>(a.call().real)(&m, &n, &k, a.ptr<T>(P::a), &lda, a.ptr<const T>(P::tau), &w, &lwork, &info);
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "orgqr workspace query", int(info));
  return w;
}
template <class T> int orgqr_supports(const CallArgs& a) {
  using P = A::orgqr_r;
  const int64_t m = a.i(P::m), n = a.i(P::n), k = a.i(P::k), lda = a.i(P::lda), lwork = a.i(P::lwork);
  if (lwork == -1) return GOFL_GPU_UNSUPPORTED;  // workspace queries stay with the CPU library
  if (m < 0 || n < 0 || n > m || k < 0 || k > n || lda < max1(m) || lwork < max1(n)) return GOFL_GPU_INVALID_ARGS;
  if (n == 0) return GOFL_GPU_UNSUPPORTED;  // quick return
  if (k == 0) return GOFL_GPU_UNSUPPORTED;  // Q is the identity's first columns: nothing worth a GPU trip
  if (!a.call().real) return GOFL_GPU_UNSUPPORTED;  // no CPU library to ask for work[0]
  return GOFL_GPU_OK;
}
template <class T> uint64_t orgqr_bytes(const CallArgs& a) {
  using P = A::orgqr_r;
  const int64_t m = a.i(P::m), n = a.i(P::n), k = a.i(P::k);
  // The 64-bit route: the reflectors, Q, one block of them made explicit (householder64.h).
  if (!fits_legacy(m, n)) return mat_bytes<T>(m, k) + mat_bytes<T>(m, n) + mat_bytes<T>(m, std::min<int64_t>(k, 64)) + (64u << 20);
  return mat_bytes<T>(m, n) + mat_bytes<T>(k, 1) + panel_bytes<T>(m);
}
// Beyond int sizes or element offsets (cuSOLVER's ?orgqr is 32-bit): Q built from the identity by
// the reflectors in compact WY blocks (householder64.h). Only A's reflector columns go up.
template <class T> void orgqr_run64(Engine& e, const CallArgs& a, T work0) {
  using P = A::orgqr_r;
  const int64_t m = a.i(P::m), n = a.i(P::n), k = a.i(P::k), lda = a.i(P::lda);
  T* A_ = a.ptr<T>(P::a);
  const std::vector<T> tau(a.ptr<const T>(P::tau), a.ptr<const T>(P::tau) + k);
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
  a.ptr<T>(P::work)[0] = work0;
  a.set_i(P::info, 0);
}

template <class T> void orgqr_run(Engine& e, const CallArgs& a) {
  using P = A::orgqr_r;
  const int64_t m = a.i(P::m), n = a.i(P::n), k = a.i(P::k), lda = a.i(P::lda);
  T* A_ = a.ptr<T>(P::a);
  T* work = a.ptr<T>(P::work);

  const int64_t lwkopt = work_size(a.ilp64() ? orgqr_query<int64_t, T>(a) : orgqr_query<int32_t, T>(a));
  const std::string name = lapack_name<T>(is_complex<T>::value ? "UNGQR" : "ORGQR");
  const int64_t nx = cpu_ilaenv(a, 3, name.c_str(), m, n, k, -1, 128);
  const T work0 = work_value<T>(blocked_iws(lwkopt, n, k, true, nx));
  if (use_qr64(e, m, n)) return orgqr_run64<T>(e, a, work0);

  DevMem dA = alloc_elems<T>(e, m * n);
  DevMem dtau = alloc_elems<T>(e, k);
  Infos info(e, 1);
  int lwork = 0;
  check(Qr<T>::gen_size(e.solver(), int(m), int(n), int(k), cu(dA.get<T>()), int(m), cu(dtau.get<T>()), &lwork),
        "cusolverDn?orgqr_bufferSize");
  DevMem dwork = alloc_elems<T>(e, lwork);
  e.upload(dA.get(), A_, m, n, lda, sizeof(T));
  e.upload_vec(dtau.get(), a.ptr<const T>(P::tau), sizeof(T) * size_t(k));
  e.begin_compute();
  check(Qr<T>::gen_q(e.solver(), int(m), int(n), int(k), cu(dA.get<T>()), int(m), cu(dtau.get<T>()),
                     cu(dwork.get<T>()), lwork, info.at(0)), "cusolverDn?orgqr");
  e.finish_compute();
  info.read(0, "cusolverDn?orgqr info");  // orgqr has no info > 0

  e.download(A_, dA.get(), m, n, lda, sizeof(T));
  work[0] = work0;
  a.set_i(P::info, 0);
}

// ---- gels -------------------------------------------------------------------------------------------
// All four cases run on one QR: W = A when m >= n, W = A^H when m < n (A^H = QR is A's LQ
// factorization conjugate-transposed: same reflectors and tau, so A's output is W^H as ?gelqf leaves
// it). W is p x q with p = max(m, n), q = min(m, n). Then either
//   least squares on W   (m >= n, 'N'  or  m < n, 'T'/'C'):  B := Q^H B;  B(1:q) := R^-1 B(1:q)
//   minimum norm, W^H X = B (m >= n, 'T'/'C' or m < n, 'N'):  B(1:q) := R^-H B(1:q);  B(q+1:p) := 0;  B := Q B
// which is what ?gels does with ?geqrf/?ormqr or ?gelqf/?ormlq.
template <class I, class T> T gels_query(const CallArgs& a) {
  using P = A::gels_r;
  using Fn = void (*)(const char*, const I*, const I*, const I*, T*, const I*, T*, const I*, T*, const I*, I*, size_t);
  const char t = a.ch(P::trans);
  const I m = I(a.i(P::m)), n = I(a.i(P::n)), nrhs = I(a.i(P::nrhs)), lda = I(a.i(P::lda)), ldb = I(a.i(P::ldb));
  const I lwork = -1;
  I info = 0;
  T w = T(0);
  reinterpret_cast<Fn>(a.call().real)(&t, &m, &n, &nrhs, a.ptr<T>(P::a), &lda, a.ptr<T>(P::b), &ldb, &w, &lwork,
                                      &info, 1);
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "gels workspace query", int(info));
  return w;
}
template <class T> int gels_supports(const CallArgs& a) {
  using P = A::gels_r;
  const char t = a.ch(P::trans);
  const int64_t m = a.i(P::m), n = a.i(P::n), nrhs = a.i(P::nrhs), lda = a.i(P::lda), ldb = a.i(P::ldb);
  const int64_t lwork = a.i(P::lwork), mn = std::min(m, n);
  if (lwork == -1) return GOFL_GPU_UNSUPPORTED;  // workspace queries stay with the CPU library
  // ?gels takes 'N' or 'T' (real), 'N' or 'C' (complex).
  if (t != 'N' && t != ctrans<T>()) return GOFL_GPU_INVALID_ARGS;
  if (m < 0 || n < 0 || nrhs < 0 || lda < max1(m) || ldb < max1(std::max(m, n))) return GOFL_GPU_INVALID_ARGS;
  if (lwork < max1(mn + std::max(mn, nrhs))) return GOFL_GPU_INVALID_ARGS;
  if (std::min(mn, nrhs) == 0) return GOFL_GPU_UNSUPPORTED;  // quick return (B := 0 on the CPU)
  if (!a.call().real) return GOFL_GPU_UNSUPPORTED;  // no CPU library to ask for work[0]
  return GOFL_GPU_OK;
}
template <class T> uint64_t gels_bytes(const CallArgs& a) {
  using P = A::gels_r;
  const int64_t m = a.i(P::m), n = a.i(P::n), nrhs = a.i(P::nrhs), p = std::max(m, n), q = std::min(m, n);
  const uint64_t w = m < n ? mat_bytes<T>(p, q) : 0;  // A^H beside A for the wide case
  // The 64-bit route: one block of reflectors made explicit instead of ?ormqr's workspace, and a
  // guess of Xgeqrf's (a few dozen columns).
  if (!fits_legacy(p, std::max(q, nrhs)))
    return mat_bytes<T>(m, n) + w + mat_bytes<T>(p, nrhs) + 2 * mat_bytes<T>(p, std::min<int64_t>(q, 64)) +
           mat_bytes<T>(q, q) + mat_bytes<T>(q, nrhs) + (64u << 20);  // compact R and B(1:q, :) too
  return mat_bytes<T>(m, n) + w + mat_bytes<T>(p, nrhs) + 2 * mat_bytes<T>(q, 1) + panel_bytes<T>(p) +
         mat_bytes<T>(std::max<int64_t>(nrhs, 1), 256);
}
template <class T> void gels_run(Engine& e, const CallArgs& a) {
  using P = A::gels_r;
  using R = real_t<T>;
  const char t = a.ch(P::trans);
  const int64_t m = a.i(P::m), n = a.i(P::n), nrhs = a.i(P::nrhs), lda = a.i(P::lda), ldb = a.i(P::ldb);
  T* A_ = a.ptr<T>(P::a);
  T* B = a.ptr<T>(P::b);
  T* work = a.ptr<T>(P::work);
  const bool tall = m >= n;
  const int64_t p = std::max(m, n), q = std::min(m, n);
  const bool least_squares = (t == 'N') == tall;
  const cublasOperation_t ct = op_of(ctrans<T>());

  // On success ?gels leaves WORK(1) = its query answer (WSIZE).
  const T wsize = a.ilp64() ? gels_query<int64_t, T>(a) : gels_query<int32_t, T>(a);

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
  a.set_i(P::info, zero_at);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine geqrf_body() { return {geqrf_supports<T>, geqrf_bytes<T>, geqrf_run<T>}; }
template <class T> Routine orgqr_body() { return {orgqr_supports<T>, orgqr_bytes<T>, orgqr_run<T>}; }
template <class T> Routine ungqr_body() { return {orgqr_supports<T>, orgqr_bytes<T>, orgqr_run<T>}; }
template <class T> Routine gels_body() { return {gels_supports<T>, gels_bytes<T>, gels_run<T>}; }

GOFL_INSTANTIATE_LAPACK_QR

}  // namespace cuda
}  // namespace gofl
