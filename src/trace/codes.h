// The trace's vocabulary, beside its layout (record.h): where a call ran, why it ran there, why a GPU
// attempt failed, and the run's device mode. Each is one list, expanded here into its enum and in
// codes.cpp into its names, so the library, the backend, the summary and the report say the same.
// The numbers are written into traces: never renumber or reuse one, only append.
#pragma once

// X(ID, number, name)
#define GOFL_DEVICES(X) \
  X(CPU, 0, "cpu")      \
  X(GPU, 1, "gpu")

// --device: the trace header's device_mode and the GPU_OFFLOAD_DEVICE values.
#define GOFL_DEVICE_MODES(X) \
  X(CPU, 0, "cpu")           \
  X(GPU, 1, "gpu")           \
  X(AUTO, 2, "auto")

// Why a call ran where it ran (gofl_call_record.reason).
#define GOFL_REASONS(X)                                                                                  \
  X(FORCED_CPU, 0, "device cpu")             /* --device cpu (or measure-only operation) */            \
  X(BELOW_THRESHOLD, 1, "below threshold")   /* less work than the decision threshold */               \
  X(NESTED, 2, "nested")                     /* called from inside another intercepted routine */      \
  X(QUERY, 3, "workspace query")             /* lwork = -1 */                                          \
  X(NOT_GPU_CAPABLE, 4, "measured only")     /* ?copy, or a variant the backend does not run */        \
  X(NO_BACKEND, 5, "GPU unavailable")        /* backend, driver or GPU missing, or its start failed */ \
  X(PREDICTED_SLOWER, 6, "predicted slower") /* the cost model says the CPU is faster */               \
  X(NOT_STARTED, 7, "GPU not started yet")   /* ski rental: GPU start-up not yet justified */          \
  X(GPU_BUSY, 8, "GPU busy")                 /* other programs load the GPU beyond the level's limit */ \
  X(GPU_MEMORY, 9, "GPU memory")             /* not enough free GPU memory beyond the level's reserve */ \
  X(PROBE, 10, "CPU probe")                  /* deliberate CPU run to observe the CPU speed */          \
  X(GPU_FAILED, 11, "GPU failed")            /* the GPU path failed before copy-out; CPU ran it */      \
  X(INVALID_ARGS, 12, "invalid arguments")   /* the CPU library reports bad arguments (xerbla) */       \
  X(AFTER_FORK, 13, "forked child")          /* child of a process that had started the GPU */          \
  X(GPU_HELD, 14, "GPU held")               /* another thread's call held the GPU beyond this one's wait */ \
  X(OFFLOADED, 15, "offloaded")              /* ran on the GPU */                                       \
  X(FORCED_GPU, 16, "device gpu")            /* ran on the GPU because --device gpu */                  \
  X(VERIFY, 17, "verified")                  /* ran on both devices; the program got the CPU result */ \
  X(STARTING, 18, "GPU starting")            /* the GPU starts beside it; waiting would cost more */

// Why a GPU attempt did not produce the result (gofl_call_record.gpu_status; 0: it did). Every code
// but COPY_OUT_FAILED leaves the program's buffers as the CPU library needs them to run the call
// itself: untouched, or (a routine that declared itself rerunnable, gemm with beta = 0) partly
// written outputs that the CPU library overwrites without reading.
#define GOFL_GPU_STATUSES(X)                                                                               \
  X(OK, 0, "none")                                                                                         \
  X(UNSUPPORTED, 1, "variant not supported")  /* not implemented on the GPU: the CPU runs it */            \
  X(INVALID_ARGS, 2, "invalid arguments")     /* arguments the CPU library rejects: it reports them */     \
  X(NO_MEMORY, 3, "out of GPU memory")        /* not enough free device memory, or cudaMalloc failed */    \
  X(CUDA_ERROR, 4, "CUDA error")                                                                           \
  X(CUBLAS_ERROR, 5, "cuBLAS error")                                                                       \
  X(CUSOLVER_ERROR, 6, "cuSOLVER error")                                                                   \
  X(INJECTED, 7, "injected fault (test)")     /* GPU_OFFLOAD_FAULT */                                      \
  X(NO_DEVICE, 8, "no GPU device")            /* no driver / no GPU / context creation failed */           \
  X(COPY_OUT_FAILED, 9, "copy-out failed")    /* failed while writing results: outputs partly written */ \
  X(CUFFT_ERROR, 10, "cuFFT error")

