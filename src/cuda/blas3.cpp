// Level-3 BLAS on cuBLAS: gemm symm hemm syrk herk syr2k her2k trmm trsm, s/d/c/z, Fortran and
// CBLAS. Row-major CBLAS calls arrive mapped to the column-major call on the same memory (the
// transposed problem; the descriptor's mapping, generated/descs.h). Cases that are quick returns or
// only scale C (alpha == 0, k == 0) stay on the CPU: they are O(size of C), and the CPU library gets
// their exact semantics for free.
#include <algorithm>
#include <complex>
#include <type_traits>
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

template <class T> uint64_t gemm_bytes(const desc::gemm<T>& g) {
  return uint64_t(ar(g) * ac(g) + br(g) * bc(g) + g.m * g.n) * sizeof(T);
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
template <class T> int gemm_panels(const desc::gemm<T>& g) {
  if (g.n < 2048 || g.m < 128 || g.k < 256) return 1;
  const double flops = 2.0 * double(g.m) * double(g.n) * double(g.k) * (is_complex<T>::value ? 4.0 : 1.0);
  return int(std::clamp<int64_t>(std::min<int64_t>(g.n / 1024, int64_t(flops / kMinPanelFlops)), 2, 8));
}

// A product whose B is on the device whole (a kept copy) can multiply A's first columns while its
// later ones are still being copied in: the sum over k is cut into pieces of op(A)'s columns, each
// a contiguous range of host memory when ta == 'N' (NumPy's A @ X_i with a thin X_i is, column-major,
// X_i^T A^T: 16 MB of X_i up and 16 MB of C down a call, A kept). Each piece but the last adds its
// product over all of C once it has arrived; the last adds its part panel by panel, each panel of C
// then coming back while the next computes. Pieces of at least 4 MB (about 0.1 ms of copy-in on that
// machine) and of at least kMinPanelFlops each, 2 to 8 of them (GPU_OFFLOAD_GEMM_K_PIECES sets
// the most; 1 keeps the sum whole). Returns the number of pieces, 1 for a whole sum.
template <class T> int64_t gemm_k_pieces(const desc::gemm<T>& g) {
  constexpr double kMinPieceBytes = double(4u << 20);
  static const double most = double(std::min(setting_long(SettingId::GEMM_K_PIECES, 8), 64L));
  const double bytes = double(g.m) * double(g.k) * double(sizeof(T));
  const double flops = 2.0 * double(g.m) * double(g.n) * double(g.k) * (is_complex<T>::value ? 4.0 : 1.0);
  const double p = std::min({bytes / kMinPieceBytes, flops / kMinPanelFlops, double(g.k / 256), most});
  return p >= 2 ? int64_t(p) : 1;
}

template <class T> void gemm_run_panels(Engine& e, const gofl_call& call, const desc::gemm<T>& g, int panels) {
  const bool same = b_is_a(g);
  const bool out_only = is_zero(g.beta);
  cudaStream_t up = e.copy_stream(0), down = e.copy_stream(1), s = e.stream();
  // A whole, before the panels: a kept copy, or uploaded below (dA) whole or in pieces over k. B too
  // when residency serves or keeps it; otherwise B goes up panel by panel.
  Engine::Input inA;
  DevMem dA;
  const bool a_there = same ? (inA = e.input(g.a, ar(g), ac(g), g.lda, sizeof(T), up), true)
                            : e.input_if_resident(g.a, ar(g), ac(g), g.lda, sizeof(T), up, &inA, &dA);
  Engine::Input inB;
  DevMem dB;
  const bool b_whole = !same && e.input_if_resident(g.b, br(g), bc(g), g.ldb, sizeof(T), up, &inB, &dB);
  const int64_t k_pieces = !a_there && b_whole && out_only && g.transa == 'N' ? gemm_k_pieces(g) : 1;
  // Piece q of the sum: op(A)'s columns (op(B)'s rows) [q kw, (q + 1) kw); the panels take the last one.
  const int64_t kw = k_pieces == 1 ? g.k : ((g.k + k_pieces - 1) / k_pieces + 63) / 64 * 64;
  const int64_t n_pieces = (g.k + kw - 1) / kw;
  const int64_t k_last = (n_pieces - 1) * kw;
  if (!a_there) {
    inA.dev = dA.get();
    inA.ld = ar(g);
    if (n_pieces == 1) e.upload(dA.get(), g.a, ar(g), ac(g), g.lda, sizeof(T), up);
  }
  DevMem dC = e.alloc(size_t(g.m * g.n) * sizeof(T));
  // Panel p: columns [j0, j1) of C and of op(B). op(B)'s columns are B's columns ('N') or rows.
  const int64_t w = (g.n + panels - 1) / panels;
  struct Panel {
    int64_t j0 = 0, cols = 0;
    PipelineStep step;
  };
  std::vector<Panel> ps(static_cast<size_t>(panels));
  std::vector<PipelineStep> qs(static_cast<size_t>(n_pieces - 1));  // the pieces of the sum over k
  // op(B)'s element (k0, j0) in a B that is on the device whole.
  auto b_at = [&](int64_t k0, int64_t j0) {
    const Engine::Input& src = same ? inA : inB;
    return g.transb == 'N' ? src.get<T>() + k0 + j0 * src.ld : src.get<T>() + j0 + k0 * src.ld;
  };
  const T one(1);
  for (int64_t q = 0; q + 1 < n_pieces; ++q) {
    PipelineStep& Q = qs[size_t(q)];
    const int64_t k0 = q * kw;
    // Test point: a failure while the earlier pieces' kernels are queued.
    if (q == 1 && e.fault("piece")) fail(GOFL_GPU_INJECTED, "piece (injected)");
    e.upload(dA.get<T>() + k0 * g.m, g.a + k0 * g.lda, g.m, kw, g.lda, sizeof(T), up);
    Q.begin(up, s);
    check(x_gemm<T>(e.blas(), op_of(g.transa), op_of(g.transb), g.m, g.n, kw, cu(&g.alpha),
                    cu(dA.get<T>() + k0 * g.m), g.m, cu(b_at(k0, 0)), inB.ld, cu(q == 0 ? &g.beta : &one),
                    cu(dC.get<T>()), g.m),
          "cublasXgemm (piece)");
    Q.end(s);
  }
  if (n_pieces > 1)
    e.upload(dA.get<T>() + k_last * g.m, g.a + k_last * g.lda, g.m, g.k - k_last, g.lda, sizeof(T), up);
  for (int p = 0; p < panels; ++p) {
    Panel& P = ps[size_t(p)];
    P.j0 = int64_t(p) * w;
    P.cols = std::min(w, g.n - P.j0);  // > 0: see gemm_panels
    const T* dBp;
    int64_t ldb;
    if (same || b_whole) {  // B is on the device whole (A itself, or a kept copy)
      dBp = b_at(k_last, P.j0);
      ldb = same ? inA.ld : inB.ld;
    } else if (g.transb == 'N') {  // columns j0.. of B, packed k x n
      dBp = dB.get<T>() + P.j0 * g.k;
      ldb = g.k;
      e.upload(dB.get<T>() + P.j0 * g.k, g.b + P.j0 * g.ldb, g.k, P.cols, g.ldb, sizeof(T), up);
    } else {  // rows j0.. of B (n x k): each panel packed cols x k on its own
      dBp = dB.get<T>() + P.j0 * g.k;
      ldb = P.cols;
      e.upload(dB.get<T>() + P.j0 * g.k, g.b + P.j0, P.cols, g.k, g.ldb, sizeof(T), up);
    }
    T* dCp = dC.get<T>() + P.j0 * g.m;
    if (!out_only) e.upload(dCp, g.c + P.j0 * g.ldc, g.m, P.cols, g.ldc, sizeof(T), up);
    P.step.begin(up, s);
    // The last piece of the sum (all of it when the sum is whole), added to what the others left in C.
    check(x_gemm<T>(e.blas(), op_of(g.transa), op_of(g.transb), g.m, P.cols, g.k - k_last, cu(&g.alpha),
                    cu(inA.get<T>() + k_last * inA.ld), inA.ld, cu(dBp), ldb, cu(n_pieces > 1 ? &one : &g.beta), cu(dCp),
                    g.m),
          "cublasXgemm");
    P.step.end(s);
  }
  for (const PipelineStep& Q : qs) e.add_compute(Q.seconds());  // they precede every panel on the compute stream
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
    ps[0].step.wait();
  } else {
    for (const Panel& P : ps) e.add_compute(P.step.seconds());
    e.end_pipeline();  // every panel succeeded before C is written
  }
  // Nothing of the program's C is written yet on either path.
  if (e.fault("compute")) fail(GOFL_GPU_INJECTED, "compute (injected)");
  if (!out_only) {
    e.download(g.c, dC.get(), g.m, g.n, g.ldc, sizeof(T), down);
    return e.keep_output(std::move(dC), g.c, g.m, g.n, g.ldc, sizeof(T));
  }
  // Every panel comes back in one copy pipeline, each after its kernel, the next panel's DMAs
  // running while the host copies out the previous one.
  std::vector<Engine::OutPart> outs;
  for (const Panel& P : ps)
    outs.push_back({g.c + P.j0 * g.ldc, dC.get<T>() + P.j0 * g.m, g.m, P.cols, g.ldc, sizeof(T), P.step.done()});
  e.download_parts(outs, down, [&](size_t i) {
    e.add_compute(ps[i].step.seconds());  // its kernel is done: its columns are in host memory
    if (e.fault("panel")) fail(GOFL_GPU_INJECTED, "panel (injected)");
  });
  e.end_pipeline();
  e.keep_output(std::move(dC), g.c, g.m, g.n, g.ldc, sizeof(T));
}

