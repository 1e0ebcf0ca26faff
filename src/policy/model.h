// The cost model (spec section 3): predicted seconds of a call on the CPU and on the GPU, from a
// machine profile. Used by the library's decision and by `gpu-offload estimate`: one implementation.
//
//   T_cpu = flops / cpu_speed(flops)                                    (x cpu_correction)
//   T_gpu = copy_in_fixed + bytes_in / h2d + flops / gpu_speed(flops)
//           + copy_out_fixed + bytes_out / d2h                          (x gpu_correction)
//
// The corrections are the run-time learning's (policy/auto_policy.h); the model itself is
// uncorrected. An operation without a curve of its own on a device falls back, in this order:
//   1. the same routine family (the table's `family`: hemm borrows symm's curves, heevd syevd's) in
//      another precision (closest first: d<->s, z<->c, then the complex or real one of the same
//      width), scaled by the ratio of the two precisions' gemm speeds at that work (from the gemm
//      curves when both exist, else the profile's `precision` factors);
//   2. its precision's gemm speed (itself resolved through 1. when missing) times the routine's
//      `efficiency` (1.0 when the profile gives none).
#pragma once

#include <stdint.h>

#include <string>

#include "common/call.h"
#include "trace/record.h"  // the trace vocabulary: roles, residency, reasons and GPU status codes
#include "policy/profile.h"

namespace gofl {

// Bytes a call moves to the GPU (operands it reads: IN and INOUT) and back (INOUT and OUT).
struct CallBytes {
  double in = 0, out = 0;
};
CallBytes call_bytes(const gofl_call& c);

class Model {
 public:
  explicit Model(const Profile& p);

  const Profile& profile() const { return p_; }
  // Flops per second of `op` at `flops` on device d (kCpu / kGpu).
  double speed(int d, int op, double flops) const;
  double cpu_seconds(int op, double flops) const;
  double gpu_compute_seconds(int op, double flops) const;
  double gpu_seconds(int op, double flops, double bytes_in, double bytes_out) const;
  // How the speed of `op` on d is obtained: "curve", "from sgemm x 0.8", "from dpotrf x dgemm ratio", ...
  std::string explain(int d, int op) const;

 private:
  // speed(f) = curve(base_op)(f) x factor x (num_op >= 0 ? curve(num_op)(f) / curve(den_op)(f) : 1)
  struct Source {
    int base_op = -1;  // -1: no speed at all (a hand-made profile without gemm)
    double factor = 1;
    int num_op = -1, den_op = -1;
  };
  Source resolve(int d, int op, int depth) const;
  double precision_factor(int d, char p) const;

  Profile p_;
  Source src_[2][GOFL_N_OPS];
};

}  // namespace gofl
