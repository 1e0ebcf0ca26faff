#include "preload/gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <new>
#include <string>

#include "common/clock.h"
#include "common/exit_first.h"
#include "policy/level.h"
#include "policy/registry.h"
#include "policy/settings.h"
#include "preload/call_depth.h"
#include "preload/gpu_line.h"
#include "preload/gpu_probe.h"
#include "trace/writer.h"

namespace gofl {
namespace {

// Starting: a start is under way (on the thread of the call that began it, or beside the calls:
// gpu_start_ahead); g_start_cv is notified when it ends.
enum class State { NotTried, Starting, Started, Unavailable };

std::mutex g_start_mu;
std::condition_variable g_start_cv;
uint64_t g_wait_began_ns = 0;  // under g_start_mu: when a thread first waited for a start beside the calls
double g_waited_s = 0;         // under g_start_mu: how long the program waited for the start
std::atomic<State> g_state{State::NotTried};
const gofl_backend* g_backend = nullptr;
// Never destroyed: read by the exit-time summary, which may run after static destructors (dlopen).
std::string& g_reason = *new std::string;
bool g_lost_by_fork = false;
double g_startup_s = 0;
GpuLine g_line;  // one GPU call at a time (preload/gpu_line.h); no destructor: calls may come during exit
std::string& g_fault = *new std::string;
bool g_fault_set = false;
gofl_gpu_device g_device{};  // the GPU the backend runs on, once started
// The start's steps (trace/record.h, gofl_setup_record): loading the backend, then the backend's own.
gofl_setup_phase g_start_phases[GOFL_SETUP_MAX_PHASES];
int g_n_start_phases = 0;
GpuAbsence& g_absence = *new GpuAbsence;  // g_probed: filled once, under g_start_mu
bool g_probed = false;

std::string backend_path() {
  if (const char* env = setting_env(SettingId::BACKEND)) return env;
  Dl_info di{};
  if (dladdr(reinterpret_cast<const void*>(&backend_path), &di) && di.dli_fname) {
    std::string self = di.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos) return self.substr(0, slash + 1) + GOFL_BACKEND_SONAME;
  }
  return GOFL_BACKEND_SONAME;
}

// Nothing of a backend built from another table or another call layout may be called: its routines
// are indexed by op id, and it reads gofl_call and writes gofl_gpu_result in place.
const char* backend_mismatch(const gofl_backend* b) {
  if (!b || b->abi != GOFL_BACKEND_ABI) return "backend interface version";
  if (b->ops_hash != GOFL_OPS_HASH) return "operation table";
  if (b->call_size != sizeof(gofl_call) || b->result_size != sizeof(gofl_gpu_result) || b->fft_size != sizeof(gofl_fft))
    return "call layout";
  return nullptr;
}

const GpuAbsence& probe_locked() {
  if (!g_probed) {
    g_absence = gpu_absence(backend_path(), [](const char* n) -> const char* { return secure_getenv(n); });
    g_probed = true;
  }
  return g_absence;
}

// A failed start in the user's words when the probe knows them, CUDA's own words in brackets.
void unavailable_because(const std::string& technical) {
  const GpuAbsence& a = probe_locked();
  g_reason = a.kind == GpuAbsence::None ? technical : a.text + " [" + technical + "]";
}

// Loading the backend (dlopen: cudart, cuBLAS, cuSOLVER, cuFFT) and checking its interface: the
// start's first step, on the thread whose call began it. Null, with g_reason set, when it fails.
const gofl_backend* load_backend() {
  const std::string path = backend_path();
  if (const GpuAbsence& a = probe_locked(); a.kind == GpuAbsence::NotBuilt || a.kind == GpuAbsence::BackendMissing) {
    g_reason = a.text;  // nothing to load
    return nullptr;
  }
  const uint64_t t_load = clock_ns();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // with it cudart, cuBLAS, cuSOLVER and cuFFT
  if (!h) {
    unavailable_because(std::string("cannot load the GPU backend ") + path + ": " + dlerror());
    return nullptr;
  }
  auto entry = reinterpret_cast<gofl_backend_entry_fn>(dlsym(h, GOFL_BACKEND_ENTRY));
  const gofl_backend* b = entry ? entry() : nullptr;
  if (const char* why = backend_mismatch(b)) {
    g_reason = path + " is from another gpu-offload version (" + why + "); rebuild or reinstall both libraries";
    return nullptr;
  }
  g_start_phases[0] = gofl_setup_phase{GOFL_SP_LOAD, 0, clock_ns() - t_load};
  g_n_start_phases = 1;
  return b;
}

// The backend's own start (the driver, the context, the GPU's choice, streams...) and its settings;
// false, with g_reason set, when the GPU cannot be used.
bool start_backend(const gofl_backend* b, uint32_t first_op) {
  char msg[256] = "";
  if (b->start(settings().gpus.c_str(), first_op, msg, sizeof msg) != GOFL_GPU_OK) {
    unavailable_because(std::string("the GPU cannot be used: ") + (msg[0] ? msg : "backend start failed"));
    return false;
  }
  g_n_start_phases += b->take_setup(g_start_phases + 1, GOFL_SETUP_MAX_PHASES - 2);
  const Settings& s = settings();
  const gofl_backend_config cfg{s.residency ? 1 : 0, s.memory_reserve >= 0 ? int64_t(s.memory_reserve) : -1,
                                level_row(s.level).memory_reserve};
  b->configure(&cfg);
  b->device(&g_device);
  return true;
}

// The start's end, on whichever thread ran it: its outcome published (under g_start_mu, waking the
// threads that wait for it), then its record in the trace (the start-up is in no call's time).
// `b` null or !ok: it failed, g_reason says why. `t0`: when it began; `sync_ns`: the part that ran on
// the thread whose call began it (all of it unless it went on beside the calls); `tid`: that thread.
void finish_start(const gofl_backend* b, bool ok, uint64_t t0, uint64_t sync_ns, uint32_t tid) {
  const uint64_t end = clock_ns(), dt = end - t0;
  uint64_t waited = 0;
  {
    std::lock_guard<std::mutex> lock(g_start_mu);
    if (ok) {
      if (g_fault_set) b->set_fault(g_fault.empty() ? nullptr : g_fault.c_str());
      g_line.set_serves(int(setting_long(SettingId::LINE_SERVES, 0)));  // before any call can take the line
      g_backend = b;
      g_startup_s = double(dt) * 1e-9;
    }
    waited = std::min(dt, sync_ns + (g_wait_began_ns ? end - std::max(g_wait_began_ns, t0 + sync_ns) : 0));
    g_waited_s = double(waited) * 1e-9;
    g_state = ok ? State::Started : State::Unavailable;
  }
  g_start_cv.notify_all();
  gofl_start_gpu gpu{};
  if (ok) {
    gpu.recorded = 2;
    gpu.count = uint16_t(g_device.count);
    gpu.index = g_device.index;
    snprintf(gpu.bus_id, sizeof gpu.bus_id, "%.*s", int(sizeof gpu.bus_id - 1), g_device.bus_id);
    snprintf(gpu.name, sizeof gpu.name, "%.*s", int(sizeof gpu.name - 1), g_device.name);
    snprintf(gpu.chosen_by, sizeof gpu.chosen_by, "%.*s", int(sizeof gpu.chosen_by - 1), g_device.chosen_by);
    gpu.waited_ns = waited;
  }
  trace_gpu_start(t0, dt, ok, ok ? "" : g_reason.c_str(), ok ? &gpu : nullptr, tid);
  // Someone who asked for the GPU should hear why it is not used; auto mode stays quiet (the
  // summary and the trace give the reason).
  if (!ok && (settings().device == DeviceMode::Gpu || settings().verify))
    fprintf(stderr, "gpu-offload: %s; every call runs on the CPU\n", g_reason.c_str());
  if (!ok) return;
  // What no step accounts for (the interface checks, configure, NVML's matching...).
  uint64_t in_steps = 0;
  for (int i = 0; i < g_n_start_phases; ++i)
    if (g_start_phases[i].phase != GOFL_SP_LIBRARIES_BESIDE) in_steps += g_start_phases[i].duration_ns;
  if (dt > in_steps && g_n_start_phases < GOFL_SETUP_MAX_PHASES)
    g_start_phases[g_n_start_phases++] = gofl_setup_phase{GOFL_SP_OTHER, 0, dt - in_steps};
  trace_setup(GOFL_SETUP_AT_START, end, g_start_phases, g_n_start_phases);
  // The operations GPU_OFFLOAD_WARM names, beside the calls from now on.
  if (settings().warm)
    for (const uint16_t op : settings().warm_ops) gpu_warm(op, 0);  // every size it has
}

uint32_t this_tid() { return uint32_t(syscall(SYS_gettid)); }

// The whole start on this thread (g_state is Starting, set by the caller under g_start_mu).
void start_here(uint32_t first_op) {
  const uint64_t t0 = clock_ns();
  const gofl_backend* b = load_backend();
  const bool ok = b && start_backend(b, first_op);
  finish_start(b, ok, t0, clock_ns() - t0, this_tid());
}

// At exit, a start still going on beside the calls is waited for: the CUDA runtime's own exit
// handlers (registered when the backend was loaded, before this one) must not run under it, nor those
// of cuBLAS, cuSOLVER and cuFFT, which the start loads and register theirs after this one. At an exit
// from the main thread it runs before every exit handler (common/exit_first.h).
void wait_for_start_at_exit() {
  std::unique_lock<std::mutex> lock(g_start_mu);
  g_start_cv.wait(lock, [] { return g_state.load() != State::Starting; });
}

}  // namespace