template <class T> void gemm_run(Engine& e, const gofl_call& call, const desc::gemm<T>& d) {
  desc::gemm<T> g = d;
  g.transa = real_trans<T>(g.transa); g.transb = real_trans<T>(g.transb);
  if (const int panels = gemm_panels(g); panels > 1) return gemm_run_panels(e, call, g, panels);
  // a @ a: one copy of the shared operand.
  const Engine::Input inA = e.input(g.a, ar(g), ac(g), g.lda, sizeof(T));
  const Engine::Input inB2 = b_is_a(g) ? Engine::Input() : e.input(g.b, br(g), bc(g), g.ldb, sizeof(T));
  const Engine::Input& inB = b_is_a(g) ? inA : inB2;
  DevMem dC = e.alloc(size_t(g.m * g.n) * sizeof(T));
  // beta == 0: C is not read (NaNs in it must not propagate), so it need not be copied in.
  if (!is_zero(g.beta)) e.upload(dC.get(), g.c, g.m, g.n, g.ldc, sizeof(T));
  e.begin_compute();
  check(x_gemm<T>(e.blas(), op_of(g.transa), op_of(g.transb), g.m, g.n, g.k, cu(&g.alpha), cu(inA.get<T>()), inA.ld,
                  cu(inB.get<T>()), inB.ld, cu(&g.beta), cu(dC.get<T>()), g.m),
        "cublasXgemm");
  e.finish_compute();
  e.download(g.c, dC.get(), g.m, g.n, g.ldc, sizeof(T));
  e.keep_output(std::move(dC), g.c, g.m, g.n, g.ldc, sizeof(T));
}

