// FFTW executes on cuFFT (the calls of src/fftw/wrappers.cpp, described by gofl_call.fft).
//
// What cuFFT can express: a transform of rank 1 to 3 whose strides are a row-major embedding of its
// lengths (FFTW's plan_many layouts, and the guru layouts that are one), over a loop of transforms that
// is one dimension once contiguous loop dimensions are merged, all strides positive. Everything else
// stays on FFTW (UNSUPPORTED). FFTW's results exactly: both libraries compute unnormalised transforms
// with the same sign convention (FFTW_FORWARD = CUFFT_FORWARD = -1), r2c/c2r store n/2+1 complex
// values along the last dimension, and in-place real transforms use the same padding.
//
// The arrays travel whole: the span each one covers is uploaded and the output's span downloaded, so
// elements between strided outputs keep the program's values (an output with such gaps is uploaded
// first). The input of the program is never written (cuFFT's c2r overwrites only the device copy,
// which FFTW_DESTROY_INPUT allows and FFTW_PRESERVE_INPUT requires). Nothing is written to the program
// before the transform succeeded; out-of-place outputs are rerunnable (FFTW overwrites them without
// reading them), so a failed copy-out still lets FFTW run the call.
//
// Large transforms run in pieces, their copies overlapped with cuFFT (`Pieces` below): a batch in
// groups of transforms, each uploaded, transformed and downloaded while the next group is copied in;
// a single complex 3D transform as slabs along its first dimension (each transformed over the other
// dimensions as soon as it has arrived) and then blocks of the other dimensions (each
// transformed along the first and downloaded while the next computes). Every output of a
// multi-dimensional transform depends on every input, so the copy-out cannot start before the last
// slab is in, but cuFFT's work then hides behind the copies instead of lying between them.
//
// cuFFT plans are made on the first GPU execute of an FFTW plan, kept under that plan, and freed when
// the program destroys it (fft_forget). Their work areas come from the engine's pool for each call.
#include <algorithm>
#include <cstring>
#include <chrono>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cuda/engine.h"
#include "cuda/fft.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

void check_fft(cufftResult r, const char* where) {
  if (r != CUFFT_SUCCESS) fail(GOFL_GPU_CUFFT_ERROR, where, int(r));
}

// cufftMakePlanMany64's arguments.
struct Layout {
  int rank = 0;
  long long n[GOFL_FFT_MAX_RANK] = {}, inembed[GOFL_FFT_MAX_RANK] = {}, onembed[GOFL_FFT_MAX_RANK] = {};
  long long istride = 0, idist = 0, ostride = 0, odist = 0, batch = 1;
  cufftType type = CUFFT_Z2Z;
  // Field by field: the padding after `rank` and `type` holds whatever the stack held.
  bool operator==(const Layout& o) const {
    for (int k = 0; k < GOFL_FFT_MAX_RANK; ++k)
      if (n[k] != o.n[k] || inembed[k] != o.inembed[k] || onembed[k] != o.onembed[k]) return false;
    return rank == o.rank && istride == o.istride && idist == o.idist && ostride == o.ostride && odist == o.odist &&
           batch == o.batch && type == o.type;
  }
};

cufftType type_of(const gofl_fft& f) {
  switch (f.kind) {
    case GOFL_FFT_R2C: return f.single ? CUFFT_R2C : CUFFT_D2Z;
    case GOFL_FFT_C2R: return f.single ? CUFFT_C2R : CUFFT_Z2D;
    default: return f.single ? CUFFT_C2C : CUFFT_Z2Z;
  }
}

// Elements one side stores along dimension k: the complex side of a real transform holds n/2+1 along
// the last one.
int64_t stored(const gofl_fft& f, int k, bool input) {
  const int64_t n = f.dims[k].n;
  const bool complex_side = input ? f.kind != GOFL_FFT_R2C : f.kind != GOFL_FFT_C2R;
  return (f.kind != GOFL_FFT_C2C && complex_side && k == f.rank - 1) ? n / 2 + 1 : n;
}

