// The level (1-10): how much predicted gain a call needs and how considerate the tool is towards
// other users of the GPU. One row per level; `gpu-offload help run` prints this table.
#pragma once

namespace gofl {

struct LevelRow {
  int level;
  double required_speedup;     // offload if T_cpu >= this x T_gpu
  double busy_limit;           // back off when other programs load the GPU above this fraction
  double memory_reserve;       // fraction of GPU memory always left free
  double start_factor;         // start the GPU once missed savings reach this x its start-up cost
};

// The row for `level` (clamped to 1..10).
const LevelRow& level_row(int level);

}  // namespace gofl
