// Sparing a core beside the GPU's one-time work (spare_core.h): finding a library's thread controls,
// lowering its count for one call and putting it back.
#include "preload/spare_core.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <new>

#include "common/cpus.h"
#include "common/table.h"
#include "preload/resolve.h"

namespace gofl {
namespace {

// OpenBLAS's C thread controls, by the naming scheme of the symbol called (gofl_scheme). The Fortran
// ones (a trailing underscore after the name, before any suffix) take pointers: not these.
struct ControlNames {
  const char* get;
  const char* set;
  const char* parallel;  // 0 sequential, 1 pthreads, 2 OpenMP
};
const ControlNames kNames[] = {
    {"openblas_get_num_threads", "openblas_set_num_threads", "openblas_get_parallel"},  // GOFL_SCHEME_STD
    {"scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads", "scipy_openblas_get_parallel"},  // SCIPY
    {"scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_",
     "scipy_openblas_get_parallel64_"},                                                                 // NUMPY64
    {"openblas_get_num_threads64_", "openblas_set_num_threads64_", "openblas_get_parallel64_"},         // ILP64
};
static_assert(GOFL_SCHEME_STD == 0 && GOFL_SCHEME_SCIPY == 1 && GOFL_SCHEME_NUMPY64 == 2 && GOFL_SCHEME_ILP64 == 3);

// One library's controls and what the spared calls did to its count (under g_mu). Calls of several
// threads at once share one lowering; the last to end puts the count back.
struct Library {
  const void* base;  // the object defining the real functions
  int scheme;        // the names they go by
  int (*get)();      // both null: nothing to spare (no controls, or not the pthreads build)
  void (*set)(int);
  int active = 0;    // spared calls running now
  int program = 0;   // the program's count before the first of them
  int lowered = 0;   // the count they run with
  bool check = false;  // the count was not ours when the last one ended (see repair_locked)
};

// Libraries looked at so far: a process has a few (NumPy's, SciPy's, the system's).
constexpr int kMaxLibraries = 16;
// The real functions seen, each with its library: filled when the resolver finds one
// (spare_core_note), read by the calls. A call never looks a library up itself: dladdr and dlopen
// take the loader's lock, which a start or warm-up beside holds while it loads a CUDA library
// (tens of milliseconds).
constexpr size_t kMaxFunctions = 1024;
std::mutex& g_mu = *new std::mutex;  // never destroyed: calls may come while the process exits
Library g_libs[kMaxLibraries];
int g_n_libs = 0;
struct Seen {
  const void* fn;
  int lib;  // index into g_libs
};
Seen g_fns[kMaxFunctions];
size_t g_n_fns = 0;
std::atomic<bool> g_check_due{false};  // some library's check is set

std::atomic<uint64_t> g_spared_calls{0};
std::atomic<int> g_last_program{0}, g_last_call{0};

// The library entry for real_fn under `scheme`, made on first sight (loader calls: not under g_mu).
int library_of(const void* real_fn, int scheme) {
  Dl_info di{};
  if (!real_fn || scheme < 0 || scheme > GOFL_SCHEME_ILP64 || !dladdr(real_fn, &di)) return -1;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    for (int i = 0; i < g_n_libs; ++i)
      if (g_libs[i].base == di.dli_fbase && g_libs[i].scheme == scheme) return i;
  }
  // In the defining object's own scope: Debian's libblas.so.3 takes its threads from the
  // libopenblas.so.0 it depends on; NumPy's and SciPy's from themselves. Only the pthreads build:
  // in an OpenMP build the count is the calling thread's OpenMP setting, and lowering it frees
  // per-thread buffers that another thread's call may be using.
  Library c{di.dli_fbase, scheme, nullptr, nullptr};
  void* get = lookup_in_scope_of(real_fn, kNames[scheme].get);
  void* set = lookup_in_scope_of(real_fn, kNames[scheme].set);
  void* parallel = lookup_in_scope_of(real_fn, kNames[scheme].parallel);
  if (get && set && parallel && reinterpret_cast<int (*)()>(parallel)() == 1) {
    c.get = reinterpret_cast<int (*)()>(get);
    c.set = reinterpret_cast<void (*)(int)>(set);
  }
  std::lock_guard<std::mutex> lk(g_mu);
  for (int i = 0; i < g_n_libs; ++i)  // another thread may have added it meanwhile
    if (g_libs[i].base == c.base && g_libs[i].scheme == scheme) return i;
  if (g_n_libs == kMaxLibraries) return -1;
  g_libs[g_n_libs] = c;
  return g_n_libs++;
}

int lib_of_locked(const void* real_fn) {
  for (size_t i = 0; i < g_n_fns; ++i)
    if (g_fns[i].fn == real_fn) return g_libs[g_fns[i].lib].get ? g_fns[i].lib : -1;
  return -1;
}

// A library whose count was not ours when its last spared call ended: the program (or another
// thread) set one meanwhile, and that stands. Unless it comes back to the count the calls ran with:
// a save and restore around our lowering (threadpoolctl's limits, say) would leave it there for
// good, so it is put back to the program's. Settled once the count is either of the two.
void repair_locked() {
  bool due = false;
  for (int i = 0; i < g_n_libs; ++i) {
    Library& c = g_libs[i];
    if (!c.check || c.active > 0) {
      due = due || c.check;
      continue;
    }
    const int now = c.get();
    if (now == c.lowered) c.set(c.program);
    if (now == c.lowered || now == c.program) c.check = false;
    due = due || c.check;
  }
  g_check_due.store(due, std::memory_order_relaxed);
}

}  // namespace

