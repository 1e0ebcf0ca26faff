#include "policy/decide.h"

#include "common/table.h"
#include "policy/settings.h"

namespace gofl {

void decide(gofl_call& c) {
  const Settings& s = settings();
  c.device = GOFL_DEV_CPU;
  if (!gofl_ops[c.op].gpu_capable) { c.reason = GOFL_R_NOT_GPU_CAPABLE; return; }
  if (s.device == DeviceMode::Cpu) { c.reason = GOFL_R_FORCED_CPU; return; }
  if (s.device == DeviceMode::Auto && c.flops < s.threshold) { c.reason = GOFL_R_BELOW_THRESHOLD; return; }
  // No GPU backend is built into this version: every GPU-capable call stays with the CPU library.
  c.reason = GOFL_R_NO_BACKEND;
}

}  // namespace gofl
