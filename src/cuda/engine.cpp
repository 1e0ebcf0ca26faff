// The engine: CUDA context and handles, the device memory pool, pinned staging of host<->device
// copies (host threads copy pageable<->pinned while the DMA engine moves the previous chunk), phase
// timing and the test-only fault switch.
#include "cuda/engine.h"
#include "cuda/pieces.h"

#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace gofl {
namespace cuda {

// ---- errors -----------------------------------------------------------------------------------------

void fail(int status, const char* where, int detail) { throw Failure{status, detail, where}; }

void check(cudaError_t e, const char* where) {
  if (e == cudaSuccess) return;
  // Out of memory is not sticky: clear it so that the CPU fallback leaves a clean state behind.
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    fail(GOFL_GPU_NO_MEMORY, where, int(e));
  }
  fail(GOFL_GPU_CUDA_ERROR, where, int(e));
}

void check(cublasStatus_t e, const char* where) {
  if (e == CUBLAS_STATUS_SUCCESS) return;
  fail(e == CUBLAS_STATUS_ALLOC_FAILED ? GOFL_GPU_NO_MEMORY : GOFL_GPU_CUBLAS_ERROR, where, int(e));
}

void check(cusolverStatus_t e, const char* where) {
  if (e == CUSOLVER_STATUS_SUCCESS) return;
  fail(e == CUSOLVER_STATUS_ALLOC_FAILED ? GOFL_GPU_NO_MEMORY : GOFL_GPU_CUSOLVER_ERROR, where, int(e));
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Device memory kept for reuse past a call; beyond this the largest blocks are freed (issue 3).
constexpr uint64_t kCacheLimit = 1ull << 30;
// Copies below this are done by the calling thread alone: waking the pool costs more than it saves.
constexpr size_t kParallelCopyMin = 1u << 20;

// A few host threads that run the parts of one copy in parallel; the caller works too. One job at
// a time (the engine runs one call at a time).
class CopyPool {
 public:
  void start(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { loop(); });
    // Detached: the process may exit while they wait; they hold nothing that needs cleaning up.
    for (auto& t : workers_) t.detach();
  }
  int threads() const { return int(workers_.size()) + 1; }

  // Runs fn(p) for p in [0, parts); returns when every part is done.
  void run(int parts, const std::function<void(int)>& fn) {
    if (parts <= 0) return;
    if (parts == 1 || workers_.empty()) {
      for (int p = 0; p < parts; ++p) fn(p);
      return;
    }
    Job job;
    job.fn = &fn;
    job.parts = parts;
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = &job;
      ++gen_;
    }
    cv_.notify_all();
    work(job);
    std::unique_lock<std::mutex> lk(m_);
    job_ = nullptr;  // late wakers skip it
    done_.wait(lk, [this] { return in_job_ == 0; });
  }

 private:
  struct Job {
    const std::function<void(int)>* fn = nullptr;
    int parts = 0;
    std::atomic<int> next{0};
  };
  static void work(Job& j) {
    for (int p; (p = j.next.fetch_add(1, std::memory_order_relaxed)) < j.parts;) (*j.fn)(p);
  }
  void loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      cv_.wait(lk, [&] { return job_ != nullptr && gen_ != seen; });
      seen = gen_;
      Job* j = job_;
      ++in_job_;
      lk.unlock();
      work(*j);
      lk.lock();
      if (--in_job_ == 0) done_.notify_all();
    }
  }
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_, done_;
  Job* job_ = nullptr;
  uint64_t gen_ = 0;
  int in_job_ = 0;
};

// Copies into the program's buffers at copy-out use streaming stores: they skip reading each
// destination line first, which a plain memcpy of a few megabytes does, and leave the caches
// alone. Copies into the pinned staging buffers (copy-in) use a plain memcpy: the DMA engine reads
// those lines next, and on the H200 host the plain copy-in was faster (bench/copy_tune.py: the
// in-call time of float64 a @ b fell 10-25%). GPU_OFFLOAD_COPY_NT: "0" plain both ways, "1"
// streaming both ways, "out" (the default) streaming at copy-out only.
bool g_nt_out = true, g_nt_in = false;
constexpr size_t kNtMin = 64u << 10;

