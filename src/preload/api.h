#pragma once

#include "common/call.h"

namespace gofl {
// Remember where this thread's last top-level call ran (gpu_offload_last_call).
void note_last_call(const gofl_call& c);
}  // namespace gofl
