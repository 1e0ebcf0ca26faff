// The engine: CUDA context, handles and streams (start()), recovery after a failed call, and the
// test-only fault switch. Its other parts: engine_memory.cpp (device memory pool), engine_copies.cpp
// (pinned staging of host<->device copies, copy threads), engine_phases.cpp (phase timing,
// pipelines, per-call state); engine_state.h holds the state they share.
#include "cuda/engine_state.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gofl {
namespace cuda {

// ---- errors -----------------------------------------------------------------------------------------

void fail(int status, const char* where, int detail) { throw Failure{status, detail, where}; }

void check(cudaError_t e, const char* where) {
  if (e == cudaSuccess) return;
  // Out of memory is not sticky: clear it so that the CPU fallback leaves a clean state behind.
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    fail(GOFL_GPU_NO_MEMORY, where, int(e));
  }
  fail(GOFL_GPU_CUDA_ERROR, where, int(e));
}

void check(cublasStatus_t e, const char* where) {
  if (e == CUBLAS_STATUS_SUCCESS) return;
  fail(e == CUBLAS_STATUS_ALLOC_FAILED ? GOFL_GPU_NO_MEMORY : GOFL_GPU_CUBLAS_ERROR, where, int(e));
}

void check(cusolverStatus_t e, const char* where) {
  if (e == CUSOLVER_STATUS_SUCCESS) return;
  fail(e == CUSOLVER_STATUS_ALLOC_FAILED ? GOFL_GPU_NO_MEMORY : GOFL_GPU_CUSOLVER_ERROR, where, int(e));
}

// ---- the engine -------------------------------------------------------------------------------------

Engine& Engine::get() {
  // Never destroyed: static destructors run after the CUDA runtime has shut down.
  static Engine* e = new Engine();
  return *e;
}

namespace {

// The CUDA libraries of the call that starts the GPU, loaded on a helper thread while the context is made:
// on the GPU test machine (H200, 16-core host) cuBLAS with cuBLASLt took 47 ms to load, cuSOLVER 1-8, cuFFT
// 3, and the driver step and the context 100 ms each. A library that fails to load here fails again at its
// first use, which reports it. Joined when the start ends, whichever way it ends.
class LibrariesBeside {
 public:
  explicit LibrariesBeside(unsigned libraries) {
    static const bool on = setting_long(SettingId::LIBRARIES_AHEAD, 1) != 0;
    if (!on || !libraries) return;
    try {
      thread_ = std::thread([this, libraries] {
        const auto t0 = Clock::now();
        for (unsigned bit : {unsigned(Engine::kCublas), unsigned(Engine::kCusolver), unsigned(Engine::kCufft)}) {
          if (!(libraries & bit)) continue;
          const CudaLibrary lib = Engine::library_of(bit);
          try {
            load_cuda_library(lib);
          } catch (...) {  // its first use fails the same way and reports it
          }
          (void)take_load_seconds(lib);  // counted here, as the whole loading beside the start
        }
        seconds_ = seconds_since(t0);
      });
    } catch (...) {  // no thread: each library loads at its first use
    }
  }
  ~LibrariesBeside() { join(); }
  // Waits for the loading; how long it took (0 when nothing was loaded here).
  double join() {
    if (thread_.joinable()) thread_.join();
    return seconds_;
  }

 private:
  std::thread thread_;
  double seconds_ = 0;
};

}  // namespace