void copy_bytes(char* dst, const char* src, size_t n, bool nt) {
#if defined(__SSE2__)
  if (nt && n >= kNtMin) {
    const size_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
    std::memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    const size_t body = n & ~size_t(63);
    auto* d = reinterpret_cast<__m128i*>(dst);
    const auto* q = reinterpret_cast<const __m128i*>(src);
    for (size_t i = 0; i < body / 16; i += 4) {
      const __m128i a = _mm_loadu_si128(q + i), b = _mm_loadu_si128(q + i + 1);
      const __m128i c = _mm_loadu_si128(q + i + 2), e = _mm_loadu_si128(q + i + 3);
      _mm_stream_si128(d + i, a);
      _mm_stream_si128(d + i + 1, b);
      _mm_stream_si128(d + i + 2, c);
      _mm_stream_si128(d + i + 3, e);
    }
    _mm_sfence();  // streaming stores are weakly ordered: visible before the caller goes on
    std::memcpy(dst + body, src + body, n - body);
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

// The host side of one transfer. The device side is always packed: `rows` elements per column,
// columns back to back. A triangle limits each column j to rows [0, j] ('U') or [j, rows) ('L').
struct HostView {
  char* base;
  int64_t rows, cols, ld;
  size_t elem;
  char tri;  // 0, 'U' or 'L'

  // A whole rows x cols matrix; contiguous data (one column, or ld == rows) is one byte range.
  static HostView matrix(char* base, int64_t rows, int64_t cols, int64_t ld, size_t elem) {
    if (cols == 1 || ld == rows) return HostView{base, rows * cols, 1, rows * cols, elem, 0};
    return HostView{base, rows, cols, std::max(ld, rows), elem, 0};
  }

  size_t col_bytes() const { return size_t(rows) * elem; }
  size_t total() const { return col_bytes() * size_t(cols); }

  // Copies the packed byte range [b, e) between host and `stage` (stage holds packed bytes from
  // packed offset `origin`). to_host: stage -> host, else host -> stage.
  void copy(char* stage, size_t origin, size_t b, size_t e, bool to_host) const {
    const size_t cb = col_bytes();
    while (b < e) {
      const size_t j = b / cb;
      const size_t col_end = std::min(e, (j + 1) * cb);
      size_t lo = b - j * cb, hi = col_end - j * cb;  // byte range inside column j
      if (tri == 'U') hi = std::min(hi, (j + 1) * elem);
      else if (tri == 'L') lo = std::max(lo, j * elem);
      if (lo < hi) {
        char* h = base + (j * size_t(ld)) * elem + lo;
        char* s = stage + (j * cb + lo - origin);
        if (to_host) copy_bytes(h, s, hi - lo, g_nt_out);
        else copy_bytes(s, h, hi - lo, g_nt_in);
      }
      b = col_end;
    }
  }
};

}  // namespace

struct Engine::Impl {
  // Device memory pool: free blocks by capacity; live blocks' capacities by address.
  mutable std::mutex pool_m;
  std::multimap<size_t, void*> free_blocks;
  std::unordered_map<void*, size_t> capacity;
  uint64_t cached = 0;

  // Pinned staging ring: chunk i of any transfer uses buffer (ring + i) % nbuf; ev[b] marks the
  // end of the last DMA that read or wrote buffer b.
  char* pinned = nullptr;
  size_t chunk = 0;
  size_t ramp_from = 0;  // pieces(): the first and last pieces' size; 0 = no ramp
  int nbuf = 0;
  int ring = 0;
  std::vector<cudaEvent_t> ev;
  CopyPool pool;

  char* small_pinned = nullptr;  // read_small's bounce buffer
  static constexpr size_t kSmall = 4096;
  int* info = nullptr;           // dev_info()
  bool lost = false;

  // Per call.
  char precision = 0;
  bool corrupt_done = false;
  bool written = false;
  bool rerunnable = false;
  bool uploading = false, computing = false;
  Clock::time_point t_compute;
  double copy_in = 0, compute = 0, copy_out = 0;

  // Parallel (or, for small ranges, single-threaded) host copy of packed range [b, e).
  void host_copy(const HostView& v, char* stage, size_t b, size_t e, bool to_host) {
    const size_t n = e - b;
    if (n < kParallelCopyMin || pool.threads() == 1) {
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
  void download(cudaStream_t stream, const std::vector<Part>& parts, const std::function<void(const Part&)>& done,
                double& waited) {
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
};

long env_long(const char* name, long dflt, long min) {
  const char* s = std::getenv(name);
  if (!s || !*s) return dflt;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  return (end && *end == '\0' && v >= min) ? v : dflt;
}

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

// ---- the engine -------------------------------------------------------------------------------------

Engine& Engine::get() {
  // Never destroyed: static destructors run after the CUDA runtime has shut down.
  static Engine* e = new Engine();
  return *e;
}

int Engine::start(char* msg, size_t len) {
  static int first_status = -1;
  static char first_msg[256] = "";
  auto report = [&](int status, const char* text) {
    if (msg && len) std::snprintf(msg, len, "%s", text);
    return status;
  };
  if (impl_) return report(GOFL_GPU_OK, description_);
  if (first_status > 0) return report(first_status, first_msg);  // a failed start is not retried

  auto failed = [&](int status, const char* what, const char* why) {
    std::snprintf(first_msg, sizeof first_msg, "%s failed: %s", what, why);
    first_status = status;
    return report(status, first_msg);
  };

  if (const char* f = std::getenv("GPU_OFFLOAD_FAULT")) {
    if (*f && !fault_[0]) set_fault(f);
  }

  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return failed(GOFL_GPU_NO_DEVICE, "cudaGetDeviceCount", cudaGetErrorString(e));
  if (count <= 0) return failed(GOFL_GPU_NO_DEVICE, "cudaGetDeviceCount", "no CUDA device");
  if ((e = cudaSetDevice(0)) != cudaSuccess) return failed(GOFL_GPU_NO_DEVICE, "cudaSetDevice", cudaGetErrorString(e));
  if ((e = cudaFree(nullptr)) != cudaSuccess) return failed(GOFL_GPU_NO_DEVICE, "creating the CUDA context", cudaGetErrorString(e));

  auto* im = new Impl();
  // Undo what was created when a later step fails; the context itself stays (harmless).
  auto cleanup = [&] {
    for (cudaEvent_t x : im->ev) cudaEventDestroy(x);
    if (im->pinned) cudaFreeHost(im->pinned);
    if (im->small_pinned) cudaFreeHost(im->small_pinned);
    if (im->info) cudaFree(im->info);
    if (params_) cusolverDnDestroyParams(params_);
    if (solver_) cusolverDnDestroy(solver_);
    if (blas_) cublasDestroy(blas_);
    if (stream_) cudaStreamDestroy(stream_);
    for (cudaStream_t& x : side_) {
      if (x) cudaStreamDestroy(x);
      x = nullptr;
    }
    params_ = nullptr; solver_ = nullptr; blas_ = nullptr; stream_ = nullptr;
    delete im;
  };
  char why[64];
  auto cuda_failed = [&](const char* what, cudaError_t err) {
    cleanup();
    (void)cudaGetLastError();
    return failed(err == cudaErrorMemoryAllocation ? GOFL_GPU_NO_MEMORY : GOFL_GPU_CUDA_ERROR, what, cudaGetErrorString(err));
  };

  if ((e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)) != cudaSuccess) return cuda_failed("cudaStreamCreate", e);
  for (cudaStream_t& x : side_)
    if ((e = cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking)) != cudaSuccess) return cuda_failed("cudaStreamCreate", e);
  if (const char* nt = std::getenv("GPU_OFFLOAD_COPY_NT")) {
    if (std::strcmp(nt, "0") == 0) g_nt_out = g_nt_in = false;
    else if (std::strcmp(nt, "1") == 0) g_nt_out = g_nt_in = true;
  }

  cublasStatus_t be = cublasCreate(&blas_);
  if (be == CUBLAS_STATUS_SUCCESS) be = cublasSetStream(blas_, stream_);
  if (be == CUBLAS_STATUS_SUCCESS) be = cublasSetPointerMode(blas_, CUBLAS_POINTER_MODE_HOST);
  if (be != CUBLAS_STATUS_SUCCESS) {
    std::snprintf(why, sizeof why, "%s", cublasGetStatusString(be));
    cleanup();
    return failed(GOFL_GPU_CUBLAS_ERROR, "cuBLAS set-up", why);
  }
  cusolverStatus_t se = cusolverDnCreate(&solver_);
  if (se == CUSOLVER_STATUS_SUCCESS) se = cusolverDnSetStream(solver_, stream_);
  if (se == CUSOLVER_STATUS_SUCCESS) se = cusolverDnCreateParams(&params_);
  if (se != CUSOLVER_STATUS_SUCCESS) {
    std::snprintf(why, sizeof why, "cusolverStatus %d", int(se));
    cleanup();
    return failed(GOFL_GPU_CUSOLVER_ERROR, "cuSOLVER set-up", why);
  }

  // Pinned staging: 8 buffers of 8 MB by default; smaller if pinning that much fails. An 8 MB DMA
  // takes ~0.16 ms at 50 GB/s, still long enough to hide the per-chunk synchronisation, and the
  // pipeline fills and drains 4x sooner than with 32 MB: on the H200, copy-out of a @ b rose from
  // 26-33 to 36-46 GB/s, copy-in lost ~5% (bench/copy_tune.py). GPU_OFFLOAD_STAGING_BUFFERS and
  // GPU_OFFLOAD_STAGING_MB override.
  im->nbuf = int(std::clamp<long>(env_long("GPU_OFFLOAD_STAGING_BUFFERS", 8), 2, 64));
  size_t chunk = size_t(std::clamp<long>(env_long("GPU_OFFLOAD_STAGING_MB", 8), 1, 1024)) << 20;
  for (;;) {
    e = cudaHostAlloc(reinterpret_cast<void**>(&im->pinned), chunk * size_t(im->nbuf), cudaHostAllocDefault);
    if (e == cudaSuccess) break;
    (void)cudaGetLastError();
    im->pinned = nullptr;
    if (chunk <= (1u << 20)) return cuda_failed("cudaHostAlloc (staging)", e);
    chunk /= 4;
  }
  im->chunk = chunk;
  // First and last pieces of a transfer (see pieces()): half a buffer by default, at least 64 KB.
  // On the H200, NumPy a @ b at n = 4096, copy-out GB/s over two runs each (float32, float64,
  // complex128): 4 MB ends 42/42, 48/48, 46/51; no ramp 34/10, 46/24, 49/19; 1 MB ends 34/20,
  // 43/44, 37/26, and 1 MB pieces also halved copy-in (each piece wakes the copy threads). Noisy
  // (one repetition per run), but 4 MB never had a bad run. GPU_OFFLOAD_RAMP_KB sets it; 0 turns
  // the ramp off (every piece a whole buffer).
  {
    const long kb = std::min(env_long("GPU_OFFLOAD_RAMP_KB", long(chunk >> 11), 0), long(chunk >> 10));
    im->ramp_from = kb == 0 ? 0 : std::max<size_t>(size_t(kb) << 10, size_t(64) << 10);
  }
  im->ev.resize(size_t(im->nbuf), nullptr);
  for (auto& x : im->ev)
    if ((e = cudaEventCreateWithFlags(&x, cudaEventDisableTiming)) != cudaSuccess) return cuda_failed("cudaEventCreate", e);
  if ((e = cudaHostAlloc(reinterpret_cast<void**>(&im->small_pinned), Impl::kSmall, cudaHostAllocDefault)) != cudaSuccess)
    return cuda_failed("cudaHostAlloc (small)", e);
  if ((e = cudaMalloc(reinterpret_cast<void**>(&im->info), 256)) != cudaSuccess) return cuda_failed("cudaMalloc (info)", e);

  // Copy threads: one memcpy stream reaches ~10 GB/s, the link 50. The program's own threads wait
  // for the call, so three quarters of the cores, at most 12 (on the H200's 16: copy-in 55 -> 60
  // GB/s, copy-out +10%, against 8 threads). GPU_OFFLOAD_COPY_THREADS overrides.
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  const long threads = env_long("GPU_OFFLOAD_COPY_THREADS", std::clamp<long>(cores * 3 / 4, 1, 12));
  im->pool.start(int(std::clamp<long>(threads, 1, 64)));

  cudaDeviceProp prop{};
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    std::snprintf(prop.name, sizeof prop.name, "CUDA device 0");
  }
  std::snprintf(description_, sizeof description_,
                "%.48s (cc %d.%d, %.1f GiB), CUDA runtime %d.%d, driver %d.%d, staging %dx%zu MB (ends %zu KB), %d copy threads",
                prop.name, prop.major, prop.minor, double(prop.totalGlobalMem) / double(1ull << 30), rt / 1000,
                (rt % 1000) / 10, drv / 1000, (drv % 1000) / 10, im->nbuf, chunk >> 20, im->ramp_from >> 10, im->pool.threads());
  impl_ = im;
  return report(GOFL_GPU_OK, description_);
}

// ---- device memory ------------------------------------------------------------------------------------

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
  cudaError_t e = cudaMalloc(&p, want);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    release_cached(0);  // our cached blocks may be what is missing
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

void Engine::trim() { release_cached(kCacheLimit); }

int* Engine::dev_info() {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "dev_info before start");
  check(cudaMemsetAsync(impl_->info, 0, 256, stream_), "cudaMemsetAsync (info)");
  return impl_->info;
}

