// Which multi-GPU engines of the CUDA toolkit work in one process on this machine, and what
// cuBLASXt's dgemm costs from the program's own (pageable) buffers, before any of it is wired into
// gpu-offload: cuBLASXt dgemm on the GPU list given, with and without its pinning,
// each result checked at sampled entries against a host dot product; cusolverMg's handle, device
// selection and device grid (the start of getrf/potrf/syevd there).
//
//   multigpu_probe DEVICES SIZES...      e.g. multigpu_probe 0 8192 16384;  multigpu_probe 0,1 32768
#include <cublasXt.h>
#include <cuda_runtime.h>
#include <cusolverMg.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double seconds_of(const std::chrono::steady_clock::time_point& t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Largest relative error at 64 sampled entries of C = A B, against a host dot product.
double sampled_error(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& c, long n) {
  double worst = 0;
  for (int s = 0; s < 64; ++s) {
    const long i = (s * 7919L) % n, j = (s * 104729L + 13) % n;
    double ref = 0, mag = 0;
    for (long k = 0; k < n; ++k) {
      ref += a[size_t(k * n + i)] * b[size_t(j * n + k)];
      mag += std::fabs(a[size_t(k * n + i)] * b[size_t(j * n + k)]);
    }
    worst = std::max(worst, std::fabs(c[size_t(j * n + i)] - ref) / (mag > 0 ? mag : 1));
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: multigpu_probe DEVICES SIZES...   (DEVICES: 0 or 0,1 or all)\n");
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
    std::printf("FAIL: no CUDA device\n");
    return 1;
  }
  std::vector<int> devices;
  const std::string list = argv[1];
  if (list == "all") {
    for (int d = 0; d < count; ++d) devices.push_back(d);
  } else {
    for (size_t pos = 0; pos <= list.size();) {
      size_t comma = list.find(',', pos);
      if (comma == std::string::npos) comma = list.size();
      devices.push_back(std::atoi(list.substr(pos, comma - pos).c_str()));
      pos = comma + 1;
    }
  }
  for (int d : devices)
    if (d < 0 || d >= count) {
      std::printf("FAIL: GPU %d is not visible (%d visible)\n", d, count);
      return 1;
    }
  std::printf("== %zu of %d GPUs: %s\n", devices.size(), count, list.c_str());

  // cusolverMg: does the handle, the device selection and a device grid work in this process?
  {
    cusolverMgHandle_t h = nullptr;
    cudaLibMgGrid_t grid = nullptr;
    std::vector<int32_t> ids(devices.begin(), devices.end());
    const auto t0 = std::chrono::steady_clock::now();
    int st = cusolverMgCreate(&h);
    if (st == 0) st = cusolverMgDeviceSelect(h, int(devices.size()), devices.data());
    if (st == 0) st = cusolverMgCreateDeviceGrid(&grid, 1, int32_t(ids.size()), ids.data(), CUDALIBMG_GRID_MAPPING_COL_MAJOR);
    std::printf("%s: cusolverMg handle, device selection and a 1 x %zu grid (status %d, %.3f s)\n",
                st == 0 ? "PASS" : "FAIL", devices.size(), st, seconds_of(t0));
    if (grid) cusolverMgDestroyGrid(grid);
    if (h) cusolverMgDestroy(h);
  }

  cublasXtHandle_t xt = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  if (cublasXtCreate(&xt) != CUBLAS_STATUS_SUCCESS ||
      cublasXtDeviceSelect(xt, int(devices.size()), devices.data()) != CUBLAS_STATUS_SUCCESS) {
    std::printf("FAIL: cublasXtCreate / cublasXtDeviceSelect\n");
    return 1;
  }
  std::printf("cuBLASXt handle on %zu GPUs: %.3f s\n", devices.size(), seconds_of(t0));
  std::printf("%7s %6s %-8s %10s %10s %12s %s\n", "n", "block", "pinning", "first s", "second s", "TFLOP/s", "max rel err");
  for (int a = 2; a < argc; ++a) {
    const long n = std::atol(argv[a]);
    if (n < 1) continue;
    std::vector<double> A(size_t(n * n)), B(size_t(n * n)), C(size_t(n * n));
    for (long i = 0; i < n * n; ++i) {
      A[size_t(i)] = double(i % 97) / 97 - 0.5;
      B[size_t(i)] = double(i % 89) / 89 - 0.5;
    }
    const double one = 1, zero = 0;
    for (int block : {2048, 4096}) {
      if (cublasXtSetBlockDim(xt, block) != CUBLAS_STATUS_SUCCESS) continue;
      for (bool pin : {false, true}) {
        cublasXtSetPinningMemMode(xt, pin ? CUBLASXT_PINNING_ENABLED : CUBLASXT_PINNING_DISABLED);
        double t[2] = {0, 0};
        cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
        for (double& s : t) {
          const auto c0 = std::chrono::steady_clock::now();
          st = cublasXtDgemm(xt, CUBLAS_OP_N, CUBLAS_OP_N, size_t(n), size_t(n), size_t(n), &one, A.data(), size_t(n),
                             B.data(), size_t(n), &zero, C.data(), size_t(n));
          s = seconds_of(c0);
          if (st != CUBLAS_STATUS_SUCCESS) break;
        }
        if (st != CUBLAS_STATUS_SUCCESS) {
          std::printf("%7ld %6d %-8s FAIL: cublasXtDgemm status %d\n", n, block, pin ? "on" : "off", int(st));
          continue;
        }
        const double err = sampled_error(A, B, C, n);
        std::printf("%7ld %6d %-8s %10.3f %10.3f %12.1f %.1e %s\n", n, block, pin ? "on" : "off", t[0], t[1],
                    2.0 * double(n) * double(n) * double(n) / t[1] / 1e12, err, err < 1e-12 ? "PASS" : "FAIL");
      }
    }
  }
  cublasXtDestroy(xt);
  return 0;
}