int process_cores() {
  static const int cores = affinity_cpus();
  return cores;
}

void spare_core_note(const void* real_fn, int scheme) {
  const int lib = library_of(real_fn, scheme);
  if (lib < 0) return;
  std::lock_guard<std::mutex> lk(g_mu);
  for (size_t i = 0; i < g_n_fns; ++i)
    if (g_fns[i].fn == real_fn) return;
  if (g_n_fns < kMaxFunctions) g_fns[g_n_fns++] = Seen{real_fn, lib};
}

SparedCore spare_core_in(const void* real_fn) {
  std::lock_guard<std::mutex> lk(g_mu);
  const int lib = lib_of_locked(real_fn);
  if (lib < 0) return SparedCore{};
  Library& c = g_libs[lib];
  if (c.active == 0) {
    const int threads = c.get();
    // Fewer threads than cores leave one free already; from 2 to 1 OpenBLAS would also change the
    // calling thread's affinity.
    if (threads < 3 || threads < process_cores()) return SparedCore{};
    c.set(threads - 1);
    c.program = threads;
    c.lowered = threads - 1;
    c.check = false;
  } else if (c.get() != c.lowered) {
    return SparedCore{};  // set by the program since the first of the calls running now
  }
  ++c.active;
  g_spared_calls.fetch_add(1, std::memory_order_relaxed);
  g_last_program.store(c.program, std::memory_order_relaxed);
  g_last_call.store(c.lowered, std::memory_order_relaxed);
  return SparedCore{lib, c.program, c.lowered};
}

SparedCore spare_core_for(const gofl_call& c) {
  if (c.sym >= GOFL_N_SYMS || c.op >= GOFL_N_OPS || gofl_ops[c.op].kind == GOFL_KIND_FFT) return SparedCore{};
  return spare_core_in(c.real);
}

void give_core_back(const SparedCore& s) {
  if (s.lib < 0) return;
  std::lock_guard<std::mutex> lk(g_mu);
  Library& c = g_libs[s.lib];
  if (--c.active > 0) return;
  if (c.get() == c.lowered) {
    c.set(c.program);
  } else {  // another thread of the program set its own count meanwhile
    c.check = true;
    g_check_due.store(true, std::memory_order_relaxed);
  }
}

void spare_core_check() {
  if (!g_check_due.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lk(g_mu);
  repair_locked();
}

void spared_core_counts(uint64_t* calls, int* program_threads, int* call_threads) {
  *calls = g_spared_calls.load(std::memory_order_relaxed);
  *program_threads = g_last_program.load(std::memory_order_relaxed);
  *call_threads = g_last_call.load(std::memory_order_relaxed);
}

void spare_core_fork_child() {
  new (&g_mu) std::mutex();  // the parent's lock may have been held by a thread the child lacks
  // The parent's calls running at the fork are not the child's: their lowering is put back at the
  // child's next call (not here: OpenBLAS remakes its threads when a count is set after fork).
  bool due = false;
  for (int i = 0; i < g_n_libs; ++i) {
    Library& c = g_libs[i];
    if (c.active > 0) c.active = 0, c.check = true;
    due = due || c.check;
  }
  g_check_due = due;
  g_spared_calls = 0;
  g_last_program = g_last_call = 0;
}

}  // namespace gofl
