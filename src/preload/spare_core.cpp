// Sparing a core beside the GPU's one-time work (spare_core.h): finding a library's thread controls,
// lowering its count for one call and putting it back.
#include "preload/spare_core.h"

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <new>

#include "common/table.h"
#include "preload/resolve.h"

namespace gofl {
namespace {

// OpenBLAS's C thread controls, by the naming scheme of the symbol called (gofl_scheme). The Fortran
// ones (a trailing underscore after the name, before any suffix) take pointers: not these.
struct ControlNames {
  const char* get;
  const char* set;
};
const ControlNames kNames[] = {
    {"openblas_get_num_threads", "openblas_set_num_threads"},                    // GOFL_SCHEME_STD
    {"scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"},        // GOFL_SCHEME_SCIPY
    {"scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"},  // GOFL_SCHEME_NUMPY64
    {"openblas_get_num_threads64_", "openblas_set_num_threads64_"},              // GOFL_SCHEME_ILP64
};
static_assert(GOFL_SCHEME_STD == 0 && GOFL_SCHEME_SCIPY == 1 && GOFL_SCHEME_NUMPY64 == 2 && GOFL_SCHEME_ILP64 == 3);

struct Controls {
  const void* base;  // the object defining the real functions
  int scheme;        // the names they go by
  int (*get)();      // both null: that library has none (reference BLAS, MKL, BLIS)
  void (*set)(int);
};

// Libraries looked at so far: a process has a few (NumPy's, SciPy's, the system's).
constexpr int kMaxLibraries = 16;
// The real functions seen, each with its library's controls: filled when the resolver finds one
// (spare_core_note), read by the calls. A call never looks a library up itself: dladdr and dlopen
// take the loader's lock, which a start or warm-up beside holds while it loads a CUDA library
// (tens of milliseconds).
constexpr size_t kMaxFunctions = 1024;
std::mutex& g_mu = *new std::mutex;  // never destroyed: calls may come while the process exits
Controls g_libs[kMaxLibraries];
int g_n_libs = 0;
struct Seen {
  const void* fn;
  int lib;  // index into g_libs
};
Seen g_fns[kMaxFunctions];
size_t g_n_fns = 0;

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
  // libopenblas.so.0 it depends on; NumPy's and SciPy's from themselves.
  Controls c{di.dli_fbase, scheme, nullptr, nullptr};
  void* get = lookup_in_scope_of(real_fn, kNames[scheme].get);
  void* set = lookup_in_scope_of(real_fn, kNames[scheme].set);
  if (get && set) {
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

Controls controls_of(const void* real_fn) {
  std::lock_guard<std::mutex> lk(g_mu);
  for (size_t i = 0; i < g_n_fns; ++i)
    if (g_fns[i].fn == real_fn) return g_libs[g_fns[i].lib];
  return Controls{};
}

}  // namespace

int process_cores() {
  static const int cores = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return int(CPU_COUNT(&set));
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? int(n) : 1;
  }();
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
  const Controls c = controls_of(real_fn);
  if (!c.get) return SparedCore{};
  const int threads = c.get();
  // Fewer threads than cores leave one free already; from 2 to 1 OpenBLAS would also change the
  // calling thread's affinity.
  if (threads < 3 || threads < process_cores()) return SparedCore{};
  c.set(threads - 1);
  g_spared_calls.fetch_add(1, std::memory_order_relaxed);
  g_last_program.store(threads, std::memory_order_relaxed);
  g_last_call.store(threads - 1, std::memory_order_relaxed);
  return SparedCore{c.set, threads, threads - 1, c.get};
}

SparedCore spare_core_for(const gofl_call& c) {
  if (c.sym >= GOFL_N_SYMS || c.op >= GOFL_N_OPS || gofl_ops[c.op].kind == GOFL_KIND_FFT) return SparedCore{};
  return spare_core_in(c.real);
}

void give_core_back(const SparedCore& s) {
  if (!s.set) return;
  // Another thread of the program may have set its own count meanwhile: that one stands.
  if (s.get() == s.call_threads) s.set(s.program_threads);
}

void spared_core_counts(uint64_t* calls, int* program_threads, int* call_threads) {
  *calls = g_spared_calls.load(std::memory_order_relaxed);
  *program_threads = g_last_program.load(std::memory_order_relaxed);
  *call_threads = g_last_call.load(std::memory_order_relaxed);
}

void spare_core_fork_child() {
  new (&g_mu) std::mutex();  // the parent's lock may have been held by a thread the child lacks
  g_spared_calls = 0;
  g_last_program = g_last_call = 0;
}

}  // namespace gofl
