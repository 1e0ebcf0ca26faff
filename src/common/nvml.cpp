#include "common/nvml.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace gofl {
namespace {
struct Utilization {
  unsigned gpu, memory;
};
struct Memory {  // nvmlMemory_t (v1)
  unsigned long long total, free, used;
};
using Init = int (*)();
}  // namespace

bool NvmlReader::open() {
  if (tried_) return get_util_ != nullptr;
  tried_ = true;
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return false;
  auto init = reinterpret_cast<Init>(dlsym(lib_, "nvmlInit_v2"));
  get_util_ = reinterpret_cast<int (*)(void*, void*)>(dlsym(lib_, "nvmlDeviceGetUtilizationRates"));
  get_memory_ = reinterpret_cast<int (*)(void*, void*)>(dlsym(lib_, "nvmlDeviceGetMemoryInfo"));
  by_index_ = reinterpret_cast<int (*)(unsigned, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByIndex_v2"));
  by_bus_ = reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
  count_ = reinterpret_cast<int (*)(unsigned*)>(dlsym(lib_, "nvmlDeviceGetCount_v2"));
  uuid_ = reinterpret_cast<int (*)(void*, char*, unsigned)>(dlsym(lib_, "nvmlDeviceGetUUID"));
  if (!init || !get_util_ || !by_index_ || !count_ || init() != 0) {
    get_util_ = nullptr;
    return false;
  }
  const std::vector<void*> v = visible();
  if (!v.empty()) dev_ = v[0];
  return true;
}

// CUDA_VISIBLE_DEVICES as CUDA reads it: indices or (prefixes of) UUIDs, comma-separated; the list
// ends at the first entry that names no GPU; set but empty: none. MIG instances are not GPUs NVML
// can read a utilisation of here: the list ends there too.
std::vector<void*> NvmlReader::visible() {
  std::vector<void*> out;
  unsigned n = 0;
  if (count_(&n) != 0) return out;
  const char* vis = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!vis) {
    for (unsigned i = 0; i < n; ++i) {
      void* d = nullptr;
      if (by_index_(i, &d) == 0) out.push_back(d);
    }
    return out;
  }
  const std::string list = vis;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(pos, comma - pos);
    pos = comma + 1;
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    void* d = nullptr;
    if (!item.empty() && item[0] >= '0' && item[0] <= '9') {
      char* end = nullptr;
      const unsigned long i = std::strtoul(item.c_str(), &end, 10);
      if (*end != '\0' || i >= n || by_index_(unsigned(i), &d) != 0) break;
    } else if (item.compare(0, 4, "GPU-") == 0 && uuid_) {
      for (unsigned i = 0; i < n && !d; ++i) {
        void* c = nullptr;
        char uuid[96] = "";
        if (by_index_(i, &c) == 0 && uuid_(c, uuid, sizeof uuid) == 0 && std::strncmp(uuid, item.c_str(), item.size()) == 0)
          d = c;
      }
      if (!d) break;
    } else {
      break;
    }
    out.push_back(d);
  }
  return out;
}

GpuLoad NvmlReader::load_of(void* dev) {
  GpuLoad l;
  Utilization u{0, 0};
  if (get_util_(dev, &u) == 0) l.utilization = int(u.gpu);
  Memory m{0, 0, 0};
  if (get_memory_ && get_memory_(dev, &m) == 0 && m.total > 0) l.memory_used = double(m.used) / double(m.total);
  return l;
}

int NvmlReader::utilization() {
  if (!open() || !dev_) return -1;
  Utilization u{0, 0};
  if (get_util_(dev_, &u) != 0) return -1;
  return int(u.gpu);
}

void NvmlReader::match_bus_id(const char* bus_id) {
  if (!bus_id || !*bus_id || !open() || !by_bus_) return;
  void* dev = nullptr;
  if (by_bus_(bus_id, &dev) == 0) dev_ = dev;
}

std::vector<GpuLoad> NvmlReader::visible_loads() {
  std::vector<GpuLoad> out;
  if (!open()) return out;
  for (void* d : visible()) out.push_back(load_of(d));
  return out;
}

GpuLoad NvmlReader::load_at(const char* bus_id) {
  void* dev = nullptr;
  if (!bus_id || !*bus_id || !open() || !by_bus_ || by_bus_(bus_id, &dev) != 0) return GpuLoad{};
  return load_of(dev);
}

namespace {
std::mutex g_m;
NvmlReader& reader() {
  static NvmlReader* r = new NvmlReader;  // never destroyed: read during exit too
  return *r;
}
}  // namespace

int nvml_utilization() {
  std::lock_guard<std::mutex> lk(g_m);
  return reader().utilization();
}

void nvml_match_bus_id(const char* bus_id) {
  std::lock_guard<std::mutex> lk(g_m);
  reader().match_bus_id(bus_id);
}

std::vector<GpuLoad> nvml_visible_loads() {
  std::lock_guard<std::mutex> lk(g_m);
  return reader().visible_loads();
}

GpuLoad nvml_load_at(const char* bus_id) {
  std::lock_guard<std::mutex> lk(g_m);
  return reader().load_at(bus_id);
}

}  // namespace gofl
