// How fast a large upload from a program's pageable memory can go, by the way the host stages it:
// the engine's way (each staging chunk copied by all copy threads together, then its DMA; a join per
// chunk) at several chunk sizes, against copy threads that each own whole chunks (no join: a thread
// waits only for the DMA that last used its own buffers), with the pinned DMA alone as the bound and a
// plain cudaMemcpy from pageable memory as the floor. A 512^3 complex FFT's copy-in ran at 42-47 GB/s
// in the library against 55 GB/s pinned on an H100 host (bench/probes/fft_phases.sh).
//
//   upload_probe [GIB] [REPS] [THREADS]     (defaults 2, 5, 3/4 of the cores up to 12)
//
// Prints per way the median, min and max GB/s over REPS uploads of GIB GiB, each checked on the
// device against the source (64 samples of 4 KiB compared). Not installed; CMake target upload_probe.
#include <cuda_runtime.h>

#include "common/clock.h"  // gofl::now_s
#include "cuda/copy_threads.h"  // the engine's copy threads

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "upload_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct Setup {
  size_t bytes;
  char* host;  // pageable, touched
  char* dev;
  cudaStream_t stream;
};

// The engine's way: per chunk, wait for the DMA that last used its buffer, copy it with every thread
// (parts of 1/(4 x threads)), queue its DMA.
double joined(const Setup& s, gofl::cuda::CopyPool& team, size_t chunk, int nbuf, char* ring, std::vector<cudaEvent_t>& ev) {
  const double t0 = gofl::now_s();
  for (size_t off = 0, i = 0; off < s.bytes; off += chunk, ++i) {
    const size_t n = std::min(chunk, s.bytes - off), b = i % size_t(nbuf);
    char* stage = ring + b * chunk;
    ck(cudaEventSynchronize(ev[b]), "cudaEventSynchronize");
    const int parts = team.threads() * 4;
    const size_t step = (n + size_t(parts) - 1) / size_t(parts);
    team.run(parts, [&](int p) {
      const size_t a = size_t(p) * step, e = std::min(n, a + step);
      if (a < e) std::memcpy(stage + a, s.host + off + a, e - a);
    });
    ck(cudaMemcpyAsync(s.dev + off, stage, n, cudaMemcpyHostToDevice, s.stream), "cudaMemcpyAsync");
    ck(cudaEventRecord(ev[b], s.stream), "cudaEventRecord");
  }
  ck(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
  return gofl::now_s() - t0;
}

// Each thread owns chunks t, t + T, ... and buffers t, t + T, ... (nbuf a multiple of T): it waits only
// for its own buffer's last DMA, copies the chunk alone and queues its DMA (on its own stream).
double owned(const Setup& s, gofl::cuda::CopyPool& team, size_t chunk, int nbuf, char* ring, std::vector<cudaEvent_t>& ev,
             std::vector<cudaStream_t>& streams) {
  const int T = team.threads();
  const size_t chunks = (s.bytes + chunk - 1) / chunk;
  const double t0 = gofl::now_s();
  team.run(T, [&](int t) {  // part t: chunks t, t + T, ... on whichever thread takes it
    for (size_t i = size_t(t), k = 0; i < chunks; i += size_t(T), ++k) {
      const size_t off = i * chunk, n = std::min(chunk, s.bytes - off);
      const size_t b = (size_t(t) + k * size_t(T)) % size_t(nbuf);
      char* stage = ring + b * chunk;
      ck(cudaEventSynchronize(ev[b]), "cudaEventSynchronize");
      std::memcpy(stage, s.host + off, n);
      ck(cudaMemcpyAsync(s.dev + off, stage, n, cudaMemcpyHostToDevice, streams[size_t(t)]), "cudaMemcpyAsync");
      ck(cudaEventRecord(ev[b], streams[size_t(t)]), "cudaEventRecord");
    }
    ck(cudaStreamSynchronize(streams[size_t(t)]), "cudaStreamSynchronize");
  });
  return gofl::now_s() - t0;
}

// A sample of the device copy against the source: 4096 bytes at 64 places.
bool check(const Setup& s) {
  std::vector<char> back(4096);
  for (int k = 0; k < 64; ++k) {
    const size_t at = (s.bytes - back.size()) / 63 * size_t(k);
    ck(cudaMemcpy(back.data(), s.dev + at, back.size(), cudaMemcpyDeviceToHost), "cudaMemcpy (check)");
    if (std::memcmp(back.data(), s.host + at, back.size()) != 0) return false;
  }
  return true;
}

void report(const char* way, std::vector<double> t, size_t bytes, bool ok) {
  std::sort(t.begin(), t.end());
  const double gb = double(bytes) * 1e-9;
  std::printf("%-34s %8.1f %8.1f %8.1f  %s\n", way, gb / t[t.size() / 2], gb / t.back(), gb / t.front(),
              ok ? "ok" : "WRONG");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const double gib = argc > 1 ? std::atof(argv[1]) : 2.0;
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const int cores = int(std::thread::hardware_concurrency());
  const int threads = argc > 3 ? std::max(1, std::atoi(argv[3])) : std::clamp(cores * 3 / 4, 1, 12);
  ck(cudaSetDevice(0), "cudaSetDevice");
  Setup s{size_t(gib * double(1ull << 30)), nullptr, nullptr, nullptr};
  s.host = static_cast<char*>(std::malloc(s.bytes));
  if (!s.host) return std::fprintf(stderr, "upload_probe: no host memory\n"), 1;
  for (size_t i = 0; i < s.bytes; i += 8) {
    const uint64_t v = i * 0x9E3779B97F4A7C15ull;
    std::memcpy(s.host + i, &v, std::min<size_t>(8, s.bytes - i));
  }
  ck(cudaMalloc(&s.dev, s.bytes), "cudaMalloc");
  ck(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaDeviceProp prop{};
  ck(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("%s, %d cores, %d copy threads, %.2f GiB from pageable memory, %d uploads each\n", prop.name, cores,
              threads, gib, reps);
  std::printf("%-34s %8s %8s %8s\n", "way", "median", "min", "max");
  std::vector<double> t;

  {  // the bound: one DMA from pinned memory
    char* pinned = nullptr;
    ck(cudaHostAlloc(reinterpret_cast<void**>(&pinned), s.bytes, cudaHostAllocDefault), "cudaHostAlloc");
    std::memcpy(pinned, s.host, s.bytes);
    for (int r = 0; r < reps; ++r) {
      const double t0 = gofl::now_s();
      ck(cudaMemcpyAsync(s.dev, pinned, s.bytes, cudaMemcpyHostToDevice, s.stream), "cudaMemcpyAsync");
      ck(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
      t.push_back(gofl::now_s() - t0);
    }
    report("pinned DMA (the bound)", t, s.bytes, check(s));
    ck(cudaFreeHost(pinned), "cudaFreeHost");
  }
  t.clear();
  for (int r = 0; r < reps; ++r) {  // the floor: the driver's own staging
    const double t0 = gofl::now_s();
    ck(cudaMemcpy(s.dev, s.host, s.bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    t.push_back(gofl::now_s() - t0);
  }
  report("cudaMemcpy from pageable", t, s.bytes, check(s));

  gofl::cuda::CopyPool team;  // as the engine starts it: idle threads spin 200 us
  team.start(threads, 200, [] { ck(cudaSetDevice(0), "cudaSetDevice"); });
  struct Way {
    const char* kind;
    size_t mb;
    int nbuf;
  };
  const int owned_bufs = 2 * threads;
  const Way ways[] = {{"joined", 8, 8}, {"joined", 16, 8}, {"joined", 32, 4}, {"joined", 4, 16},
                      {"owned", 8, owned_bufs}, {"owned", 4, owned_bufs}, {"owned", 2, 2 * owned_bufs}};
  std::vector<cudaStream_t> streams(static_cast<size_t>(threads));
  for (auto& x : streams) ck(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking), "cudaStreamCreate");
  for (const Way& w : ways) {
    const size_t chunk = w.mb << 20;
    char* ring = nullptr;
    ck(cudaHostAlloc(reinterpret_cast<void**>(&ring), chunk * size_t(w.nbuf), cudaHostAllocDefault), "cudaHostAlloc");
    std::vector<cudaEvent_t> ev(size_t(w.nbuf));
    for (auto& e : ev) ck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    for (auto& e : ev) ck(cudaEventRecord(e, s.stream), "cudaEventRecord");  // recorded once: waits pass
    t.clear();
    for (int r = 0; r < reps; ++r) {
      ck(cudaMemset(s.dev, 0, s.bytes), "cudaMemset");
      ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // the uploads' streams do not wait for it
      t.push_back(std::string(w.kind) == "joined" ? joined(s, team, chunk, w.nbuf, ring, ev)
                                                  : owned(s, team, chunk, w.nbuf, ring, ev, streams));
    }
    char name[64];
    std::snprintf(name, sizeof name, "%s, %d x %zu MB staging", w.kind, w.nbuf, w.mb);
    report(name, t, s.bytes, check(s));
    for (auto& e : ev) ck(cudaEventDestroy(e), "cudaEventDestroy");
    ck(cudaFreeHost(ring), "cudaFreeHost");
  }
  return 0;
}
