// The calibration's matrix problems (src/calibrate/workload.cpp runs them like its FFT problems,
// calibrate/fft_problem.h): an n x n problem of each BLAS/LAPACK routine family, with random
// well-conditioned inputs, called through the exported Fortran name so that the library's wrappers
// decide and time each call as in a program.
#pragma once

#include <stdint.h>

#include <functional>
#include <string>

namespace gofl::cli {

// The inputs' random numbers (xorshift): the same problems in every run.
struct Rng {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  double next() {  // uniform in [-1, 1)
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return double(s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  }
};


// A prepared call: restore() puts the inputs back (outside the timed call), call() runs it once
// and returns LAPACK's info (0 for BLAS).
struct MatrixProblem {
  std::function<void()> restore;
  std::function<int()> call;  // empty when the problem is unknown
};

// The exported name of `routine` in precision p ("dgemm_"), resolved through the global scope: the
// preloaded library's wrapper first. nullptr when no library provides it.
void* exported_fn(char p, const char* routine);

// The n x n problem of `problem` (a BLAS routine, or a LAPACK family: "gemm", "syevd") in precision p
// ('s', 'd', 'c', 'z'), calling `fn`. An unknown problem's call returns -1000.
MatrixProblem matrix_problem(char p, const std::string& problem, void* fn, int n, Rng& rng);

}  // namespace gofl::cli