int Engine::start(const char* gpus, unsigned libraries, char* msg, size_t len) {
  static int first_status = -1;
  static char first_msg[256] = "";
  auto report = [&](int status, const char* text) {
    if (msg && len) std::snprintf(msg, len, "%s", text);
    return status;
  };
  if (impl_) return report(GOFL_GPU_OK, description_);
  if (first_status > 0) return report(first_status, first_msg);  // a failed start is not retried

  auto failed = [&](int status, const char* what, const char* why) {
    std::snprintf(first_msg, sizeof first_msg, "%s failed: %s", what, why);
    first_status = status;
    return report(status, first_msg);
  };

  if (const char* f = setting_env(SettingId::FAULT)) {
    if (!fault_[0]) set_fault(f);
  }

  // Each step's time goes to the trace as a one-time cost (note_setup; the Impl that keeps them is
  // made after the context, so they wait here).
  gofl_setup_phase early[3] = {};
  auto t_phase = Clock::now();
  auto lap = [&t_phase] {
    const double s = seconds_since(t_phase);
    t_phase = Clock::now();
    return s;
  };
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return failed(GOFL_GPU_NO_DEVICE, "cudaGetDeviceCount", cudaGetErrorString(e));
  if (count <= 0) return failed(GOFL_GPU_NO_DEVICE, "cudaGetDeviceCount", "no CUDA device");
  early[0] = gofl_setup_phase{GOFL_SP_DRIVER, 0, uint64_t(lap() * 1e9)};
  std::string why_none;
  if (!place(gpus, count, &why_none)) return failed(GOFL_GPU_NO_DEVICE, "choosing a GPU", why_none.c_str());
  early[1] = gofl_setup_phase{GOFL_SP_PLACE, 0, uint64_t(lap() * 1e9)};
  // Beside the context only: the driver's start loads libcuda and the GPU's choice loads NVML, and
  // each dlopen waits for another in flight (there, loading cuBLAS beside the choice made it
  // take 76 ms instead of 16; beside the context it cost nothing measurable: 101.6 ms against
  // 99.5-102.1 without, medians of 24 starts).
  LibrariesBeside beside(libraries);
  const KeepThreadContext keep;  // the program's thread may have a CUDA device of its own
  if ((e = cudaSetDevice(device_)) != cudaSuccess) return failed(GOFL_GPU_NO_DEVICE, "cudaSetDevice", cudaGetErrorString(e));
  if ((e = cudaFree(nullptr)) != cudaSuccess) return failed(GOFL_GPU_NO_DEVICE, "creating the CUDA context", cudaGetErrorString(e));
  ctx_ = current_context();
  early[2] = gofl_setup_phase{GOFL_SP_CONTEXT, 0, uint64_t(lap() * 1e9)};

  auto* im = new Impl();
  for (const gofl_setup_phase& p : early) im->setup.push_back(p);
  im->op_seen.assign(GOFL_N_OPS, false);
  auto phase = [&](int id) { im->setup.push_back(gofl_setup_phase{uint32_t(id), 0, uint64_t(lap() * 1e9)}); };
  // Undo what was created when a later step fails; the context itself stays (harmless).
  auto cleanup = [&] {
    for (cudaEvent_t x : im->ev) cudaEventDestroy(x);
    if (im->pinned) cudaFreeHost(im->pinned);
    if (im->small_pinned) cudaFreeHost(im->small_pinned);
    if (im->info) cudaFree(im->info);
    if (params_) cusolverDnDestroyParams(params_);
    if (solver_) cusolverDnDestroy(solver_);
    if (blas_) cublasDestroy(blas_);
    if (stream_) cudaStreamDestroy(stream_);
    for (cudaStream_t& x : side_) {
      if (x) cudaStreamDestroy(x);
      x = nullptr;
    }
    params_ = nullptr; solver_ = nullptr; blas_ = nullptr; stream_ = nullptr;
    delete im;
  };
  auto cuda_failed = [&](const char* what, cudaError_t err) {
    cleanup();
    (void)cudaGetLastError();
    return failed(err == cudaErrorMemoryAllocation ? GOFL_GPU_NO_MEMORY : GOFL_GPU_CUDA_ERROR, what, cudaGetErrorString(err));
  };

  if ((e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)) != cudaSuccess) return cuda_failed("cudaStreamCreate", e);
  for (cudaStream_t& x : side_)
    if ((e = cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking)) != cudaSuccess) return cuda_failed("cudaStreamCreate", e);
  switch (setting_choice(SettingId::COPY_NT, 0)) {  // out|0|1 (host_view.cpp)
    case 1: g_nt_out = g_nt_in = false; break;
    case 2: g_nt_out = g_nt_in = true; break;
    default: break;
  }

  // The cuBLAS and cuSOLVER handles are made at the first call that uses them (engine_setup.cpp).

  // Pinned staging: 8 buffers of 8 MB by default; smaller if pinning that much fails. An 8 MB DMA
  // takes ~0.16 ms at 50 GB/s, still long enough to hide the per-chunk synchronisation, and the
  // pipeline fills and drains 4x sooner than with 32 MB: on that machine, copy-out of a @ b rose from
  // 26-33 to 36-46 GB/s, copy-in lost ~5% (bench/probes/copy_tune.py). GPU_OFFLOAD_STAGING_BUFFERS and
  // GPU_OFFLOAD_STAGING_MB override.
  im->nbuf = int(std::clamp<long>(setting_long(SettingId::STAGING_BUFFERS, 8), 2, 64));
  // The ring is allocated at the first transfer, sized to it, and grows with later calls up to
  // this (fit_staging, engine_setup.cpp): a first call of n = 1024 pins 8 MB, not 64.
  im->chunk_max = size_t(std::clamp<long>(setting_long(SettingId::STAGING_MB, 8), 1, 1024)) << 20;
  im->ev.resize(size_t(im->nbuf), nullptr);
  for (auto& x : im->ev)
    if ((e = cudaEventCreateWithFlags(&x, cudaEventDisableTiming)) != cudaSuccess) return cuda_failed("cudaEventCreate", e);
  phase(GOFL_SP_STREAMS);
  if ((e = cudaHostAlloc(reinterpret_cast<void**>(&im->small_pinned), Impl::kSmall, cudaHostAllocDefault)) != cudaSuccess)
    return cuda_failed("cudaHostAlloc (small)", e);
  if ((e = cudaMalloc(reinterpret_cast<void**>(&im->info), 256)) != cudaSuccess) return cuda_failed("cudaMalloc (info)", e);
  phase(GOFL_SP_SMALL_BUFFERS);

  // Copy threads: one memcpy stream reaches ~10 GB/s, the link 50. The program's own threads wait
  // for the call, so three quarters of the cores, at most 12 (on its 16: copy-in 55 -> 60
  // GB/s, copy-out +10%, against 8 threads). GPU_OFFLOAD_COPY_THREADS overrides.
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  const long threads = setting_long(SettingId::COPY_THREADS, std::clamp<long>(cores * 3 / 4, 1, 12));
  const int device = device_;
  // Idle copy threads spin 200 us before they sleep (copy_threads.h): there A @ X_i
  // (A kept, X 8192 x 256) took 2.19 ms a call with 300 us of spinning against 2.26 without (200 us
  // is the default: the gaps between a call's copy jobs were under 100 us).
  // GPU_OFFLOAD_COPY_SPIN_US overrides (0: sleep at once).
  const long spin_us = setting_long(SettingId::COPY_SPIN_US, 200);
  im->pool.start(int(std::clamp<long>(threads, 1, 64)), std::min(spin_us, 100000L), [device] {
    if (cudaSetDevice(device) != cudaSuccess) (void)cudaGetLastError();
  });
  im->resident = new ResidentCache([im](int parts, const std::function<void(int)>& body) { im->pool.run(parts, body); });
  // Its size minimum: residency_min_bytes() (policy/registry.h), the policy's too.
  phase(GOFL_SP_COPY_THREADS);

  cudaDeviceProp prop{};
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  if (cudaGetDeviceProperties(&prop, device_) != cudaSuccess) {
    (void)cudaGetLastError();
    std::snprintf(prop.name, sizeof prop.name, "CUDA device %d", device_);
  }
  std::snprintf(gpu_.name, sizeof gpu_.name, "%.*s", int(sizeof gpu_.name - 1), prop.name);
  im->device_total = uint64_t(prop.totalGlobalMem);
  std::snprintf(description_, sizeof description_,
                "GPU %d of %d: %.48s (cc %d.%d, %.1f GiB), CUDA runtime %d.%d, driver %d.%d, staging up to %dx%zu MB, %d copy threads",
                device_, count, prop.name, prop.major, prop.minor, double(prop.totalGlobalMem) / double(1ull << 30), rt / 1000,
                (rt % 1000) / 10, drv / 1000, (drv % 1000) / 10, im->nbuf, im->chunk_max >> 20, im->pool.threads());
  phase(GOFL_SP_DEVICE_INFO);
  if (const double s = beside.join(); s > 0)  // the wait, if any, is in the rest of the start
    im->setup.push_back(gofl_setup_phase{GOFL_SP_LIBRARIES_BESIDE, 0, uint64_t(s * 1e9)});
  impl_ = im;
  return report(GOFL_GPU_OK, description_);
}