// The loop of transforms as one dimension: length-1 dimensions dropped, then a dimension merged into
// another whose strides continue it. False when more than one remains.
bool one_loop(const gofl_fft& f, gofl_fft_dim* out) {
  std::vector<gofl_fft_dim> loop;
  for (int i = 0; i < f.loop_rank; ++i)
    if (f.loop[i].n != 1) loop.push_back(f.loop[i]);
  for (bool merged = true; merged && loop.size() > 1;) {
    merged = false;
    for (size_t a = 0; a < loop.size() && !merged; ++a)
      for (size_t b = 0; b < loop.size() && !merged; ++b) {
        if (a == b) continue;
        const gofl_fft_dim& outer = loop[a];
        const gofl_fft_dim& inner = loop[b];
        if (outer.is == inner.n * inner.is && outer.os == inner.n * inner.os) {
          loop[b] = gofl_fft_dim{outer.n * inner.n, inner.is, inner.os};
          loop.erase(loop.begin() + long(a));
          merged = true;
        }
      }
  }
  if (loop.size() > 1) return false;
  *out = loop.empty() ? gofl_fft_dim{1, 0, 0} : loop[0];
  return true;
}

// One side's strides as cuFFT's (embed, stride): stride[k] = stride[k+1] x embed[k+1].
bool embed_of(const gofl_fft& f, bool input, long long* embed, long long* stride) {
  auto s = [&](int k) { return input ? f.dims[k].is : f.dims[k].os; };
  *stride = s(f.rank - 1);
  if (*stride <= 0) return false;
  embed[0] = f.dims[0].n;
  for (int k = 0; k + 1 < f.rank; ++k) {
    if (s(k) <= 0 || s(k) % s(k + 1) != 0) return false;
    embed[k + 1] = s(k) / s(k + 1);
    if (embed[k + 1] < stored(f, k + 1, input)) return false;  // dimensions would overlap
  }
  return true;
}

bool in_place(const gofl_fft& f) { return f.in == f.out; }

// The elements one transform's array spans in cuFFT's layout: stride x the embedding's product, with
// the stored length along the first dimension.
long long dist_of(const gofl_fft& f, const long long* embed, long long stride, bool input) {
  long long d = stride * stored(f, 0, input);
  for (int k = 1; k < f.rank; ++k) d *= embed[k];
  return d;
}

bool layout_of(const gofl_fft& given, Layout* l) {
  if (!given.representable || given.rank < 1 || given.rank > GOFL_FFT_MAX_RANK) return false;
  // A multi-dimensional complex DFT does not depend on the order of its dimensions: a column-major
  // guru plan (strides growing along the dimensions) is the row-major one with its dimensions reversed.
  // Real transforms keep theirs: the halved dimension must stay last.
  gofl_fft f = given;
  if (f.kind == GOFL_FFT_C2C) {
    std::stable_sort(f.dims, f.dims + f.rank, [](const gofl_fft_dim& a, const gofl_fft_dim& b) { return a.is > b.is; });
    for (int k = 0; k + 1 < f.rank; ++k)
      if (f.dims[k].os < f.dims[k + 1].os) return false;  // the output in another order: a transpose
  }
  l->rank = f.rank;
  for (int k = 0; k < f.rank; ++k) {
    if (f.dims[k].n < 1) return false;
    l->n[k] = f.dims[k].n;
  }
  gofl_fft_dim loop;
  if (!one_loop(f, &loop) || loop.n < 1) return false;
  if (!embed_of(f, true, l->inembed, &l->istride) || !embed_of(f, false, l->onembed, &l->ostride)) return false;
  l->batch = loop.n;
  l->type = type_of(f);
  if (l->batch > 1) {
    if (loop.is <= 0 || loop.os <= 0) return false;
    l->idist = loop.is;
    l->odist = loop.os;
  } else {
    // One transform: the distances are never used, but cuFFT checks them, an in-place real
    // transform's to be those of FFTW's padded layout (the real side twice the complex side).
    l->idist = dist_of(f, l->inembed, l->istride, true);
    l->odist = dist_of(f, l->onembed, l->ostride, false);
    if (in_place(f) && f.kind == GOFL_FFT_R2C) l->idist = 2 * l->odist;
    if (in_place(f) && f.kind == GOFL_FFT_C2R) l->odist = 2 * l->idist;
  }
  return f.in_lo == 0 && f.out_lo == 0 && f.in_elems > 0 && f.out_elems > 0;
}

