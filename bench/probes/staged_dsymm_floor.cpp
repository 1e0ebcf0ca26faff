// The floor of one thread-staged dsymm on the GPU, on CUDA and cuBLAS alone: what the library's hold of
// such a call (the summary's "GPU line": held / calls) could come down to. PySCF's OpenMP threads each call
// dsymm with a new 956^2 A and a 956 x 135 B; staged (GPU_OFFLOAD_THREAD_STAGING) the operands are in the
// thread's pinned buffer before the call takes the GPU, which then holds it for the DMAs and the kernel.
// 16 threads of bench/probes/threads_probe.c held it 0.87 ms a call that way on an H100 host, where the
// bytes alone (8.3 MB in, 1 MB out at the pinned rate of about 50 GB/s) take about 0.2 ms.
//
//   staged_dsymm_floor [N [R [CALLS]]]     (defaults 956, 135, 300)
//
// Every way copies A (N x N) and B (N x R) from pinned memory to the device, runs cublasDsymm (side L,
// uplo L, beta 0) and copies C (N x R) back into pinned memory; per call, median, min and max of CALLS:
//   three waits   the engine's order: wait for the uploads, then for the kernel, then for the download;
//                 and the same with A sent as a 2D copy of its columns (cudaMemcpy2DAsync);
//   one wait      all four queued on one stream, one wait at the end;
//   two streams   calls alternate between two streams, each waiting for its call of two calls before
//                 (the time a call of calls in flight two at a time: what a second GPU line would give);
// and the phases of the first way from events (uploads, kernel, download) with the rates of the copies.
// C is checked against a plain loop on sampled elements. Not installed; CMake target staged_dsymm_floor.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "common/clock.h"  // gofl::now_s

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "staged_dsymm_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void ckb(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "staged_dsymm_floor: %s: cuBLAS status %d\n", what, int(s));
    std::exit(1);
  }
}

struct Slot {  // one call's pinned operands, device buffers and stream
  double *a = nullptr, *b = nullptr, *c = nullptr;     // pinned
  double *da = nullptr, *db = nullptr, *dc = nullptr;  // device
  cudaStream_t s{};
};

