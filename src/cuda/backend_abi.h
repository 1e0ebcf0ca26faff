// The small C interface between libgpuoffload.so (no CUDA dependency) and libgpuoffload-cuda.so,
// which the preload library dlopens only when the first call is about to go to the GPU. What crosses
// it is checked before anything is called: the interface version, the op table the routines are
// indexed by (GOFL_OPS_HASH) and the sizes of the structures passed.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/call.h"
#include "trace/record.h"  // the trace vocabulary: roles, residency, reasons and GPU status codes

#ifdef __cplusplus
extern "C" {
#endif

#define GOFL_BACKEND_ABI 16
// The entry point's name carries no version: the table it returns does (abi).
#define GOFL_BACKEND_ENTRY "gofl_backend_entry"
#define GOFL_BACKEND_SONAME "libgpuoffload-cuda.so"

// Statuses: gofl_gpu_status (trace/codes.h), as the trace records them.
typedef struct gofl_gpu_result {
  int32_t status;       // gofl_gpu_status
  int32_t detail;       // the CUDA / cuBLAS / cuSOLVER error number, when there is one
  char where[64];       // the step that failed ("cudaMalloc", "cusolverDnXgetrf", ...)
  float copy_in_s;
  float compute_s;
  float copy_out_s;
  uint32_t resident;        // per operand (2 bits each, operand i at bit 2i): gofl_residency of its device copy
  uint64_t bytes_resident;  // bytes the call did not copy because a kept device copy served
} gofl_gpu_result;

// What the library tells the backend once it runs (and again when a setting changes).
typedef struct gofl_backend_config {
  int32_t residency;          // 1: keep unchanged operands on the GPU between calls
  int64_t reserve_bytes;      // GPU memory always left free, or -1: reserve_fraction of the total
  double reserve_fraction;
} gofl_backend_config;

// The GPU the backend runs on, once started.
typedef struct gofl_gpu_device {
  int32_t index;        // its CUDA device number
  int32_t count;        // GPUs CUDA shows the process
  char bus_id[24];      // PCI bus id
  char name[64];
  char chosen_by[192];  // why that one (common/gpu_placement.h)
} gofl_gpu_device;

// One finished warm-up: its operation, when it ended (CLOCK_MONOTONIC ns, as the trace), whether it
// succeeded, and its time by phase (GOFL_SP_WARMED: the whole warm-up; GOFL_SP_WARM_CPU: the warming
// thread's CPU time in it; loading cuBLAS or cuSOLVER and making the warming thread's handles, when
// it did: at most 5).
#define GOFL_WARMED_MAX_PHASES 8
typedef struct gofl_warmed {
  uint32_t op;
  int32_t status;  // gofl_gpu_status
  uint64_t end_ns;
  int32_t n_phases;
  gofl_setup_phase phases[GOFL_WARMED_MAX_PHASES];
} gofl_warmed;

typedef struct gofl_backend {
  uint32_t abi;          // GOFL_BACKEND_ABI
  uint32_t ops_hash;     // GOFL_OPS_HASH of the table the backend's routines are indexed by
  uint32_t call_size;    // sizeof(gofl_call)
  uint32_t result_size;  // sizeof(gofl_gpu_result)
  uint32_t fft_size;     // sizeof(gofl_fft) (common/fft_desc.h), read through gofl_call.fft
  // Pick the GPU (common/gpu_placement.h; `gpus`: the GPU setting, "all" or a list of CUDA device
  // numbers), create the context, streams and small buffers on it. `first_op`: the operation of the
  // call that starts it (GOFL_N_OPS: none), whose CUDA libraries are loaded beside the context's
  // making. 0 on success, else a gofl_gpu_status with a message.
  int (*start)(const char* gpus, uint32_t first_op, char* msg, size_t msg_len);
  // The GPU it runs on (after a successful start).
  void (*device)(gofl_gpu_device* out);
  // Free and total device memory in bytes; 0 on success.
  int (*memory)(uint64_t* free_bytes, uint64_t* total_bytes);
  // Whether the backend has a routine for operation `op` (1) or not (0); needs no GPU, nor start().
  int (*has_routine)(uint32_t op);
  // The call's plan (common/call.h, gofl_plan), from its descriptor, without GPU work: whether it can
  // run on the GPU (GOFL_GPU_OK, UNSUPPORTED or INVALID_ARGS), the device memory it needs, the bytes of
  // its inputs kept device copies would serve now (a check of host memory; 0 before start()), and
  // whether the split engines run it. The decision asks once and keeps it in the call.
  void (*plan)(const gofl_call* call, gofl_plan* out);
  // Run a call whose plan (call->plan) said GOFL_GPU_OK; nothing is checked again. On GOFL_GPU_OK every
  // output (arrays, info, work[0] and the like) has been written exactly as the CPU library would
  // define it; on any other status before the copy-out, nothing the program can see was touched.
  int (*run)(const gofl_call* call, gofl_gpu_result* result);
  // GPU utilisation in percent over the last sample period (NVML), or -1 when unknown.
  int (*utilization)(void);
  // Residency: apply the settings; a line saying how host memory is watched and what is kept, for the
  // summary.
  void (*configure)(const gofl_backend_config* config);
  void (*residency_info)(char* buf, size_t len);
  // Test-only: make the named step fail ("alloc", "h2d", "compute", "d2h-before"), corrupt the
  // result ("corrupt") or take QR's 64-bit route at any size ("qr64"); a comma-separated list;
  // NULL clears it.
  void (*set_fault)(const char* spec);
  // One call over several GPUs (cuda/split.h: cuBLASXt, cusolverMg), after start(). split_gpus: how
  // many GPUs a split call spreads over (the usable GPUs of the GPU setting, the engine's own first).
  // split_run: as run(), on the split engines, for a call whose plan's split_status is GOFL_GPU_OK; on
  // any status but GOFL_GPU_OK nothing the program can see changed (or, gemm with beta = 0, only
  // outputs the CPU library overwrites without reading them).
  int (*split_gpus)(void);
  int (*split_run)(const gofl_call* call, gofl_gpu_result* result);
  // The FFTW plan `plan` is being destroyed: free the cuFFT plan made for it, if any. Never waits for
  // a running call (the plan is then freed at the next one).
  void (*fft_forget)(const void* plan);
  // The one-time costs noted since the last take (trace/record.h, gofl_setup_phase): after start(),
  // the start's steps; after run(), what that call set up (nothing for most calls). Returns how
  // many were written to `out` (at most `max`).
  int (*take_setup)(gofl_setup_phase* out, int max);
  // Warming (cuda/warm.h): make operation `op`'s first GPU call cheaper by running its CUDA library
  // routines once on a small problem of the backend's own, on a thread, stream and handles of their
  // own, beside the calls, for calls of about size `n` (their largest dimension; 0 when not known:
  // every size the operation is warmed at). Returns at once: GOFL_GPU_OK when queued (or done or
  // queued before), GOFL_GPU_UNSUPPORTED when the operation has no warm-up, GOFL_GPU_NO_DEVICE before
  // start().
  int (*warm)(uint32_t op, int64_t n);
  // The warm-ups finished since the last take, at most `max`: their number.
  int (*take_warmed)(gofl_warmed* out, int max);
  // 1 while a warm-up runs or is queued, else 0 (an atomic read: cheap enough for every CPU call).
  int (*warming)(void);
  // A small BLAS call about to wait for the GPU, or made while the program's other threads hold the
  // cores (`contended`: 1): copy its inputs into the calling thread's own pinned buffer now, before it
  // takes the GPU (cuda/thread_stage.h). run() then copies from there at the link's rate and leaves
  // the outputs there; finish() writes them into the program's memory (ok: run() returned
  // GOFL_GPU_OK) or drops them, and must follow every stage() that returned 1, on the same thread,
  // whether run() was called or not; run() may be called on another thread, the one holding the GPU
  // serving this call (gpu_line.h). Neither takes the GPU. `seconds` (may be null): the time each
  // spent copying. stage() returns 1 when it staged the call, else 0 (then finish() does nothing);
  // finish() returns 1 when run() copied from or into the stage, else 0.
  int (*stage)(const gofl_call* call, int contended, double* seconds);
  int (*finish)(const gofl_call* call, int ok, double* seconds);
} gofl_backend;

typedef const gofl_backend* (*gofl_backend_entry_fn)(void);

#ifdef __cplusplus
}
#endif
