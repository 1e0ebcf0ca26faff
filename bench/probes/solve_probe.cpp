// How fast can an LU solve with factors already on the GPU be (lu_solve with fixed factors)?
// Times, on device-resident factors, cuSOLVER's getrs against the same solve as LAPACK's dgetrs
// spells it (laswp, then two triangular solves) on cuBLAS's trsm, and against triangular solves
// split recursively into cuBLAS trsm on the diagonal blocks and gemm for the rest (most of the
// flops in gemm). Every variant's result is compared with getrs's. Device time by CUDA events,
// the median of 7 runs; the flop rate counts 2 n^2 nrhs.
//
//   solve_probe N NRHS...      e.g. solve_probe 8192 16 256 1024
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

#define CK(x)                                                                       \
  do {                                                                              \
    if (long _e = long(x)) {                                                        \
      std::fprintf(stderr, "FAIL %s:%d: %s -> %ld\n", __FILE__, __LINE__, #x, _e); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

// X := inv(T) X for the n x n triangle T (lower unit or upper non-unit) with nrhs columns, by
// halves: the first half solved, the second updated by one gemm, then solved; below `base` rows
// cuBLAS's trsm does the block.
void rec_trsm(cublasHandle_t h, bool lower, int64_t n, int64_t nrhs, const double* T, int64_t ldt, double* X,
              int64_t ldx, int64_t base) {
  const double one = 1, minus = -1;
  if (n <= base) {
    CK(cublasDtrsm_64(h, CUBLAS_SIDE_LEFT, lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                      lower ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, n, nrhs, &one, T, ldt, X, ldx));
    return;
  }
  const int64_t n1 = n / 2, n2 = n - n1;
  if (lower) {  // [L11 0; L21 L22]: X1 = L11 \ X1; X2 -= L21 X1; X2 = L22 \ X2
    rec_trsm(h, true, n1, nrhs, T, ldt, X, ldx, base);
    CK(cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n2, nrhs, n1, &minus, T + n1, ldt, X, ldx, &one, X + n1, ldx));
    rec_trsm(h, true, n2, nrhs, T + n1 + n1 * ldt, ldt, X + n1, ldx, base);
  } else {  // [U11 U12; 0 U22]: X2 = U22 \ X2; X1 -= U12 X2; X1 = U11 \ X1
    rec_trsm(h, false, n2, nrhs, T + n1 + n1 * ldt, ldt, X + n1, ldx, base);
    CK(cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n1, nrhs, n2, &minus, T + n1 * ldt, ldt, X + n1, ldx, &one, X, ldx));
    rec_trsm(h, false, n1, nrhs, T, ldt, X, ldx, base);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: solve_probe N NRHS...\n");
    return 2;
  }
  const int64_t n = std::atoll(argv[1]);
  cublasHandle_t blas;
  cusolverDnHandle_t solver;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  CK(cublasCreate(&blas));
  CK(cusolverDnCreate(&solver));
  CK(cublasSetStream(blas, s));
  CK(cusolverDnSetStream(solver, s));
  cusolverDnParams_t params;
  CK(cusolverDnCreateParams(&params));

  std::mt19937_64 rng(1);
  std::normal_distribution<double> nd;
  std::vector<double> a(static_cast<size_t>(n * n));
  for (auto& x : a) x = nd(rng);
  double *dA, *dWork;
  int64_t* dpiv64;
  int *dpiv32, *dinfo;
  CK(cudaMalloc(&dA, sizeof(double) * size_t(n * n)));
  CK(cudaMalloc(&dpiv64, sizeof(int64_t) * size_t(n)));
  CK(cudaMalloc(&dpiv32, sizeof(int) * size_t(n)));
  CK(cudaMalloc(&dinfo, sizeof(int)));
  CK(cudaMemcpy(dA, a.data(), sizeof(double) * size_t(n * n), cudaMemcpyHostToDevice));
  size_t dbytes = 0, hbytes = 0;
  CK(cusolverDnXgetrf_bufferSize(solver, params, n, n, CUDA_R_64F, dA, n, CUDA_R_64F, &dbytes, &hbytes));
  CK(cudaMalloc(&dWork, dbytes + 8));
  std::vector<char> hwork(hbytes + 8);
  CK(cusolverDnXgetrf(solver, params, n, n, CUDA_R_64F, dA, n, dpiv64, CUDA_R_64F, dWork, dbytes, hwork.data(), hbytes,
                      dinfo));
  std::vector<int64_t> piv64(static_cast<size_t>(n));
  CK(cudaMemcpy(piv64.data(), dpiv64, sizeof(int64_t) * size_t(n), cudaMemcpyDeviceToHost));
  std::vector<int> piv32(piv64.begin(), piv64.end());
  CK(cudaMemcpy(dpiv32, piv32.data(), sizeof(int) * size_t(n), cudaMemcpyHostToDevice));
  int moved = 0;
  for (int64_t i = 0; i < n; ++i) moved += piv64[size_t(i)] != i + 1;
  std::printf("n = %ld, factors on the GPU (%d of %ld rows interchanged)\n", long(n), moved, long(n));
  std::printf("%6s  %-34s %10s %10s %12s\n", "nrhs", "variant", "ms", "TFLOP/s", "vs getrs");

  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int arg = 2; arg < argc; ++arg) {
    const int64_t nrhs = std::atoll(argv[arg]);
    std::vector<double> b(static_cast<size_t>(n * nrhs));
    for (auto& x : b) x = nd(rng);
    double *dB0, *dB;
    CK(cudaMalloc(&dB0, sizeof(double) * b.size()));
    CK(cudaMalloc(&dB, sizeof(double) * b.size()));
    CK(cudaMemcpy(dB0, b.data(), sizeof(double) * b.size(), cudaMemcpyHostToDevice));
    std::vector<double> ref(b.size()), got(b.size());
    auto run = [&](const char* name, auto&& solve, bool is_ref) {
      std::vector<float> ms;
      for (int rep = 0; rep < 8; ++rep) {
        CK(cudaMemcpyAsync(dB, dB0, sizeof(double) * b.size(), cudaMemcpyDeviceToDevice, s));
        CK(cudaEventRecord(e0, s));
        solve();
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (rep > 0) ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      const double med = ms[ms.size() / 2];
      CK(cudaMemcpy((is_ref ? ref : got).data(), dB, sizeof(double) * b.size(), cudaMemcpyDeviceToHost));
      double diff = 0, mag = 0;
      if (!is_ref && std::string(name).find("alone") == std::string::npos)
        for (size_t i = 0; i < b.size(); ++i) {
          diff = std::max(diff, std::fabs(got[i] - ref[i]));
          mag = std::max(mag, std::fabs(ref[i]));
        }
      static double t_ref = 1;
      if (is_ref) t_ref = med;
      std::printf("%6ld  %-34s %10.3f %10.2f %8.2fx  %s\n", long(nrhs), name, med, 2.0 * n * n * nrhs / (med * 1e9),
                  t_ref / med, is_ref ? "" : (std::string("max rel diff ") + std::to_string(diff / (mag > 0 ? mag : 1))).c_str());
    };
    const double one = 1;
    run("cusolverDnXgetrs", [&] {
      CK(cusolverDnXgetrs(solver, params, CUBLAS_OP_N, n, nrhs, CUDA_R_64F, dA, n, dpiv64, CUDA_R_64F, dB, n, dinfo));
    }, true);
    run("laswp + cublasDtrsm x2", [&] {
      CK(cusolverDnDlaswp(solver, int(nrhs), dB, int(n), 1, int(n), dpiv32, 1));
      CK(cublasDtrsm_64(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, n, nrhs, &one,
                        dA, n, dB, n));
      CK(cublasDtrsm_64(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, nrhs,
                        &one, dA, n, dB, n));
    }, false);
    for (int64_t base : {256, 512, 1024, 2048}) {
      char name[64];
      std::snprintf(name, sizeof name, "laswp + recursive trsm, base %ld", long(base));
      run(name, [&] {
        CK(cusolverDnDlaswp(solver, int(nrhs), dB, int(n), 1, int(n), dpiv32, 1));
        rec_trsm(blas, true, n, nrhs, dA, n, dB, n, base);
        rec_trsm(blas, false, n, nrhs, dA, n, dB, n, base);
      }, false);
    }
    run("laswp alone (no result)", [&] { CK(cusolverDnDlaswp(solver, int(nrhs), dB, int(n), 1, int(n), dpiv32, 1)); },
        false);
    CK(cudaFree(dB0));
    CK(cudaFree(dB));
  }
  return 0;
}