// ---- copies -------------------------------------------------------------------------------------------

void Engine::upload(void* dev, const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem, cudaStream_t on) {
  if (fault("h2d")) fail(GOFL_GPU_INJECTED, "h2d (injected)");
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "upload before start");
  if (rows <= 0 || cols <= 0 || elem == 0) return;
  const auto t0 = Clock::now();
  Impl& im = *impl_;
  const HostView v = HostView::matrix(static_cast<char*>(const_cast<void*>(host)), rows, cols, ld, elem);
  const size_t total = v.total();
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

void Engine::begin_compute() {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "begin_compute before start");
  Impl& im = *impl_;
  // Waiting for the last DMAs here costs a kernel-launch latency and makes copy_in honest.
  const auto t0 = Clock::now();
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (copy-in)");
  if (im.uploading) im.copy_in += seconds_since(t0);
  im.uploading = false;
  im.computing = true;
  im.t_compute = Clock::now();
}

// finish_compute() and end_pipeline(): the pending launch error is taken before the waits and
// reported after them, so that a failure the waits report comes first.
void Engine::wait_checked(bool side_streams, const char* where) {
  const cudaError_t launch = cudaGetLastError();
  if (side_streams)
    for (cudaStream_t x : side_) check(cudaStreamSynchronize(x), where);
  check(cudaStreamSynchronize(stream_), where);
  check(launch, "kernel launch");
}

