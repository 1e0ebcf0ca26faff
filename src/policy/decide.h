// Where a top-level, non-query call runs: sets call.device and call.reason. --device auto goes
// through the cost model and the level (policy/auto_policy.h); cpu, gpu and verify are forced.
#pragma once

#include <stdint.h>

#include <string>

#include "common/call.h"

namespace gofl {

void decide(gofl_call& c);
// A top-level call has run (duration_ns on c.device): the learning and the policy's bookkeeping.
void decide_done(const gofl_call& c, uint64_t duration_ns);
// The profile in use, for the summary and the trace header. Loads it on first use; a profile that
// cannot be read or parsed is reported once on stderr and the built-in one serves.
std::string active_profile_label();
// Seconds the profile predicts for copying `bytes` to the GPU (what residency saves).
double predicted_copy_in_seconds(double bytes);
// In a forked child (pthread_atfork): the decision's lock and counters start afresh.
void decide_fork_child();
// Summary lines (each starting with two spaces): GPU start-up paid or avoided, predicted saving.
std::string decide_summary();

}  // namespace gofl
