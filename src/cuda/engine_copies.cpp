// Host<->device copies through the pinned staging ring: host threads copy pageable<->pinned while
// the DMA engine moves the previous chunk (copy-in: upload(); copy-out: download() and its kin), and
// read_small() for the odd info value.
#include "cuda/engine_state.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

namespace gofl {
namespace cuda {

namespace {
// Copies below this are done by the calling thread alone: waking the pool costs more than it saves.
constexpr size_t kParallelCopyMin = 1u << 20;
}  // namespace

void Engine::Impl::host_copy(const HostView& v, char* stage, size_t b, size_t e, bool to_host) {
  const size_t n = e - b;
  // While the program's other threads hold the cores with CPU calls (gofl_call.cpu_calls_now), the
  // calling thread copies alone: a pool worker would wait for a core and hold up the chunk. Asked
  // for each chunk: a large call's copies use the pool again once those calls have returned.
  const bool cores_held = call && call->cpu_calls_now && __atomic_load_n(call->cpu_calls_now, __ATOMIC_RELAXED) > 0;
  if (n < kParallelCopyMin || pool.threads() == 1 || cores_held) {
    v.copy(stage, b, b, e, to_host);
    return;
  }
  // A few parts per thread so that a late-waking worker does not hold up the copy.
  const int parts = std::min<int>(pool.threads() * 4, int(n / (256u << 10)) + 1);
  const size_t step = (n + size_t(parts) - 1) / size_t(parts);
  pool.run(parts, [&](int p) {
    const size_t pb = b + size_t(p) * step, pe = std::min(e, pb + step);
    if (pb < pe) v.copy(stage, b, pb, pe, to_host);
  });
}

void Engine::Impl::download(cudaStream_t stream, const std::vector<Part>& parts,
                            const std::function<void(const Part&)>& done, double& waited) {
  struct Chunk {
    size_t part, off, n;
  };
  std::vector<Chunk> chunks;
  for (size_t p = 0; p < parts.size(); ++p) {
    for (const auto& [off, n] : pieces(parts[p].v.total())) chunks.push_back({p, off, n});
  }
  const size_t first = size_t(ring);
  auto buf = [&](size_t i) { return (first + i) % size_t(nbuf); };
  auto issue = [&](size_t i) {
    const Chunk& c = chunks[i];
    const Part& part = parts[c.part];
    const size_t b = buf(i);
    if (c.off == 0 && part.ready) check(cudaStreamWaitEvent(stream, part.ready, 0), "cudaStreamWaitEvent (part)");
    // After the last DMA that used buffer b, whichever stream carried it.
    check(cudaStreamWaitEvent(stream, ev[b], 0), "cudaStreamWaitEvent (d2h)");
    check(cudaMemcpyAsync(pinned + b * chunk, part.dev + c.off, c.n, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync (d2h)");
    check(cudaEventRecord(ev[b], stream), "cudaEventRecord (d2h)");
  };
  for (size_t i = 0; i < std::min(chunks.size(), size_t(nbuf)); ++i) issue(i);
  for (size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& c = chunks[i];
    const Part& part = parts[c.part];
    if (c.off == 0 && part.ready) {
      const auto t0 = Clock::now();
      check(cudaEventSynchronize(part.ready), "cudaEventSynchronize (part)");
      waited += seconds_since(t0);
    }
    const size_t b = buf(i);
    check(cudaEventSynchronize(ev[b]), "cudaEventSynchronize (d2h)");
    written = true;
    host_copy(part.v, pinned + b * chunk, c.off, c.off + c.n, true);
    if (i + size_t(nbuf) < chunks.size()) issue(i + size_t(nbuf));
    // (If done() throws, DMAs already issued stay queued until recover(); ring is then left as it
    // was, which is safe: every use of a buffer waits for its event first.)
    if (done && (i + 1 == chunks.size() || chunks[i + 1].part != c.part)) done(part);
  }
  ring = int((first + chunks.size()) % size_t(nbuf));
}

bool Engine::Impl::staged_upload(const HostView& v, char* dev, cudaStream_t stream) {
  if (!stage) return false;
  const size_t span = v.span();
  // The routine reads back what it wrote this call: the host must hold it first.
  if (stage->pending(v.base, span) && stage->flush()) written = true;
  // A staged input is the whole matrix (a triangle's view spans the same bytes): whole columns go.
  const char* src = v.rows_from ? nullptr : stage->input(v.base, span);
  if (!src) return false;
  // Columns back to back (ld == rows: PySCF's 956^2 A) go as one DMA, not as a 2D copy of 956 rows.
  if (v.cols == 1 || v.ld == v.rows)
    check(cudaMemcpyAsync(dev, src, v.total(), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (h2d, staged)");
  else
    check(cudaMemcpy2DAsync(dev, v.col_bytes(), src, size_t(v.ld) * v.elem, v.col_bytes(), size_t(v.cols),
                            cudaMemcpyHostToDevice, stream),
          "cudaMemcpy2DAsync (h2d, staged)");
  return true;
}

bool Engine::Impl::staged_download(cudaStream_t stream, const std::vector<Part>& parts,
                                   const std::function<void(const Part&, char*)>& done) {
  if (!stage) return false;
  std::vector<char*> to(parts.size());
  bool all = true;
  for (size_t i = 0; i < parts.size() && all; ++i) {
    to[i] = stage->output(parts[i].v.base, parts[i].v.span(), parts[i].v.total());
    for (size_t j = 0; j < i && to[i]; ++j)  // two parts of one download never share pinned bytes
      if (to[i] < to[j] + parts[j].v.total() && to[j] < to[i] + parts[i].v.total()) to[i] = nullptr;
    all = to[i] != nullptr;
  }
  if (!all) {
    // This download goes the usual way: what was deferred so far reaches the host before it.
    if (stage->flush()) written = true;
    return false;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].ready) check(cudaStreamWaitEvent(stream, parts[i].ready, 0), "cudaStreamWaitEvent (part)");
    check(cudaMemcpyAsync(to[i], parts[i].dev, parts[i].v.total(), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync (d2h, staged)");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (d2h, staged)");
  for (size_t i = 0; i < parts.size(); ++i) {
    stage->defer(parts[i].v, to[i]);
    done(parts[i], to[i]);
  }
  return true;
}

void Engine::upload(void* dev, const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem, cudaStream_t on) {
  if (rows <= 0 || cols <= 0 || elem == 0) return upload_view(dev, nullptr, on);
  const HostView v = HostView::matrix(static_cast<char*>(const_cast<void*>(host)), rows, cols, ld, elem);
  upload_view(dev, &v, on);
}

void Engine::upload_rows(void* dev, const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem,
                         const int64_t* rows_from) {
  if (rows <= 0 || cols <= 0 || elem == 0) return upload_view(dev, nullptr, nullptr);
  const HostView v{static_cast<char*>(const_cast<void*>(host)), rows, cols, std::max(ld, rows), elem, 0, rows_from};
  upload_view(dev, &v, nullptr);
}

void Engine::upload_triangle(void* dev, const void* host, int64_t n, int64_t ld, size_t elem, char uplo,
                             cudaStream_t on) {
  if (n <= 0 || elem == 0) return upload_view(dev, nullptr, on);
  const HostView v{static_cast<char*>(const_cast<void*>(host)), n, n, std::max(ld, n), elem,
                   uplo == 'U' || uplo == 'u' ? 'U' : 'L'};
  upload_view(dev, &v, on);
}

void Engine::upload_view(void* dev, const HostView* view, cudaStream_t on) {
  if (fault("h2d")) fail(GOFL_GPU_INJECTED, "h2d (injected)");
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "upload before start");
  if (!view) return;  // nothing to copy
  const HostView& v = *view;
  const auto t0 = Clock::now();
  Impl& im = *impl_;
  if (im.staged_upload(v, static_cast<char*>(dev), on ? on : stream_)) {
    im.copy_in += seconds_since(t0);
    im.uploading = true;
    return;
  }
  const size_t total = v.total();
  if (!im.pinned) fit_staging(total);  // no transfer in flight yet: the ring may be made now
  char* d = static_cast<char*>(dev);
  for (const auto& [off, n] : im.pieces(total)) {
    const int b = im.ring;
    im.ring = (im.ring + 1) % im.nbuf;
    char* stage = im.pinned + size_t(b) * im.chunk;
    // The DMA that last used this buffer must be done before the host overwrites it.
    check(cudaEventSynchronize(im.ev[size_t(b)]), "cudaEventSynchronize (h2d)");
    im.host_copy(v, stage, off, off + n, false);
    check(cudaMemcpyAsync(d + off, stage, n, cudaMemcpyHostToDevice, on ? on : stream_), "cudaMemcpyAsync (h2d)");
    check(cudaEventRecord(im.ev[size_t(b)], on ? on : stream_), "cudaEventRecord (h2d)");
  }
  im.copy_in += seconds_since(t0);
  im.uploading = true;
}

void Engine::read_small(void* host, const void* dev, size_t bytes) {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "read_small before start");
  if (bytes == 0) return;
  if (bytes <= Impl::kSmall) {
    check(cudaMemcpyAsync(impl_->small_pinned, dev, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (read)");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (read)");
    std::memcpy(host, impl_->small_pinned, bytes);
  } else {
    check(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (read)");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (read)");
  }
}

namespace {
// The test switch's perturbation: the first element (its real part for complex) grows by 1 + |x|.
void corrupt_first(void* host, size_t elem, char precision) {
  const bool single = precision == 's' || precision == 'c';
  const size_t real_size = single ? sizeof(float) : sizeof(double);
  if (elem != real_size && elem != 2 * real_size) return;
  if (single) {
    float* x = static_cast<float*>(host);
    *x += 1.0f + std::fabs(*x);
  } else {
    double* x = static_cast<double*>(host);
    *x += 1.0 + std::fabs(*x);
  }
}
}  // namespace

void Engine::download(void* host, const void* dev, int64_t rows, int64_t cols, int64_t ld, size_t elem, cudaStream_t on) {
  download_parts({OutPart{host, dev, rows, cols, ld, elem, nullptr}}, on, nullptr);
}

void Engine::download_triangle(void* host, const void* dev, int64_t n, int64_t ld, size_t elem, char uplo) {
  // Whole columns cross the link (one DMA per chunk); only the triangle reaches the program.
  download_parts({OutPart{host, dev, n, n, ld, elem, nullptr, uplo == 'U' || uplo == 'u' ? 'U' : 'L'}}, nullptr,
                 nullptr);
}

void Engine::download_parts(const std::vector<OutPart>& parts, cudaStream_t on, const std::function<void(size_t)>& done) {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "download before start");
  if (fault("d2h-before") && !impl_->written) fail(GOFL_GPU_INJECTED, "d2h (injected)");
  const auto t0 = Clock::now();
  if (!impl_->pinned) {  // no transfer in flight yet: the ring may be made now
    size_t largest = 0;
    for (const OutPart& p : parts)
      if (p.rows > 0 && p.cols > 0) largest = std::max(largest, size_t(p.rows) * size_t(p.cols) * p.elem);
    fit_staging(largest);
  }
  std::vector<Impl::Part> ps;
  ps.reserve(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const OutPart& p = parts[i];
    if (p.rows <= 0 || p.cols <= 0 || p.elem == 0) continue;
    char* const base = static_cast<char*>(p.host);
    impl_->resident->overwritten(reinterpret_cast<uintptr_t>(base),
                                        (size_t(p.cols - 1) * size_t(std::max(p.ld, p.rows)) + size_t(p.rows)) * p.elem);
    const HostView v = p.uplo ? HostView{base, p.rows, p.cols, std::max(p.ld, p.rows), p.elem, p.uplo}
                              : HostView::matrix(base, p.rows, p.cols, p.ld, p.elem);
    ps.push_back(Impl::Part{v, static_cast<const char*>(p.dev), p.ready, i});
  }
  // Bytes are counted part by part, so that a call that failed after some parts were written still
  // reports them; so is the time (less the waits for the parts' kernels), on success or failure.
  double waited = 0;
  // A staged call's outputs wait in its pinned buffer (thread_stage.h); `first` is where the part's
  // element (0,0) is now: there the test switch corrupts it.
  auto part_done = [&](const Impl::Part& part, char* first) {
    // Once per call (corrupt_done is reset by begin_call()). download_vec (elem 1) carries no
    // numbers of the call's precision: never corrupted. (0,0) is in both triangles.
    if (corrupt_result() && !impl_->corrupt_done && part.v.elem > 1) {
      impl_->corrupt_done = true;
      corrupt_first(first, part.v.elem, impl_->precision);
    }
    if (done) done(part.index);
  };
  auto account = [&] { impl_->copy_out += std::max(0.0, seconds_since(t0) - waited); };
  try {
    if (!impl_->staged_download(on ? on : stream_, ps, part_done))
      impl_->download(on ? on : stream_, ps, [&](const Impl::Part& part) { part_done(part, part.v.base); }, waited);
  } catch (...) {
    account();
    throw;
  }
  account();
  // Test switch: a failure after the outputs came back while none reached the program (a staged call's
  // wait in its pinned buffer): they must be dropped, and the CPU must run the call on untouched memory.
  if (fault("d2h-after") && !impl_->written) fail(GOFL_GPU_INJECTED, "after d2h (injected)");
}

}  // namespace cuda
}  // namespace gofl
