// The warming thread (warm.h): a queue of operations, one thread that works through it on a lane
// of its own, and the finished warm-ups for the trace.
#include "cuda/warm.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <complex>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "common/exit_first.h"
#include "common/table.h"
#include "cuda/cublas_typed.h"

namespace gofl {
namespace cuda {


namespace {

constexpr size_t kMaxWorkBytes = size_t(256) << 20;  // more than any warm-up at kMaxN needs

// The lane's sizes: kSmallN for the small warm-ups, kMaxN beyond.
int64_t capacity_for(int64_t n) { return n <= WarmLane::kSmallN ? WarmLane::kSmallN : WarmLane::kMaxN; }

template <class T> std::vector<T> pristine_matrix(int64_t n) {
  std::vector<T> m(size_t(n * n));
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i <= j; ++i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const double v = i == j ? double(n) : double(s >> 11) / double(1ull << 53) - 0.5;
      m[size_t(j * n + i)] = m[size_t(i * n + j)] = T(v);
    }
  return m;
}

template <class T> void upload_pristine(void** to, int64_t n, cudaStream_t s) {
  const std::vector<T> h = pristine_matrix<T>(n);
  check(cudaMalloc(to, h.size() * sizeof(T)), "cudaMalloc (warming)");
  check(cudaMemcpyAsync(*to, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s), "cudaMemcpyAsync (warming)");
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize (warming)");  // h goes out of scope
}

template <class T> int type_index() {
  if constexpr (std::is_same_v<T, float>) return 0;
  else if constexpr (std::is_same_v<T, double>) return 1;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return 2;
  else return 3;
}

// ---- the queue ----------------------------------------------------------------------------------------
// Never destroyed: the library's exit-time trace and summary read g_done after this object's own
// static destructors would have run (it is dlopened after the preload library, so finalised first).
std::mutex& g_m = *new std::mutex;
std::condition_variable& g_cv = *new std::condition_variable;  // work queued, or a warm-up ended
// Two queues: the small warm-ups (cheap, and most of what a first call pays) go before every large one.
std::deque<uint32_t>& g_queue = *new std::deque<uint32_t>;
std::deque<uint32_t>& g_large_queue = *new std::deque<uint32_t>;
bool g_asked[GOFL_N_OPS] = {};
bool g_asked_large[GOFL_N_OPS] = {};
// Read without g_m by the calls' side (CallInFlight), written under it.
std::atomic<bool> g_thread_made{false};
bool g_busy = false;                // a warm-up runs
// g_busy or a queue not empty: written under g_m wherever those change, read without it (warming()).
std::atomic<bool> g_working{false};
bool g_exiting = false;
// The program's GPU calls running now (CallInFlight): no warm-up begins while one runs.
std::atomic<int> g_calls_in_flight{0};
pid_t g_pid = 0;                    // the process the thread runs in (a forked child has none)
std::vector<gofl_warmed>& g_done = *new std::vector<gofl_warmed>;

// At exit: no new warm-up, and the one in progress is waited for (at most a few seconds: exit never
// hangs on it). As an exit handler it is registered again after each library the lane first uses, so
// that it runs before that library's own exit handlers (atexit runs the latest first); still, the
// handlers registered during the warm-up in progress (a library or a static object it first made) would
// run before it. At an exit from the main thread it runs before every exit handler
// (common/exit_first.h): asked at the first warm-up queued, and at each GPU call, on that thread.
void wait_at_exit() {
  if (getpid() != g_pid) return;  // a forked child: its mutex may be held by the parent's thread
  std::unique_lock<std::mutex> lk(g_m);
  g_exiting = true;
  g_queue.clear();
  g_large_queue.clear();
  g_working = g_busy;
  g_cv.wait_for(lk, std::chrono::seconds(5), [] { return !g_busy; });
}

void register_exit_wait() { (void)atexit(wait_at_exit); }

void finish(uint32_t op, int status, double seconds, double cpu_seconds, std::vector<gofl_setup_phase> phases) {
  gofl_warmed w{};
  w.op = op;
  w.status = status;
  w.end_ns = clock_ns();
  w.phases[0] = gofl_setup_phase{GOFL_SP_WARMED, 0, uint64_t(seconds * 1e9)};
  w.phases[1] = gofl_setup_phase{GOFL_SP_WARM_CPU, 0, uint64_t(cpu_seconds * 1e9)};
  w.n_phases = 2;
  for (const gofl_setup_phase& p : phases)
    if (w.n_phases < GOFL_WARMED_MAX_PHASES) w.phases[w.n_phases++] = p;
  std::lock_guard<std::mutex> lk(g_m);
  if (g_done.size() < 4 * GOFL_N_OPS) g_done.push_back(w);
}

void work() {
  // The lowest CPU priority (Linux sets it per thread): where the program's threads want every core
  // (OpenBLAS runs one thread per core), a warm-up waits for them. Beside 16 OpenBLAS threads on the GPU
  // test machine (H200, 16-core host), a warm-up at normal priority made a dgesdd of n = 512 on the CPU
  // take 170-383 ms instead of 65 (bench/auto_sweep.py's sweep); at nice 19 a dgetrf of n = 512 still took
  // up to 76 ms instead of 3.4 (bench/probes/first_use_probe.cpp cpu). SCHED_IDLE runs it only on a core no
  // other thread wants; nice 19 where that is refused. A failure leaves the thread as it is.
  sched_param none{};
  if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &none) != 0)
    (void)setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), 19);
  Engine& e = Engine::get();
  const ThreadOnGpu on(e);
  WarmLane* lane = nullptr;  // made at the first warm-up, kept (never destroyed: see wait_at_exit)
  bool lane_failed = false;
  for (;;) {
    uint32_t op = 0;
    bool large = false;
    {
      std::unique_lock<std::mutex> lk(g_m);
      g_busy = false;
      g_working = !g_queue.empty() || !g_large_queue.empty();
      g_cv.notify_all();
      // Work queued, and none of the program's GPU calls running: a warm-up beside a call would hold
      // it up (loading a library's kernels waits for the GPU work in flight).
      g_cv.wait(lk, [] {
        return g_exiting || ((!g_queue.empty() || !g_large_queue.empty()) && g_calls_in_flight.load() == 0);
      });
      // At exit: park for good. Returning would run this thread's exit (ThreadOnGpu gives the
      // context back) beside the CUDA runtime's exit handlers.
      while (g_exiting) g_cv.wait(lk);
      large = g_queue.empty();
      std::deque<uint32_t>& q = large ? g_large_queue : g_queue;
      op = q.front();
      q.pop_front();
      g_busy = true;
      g_working = true;
    }
    const uint64_t t0 = clock_ns(), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    int status = GOFL_GPU_OK;
    std::vector<gofl_setup_phase> phases;
    try {
      if (e.lost()) fail(GOFL_GPU_CUDA_ERROR, "the GPU was lost");
      if (lane_failed) fail(GOFL_GPU_CUDA_ERROR, "the warming lane could not be made");
      if (!lane) {
        lane_failed = true;  // until it is made (its parts are not freed if it fails: a few MB at most)
        lane = new WarmLane();
        lane_failed = false;
      }
      lane->precision_gemm(gofl_ops[op].precision);
      (large ? routines()[op].warm_large : routines()[op].warm)(*lane);
      lane->sync();
    } catch (const Failure& f) {
      status = f.status;
    } catch (...) {
      status = GOFL_GPU_CUDA_ERROR;
    }
    if (status != GOFL_GPU_OK) (void)cudaGetLastError();  // no error left for the next warm-up's first call
    if (lane) phases = lane->take_phases();
    finish(op, status, 1e-9 * double(clock_ns() - t0), 1e-9 * double(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0),
           std::move(phases));
  }
}

}  // namespace