const gofl_backend* gpu_backend(uint32_t first_op) {
  State s = g_state.load(std::memory_order_acquire);
  if (s == State::Started) return g_backend;
  if (s == State::Unavailable || g_lost_by_fork) return nullptr;
  std::unique_lock<std::mutex> lock(g_start_mu);
  if (g_state.load() == State::NotTried) {
    g_state = State::Starting;
    lock.unlock();
    start_here(first_op);
    lock.lock();
  } else if (g_state.load() == State::Starting) {  // begun beside the calls: wait for its end
    if (!g_wait_began_ns) g_wait_began_ns = clock_ns();
    g_start_cv.wait(lock, [] { return g_state.load() != State::Starting; });
  }
  return g_state.load() == State::Started ? g_backend : nullptr;
}

bool gpu_start_ahead(uint32_t first_op) {
  State s = g_state.load(std::memory_order_acquire);
  if (s == State::Started || s == State::Starting) return true;
  if (s == State::Unavailable || g_lost_by_fork) return false;
  std::unique_lock<std::mutex> lock(g_start_mu);
  if (g_state.load() != State::NotTried) return g_state.load() != State::Unavailable;
  g_state = State::Starting;
  const bool absent = probe_locked().kind != GpuAbsence::None;
  lock.unlock();
  if (absent) {  // it would fail: fail now, as a start in the call does
    start_here(first_op);
    return gpu_started();
  }
  const uint64_t t0 = clock_ns();
  const gofl_backend* b = load_backend();  // the dlopen on this thread: see wait_for_start_at_exit()
  if (!b) {
    finish_start(nullptr, false, t0, clock_ns() - t0, this_tid());
    return false;
  }
  const uint64_t sync_ns = clock_ns() - t0;
  static const bool waits_at_exit = atexit(wait_for_start_at_exit) == 0;
  (void)at_main_thread_exit(wait_for_start_at_exit);
  const uint32_t tid = this_tid();
  const auto rest = [b, t0, sync_ns, tid, first_op] { finish_start(b, start_backend(b, first_op), t0, sync_ns, tid); };
  if (!waits_at_exit) {
    rest();
    return gpu_started();
  }
  try {
    std::thread([rest] {
      // What the CUDA libraries might call of the intercepted ones here runs on the CPU library
      // (nested): a decision on this thread could wait for the very start it is part of.
      ++t_call_depth;
      rest();
    }).detach();
  } catch (...) {  // no thread to be had: the rest of the start here
    rest();
    return gpu_started();
  }
  return true;
}

