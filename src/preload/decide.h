// Where a top-level, non-query call runs: sets call.device and call.reason. --device auto goes
// through the cost model and the level (policy/auto_policy.h) with the library's GPU; cpu, gpu and
// verify are forced. The library's glue around the policy: settings, the profile in use, the backend.
#pragma once

#include <stdint.h>

#include <string>

#include "common/call.h"
#include "policy/auto_policy.h"

namespace gofl {

void decide(gofl_call& c);
// A top-level call has run (duration_ns on c.device; line_wait_ns of it in line for the GPU behind
// other threads' calls): the learning and the policy's bookkeeping.
void decide_done(const gofl_call& c, uint64_t duration_ns, uint64_t line_wait_ns = 0);
// The profile in use, for the summary and the trace header. Loads it on first use; a profile that
// cannot be read or parsed is reported once on stderr and the built-in one serves.
std::string active_profile_label();
// Seconds the profile predicts for copying `bytes` to the GPU (what residency saves).
double predicted_copy_in_seconds(double bytes);
// In a forked child (pthread_atfork): the decision's lock and counters start afresh.
void decide_fork_child();
// --device auto without verify: calls are decided by the policy.
bool auto_mode();
// The policy, once the first call was decided by it (nullptr before, and when the device is forced).
const AutoPolicy* auto_policy_made();

}  // namespace gofl