// ---- the lane ---------------------------------------------------------------------------------------------

WarmLane::WarmLane() {
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate (warming)");
  // Waited for by sleeping, not by spinning on a core the program may want (sync()).
  check(cudaEventCreateWithFlags(&done_, cudaEventBlockingSync | cudaEventDisableTiming),
        "cudaEventCreate (warming)");
  grow(kSmallN);
  check(cudaMalloc(&vec_, size_t(kMaxN) * sizeof(std::complex<double>)), "cudaMalloc (warming)");
  check(cudaMalloc(reinterpret_cast<void**>(&piv_), size_t(kMaxN) * sizeof(int64_t)), "cudaMalloc (warming)");
  check(cudaMalloc(reinterpret_cast<void**>(&info_), sizeof(int)), "cudaMalloc (warming)");
}

void WarmLane::grow(int64_t n) {
  if (n <= m_n_) return;
  // The smaller ones are kept, never freed (see device_work): 3 MB.
  const int64_t cap = capacity_for(n);
  const size_t bytes = size_t(cap * cap) * sizeof(std::complex<double>);
  void* m[3] = {};
  for (void*& p : m) check(cudaMalloc(&p, bytes), "cudaMalloc (warming)");
  for (int i = 0; i < 3; ++i) m_[i] = m[i];
  m_n_ = cap;
}

