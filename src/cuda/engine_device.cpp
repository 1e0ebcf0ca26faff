// Which GPU the engine runs on, and how a program thread reaches it: the placement at start
// (common/gpu_placement.h, with NVML's load of each GPU CUDA shows), and ThreadOnGpu, which makes
// the engine's context current for one backend call and then gives the thread back the context it
// had, so that a program with CUDA work of its own keeps its current device.
#include <dlfcn.h>
#include <stdlib.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "common/gpu_placement.h"
#include "common/nvml.h"
#include "cuda/engine_state.h"

namespace gofl {
namespace cuda {
namespace {

// The driver's context functions, from the libcuda.so.1 the runtime loaded (linking it would make
// the backend unloadable on a machine without the driver).
int (*g_ctx_get)(void**) = nullptr;
int (*g_ctx_set)(void*) = nullptr;

// Looked up until found: the first backend call comes before the runtime has loaded libcuda.so.1
// (a once-only lookup then found nothing, and no call ever gave a thread its context back).
void load_context_functions() {
  static std::mutex m;
  std::lock_guard<std::mutex> lk(m);
  if (g_ctx_get && g_ctx_set) return;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) return;
  auto get = reinterpret_cast<int (*)(void**)>(dlsym(h, "cuCtxGetCurrent"));
  auto set = reinterpret_cast<int (*)(void*)>(dlsym(h, "cuCtxSetCurrent"));
  if (get && set) g_ctx_get = get, g_ctx_set = set;
}

const char* getenv_plain(const char* name) { return getenv(name); }

}  // namespace

void* current_context() {
  load_context_functions();
  void* c = nullptr;
  return g_ctx_get && g_ctx_get(&c) == 0 ? c : nullptr;
}

KeepThreadContext::KeepThreadContext() {
  load_context_functions();
  saved_ = g_ctx_get && g_ctx_get(&prev_) == 0;
}

KeepThreadContext::~KeepThreadContext() {
  if (saved_) g_ctx_set(prev_);
}

ThreadOnGpu::ThreadOnGpu(const Engine& e) {
  if (!e.started()) return;
  if (g_ctx_set && e.context()) {
    if (g_ctx_set(e.context()) == 0) return;
  }
  if (cudaSetDevice(e.device()) != cudaSuccess) (void)cudaGetLastError();
}

bool Engine::place(const char* gpus, int count, std::string* why) {
  GpuList list;
  if (!parse_gpu_list(gpus ? gpus : "", &list, why)) {
    *why = "the GPU setting '" + std::string(gpus) + "' is not valid: " + *why;
    return false;
  }
  const LocalRank rank = find_local_rank(getenv_plain);
  // CUDA's device numbers are not NVML's: each GPU's load is found by its PCI bus id.
  std::vector<GpuLoad> loads;
  std::vector<std::string> bus;
  loads.resize(size_t(count));
  bus.resize(size_t(count));
  for (int d = 0; d < count; ++d) {
    char b[32] = "";
    if (cudaDeviceGetPCIBusId(b, sizeof b, d) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    bus[size_t(d)] = b;
    if (count > 1 && !rank.variable) loads[size_t(d)] = nvml_load_at(b);
  }
  const Placement p = choose_gpu(count, list, rank, loads);
  if (p.device < 0) {
    *why = p.why;
    return false;
  }
  device_ = p.device;
  split_devices_.assign(1, p.device);
  for (int d : p.usable)
    if (d != p.device) split_devices_.push_back(d);
  gpu_ = gofl_gpu_device{};
  gpu_.index = p.device;
  gpu_.count = count;
  std::snprintf(gpu_.bus_id, sizeof gpu_.bus_id, "%s", bus[size_t(p.device)].c_str());
  std::string chosen = p.why;
  // Say how loaded it was: on a one-GPU machine that is the only sign of another program on it.
  const GpuLoad at = count > 1 && !rank.variable ? loads[size_t(p.device)] : nvml_load_at(gpu_.bus_id);
  if (at.memory_used >= 0 || at.utilization >= 0) {
    char b[96];
    std::snprintf(b, sizeof b, "; at the start %.0f%% of its memory in use, %d%% busy", at.memory_used * 100,
                  at.utilization);
    chosen += b;
  }
  std::snprintf(gpu_.chosen_by, sizeof gpu_.chosen_by, "%s", chosen.c_str());
  return true;
}

void Engine::device_info(gofl_gpu_device* out) const {
  if (out) *out = gpu_;
}

}  // namespace cuda
}  // namespace gofl
