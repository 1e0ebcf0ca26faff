// The backend's C entry point (backend_abi.h): wraps the Engine and the routine table, turns every
// failure into a gofl_gpu_status, and reads the GPU's load through NVML (dlopened, not linked).
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <optional>

#include "common/nvml.h"
#include "cuda/backend_abi.h"
#include "cuda/engine.h"
#include "cuda/fft.h"
#include "cuda/prefault.h"
#include "cuda/resident.h"
#include "cuda/split.h"
#include "cuda/thread_stage.h"
#include "cuda/warm.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {

Routine* routines() {
  static Routine table[GOFL_N_OPS];
  return table;
}

namespace {

// plan() may be asked before start(): the table does not need the GPU. Every routine, its
// libraries, warm-ups and split routine come from the operation table (generated/gpu_routines.h).
void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const GpuRoutineRow& row : kGpuRoutines) {
      Routine r = row.body();
      r.libraries = row.libraries;
      r.warm = row.warm;
      r.warm_large = row.warm_large;
      routines()[row.op] = r;
    }
    // One call over several GPUs: engines of their own (cuBLASXt, cusolverMg), made at first use.
    for (const SplitRoutineRow& row : kSplitRoutines) split_routines()[row.op] = row.body();
  });
}

const Routine* routine_of(const gofl_call* c) {
  // BLAS and LAPACK calls carry their descriptor, FFTW executes their transform.
  if (!c || c->op >= GOFL_N_OPS || !(c->desc || c->fft)) return nullptr;
  ensure_registered();
  const Routine* r = &routines()[c->op];
  return r->run ? r : nullptr;
}

// ---- NVML (common/nvml.cpp) ---------------------------------------------------------------------------

// After start() the NVML handle is matched to the engine's GPU by PCI bus id, once: the back-off
// reads the GPU this process runs on.
void nvml_match_once() {
  static std::once_flag once;
  if (!Engine::get().started()) return;
  std::call_once(once, [] {
    gofl_gpu_device d{};
    Engine::get().device_info(&d);
    nvml_match_bus_id(d.bus_id);
  });
}

// ---- the interface ----------------------------------------------------------------------------------

// The engine's state is one per process: its entry points that touch it (start, a run, a split run,
// the set-up log, configure, residency's report) take turns here, whoever calls them (the preload
// library, or a program or test using this backend directly). The preload library's GPU line
// (preload/gpu_line.h) decides which call goes next and how long a call may wait; with it, this
// mutex is never contended by runs, and costs a lock and an unlock (tens of ns) on calls of 0.1 ms
// and more. The questions a decision asks while a call may run (kept copies, an FFT plan's end)
// only try it and never wait.
std::mutex run_m;

int b_start(const char* gpus, uint32_t first_op, char* msg, size_t len) {
  ensure_registered();
  std::lock_guard<std::mutex> lk(run_m);
  return Engine::get().start(gpus, first_op < GOFL_N_OPS ? routines()[first_op].libraries : 0u, msg, len);
}

void b_device(gofl_gpu_device* out) { Engine::get().device_info(out); }

int b_memory(uint64_t* free_bytes, uint64_t* total_bytes) {
  Engine& e = Engine::get();
  if (!e.started() || e.lost()) return GOFL_GPU_NO_DEVICE;
  const ThreadOnGpu on(e);  // the memory of the GPU this process runs on
  size_t f = 0, t = 0;
  const cudaError_t err = cudaMemGetInfo(&f, &t);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return GOFL_GPU_CUDA_ERROR;
  }
  // Blocks cached by our pool are ours to reuse (and are freed on demand).
  // Kept copies (residency) give way to a call that needs their memory.
  const ResidentCache* rc = e.resident();
  if (free_bytes) *free_bytes = uint64_t(f) + e.cached_bytes() + (rc ? rc->bytes() : 0);
  if (total_bytes) *total_bytes = uint64_t(t);
  return 0;
}

int b_has_routine(uint32_t op) {
  if (op >= GOFL_N_OPS) return 0;
  ensure_registered();
  return routines()[op].run != nullptr;
}

void set_where(gofl_gpu_result* r, const char* where) {
  std::snprintf(r->where, sizeof r->where, "%s", where ? where : "");
}

