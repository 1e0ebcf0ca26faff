// One FFTW execute as the GPU needs it: the transform of the plan (FFTW's guru form: a rank of
// transform dimensions and a loop of `howmany` dimensions, each with its length and its input and
// output strides in elements of each array), the sign, and the arrays of this execute. Filled by the
// preload library (src/fftw/) from the plan creator's arguments, read by the backend (src/cuda/fft.cpp)
// through gofl_call.fft. Plain C: it crosses the backend interface (backend_abi.h checks its size).
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// FFTW plans of higher rank (or a longer loop) are legal; the GPU never runs them (see `representable`).
#define GOFL_FFT_MAX_RANK 3
#define GOFL_FFT_MAX_LOOP 3

enum gofl_fft_kind { GOFL_FFT_C2C = 0, GOFL_FFT_R2C = 1, GOFL_FFT_C2R = 2 };

typedef struct gofl_fft_dim {
  int64_t n, is, os;
} gofl_fft_dim;

typedef struct gofl_fft {
  const void* plan;       // the FFTW plan: the backend's cuFFT plan is cached under it
  const void* in;         // the arrays of this execute (the plan's own, or the new-array execute's)
  void* out;
  int32_t kind;           // gofl_fft_kind
  int32_t single;         // 1: fftwf_ (float), 0: fftw_ (double)
  int32_t sign;           // -1 forward, +1 backward (c2c; r2c is -1, c2r +1)
  int32_t representable;  // 0: rank or loop longer than the arrays below hold (stays on FFTW)
  int32_t rank, loop_rank;
  gofl_fft_dim dims[GOFL_FFT_MAX_RANK];   // the transform; for r2c/c2r dims[rank-1].n is the real length
  gofl_fft_dim loop[GOFL_FFT_MAX_LOOP];   // the transforms' loop (FFTW's howmany_dims)
  // The elements each array spans relative to its pointer: [lo, lo + elems) (lo < 0 only with
  // negative strides), and the element sizes in bytes (a complex element is two reals).
  int64_t in_lo, in_elems, out_lo, out_elems;
  uint32_t in_elem, out_elem;
} gofl_fft;

#ifdef __cplusplus
}
#endif