double gpu_start_waited_seconds() {
  std::lock_guard<std::mutex> lock(g_start_mu);
  return g_waited_s;
}

bool gpu_started() { return g_state.load(std::memory_order_acquire) == State::Started; }
bool gpu_unavailable() { return g_lost_by_fork || g_state.load(std::memory_order_acquire) == State::Unavailable; }
const char* gpu_unavailable_reason() { return g_reason.c_str(); }
bool gpu_lost_by_fork() { return g_lost_by_fork; }
double gpu_startup_seconds() { return g_startup_s; }
const gofl_gpu_device* gpu_device() { return gpu_started() ? &g_device : nullptr; }
int gpu_start_phases(const gofl_setup_phase** out) {
  *out = g_start_phases;
  return gpu_started() ? g_n_start_phases : 0;
}

std::string gpu_never_usable() {
  if (g_state.load(std::memory_order_acquire) != State::NotTried) return "";
  // At exit another thread may be inside a start: then a start was tried, and nobody waits for it.
  std::unique_lock<std::mutex> lock(g_start_mu, std::try_to_lock);
  if (!lock.owns_lock()) return "";
  return g_state.load() == State::NotTried ? probe_locked().text : std::string();
}

namespace {
// The longest call c waits in line for the GPU, in seconds (0: it does not wait); see take_gpu.
double line_wait_bound(const gofl_call& c) {
  constexpr double kMaxGpuWait = 2.0;        // seconds
  constexpr double kUnpredictedWait = 0.25;  // a call without a prediction (--device gpu)
  static const double share = double(setting_long(SettingId::LINE_WAIT_PERCENT, 50)) / 100.0;
  const double gain = double(c.pred_cpu_s) - double(c.pred_gpu_s);
  return c.pred_cpu_s > 0 ? std::min(kMaxGpuWait, std::max(0.0, share * gain)) : kUnpredictedWait;
}

// Takes the GPU for call c: at once, or after waiting in line behind other threads' calls (gpu_line.h).
// Programs that call BLAS from many threads at once (PySCF's OpenMP loops: 16 threads, each a
// single-threaded dsymm of 956^2 taking ~0.1 s on its core, ~2 ms on the GPU) lose the GPU's gain if
// each such call falls back to the CPU, so the call waits for the GPU for at most a share of its
// predicted gain (GPU_OFFLOAD_LINE_WAIT_PERCENT, half by default: a margin for a wait longer than the
// line expects, since a call that waits out its bound then runs on the CPU too; at most kMaxGpuWait),
// and not at all when the calls ahead of it are expected to hold the GPU longer; Took::No: it runs on
// the CPU. With `work` (may be null), the thread holding the GPU may run the call for it
// (Took::Served). The wait is in the call's time as the summary and the trace count it, but not in
// what the policy learns of the GPU's speed (gpu_line_wait_ns, AutoPolicy::observe): the line weighs
// the wait as it finds it. A call of this thread made inside the backend never gets here (it is
// nested: the CPU runs it), and the bound keeps any other thread from waiting forever.
GpuLine::Took take_gpu(const gofl_call& c, GpuLine::Work* work) {
  if (g_line.try_take()) return GpuLine::Took::Held;
  const double wait = line_wait_bound(c);
  if (wait <= 0) return GpuLine::Took::No;
  return g_line.take_or_serve_by(clock_ns() + uint64_t(wait * 1e9), work);
}

// Traces what call c set up (its routine's first GPU call, a library handle, larger staging, the split
// engines: rare), taken while the GPU is still this call's. Returns whether its hold counts towards
// the line's mean hold: a hold that set something up (or spread over several GPUs) is not what the
// next calls will take.
bool trace_what_it_set_up(const gofl_call& c) {
  gofl_setup_phase phases[GOFL_SETUP_MAX_PHASES];
  const int n = g_backend->take_setup(phases, GOFL_SETUP_MAX_PHASES);
  if (n > 0) trace_setup(uint16_t(c.op), clock_ns(), phases, n);
  return n == 0 && !(c.flags & GOFL_F_SPLIT);
}

// Gives the GPU back after c ran; the time this thread then spent running waiting calls (gpu_line.h)
// is this thread's to leave out of its own call's time (gpu_take_served_ns).
__thread uint64_t t_served_ns __attribute__((tls_model("initial-exec")));
__thread bool t_was_served __attribute__((tls_model("initial-exec")));  // this thread's last gpu_run
void give_gpu_back(const gofl_call& c) { t_served_ns += g_line.give_back(trace_what_it_set_up(c)); }

// The backend's runs while holding the GPU (gpu_runs_in_holds_ns): two clock reads a GPU call.
std::atomic<uint64_t> g_runs_in_holds_ns{0};
// Staged calls' own copies on their threads, outside the hold (gpu_staged_copies_ns).
std::atomic<uint64_t> g_staging_ns{0}, g_writing_ns{0};
// Counts a run that began at t0 in the holds' backend time; returns its length.
uint64_t count_run_since(uint64_t t0) {
  const uint64_t dt = clock_ns() - t0;
  g_runs_in_holds_ns.fetch_add(dt, std::memory_order_relaxed);
  return dt;
}
// The backend's run of c while this thread holds the GPU, timed; it throws nothing, whoever's call
// it is, so the GPU always goes back to the line. An exception out of it (a host bad_alloc outside
// the routine's own attempt): where the run stopped is not known and outputs may be written, so the
// caller treats it as a failed copy-out (it stops if an in-place input is lost).
int timed_run(const gofl_backend* b, const gofl_call& c, gofl_gpu_result* r, uint64_t* ran_ns = nullptr) {
  const uint64_t t0 = clock_ns();
  int st;
  try {
    st = b->run(&c, r);
  } catch (...) {
    st = GOFL_GPU_COPY_OUT_FAILED;
    snprintf(r->where, sizeof r->where, "an exception out of the backend's run");
  }
  const uint64_t dt = count_run_since(t0);
  if (ran_ns) *ran_ns = dt;
  return st;
}

// This thread's last gpu_run: its time in line for the GPU, less its own run when the holder ran it,
// and the time of a split attempt just before it that gave up or failed (gpu_line_wait_ns).
__thread uint64_t t_line_wait_ns __attribute__((tls_model("initial-exec")));
// That split attempt's time, for the gpu_run that follows it (0 after a split call that ran).
__thread uint64_t t_split_tried_ns __attribute__((tls_model("initial-exec")));

// A waiting call's work, run by the thread that holds the GPU (GpuLine::Work).
struct ServedCall {
  const gofl_call* c;
  gofl_gpu_result* r;
  int status;
  uint64_t run_ns;  // the backend's run, on the holder's thread
};
bool run_served(void* arg) {
  ServedCall* s = static_cast<ServedCall*>(arg);
  s->status = timed_run(g_backend, *s->c, s->r, &s->run_ns);
  try {
    return trace_what_it_set_up(*s->c);
  } catch (...) {
    // Nothing may escape into the line (the waiting call would wait for ever); the run has ended and
    // its outputs may be written: the caller treats it as a failed copy-out, as before.
    s->status = GOFL_GPU_COPY_OUT_FAILED;
    snprintf(s->r->where, sizeof s->r->where, "an exception after the backend's run");
    return false;
  }
}

}  // namespace

