#include "cuda/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL and nothing happens
#endif

namespace gofl {
namespace cuda {

namespace {
constexpr size_t kMinBytes = size_t(8) << 20;    // below this a thread costs more than it saves
constexpr size_t kPerThread = size_t(16) << 20;  // one populating thread per 16 MiB

// How many threads may populate at once: the kernel zeroes each new page in the faulting thread,
// at a few GB/s per thread, and a 4096 x 4096 double result (128 MiB) has to be ready within the
// few milliseconds of its product's copy-in and compute. Half the cores, at most 8;
// GPU_OFFLOAD_PREFAULT_THREADS overrides (0 turns the prefault off, for measuring).
size_t max_threads() {
  static const size_t n = [] {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long v = std::clamp<long>(cores / 2, 1, 8);
    if (const char* e = std::getenv("GPU_OFFLOAD_PREFAULT_THREADS")) {
      char* end = nullptr;
      const long x = std::strtol(e, &end, 10);
      if (end != e && *end == 0) v = std::clamp<long>(x, 0, 64);
    }
    return size_t(v);
  }();
  return n;
}
}  // namespace

struct OutputPrefault::Impl {
  std::vector<std::thread> threads;
};

OutputPrefault::OutputPrefault(const gofl_call& c) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  std::vector<std::pair<uintptr_t, size_t>> ranges;  // page-aligned
  size_t total = 0;
  for (int i = 0; i < c.n_operands; ++i) {
    const gofl_call_operand& o = c.operands[i];
    if (o.role == GOFL_IN || !o.ptr || o.elems <= 0) continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(o.ptr) & ~(page - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(o.ptr) + size_t(o.elems) * o.elem_size + page - 1) & ~(page - 1);
    ranges.emplace_back(begin, end - begin);
    total += end - begin;
  }
  if (total < kMinBytes || max_threads() == 0) return;
  // Split the ranges into pieces, one list per thread.
  const size_t nthreads = std::min<size_t>(max_threads(), (total + kPerThread - 1) / kPerThread);
  const size_t share = ((total / nthreads) + page - 1) & ~(page - 1);
  std::vector<std::vector<std::pair<uintptr_t, size_t>>> work(nthreads);
  size_t t = 0, filled = 0;
  for (auto [b, len] : ranges) {
    while (len > 0) {
      const size_t take = std::min(len, share - filled);
      work[t].emplace_back(b, take);
      b += take;
      len -= take;
      filled += take;
      if (filled == share && t + 1 < nthreads) { ++t; filled = 0; }
    }
  }
  impl_ = new Impl;
  impl_->threads.reserve(work.size());
  try {
    for (auto& w : work)
      impl_->threads.emplace_back([w] {
        for (auto [b, len] : w) madvise(reinterpret_cast<void*>(b), len, MADV_POPULATE_WRITE);  // errors: no gain, no harm
      });
  } catch (...) {
    // No thread to be had (a process limit): the copy-out faults the pages in itself.
  }
}

OutputPrefault::~OutputPrefault() {
  if (!impl_) return;
  for (auto& th : impl_->threads) th.join();
  delete impl_;
}

}  // namespace cuda
}  // namespace gofl