void Engine::finish_compute() {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "finish_compute before start");
  Impl& im = *impl_;
  if (!im.computing) begin_compute();
  wait_checked(false, "cudaStreamSynchronize (compute)");
  im.compute += seconds_since(im.t_compute);
  im.computing = false;
  if (fault("compute")) fail(GOFL_GPU_INJECTED, "compute (injected)");
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
  std::vector<Impl::Part> ps;
  ps.reserve(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const OutPart& p = parts[i];
    if (p.rows <= 0 || p.cols <= 0 || p.elem == 0) continue;
    char* const base = static_cast<char*>(p.host);
    const HostView v = p.uplo ? HostView{base, p.rows, p.cols, std::max(p.ld, p.rows), p.elem, p.uplo}
                              : HostView::matrix(base, p.rows, p.cols, p.ld, p.elem);
    ps.push_back(Impl::Part{v, static_cast<const char*>(p.dev), p.ready, i});
  }
  // Bytes are counted part by part, so that a call that failed after some parts were written still
  // reports them; so is the time (less the waits for the parts' kernels), on success or failure.
  double waited = 0;
  auto part_done = [&](const Impl::Part& part) {
    // Once per call (corrupt_done is reset by begin_call()). download_vec (elem 1) carries no
    // numbers of the call's precision: never corrupted. (0,0) is in both triangles.
    if (corrupt_result() && !impl_->corrupt_done && part.v.elem > 1) {
      impl_->corrupt_done = true;
      corrupt_first(part.v.base, part.v.elem, impl_->precision);
    }
    if (done) done(part.index);
  };
  auto account = [&] { impl_->copy_out += std::max(0.0, seconds_since(t0) - waited); };
  try {
    impl_->download(on ? on : stream_, ps, part_done, waited);
  } catch (...) {
    account();
    throw;
  }
  account();
}

