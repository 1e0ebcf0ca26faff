// Per-process counters behind --summary: calls, time and work per operation and device, and the
// reasons calls ran where they ran. Printed on stderr at exit when asked.
#pragma once

#include <vector>

#include "common/call.h"
#include "trace/record.h"

namespace gofl {

void summary_add(const gofl_call& c, uint64_t duration_ns);
// At exit: the calls counted below the threshold (counted.h's snapshot), into the same counters.
void summary_add_counted(const std::vector<gofl_counted_record>& counted);
void summary_print(int fd);
// --verify without --summary: only the line that says what verify found (silent without calls).
void summary_print_verify(int fd);
void summary_reset();
// A top-level call whose GPU attempt failed (the CPU library then ran it): `text` says how and where
// ("CUDA error 700 at cusolverDnXgeqrf"); the summary prints each operation's count and first failure.
void summary_note_gpu_failure(int op, const char* text);
// Whether this process made any intercepted call (counted while tracing, summarising or verifying).
bool summary_any_call();  // forked child: count only its own calls

}  // namespace gofl
