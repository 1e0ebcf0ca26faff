// Which step of a least-squares solve on the GPU fails beyond 2^31 elements (?gels / ?gelsd
// through the 64_ names fall back with a CUDA error at m = 1,075,000,000, n = 2)? Each step runs in
// its own process (a failing kernel can lose the CUDA context), on a device matrix filled from the
// host, followed by a device synchronisation; it prints OK or the error, and what it computed.
//
//   qr64_probe STEP [ROWS [COLS]]     STEP: iamax-pieces iamax-whole asum-whole geqrf diag-copy trsm
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

#define CK(x)                                                                                \
  do {                                                                                       \
    if (long _e = long(x)) {                                                                 \
      std::printf("FAIL %s: %s -> %ld (%s)\n", step, #x, _e, cudaGetErrorString(cudaGetLastError())); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

const char* step = "";

// Column j of the rows x cols matrix: entry i is small_int(i, j), as the large test makes it.
double entry(int64_t i, int64_t j) { return double((i * 7 + j * 13) % (j == 0 ? 101 : 7)) - 3.0; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: qr64_probe STEP [ROWS [COLS]]\n");
    return 2;
  }
  step = argv[1];
  const int64_t rows = argc > 2 ? std::atoll(argv[2]) : 1075000000, cols = argc > 3 ? std::atoll(argv[3]) : 2;
  const int64_t elems = rows * cols;
  double* a = nullptr;
  CK(cudaMalloc(&a, size_t(elems) * sizeof(double)));
  {  // fill through a pinned buffer, a column piece at a time
    const int64_t chunk = int64_t(1) << 26;
    double* h = nullptr;
    CK(cudaMallocHost(&h, size_t(chunk) * sizeof(double)));
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i0 = 0; i0 < rows; i0 += chunk) {
        const int64_t n = std::min(chunk, rows - i0);
        for (int64_t i = 0; i < n; ++i) h[i] = entry(i0 + i, j);
        CK(cudaMemcpy(a + j * rows + i0, h, size_t(n) * sizeof(double), cudaMemcpyHostToDevice));
      }
    CK(cudaFreeHost(h));
  }
  cublasHandle_t b;
  cusolverDnHandle_t s;
  CK(cublasCreate(&b));
  CK(cusolverDnCreate(&s));
  const double one = 1;
  if (!std::strcmp(step, "iamax-pieces") || !std::strcmp(step, "iamax-whole")) {
    const int64_t piece = !std::strcmp(step, "iamax-pieces") ? (int64_t(1) << 30) : elems;
    double best = 0;
    for (int64_t at = 0; at < elems; at += piece) {
      int64_t k = 0;
      CK(cublasIdamax_64(b, std::min(piece, elems - at), a + at, 1, &k));
      double v = 0;
      CK(cudaMemcpy(&v, a + at + k - 1, sizeof v, cudaMemcpyDeviceToHost));
      best = std::max(best, std::abs(v));
    }
    CK(cudaDeviceSynchronize());
    std::printf("OK %s: largest |entry| %g\n", step, best);
  } else if (!std::strcmp(step, "asum-whole")) {
    double v = 0;
    CK(cublasDasum_64(b, elems, a, 1, &v));
    CK(cudaDeviceSynchronize());
    std::printf("OK %s: %g\n", step, v);
  } else if (!std::strcmp(step, "geqrf") || !std::strcmp(step, "diag-copy") || !std::strcmp(step, "trsm")) {
    cusolverDnParams_t params;
    CK(cusolverDnCreateParams(&params));
    double* tau = nullptr;
    int* info = nullptr;
    CK(cudaMalloc(&tau, size_t(cols) * sizeof(double)));
    CK(cudaMalloc(&info, sizeof(int)));
    size_t dbytes = 0, hbytes = 0;
    CK(cusolverDnXgeqrf_bufferSize(s, params, rows, cols, CUDA_R_64F, a, rows, CUDA_R_64F, tau, CUDA_R_64F, &dbytes,
                                   &hbytes));
    void* dw = nullptr;
    CK(cudaMalloc(&dw, std::max<size_t>(dbytes, 1)));
    std::vector<char> hw(std::max<size_t>(hbytes, 1));
    std::printf("geqrf workspace: %zu device bytes, %zu host bytes\n", dbytes, hbytes);
    CK(cusolverDnXgeqrf(s, params, rows, cols, CUDA_R_64F, a, rows, CUDA_R_64F, tau, CUDA_R_64F, dw, dbytes,
                        hw.data(), hbytes, info));
    CK(cudaDeviceSynchronize());
    int hinfo = -1;
    std::vector<double> htau(size_t(cols), 0.0);
    CK(cudaMemcpy(&hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(htau.data(), tau, htau.size() * sizeof(double), cudaMemcpyDeviceToHost));
    std::printf("OK geqrf: info %d, tau[0] %.17g, tau[%lld] %.17g\n", hinfo, htau[0], (long long)cols - 1, htau.back());
    if (!std::strcmp(step, "diag-copy")) {
      double* d = nullptr;
      CK(cudaMalloc(&d, size_t(cols) * sizeof(double)));
      CK(cublasDcopy(b, int(cols), a, int(rows + 1), d, 1));
      CK(cudaDeviceSynchronize());
      std::vector<double> hd(static_cast<size_t>(cols));
      CK(cudaMemcpy(hd.data(), d, hd.size() * sizeof(double), cudaMemcpyDeviceToHost));
      std::printf("OK diag-copy: R(0,0) %.17g, R(%lld,%lld) %.17g\n", hd[0], (long long)cols - 1, (long long)cols - 1,
                  hd.back());
    } else if (!std::strcmp(step, "trsm")) {
      double* x = nullptr;
      CK(cudaMalloc(&x, size_t(rows) * sizeof(double)));
      CK(cudaMemcpy(x, a, size_t(rows) * sizeof(double), cudaMemcpyDeviceToDevice));
      CK(cublasDtrsm(b, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, int(cols), 1, &one,
                     a, int(rows), x, int(rows)));
      CK(cudaDeviceSynchronize());
      std::printf("OK trsm (32-bit API, lda %lld)\n", (long long)rows);
      CK(cublasDtrsm_64(b, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, cols, 1, &one,
                        a, rows, x, rows));
      CK(cudaDeviceSynchronize());
      std::printf("OK trsm (64-bit API)\n");
    }
  } else {
    std::printf("unknown step %s\n", step);
    return 2;
  }
  return 0;
}
