// What an FFTW execute needs to be measured: the transform a plan computes, its size and the memory
// its arrays span, worked out once from the plan creator's arguments.
#pragma once

#include <stdint.h>

#include <vector>

#include "common/fft_desc.h"

namespace gofl::fftw {

enum class Kind { C2C, R2C, C2R };

// One dimension in FFTW's guru form: length, input stride, output stride (in elements of each array).
struct Dim {
  int64_t n, is, os;
};

// The elements an array spans relative to its base pointer: `elems` of them starting at index `lo`
// (lo < 0 only with negative strides).
struct Span {
  int64_t lo = 0;
  int64_t elems = 0;
};

struct PlanInfo {
  uint16_t op = 0;         // gofl_op_id: dfft, sfft_r2c, ...
  uint32_t in_role = 0;    // GOFL_IN, or GOFL_INOUT when FFTW may overwrite the input
  int32_t rank = 0;
  int64_t n = 0;           // points per transform (the logical, real-side size for r2c/c2r)
  int64_t howmany = 0;
  double flops = 0;
  const void* in = nullptr;   // the arrays the plan was made for (fftw_execute uses them)
  const void* out = nullptr;
  Span in_span, out_span;
  uint32_t in_elem = 0, out_elem = 0;  // element sizes in bytes
  gofl_fft fft{};  // the transform for the GPU, on the plan's own arrays (an execute sets its own)
};

// A plan in guru form: `dims` is one transform, `howmany_dims` the loop over transforms. For r2c/c2r,
// dims.back().n is the real length and the complex array holds n/2+1 elements along it.
// `sign`: FFTW_FORWARD (-1) or FFTW_BACKWARD (+1); r2c is always forward, c2r backward.
PlanInfo describe_guru(Kind kind, bool single, const std::vector<Dim>& dims, const std::vector<Dim>& howmany_dims,
                       const void* in, const void* out, int sign, unsigned flags);

// A plan of the advanced ("many") interface, which also covers plan_dft*, plan_dft_r2c* and plan_dft_c2r*.
PlanInfo describe_many(Kind kind, bool single, int rank, const int* n, int howmany, const void* in, const int* inembed,
                       int istride, int idist, const void* out, const int* onembed, int ostride, int odist,
                       int sign, unsigned flags);

}  // namespace gofl::fftw