int64_t logical_elems(const gofl_fft& f, const Layout& l, bool input) {
  int64_t e = l.batch;
  for (int k = 0; k < f.rank; ++k) e *= stored(f, k, input);
  return e;
}

uint64_t in_bytes(const gofl_fft& f) { return uint64_t(f.in_elems) * f.in_elem; }
uint64_t out_bytes(const gofl_fft& f) { return uint64_t(f.out_elems) * f.out_elem; }

// ---- pieces ----------------------------------------------------------------------------------------

// How a transform is split so that its copies overlap cuFFT's work. Batch: groups of `per` transforms
// (the last group the rest), each a contiguous range of both arrays. Slabs: a batch of one complex
// transform, dense and row-major, of rank 3: slabs of `per` planes along the first dimension,
// then blocks of `width` elements of the other dimensions (flattened), each transformed along the first.
struct Pieces {
  enum Mode { kWhole, kBatch, kSlabs } mode = kWhole;
  int64_t count = 1, per = 0;         // pieces of the batch or slabs, and the transforms or planes in each
  int64_t blocks = 0, width = 0;      // slabs: the blocks and their width in elements
  int64_t in_step = 0, out_step = 0;  // batch: bytes from one transform to the next
  bool operator==(const Pieces& o) const {
    return mode == o.mode && count == o.count && per == o.per && blocks == o.blocks && width == o.width &&
           in_step == o.in_step && out_step == o.out_step;
  }
};

// Bytes a piece should move at least (GPU_OFFLOAD_FFT_PIECE_KB, default 32 MiB: about 0.6 ms of one
// way of the link, against a few microseconds to enqueue a piece) and the most pieces
// (GPU_OFFLOAD_FFT_PIECES, default 16; 1: every transform whole).
int64_t piece_count(uint64_t bytes) {
  static const long min_kb = std::max(1L, setting_long(SettingId::FFT_PIECE_KB, 32768));
  static const long most = std::clamp(setting_long(SettingId::FFT_PIECES, 16), 1L, 256L);
  return std::clamp<int64_t>(int64_t(bytes / (uint64_t(min_kb) << 10)), 1, most);
}

