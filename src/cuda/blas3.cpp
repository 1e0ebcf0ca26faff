// Level-3 BLAS on cuBLAS: gemm symm hemm syrk herk syr2k her2k trmm trsm, s/d/c/z, Fortran and
// CBLAS. Row-major CBLAS calls are mapped to the column-major call on the same memory (the
// transposed problem). Cases that are quick returns or only scale C (alpha == 0, k == 0) stay on
// the CPU: they are O(size of C), and the CPU library gets their exact semantics for free.
#include <algorithm>
#include <complex>
#include <utility>
#include <vector>

#include "common/table.h"
#include "cuda/blas3_args.h"
#include "cuda/cublas_typed.h"
#include "cuda/device_matrix.h"
#include "cuda/engine.h"
#include "cuda/warm.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {
using namespace blas3;  // the arguments and checks shared with split_blas3.cpp (blas3_args.h)

using cf = std::complex<float>;
using cd = std::complex<double>;

// ---- gemm ---------------------------------------------------------------------------------------------

template <class T> uint64_t gemm_bytes(const CallArgs& a) {
  const Gemm<T> g(a);
  return uint64_t(g.ar() * g.ac() + g.br() * g.bc() + g.m * g.n) * sizeof(T);
}

// Large products run in column panels of C, with the copies overlapped with the computation: A goes up
// first, then for each panel its columns of op(B) (and of C when beta != 0) on the upload stream while the
// previous panels multiply on the compute stream; with beta = 0 each panel of C comes back on the download
// stream while the later ones are still being computed (C is then write-only, so the CPU can still run the
// whole call again if a later panel fails). With beta != 0 C comes back only after every panel succeeded.
// Returns the number of panels (1: the product is too small to gain from this). No panel is ever empty:
// with w = ceil(n / panels) the last one has n - (panels - 1) * w >= (n - (panels - 1)^2) / panels columns,
// and n >= 2048 is far above (panels - 1)^2 <= 49. A short C (m from 128) gains too: NumPy's A @ X with a
// thin X is, column-major, m = 256 and n = k = 8192, and its 16 MB of C then come back while later panels
// compute. Each panel costs launches and waits (20-30 us on the GPU test machine: H200, 16-core host)
// whatever its size, so a panel is at least kMinPanelFlops (about 80 us of float64 there) where the product
// still makes two panels of that size (smaller ones keep two, as before): A @ X_i above runs in 6 panels,
// not 8 (2.17 ms a call against 2.26; 4 panels: 2.28, the last panel's copy-out then twice as long).
constexpr double kMinPanelFlops = 5e9;  // a panel's or a piece's least work (see gemm_panels)
template <class T> int gemm_panels(const Gemm<T>& g) {
  if (g.n < 2048 || g.m < 128 || g.k < 256) return 1;
  const double flops = 2.0 * double(g.m) * double(g.n) * double(g.k) * (is_complex<T>::value ? 4.0 : 1.0);
  return int(std::clamp<int64_t>(std::min<int64_t>(g.n / 1024, int64_t(flops / kMinPanelFlops)), 2, 8));
}

// A product whose B is on the device whole (a kept copy) can multiply A's first columns while its
// later ones are still being copied in: the sum over k is split into pieces of op(A)'s columns, each
// a contiguous range of host memory when ta == 'N' (NumPy's A @ X_i with a thin X_i is, column-major,
// X_i^T A^T: 16 MB of X_i up and 16 MB of C down a call, A kept). Each piece but the last adds its
// product over all of C once it has arrived; the last adds its part panel by panel, each panel of C
// then coming back while the next computes. Pieces of at least 4 MB (about 0.1 ms of copy-in on that
// machine) and of at least kMinPanelFlops each, 2 to 8 of them (GPU_OFFLOAD_GEMM_K_PIECES sets
// the most; 1 turns the split off); 1: no split.
template <class T> int64_t gemm_k_pieces(const Gemm<T>& g) {
  constexpr double kMinPieceBytes = double(4u << 20);
  static const double most = double(std::min(setting_long(SettingId::GEMM_K_PIECES, 8), 64L));
  const double bytes = double(g.m) * double(g.k) * double(sizeof(T));
  const double flops = 2.0 * double(g.m) * double(g.n) * double(g.k) * (is_complex<T>::value ? 4.0 : 1.0);
  const double p = std::min({bytes / kMinPieceBytes, flops / kMinPanelFlops, double(g.k / 256), most});
  return p >= 2 ? int64_t(p) : 1;
}

