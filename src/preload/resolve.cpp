// Finding the function the program would have called without us, as the dynamic linker binds it:
// the global scope after us, else the calling module's own dependencies (a library it loaded with
// RTLD_LOCAL, such as NumPy's OpenBLAS), else any loaded object; never one of our wrappers. An
// answer from a module's own dependencies serves that module's calls only: two plugins with two
// private BLAS libraries each reach their own.
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sched.h>
#include <stdint.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "preload/resolve.h"
#include "preload/spare_core.h"
#include "preload/wrapper_support.h"

namespace gofl {

std::atomic<const RealEntry*> g_real[GOFL_N_SYMS];

// Defined only by libgpuoffload.so: an object exporting it is a copy of us, never the real library.
extern "C" GOFL_EXPORT const char gpu_offload_library_marker[] = "gpu-offload";

namespace {

const void* own_base() {
  static const void* base = [] {
    Dl_info di{};
    dladdr(reinterpret_cast<const void*>(&own_base), &di);
    return di.dli_fbase;
  }();
  return base;
}

// True if p lies in this library or in any other copy of it.
bool is_ours(const void* p) {
  Dl_info di{};
  if (!dladdr(p, &di)) return false;
  if (di.dli_fbase == own_base()) return true;
  if (!di.dli_fname || !*di.dli_fname) return false;
  void* h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return false;
  void* marker = dlsym(h, "gpu_offload_library_marker");
  bool ours = false;
  if (marker) {
    Dl_info mi{};
    ours = dladdr(marker, &mi) && mi.dli_fbase == di.dli_fbase;
  }
  dlclose(h);
  return ours;
}

// dlsym in `path`'s own lookup scope (the object and its dependencies), skipping our wrappers.
void* lookup_in(const char* path, const char* name) {
  if (!path || !*path) return nullptr;
  void* h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return nullptr;
  void* p = dlsym(h, name);
  dlclose(h);  // NOLOAD handle: only drops the reference it added
  return (p && !is_ours(p)) ? p : nullptr;
}

int collect_path(struct dl_phdr_info* info, size_t, void* data) {
  auto* paths = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name && info->dlpi_name[0]) paths->emplace_back(info->dlpi_name);
  return 0;
}

[[noreturn]] void missing(const char* name, const void* caller) {
  Dl_info di{};
  const char* from = (caller && dladdr(caller, &di) && di.dli_fname && *di.dli_fname) ? di.dli_fname : "the program";
  // The same words and exit status as the dynamic linker's own unresolved-symbol error.
  fprintf(stderr,
          "gpu-offload: symbol lookup error: %s: undefined symbol: %s\n"
          "gpu-offload: no library loaded in this process defines %s; link or load the library that "
          "provides it (BLAS, LAPACK or FFTW): gpu-offload forwards calls, it does not implement them\n",
          from, name, name);
  fflush(stderr);
  _exit(127);
}

}  // namespace

