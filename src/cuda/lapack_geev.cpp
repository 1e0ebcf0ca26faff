// General (nonsymmetric) eigenvalues on cuSOLVER with the CPU library's semantics: geev. The rules
// every routine here follows, and the helpers it shares with the other eigenvalue, SVD and
// least-squares families: lapack_common.h.
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

namespace gofl {
namespace cuda {
namespace {

using namespace lapack;
namespace ga = gofl::args;

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
  return GOFL_GPU_OK;
}

template <class T> uint64_t bytes_geev(const CallArgs& c) {
  const uint64_t n = uint64_t(std::max<int64_t>(c.i(GeevPos<T>::n), 1));
  // A, VR, Xgeev's workspace estimate, W; with left vectors V's LU and Q.
  const bool left = c.ch(GeevPos<T>::jobvl) == 'V';
  return sizeof(T) * ((left ? 6 : 4) * n * n + 64 * n);
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
// A pair stored negative-first is flipped (its vector conjugated: the imaginary column negated, in VR
// and in VL, whose pair columns come from the same rows of V^-1).
template <class R> void canonical_pairs(R* wr, R* wi, R* vr, R* vl, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    if (wi[j] == R(0)) continue;
    if (j + 1 >= n || wr[j + 1] != wr[j] || wi[j + 1] != -wi[j])
      fail(GOFL_GPU_CUSOLVER_ERROR, "eigenvalue pairs not in LAPACK's layout");
    if (wi[j] < R(0)) {
      wi[j] = -wi[j];
      wi[j + 1] = -wi[j + 1];
      for (R* v : {vr, vl})
        if (v)
          for (int64_t k = 0; k < n; ++k) v[(j + 1) * n + k] = -v[(j + 1) * n + k];
    }
    ++j;
  }
}


template <class T> void run_geev(Engine& e, const CallArgs& c) {
  using P = GeevPos<T>;
  using R = real_t<T>;
  const WorkOut<T> q = c.ilp64() ? query_geev_as<T, int64_t>(c) : query_geev_as<T, int32_t>(c);
  const bool wantvr = c.ch(P::jobvr) == 'V', wantvl = c.ch(P::jobvl) == 'V';
  const bool vectors = wantvr || wantvl;  // left vectors are computed from the right ones
  const int64_t n = c.i(P::n), lda = c.i(P::lda), ldvr = c.i(P::ldvr), ldvl = c.i(P::ldvl);

  // W: n complex values for either input; for real input split into dWri = [wr | wi] below.
  DevMem dA = alloc_elems<T>(e, n * n), dW = alloc_elems<R>(e, 2 * n), dWri;
  DevMem dVR, dOnes;
  if (vectors) dVR = alloc_elems<T>(e, n * n);
  e.upload(dA.get(), c.ptr<T>(P::a), n, n, lda, sizeof(T));
  if (wantvl) {  // the identity's diagonal, for V^-1
    const std::vector<T> ones(static_cast<size_t>(n), T(1));
    dOnes = alloc_elems<T>(e, n);
    e.upload_vec(dOnes.get(), ones.data(), sizeof(T) * size_t(n));
  }
  e.begin_compute();
  host_pointer_mode(e);
  screen(e, dA.get<T>(), n * n, geev_bounds<R>(), true);

  Infos infos(e, 3);
  const cudaDataType tw = data_type<std::complex<R>>();
  const cusolverEigMode_t vmode = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int64_t ldvr_dev = vectors ? n : 1;
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
  // Q = V^-1 (LU of a copy of V, then solves against the identity), for the left eigenvectors.
  DevMem dLU, dQ, dPiv;
  std::unique_ptr<Work> lu_ws;
  if (wantvl) {
    dLU = alloc_elems<T>(e, n * n);
    dQ = alloc_elems<T>(e, n * n);
    dPiv = e.alloc(sizeof(int64_t) * size_t(n));
    check(cudaMemcpyAsync(dLU.get(), dVR.get(), sizeof(T) * size_t(n * n), cudaMemcpyDeviceToDevice, e.stream()),
          "cudaMemcpyAsync(V)");
    check(cudaMemsetAsync(dQ.get(), 0, sizeof(T) * size_t(n * n), e.stream()), "cudaMemsetAsync(Q)");
    check(Blas<T>::copy(e.blas(), n, cu(dOnes.get<T>()), 1, cu(dQ.get<T>()), n + 1), "cublasXcopy(identity)");
    size_t lbytes = 0, lhbytes = 0;
    check(cusolverDnXgetrf_bufferSize(e.solver(), e.params(), n, n, data_type<T>(), dLU.get(), n, data_type<T>(),
                                      &lbytes, &lhbytes),
          "cusolverDnXgetrf_bufferSize");
    lu_ws.reset(new Work(e, lbytes, lhbytes));
    check(cusolverDnXgetrf(e.solver(), e.params(), n, n, data_type<T>(), dLU.get(), n, dPiv.get<int64_t>(),
                           data_type<T>(), lu_ws->d(), lbytes, lu_ws->h(), lhbytes, infos.at(1)),
          "cusolverDnXgetrf");
    check(cusolverDnXgetrs(e.solver(), e.params(), CUBLAS_OP_N, n, n, data_type<T>(), dLU.get(), n,
                           dPiv.get<int64_t>(), data_type<T>(), dQ.get(), n, infos.at(2)),
          "cusolverDnXgetrs");
  }
  if constexpr (!cplx_v<T>) {
    dWri = alloc_elems<R>(e, 2 * n);
    check(blas_copy<R>(e.blas(), n, dW.get<R>(), 2, dWri.get<R>()), "cublasXcopy");
    check(blas_copy<R>(e.blas(), n, dW.get<R>() + 1, 2, dWri.get<R>() + n), "cublasXcopy");
  }
  e.finish_compute();
  infos.require_zero("cusolverDnXgeev info");

  std::vector<T> vr, vl;
  if (vectors) {
    vr = fetch<T>(e, dVR.get(), n * n);
    require_finite(vr.data(), n * n, "non-finite eigenvectors");
  }
  if (wantvl) {
    const std::vector<T> q = fetch<T>(e, dQ.get(), n * n);
    require_finite(q.data(), n * n, "non-finite inverse of the eigenvectors");
    // cond_1(V) = |V|_1 |V^-1|_1: beyond the bound the left vectors would not be accurate enough.
    auto norm1 = [n](const std::vector<T>& m) {
      double best = 0;
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t i = 0; i < n; ++i) s += modulus(m[size_t(i + j * n)]);
        best = std::max(best, s);
      }
      return best;
    };
    const double eps = std::numeric_limits<R>::epsilon(), tol = std::is_same_v<R, float> ? 2e-3 : 1e-8;
    if (!(norm1(vr) * norm1(q) * eps <= tol / 100)) fail(GOFL_GPU_UNSUPPORTED, "geev: eigenvectors ill-conditioned");
    vl.resize(size_t(n * n));  // VL = Q^H
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (cplx_v<T>) vl[size_t(i + j * n)] = std::conj(q[size_t(j + i * n)]);
        else vl[size_t(i + j * n)] = q[size_t(j + i * n)];
      }
  }
  std::vector<R> w = fetch<R>(e, cplx_v<T> ? dW.get() : dWri.get(), 2 * n);  // real: [wr | wi]
  require_finite(w.data(), 2 * n, "non-finite eigenvalues");
  if constexpr (cplx_v<T>) {
    if (wantvr) normalise_complex_vectors(vr.data(), n);
    if (wantvl) normalise_complex_vectors(vl.data(), n);
    // Copy-out: the eigenvalues as cuSOLVER left them.
    e.download(c.ptr<T>(P::w), dW.get(), n, 1, n, sizeof(T));
  } else {
    R *wr = w.data(), *wi = w.data() + n;
    canonical_pairs(wr, wi, vectors ? vr.data() : nullptr, wantvl ? vl.data() : nullptr, n);
    if (wantvr) normalise_real_vectors(vr.data(), wi, n);
    if (wantvl) normalise_real_vectors(vl.data(), wi, n);
    // Copy-out: the real parts as cuSOLVER left them (a flip changes only wi and VR).
    e.download(c.ptr<R>(P::wr), dWri.get(), n, 1, n, sizeof(R));
    std::memcpy(c.ptr<R>(P::wi), wi, size_t(n) * sizeof(R));
  }
  e.download(c.ptr<T>(P::a), dA.get(), n, n, lda, sizeof(T));  // overwritten, as LAPACK does
  if (wantvr) {
    T* out = c.ptr<T>(P::vr);
    for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * ldvr, vr.data() + j * n, size_t(n) * sizeof(T));
  }
  if (wantvl) {
    T* out = c.ptr<T>(P::vl);
    for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * ldvl, vl.data() + j * n, size_t(n) * sizeof(T));
  }
  q.write(c);
  c.set_i(P::info, 0);
}

}  // namespace

void register_geev() {
  Routine* r = routines();
  using C = std::complex<float>;
  using Z = std::complex<double>;
  r[OP_sgeev] = Routine{&supports_geev<float>, &bytes_geev<float>, &run_geev<float>};
  r[OP_dgeev] = Routine{&supports_geev<double>, &bytes_geev<double>, &run_geev<double>};
  r[OP_cgeev] = Routine{&supports_geev<C>, &bytes_geev<C>, &run_geev<C>};
  r[OP_zgeev] = Routine{&supports_geev<Z>, &bytes_geev<Z>, &run_geev<Z>};
}

}  // namespace cuda
}  // namespace gofl