template <class T> void gemm_run_panels(Engine& e, const gofl_call& call, const Gemm<T>& g, int panels) {
  const bool same = g.b_is_a();
  const bool out_only = is_zero(g.beta);
  cudaStream_t up = e.copy_stream(0), down = e.copy_stream(1), s = e.stream();
  // A whole, before the panels: a kept copy, or uploaded below (dA) whole or in pieces over k. B too
  // when residency serves or keeps it; otherwise B goes up panel by panel.
  Engine::Input inA;
  DevMem dA;
  const bool a_there = same ? (inA = e.input(g.A, g.ar(), g.ac(), g.lda, sizeof(T), up), true)
                            : e.input_if_resident(g.A, g.ar(), g.ac(), g.lda, sizeof(T), up, &inA, &dA);
  Engine::Input inB;
  DevMem dB;
  const bool b_whole = !same && e.input_if_resident(g.B, g.br(), g.bc(), g.ldb, sizeof(T), up, &inB, &dB);
  const int64_t k_pieces = !a_there && b_whole && out_only && g.ta == 'N' ? gemm_k_pieces(g) : 1;
  // Piece q of the sum: op(A)'s columns (op(B)'s rows) [q kw, (q + 1) kw); the panels take the last one.
  const int64_t kw = k_pieces == 1 ? g.k : ((g.k + k_pieces - 1) / k_pieces + 63) / 64 * 64;
  const int64_t n_pieces = (g.k + kw - 1) / kw;
  const int64_t k_last = (n_pieces - 1) * kw;
  if (!a_there) {
    inA.dev = dA.get();
    inA.ld = g.ar();
    if (n_pieces == 1) e.upload(dA.get(), g.A, g.ar(), g.ac(), g.lda, sizeof(T), up);
  }
  DevMem dC = e.alloc(size_t(g.m * g.n) * sizeof(T));
  // Panel p: columns [j0, j1) of C and of op(B). op(B)'s columns are B's columns ('N') or rows.
  const int64_t w = (g.n + panels - 1) / panels;
  struct Panel {
    int64_t j0 = 0, cols = 0;
    Event in, start, end;
    Panel() : in(false), start(true), end(true) {}
  };
  std::vector<Panel> ps(static_cast<size_t>(panels));
  std::vector<Panel> qs(static_cast<size_t>(n_pieces - 1));
  // op(B)'s element (k0, j0) in a B that is on the device whole.
  auto b_at = [&](int64_t k0, int64_t j0) {
    const Engine::Input& src = same ? inA : inB;
    return g.tb == 'N' ? src.get<T>() + k0 + j0 * src.ld : src.get<T>() + j0 + k0 * src.ld;
  };
  const T one(1);
  for (int64_t q = 0; q + 1 < n_pieces; ++q) {
    Panel& Q = qs[size_t(q)];
    const int64_t k0 = q * kw;
    // Test point: a failure while the earlier pieces' kernels are queued.
    if (q == 1 && e.fault("piece")) fail(GOFL_GPU_INJECTED, "piece (injected)");
    e.upload(dA.get<T>() + k0 * g.m, g.A + k0 * g.lda, g.m, kw, g.lda, sizeof(T), up);
    check(cudaEventRecord(Q.in.get(), up), "cudaEventRecord (piece in)");
    check(cudaStreamWaitEvent(s, Q.in.get(), 0), "cudaStreamWaitEvent (piece in)");
    check(cudaEventRecord(Q.start.get(), s), "cudaEventRecord (piece start)");
    check(x_gemm<T>(e.blas(), op_of(g.ta), op_of(g.tb), g.m, g.n, kw, cu(&g.alpha), cu(dA.get<T>() + k0 * g.m), g.m,
                    cu(b_at(k0, 0)), inB.ld, cu(q == 0 ? &g.beta : &one), cu(dC.get<T>()), g.m),
          "cublasXgemm (piece)");
    check(cudaEventRecord(Q.end.get(), s), "cudaEventRecord (piece end)");
  }
  if (n_pieces > 1)
    e.upload(dA.get<T>() + k_last * g.m, g.A + k_last * g.lda, g.m, g.k - k_last, g.lda, sizeof(T), up);
  for (int p = 0; p < panels; ++p) {
    Panel& P = ps[size_t(p)];
    P.j0 = int64_t(p) * w;
    P.cols = std::min(w, g.n - P.j0);  // > 0: see gemm_panels
    const T* dBp;
    int64_t ldb;
    if (same || b_whole) {  // B is on the device whole (A itself, or a kept copy)
      dBp = b_at(k_last, P.j0);
      ldb = same ? inA.ld : inB.ld;
    } else if (g.tb == 'N') {  // columns j0.. of B, packed k x n
      dBp = dB.get<T>() + P.j0 * g.k;
      ldb = g.k;
      e.upload(dB.get<T>() + P.j0 * g.k, g.B + P.j0 * g.ldb, g.k, P.cols, g.ldb, sizeof(T), up);
    } else {  // rows j0.. of B (n x k): each panel packed cols x k on its own
      dBp = dB.get<T>() + P.j0 * g.k;
      ldb = P.cols;
      e.upload(dB.get<T>() + P.j0 * g.k, g.B + P.j0, P.cols, g.k, g.ldb, sizeof(T), up);
    }
    T* dCp = dC.get<T>() + P.j0 * g.m;
    if (!out_only) e.upload(dCp, g.C + P.j0 * g.ldc, g.m, P.cols, g.ldc, sizeof(T), up);
    check(cudaEventRecord(P.in.get(), up), "cudaEventRecord (panel in)");
    check(cudaStreamWaitEvent(s, P.in.get(), 0), "cudaStreamWaitEvent (panel in)");
    check(cudaEventRecord(P.start.get(), s), "cudaEventRecord (panel start)");
    // The last piece of the sum (all of it when k is not split), added to what the others left in C.
    check(x_gemm<T>(e.blas(), op_of(g.ta), op_of(g.tb), g.m, P.cols, g.k - k_last, cu(&g.alpha),
                    cu(inA.get<T>() + k_last * inA.ld), inA.ld, cu(dBp), ldb, cu(n_pieces > 1 ? &one : &g.beta), cu(dCp),
                    g.m),
          "cublasXgemm");
    check(cudaEventRecord(P.end.get(), s), "cudaEventRecord (panel end)");
  }
  auto elapsed = [&](Panel& P) {
    check(cudaEventSynchronize(P.end.get()), "cudaEventSynchronize (panel)");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, P.start.get(), P.end.get()), "cudaEventElapsedTime");
    e.add_compute(double(ms) * 1e-3);
  };
  for (Panel& Q : qs) elapsed(Q);  // they precede every panel on the compute stream
  if (out_only) {
    // Only when C shares no byte with A or B (BLAS forbids it, but a C or Fortran caller may do it
    // anyway): otherwise the panels written would change the inputs a CPU rerun reads. The call's
    // operands (a, b, c: their order in ops/operations.py) span exactly the bytes the CPU library
    // reads and writes, row-major calls included (the same memory, A and B swapped).
    auto bytes = [&call](int i) {
      const gofl_call_operand& o = call.operands[i];
      const auto b = reinterpret_cast<uintptr_t>(o.ptr);
      return std::make_pair(b, b + uint64_t(o.elems) * o.elem_size);
    };
    auto overlaps_c = [&](int i) {
      const auto c = bytes(2), x = bytes(i);
      return c.first < x.second && x.first < c.second;
    };
    if (!overlaps_c(0) && !overlaps_c(1)) e.set_rerunnable();
    // The first panel must have computed before anything is written (a failure there leaves the
    // program's C untouched).
    check(cudaEventSynchronize(ps[0].end.get()), "cudaEventSynchronize (panel)");
  } else {
    for (Panel& P : ps) elapsed(P);
    e.end_pipeline();  // every panel succeeded before C is written
  }
  // Nothing of the program's C is written yet on either path.
  if (e.fault("compute")) fail(GOFL_GPU_INJECTED, "compute (injected)");
  if (!out_only) {
    e.download(g.C, dC.get(), g.m, g.n, g.ldc, sizeof(T), down);
    return e.keep_output(std::move(dC), g.C, g.m, g.n, g.ldc, sizeof(T));
  }
  // Every panel comes back in one copy pipeline, each after its kernel, the next panel's DMAs
  // running while the host copies out the previous one.
  std::vector<Engine::OutPart> outs;
  for (const Panel& P : ps)
    outs.push_back({g.C + P.j0 * g.ldc, dC.get<T>() + P.j0 * g.m, g.m, P.cols, g.ldc, sizeof(T), P.end.get()});
  e.download_parts(outs, down, [&](size_t i) {
    elapsed(ps[i]);  // its kernel is done: its columns are in host memory
    if (e.fault("panel")) fail(GOFL_GPU_INJECTED, "panel (injected)");
  });
  e.end_pipeline();
  e.keep_output(std::move(dC), g.C, g.m, g.n, g.ldc, sizeof(T));
}