Pieces pieces_of(const gofl_fft& f, const Layout& l) {
  Pieces p;
  const int64_t want = piece_count(std::max(in_bytes(f), out_bytes(f)));
  if (want < 2) return p;
  // Every output element written by the transform, so that pieces never need the program's output first.
  if (logical_elems(f, l, false) != f.out_elems) return p;
  if (l.batch > 1) {
    // Each transform a contiguous range: the distance is one transform's span (of a padded in-place
    // real transform: the same bytes on both sides).
    const int64_t in_step = l.idist * int64_t(f.in_elem), out_step = l.odist * int64_t(f.out_elem);
    const int64_t in_span = dist_of(f, l.inembed, l.istride, true) * int64_t(f.in_elem);
    const int64_t out_span = dist_of(f, l.onembed, l.ostride, false) * int64_t(f.out_elem);
    if (in_span > in_step || out_span != out_step) return p;
    if (in_place(f) && in_step != out_step) return p;
    if (uint64_t(in_step) * uint64_t(l.batch) < in_bytes(f) || uint64_t(out_step) * uint64_t(l.batch) != out_bytes(f))
      return p;
    const int64_t groups = std::min<int64_t>(want, l.batch);
    p.mode = Pieces::kBatch;
    p.per = (l.batch + groups - 1) / groups;
    p.count = (l.batch + p.per - 1) / p.per;  // > 1: want and the batch are
    p.in_step = in_step;
    p.out_step = out_step;
    return p;
  }
  // Rank 3 only: on an H100 host a 2D c2c of 8192^2 took 56.1 ms in pieces against 52.3 ms whole (4096^2:
  // 14.2 against 13.1; bench/probes/fft_pieces_ab.sh): its columns' strided 1D transforms cost cuFFT more
  // than the copies' overlap saves. 3D 512^3: 94.2 against 98.8 ms, 256^3: 12.4 against 13.1.
  if (l.rank < 3 || (l.type != CUFFT_Z2Z && l.type != CUFFT_C2C) || l.istride != 1 || l.ostride != 1) return p;
  for (int k = 1; k < l.rank; ++k)
    if (l.inembed[k] != l.n[k] || l.onembed[k] != l.n[k]) return p;
  if (logical_elems(f, l, true) != f.in_elems) return p;
  const int64_t n0 = l.n[0], inner = logical_elems(f, l, true) / n0;
  const int64_t slabs = std::min(want, n0);
  p.mode = Pieces::kSlabs;
  p.per = (n0 + slabs - 1) / slabs;
  p.count = (n0 + p.per - 1) / p.per;
  // Blocks of whole 64-element groups where the dimensions allow (coalesced copies and loads).
  const int64_t w = (inner + want - 1) / want;
  p.width = inner >= 64 * want ? (w + 63) / 64 * 64 : w;
  p.blocks = (inner + p.width - 1) / p.width;
  return p.count > 1 && p.blocks > 1 ? p : Pieces{};
}

// ---- cuFFT plans, by FFTW plan ----------------------------------------------------------------------

// A cuFFT plan of this layout (throws on failure; GOFL_GPU_UNSUPPORTED where cuFFT refuses the layout).
cufftHandle make_plan(const Layout& l, size_t* work) {
  cufftHandle h = 0;
  check_fft(cufftCreate(&h), "cufftCreate");
  Layout m = l;  // cufftMakePlanMany64 takes non-const arrays
  cufftResult r = cufftSetAutoAllocation(h, 0);
  if (r == CUFFT_SUCCESS)
    r = cufftMakePlanMany64(h, m.rank, m.n, m.inembed, m.istride, m.idist, m.onembed, m.ostride, m.odist, m.type,
                            m.batch, work);
  if (r != CUFFT_SUCCESS) {
    (void)cufftDestroy(h);
    // cuFFT does not take this layout (an in-place transform whose two sides differ, a size too large):
    // FFTW runs it.
    fail(r == CUFFT_INVALID_SIZE || r == CUFFT_INVALID_VALUE || r == CUFFT_NOT_SUPPORTED ? GOFL_GPU_UNSUPPORTED
                                                                                         : GOFL_GPU_CUFFT_ERROR,
         "cufftMakePlanMany64", int(r));
  }
  return h;
}

// The cuFFT plans of one FFTW plan: the whole transform, or its pieces'. Batch: [0] a group of `per`
// transforms, [1] the last group when smaller. Slabs: [0] a slab, [1] the last slab when thinner,
// [2] a block, [3] the last block when narrower. One work area serves them all (one stream runs them).
struct CachedPlan {
  Layout layout;
  Pieces pieces;
  cufftHandle handle[4] = {};
  size_t work_bytes = 0;
};

std::mutex g_plans_mu;  // the two lists; the handles are used and destroyed only inside a run
std::unordered_map<const void*, CachedPlan>& plans() {
  static auto* m = new std::unordered_map<const void*, CachedPlan>;  // never destroyed: plans outlive us
  return *m;
}
std::vector<cufftHandle>& retired() {
  static auto* v = new std::vector<cufftHandle>;
  return *v;
}

void retire_locked(const CachedPlan& c) {
  for (cufftHandle h : c.handle)
    if (h) retired().push_back(h);
}

