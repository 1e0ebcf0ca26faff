#include "common/nvml.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace gofl {
namespace {
struct Utilization {
  unsigned gpu, memory;
};
using Init = int (*)();
using ByIndex = int (*)(unsigned, void**);
using ByString = int (*)(const char*, void**);
}  // namespace

bool NvmlReader::open() {
  if (tried_) return get_util_ && dev_;
  tried_ = true;
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return false;
  auto init = reinterpret_cast<Init>(dlsym(lib_, "nvmlInit_v2"));
  get_util_ = reinterpret_cast<int (*)(void*, void*)>(dlsym(lib_, "nvmlDeviceGetUtilizationRates"));
  if (!init || !get_util_ || init() != 0) {
    get_util_ = nullptr;
    return false;
  }
  auto by_index = reinterpret_cast<ByIndex>(dlsym(lib_, "nvmlDeviceGetHandleByIndex_v2"));
  auto by_uuid = reinterpret_cast<ByString>(dlsym(lib_, "nvmlDeviceGetHandleByUUID"));
  unsigned index = 0;
  const char* vis = std::getenv("CUDA_VISIBLE_DEVICES");
  if (vis && std::strncmp(vis, "GPU-", 4) == 0 && by_uuid) {
    char uuid[96];
    std::snprintf(uuid, sizeof uuid, "%s", vis);
    if (char* comma = std::strchr(uuid, ',')) *comma = '\0';
    if (by_uuid(uuid, &dev_) == 0) return true;
    dev_ = nullptr;
  } else if (vis && *vis >= '0' && *vis <= '9') {
    index = unsigned(std::strtoul(vis, nullptr, 10));
  }
  if (by_index && by_index(index, &dev_) != 0) dev_ = nullptr;
  return dev_ != nullptr;
}

int NvmlReader::utilization() {
  if (!open()) return -1;
  Utilization u{0, 0};
  if (get_util_(dev_, &u) != 0) return -1;
  return int(u.gpu);
}

void NvmlReader::match_bus_id(const char* bus_id) {
  if (!bus_id || !*bus_id) return;
  open();
  if (!lib_ || !get_util_) return;
  auto by_bus = reinterpret_cast<ByString>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
  void* dev = nullptr;
  if (by_bus && by_bus(bus_id, &dev) == 0) dev_ = dev;
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

}  // namespace gofl
