// The line for the GPU: one call of this process holds it at a time, and calls of other threads wait
// for it in the order they came. A plain mutex let a call that had just arrived take the GPU ahead of
// one that had waited, so under many threads (PySCF's 16 OpenMP threads, each calling a 956² dsymm)
// some calls waited out their whole bound and then ran on the CPU anyway. Here the GPU goes from the
// call that gives it back straight to the first in line, and a call that would still be waiting when
// its bound runs out (the calls ahead of it times the mean hold) does not wait at all.
//
// A call handed the GPU has been woken, and with every core busy it waits for one before it runs,
// while the GPU idles: 1-2 ms a handover on the 2-core development machine with holds of 2 ms
// (bench/probes/line_handoff.cpp). The tally counts that time (in PySCF C16H34 on an H100 host the
// line was held 36.2 s by 16,928 calls whose copies and computation took 22.4 s). Letting a running
// call take the GPU meanwhile was tried: the thread that had just given it back took it again and
// again, and the woken calls ran out their bounds (16 threads with no work between calls: 52 holds
// a second against 501).
//
// So a waiting call may leave its GPU work to the line: the call that gives the GPU back runs the
// work of the first calls in line itself, on its own thread, which is running already (at most
// `serves` of them in a row, then it hands the GPU over as above). The GPU goes from one call to the
// next without waiting for a woken thread to get a core; the served call's thread only has to wake up
// to find its call done, while the GPU already runs the next. Off unless GPU_OFFLOAD_LINE_SERVES says
// how many: what it gains on a GPU host is not measured yet.
#pragma once

#include <pthread.h>
#include <stdint.h>

namespace gofl {

class GpuLine {
 public:
  constexpr GpuLine() = default;  // constant-initialised: usable by calls made before any constructor ran
  GpuLine(const GpuLine&) = delete;
  GpuLine& operator=(const GpuLine&) = delete;

  // At once, when no call holds the GPU and none waits.
  bool try_take();
  // In line until `deadline_ns` (CLOCK_MONOTONIC); false when the deadline passed first, or at once
  // when the calls ahead are expected to hold the GPU beyond it.
  bool take_by(uint64_t deadline_ns) { return take_or_serve_by(deadline_ns, nullptr) == Took::Held; }

  // A waiting call's GPU work, which the call giving the GPU back may run for it: `run(arg)` runs the
  // call on the GPU (its status stays in `arg`), returns whether its hold counts towards the mean, and
  // throws nothing. `expected_ns`: its predicted hold (0: not known).
  struct Work {
    bool (*run)(void* arg);
    void* arg;
    uint64_t expected_ns;
  };
  enum class Took {
    No,      // the deadline came first (or the line was too long): the call did not run on the GPU
    Held,    // this call holds the GPU: it runs itself and gives the GPU back
    Served,  // another call's thread ran `work` while holding the GPU; this call does not hold it
  };
  // Whether a call with this deadline would not join the line now (take_by would return false at
  // once: the deadline has passed, or the calls ahead are expected to hold the GPU beyond it); such a
  // call counts as one that did not wait. False while the GPU is free. For a call that has work to do
  // before it joins (copying its operands into pinned memory) that would be wasted.
  bool too_long_for(uint64_t deadline_ns);
  // As take_by, and with `work` (may be null) the holder may run it instead of handing the GPU over.
  // Once the holder has begun it, the deadline no longer counts: the call waits for it to end.
  Took take_or_serve_by(uint64_t deadline_ns, Work* work);

  // Hands the GPU to the first call in line, if any, after running the work of the first waiting
  // calls that left some (at most serves() in a row, and no more than 20 ms of it as they ran and
  // were predicted). `timed`: the hold counts towards the mean hold
  // (false for a hold that paid one-time set-up or spread over several GPUs: not what the next calls
  // will take). Returns the time this thread spent running other calls' work.
  uint64_t give_back(bool timed = true);
  // Calls a holder serves in a row before it hands the GPU over (0: it never serves).
  void set_serves(int n);
  int serves();
  // In a child after fork(): nobody holds the GPU, nobody waits (the parent's threads are gone).
  void reset();

  // The expected wait of a call that joined the line now: the rest of the current hold (by the
  // mean) plus the mean hold of each call ahead. 0 when the GPU is free or no hold was timed yet.
  uint64_t expected_wait_ns();
  int waiting();                      // calls in line now
  void set_mean_hold_ns(double ns);   // tests: the mean hold, as if learnt

  struct Tally {
    uint64_t holds = 0, held_ns = 0;           // calls that held the GPU, and for how long in all
    uint64_t waited = 0, waited_ns = 0;        // calls that got it after waiting in line
    uint64_t gave_up = 0, gave_up_ns = 0;      // calls whose deadline came first (their time in line)
    uint64_t not_joined = 0;                   // calls that did not wait: the line was too long
    uint64_t handover_ns = 0;                  // of the holds: from handing the GPU to a waiting call
                                               // to that call running
    uint64_t served = 0, served_ns = 0;        // of the waited calls: those whose work the holder ran
  };
  Tally tally();

 private:
  struct Waiter;
  // With m_ held: takes the GPU when nobody holds it and nobody waits.
  bool take_if_free_locked(uint64_t now);
  // With m_ held: counts the hold that ends at `now`.
  void end_hold_locked(uint64_t now, bool timed);
  Waiter* pop_first_locked();
  uint64_t expected_wait_locked(uint64_t now) const;

  pthread_mutex_t m_ = PTHREAD_MUTEX_INITIALIZER;
  bool held_ = false;
  uint64_t held_since_ = 0;
  double mean_hold_ns_ = 0;  // moving mean of the latest holds
  Waiter* first_ = nullptr;  // the line, oldest first
  Waiter* last_ = nullptr;
  int waiting_ = 0;
  int serves_ = 0;
  Tally tally_;
};

}  // namespace gofl
