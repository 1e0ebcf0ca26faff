// Where a top-level, non-query call runs: sets call.device and call.reason.
#pragma once

#include "common/call.h"

namespace gofl {

void decide(gofl_call& c);

}  // namespace gofl