// Inside a catch block: the GPU status, library error number and step of the exception a call threw.
void failure_in_flight(int* status, int* detail, const char** where) {
  try {
    throw;
  } catch (const Failure& f) {
    *status = f.status != GOFL_GPU_OK ? f.status : GOFL_GPU_CUDA_ERROR;
    *detail = f.detail;
    *where = f.where;
  } catch (const std::bad_alloc&) {
    *status = GOFL_GPU_NO_MEMORY;
    *where = "host allocation";
  } catch (...) {
    *status = GOFL_GPU_CUDA_ERROR;
    *where = "unexpected exception";
  }
}

// A call the backend cannot take at all: the status, and where it was refused, in the result.
int refuse(gofl_gpu_result* r, int status, const char* where) {
  r->status = status;
  set_where(r, where);
  return status;
}
// GOFL_GPU_OK while the engine has a usable context, else the refusal (never started, or lost).
int refuse_without_context(const Engine& e, gofl_gpu_result* r) {
  if (e.started() && !e.lost()) return GOFL_GPU_OK;
  return refuse(r, GOFL_GPU_NO_DEVICE, e.started() ? "context lost earlier" : "backend not started");
}

// The result a run entry point fills: the caller's, or `scratch` when it passed none; zeroed.
gofl_gpu_result* cleared_result(gofl_gpu_result* result, gofl_gpu_result* scratch) {
  gofl_gpu_result* r = result ? result : scratch;
  std::memset(r, 0, sizeof *r);
  return r;
}

// How a call's attempt ended: its status, the library's error number and the step that failed.
struct Outcome {
  int status = GOFL_GPU_OK, detail = 0;
  const char* where = "";
};

// Runs the call (`run()`); whatever it throws becomes the outcome.
template <class Run>
Outcome attempt(const Run& run) {
  Outcome o;
  try {
    run();
  } catch (...) {
    failure_in_flight(&o.status, &o.detail, &o.where);
  }
  return o;
}

// A call the decision planned and found runnable (gofl_plan): the one thing run() checks.
bool planned_ok(const gofl_call& c, bool split) {
  return c.plan.planned && (split ? c.plan.split_status : c.plan.status) == GOFL_GPU_OK;
}

// The outcome into the result; returns its status.
int report(gofl_gpu_result* r, const Outcome& o) {
  r->status = o.status;
  r->detail = o.detail;
  set_where(r, o.where);
  return o.status;
}

int b_run(const gofl_call* call, gofl_gpu_result* result) {
  gofl_gpu_result scratch;
  gofl_gpu_result* r = cleared_result(result, &scratch);
  std::lock_guard<std::mutex> lk(run_m);
  Engine& e = Engine::get();
  if (const int s = refuse_without_context(e, r); s != GOFL_GPU_OK) return s;
  const Routine* rt = routine_of(call);
  if (!rt) return refuse(r, GOFL_GPU_UNSUPPORTED, "no GPU routine");
  if (!planned_ok(*call, false)) return refuse(r, GOFL_GPU_UNSUPPORTED, "not planned");

  const ThreadOnGpu on(e);
  const CallInFlight flight;  // no warm-up begins beside it
  const auto t_call = std::chrono::steady_clock::now();
  e.begin_call(*call);
  e.make_room(call->plan.device_bytes);  // kept copies give way to the call and to other processes' needs
  Outcome o = attempt([&] {
    e.prepare(*call, rt->libraries);       // handles made while the inputs are copied in
    const OutputPrefault prefault(*call);  // overlaps the copy-in and the computation
    rt->run(e, *call);
  });
  if (o.status != GOFL_GPU_OK) {
    e.recover();
    // Program memory was partly written: the CPU cannot simply run the call again.
    if (e.output_written() && !e.rerunnable()) o.status = GOFL_GPU_COPY_OUT_FAILED;
  }
  e.settle();
  e.end_call(o.status == GOFL_GPU_OK);
  if (o.status == GOFL_GPU_OK)
    e.note_call_done(*call, std::chrono::duration<double>(std::chrono::steady_clock::now() - t_call).count());
  e.fill_result(r);
  report(r, o);
  e.trim(call->plan.device_bytes);  // room kept for a repeat of this call
  return o.status;
}

// ---- staged calls (thread_stage.h) -----------------------------------------------------------------