template <class T> void gemm_run(Engine& e, const CallArgs& a) {
  Gemm<T> g(a);
  g.ta = real_trans<T>(g.ta); g.tb = real_trans<T>(g.tb);
  if (const int panels = gemm_panels(g); panels > 1) return gemm_run_panels(e, a.call(), g, panels);
  // a @ a: one copy of the shared operand.
  const Engine::Input inA = e.input(g.A, g.ar(), g.ac(), g.lda, sizeof(T));
  const Engine::Input inB2 = g.b_is_a() ? Engine::Input() : e.input(g.B, g.br(), g.bc(), g.ldb, sizeof(T));
  const Engine::Input& inB = g.b_is_a() ? inA : inB2;
  DevMem dC = e.alloc(size_t(g.m * g.n) * sizeof(T));
  // beta == 0: C is not read (NaNs in it must not propagate), so it need not be copied in.
  if (!is_zero(g.beta)) e.upload(dC.get(), g.C, g.m, g.n, g.ldc, sizeof(T));
  e.begin_compute();
  check(x_gemm<T>(e.blas(), op_of(g.ta), op_of(g.tb), g.m, g.n, g.k, cu(&g.alpha), cu(inA.get<T>()), inA.ld,
                  cu(inB.get<T>()), inB.ld, cu(&g.beta), cu(dC.get<T>()), g.m),
        "cublasXgemm");
  e.finish_compute();
  e.download(g.C, dC.get(), g.m, g.n, g.ldc, sizeof(T));
  e.keep_output(std::move(dC), g.C, g.m, g.n, g.ldc, sizeof(T));
}

