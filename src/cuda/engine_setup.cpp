// One-time costs paid only for what is used: the cuBLAS and cuSOLVER handles, made at the first call
// that uses each library (on a helper thread while the call copies its inputs in), the pinned
// staging ring, sized to the calls seen so far, and the log of what each step cost, which the
// library writes into the trace (trace/record.h, gofl_setup_record).
#include <algorithm>
#include <cstdio>

#include "cuda/engine_state.h"

namespace gofl {
namespace cuda {

namespace {

// The trace's setup phase for loading `lib`.
int load_phase(CudaLibrary lib) {
  if (lib == CudaLibrary::Cublas) return GOFL_SP_LOAD_CUBLAS;
  return lib == CudaLibrary::Cusolver ? GOFL_SP_LOAD_CUSOLVER : GOFL_SP_LOAD_CUFFT;
}

// make_handle's status when the library itself could not be used (Ahead::failure says why).
constexpr int kNotLoaded = -2;

// Made with the engine's context current on the calling thread (the helper, or the call's own),
// loading the library first if this is its first use. 0 on success, else the library's status.
// `load_s` grows by the time loading the library took, whoever loaded it, if no one noted it yet
// (until note_made takes it); `made_s`: making the handle.
int make_handle(unsigned library, cudaStream_t stream, void** out, double* load_s, double* made_s, Failure* why) {
  const auto t0 = Clock::now();
  const CudaLibrary lib = Engine::library_of(library);
  try {
    load_cuda_library(lib);
    *load_s += take_load_seconds(lib);
    const auto t1 = Clock::now();
    int status = 0;
    if (library == Engine::kCublas) {
      cublasHandle_t h = nullptr;
      cublasStatus_t st = cublasCreate(&h);
      if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(h, stream);
      if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
      if (st != CUBLAS_STATUS_SUCCESS && h) cublasDestroy(h);
      if (st == CUBLAS_STATUS_SUCCESS) *out = h;
      status = int(st);
    } else {
      cusolverDnHandle_t h = nullptr;
      cusolverStatus_t st = cusolverDnCreate(&h);
      if (st == CUSOLVER_STATUS_SUCCESS) st = cusolverDnSetStream(h, stream);
      if (st != CUSOLVER_STATUS_SUCCESS && h) cusolverDnDestroy(h);
      if (st == CUSOLVER_STATUS_SUCCESS) *out = h;
      status = int(st);
    }
    *made_s = seconds_since(t1);
    return *out ? 0 : status ? status : -1;
  } catch (const Failure& f) {  // the library cannot be loaded, or lacks a function
    *why = f;
  } catch (...) {  // out of host memory, or a thread error, while loading
    *why = Failure{library == Engine::kCublas ? GOFL_GPU_CUBLAS_ERROR : GOFL_GPU_CUSOLVER_ERROR, 0, "loading the library"};
  }
  *made_s = seconds_since(t0);
  return kNotLoaded;
}

// The one-time costs of a handle made (or attempted): loading its library, if this did, and making it.
void note_made(Engine& e, unsigned library, double* load_s, double made_s) {
  if (*load_s > 0) e.note_setup(load_phase(Engine::library_of(library)), *load_s);
  e.note_setup(library == Engine::kCublas ? GOFL_SP_CUBLAS : GOFL_SP_CUSOLVER, made_s);
  *load_s = 0;
}

int slot(unsigned library) { return library == Engine::kCublas ? 0 : 1; }

// GPU_OFFLOAD_HANDLES_AHEAD=0 makes every handle on the call's own thread when first used (to
// measure what the helper thread saves: bench/startup_costs.py).
bool handles_ahead() {
  static const bool on = setting_long(SettingId::HANDLES_AHEAD, 1) != 0;
  return on;
}

}  // namespace

void Engine::note_setup(int phase, double seconds) {
  if (!impl_ || phase <= 0 || phase >= GOFL_SP_END) return;
  const uint64_t ns = uint64_t(std::max(0.0, seconds) * 1e9);
  for (gofl_setup_phase& p : impl_->setup)
    if (p.phase == uint32_t(phase)) return void(p.duration_ns += ns);
  impl_->setup.push_back(gofl_setup_phase{uint32_t(phase), 0, ns});
}

void Engine::load_library(CudaLibrary lib) {
  load_cuda_library(lib);
  if (const double s = take_load_seconds(lib); s > 0) note_setup(load_phase(lib), s);
}

int Engine::take_setup(gofl_setup_phase* out, int max) {
  if (!impl_ || !out || max <= 0) return 0;
  const int n = std::min<int>(max, int(impl_->setup.size()));
  std::copy(impl_->setup.begin(), impl_->setup.begin() + n, out);
  impl_->setup.clear();
  return n;
}

void Engine::prepare(const gofl_call& c, unsigned libraries) {
  if (!impl_) return;
  if (handles_ahead()) {
    for (unsigned lib : {unsigned(kCublas), unsigned(kCusolver)}) {
      Impl::Ahead& a = impl_->ahead[slot(lib)];
      const bool made = lib == kCublas ? blas_ != nullptr : solver_ != nullptr;
      if (!(libraries & lib) || made || cuda_library_failed(library_of(lib)) || a.thread.joinable()) continue;
      const cudaStream_t stream = stream_;
      try {
        a.thread = std::thread([this, &a, lib, stream] {
          const ThreadOnGpu on(*this);  // the handle belongs to the engine's context
          a.status = make_handle(lib, stream, &a.handle, &a.load_seconds, &a.seconds, &a.failure);
        });
      } catch (...) {
        // No thread: the call makes the handle itself when it needs it.
      }
    }
  }
  // Staging for the call's largest operand: grown now, before any of its transfers is in flight.
  size_t largest = 0;
  for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i)
    largest = std::max<size_t>(largest, size_t(c.operands[i].elems) * size_t(c.operands[i].elem_size));
  if (largest) fit_staging(largest);
}

void Engine::settle() {
  if (!impl_) return;
  for (Impl::Ahead& a : impl_->ahead)
    if (a.thread.joinable()) a.thread.join();
  // A handle made ahead but not used by the call is kept for the next one.
  for (unsigned lib : {unsigned(kCublas), unsigned(kCusolver)}) {
    Impl::Ahead& a = impl_->ahead[slot(lib)];
    if (!a.handle) continue;
    if (lib == kCublas && !blas_) blas_ = static_cast<cublasHandle_t>(a.handle);
    if (lib == kCusolver && !solver_) solver_ = static_cast<cusolverDnHandle_t>(a.handle);
    note_made(*this, lib, &a.load_seconds, a.seconds);
    a.handle = nullptr;
  }
  // A handle the helper failed to make is made again by the call that needs it.
  for (Impl::Ahead& a : impl_->ahead) a.status = 0;
}

void* Engine::take_handle(unsigned library) {
  const bool cublas = library == kCublas;
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, cublas ? "cuBLAS before start" : "cuSOLVER before start");
  Impl::Ahead& a = impl_->ahead[slot(library)];
  if (a.thread.joinable()) a.thread.join();
  if (!a.handle)  // not made ahead, or the helper failed: made here, on the call's thread
    a.status = make_handle(library, stream_, &a.handle, &a.load_seconds, &a.seconds, &a.failure);
  if (!a.handle) {
    const int st = a.status;
    a.status = 0;  // the next call tries again
    note_made(*this, library, &a.load_seconds, a.seconds);
    if (st == kNotLoaded) throw a.failure;
    if (cublas)
      fail(st == CUBLAS_STATUS_ALLOC_FAILED ? GOFL_GPU_NO_MEMORY : GOFL_GPU_CUBLAS_ERROR, "cublasCreate", st);
    fail(st == CUSOLVER_STATUS_ALLOC_FAILED ? GOFL_GPU_NO_MEMORY : GOFL_GPU_CUSOLVER_ERROR, "cusolverDnCreate", st);
  }
  void* h = a.handle;
  a.handle = nullptr;
  note_made(*this, library, &a.load_seconds, a.seconds);
  return h;
}

