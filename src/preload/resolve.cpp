// Finding the function the program would have called without us: the calling module and its
// dependencies, then the global scope after us, then every loaded object; never one of our wrappers.
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "preload/resolve.h"
#include "preload/wrapper_support.h"

namespace gofl {

std::atomic<void*> g_real[GOFL_N_SYMS];

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

void* find_real(const char* name, const void* caller) {
  // 1. The calling module's own scope: reaches private (RTLD_LOCAL) libraries such as NumPy's OpenBLAS.
  Dl_info di{};
  if (caller && dladdr(caller, &di) && di.dli_fbase != own_base()) {
    if (void* p = lookup_in(di.dli_fname, name)) return p;
  }
  // 2. The global scope after us.
  if (void* p = dlsym(RTLD_NEXT, name)) {
    if (!is_ours(p)) return p;
  }
  // 3. Every loaded object, in load order.
  std::vector<std::string> paths;
  dl_iterate_phdr(collect_path, &paths);
  for (const auto& path : paths) {
    if (void* p = lookup_in(path.c_str(), name)) return p;
  }
  return nullptr;
}

void* find_real_or_exit(const char* name, const void* caller) {
  void* p = find_real(name, caller);
  if (!p) missing(name, caller);
  return p;
}

void* resolve_real(int sym, const void* caller) {
  void* p = find_real_or_exit(gofl_syms[sym].name, caller);
  void* expected = nullptr;
  // Keep the first answer if two threads raced; both found a real function.
  if (!g_real[sym].compare_exchange_strong(expected, p, std::memory_order_acq_rel)) return expected;
  return p;
}

}  // namespace gofl