// One-time costs (gofl_setup_record.phases): the GPU start's steps, and what a routine's first GPU call
// set up beyond its own work.
#define GOFL_SETUP_PHASES(X)                                                                                \
  X(LOAD, 1, "loading the backend")          /* dlopen of libgpuoffload-cuda.so and the CUDA runtime */      \
  X(PLACE, 2, "choosing the GPU")             /* PCI ids, NVML loads (the count: DRIVER) */                     \
  X(CONTEXT, 3, "CUDA context")               /* the primary context (the driver's start: DRIVER) */       \
  X(STREAMS, 4, "streams and events")                                                                      \
  X(STAGING, 5, "pinned staging buffers")     /* allocated, or grown for a larger call */                  \
  X(SMALL_BUFFERS, 6, "small buffers")        /* the pinned bounce buffer and cuSOLVER's device info */    \
  X(COPY_THREADS, 7, "copy threads")                                                                       \
  X(DEVICE_INFO, 8, "device properties")                                                                   \
  X(CUBLAS, 9, "cuBLAS handle")               /* cublasCreate, at the first routine that uses cuBLAS */    \
  X(CUSOLVER, 10, "cuSOLVER handle")          /* cusolverDnCreate, at the first routine that uses it */    \
  X(DEVICE_MEMORY, 11, "device memory")       /* the pool's cudaMalloc calls during a first call */        \
  X(CUFFT_PLAN, 12, "cuFFT plans")            /* cufftPlanMany for a new FFTW plan */                      \
  X(FIRST_CALL, 13, "first call, in all")     /* the routine's whole first GPU call, the above included */ \
  X(OTHER, 14, "the rest of the start")       /* the start's time not in a phase above */                 \
  X(DRIVER, 15, "CUDA driver initialisation") /* cudaGetDeviceCount: the driver's own start (cuInit) */   \
  X(LOAD_CUBLAS, 16, "loading cuBLAS")        /* dlopen of cuBLAS and cuBLASLt, at cuBLAS's first use */   \
  X(LOAD_CUSOLVER, 17, "loading cuSOLVER")    /* dlopen, at cuSOLVER's first use */                      \
  X(LOAD_CUFFT, 18, "loading cuFFT")          /* dlopen, at cuFFT's first use */                         \
  /* the libraries of the call that started the GPU, on a helper thread while the context is made: */    \
  /* not a step of the start (the start waits for it only if it outlasts the context) */                  \
  X(LIBRARIES_BESIDE, 19, "CUDA libraries loaded beside the start")                                       \
  /* a routine's CUDA library work done ahead, on the warming thread beside the calls (cuda/warm.h) */    \
  X(WARMED, 20, "warmed beside the calls")                                                                \
  /* the warming thread's CPU time during that warm-up (it runs at the lowest priority) */                \
  X(WARM_CPU, 21, "warming thread's CPU time")

#define GOFL_DEV_ENUM_(id, num, name) GOFL_DEV_##id = num,
#define GOFL_MODE_ENUM_(id, num, name) GOFL_MODE_##id = num,
#define GOFL_R_ENUM_(id, num, name) GOFL_R_##id = num,
#define GOFL_GPU_ENUM_(id, num, name) GOFL_GPU_##id = num,
#define GOFL_SP_ENUM_(id, num, name) GOFL_SP_##id = num,

enum gofl_device { GOFL_DEVICES(GOFL_DEV_ENUM_) GOFL_DEVICE_COUNT };
enum gofl_device_mode { GOFL_DEVICE_MODES(GOFL_MODE_ENUM_) GOFL_MODE_COUNT };
enum gofl_reason { GOFL_REASONS(GOFL_R_ENUM_) GOFL_R_COUNT };
enum gofl_gpu_status { GOFL_GPU_STATUSES(GOFL_GPU_ENUM_) GOFL_GPU_STATUS_COUNT };
enum gofl_setup_phase_id { GOFL_SETUP_PHASES(GOFL_SP_ENUM_) GOFL_SP_END };

#undef GOFL_DEV_ENUM_
#undef GOFL_MODE_ENUM_
#undef GOFL_R_ENUM_
#undef GOFL_GPU_ENUM_
#undef GOFL_SP_ENUM_

#ifdef __cplusplus
// Traces written before hold these numbers: a list may grow at its end, never shrink or move.
static_assert(GOFL_DEVICE_COUNT == 2 && GOFL_MODE_COUNT == 3, "device numbers are part of the trace format");
static_assert(GOFL_R_COUNT == 19, "reason numbers are part of the trace format: append, then update this");
static_assert(GOFL_SP_END == 22, "setup phase numbers are part of the trace format: append, then update this");
static_assert(GOFL_GPU_STATUS_COUNT == 11, "GPU status numbers are part of the trace format: append, then update this");

// The words for each code, as the summary, dump and report print them (for a number not in the list:
// "?", or "unknown status").
const char* gofl_device_name(int device);          // cpu, gpu
const char* gofl_device_mode_name(int mode);       // cpu, gpu, auto
const char* gofl_reason_name(int reason);          // "below threshold", ...
const char* gofl_gpu_status_name(int status);      // "none", "cuBLAS error", ...
const char* gofl_setup_phase_name(int phase);      // "CUDA context", "cuBLAS handle", ...
// The device mode named `name` ("cpu", "gpu", "auto"), or -1.
int gofl_device_mode_by_name(const char* name);
#endif