void WarmLane::note(int phase, double seconds) {
  if (seconds > 0) phases_.push_back(gofl_setup_phase{uint32_t(phase), 0, uint64_t(seconds * 1e9)});
}

std::vector<gofl_setup_phase> WarmLane::take_phases() {
  std::vector<gofl_setup_phase> out;
  out.swap(phases_);
  return out;
}

cublasHandle_t WarmLane::blas() {
  if (blas_) return blas_;
  load_cuda_library(CudaLibrary::Cublas);
  note(GOFL_SP_LOAD_CUBLAS, take_load_seconds(CudaLibrary::Cublas));
  register_exit_wait();  // after cuBLAS's own exit handlers: runs before them
  const uint64_t t0 = clock_ns();
  cublasHandle_t h = nullptr;
  check(cublasCreate(&h), "cublasCreate (warming)");
  cublasStatus_t st = cublasSetStream(h, stream_);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
  if (st != CUBLAS_STATUS_SUCCESS) cublasDestroy(h);
  check(st, "cublasSetStream (warming)");
  blas_ = h;  // only once it is on the lane's stream
  note(GOFL_SP_CUBLAS, 1e-9 * double(clock_ns() - t0));
  return blas_;
}

cusolverDnHandle_t WarmLane::solver() {
  if (solver_) return solver_;
  load_cuda_library(CudaLibrary::Cusolver);  // cuBLAS first
  note(GOFL_SP_LOAD_CUBLAS, take_load_seconds(CudaLibrary::Cublas));
  note(GOFL_SP_LOAD_CUSOLVER, take_load_seconds(CudaLibrary::Cusolver));
  register_exit_wait();
  const uint64_t t0 = clock_ns();
  cusolverDnHandle_t h = nullptr;
  check(cusolverDnCreate(&h), "cusolverDnCreate (warming)");
  cusolverDnParams_t params = nullptr;
  cusolverStatus_t st = cusolverDnSetStream(h, stream_);
  if (st == CUSOLVER_STATUS_SUCCESS) st = cusolverDnCreateParams(&params);
  if (st != CUSOLVER_STATUS_SUCCESS) cusolverDnDestroy(h);
  check(st, "cusolverDnSetStream (warming)");
  params_ = params;
  solver_ = h;  // only once it is on the lane's stream, with its parameters
  note(GOFL_SP_CUSOLVER, 1e-9 * double(clock_ns() - t0));
  return solver_;
}

cusolverDnParams_t WarmLane::params() {
  solver();
  return params_;
}

