#include "policy/decide.h"

#include "common/table.h"
#include "policy/level.h"
#include "policy/settings.h"
#include "preload/gpu.h"

namespace gofl {

namespace {
// Until the calibrated cost model decides (--device auto), a call needs this much work before it
// goes to the GPU: about a 3700 x 3700 matrix product, where the H200 wins even with pageable
// copies and a short program does not pay the GPU start-up for small calls.
constexpr double kAutoMinFlops = 1e11;
}  // namespace

void decide(gofl_call& c) {
  const Settings& s = settings();
  c.device = GOFL_DEV_CPU;
  if (!gofl_ops[c.op].gpu_capable) { c.reason = GOFL_R_NOT_GPU_CAPABLE; return; }
  if (s.device == DeviceMode::Cpu) { c.reason = GOFL_R_FORCED_CPU; return; }
  if (gpu_lost_by_fork()) { c.reason = GOFL_R_AFTER_FORK; return; }
  // Verify mode checks every GPU-capable call, whatever its size.
  if (s.device == DeviceMode::Auto && !s.verify && (c.flops < s.threshold || c.flops < kAutoMinFlops)) {
    c.reason = GOFL_R_BELOW_THRESHOLD;
    return;
  }
  const gofl_backend* b = gpu_backend();
  if (!b) { c.reason = gpu_lost_by_fork() ? GOFL_R_AFTER_FORK : GOFL_R_NO_BACKEND; return; }
  switch (b->supports(&c)) {
    case GOFL_GPU_OK: break;
    case GOFL_GPU_INVALID_ARGS: c.reason = GOFL_R_INVALID_ARGS; return;  // the CPU library's xerbla speaks
    default: c.reason = GOFL_R_NOT_GPU_CAPABLE; return;                   // this variant stays on the CPU
  }
  uint64_t free_b = 0, total_b = 0;
  if (b->memory(&free_b, &total_b) == 0) {
    const double reserve = s.memory_reserve >= 0 ? s.memory_reserve : level_row(s.level).memory_reserve * double(total_b);
    if (double(free_b) < double(b->device_bytes(&c)) + reserve) { c.reason = GOFL_R_GPU_MEMORY; return; }
  }
  c.device = GOFL_DEV_GPU;
  c.reason = s.verify ? GOFL_R_VERIFY : (s.device == DeviceMode::Gpu ? GOFL_R_FORCED_GPU : GOFL_R_OFFLOADED);
}

}  // namespace gofl
