// A calling thread's own pinned copy of a small BLAS call's operands. Where a program calls BLAS from
// many threads at once (PySCF's OpenMP loops: 16 threads, each a single-threaded dsymm of 956²), one
// GPU serves one call at a time, and a call's copies from pageable memory, made by its own thread
// while the program's other threads hold the cores, held the GPU for most of the call (copy-in at
// about 3 GB/s on the H100 host). Staged, the thread copies the call's inputs into its own pinned
// buffer before it takes the GPU; the DMA reads them there at the link's rate; the outputs come back
// into the same buffer and the thread writes them into the program's memory after it gave the GPU
// back. Many threads' host copies then run at once, beside one GPU call. With the line's holder
// serving waiting calls (gpu_line.h), the holder runs a staged call from its stage, and the call's
// own thread writes the outputs when it wakes: the GPU is then held for the DMAs and the computation
// alone, from one call to the next, without a woken thread in between.
//
// Only the program's own operand ranges are staged (the call's operands: pointer and extent). The
// engine (engine_copies.cpp) serves an upload from the stage when a staged input holds its whole
// host span, and defers a download when a staged output does; anything else goes the usual way,
// after the deferred writes made so far. Nothing reaches the program's memory before finish(ok).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/call.h"
#include "cuda/host_view.h"
#include "trace/record.h"  // gofl_role

namespace gofl {
namespace cuda {

class ThreadStage {
 public:
  // The calling thread's stage. Its pinned buffer goes to a list for later threads when the thread
  // ends (no CUDA call then).
  static ThreadStage& mine();
  // Copies the inputs of `c` (operands GOFL_IN and GOFL_INOUT) into pinned memory and sets aside room
  // for its outputs (GOFL_OUT, GOFL_INOUT), when their extents sum to at most `cap` bytes and each is
  // known. Needs the engine's context current (pinned memory is allocated here, once per thread and
  // size). False: nothing staged (too large, nothing to stage, no pinned memory).
  bool stage(const gofl_call& c, size_t cap);
  // The stage that holds call `c`'s operands, else null: this thread's, or, when the thread that
  // holds the GPU runs a waiting call for it (GPU_OFFLOAD_LINE_SERVES), that call's thread's.
  static ThreadStage* for_call(const gofl_call* c);

  // The pinned copy of host bytes [host, host + bytes) when one staged input holds them all, else null.
  const char* input(const char* host, size_t bytes) const;
  // Where `packed` bytes of an output whose host span is [host, host + span) go in pinned memory: the
  // staged output that holds the span, at the span's offset; null when none holds it, or when that
  // room overlaps a write already deferred.
  char* output(const char* host, size_t span, size_t packed) const;
  // The packed bytes at `pinned` go into host view v at finish().
  void defer(const HostView& v, const char* pinned);
  // Whether a deferred write touches host bytes [host, host + bytes).
  bool pending(const char* host, size_t bytes) const;
  // Writes the deferred outputs now, in order (before a write that does not go through the stage);
  // true when it wrote any.
  bool flush();
  // The call is over: ok writes the deferred outputs into the program's memory, otherwise they are
  // dropped. The stage is free again. Returns the seconds spent writing; `used` (may be null):
  // whether an upload was served from the stage or a download deferred into it.
  double finish(const gofl_call* c, bool ok, bool* used = nullptr);

  ~ThreadStage();

 private:
  ThreadStage() = default;
  struct Range {
    const char* host;
    size_t bytes;
    char* pinned;
    bool out;
  };
  struct Write {
    HostView v;
    const char* pinned;
  };
  const gofl_call* call_ = nullptr;  // the staged call, null when none
  mutable bool used_ = false;         // the engine copied from or into the stage for call_
  std::vector<Range> ranges_;
  std::vector<Write> writes_;
  char* buf_ = nullptr;  // pinned
  size_t cap_ = 0;
};

}  // namespace cuda
}  // namespace gofl
