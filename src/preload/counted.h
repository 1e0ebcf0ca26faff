// Calls below the work threshold while calls are recorded (--summary, --trace): counted, not
// described. Describing a call (enter/leave, a trace record, the summary's counters) costs about
// 0.1 us; a program making millions of tiny calls (dcopy of 18 elements, 60-point FFTs) would pay
// more for the recording than for the calls. A counted call costs a lookup in its thread's table,
// two counters and the nesting depth; a sample of each key's calls (the first, then one in 16,
// later one in 256) is timed, and the key's time is estimated from those. The first
// kDescribedPerKey calls of each key are still described one by one, so that a program with few
// calls is recorded exactly as before.
//
// Key: operation, exported symbol, call site, size class (gofl_size_class) and kind (nested, query,
// row-major). Each thread has its own table (no lock, no shared cache line); tables are never freed,
// so the counts of finished threads are still there at exit, when counted_snapshot() merges them.
#pragma once

#include <stdint.h>

#include <atomic>
#include <vector>

#include "common/clock.h"
#include "preload/call_depth.h"
#include "trace/record.h"

namespace gofl {

// Calls with less work than this are counted while calls are recorded: the decision threshold. -1
// (nothing counted) when nothing is recorded, when every call must be described (--device gpu,
// --verify) and from the exit's snapshot on (later calls are described one by one).
extern double g_count_limit;

constexpr uint32_t kDescribedPerKey = 64;  // calls of each key described before it is counted
// Which counted calls are timed: those whose count (from 0) has these bits clear: one in 16 of a key's
// first 4096, then one in 256 (a clock read costs about 35 ns on a 2-core VM: 0.3 ns a call).
constexpr uint64_t kCountSampleEarly = 15, kCountSampleLate = 255, kCountEarlyCalls = 4096;
constexpr uint32_t kCountSlots = 2048;     // keys per thread (a power of two); beyond 3/4 full, new keys are described

// Bits of a key's kind.
enum : uint64_t { kCountNested = 1, kCountQuery = 2, kCountRowMajor = 4 };

// One key's counts. Written by its thread only; read at exit (and by the fork child) from any thread,
// hence atomics (relaxed: plain loads and stores on x86). `key` is published last.
struct CountEntry {
  std::atomic<uint64_t> key;       // count_key(); 0: a free slot
  std::atomic<uint64_t> site;
  uint32_t described;              // calls of this key described so far (at most kDescribedPerKey)
  uint8_t reason;                  // gofl_reason the calls' own records would give
  std::atomic<uint64_t> calls, timed, timed_ns, first_ns, last_ns;
  std::atomic<double> flops;
  int64_t dims[3];                 // of the first call counted
};

struct CountTable {
  CountTable* next;                // every thread's table, newest first (never unlinked)
  uint32_t used;                   // slots taken (the owner's count)
  CountEntry slot[kCountSlots];
};

// This thread's table (null until its first counted call) and whether a top-level call was counted
// on it since its last described top-level call (enter_cpu_must_run() turns that into GOFL_F_AFTER_COUNTED).
extern __thread CountTable* t_counts __attribute__((tls_model("initial-exec")));
extern __thread bool t_counted_last __attribute__((tls_model("initial-exec")));

// The key of a call (the nesting bit is added by count_entry).
inline uint64_t count_key(unsigned op, unsigned sym, uint8_t size_class, bool query, bool row_major) {
  return (uint64_t(1) << 63) | uint64_t(op) | (uint64_t(sym) << 16) | (uint64_t(size_class) << 32) |
         (((query ? uint64_t(kCountQuery) : 0) | (row_major ? uint64_t(kCountRowMajor) : 0)) << 40);
}

inline uint32_t count_slot_of(uint64_t site, uint64_t key) {
  return uint32_t(((site ^ (key * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull) >> 53) & (kCountSlots - 1);
}

// Out of line: the table's first use, a key found further along or new, a key still described.
CountEntry* count_entry_slow(const void* site, uint64_t key, int64_t d0, int64_t d1, int64_t d2);

// The entry counting this call when it is in its home slot and past its described calls, else null
// (count_entry then looks further). Makes no call.
[[gnu::always_inline]] inline CountEntry* count_entry_found(const void* site, uint64_t& key) {
  if (t_call_depth > 0) key |= kCountNested << 40;
  CountTable* const t = t_counts;
  if (__builtin_expect(t != nullptr, 1)) {
    CountEntry& e = t->slot[count_slot_of(uint64_t(site), key)];
    if (__builtin_expect(e.key.load(std::memory_order_relaxed) == key &&
                             e.site.load(std::memory_order_relaxed) == uint64_t(site) &&
                             e.described >= kDescribedPerKey, 1))
      return &e;
  }
  return nullptr;
}

// The entry counting this call, or null: describe it (a key's first calls, a full table).
[[gnu::always_inline]] inline CountEntry* count_entry(const void* site, uint64_t key, int64_t d0, int64_t d1, int64_t d2) {
  if (CountEntry* const e = count_entry_found(site, key)) return e;
  return count_entry_slow(site, key, d0, d1, d2);
}

void count_timed(CountEntry& e, uint64_t t0);

// Whether the call numbered n (from 0) of its key is one of the timed sample.
[[gnu::always_inline]] inline bool count_sampled(uint64_t n) {
  return (n & (n < kCountEarlyCalls ? kCountSampleEarly : kCountSampleLate)) == 0;
}
// The count and the work of one more call of `e`.
[[gnu::always_inline]] inline void count_add(CountEntry& e, uint64_t n, double flops) {
  if (t_call_depth == 0) t_counted_last = true;
  e.calls.store(n + 1, std::memory_order_relaxed);
  if (flops != 0) e.flops.store(e.flops.load(std::memory_order_relaxed) + flops, std::memory_order_relaxed);
}

// Around the real call: the depth (calls made inside it count as nested), the count, the work, and
// the clock for a sample. Returns the start time of a timed call, else 0.
[[gnu::always_inline]] inline uint64_t count_begin(CountEntry& e, double flops) {
  const uint64_t n = e.calls.load(std::memory_order_relaxed);
  count_add(e, n, flops);
  ++t_call_depth;
  return __builtin_expect(count_sampled(n), 0) ? clock_ns() : 0;
}
[[gnu::always_inline]] inline void count_end(CountEntry& e, uint64_t t0) {
  --t_call_depth;
  if (__builtin_expect(t0 != 0, 0)) count_timed(e, t0);
}
// For a routine that calls no intercepted routine (BLAS): counts the call and returns true when it is
// not one of the timed sample. Nothing is then left to do after the call (no depth to restore), so
// the wrapper jumps to the real function; else count_begin/count_end time it.
[[gnu::always_inline]] inline bool count_untimed_leaf(CountEntry& e, double flops) {
  const uint64_t n = e.calls.load(std::memory_order_relaxed);
  if (__builtin_expect(count_sampled(n), 0)) return false;
  count_add(e, n, flops);
  return true;
}

// Every key's counts, summed over the threads (those that ended included), as trace records;
// estimated_ns filled in. Keys with no counted call are left out.
std::vector<gofl_counted_record> counted_snapshot();
// From now on nothing is counted (the exit's snapshot is being taken: later calls are described).
void counted_stop();
// In a fork child: every table starts empty (the parent's calls are the parent's).
void counted_fork_child();

}  // namespace gofl
