// Writes this process's trace file: one file per process, created exclusively, records buffered
// under one lock (correct with many threads), a new file in a forked child.
#pragma once

#include <stdint.h>

#include "trace/record.h"

namespace gofl {

struct TraceInfo {
  int level;
  int device_mode;
  const char* profile;
};

// Start tracing into `dir` (created if missing). Nothing is opened until the first record.
void trace_configure(const char* dir, const TraceInfo& info);
bool trace_enabled();
// Append a call record; names its call site first when the site is new.
void trace_call(const gofl_call_record& rec, uint32_t resident = 0);  // resident: gofl_record.resident
// Append the record of a GPU start (or a failed attempt): at the start's end, timed by the caller.
void trace_gpu_start(uint64_t t_start_ns, uint64_t duration_ns, bool ok, const char* message);
// Write buffered records (at exit and when the buffer fills).
void trace_flush();
// Fork handlers: the child drops the parent's buffered records and opens a file of its own.
void trace_fork_prepare();
void trace_fork_parent();
void trace_fork_child();

}  // namespace gofl
