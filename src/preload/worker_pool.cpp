// A job is a count of chunks that the caller and the pool's threads claim one at a time from a
// single atomic word, so a thread that wakes late finds less to do, never a share it must finish.
// Idle threads spin briefly (the next job usually follows within microseconds: NumPy copies a matrix
// one row per call), then sleep on a futex; nothing runs while the program has no job for them.
#include "preload/worker_pool.h"

#include "common/cpus.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace gofl {
namespace {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free,
              "futex words are plain 32-bit integers");

// How long an idle thread (or a caller waiting for the last chunks) spins before it sleeps: longer
// than the gap between two of NumPy's row copies (under a microsecond, a traced call's record
// included), short enough that idle threads cost nothing measurable.
constexpr uint64_t kSpinNs = 50'000;

struct Pool {
  std::atomic<bool> busy;               // a job is running: the next caller copies unsplit
  std::atomic<int> state;               // 0 not started, 1 started, -1 cannot run jobs
  std::atomic<int> size;                // threads a job runs on, the caller included (0: not known yet)
  // The current job and its chunks: job number << 32 | next unclaimed chunk << 16 | chunk count.
  std::atomic<uint64_t> claim;
  std::atomic<uint32_t> job;            // futex word idle threads sleep on: the latest job's number
  std::atomic<uint32_t> done;           // futex word the caller sleeps on: chunks finished
  std::atomic<uint32_t> sleepers;       // threads asleep (or about to be) on `job`
  std::atomic<uint32_t> caller_asleep;
  std::atomic<ChunkFn> fn;
  std::atomic<void*> ctx;
};
Pool g_pool;  // zero-initialised static storage: not started

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

// Spins until `ready()` or kSpinNs have passed; true when it became ready. It yields the CPU now and
// then: where the cores are busy, a spinning thread must not hold up the thread it waits for.
template <class Ready>
bool spin_until(Ready ready) {
  const uint64_t until = now_ns() + kSpinNs;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    if (i % 16 == 0) {
      sched_yield();
      if (now_ns() > until) return false;
    } else {
      cpu_relax();
    }
  }
}

// Claims and runs chunks of job `j` until none is left unclaimed; returns how many it ran. A chunk is
// claimed by moving the word's counter; a claim succeeds only while the word still names job j, and
// job j cannot end before its claimed chunks are done, so its fn and ctx stay valid while they run.
int64_t run_chunks(uint32_t j) {
  Pool& p = g_pool;
  int64_t ran = 0;
  uint64_t w = p.claim.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t next = uint32_t(w >> 16) & 0xffff, count = uint32_t(w) & 0xffff;
    if (uint32_t(w >> 32) != j || next >= count) return ran;
    if (!p.claim.compare_exchange_weak(w, w + (1u << 16), std::memory_order_acq_rel, std::memory_order_acquire))
      continue;
    p.fn.load(std::memory_order_relaxed)(p.ctx.load(std::memory_order_relaxed), next);
    ++ran;
    if (p.done.fetch_add(1) + 1 == count && p.caller_asleep.load()) futex_wake(&p.done, 1);
    w = p.claim.load(std::memory_order_acquire);
  }
}

void wait_for_job_after(uint32_t seen) {
  Pool& p = g_pool;
  if (spin_until([&] { return p.job.load(std::memory_order_acquire) != seen; })) return;
  // Sleepers first, job second (and the caller the other way round): one of the two sees the other.
  p.sleepers.fetch_add(1);
  while (p.job.load() == seen) futex_wait(&p.job, seen);
  p.sleepers.fetch_sub(1);
  // The caller woke one thread so as to get back to its own work; the woken pass the wake-up on.
  if (p.sleepers.load(std::memory_order_relaxed) > 0) futex_wake(&p.job, INT_MAX);
}

void* worker_main(void* arg) {
  uint32_t seen = uint32_t(reinterpret_cast<uintptr_t>(arg));
  for (;;) {
    wait_for_job_after(seen);
    seen = g_pool.job.load(std::memory_order_acquire);
    run_chunks(seen);
  }
  return nullptr;
}

