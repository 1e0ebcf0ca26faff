// The GPU's load as NVML reports it (utilisation in percent over its last sample period), read
// through dlopen: neither the preload library nor the backend needs libnvidia-ml to load, and
// reading it loads no CUDA library. Used by the decision before the GPU is started (to start it
// only when other programs leave room) and by the backend afterwards.
#pragma once

namespace gofl {

class NvmlReader {
 public:
  // Utilisation of the device in percent, -1 when it cannot be read (no NVML, no GPU). Opens NVML
  // on first use: the device is the first one CUDA_VISIBLE_DEVICES names (an index or a UUID),
  // else device 0, until match_bus_id() names it exactly.
  int utilization();
  // The CUDA device's PCI bus id ("0000:18:00.0"), once the context exists: NVML counts every GPU
  // of the machine, CUDA only the visible ones.
  void match_bus_id(const char* bus_id);

 private:
  bool open();
  bool tried_ = false;
  void* lib_ = nullptr;
  void* dev_ = nullptr;
  int (*get_util_)(void*, void*) = nullptr;
};

// The process's reader (thread-safe).
int nvml_utilization();
void nvml_match_bus_id(const char* bus_id);

}  // namespace gofl
