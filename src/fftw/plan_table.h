// The plans this process made through our wrappers, by plan pointer: safe from any thread, and free of
// locks when a thread executes the same few plans again and again (the usual FFT loop).
#pragma once

#include "fftw/plan_info.h"

namespace gofl::fftw {

void plan_remember(const void* plan, const PlanInfo& info);
void plan_forget(const void* plan);
// The plan's description, or nullptr for a plan we did not see made (made before we were loaded, or
// by a creator we do not intercept). Stays valid until the plan is destroyed.
const PlanInfo* plan_lookup(const void* plan);

}  // namespace gofl::fftw
