// The split path's engines (split.h): cuBLASXt's handle and cusolverMg, each made at its first use,
// and what a failed split call leaves to clean up.
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <string>

#include "cuda/split.h"

namespace gofl {
namespace cuda {

SplitRoutine* split_routines() {
  static SplitRoutine table[GOFL_N_OPS];
  return table;
}

cublasXtHandle_t xt_handle(const std::vector<int>& devices) {
  // Made once, under the backend's one-call-at-a-time lock; a failed attempt is retried next call.
  static cublasXtHandle_t h = nullptr;
  if (h) return h;
  cublasXtHandle_t made = nullptr;
  // cuBLASXt is part of cuBLAS, loaded here if no one-GPU call has used it yet.
  Engine::get().load_library(CudaLibrary::Cublas);
  check(cublasXtCreate(&made), "cublasXtCreate");
  std::vector<int> ids(devices);
  cublasStatus_t s = cublasXtDeviceSelect(made, int(ids.size()), ids.data());
  // Tiles of 4096: on an H200 the probe's 2048 and 4096 were both tried (bench/probes/multigpu_probe.cpp);
  // larger tiles mean fewer, longer copies per GPU. GPU_OFFLOAD_SPLIT_BLOCK overrides.
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasXtSetBlockDim(made, int(setting_long(SettingId::SPLIT_BLOCK, 4096)));
  // The program's buffers are pageable: cuBLASXt pins each one for the call (5-8x the pageable copy rate).
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasXtSetPinningMemMode(made, CUBLASXT_PINNING_ENABLED);
  if (s != CUBLAS_STATUS_SUCCESS) {
    cublasXtDestroy(made);
    check(s, "cublasXtDeviceSelect");
  }
  h = made;
  return h;
}

// cusolverMg of the cuSOLVER version the backend was built with, then any.
constexpr const char* kMgSoname = "libcusolverMg.so." GOFL_CUDA_STR(CUSOLVER_VER_MAJOR);

const MgApi& mg_api(const std::vector<int>& devices) {
  static MgApi api;
  static bool ready = false;
  if (ready) return api;
  static void* lib = nullptr;
  if (!lib && !(lib = open_toolkit_library({kMgSoname, "libcusolverMg.so"}))) fail(GOFL_GPU_UNSUPPORTED, "dlopen libcusolverMg");
  bool all = true;
#define GOFL_MG_LOAD(name)                                                  \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, #name)); \
  all = all && api.name;
  GOFL_MG_LOAD(cusolverMgCreate)
  GOFL_MG_LOAD(cusolverMgDeviceSelect)
  GOFL_MG_LOAD(cusolverMgCreateDeviceGrid)
  GOFL_MG_LOAD(cusolverMgCreateMatrixDesc)
  GOFL_MG_LOAD(cusolverMgDestroyMatrixDesc)
  GOFL_MG_LOAD(cusolverMgGetrf_bufferSize)
  GOFL_MG_LOAD(cusolverMgGetrf)
  GOFL_MG_LOAD(cusolverMgGetrs_bufferSize)
  GOFL_MG_LOAD(cusolverMgGetrs)
  GOFL_MG_LOAD(cusolverMgPotrf_bufferSize)
  GOFL_MG_LOAD(cusolverMgPotrf)
  GOFL_MG_LOAD(cusolverMgPotrs_bufferSize)
  GOFL_MG_LOAD(cusolverMgPotrs)
  GOFL_MG_LOAD(cusolverMgSyevd_bufferSize)
  GOFL_MG_LOAD(cusolverMgSyevd)
#undef GOFL_MG_LOAD
  if (!all) fail(GOFL_GPU_UNSUPPORTED, "dlsym libcusolverMg");
  if (!api.handle) check(api.cusolverMgCreate(&api.handle), "cusolverMgCreate");
  std::vector<int> ids(devices);
  check(api.cusolverMgDeviceSelect(api.handle, int(ids.size()), ids.data()), "cusolverMgDeviceSelect");
  std::vector<int32_t> grid_ids(devices.begin(), devices.end());
  check(api.cusolverMgCreateDeviceGrid(&api.grid, 1, int32_t(grid_ids.size()), grid_ids.data(),
                                       CUDALIBMG_GRID_MAPPING_COL_MAJOR),
        "cusolverMgCreateDeviceGrid");
  api.devices = devices;
  ready = true;
  return api;
}

void split_recover(const Engine& e) {
  for (int d : e.split_devices()) {
    if (cudaSetDevice(d) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    (void)cudaDeviceSynchronize();
    (void)cudaGetLastError();
  }
  if (cudaSetDevice(e.device()) != cudaSuccess) (void)cudaGetLastError();
}

SavedMatrix::SavedMatrix(void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem)
    : host_(static_cast<char*>(host)), rows_(rows), cols_(cols), ld_(ld), elem_(elem) {
  bytes_.resize(size_t(rows) * size_t(cols) * elem);
  for (int64_t j = 0; j < cols; ++j)
    std::memcpy(&bytes_[size_t(j) * size_t(rows) * elem], host_ + size_t(j) * size_t(ld) * elem, size_t(rows) * elem);
}

void SavedMatrix::restore() const {
  for (int64_t j = 0; j < cols_; ++j)
    std::memcpy(host_ + size_t(j) * size_t(ld_) * elem_, &bytes_[size_t(j) * size_t(rows_) * elem_], size_t(rows_) * elem_);
}

}  // namespace cuda
}  // namespace gofl
