#include "preload/summary_conversions.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <atomic>

#include "common/conversions.h"
#include "common/table.h"

namespace gofl {
namespace {

// A ?copy costs its own time; a LAPACK call right after NumPy's or SciPy's copies costs the time
// outside any intercepted call before it (where the caller checks and copies its operands), up to
// kConversionNsPerByte of the bytes it reads. Time before a LAPACK call that no such copy precedes is
// the program's own work (a Fortran program's, scikit-learn's kernel), never a conversion.
struct Conversions {
  std::atomic<uint64_t> copies{0}, copy_run_ns{0}, gap_ns{0}, lapack_calls{0}, lapack_ns{0};
  std::atomic<const void*> copy_site{nullptr}, lapack_site{nullptr};  // the latest, to name the library
};
Conversions g_conv;
__thread uint64_t t_last_end_ns __attribute__((tls_model("initial-exec")));  // this thread's previous top-level call
__thread bool t_after_copy __attribute__((tls_model("initial-exec")));       // ... was a converting ?copy

// Sites already classified: address << 1 | converting, by a hash of the address (a miss asks dladdr).
constexpr size_t kSiteCache = 256;
std::atomic<uint64_t> g_site_cache[kSiteCache];

bool is_copy(int op) { return strcmp(gofl_ops[op].routine, "copy") == 0; }

std::string module_of(const void* site) {
  Dl_info info{};
  return site && dladdr(site, &info) && info.dli_fname ? info.dli_fname : "";
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string fmt_s(double s) {
  char b[32];
  if (s >= 1 || s == 0) snprintf(b, sizeof b, "%.2f s", s);
  else if (s >= 1e-3) snprintf(b, sizeof b, "%.1f ms", s * 1e3);
  else snprintf(b, sizeof b, "%.0f us", s * 1e6);
  return b;
}

}  // namespace

bool converting_copy_site(const void* site) {
  const uint64_t a = uint64_t(reinterpret_cast<uintptr_t>(site));
  std::atomic<uint64_t>& slot = g_site_cache[(a * 0x9E3779B97F4A7C15ull) >> 56];
  const uint64_t cached = slot.load(std::memory_order_relaxed);
  if (cached >> 1 == a && a) return cached & 1;
  const bool converting = converting_module(module_of(site));
  slot.store(a << 1 | (converting ? 1 : 0), std::memory_order_relaxed);
  return converting;
}

void conversions_add_call(const gofl_call& c, uint64_t duration_ns) {
  const gofl_kind kind = gofl_ops[c.op].kind;
  // Counted calls came since the previous record: the time since it is not outside any call.
  const bool known = !(c.flags & GOFL_F_AFTER_COUNTED);
  const uint64_t since = known && t_last_end_ns && c.t0_ns > t_last_end_ns ? c.t0_ns - t_last_end_ns : 0;
  const bool after_copy = known && t_after_copy;
  t_after_copy = false;
  if (kind == GOFL_KIND_BLAS1 && is_copy(c.op) && converting_copy_site(c.site)) {
    g_conv.copies.fetch_add(1, std::memory_order_relaxed);
    g_conv.copy_run_ns.fetch_add(duration_ns, std::memory_order_relaxed);  // not the gaps: our own recording is there
    g_conv.copy_site.store(c.site, std::memory_order_relaxed);
    t_after_copy = true;
  } else if (kind == GOFL_KIND_LAPACK) {
    g_conv.lapack_calls.fetch_add(1, std::memory_order_relaxed);
    g_conv.lapack_ns.fetch_add(duration_ns, std::memory_order_relaxed);
    if (after_copy) {
      double in_bytes = 0;
      for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i)
        if (c.operands[i].role != GOFL_OUT) in_bytes += double(c.operands[i].elems) * c.operands[i].elem_size;
      g_conv.gap_ns.fetch_add(std::min(since, conversion_cap_ns(in_bytes)), std::memory_order_relaxed);
    }
    g_conv.lapack_site.store(c.site, std::memory_order_relaxed);
  }
  t_last_end_ns = c.t0_ns + duration_ns;
}

void conversions_add_counted(const gofl_counted_record& r) {
  if (r.flags & (GOFL_F_NESTED | GOFL_F_QUERY) || r.sym == GOFL_SYM_FFTW) return;
  const void* site = reinterpret_cast<const void*>(r.site);
  if (gofl_ops[r.op].kind == GOFL_KIND_LAPACK) {
    g_conv.lapack_calls.fetch_add(r.calls, std::memory_order_relaxed);
    g_conv.lapack_ns.fetch_add(r.estimated_ns, std::memory_order_relaxed);
    g_conv.lapack_site.store(site, std::memory_order_relaxed);
  } else if (is_copy(r.op) && converting_copy_site(site)) {
    g_conv.copies.fetch_add(r.calls, std::memory_order_relaxed);
    g_conv.copy_run_ns.fetch_add(r.estimated_ns, std::memory_order_relaxed);
    g_conv.copy_site.store(site, std::memory_order_relaxed);
  }
}

std::string conversions_line() {
  const double copy_s = g_conv.copy_run_ns.load() * 1e-9, gap_s = g_conv.gap_ns.load() * 1e-9;
  const double lapack_s = g_conv.lapack_ns.load() * 1e-9;
  if (g_conv.lapack_calls.load() == 0 || copy_s + gap_s <= lapack_s) return "";
  const std::string copier = module_of(g_conv.copy_site.load()), caller = module_of(g_conv.lapack_site.load());
  std::string library = library_of_module(copy_s >= gap_s ? copier : caller);
  if (library.empty()) library = library_of_module(caller);
  char line[1024];
  snprintf(line, sizeof line,
           "  conversions dominate: %s around the %llu LAPACK calls (%s in them): %s in %llu ?copy calls%s%s, %s "
           "outside any call just before them%s%s; %s (README: From Python)\n",
           fmt_s(copy_s + gap_s).c_str(), (unsigned long long)g_conv.lapack_calls.load(), fmt_s(lapack_s).c_str(),
           fmt_s(copy_s).c_str(), (unsigned long long)g_conv.copies.load(), copier.empty() ? "" : " from ",
           base_name(copier).c_str(), fmt_s(gap_s).c_str(), caller.empty() ? "" : ", called from ",
           base_name(caller).c_str(), conversion_advice(library));
  return line;
}

void conversions_reset() {
  g_conv.copies = g_conv.copy_run_ns = g_conv.gap_ns = g_conv.lapack_calls = g_conv.lapack_ns = 0;
  t_last_end_ns = 0;
  t_after_copy = false;
}

}  // namespace gofl
