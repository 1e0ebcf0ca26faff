// geevx (Octave's eig of a general matrix) on the GPU with the CPU library's semantics. LAPACK's
// ?geevx is: ?gebal (balance A), the eigen-part of ?geev on the balanced matrix, ?gebak (undo the
// balancing on the eigenvectors), then geev's normalisation. Balancing and back-transform are O(n^2)
// and run as the CPU library's own ?gebal/?gebak on a host copy of A (found next to the call's CPU
// routine, lapack_common.h's cpu_routine: the backend links no CPU LAPACK), so ilo, ihi and scale
// are the CPU's to the bit, and abnrm is the CPU library's ?lange of the same balanced matrix; the
// O(n^3) part runs on the GPU exactly as geev's does (geev_core.h: Xgeev, left vectors from V^-1,
// LAPACK's pair layout and normalisation). A receives what Xgeev left of the balanced matrix.
//
// sense != 'N' (condition numbers) stays on the CPU: rconde/rcondv come from ?trsna on LAPACK's real
// Schur form T, which Xgeev does not return, and rcondv costs O(n^3) per eigenvalue (a Sylvester
// solve each) on the CPU whatever the GPU did before, so the GPU's share would not pay for its
// copies. Octave's eig asks for sense 'N' (balanc 'B', or 'N' with eig(A, "nobalance")).
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <type_traits>
#include <vector>

#include "cuda/engine.h"
#include "cuda/geev_core.h"
#include "cuda/lapack_common.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using namespace lapack;
namespace ga = gofl::args;

template <class T> using GeevxPos = std::conditional_t<cplx_v<T>, ga::geevx_c, ga::geevx_r>;

// Reference LAPACK's argument checks (dgeevx / zgeevx, 3.11 and 3.12), in its order.
int check_geevx(bool cplx, char balanc, char jobvl, char jobvr, char sense, int64_t n, int64_t lda, int64_t ldvl,
                int64_t ldvr, int64_t lwork) {
  const bool wantvl = jobvl == 'V', wantvr = jobvr == 'V';
  const bool snn = sense == 'N', sne = sense == 'E', snv = sense == 'V', snb = sense == 'B';
  if (balanc != 'N' && balanc != 'S' && balanc != 'P' && balanc != 'B') return -1;
  if (!wantvl && jobvl != 'N') return -2;
  if (!wantvr && jobvr != 'N') return -3;
  if (!(snn || sne || snv || snb) || ((sne || snb) && !(wantvl && wantvr))) return -4;
  if (n < 0) return -5;
  if (lda < std::max<int64_t>(1, n)) return -7;
  if (ldvl < 1 || (wantvl && ldvl < n)) return cplx ? -10 : -11;
  if (ldvr < 1 || (wantvr && ldvr < n)) return cplx ? -12 : -13;
  int64_t minwrk = 1;
  if (n > 0) {
    if (cplx) {
      minwrk = 2 * n;
      if (!(snn || sne)) minwrk = std::max(minwrk, n * n + 2 * n);
    } else if (!wantvl && !wantvr) {
      minwrk = 2 * n;
      if (!snn) minwrk = std::max(minwrk, n * n + 6 * n);
    } else {
      minwrk = 3 * n;
      if (!snn && !sne) minwrk = std::max(minwrk, n * n + 6 * n);
    }
  }
  if (lwork != -1 && lwork < minwrk) return cplx ? -20 : -21;
  return 0;
}

template <class T> int supports_geevx(const CallArgs& c) {
  using P = GeevxPos<T>;
  const int64_t n = c.i(P::n), lwork = c.i(P::lwork);
  if (check_geevx(cplx_v<T>, c.ch(P::balanc), c.ch(P::jobvl), c.ch(P::jobvr), c.ch(P::sense), n, c.i(P::lda),
                  c.i(P::ldvl), c.i(P::ldvr), lwork))
    return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || n <= 1 || c.ch(P::sense) != 'N') return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t bytes_geevx(const CallArgs& c) {
  const uint64_t n = uint64_t(std::max<int64_t>(c.i(GeevxPos<T>::n), 1));
  // As geev: A, VR, Xgeev's workspace estimate, W; with left vectors V's LU and Q.
  const bool left = c.ch(GeevxPos<T>::jobvl) == 'V';
  return sizeof(T) * ((left ? 6 : 4) * n * n + 64 * n);
}

template <class T, class I> WorkOut<T> query_geevx_as(const CallArgs& c) {
  using P = GeevxPos<T>;
  using R = real_t<T>;
  I m1 = -1, info = 0;
  T w0{};
  R rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, arg(c, P::balanc), arg(c, P::jobvl), arg(c, P::jobvr), arg(c, P::sense), arg(c, P::n), arg(c, P::a),
             arg(c, P::lda), arg(c, P::wr), arg(c, P::wi), arg(c, P::vl), arg(c, P::ldvl), arg(c, P::vr),
             arg(c, P::ldvr), arg(c, P::ilo), arg(c, P::ihi), arg(c, P::scale), arg(c, P::abnrm), arg(c, P::rconde),
             arg(c, P::rcondv), &w0, &m1, arg(c, P::iwork), &info, kLen, kLen, kLen, kLen);
  } else {
    call_cpu(c, arg(c, P::balanc), arg(c, P::jobvl), arg(c, P::jobvr), arg(c, P::sense), arg(c, P::n), arg(c, P::a),
             arg(c, P::lda), arg(c, P::w), arg(c, P::vl), arg(c, P::ldvl), arg(c, P::vr), arg(c, P::ldvr),
             arg(c, P::ilo), arg(c, P::ihi), arg(c, P::scale), arg(c, P::abnrm), arg(c, P::rconde), arg(c, P::rcondv),
             &w0, &m1, rw0, &info, kLen, kLen, kLen, kLen);
  }
  return query_answer<P>(int64_t(info), w0);
}

