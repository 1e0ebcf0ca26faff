// The eigen-part that geev (lapack_geev.cpp) and geevx (lapack_geevx.cpp) share: Xgeev of an n x n
// host matrix on the GPU, the left eigenvectors from the right ones, LAPACK's layout of conjugate
// pairs, and LAPACK's normalisation of the vectors (which geevx applies after its back-transform).
// Why it is done this way: the comment at geev in lapack_geev.cpp.
#pragma once

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
namespace lapack {

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


// What the GPU computed for an n x n matrix, checked, before anything reaches the caller.
template <class T> struct GeevSolution {
  DevMem dA;     // what Xgeev left of A: LAPACK's A on exit
  DevMem dWout;  // the eigenvalues as the caller receives them: complex w, or real wr
  std::vector<real_t<T>> w;  // host copy: complex: n interleaved values; real: [wr | wi], pairs canonical
  std::vector<T> vr, vl;     // packed n x n (leading dimension n), not yet normalised; empty unless asked
};

// Xgeev of the host matrix `a` (n x n, leading dimension lda), right vectors when wantvr or wantvl,
// left ones as V^-H. Only reads `a`; throws Failure on anything the CPU must redo.
template <class T> GeevSolution<T> solve_geev(Engine& e, const T* a, int64_t n, int64_t lda, bool wantvl, bool wantvr) {
  using R = real_t<T>;
  const bool vectors = wantvr || wantvl;  // left vectors are computed from the right ones
  GeevSolution<T> s;
  // W: n complex values for either input; for real input split into dWri = [wr | wi] below.
  DevMem dW = alloc_elems<R>(e, 2 * n), dWri;
  DevMem dVR, dOnes;
  s.dA = alloc_elems<T>(e, n * n);
  if (vectors) dVR = alloc_elems<T>(e, n * n);
  e.upload(s.dA.get(), a, n, n, lda, sizeof(T));
  if (wantvl) {  // the identity's diagonal, for V^-1
    const std::vector<T> ones(static_cast<size_t>(n), T(1));
    dOnes = alloc_elems<T>(e, n);
    e.upload_vec(dOnes.get(), ones.data(), sizeof(T) * size_t(n));
  }
  e.begin_compute();
  host_pointer_mode(e);
  screen(e, s.dA.template get<T>(), n * n, geev_bounds<R>(), true);

  Infos infos(e, 3);
  const cudaDataType tw = data_type<std::complex<R>>();
  const cusolverEigMode_t vmode = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int64_t ldvr_dev = vectors ? n : 1;
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXgeev_bufferSize(e.solver(), e.params(), CUSOLVER_EIG_MODE_NOVECTOR, vmode, n, data_type<T>(),
                                   s.dA.get(), n, tw, dW.get(), data_type<T>(), nullptr, 1, data_type<T>(), dVR.get(),
                                   ldvr_dev, data_type<T>(), &dbytes, &hbytes),
        "cusolverDnXgeev_bufferSize");
  Workspace ws(e, dbytes, hbytes);
  check(cusolverDnXgeev(e.solver(), e.params(), CUSOLVER_EIG_MODE_NOVECTOR, vmode, n, data_type<T>(), s.dA.get(), n,
                        tw, dW.get(), data_type<T>(), nullptr, 1, data_type<T>(), dVR.get(), ldvr_dev, data_type<T>(),
                        ws.d(), dbytes, ws.h(), hbytes, infos.at(0)),
        "cusolverDnXgeev");
  // Q = V^-1 (LU of a copy of V, then solves against the identity), for the left eigenvectors.
  DevMem dLU, dQ, dPiv;
  std::unique_ptr<Workspace> lu_ws;
  if (wantvl) {
    dLU = alloc_elems<T>(e, n * n);
    dQ = alloc_elems<T>(e, n * n);
    dPiv = e.alloc(sizeof(int64_t) * size_t(n));
    check(cudaMemcpyAsync(dLU.get(), dVR.get(), sizeof(T) * size_t(n * n), cudaMemcpyDeviceToDevice, e.stream()),
          "cudaMemcpyAsync(V)");
    check(cudaMemsetAsync(dQ.get(), 0, sizeof(T) * size_t(n * n), e.stream()), "cudaMemsetAsync(Q)");
    check(x_copy<T>(e.blas(), n, cu(dOnes.get<T>()), 1, cu(dQ.get<T>()), n + 1), "cublasXcopy(identity)");
    size_t lbytes = 0, lhbytes = 0;
    check(cusolverDnXgetrf_bufferSize(e.solver(), e.params(), n, n, data_type<T>(), dLU.get(), n, data_type<T>(),
                                      &lbytes, &lhbytes),
          "cusolverDnXgetrf_bufferSize");
    lu_ws.reset(new Workspace(e, lbytes, lhbytes));
    check(cusolverDnXgetrf(e.solver(), e.params(), n, n, data_type<T>(), dLU.get(), n, dPiv.get<int64_t>(),
                           data_type<T>(), lu_ws->d(), lbytes, lu_ws->h(), lhbytes, infos.at(1)),
          "cusolverDnXgetrf");
    check(cusolverDnXgetrs(e.solver(), e.params(), CUBLAS_OP_N, n, n, data_type<T>(), dLU.get(), n,
                           dPiv.get<int64_t>(), data_type<T>(), dQ.get(), n, infos.at(2)),
          "cusolverDnXgetrs");
  }
  if constexpr (!cplx_v<T>) {
    dWri = alloc_elems<R>(e, 2 * n);
    check(x_copy<R>(e.blas(), n, dW.get<R>(), 2, dWri.get<R>(), 1), "cublasXcopy");
    check(x_copy<R>(e.blas(), n, dW.get<R>() + 1, 2, dWri.get<R>() + n, 1), "cublasXcopy");
  }
  e.finish_compute();
  infos.require_zero("cusolverDnXgeev info");

