// The clock and the sort order the C benchmark programs share: seconds on CLOCK_MONOTONIC, and
// qsort's comparison of two doubles (for medians of call times).
#pragma once
#include <time.h>

static inline double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}
