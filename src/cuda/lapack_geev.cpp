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
// geev: Xgeev. Left eigenvectors (jobvl='V') are UNSUPPORTED: cuSOLVER's Xgeev computes right
// eigenvectors only (jobvl must be CUSOLVER_EIG_MODE_NOVECTOR), and running it again on A^H would
// pair the two sets by matching eigenvalues, which is ambiguous for clustered ones.
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
  if (jobvl == 'V') return GOFL_GPU_UNSUPPORTED;  // Xgeev has no left eigenvectors (see above)
  return GOFL_GPU_OK;
}

template <class T> uint64_t bytes_geev(const CallArgs& c) {
  const uint64_t n = uint64_t(std::max<int64_t>(c.i(GeevPos<T>::n), 1));
  return sizeof(T) * (4 * n * n + 64 * n);  // A, VR, Xgeev's workspace estimate, W
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
// A pair stored negative-first is flipped (its vector conjugated: the imaginary column negated).
template <class R> void canonical_pairs(R* wr, R* wi, R* vr, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    if (wi[j] == R(0)) continue;
    if (j + 1 >= n || wr[j + 1] != wr[j] || wi[j + 1] != -wi[j])
      fail(GOFL_GPU_CUSOLVER_ERROR, "eigenvalue pairs not in LAPACK's layout");
    if (wi[j] < R(0)) {
      wi[j] = -wi[j];
      wi[j + 1] = -wi[j + 1];
      if (vr)
        for (int64_t k = 0; k < n; ++k) vr[(j + 1) * n + k] = -vr[(j + 1) * n + k];
    }
    ++j;
  }
}


template <class T> void run_geev(Engine& e, const CallArgs& c) {
  using P = GeevPos<T>;
  using R = real_t<T>;
  const WorkOut<T> q = c.ilp64() ? query_geev_as<T, int64_t>(c) : query_geev_as<T, int32_t>(c);
  const bool wantvr = c.ch(P::jobvr) == 'V';
  const int64_t n = c.i(P::n), lda = c.i(P::lda), ldvr = c.i(P::ldvr);

  // W: n complex values for either input; for real input split into dWri = [wr | wi] below.
  DevMem dA = alloc_elems<T>(e, n * n), dW = alloc_elems<R>(e, 2 * n), dWri;
  DevMem dVR;
  if (wantvr) dVR = alloc_elems<T>(e, n * n);
  e.upload(dA.get(), c.ptr<T>(P::a), n, n, lda, sizeof(T));
  e.begin_compute();
  host_pointer_mode(e);
  screen(e, dA.get<T>(), n * n, geev_bounds<R>(), true);

  Infos infos(e, 1);
  const cudaDataType tw = data_type<std::complex<R>>();
  const cusolverEigMode_t vmode = wantvr ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int64_t ldvr_dev = wantvr ? n : 1;
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
  if constexpr (!cplx_v<T>) {
    dWri = alloc_elems<R>(e, 2 * n);
    check(blas_copy<R>(e.blas(), n, dW.get<R>(), 2, dWri.get<R>()), "cublasXcopy");
    check(blas_copy<R>(e.blas(), n, dW.get<R>() + 1, 2, dWri.get<R>() + n), "cublasXcopy");
  }
  e.finish_compute();
  infos.require_zero("cusolverDnXgeev info");

  std::vector<T> vr;
  if (wantvr) {
    vr = fetch<T>(e, dVR.get(), n * n);
    require_finite(vr.data(), n * n, "non-finite eigenvectors");
  }
  std::vector<R> w = fetch<R>(e, cplx_v<T> ? dW.get() : dWri.get(), 2 * n);  // real: [wr | wi]
  require_finite(w.data(), 2 * n, "non-finite eigenvalues");
  if constexpr (cplx_v<T>) {
    if (wantvr) normalise_complex_vectors(vr.data(), n);
    // Copy-out: the eigenvalues as cuSOLVER left them.
    e.download(c.ptr<T>(P::w), dW.get(), n, 1, n, sizeof(T));
  } else {
    R *wr = w.data(), *wi = w.data() + n;
    canonical_pairs(wr, wi, wantvr ? vr.data() : nullptr, n);
    if (wantvr) normalise_real_vectors(vr.data(), wi, n);
    // Copy-out: the real parts as cuSOLVER left them (a flip changes only wi and VR).
    e.download(c.ptr<R>(P::wr), dWri.get(), n, 1, n, sizeof(R));
    std::memcpy(c.ptr<R>(P::wi), wi, size_t(n) * sizeof(R));
  }
  e.download(c.ptr<T>(P::a), dA.get(), n, n, lda, sizeof(T));  // overwritten, as LAPACK does
  if (wantvr) {
    T* out = c.ptr<T>(P::vr);
    for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * ldvr, vr.data() + j * n, size_t(n) * sizeof(T));
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