bool gpu_last_run_served() { return t_was_served; }

uint64_t gpu_take_served_ns() {
  const uint64_t n = t_served_ns;
  t_served_ns = 0;
  return n;
}

uint64_t gpu_line_wait_ns() { return t_line_wait_ns; }

int gpu_run(const gofl_call& c, gofl_gpu_result* r, bool* busy, bool* staged_out) {
  *busy = false;
  if (staged_out) *staged_out = false;
  t_was_served = false;
  t_line_wait_ns = t_split_tried_ns;  // not this call's own single-GPU time either
  t_split_tried_ns = 0;
  const gofl_backend* b = gpu_backend();
  if (!b) return GOFL_GPU_NO_DEVICE;
  // A call that would wait for another thread's GPU call, or copy on its own thread beside the
  // program's CPU calls, copies its operands into pinned memory before it takes the GPU
  // (cuda/thread_stage.h): the GPU is then held only for the DMAs and the computation.
  const bool have = !(c.flags & GOFL_F_CORES_HELD) && g_line.try_take();
  // A call that would not wait in line runs on the CPU before it copies anything into pinned memory.
  if (!have && g_line.too_long_for(clock_ns() + uint64_t(line_wait_bound(c) * 1e9))) {
    *busy = true;
    return GOFL_GPU_OK;
  }
  double staged_s = 0;
  const bool staged = b->stage(&c, have ? 0 : 1, &staged_s) != 0;
  // The thread holding the GPU may run this call for it (a staged call from this thread's stage,
  // which the backend finds by the call); this thread then only writes a staged call's outputs.
  ServedCall served{&c, r, GOFL_GPU_OK, 0};
  GpuLine::Work work{run_served, &served, uint64_t(std::max(0.0f, c.pred_gpu_s) * 1e9)};
  const uint64_t t_line = clock_ns();
  const GpuLine::Took took = have ? GpuLine::Took::Held : take_gpu(c, &work);
  if (took == GpuLine::Took::No) {
    if (staged) b->finish(&c, 0, nullptr);
    *busy = true;
    return GOFL_GPU_OK;
  }
  t_was_served = took == GpuLine::Took::Served;
  if (!have) {
    const uint64_t in_line = clock_ns() - t_line;
    t_line_wait_ns += in_line - std::min(in_line, served.run_ns);
  }
  int st = served.status;
  if (!t_was_served) {
    st = timed_run(b, c, r);
    give_gpu_back(c);
  }
  if (staged) {
    double written_s = 0;
    // Staged: the GPU run copied from or into this thread's stage (whichever thread ran it).
    const bool used = b->finish(&c, st == GOFL_GPU_OK, &written_s) != 0;
    if (staged_out) *staged_out = used;
    r->copy_in_s += float(staged_s);
    r->copy_out_s += float(written_s);
    if (used && st == GOFL_GPU_OK) {
      g_staging_ns.fetch_add(uint64_t(staged_s * 1e9), std::memory_order_relaxed);
      g_writing_ns.fetch_add(uint64_t(written_s * 1e9), std::memory_order_relaxed);
    }
  }
  gpu_note_warmed();
  return st;
}