template <class T> void WarmLane::fresh(int64_t n) {
  if (n < 1 || n > kMaxN) fail(GOFL_GPU_INVALID_ARGS, "warming size");
  grow(n);
  const int t = type_index<T>();
  if (pristine_n_[t] < n) {  // the first use of this type, or of this size: made now (a smaller one is kept)
    const int64_t cap = capacity_for(n);
    upload_pristine<T>(&pristine_[t], cap, stream_);
    pristine_n_[t] = cap;
  }
  const void* from = pristine_[t];
  for (void* to : m_)
    check(cudaMemcpy2DAsync(to, size_t(n) * sizeof(T), from, size_t(pristine_n_[t]) * sizeof(T), size_t(n) * sizeof(T), size_t(n),
                            cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpy2DAsync (warming)");
}
template void WarmLane::fresh<float>(int64_t);
template void WarmLane::fresh<double>(int64_t);
template void WarmLane::fresh<std::complex<float>>(int64_t);
template void WarmLane::fresh<std::complex<double>>(int64_t);

void* WarmLane::device_work(size_t bytes) {
  if (bytes > kMaxWorkBytes) fail(GOFL_GPU_NO_MEMORY, "warming workspace");
  if (bytes > work_bytes_) {
    // The old one is kept, never freed: cudaFree would wait for the whole GPU, the program's calls
    // included (the lane's workspaces come to a few MB in all).
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc (warming)");
    work_ = p;
    work_bytes_ = bytes;
  }
  return work_;
}

void* WarmLane::host_work(size_t bytes) {
  if (bytes > kMaxWorkBytes) fail(GOFL_GPU_NO_MEMORY, "warming host workspace");
  sync();  // the previous routine's host workspace may still be read by its queued work
  if (bytes > host_work_.size()) host_work_.resize(bytes);
  return host_work_.data();
}

template <class T> void WarmLane::gemm_of() {
  bool& done = gemm_done_[type_index<T>()];
  if (done) return;
  constexpr int64_t n = 64;
  const T one(1), zero(0);
  fresh<T>(n);
  check(x_gemm<T>(blas(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, cu(&one), cu(matrix<T>(0)), n,
                  cu(matrix<T>(1)), n, cu(&zero), cu(matrix<T>(2)), n),
        "cublasXgemm (warming)");
  done = true;
}

void WarmLane::precision_gemm(char p) {
  if (p == 's') gemm_of<float>();
  else if (p == 'd') gemm_of<double>();
  else if (p == 'c') gemm_of<std::complex<float>>();
  else if (p == 'z') gemm_of<std::complex<double>>();
}

void WarmLane::sync() {
  check(cudaEventRecord(done_, stream_), "cudaEventRecord (warming)");
  check(cudaEventSynchronize(done_), "cudaEventSynchronize (warming)");
  check(cudaStreamQuery(stream_), "cudaStreamQuery (warming)");  // an error of the work before it
}

// ---- the interface ------------------------------------------------------------------------------------------

int warm_queue(uint32_t op, int64_t n) {
  if (op >= GOFL_N_OPS || !routines()[op].warm) return GOFL_GPU_UNSUPPORTED;
  (void)at_main_thread_exit(wait_at_exit);
  Engine& e = Engine::get();
  if (!e.started() || e.lost()) return GOFL_GPU_NO_DEVICE;
  std::lock_guard<std::mutex> lk(g_m);
  if (g_exiting) return GOFL_GPU_NO_DEVICE;
  const bool small = !g_asked[op];
  const bool large = !g_asked_large[op] && routines()[op].warm_large && (n <= 0 || n >= WarmLane::kLargeFrom);
  if (!small && !large) return GOFL_GPU_OK;
  if (!g_thread_made) {
    try {
      g_pid = getpid();
      register_exit_wait();  // after the CUDA runtime's (the backend links it)
      g_busy = false;
      std::thread(work).detach();  // detached: it holds nothing that needs cleaning up
      g_thread_made = true;
    } catch (...) {
      return GOFL_GPU_NO_MEMORY;  // no thread to be had: no warming
    }
  }
  if (small) g_asked[op] = true, g_queue.push_back(op);
  if (large) g_asked_large[op] = true, g_large_queue.push_back(op);
  g_working = true;
  g_cv.notify_all();
  return GOFL_GPU_OK;
}

CallInFlight::CallInFlight() {
  g_calls_in_flight.fetch_add(1);
  (void)at_main_thread_exit(wait_at_exit);
}

CallInFlight::~CallInFlight() {
  if (g_calls_in_flight.fetch_sub(1) != 1 || !g_thread_made.load()) return;
  std::lock_guard<std::mutex> lk(g_m);  // the waiter reads the count under g_m: no wake-up is lost
  g_cv.notify_all();
}

bool warming() { return g_working.load(std::memory_order_relaxed); }

int take_warmed(gofl_warmed* out, int max) {
  std::lock_guard<std::mutex> lk(g_m);
  int n = 0;
  for (; n < max && n < int(g_done.size()); ++n) out[n] = g_done[size_t(n)];
  g_done.erase(g_done.begin(), g_done.begin() + n);
  return n;
}

}  // namespace cuda
}  // namespace gofl
