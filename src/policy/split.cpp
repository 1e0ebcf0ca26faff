#include "policy/split.h"

#include "common/table.h"

namespace gofl {

bool split_routine(int op) { return op >= 0 && op < GOFL_N_OPS && gofl_ops[op].split != GOFL_SPLIT_NONE; }

double split_seconds(const Model& m, int op, double flops, double bytes_in, double bytes_out, int gpus,
                     bool engines_started) {
  const Profile& p = m.profile();
  const double g = gpus > 1 ? double(gpus) : 1.0;
  const double start = engines_started ? 0.0 : (g - 1) * (p.split_startup_s >= 0 ? p.split_startup_s : p.gpu_startup_s);
  // Measured on this many GPUs (calibrate): the whole call's speed, copies included.
  if (auto it = p.split_curves.find({op, gpus}); it != p.split_curves.end() && flops > 0)
    return flops / it->second.at(flops) + start;
  const double copies = p.h2d.fixed_s + p.d2h.fixed_s +
                        (p.h2d.bytes_per_s > 0 ? bytes_in / (g * p.h2d.bytes_per_s) : 0.0) +
                        (p.d2h.bytes_per_s > 0 ? bytes_out / (g * p.d2h.bytes_per_s) : 0.0);
  return copies + m.gpu_compute_seconds(op, flops) / g + start;
}

bool split_pays(const Model& m, int op, double flops, double bytes_in, double bytes_out, int gpus, bool engines_started) {
  if (gpus < 2) return false;
  return split_seconds(m, op, flops, bytes_in, bytes_out, gpus, engines_started) <
         m.gpu_seconds(op, flops, bytes_in, bytes_out);
}

}  // namespace gofl
