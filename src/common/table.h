// Names and properties of the operations and exported symbols, expanded from the generated table.
// Shared by the preload library and the command-line tool so both name operations the same way.
#pragma once

#include <stdint.h>

#include "generated/table.h"

enum gofl_kind { GOFL_KIND_BLAS3, GOFL_KIND_BLAS2, GOFL_KIND_LAPACK, GOFL_KIND_FFT, GOFL_KIND_BLAS1 };
enum gofl_iface { GOFL_IFACE_FORTRAN, GOFL_IFACE_CBLAS, GOFL_IFACE_FFTW };
enum gofl_scheme { GOFL_SCHEME_STD, GOFL_SCHEME_SCIPY, GOFL_SCHEME_NUMPY64, GOFL_SCHEME_ILP64 };

enum gofl_op_id : uint16_t {
#define GOFL_OP(id, name, routine, prec, kind, gpu, cplx, family, calib, split, warmed, verify, tri) id,
#include "generated/ops.inc"
#undef GOFL_OP
};

enum gofl_sym_id : uint16_t {
#define GOFL_SYM(id, name, op, iface, scheme, ilp64) id,
#include "generated/symbols.inc"
#undef GOFL_SYM
};

struct gofl_op_info {
  const char* name;     // "dgemm"
  const char* routine;  // "gemm"
  char precision;       // 's', 'd', 'c', 'z'
  gofl_kind kind;
  bool gpu_capable;     // the CUDA backend has a routine for it
  bool complex;
  const char* family;   // whose curves the cost model borrows: "symm" for hemm, "syevd" for heevd, else routine
  double calib_n3;      // calibration's flops over n^3, BLAS-2 over n^2 (real; complex x4), 0: not calibrated
  gofl_split_engine split;  // the engine that runs one call over several GPUs (cuda/split.h), or none
  bool warmed;              // the CUDA backend has a warm-up for it (cuda/warm.h)
  gofl_verify_mode verify;  // how --verify compares the GPU's results with the CPU library's
  uint32_t one_triangle;    // bit i: operand i crosses the host one triangle at a time (half its bytes)
};

struct gofl_sym_info {
  const char* name;     // "scipy_dgemm_64_"
  uint16_t op;
  gofl_iface iface;
  gofl_scheme scheme;
  bool ilp64;
};

extern const gofl_op_info gofl_ops[GOFL_N_OPS];
extern const gofl_sym_info gofl_syms[GOFL_N_SYMS];

// The share of operand i's bytes that a copy of it moves on the host: half for an operand that
// crosses one triangle at a time (one_triangle in ops/operations.py), else all of them.
inline double gofl_copied_share(int op, int i) {
  return op >= 0 && op < GOFL_N_OPS && i >= 0 && i < 32 && ((gofl_ops[op].one_triangle >> i) & 1u) ? 0.5 : 1.0;
}

const char* gofl_scheme_name(int scheme);
// The op id named `name` ("dgemm"), or -1.
int gofl_op_by_name(const char* name);
