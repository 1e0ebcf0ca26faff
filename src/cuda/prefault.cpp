#include "cuda/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <thread>
#include <utility>
#include <vector>

#include "cuda/engine.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL and nothing happens
#endif

namespace gofl {
namespace cuda {

namespace {
constexpr size_t kMinBytes = size_t(8) << 20;    // below this a thread costs more than it saves
constexpr size_t kPerThread = size_t(16) << 20;  // one populating thread per 16 MiB
constexpr size_t kPiece = size_t(2) << 20;       // populated one piece at a time, in copy-out order

// How many threads populate at once: a quarter of the cores, at most 4. On the GPU test machine (H200,
// 16-core host), a VM, first-touch faults ran at about 10 GB/s in all, and 8 threads that went on to the
// end of the call made a fresh 4096 x 4096 result's call twice as slow as a reused one's; 4 threads that
// stop with the call hid nearly all of it (bench/probes/copy_tune.py: 0.0125 s fresh, 0.0123 s reused).
// GPU_OFFLOAD_PREFAULT_THREADS overrides (0 turns the prefault off, for measuring).
size_t max_threads() {
  static const size_t n = [] {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const long v = setting_long(SettingId::PREFAULT_THREADS, std::clamp<long>(cores / 4, 1, 4));
    return size_t(std::clamp<long>(v, 0, 64));
  }();
  return n;
}
// Whether the pages of [begin, end) are in memory already (a buffer the program reuses, which most
// results of a loop are): then there is nothing to fault in, and a thread would only cost its start
// (70-110 us there, on the call's path). Ranges of more than kWholeCheck are sampled
// (kSamples pages, evenly spread): a page missed only costs the copy-out its fault, as without this.
bool in_memory(uintptr_t begin, uintptr_t end, uintptr_t page) {
  constexpr size_t kWholeCheck = size_t(64) << 20, kSamples = 1024;
  const size_t pages = size_t(end - begin) / page;
  if (pages == 0) return true;
  if (size_t(end - begin) <= kWholeCheck) {
    std::vector<unsigned char> v(pages);
    if (mincore(reinterpret_cast<void*>(begin), end - begin, v.data()) != 0) return false;
    return std::all_of(v.begin(), v.end(), [](unsigned char c) { return (c & 1) != 0; });
  }
  for (size_t i = 0; i < kSamples; ++i) {
    unsigned char c = 0;
    const uintptr_t at = begin + (pages - 1) * i / (kSamples - 1) * page;
    if (mincore(reinterpret_cast<void*>(at), page, &c) != 0 || !(c & 1)) return false;
  }
  return true;
}
}  // namespace

struct OutputPrefault::Impl {
  std::vector<std::pair<uintptr_t, size_t>> pieces;  // in the order the copy-out writes them
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;

  void work() {
    for (;;) {
      if (stop.load(std::memory_order_relaxed)) return;
      const size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= pieces.size()) return;
      madvise(reinterpret_cast<void*>(pieces[i].first), pieces[i].second, MADV_POPULATE_WRITE);  // errors: no gain, no harm
    }
  }
};

OutputPrefault::OutputPrefault(const gofl_call& c) {
  // Other threads' CPU calls hold the cores (gofl_call.cpu_calls_beside): the copy-out faults its pages itself.
  if (max_threads() == 0 || c.cpu_calls_beside > 0) return;
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  std::vector<std::pair<uintptr_t, size_t>> pieces;
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;  // each output's pages
  size_t total = 0;
  for (int i = 0; i < c.n_operands; ++i) {
    const gofl_call_operand& o = c.operands[i];
    if (o.role == GOFL_IN || !o.ptr || o.elems <= 0) continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(o.ptr) & ~(page - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(o.ptr) + size_t(o.elems) * o.elem_size + page - 1) & ~(page - 1);
    for (uintptr_t b = begin; b < end;) {
      // Piece ends on 2 MiB boundaries, so that a huge page is populated by one thread.
      const uintptr_t e = std::min(end, (b + kPiece) & ~(kPiece - 1));
      pieces.emplace_back(b, e - b);
      b = e;
    }
    total += end - begin;
    ranges.emplace_back(begin, end);
  }
  if (total < kMinBytes) return;
  if (std::all_of(ranges.begin(), ranges.end(), [page](const auto& r) { return in_memory(r.first, r.second, page); }))
    return;
  const size_t nthreads = std::min<size_t>(max_threads(), (total + kPerThread - 1) / kPerThread);
  impl_ = new Impl;
  impl_->pieces = std::move(pieces);
  try {
    impl_->threads.reserve(nthreads);
    for (size_t t = 0; t < nthreads; ++t) impl_->threads.emplace_back([im = impl_] { im->work(); });
  } catch (...) {
    // No thread to be had (a process limit): the copy-out faults the pages in itself.
  }
}

OutputPrefault::~OutputPrefault() {
  if (!impl_) return;
  // By now the copy-out has written (so faulted in) every page it needed: what is left is no gain.
  impl_->stop.store(true, std::memory_order_relaxed);
  for (auto& th : impl_->threads) th.join();
  delete impl_;
}

}  // namespace cuda
}  // namespace gofl