int b_stage(const gofl_call* call, int contended, double* seconds) {
  if (seconds) *seconds = 0;
  // GPU_OFFLOAD_THREAD_STAGING: auto (contended calls), on (every call that fits: tests), off (the
  // default: in PySCF C16H34 on an H100 host, auto put 23,687 calls on the GPU against 16,725, yet
  // the run took 67.8 s (63.6-69.4) against 65.3 s (63.5-65.6) without; bench/results, 2026-12-06).
  static const int mode = setting_choice(SettingId::THREAD_STAGING, 2);
  if (!call || mode == 2 || (mode == 0 && !contended) || call->op >= GOFL_N_OPS) return 0;
  // BLAS routines only: each writes its outputs through download() and never reads them back.
  const gofl_kind kind = gofl_ops[call->op].kind;
  if ((kind != GOFL_KIND_BLAS3 && kind != GOFL_KIND_BLAS2) || !planned_ok(*call, false)) return 0;
  if (call->plan.resident_bytes > 0) return 0;  // kept copies serve its inputs: nothing to stage
  Engine& e = Engine::get();
  if (!e.started() || e.lost()) return 0;
  static const size_t cap = size_t(setting_long(SettingId::THREAD_STAGING_MB, 64)) << 20;
  const auto t0 = std::chrono::steady_clock::now();
  const ThreadOnGpu on(e);  // pinned memory is the engine's context's
  const bool staged = ThreadStage::mine().stage(*call, cap);
  if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return staged ? 1 : 0;
}

int b_finish(const gofl_call* call, int ok, double* seconds) {
  bool used = false;
  const double s = ThreadStage::mine().finish(call, ok != 0, &used);
  if (seconds) *seconds = s;
  return used ? 1 : 0;
}

// ---- one call over several GPUs (split.h) -------------------------------------------------------------

const SplitRoutine* split_routine_of(const gofl_call* c) {
  if (!c || c->op >= GOFL_N_OPS || !c->desc) return nullptr;
  ensure_registered();
  const SplitRoutine* r = &split_routines()[c->op];
  return r->run ? r : nullptr;
}

int b_split_gpus() {
  const Engine& e = Engine::get();
  return e.started() ? int(e.split_devices().size()) : 0;
}

