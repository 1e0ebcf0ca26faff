// Whether one GPU call is split over several GPUs (cuda/split.h): the cost model's answer. With G
// GPUs each link carries 1/G of the copies and each GPU does 1/G of the work, and the first split
// call also starts the engines on the G - 1 other GPUs:
//
//   T_split(G) = h2d_fixed + bytes_in / (G h2d) + flops / (G gpu_speed(flops)) + d2h_fixed
//                + bytes_out / (G d2h) + (engines started ? 0 : (G - 1) split_startup_s)
//
// and a call is split when T_split(G) < T_gpu (one GPU, copies included). Where the profile holds a
// curve measured for the operation on G GPUs (`split OP G ...`, written by calibrate), the call's time
// is its work over that curve's speed (plus the start) instead of the formula. With one usable GPU it
// never is: nothing is shared, and the engines only add their own start and tiling.
#pragma once

#include "policy/model.h"

namespace gofl {

// Whether the split engines have a routine for `op` (the table's split column, which cuda/split.h
// registers), for `estimate`, which has no backend to ask. The
// library asks the backend itself, which also knows the variants it refuses.
bool split_routine(int op);

double split_seconds(const Model& m, int op, double flops, double bytes_in, double bytes_out, int gpus,
                     bool engines_started);
bool split_pays(const Model& m, int op, double flops, double bytes_in, double bytes_out, int gpus, bool engines_started);

}  // namespace gofl
