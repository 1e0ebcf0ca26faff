// Where the time around the LAPACK calls goes: converting operands before and after them. NumPy
// converts through ?copy calls (one per row, measured like any call), and between those copies and
// the LAPACK call outside any intercepted call. Only NumPy's and SciPy's own ?copy calls
// (converting_module) are conversions: a Fortran or C program's own copies are its work, and so is
// the time before a LAPACK call that no such copy precedes (scikit-learn's kernel, a solver's loop).
#pragma once

#include <stdint.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gofl::cli {

// A thread's top-level call as the conversion account needs it (no nested call, no workspace query).
struct TimedCall {
  uint32_t tid = 0;
  uint64_t t_start_ns = 0, duration_ns = 0;
  uint64_t order = 0;  // file position: ties in start time keep file order
  uint16_t op = 0;
  double in_bytes = 0;  // the operand bytes the call reads
  const std::string* module = nullptr;  // the calling module's path ("" when unknown), owned by the trace reader
  bool after_counted = false;  // counted calls came between the thread's previous record and this one
};

// Top-level calls counted below the threshold (GOFL_REC_COUNTED) from one site: no place in time.
struct CountedCalls {
  uint16_t op = 0;
  const std::string* module = nullptr;  // as in TimedCall
  uint64_t calls = 0, ns = 0;           // ns: estimated
};

// The LAPACK calls of one operation from one calling module, and the converting next to them.
struct AroundLapack {
  uint64_t calls = 0, in_call_ns = 0;
  uint64_t copies = 0, copy_ns = 0;  // the ?copy runs right before and after: calls, and their time
  uint64_t gap_ns = 0;               // outside any intercepted call, between the copies and each call (capped)
  uint64_t beyond_cap_ns = 0;        // the rest of the time before the calls: the program's own work
  std::map<std::string, uint64_t> copiers;  // module of those ?copy calls -> ns
  uint64_t conversion_ns() const { return copy_ns + gap_ns; }
};

struct Conversions {
  std::map<std::pair<int, std::string>, AroundLapack> around;  // (LAPACK op, calling module)
  uint64_t copies = 0, copy_ns = 0;  // every top-level converting ?copy call, next to a LAPACK call or not
  uint64_t program_ns = 0;           // the traced processes' time: start to their last call's end
  AroundLapack total() const;        // the sum over `around` (copiers merged)
};

// Adds one process's calls (any order) to `c`. A run of converting ?copy calls on a thread (no other
// intercepted call between them) costs its calls' time; a run belongs to the next LAPACK call on the
// thread when it comes before it, else, being the first run after one, to that call (NumPy's copies
// back). The gap before a LAPACK call right after such a run is the time since the run ended: the
// caller's checks and copies, counted up to kConversionNsPerByte of the call's input bytes, since
// whatever else the program did is there too; a gap after anything else is the program's own work,
// and one across counted calls is not known. Counted calls have no order: the LAPACK ones join their
// rows, and a module's converting copies are shared among that module's rows by their calls.
void account_conversions(std::vector<TimedCall>& calls, const std::vector<CountedCalls>& counted, Conversions& c);

// "NumPy", "SciPy", or the module's file name.
std::string library_label(const std::string& module_path);

}  // namespace gofl::cli