void destroy_retired_locked() {
  for (cufftHandle h : retired()) (void)cufftDestroy(h);
  retired().clear();
}

// The layouts of a transform's plans (see CachedPlan); rank 0 where a plan is not needed.
void plan_layouts(const Layout& l, const Pieces& p, Layout out[4]) {
  for (int i = 0; i < 4; ++i) out[i].rank = 0;
  if (p.mode == Pieces::kWhole) {
    out[0] = l;
    return;
  }
  if (p.mode == Pieces::kBatch) {
    out[0] = l;
    out[0].batch = p.per;
    const int64_t last = l.batch - (p.count - 1) * p.per;
    if (last != p.per) out[1] = l, out[1].batch = last;
    return;
  }
  // Slabs: over the dimensions after the first, dense, `per` planes a slab.
  Layout s;
  s.type = l.type;
  s.rank = l.rank - 1;
  int64_t inner = 1;
  for (int k = 1; k < l.rank; ++k) {
    s.n[k - 1] = s.inembed[k - 1] = s.onembed[k - 1] = l.n[k];
    inner *= l.n[k];
  }
  s.istride = s.ostride = 1;
  s.idist = s.odist = inner;
  out[0] = s;
  out[0].batch = p.per;
  const int64_t last_slab = l.n[0] - (p.count - 1) * p.per;
  if (last_slab != p.per) out[1] = s, out[1].batch = last_slab;
  // Blocks: along the first dimension, from the slabs' array (stride `inner`) into a packed block
  // (element j of transform b at b + j * width).
  Layout b;
  b.type = l.type;
  b.rank = 1;
  b.n[0] = b.inembed[0] = b.onembed[0] = l.n[0];
  b.istride = inner;
  b.idist = b.odist = 1;
  b.ostride = p.width;
  b.batch = p.width;
  out[2] = b;
  const int64_t last_block = inner - (p.blocks - 1) * p.width;
  if (last_block != p.width) out[3] = b, out[3].ostride = last_block, out[3].batch = last_block;
}

