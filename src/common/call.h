// The description of one intercepted call, filled by a generated wrapper and handed to the dispatcher
// (and, for GPU runs, across the backend's C interface). Standard layout: no virtuals, no owners.
// Its arguments travel once, typed: `desc` points at the routine's descriptor (generated/descs.h),
// built by the wrapper's slow path from the values it read.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/fft_desc.h"
#include "common/table.h"
#include "common/operands.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gofl_call_operand {
  const void* ptr;
  int64_t elems;       // extent in elements (0: empty or not known before the call)
  uint32_t elem_size;
  uint16_t role;       // gofl_role
  int16_t field;       // an output's pointer field: its byte offset in the descriptor (desc), -1 for none
} gofl_call_operand;

#define GOFL_MAX_INT_OUTPUTS 4

// What the backend said of a call before it ran (gofl_backend.plan): asked once, by the decision.
typedef struct gofl_plan {
  int32_t planned;          // 1 once the backend filled it (a zeroed plan is no plan)
  int32_t status;           // gofl_gpu_status: OK, UNSUPPORTED or INVALID_ARGS
  int32_t split_status;     // GOFL_GPU_OK when the split engines (several GPUs) run it
  uint64_t device_bytes;    // device memory it needs (operands and workspace estimate)
  uint64_t resident_bytes;  // bytes of its inputs that kept device copies serve now (no copy)
} gofl_plan;

typedef struct gofl_call {
  uint16_t sym;                // gofl_sym_id: which exported name was called
  uint16_t op;                 // gofl_op_id
  uint32_t flags;              // gofl_flag bits
  int64_t dims[3];
  double flops;
  const void* site;            // return address in the caller
  const void* desc;            // the routine's descriptor (generated/descs.h), or NULL (no GPU body, FFTW)
  uint32_t desc_size;          // its size in bytes
  int32_t n_int_outputs;
  int16_t int_outputs[GOFL_MAX_INT_OUTPUTS];  // the descriptor's IntOut fields (info, m, rank): byte offsets
  void* info;                  // LAPACK info (int32_t or int64_t by the symbol's scheme), or NULL
  void* real;                  // the CPU library's function (workspace queries from the backend)
  const gofl_fft* fft;         // FFTW executes (sym GOFL_SYM_FFTW, desc NULL): the transform; else NULL
  gofl_plan plan;              // the backend's plan, asked once by the decision (planned 0 until then)
  int32_t n_operands;
  gofl_call_operand operands[GOFL_MAX_OPERANDS];
  // Dispatcher state, filled by enter_cpu_must_run()/leave().
  uint64_t t0_ns;
  uint8_t device;              // gofl_device
  uint8_t reason;              // gofl_reason
  uint8_t depth;
  uint8_t traced;
  float pred_cpu_s, pred_gpu_s;
  float copy_in_s, compute_s, copy_out_s;
  float verify_error;
  uint16_t gpu_status;         // gofl_gpu_status of a failed GPU attempt (0 otherwise)
  uint16_t gpu_detail;         // the library's error number
  uint32_t resident;           // gofl_residency of each operand's device copy (GOFL_RESIDENCY_OF)
  // A GPU call: the program's other threads inside top-level CPU calls of some size when it started,
  // and that count as it goes on (read with __atomic_load_n; NULL: none kept). While it is not 0 those
  // threads hold the cores, and the backend copies on the calling thread alone (engine_copies.cpp).
  uint32_t cpu_calls_beside;
  const uint32_t* cpu_calls_now;
  uint32_t fp_in[GOFL_MAX_OPERANDS];
  void* verify;                // verify mode: the GPU's private results until leave()
} gofl_call;

#ifdef __cplusplus
}
#endif