// ---- symm / hemm --------------------------------------------------------------------------------------

// A row-major call arrives as C^T = B^T A^T with A^T symmetric (Hermitian) stored in the other triangle.
template <class T, bool Herm> using SymmDesc = std::conditional_t<Herm, desc::hemm<T>, desc::symm<T>>;

// The order of A (symm, hemm, trmm, trsm): m from the left, n from the right.
template <class D> int64_t ka_of(const D& d) { return d.side == 'L' ? d.m : d.n; }

template <class T, bool Herm> int symm_supports(const SymmDesc<T, Herm>& s) {
  if (!s.layout_ok) return GOFL_GPU_INVALID_ARGS;
  if (!one_of(s.side, "LR") || !one_of(s.uplo, "UL") || s.m < 0 || s.n < 0 || s.lda < max1(ka_of(s)) ||
      s.ldb < max1(s.m) || s.ldc < max1(s.m))
    return GOFL_GPU_INVALID_ARGS;
  if (s.m == 0 || s.n == 0 || is_zero(s.alpha)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T, bool Herm> uint64_t symm_bytes(const SymmDesc<T, Herm>& s) {
  return uint64_t(ka_of(s) * ka_of(s) + 2 * s.m * s.n) * sizeof(T);
}

template <class T, bool Herm> void symm_run(Engine& e, const SymmDesc<T, Herm>& s) {
  const int64_t ka = ka_of(s);
  // Only A's uplo triangle is read, and only it is copied on the host (Engine::upload_triangle).
  // hemm: the imaginary parts of A's diagonal are zeroed on the device, so A is a private copy.
  Engine::Input inA;
  DevMem dA;
  if constexpr (Herm) {
    dA = e.alloc(size_t(ka * ka) * sizeof(T));
    e.upload_triangle(dA.get(), s.a, ka, s.lda, sizeof(T), s.uplo);
    zero_diag_imag(e, dA.get<T>(), ka);
    inA.dev = dA.get();
    inA.ld = ka;
  } else {
    inA = e.input_triangle(s.a, ka, s.lda, sizeof(T), s.uplo);
  }
  const Engine::Input inB = e.input(s.b, s.m, s.n, s.ldb, sizeof(T));
  DevMem dC = e.alloc(size_t(s.m * s.n) * sizeof(T));
  if (!is_zero(s.beta)) e.upload(dC.get(), s.c, s.m, s.n, s.ldc, sizeof(T));
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
  e.download(s.c, dC.get(), s.m, s.n, s.ldc, sizeof(T));
  e.keep_output(std::move(dC), s.c, s.m, s.n, s.ldc, sizeof(T));
}

// ---- syrk / herk / syr2k / her2k ----------------------------------------------------------------------

// Two: syr2k/her2k (a B operand). Herm: herk/her2k (trans is N or C, else N or T). herk's alpha and
// beta are real in its descriptor, her2k's beta too.
// A row-major call arrives as its column-major view of the memory, the transposed problem: the other
// triangle, the other product (A^T A instead of A A^T), and for her2k, since (alpha A B^H)^T =
// alpha B'^H A', alpha and conj(alpha) changed places. A trans that has no such mapping arrives as '?'.
template <class T, bool Two, bool Herm>
using RankDesc = std::conditional_t<Herm, std::conditional_t<Two, desc::her2k<T>, desc::herk<T>>,
                                    std::conditional_t<Two, desc::syr2k<T>, desc::syrk<T>>>;

template <class D> int64_t rank_ar(const D& r) { return r.trans == 'N' ? r.n : r.k; }  // rows of A as stored
template <class D> int64_t rank_ac(const D& r) { return r.trans == 'N' ? r.k : r.n; }
template <class T, bool Herm> bool valid_trans(char trans) {
  if (Herm) return one_of(trans, "NC");
  return one_of(trans, is_complex<T>::value ? "NT" : "NTC");
}

template <class T, bool Two, bool Herm> int rank_supports(const RankDesc<T, Two, Herm>& r) {
  if (!r.layout_ok) return GOFL_GPU_INVALID_ARGS;
  bool bad_ldb = false;
  if constexpr (Two) bad_ldb = r.ldb < max1(rank_ar(r));
  if (!one_of(r.uplo, "UL") || !valid_trans<T, Herm>(r.trans) || r.n < 0 || r.k < 0 || r.lda < max1(rank_ar(r)) ||
      bad_ldb || r.ldc < max1(r.n))
    return GOFL_GPU_INVALID_ARGS;
  if (r.n == 0 || r.k == 0 || is_zero(r.alpha)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T, bool Two, bool Herm> uint64_t rank_bytes(const RankDesc<T, Two, Herm>& r) {
  return uint64_t((Two ? 2 : 1) * r.n * r.k + r.n * r.n) * sizeof(T);
}

template <class T, bool Two, bool Herm> void rank_run(Engine& e, const RankDesc<T, Two, Herm>& r) {
  const int64_t ar = rank_ar(r), ac = rank_ac(r);
  const Engine::Input inA = e.input(r.a, ar, ac, r.lda, sizeof(T));
  Engine::Input inB;
  if constexpr (Two) inB = e.input(r.b, ar, ac, r.ldb, sizeof(T));
  DevMem dC = e.alloc(size_t(r.n * r.n) * sizeof(T));
  // C's uplo triangle is read and written; the other is neither copied in nor out.
  if (!is_zero(r.beta)) e.upload_triangle(dC.get(), r.c, r.n, r.ldc, sizeof(T), r.uplo);
  e.begin_compute();
  const auto fill = fill_of(r.uplo);
  const auto op = op_of(real_trans<T>(r.trans));
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
  e.download_triangle(r.c, dC.get(), r.n, r.ldc, sizeof(T), r.uplo);
}

// ---- trmm / trsm --------------------------------------------------------------------------------------

// A row-major call arrives as B^T := alpha B^T op(A)^T; op(A)^T is op'(A^T) with the same op, A^T in
// the other triangle.
template <class T, bool Solve> using TriDesc = std::conditional_t<Solve, desc::trsm<T>, desc::trmm<T>>;

template <class T, bool Solve> int tri_supports(const TriDesc<T, Solve>& t) {
  if (!t.layout_ok) return GOFL_GPU_INVALID_ARGS;
  if (!one_of(t.side, "LR") || !one_of(t.uplo, "UL") || !one_of(t.transa, "NTC") || !one_of(t.diag, "UN") ||
      t.m < 0 || t.n < 0 || t.lda < max1(ka_of(t)) || t.ldb < max1(t.m))
    return GOFL_GPU_INVALID_ARGS;
  // alpha == 0: B = 0 without reading A or B (NaNs included); the CPU does that.
  if (t.m == 0 || t.n == 0 || is_zero(t.alpha)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

template <class T, bool Solve> uint64_t tri_bytes(const TriDesc<T, Solve>& t) {
  return uint64_t(ka_of(t) * ka_of(t) + t.m * t.n) * sizeof(T);
}

template <class T, bool Solve> void tri_run(Engine& e, const TriDesc<T, Solve>& t) {
  const auto op = op_of(real_trans<T>(t.transa));
  const int64_t ka = ka_of(t);
  // Only A's uplo triangle is read (its diagonal too, unless diag is 'U').
  const Engine::Input inA = e.input_triangle(t.a, ka, t.lda, sizeof(T), t.uplo);
  DevMem dB = e.alloc(size_t(t.m * t.n) * sizeof(T));
  e.upload(dB.get(), t.b, t.m, t.n, t.ldb, sizeof(T));
  e.begin_compute();
  if constexpr (Solve) {
    check(x_trsm<T>(e.blas(), side_of(t.side), fill_of(t.uplo), op, diag_of(t.diag), t.m, t.n, cu(&t.alpha),
                    cu(inA.get<T>()), inA.ld, cu(dB.get<T>()), t.m),
          "cublasXtrsm");
  } else {
    // cuBLAS trmm is out of place; C == B gives BLAS's in-place result.
    check(x_trmm<T>(e.blas(), side_of(t.side), fill_of(t.uplo), op, diag_of(t.diag), t.m, t.n, cu(&t.alpha),
                    cu(inA.get<T>()), inA.ld, cu(dB.get<const T>()), t.m, cu(dB.get<T>()), t.m),
          "cublasXtrmm");
  }
  e.finish_compute();
  e.download(t.b, dB.get(), t.m, t.n, t.ldb, sizeof(T));
  e.keep_output(std::move(dB), t.b, t.m, t.n, t.ldb, sizeof(T));
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

// The table entries of each family over its descriptor (one family serves symm and hemm, and so on).
template <class T, bool Herm> Routine symm_routine() {
  return routine<SymmDesc<T, Herm>, symm_supports<T, Herm>, symm_bytes<T, Herm>, symm_run<T, Herm>>();
}
template <class T, bool Two, bool Herm> Routine rank_routine() {
  return routine<RankDesc<T, Two, Herm>, rank_supports<T, Two, Herm>, rank_bytes<T, Two, Herm>,
                 rank_run<T, Two, Herm>>();
}
template <class T, bool Solve> Routine tri_routine() {
  return routine<TriDesc<T, Solve>, tri_supports<T, Solve>, tri_bytes<T, Solve>, tri_run<T, Solve>>();
}

}  // namespace

// ---- the table's bodies and warm-ups (generated/gpu_routines.h) -----------------------------------------

template <class T> Routine gemm_body() {
  return routine<desc::gemm<T>, gemm_supports<T>, gemm_bytes<T>, gemm_run<T>>();
}
template <class T> Routine symm_body() { return symm_routine<T, false>(); }
template <class T> Routine hemm_body() { return symm_routine<T, true>(); }
template <class T> Routine syrk_body() { return rank_routine<T, false, false>(); }
template <class T> Routine herk_body() { return rank_routine<T, false, true>(); }
template <class T> Routine syr2k_body() { return rank_routine<T, true, false>(); }
template <class T> Routine her2k_body() { return rank_routine<T, true, true>(); }
template <class T> Routine trmm_body() { return tri_routine<T, false>(); }
template <class T> Routine trsm_body() { return tri_routine<T, true>(); }

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