// The cuFFT plans for `plan` with this layout: the cached ones, or new ones (throws on failure).
CachedPlan plan_for(const void* plan, const gofl_fft& f, const Layout& l) {
  const Pieces pieces = pieces_of(f, l);
  {
    std::lock_guard<std::mutex> lk(g_plans_mu);
    destroy_retired_locked();
    auto it = plans().find(plan);
    if (it != plans().end()) {
      if (it->second.layout == l && it->second.pieces == pieces) return it->second;
      retire_locked(it->second);  // an address FFTW reused for a plan we were not told of
      plans().erase(it);
      destroy_retired_locked();
    }
  }
  CachedPlan c;
  c.layout = l;
  c.pieces = pieces;
  // cuFFT itself is loaded at the first plan (cuda_libraries.h): a cost of its own in the trace.
  Engine::get().load_library(CudaLibrary::Cufft);
  const auto t0 = std::chrono::steady_clock::now();
  Layout want[4];
  plan_layouts(l, pieces, want);
  try {
    for (int i = 0; i < 4; ++i) {
      if (want[i].rank == 0) continue;
      size_t work = 0;
      c.handle[i] = make_plan(want[i], &work);
      c.work_bytes = std::max(c.work_bytes, work);
    }
  } catch (...) {
    for (cufftHandle h : c.handle)
      if (h) (void)cufftDestroy(h);
    throw;
  }
  // A one-time cost of each FFTW plan (the first cuFFT plan also loads cuFFT's own state).
  Engine::get().note_setup(GOFL_SP_CUFFT_PLAN,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  std::lock_guard<std::mutex> lk(g_plans_mu);
  plans()[plan] = c;
  return c;
}

void execute(cufftHandle h, cufftType type, const gofl_fft& f, void* din, void* dout) {
  switch (type) {
    case CUFFT_Z2Z:
      check_fft(cufftExecZ2Z(h, static_cast<cufftDoubleComplex*>(din), static_cast<cufftDoubleComplex*>(dout),
                             f.sign),
                "cufftExecZ2Z");
      break;
    case CUFFT_C2C:
      check_fft(cufftExecC2C(h, static_cast<cufftComplex*>(din), static_cast<cufftComplex*>(dout), f.sign),
                "cufftExecC2C");
      break;
    case CUFFT_D2Z:
      check_fft(cufftExecD2Z(h, static_cast<cufftDoubleReal*>(din), static_cast<cufftDoubleComplex*>(dout)),
                "cufftExecD2Z");
      break;
    case CUFFT_R2C:
      check_fft(cufftExecR2C(h, static_cast<cufftReal*>(din), static_cast<cufftComplex*>(dout)), "cufftExecR2C");
      break;
    case CUFFT_Z2D:
      check_fft(cufftExecZ2D(h, static_cast<cufftDoubleComplex*>(din), static_cast<cufftDoubleReal*>(dout)),
                "cufftExecZ2D");
      break;
    case CUFFT_C2R:
      check_fft(cufftExecC2R(h, static_cast<cufftComplex*>(din), static_cast<cufftReal*>(dout)), "cufftExecC2R");
      break;
    default:
      fail(GOFL_GPU_UNSUPPORTED, "cuFFT type");
  }
}

// ---- the routine ------------------------------------------------------------------------------------

int fft_supports(const gofl_call& c) {
  const gofl_fft* f = c.fft;
  Layout l;
  if (!f || !f->in || !f->out || !layout_of(*f, &l)) return GOFL_GPU_UNSUPPORTED;
  // Every output element must be distinct, or cuFFT's result depends on its write order.
  if (logical_elems(*f, l, false) > f->out_elems) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}

// Device bytes: the arrays (in place, one buffer, but the slabs' blocks need an output of their own),
// and the work area, before the plan exists to say: cuFFT's is at most about one array's size.
uint64_t fft_bytes(const gofl_call& c) {
  const gofl_fft* f = c.fft;
  if (!f) return 0;
  const uint64_t in = in_bytes(*f), out = out_bytes(*f);
  Layout l;
  const bool slabs = layout_of(*f, &l) && pieces_of(*f, l).mode == Pieces::kSlabs;
  const uint64_t data = in_place(*f) && !slabs ? std::max(in, out) : in + out;
  {
    std::lock_guard<std::mutex> lk(g_plans_mu);
    auto it = plans().find(f->plan);
    if (it != plans().end()) return data + it->second.work_bytes;
  }
  return data + std::max(in, out);
}

void set_plans(const CachedPlan& p, Engine& e, const DevMem& work) {
  for (cufftHandle h : p.handle) {
    if (!h) continue;
    check_fft(cufftSetStream(h, e.stream()), "cufftSetStream");
    if (p.work_bytes) check_fft(cufftSetWorkArea(h, work.get()), "cufftSetWorkArea");
  }
}

// As reals, so that the test switch "corrupt" (verify mode) reaches FFT results too.
size_t real_size(const gofl_fft& f) { return f.single ? sizeof(float) : sizeof(double); }

void run_whole(Engine& e, const gofl_fft& f, const Layout& l, const CachedPlan& p) {
  const bool inplace = in_place(f);
  const uint64_t ib = in_bytes(f), ob = out_bytes(f);
  DevMem din = e.alloc(inplace ? std::max(ib, ob) : ib);
  DevMem dout = inplace ? DevMem() : e.alloc(ob);
  void* d_out = inplace ? din.get() : dout.get();

  // In place, the buffer holds whichever view is larger; its bytes beyond the input come from the program.
  e.upload_vec(din.get(), f.in, inplace ? std::max(ib, ob) : ib);
  // Outputs with gaps keep the program's values there: the device copy starts as the program's array.
  if (!inplace && logical_elems(f, l, false) < f.out_elems) e.upload_vec(d_out, f.out, ob);
  e.begin_compute();
  execute(p.handle[0], l.type, f, din.get(), d_out);
  e.finish_compute();

  if (!inplace) e.set_rerunnable();  // FFTW overwrites an out-of-place output without reading it
  const size_t real = real_size(f);
  const uint64_t bytes = inplace ? std::max(ib, ob) : ob;
  e.download(f.out, d_out, int64_t(bytes / real), 1, int64_t(bytes / real), real);
}

// The pieces' outputs back to the program. In place, the program's array is also the input, which a
// rerun on FFTW would need: nothing is written before every piece has computed. Out of place, the
// first piece must have computed (a failure before leaves the output untouched); a later failure still
// lets FFTW overwrite the output.
void download_pieces(Engine& e, const gofl_fft& f, const std::vector<PipelineStep>& compute, size_t first_out,
                     const std::vector<Engine::OutPart>& outs) {
  const bool inplace = in_place(f);
  if (inplace) {
    for (const PipelineStep& s : compute) e.add_compute(s.seconds());
    e.end_pipeline();
  } else {
    compute[first_out].wait();
    e.set_rerunnable();
  }
  if (e.fault("compute")) fail(GOFL_GPU_INJECTED, "compute (injected)");
  if (inplace) return e.download_parts(outs, e.copy_stream(1), nullptr);
  for (size_t i = 0; i < first_out; ++i) e.add_compute(compute[i].seconds());
  e.download_parts(outs, e.copy_stream(1), [&](size_t i) {
    e.add_compute(compute[first_out + i].seconds());  // its kernels are done: its part is in host memory
    if (e.fault("panel")) fail(GOFL_GPU_INJECTED, "panel (injected)");
  });
  e.end_pipeline();
}

// Groups of transforms: each uploaded on the copy stream, transformed, and downloaded after its kernel.
void run_batch(Engine& e, const gofl_fft& f, const Layout& l, const CachedPlan& p) {
  const Pieces& q = p.pieces;
  const bool inplace = in_place(f);
  const uint64_t ib = in_bytes(f), ob = out_bytes(f);
  DevMem din = e.alloc(inplace ? std::max(ib, ob) : ib);
  DevMem dout = inplace ? DevMem() : e.alloc(ob);
  char* d_in = din.get<char>();
  char* d_out = inplace ? d_in : dout.get<char>();
  const uint64_t total_in = inplace ? std::max(ib, ob) : ib;
  cudaStream_t up = e.copy_stream(0), s = e.stream();
  std::vector<PipelineStep> steps(static_cast<size_t>(q.count));
  std::vector<Engine::OutPart> outs;
  const size_t real = real_size(f);
  for (int64_t i = 0; i < q.count; ++i) {
    PipelineStep& st = steps[size_t(i)];
    const int64_t t0 = i * q.per, t1 = std::min<int64_t>(l.batch, t0 + q.per);
    // Test point: a failure while the earlier pieces' kernels are queued.
    if (i == 1 && e.fault("piece")) fail(GOFL_GPU_INJECTED, "piece (injected)");
    const uint64_t a = uint64_t(t0) * uint64_t(q.in_step);
    const uint64_t b = std::min(total_in, uint64_t(t1) * uint64_t(q.in_step));
    e.upload(d_in + a, static_cast<const char*>(f.in) + a, int64_t(b - a), 1, int64_t(b - a), 1, up);
    st.begin(up, s);
    const uint64_t o = uint64_t(t0) * uint64_t(q.out_step);
    execute(p.handle[t1 - t0 == q.per ? 0 : 1], l.type, f, d_in + a, d_out + o);
    st.end(s);
    const uint64_t ob_i = (uint64_t(t1) - uint64_t(t0)) * uint64_t(q.out_step);
    outs.push_back({static_cast<char*>(f.out) + o, d_out + o, int64_t(ob_i / real), 1, int64_t(ob_i / real), real,
                    st.done()});
  }
  download_pieces(e, f, steps, 0, outs);
}

// One complex 3D transform: slabs along the first dimension, then blocks of the other two.
void run_slabs(Engine& e, const gofl_fft& f, const Layout& l, const CachedPlan& p) {
  const Pieces& q = p.pieces;
  const size_t elem = f.in_elem;  // complex, both sides
  const int64_t n0 = l.n[0], inner = logical_elems(f, l, true) / n0;
  DevMem din = e.alloc(in_bytes(f));   // the input, then the slabs' transforms in place
  DevMem dout = e.alloc(out_bytes(f));  // the blocks' transforms, each packed
  cudaStream_t up = e.copy_stream(0), s = e.stream();
  std::vector<PipelineStep> steps(static_cast<size_t>(q.count + q.blocks));  // the slabs', then the blocks'
  for (int64_t i = 0; i < q.count; ++i) {
    PipelineStep& st = steps[size_t(i)];
    const int64_t r0 = i * q.per, r1 = std::min(n0, r0 + q.per);
    if (i == 1 && e.fault("piece")) fail(GOFL_GPU_INJECTED, "piece (injected)");
    char* d = din.get<char>() + uint64_t(r0) * uint64_t(inner) * elem;
    const uint64_t bytes = uint64_t(r1 - r0) * uint64_t(inner) * elem;
    e.upload(d, static_cast<const char*>(f.in) + (d - din.get<char>()), int64_t(bytes), 1, int64_t(bytes), 1, up);
    st.begin(up, s);
    execute(p.handle[r1 - r0 == q.per ? 0 : 1], l.type, f, d, d);
    st.end(s);
  }
  std::vector<Engine::OutPart> outs;
  for (int64_t j = 0; j < q.blocks; ++j) {
    PipelineStep& st = steps[size_t(q.count + j)];
    const int64_t c0 = j * q.width, w = std::min(inner, c0 + q.width) - c0;
    char* d = dout.get<char>() + uint64_t(c0) * uint64_t(n0) * elem;
    st.begin(nullptr, s);
    execute(p.handle[w == q.width ? 2 : 3], l.type, f, din.get<char>() + uint64_t(c0) * elem, d);
    st.end(s);
    // Block j: elements [c0, c0 + w) of every plane, packed w x n0 on the device.
    outs.push_back({static_cast<char*>(f.out) + uint64_t(c0) * elem, d, w, n0, inner, elem, st.done()});
  }
  download_pieces(e, f, steps, size_t(q.count), outs);
}

void fft_run(Engine& e, const gofl_call& c) {
  const gofl_fft& f = *c.fft;
  Layout l;
  if (!layout_of(f, &l)) fail(GOFL_GPU_UNSUPPORTED, "layout");
  const CachedPlan p = plan_for(f.plan, f, l);  // before any copy: a layout cuFFT refuses costs nothing
  DevMem work = p.work_bytes ? e.alloc(p.work_bytes) : DevMem();
  set_plans(p, e, work);
  switch (p.pieces.mode) {
    case Pieces::kBatch: return run_batch(e, f, l, p);
    case Pieces::kSlabs: return run_slabs(e, f, l, p);
    default: return run_whole(e, f, l, p);
  }
}

}  // namespace

// Every FFTW execute's body (generated/gpu_routines.h): the call's transform (gofl_call.fft) carries its
// kind and precision, so T, the element type of the op's precision, picks nothing; the routine reads the
// call itself (D = gofl_call), not a descriptor.
template <class T> Routine fft_body() { return routine<gofl_call, fft_supports, fft_bytes, fft_run>(); }

GOFL_INSTANTIATE_FFT

void fft_forget(const void* plan, bool inside_run_lock) {
  std::lock_guard<std::mutex> lk(g_plans_mu);
  auto it = plans().find(plan);
  if (it != plans().end()) {
    retire_locked(it->second);
    plans().erase(it);
  }
  if (inside_run_lock) destroy_retired_locked();
}

}  // namespace cuda
}  // namespace gofl