int b_split_run(const gofl_call* call, gofl_gpu_result* result) {
  gofl_gpu_result scratch;
  gofl_gpu_result* r = cleared_result(result, &scratch);
  std::lock_guard<std::mutex> lk(run_m);
  Engine& e = Engine::get();
  const SplitRoutine* rt = split_routine_of(call);
  if (!rt) return refuse(r, GOFL_GPU_UNSUPPORTED, "no split routine");
  if (!planned_ok(*call, true)) return refuse(r, GOFL_GPU_UNSUPPORTED, "not planned for the split engines");
  if (const int s = refuse_without_context(e, r); s != GOFL_GPU_OK) return s;
  const ThreadOnGpu on(e);
  const CallInFlight flight;
  e.begin_call(*call);
  // The engines write the program's memory without our copy-out: no kept device copy of an output
  // may serve a later call (cuBLASXt's pinned DMA writes are invisible to page tracking).
  if (ResidentCache* rc = e.resident())
    for (int i = 0; i < call->n_operands && i < GOFL_MAX_OPERANDS; ++i) {
      const gofl_call_operand& o = call->operands[i];
      if (o.role != GOFL_IN) rc->overwritten(reinterpret_cast<uintptr_t>(o.ptr), size_t(o.elems) * o.elem_size);
    }
  const auto t0 = std::chrono::steady_clock::now();
  const Outcome o = attempt([&] { rt->run(e, *call); });
  if (o.status != GOFL_GPU_OK) split_recover(e);
  // The engines (and freeing their buffers) leave another split device current.
  if (cudaSetDevice(e.device()) != cudaSuccess) (void)cudaGetLastError();
  e.end_call(o.status == GOFL_GPU_OK);
  // The engines copy and compute at once: the whole call counts as computation.
  r->compute_s = float(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return report(r, o);
}

int b_utilization() {
  nvml_match_once();
  return nvml_utilization();
}

int b_take_setup(gofl_setup_phase* out, int max) {
  std::lock_guard<std::mutex> lk(run_m);
  return Engine::get().take_setup(out, max);
}

void b_set_fault(const char* spec) { Engine::get().set_fault(spec); }

int b_warm(uint32_t op, int64_t n) {
  ensure_registered();
  return warm_queue(op, n);
}

int b_take_warmed(gofl_warmed* out, int max) { return out && max > 0 ? take_warmed(out, max) : 0; }
int b_warming() { return warming() ? 1 : 0; }

void b_fft_forget(const void* plan) {
  // Never wait: the destroying thread may not block behind another thread's long GPU call.
  std::unique_lock<std::mutex> lk(run_m, std::try_to_lock);
  // cuFFT's destroy runs in the engine's context, and the program's thread gets its own back: a
  // CUDA call on a thread with no current context binds the primary context to it for good (after
  // fftw_destroy_plan the program's thread then had a context it never made).
  std::optional<ThreadOnGpu> on;
  if (lk.owns_lock() && Engine::get().started()) on.emplace(Engine::get());
  fft_forget(plan, lk.owns_lock());
}

void b_configure(const gofl_backend_config* c) {
  if (!c) return;
  std::lock_guard<std::mutex> lk(run_m);
  const ThreadOnGpu on(Engine::get());  // turning residency off frees kept copies
  Engine::get().set_residency(c->residency != 0, c->reserve_bytes, c->reserve_fraction);
}

// Bytes of the call's inputs that kept device copies serve now (for the cost model: no GPU work, a
// check of the host memory). Never waits: the thread running a GPU call may be the one asking (a CUDA
// library calling host BLAS).
uint64_t resident_bytes(const gofl_call& call) {
  std::unique_lock<std::mutex> lk(run_m, std::try_to_lock);
  if (!lk.owns_lock()) return 0;
  ResidentCache* rc = Engine::get().resident();
  if (!rc || rc->count() == 0) return 0;
  uint64_t bytes = 0;
  for (int i = 0; i < call.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
    const gofl_call_operand& o = call.operands[i];
    const uint64_t n = uint64_t(o.elems) * o.elem_size;
    if (o.role == GOFL_IN && rc->covers(reinterpret_cast<uintptr_t>(o.ptr), n, o.elem_size)) bytes += n;
  }
  return bytes;
}

// The plan (backend_abi.h): the routine's own check and device bytes, the split engines' check, the
// kept copies that serve. Needs no GPU for the first two.
void b_plan(const gofl_call* call, gofl_plan* out) {
  if (!out) return;
  *out = gofl_plan{};
  out->planned = 1;
  out->status = out->split_status = GOFL_GPU_UNSUPPORTED;
  const Routine* r = routine_of(call);
  if (!r) return;
  try {
    out->status = r->plan(*call, &out->device_bytes);
  } catch (...) {
    out->status = GOFL_GPU_UNSUPPORTED;
  }
  if (out->status != GOFL_GPU_OK) return;
  if (const SplitRoutine* s = split_routine_of(call)) {
    try {
      out->split_status = s->plan(*call, nullptr);
    } catch (...) {
    }
  }
  out->resident_bytes = resident_bytes(*call);
}

void b_residency_info(char* buf, size_t len) {
  if (!buf || !len) return;
  std::lock_guard<std::mutex> lk(run_m);
  ResidentCache* rc = Engine::get().resident();
  if (!rc) {
    std::snprintf(buf, len, "not started");
    return;
  }
  if (!rc->enabled()) {
    std::snprintf(buf, len, "off");
    return;
  }
  HostWatch& w = rc->watch();
  const char* why = w.why_not_page_tracking();
  std::snprintf(buf, len, "%s%s%s%s, %zu copies kept (%.1f MB)",
                w.mechanism() == WatchMechanism::PageTracking ? "page tracking (userfaultfd write-protect)"
                                                              : "content check (a hash of every byte)",
                w.mechanism() != WatchMechanism::PageTracking && why && *why ? " (page tracking unavailable: " : "",
                w.mechanism() != WatchMechanism::PageTracking && why && *why ? why : "",
                w.mechanism() != WatchMechanism::PageTracking && why && *why ? ")" : "", rc->count(),
                double(rc->bytes()) / 1e6);
}

}  // namespace
}  // namespace cuda
}  // namespace gofl

extern "C" __attribute__((visibility("default"))) const gofl_backend* gofl_backend_entry(void) {
  using namespace gofl::cuda;
  static const gofl_backend b = {
      GOFL_BACKEND_ABI, GOFL_OPS_HASH, sizeof(gofl_call), sizeof(gofl_gpu_result), sizeof(gofl_fft),
      b_start, b_device, b_memory, b_has_routine, b_plan, b_run, b_utilization,
      b_configure, b_residency_info, b_set_fault, b_split_gpus, b_split_run,
      b_fft_forget, b_take_setup, b_warm, b_take_warmed, b_warming, b_stage, b_finish,
  };
  return &b;
}