// ---- per call -----------------------------------------------------------------------------------------

void Engine::reset_call_stats() {
  if (!impl_) return;
  Impl& im = *impl_;
  im.copy_in = im.compute = im.copy_out = 0;
  im.uploading = im.computing = false;
}

void Engine::begin_call(const gofl_call& c) {
  reset_call_stats();
  if (!impl_) return;
  impl_->precision = c.op < GOFL_N_OPS ? gofl_ops[c.op].precision : 0;
  impl_->corrupt_done = false;
  impl_->written = false;
  impl_->rerunnable = false;
}

void Engine::set_rerunnable() {
  if (impl_) impl_->rerunnable = true;
}

bool Engine::rerunnable() const { return impl_ && impl_->rerunnable; }

// ---- pipelines ----------------------------------------------------------------------------------------

Event::Event(bool timing) {
  check(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
}

Event::~Event() {
  if (e_) cudaEventDestroy(e_);
}

cudaStream_t Engine::copy_stream(int i) const { return side_[i & 1]; }

void Engine::add_compute(double seconds) {
  if (impl_) impl_->compute += seconds;
}

void Engine::end_pipeline() {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "end_pipeline before start");
  wait_checked(true, "cudaStreamSynchronize (pipeline)");
  impl_->uploading = impl_->computing = false;
}

