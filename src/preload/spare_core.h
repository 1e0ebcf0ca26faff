// Sparing a core: while the GPU's one-time work runs beside the program (a start beside
// the calls, warm-ups: driver and CUDA-library work on a thread of ours), a CPU call whose library
// would keep every core busy runs with one thread fewer, and the library's count is put back when
// the call returns.
//
// Why: on the GPU test machine (H200, 16-core host, kernel built PREEMPT_NONE) a thread inside the CUDA
// driver is not preempted, whatever its priority; the OpenBLAS thread that shares its core falls behind and
// the other fifteen wait for it at every barrier. Beside a thread making CUDA first calls, an OpenBLAS
// dgetrf of n = 512 took up to 76 ms at nice 19 (40 ms under SCHED_IDLE) instead of 3.4; with 15 threads of
// 16 cores none was slower, and 15 threads alone were as fast as 16 (3.04 against 3.35 ms median;
// bench/probes/first_use_probe.cpp cpu). The sweep's CPU calls beside warm-ups took 10-100x their time.
//
// What is touched: only OpenBLAS's thread count (openblas_set_num_threads in the naming scheme of
// the call's symbol: plain, scipy_, scipy_...64_, ...64_), found in the scope of the library that
// defines the call's real function. Only for a top-level call that runs on the CPU, only when that
// library would use at least as many threads as the process has cores (and at least 3), and only
// while the work beside goes on. The count is put back after the call unless the program changed it
// meanwhile (then the program's wins). Calls of several threads share one lowering; a fork child
// gets the program's count back at its first call. Only OpenBLAS's pthreads build: in an OpenMP
// build the count is the calling thread's OpenMP setting and lowering it frees per-thread buffers.
// Other libraries (reference BLAS, MKL, BLIS) are left as they are. GPU_OFFLOAD_SPARE_CORE=off
// (config key spare_core) turns it off.
#pragma once

#include <stdint.h>

#include "common/call.h"

namespace gofl {

// A call that runs with a core spared (lib >= 0), to be given back after it.
struct SparedCore {
  int lib = -1;             // the library whose count was lowered
  int program_threads = 0;  // its count before
  int call_threads = 0;     // the count the call runs with
};

// The cores this process may run on (its affinity mask), read once.
int process_cores();

// The resolver found `real_fn` for a symbol whose names follow `scheme` (gofl_scheme): its library's
// thread controls are looked up now (the loader's lock is taken here, never in a call).
void spare_core_note(const void* real_fn, int scheme);
// Before a top-level CPU call (preload/dispatch.cpp): spares a core when that is due (see the top).
SparedCore spare_core_for(const gofl_call& c);
// The same for a noted real function: the part the tests drive with a real OpenBLAS.
SparedCore spare_core_in(const void* real_fn);
// After the call: the last of the spared calls running puts the program's count back, unless the
// program set another meanwhile (that one stands; see spare_core_check).
void give_core_back(const SparedCore& s);
// At a top-level call: where the program set a count during spared calls and it has since come back
// to the lowered one (a save and restore around them), the program's count is put back. An atomic
// read when nothing is due.
void spare_core_check();

// For the summary: calls that ran with a core spared, and the counts of the latest.
void spared_core_counts(uint64_t* calls, int* program_threads, int* call_threads);
void spare_core_fork_child();

}  // namespace gofl
