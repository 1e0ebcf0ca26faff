// The preload library's side of the GPU: loading libgpuoffload-cuda.so on first use, one GPU call
// at a time, and no GPU in a child forked after the GPU started.
#pragma once

#include <stdint.h>

#include <string>

#include "cuda/backend_abi.h"
#include "preload/gpu_line.h"

namespace gofl {

// The backend, started on first call; nullptr when it cannot be used (see gpu_unavailable_reason).
// `first_op`: the operation of the call that starts it, if one does (its CUDA libraries are loaded
// during the start).
const gofl_backend* gpu_backend(uint32_t first_op = GOFL_N_OPS);
bool gpu_started();
// Begins the start, if none was tried, and returns before its slow part ends: the backend is loaded
// on this thread, the driver, the context and the rest start on a thread of their own (all of it
// here when no thread can be made, or when the GPU is known absent: then it fails at once). True
// while the start goes on or once it succeeded; gpu_backend() waits for its end.
bool gpu_start_ahead(uint32_t first_op);
// How long the program's threads waited for the start: all of it (gpu_startup_seconds) when it ran
// in a call, else the backend's loading and the waits of calls that chose to wait (0 before).
double gpu_start_waited_seconds();
// A start was tried and failed, or the GPU was lost by fork: never starts anything.
bool gpu_unavailable();
const char* gpu_unavailable_reason();
// True in a child of a process that had started the GPU: its CUDA context did not survive fork().
bool gpu_lost_by_fork();
// Run `c` on the GPU unless another thread's call holds it beyond c's wait (then *busy is set and
// nothing runs). A waiting call may be run by the thread that holds the GPU (gpu_line.h).
// *staged (may be null): its operands went through the thread's own pinned buffer (cuda/thread_stage.h).
int gpu_run(const gofl_call& c, gofl_gpu_result* r, bool* busy, bool* staged = nullptr);
// The time this thread spent, since the last ask, running other threads' waiting calls while it held
// the GPU: not part of its own call's time as the policy learns it.
uint64_t gpu_take_served_ns();
// Whether this thread's last gpu_run was run by the thread holding the GPU (gpu_line.h).
bool gpu_last_run_served();
// This thread's last gpu_run's time in line behind other threads' calls (with the wake-up after
// it; less its own run, when the thread holding the GPU ran it), and the time of a split attempt
// (gpu_run_split) that gave up or failed just before it: not the call's own time on one GPU.
uint64_t gpu_line_wait_ns();
// The line for the GPU so far (preload/gpu_line.h): holds, waits, calls that gave up or did not wait.
GpuLine::Tally gpu_line_tally();
// Of the holds: the time inside the backend's runs of calls (its own or served ones, split calls too),
// so that a hold splits into the handover, the backend's run and the rest (taking, staging lookups).
uint64_t gpu_runs_in_holds_ns();
// Staged calls (cuda/thread_stage.h): their threads' own copies into their pinned buffers before the
// GPU was taken, and out of them after it was given back (in their calls' copy-in and copy-out too).
void gpu_staged_copies_ns(uint64_t* in_ns, uint64_t* out_ns);
// One call over several GPUs (cuda/split.h), as gpu_run: the GPUs a split call spreads over (0 before
// the start), and the run itself (of a call whose plan's split_status is GOFL_GPU_OK).
int gpu_split_gpus();
int gpu_run_split(const gofl_call& c, gofl_gpu_result* r, bool* busy);
// Whether a split call has run (its engines are started).
bool gpu_split_started();
// An FFTW plan is being destroyed: the backend frees the cuFFT plan it made for it (nothing to do when
// the GPU never started).
void gpu_fft_forget(const void* plan);
// Warming (cuda/warm.h): ask the started backend to warm `op` beside the calls, for calls of about
// size `n` (0: not known, every size it warms) (false when it has no warm-up for it, or the GPU is
// not started); the finished warm-ups go to the trace as setup records
// (GOFL_SP_WARMED) and are counted for the summary: gpu_note_warmed() takes them (after each GPU call,
// and at exit); gpu_warmed() says how many operations the backend took, how many of those finished
// well so far, their time and the warming thread's CPU time in them.
bool gpu_warm(uint32_t op, int64_t n);
void gpu_note_warmed();
// The GPU's one-time work goes on beside the program's calls now: a start (beside the calls, or in
// another thread's call), or a warm-up running or queued (preload/spare_core.h). Atomic reads.
bool gpu_working_beside();
void gpu_warmed(int* asked, int* count, double* seconds, double* cpu_seconds);
// Test-only fault switch, applied now or when the backend starts.
void gpu_set_fault(const char* spec);
void gpu_fork_child();
// No start was tried, and none could succeed: why, in the user's words (gpu_probe.h); empty when a
// start was tried or nothing rules a GPU out. Loads no CUDA library.
std::string gpu_never_usable();
// Seconds the backend's start took (0 before).
double gpu_startup_seconds();
// The start's steps and their times (trace/record.h, gofl_setup_phase); 0 before the start.
int gpu_start_phases(const gofl_setup_phase** out);
// The GPU the backend runs on (nullptr before the start).
const gofl_gpu_device* gpu_device();

}  // namespace gofl
