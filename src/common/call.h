// The description of one intercepted call, filled by a generated wrapper and handed to the dispatcher
// (and, for GPU runs, across the backend's C interface). Standard layout: no virtuals, no owners.
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
  int16_t arg;         // its position in argv
} gofl_call_operand;

typedef struct gofl_call {
  uint16_t sym;                // gofl_sym_id: which exported name was called
  uint16_t op;                 // gofl_op_id
  uint32_t flags;              // gofl_flag bits
  int64_t dims[3];
  double flops;
  const void* site;            // return address in the caller
  void* const* argv;           // each argument in table order (by-value CBLAS arguments: their address)
  int32_t argc;                // entries in argv
  void* info;                  // LAPACK info (int32_t or int64_t by the symbol's scheme), or NULL
  void* real;                  // the CPU library's function (workspace queries from the backend)
  const gofl_fft* fft;         // FFTW executes (sym GOFL_SYM_FFTW, argv NULL): the transform; else NULL
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
  uint32_t fp_in[GOFL_MAX_OPERANDS];
  void* verify;                // verify mode: the GPU's private results until leave()
} gofl_call;

#ifdef __cplusplus
}
#endif