  if (vectors) {
    s.vr = fetch<T>(e, dVR.get(), n * n);
    require_finite(s.vr.data(), n * n, "non-finite eigenvectors");
  }
  if (wantvl) {
    const std::vector<T> q = fetch<T>(e, dQ.get(), n * n);
    require_finite(q.data(), n * n, "non-finite inverse of the eigenvectors");
    // cond_1(V) = |V|_1 |V^-1|_1: beyond the bound the left vectors would not be accurate enough.
    auto norm1 = [n](const std::vector<T>& m) {
      double best = 0;
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += modulus(m[size_t(i + j * n)]);
        best = std::max(best, sum);
      }
      return best;
    };
    const double eps = std::numeric_limits<R>::epsilon(), tol = std::is_same_v<R, float> ? 2e-3 : 1e-8;
    if (!(norm1(s.vr) * norm1(q) * eps <= tol / 100)) fail(GOFL_GPU_UNSUPPORTED, "geev: eigenvectors ill-conditioned");
    s.vl.resize(size_t(n * n));  // VL = Q^H
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (cplx_v<T>) s.vl[size_t(i + j * n)] = std::conj(q[size_t(j + i * n)]);
        else s.vl[size_t(i + j * n)] = q[size_t(j + i * n)];
      }
  }
  s.w = fetch<R>(e, cplx_v<T> ? dW.get() : dWri.get(), 2 * n);  // real: [wr | wi]
  require_finite(s.w.data(), 2 * n, "non-finite eigenvalues");
  if constexpr (!cplx_v<T>) {
    canonical_pairs(s.w.data(), s.w.data() + n, vectors ? s.vr.data() : nullptr, wantvl ? s.vl.data() : nullptr, n);
    s.dWout = std::move(dWri);  // the real parts as cuSOLVER left them (a flip changes only wi and V)
  } else {
    s.dWout = std::move(dW);
  }
  if (!wantvr) s.vr.clear();
  return s;
}

// LAPACK's normalisation of the asked-for vectors (norm 1, largest component real).
template <class T> void normalise_vectors(GeevSolution<T>& s, int64_t n) {
  for (std::vector<T>* v : {&s.vr, &s.vl}) {
    if (v->empty()) continue;
    if constexpr (cplx_v<T>) normalise_complex_vectors(v->data(), n);
    else normalise_real_vectors(v->data(), s.w.data() + n, n);
  }
}

// Copy-out of what geev and geevx share: eigenvalues, A as Xgeev left it, the vectors into the
// caller's arrays (leading dimensions ldvl, ldvr; only n x n written). D is geev's or geevx's
// descriptor: complex T writes w, real T wr/wi.
template <class T, class D> void write_geev_outputs(Engine& e, const D& d, const GeevSolution<T>& s, int64_t n) {
  using R = real_t<T>;
  if constexpr (cplx_v<T>) {
    e.download(d.w, s.dWout.get(), n, 1, n, sizeof(T));
  } else {
    e.download(d.wr, s.dWout.get(), n, 1, n, sizeof(R));
    std::memcpy(d.wi, s.w.data() + n, size_t(n) * sizeof(R));
  }
  e.download(d.a, s.dA.get(), n, n, d.lda, sizeof(T));  // overwritten, as LAPACK does
  auto put = [&](const std::vector<T>& v, T* out, int64_t ld) {
    for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * ld, v.data() + j * n, size_t(n) * sizeof(T));
  };
  if (!s.vr.empty()) put(s.vr, d.vr, d.ldvr);
  if (!s.vl.empty()) put(s.vl, d.vl, d.ldvl);
}

}  // namespace lapack
}  // namespace cuda
}  // namespace gofl