void Engine::recover() {
  if (!impl_) return;
  // A failed call may leave copies or kernels queued, on any of the engine's streams, and a
  // pending error; wait for all of them, then clear it.
  (void)cudaDeviceSynchronize();
  (void)cudaGetLastError();
  // A sticky error (illegal address, device lost) survives the clearing: the context is unusable.
  // Nothing was queued since the wait above, so one more device-wide wait (which covers stream()
  // and the side streams) only asks whether the error is still there.
  if (cudaDeviceSynchronize() != cudaSuccess) impl_->lost = true;
  impl_->uploading = impl_->computing = false;
}

bool Engine::lost() const { return impl_ && impl_->lost; }

// ---- test switch ------------------------------------------------------------------------------------

void Engine::set_fault(const char* spec) {
  if (!spec) spec = "";
  std::snprintf(fault_, sizeof fault_, "%s", spec);
}

// GPU_OFFLOAD_FAULT's value is a comma-separated list of step names.
bool Engine::fault(const char* point) const {
  if (!fault_[0] || !point) return false;
  const size_t n = std::strlen(point);
  for (const char* s = fault_; *s;) {
    const char* end = std::strchr(s, ',');
    const size_t len = end ? size_t(end - s) : std::strlen(s);
    if (len == n && std::strncmp(s, point, n) == 0) return true;
    if (!end) break;
    s = end + 1;
  }
  return false;
}

bool Engine::corrupt_result() const { return fault("corrupt"); }

}  // namespace cuda
}  // namespace gofl
