// The device memory pool: blocks kept for reuse past a call (DevMem returns them), freed largest
// first beyond a limit, and the device int behind dev_info().
#include "cuda/engine_state.h"

#include <algorithm>
#include <iterator>
#include <mutex>
#include <vector>

namespace gofl {
namespace cuda {

namespace {
// Device memory kept for reuse past a call: at least kCacheFloor, and room for a repeat of the call
// just made up to kCacheShare of the device; beyond that the largest blocks are freed. Freeing a
// large call's blocks after it and allocating them again at its repeat costs a cudaFree and a
// cudaMalloc of each (a 512^3 complex FFT: three blocks of up to 2 GiB) inside every call. The
// decision counts the cache as free (b_memory), a call short of memory frees it first (alloc), and
// beyond the floor the cache gives way to the memory reserve (GPU_OFFLOAD_MEMORY_RESERVE): it never
// keeps the device's free memory below what the library leaves to other processes.
constexpr uint64_t kCacheFloor = 1ull << 30;
constexpr uint64_t kCacheShare = 8;  // 1/8 of the device: 10 GiB of an 80 GB card
}  // namespace

// ---- DevMem -------------------------------------------------------------------------------------------

DevMem& DevMem::operator=(DevMem&& o) noexcept {
  if (this != &o) {
    if (p_) Engine::get().release(p_, bytes_);
    p_ = o.p_;
    bytes_ = o.bytes_;
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

DevMem::~DevMem() {
  if (p_) Engine::get().release(p_, bytes_);
}

namespace {
// Sizes are rounded so that blocks of nearly equal requests can be reused.
size_t round_size(size_t n) {
  if (n < 256) return 256;
  if (n <= (1u << 20)) return (n + 511) & ~size_t(511);
  return (n + (2u << 20) - 1) & ~((size_t(2) << 20) - 1);
}
}  // namespace

DevMem Engine::alloc(size_t bytes) {
  if (fault("alloc")) fail(GOFL_GPU_INJECTED, "alloc (injected)");
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "alloc before start");
  const size_t want = round_size(bytes);
  {
    std::lock_guard<std::mutex> lk(impl_->pool_m);
    // Reuse a cached block unless it is much larger than asked for.
    auto it = impl_->free_blocks.lower_bound(want);
    if (it != impl_->free_blocks.end() && it->first <= std::max(want + want / 4, want + (size_t(4) << 20))) {
      void* p = it->second;
      impl_->capacity[p] = it->first;
      impl_->cached -= it->first;
      impl_->free_blocks.erase(it);
      return DevMem(p, bytes);
    }
  }
  void* p = nullptr;
  const auto t0 = Clock::now();  // a one-time cost when a routine's first call pays it (engine_setup.cpp)
  struct Timed {
    Impl& im;
    Clock::time_point t0;
    ~Timed() { im.malloc_s += seconds_since(t0); }
  } timed{*impl_, t0};
  cudaError_t e = cudaMalloc(&p, want);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    release_cached(0);  // our cached blocks may be what is missing
    e = cudaMalloc(&p, want);
  }
  if (e == cudaErrorMemoryAllocation && impl_->resident->bytes() > 0) {
    (void)cudaGetLastError();
    impl_->resident->evict(want);  // kept copies never make a call fail: the least recently used go
    release_cached(0);
    e = cudaMalloc(&p, want);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    fail(e == cudaErrorMemoryAllocation ? GOFL_GPU_NO_MEMORY : GOFL_GPU_CUDA_ERROR, "cudaMalloc", int(e));
  }
  std::lock_guard<std::mutex> lk(impl_->pool_m);
  impl_->capacity[p] = want;
  return DevMem(p, bytes);
}

void Engine::release(void* p, size_t /*bytes*/) {
  if (!impl_ || !p) return;
  // Back to the cache, not cudaFree: work queued on stream() may still use it, and every later
  // use of the block is queued on the same stream after that work. (A pipelined routine's side
  // streams are idle when it returns: it waits for them on success, recover() on failure.)
  std::lock_guard<std::mutex> lk(impl_->pool_m);
  auto it = impl_->capacity.find(p);
  if (it == impl_->capacity.end()) return;
  impl_->free_blocks.emplace(it->second, p);
  impl_->cached += it->second;
  impl_->capacity.erase(it);
}

uint64_t Engine::cached_bytes() const {
  if (!impl_) return 0;
  std::lock_guard<std::mutex> lk(impl_->pool_m);
  return impl_->cached;
}

void Engine::release_cached(uint64_t keep) {
  if (!impl_) return;
  std::vector<void*> to_free;
  {
    std::lock_guard<std::mutex> lk(impl_->pool_m);
    while (impl_->cached > keep && !impl_->free_blocks.empty()) {
      auto it = std::prev(impl_->free_blocks.end());  // largest first
      impl_->cached -= it->first;
      to_free.push_back(it->second);
      impl_->free_blocks.erase(it);
    }
  }
  if (to_free.empty()) return;
  // Blocks freed here may still be read by queued work, on any of the engine's streams.
  for (cudaStream_t s : {stream_, side_[0], side_[1]})
    if (s && cudaStreamSynchronize(s) != cudaSuccess) (void)cudaGetLastError();
  for (void* p : to_free)
    if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

void Engine::trim(uint64_t call_bytes) {
  if (!impl_) return;
  uint64_t keep = std::max(kCacheFloor, std::min(call_bytes, impl_->device_total / kCacheShare));
  size_t free_b = 0, total = 0;
  if (keep > kCacheFloor) {
    if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) {
      (void)cudaGetLastError();
      keep = kCacheFloor;
    } else if (const uint64_t reserve = impl_->reserve(total); free_b < reserve) {
      const uint64_t short_by = reserve - free_b, cached = cached_bytes();
      keep = std::max(kCacheFloor, cached > short_by ? std::min(keep, cached - short_by) : 0);
    }
  }
  release_cached(keep);
}

int* Engine::dev_info() {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "dev_info before start");
  check(cudaMemsetAsync(impl_->info, 0, 256, stream_), "cudaMemsetAsync (info)");
  return impl_->info;
}

}  // namespace cuda
}  // namespace gofl
