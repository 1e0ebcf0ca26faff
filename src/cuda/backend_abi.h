// The small C interface between libgpuoffload.so (no CUDA dependency) and libgpuoffload-cuda.so,
// which the preload library dlopens only when the first call is about to go to the GPU.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/call.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GOFL_BACKEND_ABI 2
#define GOFL_BACKEND_ENTRY "gofl_backend_v1"
#define GOFL_BACKEND_SONAME "libgpuoffload-cuda.so"

// Why a GPU attempt did not produce the result (0: it did). The trace keeps the code; the summary
// counts them. Every code but COPY_OUT_FAILED leaves the program's buffers as the CPU library needs
// them to run the call itself: untouched, or (a routine that declared itself rerunnable, gemm with
// beta = 0) partly written outputs that the CPU library overwrites without reading.
enum gofl_gpu_status {
  GOFL_GPU_OK = 0,
  GOFL_GPU_UNSUPPORTED = 1,     // this variant is not implemented on the GPU (the CPU runs it)
  GOFL_GPU_INVALID_ARGS = 2,    // arguments the CPU library rejects: it reports them (xerbla)
  GOFL_GPU_NO_MEMORY = 3,       // not enough free device memory beyond the reserve, or cudaMalloc failed
  GOFL_GPU_CUDA_ERROR = 4,
  GOFL_GPU_CUBLAS_ERROR = 5,
  GOFL_GPU_CUSOLVER_ERROR = 6,
  GOFL_GPU_INJECTED = 7,        // test-only fault injection (GPU_OFFLOAD_FAULT)
  GOFL_GPU_NO_DEVICE = 8,       // no driver / no GPU / context creation failed
  GOFL_GPU_COPY_OUT_FAILED = 9, // failed while writing results: outputs are partly written
  GOFL_GPU_STATUS_COUNT
};

typedef struct gofl_gpu_result {
  int32_t status;       // gofl_gpu_status
  int32_t detail;       // the CUDA / cuBLAS / cuSOLVER error number, when there is one
  char where[64];       // the step that failed ("cudaMalloc", "cusolverDnXgetrf", ...)
  float copy_in_s;
  float compute_s;
  float copy_out_s;
  uint64_t bytes_in;
  uint64_t bytes_out;
  uint32_t resident;        // per operand (2 bits each, operand i at bit 2i): gofl_residency of its device copy
  uint64_t bytes_resident;  // bytes the call did not copy because a kept device copy served
} gofl_gpu_result;

// What the library tells the backend once it runs (and again when a setting changes).
typedef struct gofl_backend_config {
  int32_t residency;          // 1: keep unchanged operands on the GPU between calls
  int64_t reserve_bytes;      // GPU memory always left free, or -1: reserve_fraction of the total
  double reserve_fraction;
} gofl_backend_config;

typedef struct gofl_backend {
  uint32_t abi;  // GOFL_BACKEND_ABI
  // Create the context, handles, streams and staging buffers. 0 on success, else a gofl_gpu_status
  // with a message.
  int (*start)(char* msg, size_t msg_len);
  // A line naming the device and versions, for the summary and trace header.
  const char* (*describe)(void);
  // Free and total device memory in bytes; 0 on success.
  int (*memory)(uint64_t* free_bytes, uint64_t* total_bytes);
  // Whether `call` can run on the GPU (GOFL_GPU_OK, UNSUPPORTED or INVALID_ARGS), without GPU work.
  int (*supports)(const gofl_call* call);
  // Device memory the call needs (operands and workspace estimate), for the memory gate.
  uint64_t (*device_bytes)(const gofl_call* call);
  // Run the call. On GOFL_GPU_OK every output (arrays, info, work[0] and the like) has been written
  // exactly as the CPU library would define it; on any other status before the copy-out, nothing
  // the program can see was touched.
  int (*run)(const gofl_call* call, gofl_gpu_result* result);
  // GPU utilisation in percent over the last sample period (NVML), or -1 when unknown.
  int (*utilization)(void);
  // Release device memory held for reuse (scratch buffers).
  void (*trim)(void);
  // Residency: apply the settings; bytes of the call's inputs that kept device copies would serve now
  // (for the cost model: no GPU work, a check of the host memory); a line saying how host memory is
  // watched and what is kept, for the summary.
  void (*configure)(const gofl_backend_config* config);
  uint64_t (*resident_bytes)(const gofl_call* call);
  void (*residency_info)(char* buf, size_t len);
  // Test-only: make the named step fail ("alloc", "h2d", "compute", "d2h-before") or corrupt the
  // result ("corrupt"); NULL clears it.
  void (*set_fault)(const char* spec);
} gofl_backend;

typedef const gofl_backend* (*gofl_backend_entry_fn)(void);

#ifdef __cplusplus
}
#endif
