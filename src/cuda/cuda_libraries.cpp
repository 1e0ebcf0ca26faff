// Loading cuBLAS, cuSOLVER and cuFFT at their first use (cuda_libraries.h).
#include "cuda/cuda_libraries.h"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "cuda/engine.h"

namespace gofl {
namespace cuda {

namespace {

struct LibraryInfo {
  const char* soname;  // the major version the backend was built with
  const char* what;    // the step named in a Failure to load it
  const char* missing; // ... and in a Failure to find a function in it
  int status;          // the gofl_gpu_status of a Failure
};

const LibraryInfo& info(CudaLibrary lib) {
  static const LibraryInfo kInfo[] = {
      {"libcublas.so." GOFL_CUDA_STR(CUBLAS_VER_MAJOR), "loading cuBLAS (libcublas.so." GOFL_CUDA_STR(CUBLAS_VER_MAJOR) ")",
       "a cuBLAS function (dlsym)", GOFL_GPU_CUBLAS_ERROR},
      {"libcusolver.so." GOFL_CUDA_STR(CUSOLVER_VER_MAJOR),
       "loading cuSOLVER (libcusolver.so." GOFL_CUDA_STR(CUSOLVER_VER_MAJOR) ")", "a cuSOLVER function (dlsym)",
       GOFL_GPU_CUSOLVER_ERROR},
      {"libcufft.so." GOFL_CUDA_STR(CUFFT_VER_MAJOR), "loading cuFFT (libcufft.so." GOFL_CUDA_STR(CUFFT_VER_MAJOR) ")",
       "a cuFFT function (dlsym)", GOFL_GPU_CUFFT_ERROR},
  };
  return kInfo[int(lib)];
}

struct Loaded {
  std::mutex mu;
  std::atomic<void*> handle{nullptr};
  std::atomic<bool> failed{false};
  std::atomic<uint64_t> load_ns{0};  // until taken (take_load_seconds)
};

Loaded& loaded(CudaLibrary lib) {
  static Loaded libs[3];
  return libs[int(lib)];
}

}  // namespace

void* open_toolkit_library(std::initializer_list<const char*> sonames) {
  for (const char* name : sonames)
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return h;
#ifdef GOFL_CUDA_LIBDIR
  if (sonames.size()) {
    const std::string path = std::string(GOFL_CUDA_LIBDIR) + "/" + *sonames.begin();
    if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  }
#endif
  return nullptr;
}

void load_cuda_library(CudaLibrary lib) {
  Loaded& l = loaded(lib);
  if (l.handle.load(std::memory_order_acquire)) return;
  // cuSOLVER links cuBLAS and cuBLASLt: loaded first, under their own lock, so that its time is
  // cuBLAS's and not counted twice when both load at once.
  if (lib == CudaLibrary::Cusolver) {
    try {
      load_cuda_library(CudaLibrary::Cublas);
    } catch (const Failure&) {  // cuSOLVER's own load says why it cannot be used
    }
  }
  std::lock_guard<std::mutex> lock(l.mu);
  if (l.handle.load(std::memory_order_relaxed)) return;
  const LibraryInfo& li = info(lib);
  if (l.failed.load()) fail(li.status, li.what);
  const auto t0 = std::chrono::steady_clock::now();
  void* h = open_toolkit_library({li.soname});
  if (!h) {
    l.failed.store(true);
    fail(li.status, li.what);
  }
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  l.load_ns.store(uint64_t(ns > 0 ? ns : 1));
  l.handle.store(h, std::memory_order_release);
}

double take_load_seconds(CudaLibrary lib) { return double(loaded(lib).load_ns.exchange(0)) * 1e-9; }

bool cuda_library_failed(CudaLibrary lib) { return loaded(lib).failed.load(); }

void* cuda_library_symbol(CudaLibrary lib, const char* name) {
  load_cuda_library(lib);
  void* f = dlsym(loaded(lib).handle.load(std::memory_order_acquire), name);
  if (!f) fail(info(lib).status, info(lib).missing);
  return f;
}

}  // namespace cuda
}  // namespace gofl