namespace {
std::atomic<bool> g_warm_asked{false};  // a warm-up was queued: gpu_note_warmed() has work to look for
std::mutex g_warmed_mu;
int g_warm_queued = 0;    // operations the backend took a warm-up of
int g_warmed_count = 0;   // those with a warm-up that ended well
double g_warmed_s = 0;    // all their warm-ups' time (an operation may be warmed at two sizes)
double g_warmed_cpu_s = 0;  // the warming thread's CPU time in them
bool g_warm_queued_op[GOFL_N_OPS] = {};
bool g_warmed_op[GOFL_N_OPS] = {};
}  // namespace

bool gpu_warm(uint32_t op, int64_t n) {
  if (!gpu_started() || !g_backend->warm || op >= GOFL_N_OPS) return false;
  const bool ok = g_backend->warm(op, n) == GOFL_GPU_OK;
  if (ok) {
    std::lock_guard<std::mutex> lock(g_warmed_mu);
    if (!g_warm_queued_op[op]) g_warm_queued_op[op] = true, ++g_warm_queued;
    g_warm_asked.store(true, std::memory_order_relaxed);
  }
  return ok;
}

bool gpu_working_beside() {
  const State s = g_state.load(std::memory_order_acquire);
  if (s == State::Starting) return !g_lost_by_fork;
  return s == State::Started && g_warm_asked.load(std::memory_order_relaxed) && g_backend->warming() != 0;
}

