#include "fftw/plan_table.h"

#include <pthread.h>
#include <stdint.h>

#include <atomic>
#include <unordered_map>

namespace gofl::fftw {
namespace {

struct Table {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  std::unordered_map<const void*, PlanInfo> plans;  // nodes never move, so PlanInfo pointers stay valid
};

Table& table() {
  // Never destroyed: programs destroy plans from their own exit handlers, after our destructors.
  static Table* t = [] {
    auto* tb = new Table;
    // A child forked while another thread held the lock must still be able to plan.
    pthread_atfork([] { pthread_mutex_lock(&table().mu); }, [] { pthread_mutex_unlock(&table().mu); },
                   [] { pthread_mutex_init(&table().mu, nullptr); });
    return tb;
  }();
  return *t;
}

// Bumped, under the lock, by every change to the table: a thread's cached answer is good only while
// the generation it was read at is still current. Starts at 1 so that empty cache entries never match.
std::atomic<uint64_t> g_generation{1};

struct CacheEntry {
  const void* plan;
  uint64_t generation;
  const PlanInfo* info;  // nullptr caches "not ours" too
};
constexpr unsigned kCacheEntries = 4;  // a forward and backward pair, times two, without a lock
__thread CacheEntry t_cache[kCacheEntries] __attribute__((tls_model("initial-exec")));
__thread unsigned t_cache_next __attribute__((tls_model("initial-exec")));

}  // namespace

void plan_remember(const void* plan, const PlanInfo& info) {
  Table& t = table();
  pthread_mutex_lock(&t.mu);
  t.plans[plan] = info;
  g_generation.fetch_add(1, std::memory_order_release);
  pthread_mutex_unlock(&t.mu);
}

void plan_forget(const void* plan) {
  Table& t = table();
  pthread_mutex_lock(&t.mu);
  t.plans.erase(plan);
  // Even for a plan we never saw: a thread may have cached "not ours" for this address.
  g_generation.fetch_add(1, std::memory_order_release);
  pthread_mutex_unlock(&t.mu);
}

const PlanInfo* plan_lookup(const void* plan) {
  const uint64_t now = g_generation.load(std::memory_order_acquire);
  for (const CacheEntry& e : t_cache)
    if (e.plan == plan && e.generation == now) return e.info;
  Table& t = table();
  pthread_mutex_lock(&t.mu);
  auto it = t.plans.find(plan);
  const PlanInfo* info = it == t.plans.end() ? nullptr : &it->second;
  const uint64_t generation = g_generation.load(std::memory_order_relaxed);
  pthread_mutex_unlock(&t.mu);
  t_cache[t_cache_next++ % kCacheEntries] = CacheEntry{plan, generation, info};
  return info;
}

}  // namespace gofl::fftw