bool Engine::output_written() const { return impl_ && impl_->written; }

void Engine::fill_result(gofl_gpu_result* r) {
  if (!r || !impl_) return;
  r->copy_in_s = float(impl_->copy_in);
  r->compute_s = float(impl_->compute);
  r->copy_out_s = float(impl_->copy_out);
}

void Engine::recover() {
  if (!impl_) return;
  // A failed call may leave copies or kernels queued, on any of the engine's streams, and a
  // pending error; wait for all of them, then clear it.
  (void)cudaDeviceSynchronize();
  (void)cudaGetLastError();
  // A sticky error (illegal address, device lost) survives the clearing: the context is unusable.
  // Nothing was queued since the wait above, so one more device-wide wait (which covers stream()
  // and the side streams) only asks whether the error is still there.
  if (cudaDeviceSynchronize() != cudaSuccess) impl_->lost = true;
  impl_->uploading = impl_->computing = false;
}

bool Engine::lost() const { return impl_ && impl_->lost; }

// ---- test switch ------------------------------------------------------------------------------------

void Engine::set_fault(const char* spec) {
  if (!spec) spec = "";
  std::snprintf(fault_, sizeof fault_, "%s", spec);
}

// The spec is a comma-separated list of step names.
bool Engine::fault(const char* point) const {
  if (!fault_[0] || !point) return false;
  const size_t n = std::strlen(point);
  for (const char* s = fault_; *s;) {
    const char* end = std::strchr(s, ',');
    const size_t len = end ? size_t(end - s) : std::strlen(s);
    if (len == n && std::strncmp(s, point, n) == 0) return true;
    if (!end) break;
    s = end + 1;
  }
  return false;
}

bool Engine::corrupt_result() const { return fault("corrupt"); }

}  // namespace cuda
}  // namespace gofl
