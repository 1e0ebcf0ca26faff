// Writes this process's trace file: one file per process, created exclusively, mapped shared so
// that every record is in the file as soon as it is made (a killed process loses none), records
// stored under one lock (correct with many threads), no descriptor kept open, a new file in a
// forked child.
#pragma once

#include <stddef.h>
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
// `gpu`: the GPU it runs on (ok); `message`: why it cannot be used (not ok).
// `tid`: the thread whose call began it (a start beside the calls ends on a thread of its own).
void trace_gpu_start(uint64_t t_start_ns, uint64_t duration_ns, bool ok, const char* message,
                     const gofl_start_gpu* gpu = nullptr, uint32_t tid = 0);
// Append the one-time costs of the start (op GOFL_SETUP_AT_START) or of a call of `op` (record.h,
// gofl_setup_record); at most GOFL_SETUP_MAX_PHASES are kept.
void trace_setup(uint16_t op, uint64_t t_ns, const gofl_setup_phase* phases, int n);
// At exit, when no start was tried: why no GPU could have been used (gpu_probe.h).
void trace_gpu_absent(const char* message);
// At exit, before trace_flush: the calls counted below the threshold (preload/counted.h), one record
// per key, each site named first.
void trace_counted(const gofl_counted_record* recs, size_t n);
// At exit: cuts the file to the records written; records made later are added one by one.
void trace_flush();
// Fork handlers: the child leaves the parent's file alone and creates a file of its own.
void trace_fork_prepare();
void trace_fork_parent();
void trace_fork_child();

}  // namespace gofl
