// Verify mode (--verify): every GPU-capable call runs on both devices. The GPU writes into private
// copies of the outputs first; then the CPU library runs the call on the program's buffers (so the
// program always receives the CPU result); then the two are compared.
#pragma once

#include "common/call.h"

namespace gofl {

// Run `c` on the GPU into private outputs (kept in c.verify until verify_compare); true when the GPU
// ran it (false: it was busy or the attempt failed, c.gpu_status says why).
bool verify_gpu_first(gofl_call& c);
// After the CPU run: compare, set c.verify_error and GOFL_F_VERIFY_MISMATCH, free the copies.
// Returns true when a mismatch was found.
bool verify_compare(gofl_call& c);

// Calls compared so far in this process (a call whose GPU run failed or found the GPU busy is not),
// and the reset of a forked child.
uint64_t verify_checked_calls();
void verify_reset();
// Tolerance relative to the largest value: 2e-3 for single, 1e-8 for double precision.
double verify_tolerance(const gofl_call& c);

}  // namespace gofl
