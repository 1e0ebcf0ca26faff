#pragma once

#include "common/call.h"

namespace gofl {
// Remember where this thread's last top-level call ran (gpu_offload_last_call).
void note_last_call(const gofl_call& c);
// Remember why this thread's GPU attempt just failed ("CUDA error 700 at cusolverDnXgeqrf"), for
// gpu_offload_last_call_failure; note_last_call clears it for a call that did not fail.
void note_last_failure(const char* text);
}  // namespace gofl