// ---- symm / hemm --------------------------------------------------------------------------------------

template <class T> struct Symm {
  char side, uplo;
  int64_t m, n, lda, ldb, ldc;
  T alpha, beta;
  const T *A, *B;
  T* C;
  int64_t ka() const { return side == 'L' ? m : n; }

  explicit Symm(const CallArgs& a) {
    using P = args::symm_r;
    side = a.ch(P::side); uplo = a.ch(P::uplo);
    m = a.i(P::m); n = a.i(P::n);
    lda = a.i(P::lda); ldb = a.i(P::ldb); ldc = a.i(P::ldc);
    alpha = a.scalar<T>(P::alpha); beta = a.scalar<T>(P::beta);
    A = a.ptr<const T>(P::a); B = a.ptr<const T>(P::b); C = a.ptr<T>(P::c);
    // Row major: C^T = B^T A^T with A^T symmetric (Hermitian) stored in the other triangle.
    if (a.row_major()) { side = flip_side(side); uplo = flip_ul(uplo); std::swap(m, n); }
  }
};

template <class T> int symm_supports(const CallArgs& a) {
  if (bad_layout(a)) return GOFL_GPU_INVALID_ARGS;
  const Symm<T> s(a);
  if (!one_of(s.side, "LR") || !one_of(s.uplo, "UL") || s.m < 0 || s.n < 0 || s.lda < max1(s.ka()) ||
      s.ldb < max1(s.m) || s.ldc < max1(s.m))
    return GOFL_GPU_INVALID_ARGS;
  if (s.m == 0 || s.n == 0 || is_zero(s.alpha)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t symm_bytes(const CallArgs& a) {
  const Symm<T> s(a);
  return uint64_t(s.ka() * s.ka() + 2 * s.m * s.n) * sizeof(T);
}

template <class T, bool Herm> void symm_run(Engine& e, const CallArgs& a) {
  Symm<T> s(a);
  const int64_t ka = s.ka();
  // hemm: the imaginary parts of A's diagonal are zeroed on the device, so A is a private copy.
  Engine::Input inA;
  DevMem dA;
  if constexpr (Herm) {
    dA = e.alloc(size_t(ka * ka) * sizeof(T));
    e.upload(dA.get(), s.A, ka, ka, s.lda, sizeof(T));
    zero_diag_imag(e, dA.get<T>(), ka);
    inA.dev = dA.get();
    inA.ld = ka;
  } else {
    inA = e.input(s.A, ka, ka, s.lda, sizeof(T));
  }
  const Engine::Input inB = e.input(s.B, s.m, s.n, s.ldb, sizeof(T));
  DevMem dC = e.alloc(size_t(s.m * s.n) * sizeof(T));
  if (!is_zero(s.beta)) e.upload(dC.get(), s.C, s.m, s.n, s.ldc, sizeof(T));
  e.begin_compute();
  if constexpr (Herm) {
    check(x_hemm<T>(e.blas(), side_of(s.side), fill_of(s.uplo), s.m, s.n, cu(&s.alpha), cu(inA.get<T>()), inA.ld,
                    cu(inB.get<T>()), inB.ld, cu(&s.beta), cu(dC.get<T>()), s.m),
          "cublasXhemm");
  } else {
    check(x_symm<T>(e.blas(), side_of(s.side), fill_of(s.uplo), s.m, s.n, cu(&s.alpha), cu(inA.get<T>()), inA.ld,
                    cu(inB.get<T>()), inB.ld, cu(&s.beta), cu(dC.get<T>()), s.m),
          "cublasXsymm");
  }
  e.finish_compute();
  e.download(s.C, dC.get(), s.m, s.n, s.ldc, sizeof(T));
  e.keep_output(std::move(dC), s.C, s.m, s.n, s.ldc, sizeof(T));
}

// ---- syrk / herk / syr2k / her2k ----------------------------------------------------------------------

// S: the scalar type of alpha (T, or real for herk); Sb: of beta (real for herk and her2k).
// Two: syr2k/her2k (a B operand). Herm: herk/her2k (trans is N or C, else N or T).
template <class T, class S, class Sb, bool Two, bool Herm> struct Rank {
  char uplo, trans;
  int64_t n, k, lda, ldb = 0, ldc;
  S alpha;
  Sb beta;
  const T* A;
  const T* B = nullptr;
  T* C;
  int64_t ar() const { return trans == 'N' ? n : k; }
  int64_t ac() const { return trans == 'N' ? k : n; }

  explicit Rank(const CallArgs& a) {
    // syrk/herk and syr2k/her2k differ in positions only by the B operand.
    using P1 = args::syrk_r;
    using P2 = args::syr2k_r;
    uplo = a.ch(Two ? int(P2::uplo) : int(P1::uplo));
    trans = a.ch(Two ? int(P2::trans) : int(P1::trans));
    n = a.i(Two ? int(P2::n) : int(P1::n));
    k = a.i(Two ? int(P2::k) : int(P1::k));
    lda = a.i(Two ? int(P2::lda) : int(P1::lda));
    ldc = a.i(Two ? int(P2::ldc) : int(P1::ldc));
    alpha = a.scalar<S>(Two ? int(P2::alpha) : int(P1::alpha));
    beta = a.scalar<Sb>(Two ? int(P2::beta) : int(P1::beta));
    A = a.ptr<const T>(Two ? int(P2::a) : int(P1::a));
    C = a.ptr<T>(Two ? int(P2::c) : int(P1::c));
    if (Two) { ldb = a.i(P2::ldb); B = a.ptr<const T>(P2::b); }
    // Row major: the column-major view of the memory is the transposed problem: the other triangle,
    // the other product (A^T A instead of A A^T). For her2k, (alpha A B^H)^T = alpha B'^H A', so
    // alpha and conj(alpha) change places.
    if (a.row_major()) {
      uplo = flip_ul(uplo);
      if (trans == 'N') trans = Herm ? 'C' : 'T';
      else if (one_of(trans, Herm ? "C" : (is_complex<T>::value ? "T" : "TC"))) trans = 'N';
      else trans = '?';
      if constexpr (Herm && Two) alpha = std::conj(alpha);
    }
  }
  bool valid_trans() const {
    if (Herm) return one_of(trans, "NC");
    return one_of(trans, is_complex<T>::value ? "NT" : "NTC");
  }
};

template <class T, class S, class Sb, bool Two, bool Herm> int rank_supports(const CallArgs& a) {
  if (bad_layout(a)) return GOFL_GPU_INVALID_ARGS;
  const Rank<T, S, Sb, Two, Herm> r(a);
  if (!one_of(r.uplo, "UL") || !r.valid_trans() || r.n < 0 || r.k < 0 || r.lda < max1(r.ar()) ||
      (Two && r.ldb < max1(r.ar())) || r.ldc < max1(r.n))
    return GOFL_GPU_INVALID_ARGS;
  if (r.n == 0 || r.k == 0 || is_zero(r.alpha)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T, class S, class Sb, bool Two, bool Herm> uint64_t rank_bytes(const CallArgs& a) {
  const Rank<T, S, Sb, Two, Herm> r(a);
  return uint64_t((Two ? 2 : 1) * r.n * r.k + r.n * r.n) * sizeof(T);
}

template <class T, class S, class Sb, bool Two, bool Herm> void rank_run(Engine& e, const CallArgs& a) {
  Rank<T, S, Sb, Two, Herm> r(a);
  r.trans = real_trans<T>(r.trans);
  const int64_t ar = r.ar(), ac = r.ac();
  const Engine::Input inA = e.input(r.A, ar, ac, r.lda, sizeof(T));
  const Engine::Input inB = Two ? e.input(r.B, ar, ac, r.ldb, sizeof(T)) : Engine::Input();
  DevMem dC = e.alloc(size_t(r.n * r.n) * sizeof(T));
  if (!is_zero(r.beta)) e.upload(dC.get(), r.C, r.n, r.n, r.ldc, sizeof(T));
  e.begin_compute();
  const auto fill = fill_of(r.uplo);
  const auto op = op_of(r.trans);
  if constexpr (Herm && Two) {
    check(x_her2k<T>(e.blas(), fill, op, r.n, r.k, cu(&r.alpha), cu(inA.get<T>()), inA.ld, cu(inB.get<T>()), inB.ld,
                     &r.beta, cu(dC.get<T>()), r.n),
          "cublasXher2k");
  } else if constexpr (Herm) {
    check(x_herk<T>(e.blas(), fill, op, r.n, r.k, &r.alpha, cu(inA.get<T>()), inA.ld, &r.beta, cu(dC.get<T>()), r.n),
          "cublasXherk");
  } else if constexpr (Two) {
    check(x_syr2k<T>(e.blas(), fill, op, r.n, r.k, cu(&r.alpha), cu(inA.get<T>()), inA.ld, cu(inB.get<T>()), inB.ld,
                     cu(&r.beta), cu(dC.get<T>()), r.n),
          "cublasXsyr2k");
  } else {
    check(x_syrk<T>(e.blas(), fill, op, r.n, r.k, cu(&r.alpha), cu(inA.get<T>()), inA.ld, cu(&r.beta), cu(dC.get<T>()),
                    r.n),
          "cublasXsyrk");
  }
  if constexpr (Herm) zero_diag_imag(e, dC.get<T>(), r.n);
  e.finish_compute();
  // Only the uplo triangle is the result; the program's other triangle stays as it was.
  e.download_triangle(r.C, dC.get(), r.n, r.ldc, sizeof(T), r.uplo);
}

// ---- trmm / trsm --------------------------------------------------------------------------------------

template <class T> struct Tri {
  char side, uplo, trans, diag;
  int64_t m, n, lda, ldb;
  T alpha;
  const T* A;
  T* B;
  int64_t ka() const { return side == 'L' ? m : n; }

  explicit Tri(const CallArgs& a) {
    using P = args::trmm_r;  // trsm has the same positions
    static_assert(int(P::b) == int(args::trsm_r::b) && int(P::alpha) == int(args::trsm_r::alpha), "trmm/trsm positions");
    side = a.ch(P::side); uplo = a.ch(P::uplo); trans = a.ch(P::transa); diag = a.ch(P::diag);
    m = a.i(P::m); n = a.i(P::n); lda = a.i(P::lda); ldb = a.i(P::ldb);
    alpha = a.scalar<T>(P::alpha);
    A = a.ptr<const T>(P::a); B = a.ptr<T>(P::b);
    // Row major: B^T := alpha B^T op(A)^T; op(A)^T is op'(A^T) with the same op, A^T in the other triangle.
    if (a.row_major()) { side = flip_side(side); uplo = flip_ul(uplo); std::swap(m, n); }
  }
};

template <class T> int tri_supports(const CallArgs& a) {
  if (bad_layout(a)) return GOFL_GPU_INVALID_ARGS;
  const Tri<T> t(a);
  if (!one_of(t.side, "LR") || !one_of(t.uplo, "UL") || !one_of(t.trans, "NTC") || !one_of(t.diag, "UN") || t.m < 0 ||
      t.n < 0 || t.lda < max1(t.ka()) || t.ldb < max1(t.m))
    return GOFL_GPU_INVALID_ARGS;
  // alpha == 0: B = 0 without reading A or B (NaNs included); the CPU does that.
  if (t.m == 0 || t.n == 0 || is_zero(t.alpha)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T> uint64_t tri_bytes(const CallArgs& a) {
  const Tri<T> t(a);
  return uint64_t(t.ka() * t.ka() + t.m * t.n) * sizeof(T);
}

template <class T, bool Solve> void tri_run(Engine& e, const CallArgs& a) {
  Tri<T> t(a);
  t.trans = real_trans<T>(t.trans);
  const int64_t ka = t.ka();
  const Engine::Input inA = e.input(t.A, ka, ka, t.lda, sizeof(T));
  DevMem dB = e.alloc(size_t(t.m * t.n) * sizeof(T));
  e.upload(dB.get(), t.B, t.m, t.n, t.ldb, sizeof(T));
  e.begin_compute();
  if constexpr (Solve) {
    check(x_trsm<T>(e.blas(), side_of(t.side), fill_of(t.uplo), op_of(t.trans), diag_of(t.diag), t.m, t.n, cu(&t.alpha),
                    cu(inA.get<T>()), inA.ld, cu(dB.get<T>()), t.m),
          "cublasXtrsm");
  } else {
    // cuBLAS trmm is out of place; C == B gives BLAS's in-place result.
    check(x_trmm<T>(e.blas(), side_of(t.side), fill_of(t.uplo), op_of(t.trans), diag_of(t.diag), t.m, t.n, cu(&t.alpha),
                    cu(inA.get<T>()), inA.ld, cu(dB.get<const T>()), t.m, cu(dB.get<T>()), t.m),
          "cublasXtrmm");
  }
  e.finish_compute();
  e.download(t.B, dB.get(), t.m, t.n, t.ldb, sizeof(T));
  e.keep_output(std::move(dB), t.B, t.m, t.n, t.ldb, sizeof(T));
}

// ---- warming (warm.h): each routine once at n = 64, as its run calls it for 'N' / lower / left, after
// the precision's gemm (WarmLane::precision_gemm) ------------------------------------------------------

constexpr int64_t kWarmN = 64;

template <class T, bool Herm> void symmetric_warm(WarmLane& l) {
  const T one(1), zero(0);
  l.fresh<T>(kWarmN);
  const auto A = cu(l.matrix<T>(0)), B = cu(l.matrix<T>(1));
  const auto C = cu(l.matrix<T>(2));
  cublasStatus_t st;
  if constexpr (Herm)
    st = x_hemm<T>(l.blas(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, kWarmN, kWarmN, cu(&one), A, kWarmN, B, kWarmN,
                   cu(&zero), C, kWarmN);
  else
    st = x_symm<T>(l.blas(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, kWarmN, kWarmN, cu(&one), A, kWarmN, B, kWarmN,
                   cu(&zero), C, kWarmN);
  check(st, "cublasXsymm (warming)");
}

template <class T, bool Two, bool Herm> void rank_warm(WarmLane& l) {
  using R = real_t<T>;
  l.fresh<T>(kWarmN);
  const T one(1);
  const R rone(1), rzero(0);
  const T* A = l.matrix<T>(0);
  T* C = l.matrix<T>(2);
  cublasStatus_t st;
  if constexpr (Herm && Two) {
    st = x_her2k<T>(l.blas(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, kWarmN, kWarmN, cu(&one), cu(A), kWarmN,
                    cu(l.matrix<T>(1)), kWarmN, &rzero, cu(C), kWarmN);
  } else if constexpr (Herm) {
    st = x_herk<T>(l.blas(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, kWarmN, kWarmN, &rone, cu(A), kWarmN, &rzero, cu(C),
                   kWarmN);
  } else if constexpr (Two) {
    const T zero(0);
    st = x_syr2k<T>(l.blas(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, kWarmN, kWarmN, cu(&one), cu(A), kWarmN,
                    cu(l.matrix<T>(1)), kWarmN, cu(&zero), cu(C), kWarmN);
  } else {
    const T zero(0);
    st = x_syrk<T>(l.blas(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, kWarmN, kWarmN, cu(&one), cu(A), kWarmN, cu(&zero),
                   cu(C), kWarmN);
  }
  check(st, "cublasXsyrk (warming)");
}

template <class T, bool Solve> void tri_warm(WarmLane& l) {
  const T one(1);
  l.fresh<T>(kWarmN);
  const cublasStatus_t st =
      Solve ? x_trsm<T>(l.blas(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, kWarmN,
                        kWarmN, cu(&one), cu(l.matrix<T>(0)), kWarmN, cu(l.matrix<T>(1)), kWarmN)
            : x_trmm<T>(l.blas(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, kWarmN,
                        kWarmN, cu(&one), cu(l.matrix<T>(0)), kWarmN, cu(l.matrix<T>(1)), kWarmN, cu(l.matrix<T>(2)),
                        kWarmN);
  check(st, Solve ? "cublasXtrsm (warming)" : "cublasXtrmm (warming)");
}

}  // namespace

// ---- the table's bodies and warm-ups (generated/gpu_routines.h) -----------------------------------------

template <class T> Routine gemm_body() { return {gemm_supports<T>, gemm_bytes<T>, gemm_run<T>}; }
template <class T> Routine symm_body() { return {symm_supports<T>, symm_bytes<T>, symm_run<T, false>}; }
template <class T> Routine hemm_body() { return {symm_supports<T>, symm_bytes<T>, symm_run<T, true>}; }
template <class T> Routine syrk_body() {
  return {rank_supports<T, T, T, false, false>, rank_bytes<T, T, T, false, false>, rank_run<T, T, T, false, false>};
}
template <class T> Routine herk_body() {
  using R = real_t<T>;
  return {rank_supports<T, R, R, false, true>, rank_bytes<T, R, R, false, true>, rank_run<T, R, R, false, true>};
}
template <class T> Routine syr2k_body() {
  return {rank_supports<T, T, T, true, false>, rank_bytes<T, T, T, true, false>, rank_run<T, T, T, true, false>};
}
template <class T> Routine her2k_body() {
  using R = real_t<T>;
  return {rank_supports<T, T, R, true, true>, rank_bytes<T, T, R, true, true>, rank_run<T, T, R, true, true>};
}
template <class T> Routine trmm_body() { return {tri_supports<T>, tri_bytes<T>, tri_run<T, false>}; }
template <class T> Routine trsm_body() { return {tri_supports<T>, tri_bytes<T>, tri_run<T, true>}; }

template <class T> void gemm_warm(WarmLane&) {}  // the precision's gemm, which the warming thread runs first
template <class T> void symm_warm(WarmLane& l) { symmetric_warm<T, false>(l); }
template <class T> void hemm_warm(WarmLane& l) { symmetric_warm<T, true>(l); }
template <class T> void syrk_warm(WarmLane& l) { rank_warm<T, false, false>(l); }
template <class T> void herk_warm(WarmLane& l) { rank_warm<T, false, true>(l); }
template <class T> void syr2k_warm(WarmLane& l) { rank_warm<T, true, false>(l); }
template <class T> void her2k_warm(WarmLane& l) { rank_warm<T, true, true>(l); }
template <class T> void trmm_warm(WarmLane& l) { tri_warm<T, false>(l); }
template <class T> void trsm_warm(WarmLane& l) { tri_warm<T, true>(l); }

GOFL_INSTANTIATE_BLAS3

}  // namespace cuda
}  // namespace gofl
