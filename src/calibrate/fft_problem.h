// The calibration's FFT problems (src/calibrate/workload.cpp runs them like its matrix problems): an
// n x n transform of each FFTW operation (dfft, sfft_r2c, ...), planned and executed through the
// exported FFTW names, so that the library's wrappers decide and time each execute as in a program.
#pragma once

#include <stdio.h>

#include <functional>

namespace gofl::cli {

struct FftProblem {
  std::function<void()> restore;  // puts the input back (c2r may overwrite it); outside the timed call
  std::function<int()> call;      // one execute; 0. Empty when FFTW is not loaded.
};

// Loads libfftw3 and libfftw3f into the global scope (the library's wrappers find them there) with
// FFTW's threads on every hardware thread when libfftw3_threads is installed, as a program that asks
// for them gets; writes "fftw LIB threads N" lines to `out` (ignored by the points reader).
void fft_load(FILE* out);
// Work of the n x n problem: 5 N log2 N with N = n^2 points, half of it for r2c and c2r.
double fft_flops(int op_id, int n);
// Bytes the problem's input and output arrays hold (each way of a GPU call).
double fft_bytes(int op_id, int n);
// The problem, planned with FFTW_MEASURE (bounded to a second) for the CPU pass, FFTW_ESTIMATE for
// the GPU pass (FFTW's plan only serves a fallback there).
FftProblem fft_problem(int op_id, int n, bool gpu_pass);

}  // namespace gofl::cli