void gpu_note_warmed() {
  if (!g_warm_asked.load(std::memory_order_relaxed) || !gpu_started()) return;
  gofl_warmed w[8];
  for (int n; (n = g_backend->take_warmed(w, 8)) > 0;) {
    for (int i = 0; i < n; ++i) {
      // A failed warm-up is only counted (the summary's "N of M"): nothing depends on it, and a record
      // would read as work done.
      if (w[i].status != GOFL_GPU_OK) continue;
      {
        std::lock_guard<std::mutex> lock(g_warmed_mu);
        if (w[i].op < GOFL_N_OPS && !g_warmed_op[w[i].op]) g_warmed_op[w[i].op] = true, ++g_warmed_count;
        for (int p = 0; p < std::min(w[i].n_phases, GOFL_WARMED_MAX_PHASES); ++p) {
          const double sec = double(w[i].phases[p].duration_ns) * 1e-9;
          if (w[i].phases[p].phase == GOFL_SP_WARMED) g_warmed_s += sec;
          else if (w[i].phases[p].phase == GOFL_SP_WARM_CPU) g_warmed_cpu_s += sec;
        }
      }
      trace_setup(uint16_t(w[i].op), w[i].end_ns, w[i].phases, std::min(w[i].n_phases, GOFL_WARMED_MAX_PHASES));
    }
  }
}

