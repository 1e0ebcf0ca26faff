// The library's side of policy/history.h: which program this process is, what its earlier runs
// gained from the GPU (read once, when --device auto makes its first decision), and this run's gain,
// recorded at exit.
#pragma once

#include <string>

#include "policy/history.h"

namespace gofl {

// The latest earlier runs of this program (nothing when the history is off or unreadable).
ProgramHistory earlier_runs();
// At exit: this run's gain, when --device auto decided calls in this process (not in a forked child:
// a worker is no run of the program).
void record_this_run();
// For the summary: "started at once: the last 3 runs of this program gained 12 s", or empty.
std::string history_summary_phrase();

}  // namespace gofl
