// The CPUs this process may run on: its affinity mask (taskset, cgroups' cpusets), else the CPUs
// online. Read afresh at each call.
#pragma once

#include <sched.h>
#include <unistd.h>

namespace gofl {

inline int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? int(n) : 1;
}

}  // namespace gofl