// The CPU library's balancing routines, in the call's integer width I (gfortran's hidden lengths last).
template <class T, class I> struct CpuBalancing {
  using R = real_t<T>;
  using Gebal = void (*)(const char*, const I*, T*, const I*, I*, I*, R*, I*, size_t);
  using Gebak = void (*)(const char*, const char*, const I*, const I*, const I*, const R*, const I*, T*, const I*, I*,
                         size_t, size_t);
  using Lange = R (*)(const char*, const I*, const I*, const T*, const I*, R*, size_t);  // slange: REAL
  Gebal gebal;
  Gebak gebak;
  Lange lange;
  explicit CpuBalancing(const CallArgs& c) {
    const std::string p(1, char(prec_letter<T>() - 'A' + 'a'));
    gebal = reinterpret_cast<Gebal>(cpu_routine(c, (p + "gebal").c_str()));
    gebak = reinterpret_cast<Gebak>(cpu_routine(c, (p + "gebak").c_str()));
    lange = reinterpret_cast<Lange>(cpu_routine(c, (p + "lange").c_str()));
    if (!gebal || !gebak || !lange) fail(GOFL_GPU_UNSUPPORTED, "geevx: no ?gebal/?gebak/?lange in the CPU library");
  }
};

template <class T, class I> void run_geevx_as(Engine& e, const CallArgs& c) {
  using P = GeevxPos<T>;
  using R = real_t<T>;
  const WorkOut<T> q = query_geevx_as<T, I>(c);
  const CpuBalancing<T, I> cpu(c);
  const bool wantvl = c.ch(P::jobvl) == 'V', wantvr = c.ch(P::jobvr) == 'V';
  const char balanc = c.ch(P::balanc);
  const int64_t n = c.i(P::n), lda = c.i(P::lda);
  const I nn = I(n);
  R rdum[1] = {};  // ?lange's work: referenced for the 'I' norm only

  // LAPACK scales an A whose largest entry lies outside [smlnum, bignum] (geev_bounds) before
  // balancing, and NaN takes its own way: such inputs stay with the CPU. Checked on the caller's A.
  const R anrm = cpu.lange("M", &nn, &nn, c.ptr<const T>(P::a), static_cast<const I*>(arg(c, P::lda)), rdum, 1);
  const Bounds bounds = geev_bounds<R>();
  if (!(anrm == R(0) || (double(anrm) >= bounds.lo && double(anrm) <= bounds.hi)))
    fail(GOFL_GPU_UNSUPPORTED, "input outside LAPACK's unscaled range");

  // Balance a packed copy (the caller's A stays as it was until the copy-out).
  std::vector<T> b(size_t(n * n));
  for (int64_t j = 0; j < n; ++j) std::memcpy(b.data() + j * n, c.ptr<const T>(P::a) + j * lda, sizeof(T) * size_t(n));
  std::vector<R> scale(static_cast<size_t>(n));
  I ilo = 0, ihi = 0, info = 0;
  cpu.gebal(&balanc, &nn, b.data(), &nn, &ilo, &ihi, scale.data(), &info, 1);
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "?gebal", int(info));
  const R abnrm = cpu.lange("1", &nn, &nn, b.data(), &nn, rdum, 1);

  GeevSolution<T> s = solve_geev<T>(e, b.data(), n, n, wantvl, wantvr);
  const std::pair<std::vector<T>*, const char*> sides[] = {{&s.vl, "L"}, {&s.vr, "R"}};
  for (const auto& [v, side] : sides) {
    if (v->empty()) continue;
    cpu.gebak(&balanc, side, &nn, &ilo, &ihi, scale.data(), &nn, v->data(), &nn, &info, 1, 1);
    if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "?gebak", int(info));
    require_finite(v->data(), n * n, "non-finite back-transformed eigenvectors");
  }
  normalise_vectors(s, n);

  // Copy-out: everything dgeevx writes with sense 'N' (rconde and rcondv are not referenced then).
  write_geev_outputs<T, P>(e, c, s, n);
  c.set_i(P::ilo, int64_t(ilo));
  c.set_i(P::ihi, int64_t(ihi));
  std::memcpy(c.ptr<R>(P::scale), scale.data(), sizeof(R) * size_t(n));
  *c.ptr<R>(P::abnrm) = abnrm;
  q.write(c);
  c.set_i(P::info, 0);
}

template <class T> void run_geevx(Engine& e, const CallArgs& c) {
  if (c.ilp64()) run_geevx_as<T, int64_t>(e, c);
  else run_geevx_as<T, int32_t>(e, c);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine geevx_body() { return {supports_geevx<T>, bytes_geevx<T>, run_geevx<T>}; }

GOFL_INSTANTIATE_LAPACK_GEEVX

}  // namespace cuda
}  // namespace gofl