namespace {

struct Found {
  void* fn = nullptr;
  bool global = true;        // from the global scope: the same answer for every caller
  bool site = false;         // a caller outside every module (JIT code): the answer holds at its address
  uintptr_t lo = 0, hi = 0;  // not global: the calling module's code (or the call site), where it holds
};

struct RangeQuery {
  uintptr_t addr, lo = 0, hi = 0;
};

int find_range(struct dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<RangeQuery*>(data);
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (q->addr >= lo && q->addr < hi) {
    q->lo = lo;
    q->hi = hi;
    return 1;
  }
  return 0;
}

Found find(const char* name, const void* caller) {
  Found f;
  // 1. The global scope after us: what every caller is bound to.
  if (void* p = dlsym(RTLD_NEXT, name)) {
    if (!is_ours(p)) {
      f.fn = p;
      return f;
    }
  }
  // What follows holds for the calling module only (when it is known).
  RangeQuery q{reinterpret_cast<uintptr_t>(caller)};
  if (caller) dl_iterate_phdr(find_range, &q);
  auto for_caller = [&](void* p) {
    f.fn = p;
    f.global = false;
    f.site = !(q.hi > q.lo);
    f.lo = f.site ? q.addr : q.lo;
    f.hi = f.site ? q.addr + 1 : q.hi;
    return f;
  };
  // 2. The calling module's own scope: private (RTLD_LOCAL) libraries such as NumPy's OpenBLAS.
  Dl_info di{};
  if (caller && dladdr(caller, &di) && di.dli_fbase != own_base()) {
    if (void* p = lookup_in(di.dli_fname, name)) return for_caller(p);
  }
  // 3. Every loaded object, in load order.
  std::vector<std::string> paths;
  dl_iterate_phdr(collect_path, &paths);
  for (const auto& path : paths) {
    if (void* p = lookup_in(path.c_str(), name)) return for_caller(p);
  }
  return f;
}

constexpr long kMaxSites = 64;  // call sites outside every module remembered per symbol

// Taken only to publish an entry (never across a loader call): readers never wait.
std::atomic_flag g_resolve_lock = ATOMIC_FLAG_INIT;

void lock_resolver() {
  while (g_resolve_lock.test_and_set(std::memory_order_acquire)) sched_yield();
}
void unlock_resolver() { g_resolve_lock.clear(std::memory_order_release); }

struct ResolveLock {
  ResolveLock() { lock_resolver(); }
  ~ResolveLock() { unlock_resolver(); }
};

}  // namespace

void* resolve_real(int sym, const void* caller) {
  void* fn = resolve_real_in(g_real[sym], gofl_syms[sym].name, caller);
  spare_core_note(fn, gofl_syms[sym].scheme);  // its library's thread controls, found now
  return fn;
}

void* resolve_real_in(std::atomic<const RealEntry*>& entry, const char* name, const void* caller) {
  if (void* fn = cached_real_in(entry, caller)) return fn;  // published since the wrapper looked
  // Outside the lock: the search calls dlopen/dladdr, which take the loader's lock.
  const Found f = find(name, caller);
  if (!f.fn) missing(name, caller);
  if (!f.global) {
    // Remembered for the caller's module: neither it nor the library may be unloaded and their
    // addresses reused while the answer stands.
    for (const void* a : {static_cast<const void*>(f.fn), caller}) {
      Dl_info di{};
      if (dladdr(a, &di) && di.dli_fname && *di.dli_fname) dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    }
  }
  ResolveLock lk;
  const RealEntry* e = entry.load(std::memory_order_acquire);
  if (e)
    if (void* fn = cached_fn(e, caller)) return fn;  // another thread got here first
  // Call sites outside every module are few in practice (numba's calls through SciPy's cython_blas
  // pointers); JIT code that calls from everywhere must not grow an entry without end: past
  // kMaxSites its other sites search on each call.
  if (f.site && e && std::count_if(e->slot, e->slot + e->n, [](const RealSlot& x) { return x.span == 1; }) >= kMaxSites)
    return f.fn;
  // A copy with one slot more, appended: no slot serves this caller, so there is no global one yet
  // and the callers' own stay before it. The old entry is never freed: a reader may still hold it.
  const uint32_t n = e ? e->n : 0;
  auto* w = static_cast<RealEntry*>(::operator new(sizeof(RealEntry) + (n + 1) * sizeof(RealSlot)));
  w->n = n + 1;
  for (uint32_t i = 0; i < n; ++i) w->slot[i] = e->slot[i];
  w->slot[n] = f.global ? RealSlot{0, UINTPTR_MAX, f.fn} : RealSlot{f.lo, f.hi - f.lo, f.fn};
  entry.store(w, std::memory_order_release);
  return f.fn;
}

void* lookup_in_scope_of(const void* fn, const char* name) {
  Dl_info di{};
  if (!fn || !dladdr(fn, &di) || di.dli_fbase == own_base()) return nullptr;
  return lookup_in(di.dli_fname, name);
}

// fork(): the lock is taken before and released after in both processes, so the child never
// inherits it held by a thread that is gone (it is never held across a loader call).
void resolve_fork_prepare() { lock_resolver(); }
void resolve_fork_parent() { unlock_resolver(); }
void resolve_fork_child() { unlock_resolver(); }

}  // namespace gofl