struct Stats {
  double med, lo, hi;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 956;
  const int r = argc > 2 ? std::atoi(argv[2]) : 135;
  const int calls = argc > 3 ? std::atoi(argv[3]) : 300;
  if (n < 1 || r < 1 || calls < 3) {
    std::fprintf(stderr, "usage: staged_dsymm_floor [N >= 1 [R >= 1 [CALLS >= 3]]]\n");
    return 2;
  }
  const size_t a_bytes = size_t(n) * n * sizeof(double), bc_bytes = size_t(n) * r * sizeof(double);
  cublasHandle_t h;
  ckb(cublasCreate(&h), "cublasCreate");
  Slot slot[2];
  for (Slot& x : slot) {
    ck(cudaHostAlloc(&x.a, a_bytes, cudaHostAllocDefault), "cudaHostAlloc A");
    ck(cudaHostAlloc(&x.b, bc_bytes, cudaHostAllocDefault), "cudaHostAlloc B");
    ck(cudaHostAlloc(&x.c, bc_bytes, cudaHostAllocDefault), "cudaHostAlloc C");
    ck(cudaMalloc(&x.da, a_bytes), "cudaMalloc A");
    ck(cudaMalloc(&x.db, bc_bytes), "cudaMalloc B");
    ck(cudaMalloc(&x.dc, bc_bytes), "cudaMalloc C");
    ck(cudaStreamCreateWithFlags(&x.s, cudaStreamNonBlocking), "cudaStreamCreate");
    srand(7);
    for (size_t i = 0; i < size_t(n) * n; ++i) x.a[i] = double(rand()) / RAND_MAX - 0.5;
    for (size_t i = 0; i < size_t(n) * r; ++i) x.b[i] = double(rand()) / RAND_MAX - 0.5;
  }
  const double one = 1.0, zero = 0.0;
  auto enqueue = [&](Slot& x, bool waits) {
    ck(cudaMemcpyAsync(x.da, x.a, a_bytes, cudaMemcpyHostToDevice, x.s), "h2d A");
    ck(cudaMemcpyAsync(x.db, x.b, bc_bytes, cudaMemcpyHostToDevice, x.s), "h2d B");
    if (waits) ck(cudaStreamSynchronize(x.s), "wait (uploads)");
    ckb(cublasSetStream(h, x.s), "cublasSetStream");
    ckb(cublasDsymm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, n, r, &one, x.da, n, x.db, n, &zero, x.dc, n), "dsymm");
    if (waits) ck(cudaStreamSynchronize(x.s), "wait (kernel)");
    ck(cudaMemcpyAsync(x.c, x.dc, bc_bytes, cudaMemcpyDeviceToHost, x.s), "d2h C");
  };
  for (int i = 0; i < 5; ++i) {  // first uses: cuBLAS's kernels loaded, the copy engines warm
    enqueue(slot[0], false);
    ck(cudaStreamSynchronize(slot[0].s), "warm-up");
  }

  // The engine's order, with events for the phases.
  std::vector<double> t3, up, ker, down;
  cudaEvent_t e0, e1, e2, e3;
  for (cudaEvent_t* e : {&e0, &e1, &e2, &e3}) ck(cudaEventCreate(e), "cudaEventCreate");
  for (int i = 0; i < calls; ++i) {
    Slot& x = slot[0];
    const double t = gofl::now_s();
    ck(cudaEventRecord(e0, x.s), "event");
    ck(cudaMemcpyAsync(x.da, x.a, a_bytes, cudaMemcpyHostToDevice, x.s), "h2d A");
    ck(cudaMemcpyAsync(x.db, x.b, bc_bytes, cudaMemcpyHostToDevice, x.s), "h2d B");
    ck(cudaEventRecord(e1, x.s), "event");
    ck(cudaStreamSynchronize(x.s), "wait (uploads)");
    ckb(cublasSetStream(h, x.s), "cublasSetStream");
    ckb(cublasDsymm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, n, r, &one, x.da, n, x.db, n, &zero, x.dc, n), "dsymm");
    ck(cudaEventRecord(e2, x.s), "event");
    ck(cudaStreamSynchronize(x.s), "wait (kernel)");
    ck(cudaMemcpyAsync(x.c, x.dc, bc_bytes, cudaMemcpyDeviceToHost, x.s), "d2h C");
    ck(cudaEventRecord(e3, x.s), "event");
    ck(cudaStreamSynchronize(x.s), "wait (download)");
    t3.push_back((gofl::now_s() - t) * 1e3);
    float ms = 0;
    ck(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
    up.push_back(ms);
    ck(cudaEventElapsedTime(&ms, e1, e2), "elapsed");
    ker.push_back(ms);
    ck(cudaEventElapsedTime(&ms, e2, e3), "elapsed");
    down.push_back(ms);
  }

  // The same with A sent as a 2D copy of its N columns (how the staged path sent it before 5546bc5).
  std::vector<double> t2d;
  for (int i = 0; i < calls; ++i) {
    Slot& x = slot[0];
    const double t = gofl::now_s();
    ck(cudaMemcpy2DAsync(x.da, size_t(n) * sizeof(double), x.a, size_t(n) * sizeof(double), size_t(n) * sizeof(double),
                         size_t(n), cudaMemcpyHostToDevice, x.s),
       "h2d A (2D)");
    ck(cudaMemcpyAsync(x.db, x.b, bc_bytes, cudaMemcpyHostToDevice, x.s), "h2d B");
    ck(cudaStreamSynchronize(x.s), "wait (uploads)");
    ckb(cublasSetStream(h, x.s), "cublasSetStream");
    ckb(cublasDsymm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, n, r, &one, x.da, n, x.db, n, &zero, x.dc, n), "dsymm");
    ck(cudaStreamSynchronize(x.s), "wait (kernel)");
    ck(cudaMemcpyAsync(x.c, x.dc, bc_bytes, cudaMemcpyDeviceToHost, x.s), "d2h C");
    ck(cudaStreamSynchronize(x.s), "wait (download)");
    t2d.push_back((gofl::now_s() - t) * 1e3);
  }

  std::vector<double> t1;
  for (int i = 0; i < calls; ++i) {
    const double t = gofl::now_s();
    enqueue(slot[0], false);
    ck(cudaStreamSynchronize(slot[0].s), "wait");
    t1.push_back((gofl::now_s() - t) * 1e3);
  }

  // Two calls in flight: each call waits for the call two before it (same slot) before it is queued.
  std::vector<double> t2;
  double t = gofl::now_s();
  for (int i = 0; i < calls; ++i) {
    Slot& x = slot[i % 2];
    ck(cudaStreamSynchronize(x.s), "wait (two streams)");
    if (i >= 2) t2.push_back((gofl::now_s() - t) * 1e3);  // one call's share of the steady state
    t = gofl::now_s();
    enqueue(x, false);
  }
  for (Slot& x : slot) ck(cudaStreamSynchronize(x.s), "wait (two streams, last)");

  // Check C of the last call on sampled elements: C = A B with A symmetric from its lower triangle.
  double worst = 0;
  const Slot& x = slot[(calls - 1) % 2];
  for (int s = 0; s < 64; ++s) {
    const int i = (s * 131) % n, j = (s * 17) % r;
    double want = 0;
    for (int k = 0; k < n; ++k) want += (i >= k ? x.a[i + size_t(k) * n] : x.a[k + size_t(i) * n]) * x.b[k + size_t(j) * n];
    worst = std::max(worst, std::fabs(want - x.c[i + size_t(j) * n]) / std::max(1.0, std::fabs(want)));
  }

  cudaDeviceProp p;
  ck(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  std::printf("staged dsymm floor, %s: A %d x %d (%.2f MB), B and C %d x %d (%.2f MB each), %d calls a way\n", p.name, n,
              n, a_bytes / 1e6, n, r, bc_bytes / 1e6, calls);
  std::printf("  %-34s %9s %9s %9s\n", "per call, ms", "median", "min", "max");
  auto row = [](const char* what, const std::vector<double>& v) {
    const Stats s = stats(v);
    std::printf("  %-34s %9.3f %9.3f %9.3f\n", what, s.med, s.lo, s.hi);
  };
  row("three waits (the engine's order)", t3);
  row("three waits, A as a 2D copy", t2d);
  row("one wait", t1);
  row("two streams, a call's share", t2);
  row("  uploads (events)", up);
  row("  kernel (events)", ker);
  row("  download (events)", down);
  std::printf("  upload rate %.1f GB/s, download rate %.1f GB/s (medians); largest relative error of C %.1e (%s)\n",
              (a_bytes + bc_bytes) / stats(up).med / 1e6, bc_bytes / stats(down).med / 1e6, worst,
              worst < 1e-10 ? "ok" : "WRONG");
  return worst < 1e-10 ? 0 : 1;
}
