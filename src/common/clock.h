// Nanoseconds of a clock (CLOCK_MONOTONIC unless another is asked for): the calls' times, the trace's
// timestamps and the GPU start-up are all taken with it.
#pragma once

#include <stdint.h>
#include <time.h>

namespace gofl {

inline uint64_t clock_ns(clockid_t clk = CLOCK_MONOTONIC) {
  timespec ts;
  clock_gettime(clk, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// The same clock in seconds, for intervals the decision and the calibration measure.
inline double now_s() { return double(clock_ns()) * 1e-9; }

}  // namespace gofl
