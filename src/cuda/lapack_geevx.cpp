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

template <class T> int supports_geevx(const desc::geevx<T>& d) {
  const int64_t n = d.n, lwork = d.lwork;
  if (check_geevx(cplx_v<T>, d.balanc, d.jobvl, d.jobvr, d.sense, n, d.lda, d.ldvl, d.ldvr, lwork))
    return GOFL_GPU_INVALID_ARGS;
  if (lwork == -1 || n <= 1 || d.sense != 'N') return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t bytes_geevx(const desc::geevx<T>& d) {
  const uint64_t n = uint64_t(std::max<int64_t>(d.n, 1));
  // As geev: A, VR, Xgeev's workspace estimate, W; with left vectors V's LU and Q.
  const bool left = d.jobvl == 'V';
  return sizeof(T) * ((left ? 6 : 4) * n * n + 64 * n);
}

template <class T, class I> WorkOut<T> query_geevx_as(const gofl_call& c, const desc::geevx<T>& d) {
  using R = real_t<T>;
  const I n = I(d.n), lda = I(d.lda), ldvl = I(d.ldvl), ldvr = I(d.ldvr);
  I* ilo = static_cast<I*>(d.ilo.p);  // the caller's own ilo/ihi, passed through to the query
  I* ihi = static_cast<I*>(d.ihi.p);
  I m1 = -1, info = 0;
  T w0{};
  R rw0[1] = {};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &d.balanc, &d.jobvl, &d.jobvr, &d.sense, &n, d.a, &lda, d.wr, d.wi, d.vl, &ldvl, d.vr, &ldvr, ilo,
             ihi, d.scale, d.abnrm, d.rconde, d.rcondv, &w0, &m1, d.iwork.template as<I>(), &info, kLen, kLen, kLen,
             kLen);
  } else {
    call_cpu(c, &d.balanc, &d.jobvl, &d.jobvr, &d.sense, &n, d.a, &lda, d.w, d.vl, &ldvl, d.vr, &ldvr, ilo, ihi,
             d.scale, d.abnrm, d.rconde, d.rcondv, &w0, &m1, rw0, &info, kLen, kLen, kLen, kLen);
  }
  return query_answer(d, int64_t(info), w0);
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
  explicit CpuBalancing(const gofl_call& c) {
    const std::string p(1, char(prec_letter<T>() - 'A' + 'a'));
    gebal = reinterpret_cast<Gebal>(cpu_routine(c, (p + "gebal").c_str()));
    gebak = reinterpret_cast<Gebak>(cpu_routine(c, (p + "gebak").c_str()));
    lange = reinterpret_cast<Lange>(cpu_routine(c, (p + "lange").c_str()));
    if (!gebal || !gebak || !lange) fail(GOFL_GPU_UNSUPPORTED, "geevx: no ?gebal/?gebak/?lange in the CPU library");
  }
};

template <class T, class I> void run_geevx_as(Engine& e, const gofl_call& c, const desc::geevx<T>& d) {
  using R = real_t<T>;
  const WorkOut<T> q = query_geevx_as<T, I>(c, d);
  const CpuBalancing<T, I> cpu(c);
  const bool wantvl = d.jobvl == 'V', wantvr = d.jobvr == 'V';
  const char balanc = d.balanc;
  const int64_t n = d.n, lda = d.lda;
  const I nn = I(n), ilda = I(lda);
  R rdum[1] = {};  // ?lange's work: referenced for the 'I' norm only

  // LAPACK scales an A whose largest entry lies outside [smlnum, bignum] (geev_bounds) before
  // balancing, and NaN takes its own way: such inputs stay with the CPU. Checked on the caller's A.
  const R anrm = cpu.lange("M", &nn, &nn, d.a, &ilda, rdum, 1);
  const Bounds bounds = geev_bounds<R>();
  if (!(anrm == R(0) || (double(anrm) >= bounds.lo && double(anrm) <= bounds.hi)))
    fail(GOFL_GPU_UNSUPPORTED, "input outside LAPACK's unscaled range");

  // Balance a packed copy (the caller's A stays as it was until the copy-out).
  std::vector<T> b(size_t(n * n));
  for (int64_t j = 0; j < n; ++j) std::memcpy(b.data() + j * n, d.a + j * lda, sizeof(T) * size_t(n));
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
  write_geev_outputs<T>(e, d, s, n);
  d.ilo.set(int64_t(ilo));
  d.ihi.set(int64_t(ihi));
  std::memcpy(d.scale, scale.data(), sizeof(R) * size_t(n));
  *d.abnrm = abnrm;
  q.write();
  d.info.set(0);
}

template <class T> void run_geevx(Engine& e, const gofl_call& c, const desc::geevx<T>& d) {
  if (d.ilp64) run_geevx_as<T, int64_t>(e, c, d);
  else run_geevx_as<T, int32_t>(e, c, d);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine geevx_body() {
  return routine<desc::geevx<T>, supports_geevx<T>, bytes_geevx<T>, run_geevx<T>>();
}

GOFL_INSTANTIATE_LAPACK_GEEVX

}  // namespace cuda
}  // namespace gofl
