// What the generated wrappers (src/generated/wrappers.cpp) need: nothing else is included there.
// Keep everything on the fast path inline: a call below the threshold pays a few loads and a compare.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <atomic>
#include <complex>

#include "common/call.h"
#include "common/cblas.h"
#include "common/table.h"
#include "generated/descs.h"  // the typed descriptor a wrapper builds for a routine with a GPU body
#include "preload/copy_split.h"  // ?copy wrappers split large strided copies
#include "preload/counted.h"     // calls below the threshold, counted while calls are recorded
#include "trace/record.h"  // the flags and roles a wrapper sets

#define GOFL_EXPORT __attribute__((visibility("default")))

// gfortran (>= 8) passes hidden character lengths as size_t; C callers pass nothing, so the value
// is forwarded untouched and never read.
typedef size_t gofl_strlen;

namespace gofl {

// Calls whose estimated flops are below this take the fast path straight to the CPU library.
// -1 until settings are read (so early calls take the slow path, which initialises), then the
// decision threshold, +inf when nothing is traced and everything stays on the CPU.
extern double g_fast_limit;

// The real functions behind a symbol and the callers each serves: every caller when the global
// scope defines it (lo 0, span all), else the code of a module whose own libraries define it (the
// dynamic linker's rule: global scope first, then the caller's own dependencies). Published
// entries are never changed or freed; one with a slot more replaces an entry. Callers' own slots
// come first: once a global slot is there it serves everyone else, so nothing is added after it.
struct RealSlot {
  uintptr_t lo, span;
  void* fn;
};
struct RealEntry {
  uint32_t n;
  RealSlot slot[];  // n (at least 1) of them, allocated with the entry (GCC's flexible array member)
};
// The function cached for `caller` in `e`, or null. A slot never holds null (the resolver exits
// first, as ld.so does, when no function exists): told to the compiler, so that the wrappers'
// fast path does not test the answer again.
inline void* cached_fn(const RealEntry* e, const void* caller) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(caller);
  if (__builtin_expect(a - e->slot[0].lo < e->slot[0].span, 1)) {
    void* const fn = e->slot[0].fn;
    if (fn == nullptr) __builtin_unreachable();
    return fn;
  }
  for (uint32_t i = 1; i < e->n; ++i)
    if (a - e->slot[i].lo < e->slot[i].span) return e->slot[i].fn;
  return nullptr;
}

extern std::atomic<const RealEntry*> g_real[GOFL_N_SYMS];
// The application's call site, handed from a wrapper to its out-of-line slow path.
extern __thread const void* t_site __attribute__((tls_model("initial-exec")));
// Finds the real function for `sym` as seen from `caller`, caching it; never returns (exits like
// ld.so) when none exists.
[[gnu::cold, gnu::noinline]] void* resolve_real(int sym, const void* caller);
// The same for a function outside the BLAS/LAPACK symbol table (FFTW's), cached in `entry`.
[[gnu::cold, gnu::noinline]] void* resolve_real_in(std::atomic<const RealEntry*>& entry, const char* name,
                                                   const void* caller);

// The real function cached for `caller`, or null (not yet found for it).
inline void* cached_real_in(const std::atomic<const RealEntry*>& entry, const void* caller) {
  const RealEntry* e = entry.load(std::memory_order_acquire);
  return __builtin_expect(e != nullptr, 1) ? cached_fn(e, caller) : nullptr;
}
inline void* cached_real(int sym, const void* caller) { return cached_real_in(g_real[sym], caller); }

inline void* real_fn(int sym, const void* caller) {
  void* const fn = cached_real(sym, caller);
  return __builtin_expect(fn != nullptr, 1) ? fn : resolve_real(sym, caller);
}
// real_fn for a function outside the symbol table (FFTW's), with its own entry.
inline void* real_fn_in(std::atomic<const RealEntry*>& entry, const char* name, const void* caller) {
  void* const fn = cached_real_in(entry, caller);
  return __builtin_expect(fn != nullptr, 1) ? fn : resolve_real_in(entry, name, caller);
}

// Dispatcher: enter_cpu_must_run() describes and decides the call (running it on the GPU when that is
// chosen) and returns true when the CPU library must run it; leave() records it.
bool enter_cpu_must_run(gofl_call& c);
void leave(gofl_call& c);

inline char up(char c) { return (c >= 'a' && c <= 'z') ? char(c - 32) : c; }
inline bool isN(char c) { return up(c) == 'N'; }
inline bool isL(char c) { return up(c) == 'L'; }
inline bool isU(char c) { return up(c) == 'U'; }
inline bool isV(char c) { return up(c) == 'V'; }

// Elements a rows x cols matrix with leading dimension ld spans (column-major unless row_major).
inline int64_t mat_extent(bool row_major, int64_t rows, int64_t cols, int64_t ld) {
  if (rows <= 0 || cols <= 0 || ld <= 0) return 0;
  return row_major ? ld * (rows - 1) + cols : ld * (cols - 1) + rows;
}
inline int64_t vec_extent(int64_t len, int64_t inc) {
  if (len <= 0) return 0;
  return 1 + (len - 1) * (inc < 0 ? -inc : inc);
}

// A call's description, built only on the slow path.
struct Call : gofl_call {
  Call(int s, double f, const void* caller) : gofl_call() {
    sym = uint16_t(s);
    op = gofl_syms[s].op;
    flops = f;
    site = caller;
    if (gofl_syms[s].ilp64) flags |= GOFL_F_ILP64;
  }
  void set_dims(int64_t a, int64_t b, int64_t c) { dims[0] = a; dims[1] = b; dims[2] = c; }
  // The call's descriptor (generated/descs.h), which lives in the wrapper's frame as long as the call.
  template <class D> void set_desc(const D& d) {
    desc = &d;
    desc_size = uint32_t(sizeof(D));
  }
  // The byte offset of a field of the descriptor set_desc() was given.
  template <class F> int field_of(const F& field) const {
    return int(reinterpret_cast<const char*>(&field) - static_cast<const char*>(desc));
  }
  void add_operand(const void* p, int64_t elems, size_t elem_size, int role, int field) {
    if (n_operands >= GOFL_MAX_OPERANDS) return;
    operands[n_operands++] = gofl_call_operand{p, elems < 0 ? 0 : elems, uint32_t(elem_size), uint16_t(role), int16_t(field)};
  }
  void add_int_output(int field) {
    if (n_int_outputs < GOFL_MAX_INT_OUTPUTS) int_outputs[n_int_outputs++] = int16_t(field);
  }
};

}  // namespace gofl

using gofl::isL;
using gofl::isN;
using gofl::isU;
using gofl::isV;
using gofl::up;
