// Whether several threads uploading at once, each on its own stream, move more bytes a second than one:
// the question behind running several of a multi-threaded program's GPU calls at once. PySCF's 16
// OpenMP threads each call dsymm with a new 956^2 A (7.3 MB); one at a time on the GPU, its copy from
// pageable memory ran at about 8.3 GB/s, the GPU's hold of such a call 2.1 ms (bench/results, H100).
//
//   parallel_uploads [MB [UPLOADS [BUSY]]]     (defaults 7.3, 200 per thread, 0)
//
// For T = 1, 2, 4, 8 and 16 threads, each with its own stream, device buffer and pageable source (touched),
// every thread uploads MB megabytes UPLOADS times, three ways: cudaMemcpyAsync from the pageable
// source (the driver stages it), the thread's own copy into its pinned buffer and then the DMA, and the
// DMA from pinned memory alone (the bound). BUSY more threads spin on arithmetic meanwhile, as the
// program's other threads would. Prints per way and T the bytes a second of all threads together,
// median, min and max of 3 rounds, and each thread's last upload checked against its source.
// Not installed; CMake target parallel_uploads.
#include <cuda_runtime.h>

#include "common/clock.h"  // gofl::now_s

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "parallel_uploads: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

enum class Way { Pageable, OwnPinned, PinnedOnly };
const char* name(Way w) {
  return w == Way::Pageable ? "cudaMemcpyAsync from pageable" : w == Way::OwnPinned ? "own pinned copy, then DMA" : "pinned DMA alone (bound)";
}

struct Lane {
  char* host = nullptr;    // pageable, touched
  char* pinned = nullptr;  // this thread's staging buffer
  char* dev = nullptr;
  cudaStream_t stream{};
};

void upload(Lane& l, size_t bytes, Way w) {
  if (w == Way::Pageable) {
    ck(cudaMemcpyAsync(l.dev, l.host, bytes, cudaMemcpyHostToDevice, l.stream), "cudaMemcpyAsync");
  } else {
    if (w == Way::OwnPinned) std::memcpy(l.pinned, l.host, bytes);
    ck(cudaMemcpyAsync(l.dev, l.pinned, bytes, cudaMemcpyHostToDevice, l.stream), "cudaMemcpyAsync");
  }
  ck(cudaStreamSynchronize(l.stream), "cudaStreamSynchronize");
}

bool check(const Lane& l, size_t bytes) {
  std::vector<char> back(bytes);
  ck(cudaMemcpy(back.data(), l.dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (check)");
  return std::memcmp(back.data(), l.host, bytes) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const double mb = argc > 1 ? std::atof(argv[1]) : 7.3;
  const int uploads = argc > 2 ? std::max(1, std::atoi(argv[2])) : 200;
  const int busy = argc > 3 ? std::max(0, std::atoi(argv[3])) : 0;
  const size_t bytes = size_t(mb * 1e6) & ~size_t(7);
  const int lanes_max = 16;
  ck(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp prop{};
  ck(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::vector<Lane> lanes(lanes_max);
  for (size_t t = 0; t < lanes.size(); ++t) {
    Lane& l = lanes[t];
    l.host = static_cast<char*>(std::malloc(bytes));
    if (!l.host) return std::fprintf(stderr, "parallel_uploads: no host memory\n"), 1;
    for (size_t i = 0; i < bytes; i += 8) {
      const uint64_t v = (i + t * bytes) * 0x9E3779B97F4A7C15ull;
      std::memcpy(l.host + i, &v, 8);
    }
    ck(cudaHostAlloc(reinterpret_cast<void**>(&l.pinned), bytes, cudaHostAllocDefault), "cudaHostAlloc");
    std::memcpy(l.pinned, l.host, bytes);
    ck(cudaMalloc(&l.dev, bytes), "cudaMalloc");
    ck(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (int b = 0; b < busy; ++b)
    spinners.emplace_back([&stop] {
      volatile double x = 1.0;
      while (!stop.load(std::memory_order_relaxed))
        for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
    });
  std::printf("%s, %u cores, %d busy threads; each thread uploads %.2f MB %d times; GB/s of all threads together\n",
              prop.name, std::thread::hardware_concurrency(), busy, double(bytes) * 1e-6, uploads);
  std::printf("%-32s %3s %8s %8s %8s %10s  %s\n", "way", "T", "median", "min", "max", "ms/upload", "check");
  for (Way w : {Way::PinnedOnly, Way::Pageable, Way::OwnPinned}) {
    for (int T : {1, 2, 4, 8, 16}) {
      std::vector<double> rate;
      for (int round = 0; round < 3; ++round) {
        std::atomic<int> ready{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> th;
        for (int t = 0; t < T; ++t)
          th.emplace_back([&, t] {
            ck(cudaSetDevice(0), "cudaSetDevice");
            upload(lanes[size_t(t)], bytes, w);  // untimed: the thread's first use
            ready.fetch_add(1);
            while (!go.load()) std::this_thread::yield();
            for (int k = 0; k < uploads; ++k) upload(lanes[size_t(t)], bytes, w);
          });
        while (ready.load() < T) std::this_thread::yield();
        const double t0 = gofl::now_s();
        go.store(true);
        for (auto& x : th) x.join();
        rate.push_back(double(bytes) * T * uploads / (gofl::now_s() - t0) * 1e-9);
      }
      bool ok = true;
      for (int t = 0; t < T; ++t) ok = ok && check(lanes[size_t(t)], bytes);
      std::sort(rate.begin(), rate.end());
      std::printf("%-32s %3d %8.1f %8.1f %8.1f %10.3f  %s\n", name(w), T, rate[1], rate[0], rate[2],
                  double(bytes) * T / (rate[1] * 1e9) * 1e3, ok ? "ok" : "WRONG");
      std::fflush(stdout);
    }
  }
  stop.store(true);
  for (auto& x : spinners) x.join();
  return 0;
}
