#include "preload/gpu_probe.h"
#include "policy/registry.h"

#include <glob.h>
#include <unistd.h>

namespace gofl {
namespace {

bool exists(const char* path) { return access(path, F_OK) == 0; }

bool any_gpu_device_file() {
  glob_t g{};
  const bool found = glob("/dev/nvidia[0-9]*", GLOB_NOSORT, nullptr, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  return found;
}

}  // namespace

GpuAbsence gpu_absence(const std::string& backend, const char* (*env)(const char*)) {
#ifndef GOFL_WITH_CUDA_BACKEND
  const char* chosen = env(setting_info(SettingId::BACKEND).var);
  if (!chosen || !*chosen)
    return {GpuAbsence::NotBuilt, "built without CUDA support (the CUDA toolkit was not found when this gpu-offload was built); "
           "rebuild it where the toolkit is installed"};
#endif
  // A bare name (the library's own path was unknown) is searched by dlopen: only a path can be checked.
  if (backend.find('/') != std::string::npos && !exists(backend.c_str()))
    return {GpuAbsence::BackendMissing,
            "the CUDA backend is missing from the install (" + backend + " not found); reinstall gpu-offload"};
  // WSL's driver has neither /proc/driver/nvidia nor /dev/nvidiaN, only /dev/dxg.
  const bool wsl = exists("/dev/dxg");
  if (!wsl && !exists("/proc/driver/nvidia/version"))
    return {GpuAbsence::NoDriver,
            "no NVIDIA driver (no /proc/driver/nvidia/version: this machine has no NVIDIA GPU, or its driver is "
            "not loaded)"};
  if (const char* vis = env("CUDA_VISIBLE_DEVICES"); vis && (!*vis || vis[0] == '-'))
    return {GpuAbsence::NoGpuVisible, std::string("no GPU visible (CUDA_VISIBLE_DEVICES=\"") + vis + "\" hides every GPU)"};
  if (!wsl && !any_gpu_device_file())
    return {GpuAbsence::NoGpuVisible,
            "no GPU visible (the NVIDIA driver is loaded but there is no /dev/nvidia0, ...: in a container, pass "
            "the GPU in)"};
  return {};
}

}  // namespace gofl
