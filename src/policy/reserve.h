// The GPU memory always left free, one rule for both sides: the policy's memory gate
// (policy/auto_policy.cpp, gpu_takes) and the backend's eviction of kept copies
// (cuda/engine_residency.cpp, make_room). Header only: the backend has no policy library.
#pragma once

namespace gofl {

// `reserve_bytes` when it is >= 0 (GPU_OFFLOAD_MEMORY_RESERVE), else `reserve_fraction` (the
// level's, policy/level.h) of the device's `total_bytes`.
inline double gpu_memory_reserve(double reserve_bytes, double reserve_fraction, double total_bytes) {
  return reserve_bytes >= 0 ? reserve_bytes : reserve_fraction * total_bytes;
}

}  // namespace gofl
