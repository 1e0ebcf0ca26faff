// The calibration workload (run by `gpu-offload calibrate` under the library; see
// src/cli/calibrate.cpp).
#pragma once

#include <string>

namespace gofl::cli {

struct WorkloadOptions {
  bool gpu = false;          // the pass: GPU_OFFLOAD_DEVICE is set to match by the caller
  bool quick = false;
  std::string blas;          // ':'-separated libraries to dlopen (RTLD_GLOBAL)
  std::string points_path;   // where the accepted points go (a small text file)
  std::string only;          // ','-separated routines to measure (gemm,potrf,heevd); empty: all
};

// Runs the workload; 0 when done, 3 for a GPU pass without a usable GPU (the points file says why).
// The points file has one line per fact:
//   workload cpu|gpu quick|full          blas LIB
//   startup_s S                          (GPU pass) the first call's extra time: the GPU start-up
//   canary_s S threads N                 the canary's normal time
//   point OP N FLOPS T0_NS T1_NS REPS BAD   the accepted repetitions of OP at size N started in
//                                        [T0_NS, T1_NS] (CLOCK_MONOTONIC, as the trace); BAD of
//                                        them returned info != 0
//   no_gpu REASON                        skip OP no symbol          noisy N remeasured N skipped N
//   end
int calibrate_workload(const WorkloadOptions& o);

}  // namespace gofl::cli
