// The GPUs' load as NVML reports it (utilisation in percent over its last sample period, memory in
// use), read through dlopen: neither the preload library nor the backend needs libnvidia-ml to load,
// and reading it loads no CUDA library. Used before the GPU is started (which GPU the start would
// pick, and whether other programs leave it room) and by the backend afterwards (the back-off reads
// the GPU the process runs on).
#pragma once

#include <vector>

#include "common/gpu_placement.h"

namespace gofl {

class NvmlReader {
 public:
  // Utilisation of the process's GPU in percent, -1 when it cannot be read (no NVML, no GPU).
  // Until match_bus_id() names the GPU, the first one CUDA_VISIBLE_DEVICES names (else NVML's 0).
  int utilization();
  // The CUDA device's PCI bus id ("0000:18:00.0"), once the context exists: NVML counts every GPU
  // of the machine, CUDA only the visible ones, and in its own order.
  void match_bus_id(const char* bus_id);
  // The load of each GPU CUDA_VISIBLE_DEVICES lets the process see, in NVML's (PCI bus) order, which
  // is CUDA's order on a node of identical GPUs; empty when NVML cannot tell.
  std::vector<GpuLoad> visible_loads();
  // The load of the GPU at a PCI bus id (both fields -1 when unknown).
  GpuLoad load_at(const char* bus_id);

 private:
  bool open();
  std::vector<void*> visible();
  GpuLoad load_of(void* dev);
  bool tried_ = false;
  void* lib_ = nullptr;
  void* dev_ = nullptr;  // matched, or the first visible
  int (*get_util_)(void*, void*) = nullptr;
  int (*get_memory_)(void*, void*) = nullptr;
  int (*by_index_)(unsigned, void**) = nullptr;
  int (*by_bus_)(const char*, void**) = nullptr;
  int (*count_)(unsigned*) = nullptr;
  int (*uuid_)(void*, char*, unsigned) = nullptr;
};

// The process's reader (thread-safe).
int nvml_utilization();
void nvml_match_bus_id(const char* bus_id);
std::vector<GpuLoad> nvml_visible_loads();
GpuLoad nvml_load_at(const char* bus_id);

}  // namespace gofl
