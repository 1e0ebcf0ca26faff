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
  bool operator==(const Layout& o) const { return std::memcmp(this, &o, sizeof o) == 0; }
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

// ---- cuFFT plans, by FFTW plan ----------------------------------------------------------------------

struct CachedPlan {
  Layout layout;
  cufftHandle handle = 0;
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

void destroy_retired_locked() {
  for (cufftHandle h : retired()) (void)cufftDestroy(h);
  retired().clear();
}

// The cuFFT plan for `plan` with this layout: the cached one, or a new one (throws on failure).
CachedPlan plan_for(const void* plan, const Layout& l) {
  {
    std::lock_guard<std::mutex> lk(g_plans_mu);
    destroy_retired_locked();
    auto it = plans().find(plan);
    if (it != plans().end()) {
      if (it->second.layout == l) return it->second;
      retired().push_back(it->second.handle);  // an address FFTW reused for a plan we were not told of
      plans().erase(it);
      destroy_retired_locked();
    }
  }
  CachedPlan c;
  c.layout = l;
  // cuFFT itself is loaded at the first plan (cuda_libraries.h): a cost of its own in the trace.
  Engine::get().load_library(CudaLibrary::Cufft);
  const auto t0 = std::chrono::steady_clock::now();
  check_fft(cufftCreate(&c.handle), "cufftCreate");
  Layout m = l;  // cufftMakePlanMany64 takes non-const arrays
  cufftResult r = cufftSetAutoAllocation(c.handle, 0);
  if (r == CUFFT_SUCCESS)
    r = cufftMakePlanMany64(c.handle, m.rank, m.n, m.inembed, m.istride, m.idist, m.onembed, m.ostride, m.odist,
                            m.type, m.batch, &c.work_bytes);
  if (r != CUFFT_SUCCESS) {
    (void)cufftDestroy(c.handle);
    // cuFFT does not take this layout (an in-place transform whose two sides differ, a size too large):
    // FFTW runs it.
    fail(r == CUFFT_INVALID_SIZE || r == CUFFT_INVALID_VALUE || r == CUFFT_NOT_SUPPORTED ? GOFL_GPU_UNSUPPORTED
                                                                                         : GOFL_GPU_CUFFT_ERROR,
         "cufftMakePlanMany64", int(r));
  }
  // A one-time cost of each FFTW plan (the first cuFFT plan also loads cuFFT's own state).
  Engine::get().note_setup(GOFL_SP_CUFFT_PLAN,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  std::lock_guard<std::mutex> lk(g_plans_mu);
  plans()[plan] = c;
  return c;
}

void execute(const CachedPlan& p, const gofl_fft& f, void* din, void* dout) {
  switch (p.layout.type) {
    case CUFFT_Z2Z:
      check_fft(cufftExecZ2Z(p.handle, static_cast<cufftDoubleComplex*>(din), static_cast<cufftDoubleComplex*>(dout),
                             f.sign),
                "cufftExecZ2Z");
      break;
    case CUFFT_C2C:
      check_fft(cufftExecC2C(p.handle, static_cast<cufftComplex*>(din), static_cast<cufftComplex*>(dout), f.sign),
                "cufftExecC2C");
      break;
    case CUFFT_D2Z:
      check_fft(cufftExecD2Z(p.handle, static_cast<cufftDoubleReal*>(din), static_cast<cufftDoubleComplex*>(dout)),
                "cufftExecD2Z");
      break;
    case CUFFT_R2C:
      check_fft(cufftExecR2C(p.handle, static_cast<cufftReal*>(din), static_cast<cufftComplex*>(dout)), "cufftExecR2C");
      break;
    case CUFFT_Z2D:
      check_fft(cufftExecZ2D(p.handle, static_cast<cufftDoubleComplex*>(din), static_cast<cufftDoubleReal*>(dout)),
                "cufftExecZ2D");
      break;
    case CUFFT_C2R:
      check_fft(cufftExecC2R(p.handle, static_cast<cufftComplex*>(din), static_cast<cufftReal*>(dout)), "cufftExecC2R");
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

uint64_t fft_bytes(const gofl_call& c) {
  const gofl_fft* f = c.fft;
  if (!f) return 0;
  const uint64_t in = in_bytes(*f), out = out_bytes(*f);
  const uint64_t data = in_place(*f) ? std::max(in, out) : in + out;
  // The work area, before the plan exists to say: cuFFT's is at most about one array's size.
  {
    std::lock_guard<std::mutex> lk(g_plans_mu);
    auto it = plans().find(f->plan);
    if (it != plans().end()) return data + it->second.work_bytes;
  }
  return data + std::max(in, out);
}

void fft_run(Engine& e, const gofl_call& c) {
  const gofl_fft& f = *c.fft;
  Layout l;
  if (!layout_of(f, &l)) fail(GOFL_GPU_UNSUPPORTED, "layout");
  const CachedPlan p = plan_for(f.plan, l);  // before any copy: a layout cuFFT refuses costs nothing
  check_fft(cufftSetStream(p.handle, e.stream()), "cufftSetStream");

  const bool inplace = in_place(f);
  const uint64_t ib = in_bytes(f), ob = out_bytes(f);
  DevMem din = e.alloc(inplace ? std::max(ib, ob) : ib);
  DevMem dout = inplace ? DevMem() : e.alloc(ob);
  DevMem work = p.work_bytes ? e.alloc(p.work_bytes) : DevMem();
  if (p.work_bytes) check_fft(cufftSetWorkArea(p.handle, work.get()), "cufftSetWorkArea");
  void* d_out = inplace ? din.get() : dout.get();

  // In place, the buffer holds whichever view is larger; its bytes beyond the input come from the program.
  e.upload_vec(din.get(), f.in, inplace ? std::max(ib, ob) : ib);
  // Outputs with gaps keep the program's values there: the device copy starts as the program's array.
  if (!inplace && logical_elems(f, l, false) < f.out_elems) e.upload_vec(d_out, f.out, ob);
  e.begin_compute();
  execute(p, f, din.get(), d_out);
  e.finish_compute();

  if (!inplace) e.set_rerunnable();  // FFTW overwrites an out-of-place output without reading it
  // As reals, so that the test switch "corrupt" (verify mode) reaches FFT results too.
  const size_t real = f.single ? sizeof(float) : sizeof(double);
  const uint64_t bytes = inplace ? std::max(ib, ob) : ob;
  e.download(f.out, d_out, int64_t(bytes / real), 1, int64_t(bytes / real), real);
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
    retired().push_back(it->second.handle);
    plans().erase(it);
  }
  if (inside_run_lock) destroy_retired_locked();
}

}  // namespace cuda
}  // namespace gofl