cublasHandle_t Engine::blas() {
  if (!blas_) blas_ = static_cast<cublasHandle_t>(take_handle(kCublas));
  return blas_;
}

cusolverDnHandle_t Engine::solver() {
  if (!solver_) solver_ = static_cast<cusolverDnHandle_t>(take_handle(kCusolver));
  return solver_;
}

cusolverDnParams_t Engine::params() {
  if (params_) return params_;
  (void)solver();  // params belong with the handle: made after it, counted with it
  const auto t0 = Clock::now();
  cusolverDnParams_t p = nullptr;
  check(cusolverDnCreateParams(&p), "cusolverDnCreateParams");
  params_ = p;
  note_setup(GOFL_SP_CUSOLVER, seconds_since(t0));
  return params_;
}

void Engine::note_call_done(const gofl_call& c, double seconds) {
  if (!impl_ || c.op >= impl_->op_seen.size() || impl_->op_seen[c.op]) return;
  impl_->op_seen[c.op] = true;
  if (impl_->malloc_s > 0) note_setup(GOFL_SP_DEVICE_MEMORY, impl_->malloc_s);
  note_setup(GOFL_SP_FIRST_CALL, seconds);
}

void Engine::fit_staging(size_t bytes) {
  Impl& im = *impl_;
  // Each of the nbuf buffers holds an eighth (by default) of the transfer, rounded up to a power of
  // two from 1 MB, at most the configured chunk; a ring that big already is kept.
  size_t want = size_t(1) << 20;
  const size_t per_buffer = (bytes + size_t(im.nbuf) - 1) / size_t(im.nbuf);
  while (want < per_buffer && want < im.chunk_max) want <<= 1;
  want = std::min(want, im.chunk_max);
  if (im.pinned && im.chunk >= want) return;
  const auto t0 = Clock::now();
  char* fresh = nullptr;
  size_t chunk = want;
  for (;;) {
    if (cudaHostAlloc(reinterpret_cast<void**>(&fresh), chunk * size_t(im.nbuf), cudaHostAllocDefault) == cudaSuccess)
      break;
    (void)cudaGetLastError();
    fresh = nullptr;
    // Pinning that much failed: a smaller ring still works, more slowly; none at all fails the call.
    if (chunk <= im.chunk || chunk <= (size_t(1) << 20)) break;
    chunk /= 4;
  }
  if (!fresh || chunk <= im.chunk) {
    if (fresh) cudaFreeHost(fresh);
    note_setup(GOFL_SP_STAGING, seconds_since(t0));
    if (!im.pinned) fail(GOFL_GPU_NO_MEMORY, "cudaHostAlloc (staging)", int(cudaErrorMemoryAllocation));
    return;
  }
  if (im.pinned) {
    // Between calls nothing should be in flight; the events say so for certain.
    for (cudaEvent_t x : im.ev)
      if (cudaEventSynchronize(x) != cudaSuccess) (void)cudaGetLastError();
    if (cudaFreeHost(im.pinned) != cudaSuccess) (void)cudaGetLastError();
  }
  im.pinned = fresh;
  im.chunk = chunk;
  im.ring = 0;
  // First and last pieces of a transfer (see pieces()): half a buffer by default, at least 64 KB. On the
  // GPU test machine (H200, 16-core host), NumPy a @ b at n = 4096, copy-out GB/s over two runs each
  // (float32, float64, complex128): 4 MB ends 42/42, 48/48, 46/51; no ramp 34/10, 46/24, 49/19; 1 MB ends
  // 34/20, 43/44, 37/26, and 1 MB pieces also halved copy-in (each piece wakes the copy threads). Noisy
  // (one repetition per run), but 4 MB never had a bad run. GPU_OFFLOAD_RAMP_KB sets it; 0 turns the ramp
  // off (every piece a whole buffer).
  const long kb = std::min(setting_long(SettingId::RAMP_KB, long(chunk >> 11)), long(chunk >> 10));
  im.ramp_from = kb == 0 ? 0 : std::max<size_t>(size_t(kb) << 10, size_t(64) << 10);
  note_setup(GOFL_SP_STAGING, seconds_since(t0));
}

}  // namespace cuda
}  // namespace gofl
