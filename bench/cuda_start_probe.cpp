// Issue 19: does the order of CUDA's start steps change what each costs? One fresh process runs one
// order and prints each step's milliseconds; bench/cuda_start_probe.sh runs every order several times
// and prints the medians side by side.
//
//   ctx-first   driver, context, then cuBLAS (with cuBLASLt), cuSOLVER and cuFFT loaded, then the calls
//   libs-first  cuBLAS, cuSOLVER and cuFFT loaded first (as the backend's own links do today), then
//               driver and context, then the calls
//   blas-only   driver, context, cuBLAS alone (cuSOLVER and cuFFT never loaded), then the calls
//
// The calls: cublasCreate, then sgemm and dgemm of n = 1024 twice each (synchronised), so that the
// first call's excess is seen with either order. Built on the GPU machine by the .sh beside it.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;
Clock::time_point g_t = Clock::now();

void step(const char* name) {
  const auto now = Clock::now();
  std::printf("%s %.3f\n", name, std::chrono::duration<double, std::milli>(now - g_t).count());
  g_t = Clock::now();
}

void* need(void* h, const char* sym) {
  void* f = h ? dlsym(h, sym) : nullptr;
  if (!f) {
    std::fprintf(stderr, "missing %s: %s\n", sym, dlerror());
    std::exit(2);
  }
  return f;
}

void* load(const char* lib) {
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
    std::exit(2);
  }
  return h;
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  std::exit(3);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string order = argc > 1 ? argv[1] : "ctx-first";
  const bool libs_first = order == "libs-first";
  const bool blas_only = order == "blas-only";
  void* blas = nullptr;
  auto load_libs = [&] {
    blas = load("libcublas.so.13");
    step("load cuBLAS and cuBLASLt");
    if (blas_only) return;
    load("libcusolver.so.12");
    step("load cuSOLVER");
    load("libcufft.so.12");
    step("load cuFFT");
  };
  g_t = Clock::now();
  if (libs_first) load_libs();
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  step("driver initialisation");
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaFree(nullptr), "cudaFree");
  step("context");
  if (!libs_first) load_libs();

  using create_t = int (*)(void**);
  using sgemm_t = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                          const float*, float*, int);
  using dgemm_t = int (*)(void*, int, int, int, int, int, const double*, const double*, int, const double*, int,
                          const double*, double*, int);
  auto create = reinterpret_cast<create_t>(need(blas, "cublasCreate_v2"));
  auto sgemm = reinterpret_cast<sgemm_t>(need(blas, "cublasSgemm_v2"));
  auto dgemm = reinterpret_cast<dgemm_t>(need(blas, "cublasDgemm_v2"));
  const int n = 1024;
  void* dev = nullptr;
  check(cudaMalloc(&dev, size_t(3) * n * n * sizeof(double)), "cudaMalloc");
  check(cudaMemset(dev, 0x3f, size_t(3) * n * n * sizeof(double)), "cudaMemset");
  check(cudaDeviceSynchronize(), "sync");
  step("device memory");
  void* h = nullptr;
  if (create(&h) != 0) return 4;
  step("cublasCreate");
  const float sa = 1, sb = 0;
  const double da = 1, db = 0;
  float* f = static_cast<float*>(dev);
  double* d = static_cast<double*>(dev);
  for (int rep = 0; rep < 2; ++rep) {
    if (sgemm(h, 0, 0, n, n, n, &sa, f, n, f + n * n, n, &sb, f + 2 * n * n, n) != 0) return 5;
    check(cudaDeviceSynchronize(), "sync");
    step(rep ? "sgemm second" : "sgemm first");
  }
  for (int rep = 0; rep < 2; ++rep) {
    if (dgemm(h, 0, 0, n, n, n, &da, d, n, d + n * n, n, &db, d + 2 * n * n, n) != 0) return 5;
    check(cudaDeviceSynchronize(), "sync");
    step(rep ? "dgemm second" : "dgemm first");
  }
  return 0;
}