// Starts the threads (under `busy`, so once); false when no job can run on the pool.
bool ensure_started() {
  Pool& p = g_pool;
  const int st = p.state.load(std::memory_order_acquire);
  if (st != 0) return st > 0;
  const int want = worker_pool_size();
  int started = 0;
  if (want > 1) {
    // The threads take no signals: a program's handlers keep running on its own threads.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 1u << 20);  // a BLAS ?copy needs little stack
    const uint32_t job_now = p.job.load(std::memory_order_relaxed);
    for (; started < want - 1; ++started) {
      pthread_t t;
      if (pthread_create(&t, &attr, worker_main, reinterpret_cast<void*>(uintptr_t(job_now))) != 0) break;
      pthread_setname_np(t, "gofl-pool");
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  p.size.store(started + 1, std::memory_order_relaxed);
  p.state.store(started > 0 ? 1 : -1, std::memory_order_release);
  return started > 0;
}

int env_threads(const char* var) {
  const char* v = getenv(var);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = strtol(v, &end, 10);
  return (end && *end == '\0' && n > 0) ? int(std::min<long>(n, INT_MAX)) : 0;
}

}  // namespace

int worker_pool_size() {
  int s = g_pool.size.load(std::memory_order_relaxed);
  if (s == 0) {
    s = worker_pool_threads();
    g_pool.size.store(s, std::memory_order_relaxed);
  }
  return s;
}

int worker_pool_threads() {
  int t = std::clamp(affinity_cpus(), 1, kWorkerPoolMaxThreads);
  // OpenBLAS's own order of precedence.
  int user = env_threads("OPENBLAS_NUM_THREADS");
  if (!user) user = env_threads("GOTO_NUM_THREADS");
  if (!user) user = env_threads("OMP_NUM_THREADS");
  if (user) t = std::min(t, user);
  return t;
}

bool worker_pool_run(int64_t chunks, ChunkFn fn, void* ctx, PoolJobTimes* times) {
  Pool& p = g_pool;
  if (chunks < 1 || chunks > 0xffff) return false;
  if (p.state.load(std::memory_order_relaxed) < 0) return false;
  if (p.busy.exchange(true, std::memory_order_acquire)) return false;
  if (!ensure_started()) {
    p.busy.store(false, std::memory_order_release);
    return false;
  }
  const uint64_t t_start = times ? now_ns() : 0;
  const uint32_t j = p.job.load(std::memory_order_relaxed) + 1;
  p.fn.store(fn, std::memory_order_relaxed);
  p.ctx.store(ctx, std::memory_order_relaxed);
  p.done.store(0, std::memory_order_relaxed);
  p.claim.store(uint64_t(j) << 32 | uint64_t(chunks), std::memory_order_release);
  p.job.store(j);
  if (p.sleepers.load() > 0) futex_wake(&p.job, 1);
  const uint64_t t_own = times ? now_ns() : 0;
  const int64_t own = run_chunks(j);
  const uint64_t t_own_end = times ? now_ns() : 0;
  // Every chunk is claimed; wait for those still running on other threads (their writes are
  // visible once `done` says so).
  const uint32_t all = uint32_t(chunks);
  if (!spin_until([&] { return p.done.load(std::memory_order_acquire) == all; })) {
    p.caller_asleep.store(1);
    for (uint32_t d; (d = p.done.load()) != all;) futex_wait(&p.done, d);
    p.caller_asleep.store(0, std::memory_order_relaxed);
  }
  p.busy.store(false, std::memory_order_release);
  if (times) *times = PoolJobTimes{now_ns() - t_start, t_own_end - t_own, own};
  return true;
}

void worker_pool_fork_child() {
  // Only the forking thread exists in the child: no pool thread, and no job (one another thread of
  // the parent was running is gone with it). The child's first job starts threads of its own.
  Pool& p = g_pool;
  p.size.store(0);
  p.claim.store(0);
  p.job.store(0);
  p.done.store(0);
  p.sleepers.store(0);
  p.caller_asleep.store(0);
  p.fn.store(nullptr);
  p.ctx.store(nullptr);
  p.state.store(0);
  p.busy.store(false);
}

}  // namespace gofl
