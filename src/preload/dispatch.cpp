// The one place every intercepted call passes through on its slow path: nesting depth, the
// decision, timing, fingerprints, the trace record and the summary counters.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>

#include "common/clock.h"
#include "preload/decide.h"
#include "preload/run_history.h"
#include "policy/settings.h"
#include "preload/verify.h"
#include "preload/api.h"
#include "preload/call_depth.h"
#include "preload/copy_split.h"
#include "preload/counted.h"
#include "preload/fingerprint.h"
#include "preload/gpu.h"
#include "preload/summary.h"
#include "preload/resolve.h"
#include "preload/spare_core.h"
#include "preload/worker_pool.h"
#include "preload/wrapper_support.h"
#include "trace/call_record.h"
#include "trace/writer.h"

namespace gofl {

double g_fast_limit = -1.0;
__thread const void* t_site __attribute__((tls_model("initial-exec")));

namespace {

__thread int t_tid __attribute__((tls_model("initial-exec")));

std::atomic<bool> g_ready{false};
bool g_record = false;  // trace, summary or verify: every call takes the slow path (small ones are counted there)
bool g_spare_core = true;  // GPU_OFFLOAD_SPARE_CORE (spare_core.h)
// What the top-level call running on this thread changed of its library's threads (spare_core.h).
__thread SparedCore t_spared __attribute__((tls_model("initial-exec")));

// Top-level CPU calls of at least kHoldsACoreFlops running now, on any thread: a GPU call made beside
// them copies on its own thread (gofl_call.cpu_calls_beside). Its copy threads would only take turns
// with the program's: in PySCF's OpenMP loops (16 threads, each a single-threaded dsymm with a 956^2
// matrix, on a 16-core host) the GPU calls' copy-in ran at 1.7 GB/s, a worker preempted in the middle
// of its part holding up each chunk. Calls below the threshold never reach this (the fast path), and
// the counter is touched only by calls large enough to hold a core for about 0.1 ms or more.
// A plain integer changed with __atomic builtins: the backend reads it through gofl_call.cpu_calls_now.
constexpr double kHoldsACoreFlops = 2e7;
uint32_t g_cpu_calls_running = 0;
__thread bool t_cpu_call_counted __attribute__((tls_model("initial-exec")));

int tid() {
  if (!t_tid) t_tid = int(syscall(SYS_gettid));
  return t_tid;
}

void at_fork_prepare() {
  trace_fork_prepare();
  resolve_fork_prepare();
}

void at_fork_parent() {
  resolve_fork_parent();
  trace_fork_parent();
}

void at_fork_child() {
  t_tid = 0;
  resolve_fork_child();
  gpu_fork_child();
  trace_fork_child();
  summary_reset();
  decide_fork_child();
  worker_pool_fork_child();
  copy_split_fork_child();
  spare_core_fork_child();
  counted_fork_child();
  // Only the forking thread lives on in the child: the other threads' CPU calls are not running there.
  __atomic_store_n(&g_cpu_calls_running, t_cpu_call_counted ? 1u : 0u, __ATOMIC_RELAXED);
}

void init_once() {
  const Settings& s = settings();
  if (!s.trace_dir.empty()) {
    const std::string profile = active_profile_label();
    trace_configure(s.trace_dir.c_str(), TraceInfo{s.level, int(s.device), profile.c_str()});
  }
  g_record = !s.trace_dir.empty() || s.summary || s.verify;  // verify reports what it checked
  g_spare_core = s.spare_core && s.device != DeviceMode::Cpu;
  pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
  double limit;
  // Every call reaches the slow path; verify checks every GPU-capable call, whatever its size.
  if (g_record || s.device == DeviceMode::Gpu || s.verify) limit = -1.0;
  else if (s.device == DeviceMode::Cpu) limit = std::numeric_limits<double>::infinity();
  else limit = s.threshold;
  // Recorded, calls below the threshold are counted there (counted.h); --device gpu and --verify
  // describe every call (each is decided, or checked).
  const double count_limit = g_record && !s.verify && s.device != DeviceMode::Gpu ? s.threshold : -1.0;
  __atomic_store_n(&g_split_copy_min_bytes, s.split_copies > 0 ? s.split_copies : INT64_MAX, __ATOMIC_RELAXED);
  __atomic_store(&g_count_limit, &count_limit, __ATOMIC_RELEASE);
  __atomic_store(&g_fast_limit, &limit, __ATOMIC_RELEASE);
}

void ensure_init() {
  if (__builtin_expect(g_ready.load(std::memory_order_acquire), 1)) return;
  static std::once_flag once;
  std::call_once(once, init_once);
  g_ready.store(true, std::memory_order_release);
}

int64_t read_info(const gofl_call& c) {
  if (!c.info) return 0;
  return (c.flags & GOFL_F_ILP64) ? *static_cast<const int64_t*>(c.info) : *static_cast<const int32_t*>(c.info);
}

[[noreturn]] void copy_out_lost(const gofl_call& c, const gofl_gpu_result& r) {
  // Results were partly written and in-place inputs are gone: no correct result can be produced.
  fprintf(stderr,
          "gpu-offload: copying the results of %s back from the GPU failed at %s (error %d) after part of "
          "them was written; its in-place inputs are lost, so no correct result can be produced. Stopping.\n",
          gofl_ops[c.op].name, r.where, r.detail);
  abort();
}

// The GPU runs the call (or, in verify mode, runs it into private outputs before the CPU does).
void run_on_gpu(gofl_call& c) {
  if (c.reason == GOFL_R_VERIFY) {
    bool ran = false;
    try {
      ran = verify_gpu_first(c);
    } catch (...) {  // no memory for the private copies: this call is not verified
      c.verify = nullptr;
      c.gpu_status = GOFL_GPU_NO_MEMORY;
    }
    // The record says the GPU ran it when it did; reason VERIFY says the CPU library runs it too
    // (enter_cpu_must_run) and the program receives the CPU's result.
    c.device = ran ? GOFL_DEV_GPU : GOFL_DEV_CPU;
    return;
  }
  gofl_gpu_result r{};
  bool busy = false;
  c.cpu_calls_now = &g_cpu_calls_running;
  c.cpu_calls_beside = __atomic_load_n(&g_cpu_calls_running, __ATOMIC_RELAXED);
  if (c.cpu_calls_beside > 0) c.flags |= GOFL_F_CORES_HELD;
  if (c.flags & GOFL_F_SPLIT) {
    // Over several GPUs; any failure left the program's memory as it was: one GPU runs it instead.
    const int split = gpu_run_split(c, &r, &busy);
    if (split == GOFL_GPU_OK && !busy) {
      c.copy_in_s = r.copy_in_s;
      c.compute_s = r.compute_s;
      c.copy_out_s = r.copy_out_s;
      c.resident = 0;
      return;
    }
    c.flags &= ~uint32_t(GOFL_F_SPLIT);
    r = gofl_gpu_result{};
    busy = false;
  }
  bool staged = false;
  const int st = gpu_run(c, &r, &busy, &staged);
  if (staged) c.flags |= GOFL_F_STAGED;
  if (busy) {
    c.device = GOFL_DEV_CPU;
    c.reason = GOFL_R_GPU_HELD;
    return;
  }
  if (st == GOFL_GPU_OK) {
    c.copy_in_s = r.copy_in_s;
    c.compute_s = r.compute_s;
    c.copy_out_s = r.copy_out_s;
    c.resident = r.resident;
    return;
  }
  if (st == GOFL_GPU_COPY_OUT_FAILED) {
    for (int i = 0; i < c.n_operands; ++i)
      if (c.operands[i].role == GOFL_INOUT) copy_out_lost(c, r);
  }
  c.device = GOFL_DEV_CPU;
  c.reason = st == GOFL_GPU_INVALID_ARGS ? GOFL_R_INVALID_ARGS : GOFL_R_GPU_FAILED;
  c.gpu_status = uint16_t(st);
  c.gpu_detail = uint16_t(r.detail);
  if (c.reason == GOFL_R_GPU_FAILED) {
    char text[128];
    snprintf(text, sizeof text, "%s %d at %.64s", gofl_gpu_status_name(st), r.detail, r.where[0] ? r.where : "?");
    note_last_failure(text);
    summary_note_gpu_failure(c.op, text);
  }
}

}  // namespace

bool enter_cpu_must_run(gofl_call& c) {
  ensure_init();
  c.depth = uint8_t(t_call_depth > 255 ? 255 : t_call_depth);
  ++t_call_depth;
  c.device = GOFL_DEV_CPU;
  if (c.depth == 0 && t_counted_last) {  // the time since this thread's previous record held counted calls
    c.flags |= GOFL_F_AFTER_COUNTED;
    t_counted_last = false;
  }
  if (c.depth > 0) {
    c.flags |= GOFL_F_NESTED;
    c.reason = GOFL_R_NESTED;
  } else if (c.flags & GOFL_F_QUERY) {
    c.reason = GOFL_R_QUERY;  // workspace sizes always come from the CPU library
  } else {
    decide(c);
  }
  if (g_record && trace_enabled()) {
    c.traced = 1;
    for (int i = 0; i < c.n_operands; ++i) {
      const gofl_call_operand& o = c.operands[i];
      c.fp_in[i] = (o.role != GOFL_OUT && !(c.flags & GOFL_F_QUERY)) ? fingerprint(o.ptr, uint64_t(o.elems) * o.elem_size) : 0;
    }
  }
  c.t0_ns = clock_ns();
  if (c.device == GOFL_DEV_GPU) {
    run_on_gpu(c);
    if (c.device != GOFL_DEV_GPU) c.flags &= ~uint32_t(GOFL_F_CORES_HELD | GOFL_F_STAGED);  // the CPU ran it after all
  } else if (c.depth == 0 && g_spare_core) {
    if (!(c.flags & GOFL_F_QUERY) && gpu_working_beside()) {
      t_spared = spare_core_for(c);  // given back by leave()
      if (t_spared.lib >= 0) c.flags |= GOFL_F_CORE_SPARED;
    } else {
      spare_core_check();
    }
  }
  if (c.device == GOFL_DEV_CPU && c.depth == 0 && c.flops >= kHoldsACoreFlops && !(c.flags & GOFL_F_QUERY) &&
      !t_cpu_call_counted) {
    __atomic_fetch_add(&g_cpu_calls_running, 1u, __ATOMIC_RELAXED);
    t_cpu_call_counted = true;  // until leave()
  }
  return c.device == GOFL_DEV_CPU || c.reason == GOFL_R_VERIFY;  // verify: the CPU runs it after the GPU
}

void leave(gofl_call& c) {
  const uint64_t t1 = clock_ns();
  --t_call_depth;
  // The call's own time: without other threads' calls this thread ran on the GPU meanwhile (counted
  // in theirs; gpu_line.h).
  const uint64_t elapsed = t1 - c.t0_ns;
  const uint64_t dur = c.depth == 0 ? elapsed - std::min(elapsed, gpu_take_served_ns()) : elapsed;
  if (c.depth == 0 && t_spared.lib >= 0) {
    give_core_back(t_spared);
    t_spared = SparedCore{};
  }
  if (c.depth == 0 && t_cpu_call_counted) {
    __atomic_fetch_sub(&g_cpu_calls_running, 1u, __ATOMIC_RELAXED);
    t_cpu_call_counted = false;
  }
  if (c.verify) verify_compare(c);
  const int64_t info = (c.flags & GOFL_F_QUERY) ? 0 : read_info(c);
  if (info != 0) c.flags |= GOFL_F_INFO_NONZERO;
  if (c.depth == 0) {
    note_last_call(c);
    // Learning; a GPU call's time in line is the line's, not the GPU's speed (AutoPolicy::observe).
    if (!(c.flags & GOFL_F_QUERY)) decide_done(c, dur, c.device == GOFL_DEV_GPU ? gpu_line_wait_ns() : 0);
  }
  if (!g_record) return;
  if (c.traced) {
    CallEnd end;
    end.tid = uint32_t(tid());
    end.duration_ns = dur;
    end.info = info;
    for (int i = 0; i < c.n_operands; ++i) {
      const gofl_call_operand& o = c.operands[i];
      if (o.role != GOFL_IN && !(c.flags & GOFL_F_QUERY)) end.fp_out[i] = fingerprint(o.ptr, uint64_t(o.elems) * o.elem_size);
    }
    trace_call(record_from_call(c, end), c.resident);
  }
  summary_add(c, dur);
}

namespace {

__attribute__((constructor)) void on_load() { ensure_init(); }

__attribute__((destructor)) void on_unload() {
  if (!g_ready.load()) return;
  // The counted calls, once: later calls (other threads', other libraries' destructors) are described.
  counted_stop();
  const std::vector<gofl_counted_record> counted = counted_snapshot();
  summary_add_counted(counted);
  trace_counted(counted.data(), counted.size());
  if (settings().device != DeviceMode::Cpu && trace_enabled() && summary_any_call()) {
    // No start was ever due: say in the trace whether one could have succeeded (no CUDA is loaded).
    // A process that made no call gets no trace file for it.
    if (const std::string never = gpu_never_usable(); !never.empty()) trace_gpu_absent(never.c_str());
  }
  gpu_note_warmed();  // the warm-ups that ended after the last GPU call (the one in progress at exit was waited for)
  trace_flush();
  record_this_run();  // what the GPU gained this run, for the next run of the program
  if (settings().summary) summary_print(STDERR_FILENO);
  else if (settings().verify) summary_print_verify(STDERR_FILENO);
}

}  // namespace

}  // namespace gofl
