// A call as the dispatcher describes it (common/call.h) and as the trace records it (record.h): the
// two conversions, side by side so that a field added to one is not forgotten in the other.
#pragma once

#include <stdint.h>

#include "common/call.h"
#include "trace/record.h"

namespace gofl {

// What only the end of a call knows.
struct CallEnd {
  uint32_t tid = 0;
  uint64_t duration_ns = 0;
  int64_t info = 0;                            // LAPACK info as the call returned it
  uint32_t fp_out[GOFL_MAX_OPERANDS] = {};     // fingerprints of the written operands, 0 if not written
};

// The trace record of a finished call (the dispatcher's, and the unit tests' synthetic traces).
// A workspace query records no work.
gofl_call_record record_from_call(const gofl_call& c, const CallEnd& end);

// A traced call as the model and the decision see it: operation, flags, sizes, work and operands
// (a buffer with an input fingerprint was read, one with an output fingerprint written; extents in
// bytes, no addresses). For `estimate`, `calibrate` and bench/replay_policy, which replay traces.
// `resident`: the record's gofl_record.resident (which operands a kept device copy served).
gofl_call call_from_record(const gofl_call_record& r, uint32_t resident = 0);

}  // namespace gofl
