// The engine's private state, shared by its files (not for routines, which see engine.h):
// engine.cpp (context, start-up, recovery, the test switch), engine_memory.cpp (the device memory
// pool), engine_copies.cpp (pinned staging of host<->device copies), engine_phases.cpp (phases of a
// call, pipelines, the per-call figures), engine_residency.cpp (device copies kept between calls).
#pragma once

#include "cuda/copy_threads.h"
#include "cuda/engine.h"
#include "cuda/host_view.h"
#include "cuda/pieces.h"
#include "cuda/resident.h"
#include "cuda/thread_stage.h"
#include "policy/reserve.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gofl {
namespace cuda {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The calling thread's current CUDA context (CUcontext), null if none or unknown (engine_device.cpp).
void* current_context();

struct Engine::Impl {
  // Device memory pool: free blocks by capacity; live blocks' capacities by address.
  mutable std::mutex pool_m;
  std::multimap<size_t, void*> free_blocks;
  std::unordered_map<void*, size_t> capacity;
  uint64_t cached = 0;
  uint64_t device_total = 0;  // the device's memory (the cache's ceiling is a share of it)

  // Pinned staging ring: chunk i of any transfer uses buffer (ring + i) % nbuf; ev[b] marks the
  // end of the last DMA that read or wrote buffer b.
  char* pinned = nullptr;
  size_t chunk = 0;
  size_t ramp_from = 0;  // pieces(): the first and last pieces' size; 0 = no ramp
  int nbuf = 0;
  int ring = 0;
  std::vector<cudaEvent_t> ev;
  CopyPool pool;

  size_t chunk_max = 0;  // the configured chunk: the ring grows up to nbuf x chunk_max

  // One-time costs (engine_setup.cpp): handles being made ahead on helper threads, the phases
  // noted since the last take_setup(), the device memory allocation time of the call in progress,
  // and which operations had their first GPU call.
  struct Ahead {
    std::thread thread;
    void* handle = nullptr;  // cublasHandle_t or cusolverDnHandle_t, when made
    int status = 0;          // the library's status when making it failed (kNotLoaded: see failure)
    Failure failure{};       // why the library could not be loaded or lacks a function
    double load_seconds = 0; // loading the library, when this made it load
    double seconds = 0;      // making the handle
  };
  Ahead ahead[2];  // kCublas, kCusolver
  std::vector<gofl_setup_phase> setup;
  double malloc_s = 0;
  std::vector<bool> op_seen;

  // Events given back by routines, for reuse (timing ones at [1]).
  std::mutex event_m;
  std::vector<cudaEvent_t> spare_events[2];

  char* small_pinned = nullptr;  // read_small's bounce buffer
  static constexpr size_t kSmall = 4096;
  int* info = nullptr;           // dev_info()
  std::atomic<bool> lost{false};  // read by the warming thread (warm.cpp) without the run lock

  // Per call.
  char precision = 0;
  bool corrupt_done = false;
  bool written = false;
  bool rerunnable = false;
  bool uploading = false, computing = false;
  Clock::time_point t_compute;
  double copy_in = 0, compute = 0, copy_out = 0;
  // Residency: the cache, its settings, and what the call in progress did not copy.
  ResidentCache* resident = nullptr;
  int64_t reserve_bytes = -1;
  double reserve_fraction = 0.3;
  // The memory left free for other processes on a device of `total` bytes (policy/reserve.h).
  uint64_t reserve(size_t total) const {
    return uint64_t(gpu_memory_reserve(double(reserve_bytes), reserve_fraction, double(total)));
  }
  const gofl_call* call = nullptr;
  ThreadStage* stage = nullptr;  // the calling thread's pinned copy of this call's operands, if staged
  uint32_t resident_bits = 0;
  uint64_t bytes_resident = 0;

  // Parallel (or, for small ranges, single-threaded) host copy of packed range [b, e).
  // (engine_copies.cpp)
  void host_copy(const HostView& v, char* stage, size_t b, size_t e, bool to_host);

  std::vector<std::pair<size_t, size_t>> pieces(size_t total) const { return transfer_pieces(total, chunk, ramp_from); }

  // One part of a copy-out: a host view and its packed device data; `ready` (may be null) is the
  // event after which the device data is complete.
  struct Part {
    HostView v;
    const char* dev;
    cudaEvent_t ready;
    size_t index;  // its position in download_parts()' `parts`: what the caller's done() is told
  };

  // Copy-out shared by download(), download_triangle() and download_parts(): DMA packed chunks into
  // the pinned ring, nbuf ahead, and copy each chunk's part of the host matrix out as soon as its
  // DMA is done. One pipeline runs across all parts, so the DMAs of part i + 1 proceed while the
  // host copies out the end of part i. done(part) runs when a part is in host memory. `waited`
  // gains the seconds spent waiting for parts to become ready (their computation, not copy time).
  // (engine_copies.cpp)
  void download(cudaStream_t stream, const std::vector<Part>& parts, const std::function<void(const Part&)>& done,
                double& waited);
  // A staged call's copies (thread_stage.h; engine_copies.cpp). staged_upload: the DMA of view v
  // from the stage's pinned copy, when a staged input holds its whole span. staged_download: every
  // part's DMA into the stage's pinned buffer, written to the host after the call, when staged
  // outputs hold them all; done(part, where its element (0,0) now is) as each is in. False: not
  // staged (what was deferred so far is written first), the caller copies the usual way.
  bool staged_upload(const HostView& v, char* dev, cudaStream_t stream);
  bool staged_download(cudaStream_t stream, const std::vector<Part>& parts,
                       const std::function<void(const Part&, char*)>& done);
};

}  // namespace cuda
}  // namespace gofl