void gpu_warmed(int* asked, int* count, double* seconds, double* cpu_seconds) {
  std::lock_guard<std::mutex> lock(g_warmed_mu);
  *asked = g_warm_queued;
  *count = g_warmed_count;
  *seconds = g_warmed_s;
  *cpu_seconds = g_warmed_cpu_s;
}

GpuLine::Tally gpu_line_tally() { return g_line.tally(); }

uint64_t gpu_runs_in_holds_ns() { return g_runs_in_holds_ns.load(std::memory_order_relaxed); }

void gpu_staged_copies_ns(uint64_t* in_ns, uint64_t* out_ns) {
  *in_ns = g_staging_ns.load(std::memory_order_relaxed);
  *out_ns = g_writing_ns.load(std::memory_order_relaxed);
}

int gpu_split_gpus() { return gpu_started() ? g_backend->split_gpus() : 0; }

std::atomic<bool> g_split_started{false};
bool gpu_split_started() { return g_split_started.load(std::memory_order_relaxed); }

int gpu_run_split(const gofl_call& c, gofl_gpu_result* r, bool* busy) {
  *busy = false;
  t_split_tried_ns = 0;
  if (!gpu_started()) return GOFL_GPU_NO_DEVICE;
  const uint64_t t_line = clock_ns();
  if (take_gpu(c, nullptr) != GpuLine::Took::Held) {
    t_split_tried_ns = clock_ns() - t_line;  // the one-GPU run that follows does not learn it
    *busy = true;
    return GOFL_GPU_OK;
  }
  const uint64_t t0 = clock_ns();
  const int st = g_backend->split_run(&c, r);
  count_run_since(t0);
  give_gpu_back(c);  // with what the split engines set up (cuBLASXt's handle, with cuBLAS's loading)
  if (st == GOFL_GPU_OK) g_split_started.store(true, std::memory_order_relaxed);
  else t_split_tried_ns = clock_ns() - t_line;  // a failed attempt: the one-GPU run that follows does not learn it
  return st;
}

void gpu_fft_forget(const void* plan) {
  if (g_state.load(std::memory_order_acquire) == State::Started) g_backend->fft_forget(plan);
}

void gpu_set_fault(const char* spec) {
  std::lock_guard<std::mutex> lock(g_start_mu);
  g_fault = spec ? spec : "";
  g_fault_set = true;
  if (g_state.load() == State::Started) g_backend->set_fault(spec);
}

void gpu_fork_child() {
  // The mutexes may have been held by other threads of the parent.
  new (&g_start_mu) std::mutex();
  g_line.reset();
  g_runs_in_holds_ns.store(0);
  g_staging_ns.store(0);
  g_writing_ns.store(0);
  new (&g_start_cv) std::condition_variable();
  new (&g_warmed_mu) std::mutex();
  g_warm_asked.store(false);
  g_warm_queued = g_warmed_count = 0;  // the child's own (it warms nothing: it has no GPU)
  g_warmed_s = g_warmed_cpu_s = 0;
  std::fill(std::begin(g_warm_queued_op), std::end(g_warm_queued_op), false);
  std::fill(std::begin(g_warmed_op), std::end(g_warmed_op), false);
  if (g_state.load() == State::Started || g_state.load() == State::Starting) {  // no start thread here
    g_lost_by_fork = true;
    g_state = State::Unavailable;
    g_reason = "this process was forked after its parent started the GPU";
  }
}

}  // namespace gofl
