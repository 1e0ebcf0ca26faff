#include "preload/counted.h"

#include <string.h>
#include <sys/mman.h>

#include <map>
#include <tuple>

#include "common/table.h"
#include "policy/settings.h"
#include "preload/gpu.h"

namespace gofl {

double g_count_limit = -1.0;
__thread CountTable* t_counts __attribute__((tls_model("initial-exec")));
__thread bool t_counted_last __attribute__((tls_model("initial-exec")));

namespace {

// This thread could not map a table: its calls are described (not asked for memory again each call).
__thread bool t_no_table __attribute__((tls_model("initial-exec")));

// Every thread's table, newest first. Constant-initialised: usable from the first call on.
std::atomic<CountTable*> g_tables{nullptr};

// Anonymous memory: pages of slots never used are never touched, so an idle thread's table costs
// nothing but its address range.
CountTable* new_table() {
  void* m = mmap(nullptr, sizeof(CountTable), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  CountTable* t = static_cast<CountTable*>(m);
  CountTable* head = g_tables.load(std::memory_order_relaxed);
  do t->next = head;
  while (!g_tables.compare_exchange_weak(head, t, std::memory_order_release, std::memory_order_relaxed));
  return t;
}

// What the slow path would have said about a call of this key (decide.cpp's order).
uint8_t reason_of(uint64_t key) {
  const unsigned op = unsigned(key & 0xffff), kind = unsigned((key >> 40) & 0xff);
  if (kind & kCountNested) return GOFL_R_NESTED;
  if (kind & kCountQuery) return GOFL_R_QUERY;
  if (op >= GOFL_N_OPS || !gofl_ops[op].gpu_capable) return GOFL_R_NOT_GPU_CAPABLE;
  if (settings().device == DeviceMode::Cpu) return GOFL_R_FORCED_CPU;
  if (gpu_lost_by_fork()) return GOFL_R_AFTER_FORK;
  return GOFL_R_BELOW_THRESHOLD;
}

}  // namespace

CountEntry* count_entry_slow(const void* site, uint64_t key, int64_t d0, int64_t d1, int64_t d2) {
  CountTable* t = t_counts;
  if (!t) {
    if (t_no_table || !(t = t_counts = new_table())) {
      t_no_table = true;
      return nullptr;
    }
  }
  const uint64_t s = uint64_t(site);
  for (uint32_t i = count_slot_of(s, key), probes = 0; probes < kCountSlots; i = (i + 1) & (kCountSlots - 1), ++probes) {
    CountEntry& e = t->slot[i];
    const uint64_t k = e.key.load(std::memory_order_relaxed);
    if (k == key && e.site.load(std::memory_order_relaxed) == s) {
      if (e.described >= kDescribedPerKey) return &e;
      ++e.described;
      return nullptr;
    }
    if (k != 0) continue;
    if (t->used >= kCountSlots / 4 * 3) return nullptr;  // full: this key's calls are described
    ++t->used;
    e.site.store(s, std::memory_order_relaxed);
    e.reason = reason_of(key);
    e.dims[0] = d0;
    e.dims[1] = d1;
    e.dims[2] = d2;
    e.described = 1;  // this call
    e.key.store(key, std::memory_order_release);
    return nullptr;
  }
  return nullptr;
}

void count_timed(CountEntry& e, uint64_t t0) {
  const uint64_t t1 = clock_ns();
  e.timed.store(e.timed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  e.timed_ns.store(e.timed_ns.load(std::memory_order_relaxed) + (t1 - t0), std::memory_order_relaxed);
  if (e.first_ns.load(std::memory_order_relaxed) == 0) e.first_ns.store(t0, std::memory_order_relaxed);
  e.last_ns.store(t0, std::memory_order_relaxed);
}

std::vector<gofl_counted_record> counted_snapshot() {
  // (key, site) -> the record summing that key over the threads; a map keeps the output in one order.
  std::map<std::pair<uint64_t, uint64_t>, gofl_counted_record> merged;
  for (CountTable* t = g_tables.load(std::memory_order_acquire); t; t = t->next) {
    for (const CountEntry& e : t->slot) {
      const uint64_t key = e.key.load(std::memory_order_acquire);
      const uint64_t calls = e.calls.load(std::memory_order_relaxed);
      const uint64_t timed = e.timed.load(std::memory_order_relaxed);
      // A call counted but not yet timed (in progress on its thread): left for a later snapshot.
      if (key == 0 || calls == 0 || timed == 0) continue;
      const uint64_t site = e.site.load(std::memory_order_relaxed);
      gofl_counted_record& r = merged[{key, site}];
      const unsigned kind = unsigned((key >> 40) & 0xff);
      if (r.calls == 0) {
        memset(&r, 0, sizeof r);
        r.op = uint16_t(key & 0xffff);
        r.sym = uint16_t((key >> 16) & 0xffff);
        r.size_class = uint8_t((key >> 32) & 0xff);
        r.flags = ((kind & kCountNested) ? GOFL_F_NESTED : 0) | ((kind & kCountQuery) ? GOFL_F_QUERY : 0) |
                  ((kind & kCountRowMajor) ? GOFL_F_ROW_MAJOR : 0) |
                  (r.sym != GOFL_SYM_FFTW && r.sym < GOFL_N_SYMS && gofl_syms[r.sym].ilp64 ? GOFL_F_ILP64 : 0);
        r.device = GOFL_DEV_CPU;
        r.reason = e.reason;
        r.site = site;
        memcpy(r.dims, e.dims, sizeof r.dims);
        r.first_start_ns = e.first_ns.load(std::memory_order_relaxed);
      }
      r.calls += calls;
      r.timed_calls += timed;
      r.timed_ns += e.timed_ns.load(std::memory_order_relaxed);
      r.flops += (kind & kCountQuery) ? 0.0 : e.flops.load(std::memory_order_relaxed);  // a query does no work
      const uint64_t first = e.first_ns.load(std::memory_order_relaxed), last = e.last_ns.load(std::memory_order_relaxed);
      if (first && first < r.first_start_ns) r.first_start_ns = first;
      if (last > r.last_start_ns) r.last_start_ns = last;
    }
  }
  std::vector<gofl_counted_record> out;
  out.reserve(merged.size());
  for (auto& [key, r] : merged) {
    r.estimated_ns = uint64_t((unsigned __int128)r.timed_ns * r.calls / r.timed_calls);
    out.push_back(r);
  }
  return out;
}

void counted_stop() {
  const double off = -1.0;
  __atomic_store(&g_count_limit, &off, __ATOMIC_RELEASE);
}

void counted_fork_child() {
  t_counted_last = false;
  for (CountTable* t = g_tables.load(std::memory_order_acquire); t; t = t->next) {
    if (t->used == 0) continue;
    for (CountEntry& e : t->slot)
      if (e.key.load(std::memory_order_relaxed)) memset(static_cast<void*>(&e), 0, sizeof e);
    t->used = 0;
  }
}

}  // namespace gofl
