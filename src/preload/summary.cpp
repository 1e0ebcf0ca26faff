#include "preload/summary.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "common/table.h"
#include "policy/decide.h"
#include "policy/settings.h"
#include "preload/gpu.h"

namespace gofl {
namespace {

struct OpStats {
  std::atomic<uint64_t> calls[2];      // top-level, by device
  std::atomic<uint64_t> time_ns[2];
  std::atomic<uint64_t> nested;
  std::atomic<uint64_t> queries;
  std::atomic<double> flops[2];
};

OpStats g_ops[GOFL_N_OPS];
std::atomic<uint64_t> g_reasons[GOFL_R_COUNT];
std::atomic<uint64_t> g_verify_mismatches{0};
std::atomic<uint64_t> g_kept_operands{0}, g_kept_bytes{0};  // inputs a kept device copy served

void add_double(std::atomic<double>& a, double v) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {
  }
}

}  // namespace

void summary_add(const gofl_call& c, uint64_t duration_ns) {
  OpStats& s = g_ops[c.op];
  if (c.reason < GOFL_R_COUNT) g_reasons[c.reason].fetch_add(1, std::memory_order_relaxed);
  if (c.flags & GOFL_F_VERIFY_MISMATCH) g_verify_mismatches.fetch_add(1, std::memory_order_relaxed);
  if (c.flags & GOFL_F_NESTED) { s.nested.fetch_add(1, std::memory_order_relaxed); return; }
  if (c.flags & GOFL_F_QUERY) { s.queries.fetch_add(1, std::memory_order_relaxed); return; }
  const int d = c.device == GOFL_DEV_GPU ? 1 : 0;
  for (int i = 0; c.resident && i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
    if (GOFL_RESIDENCY_OF(c.resident, i) == GOFL_RES_COPIED) continue;
    g_kept_operands.fetch_add(1, std::memory_order_relaxed);
    g_kept_bytes.fetch_add(uint64_t(c.operands[i].elems) * c.operands[i].elem_size, std::memory_order_relaxed);
  }
  s.calls[d].fetch_add(1, std::memory_order_relaxed);
  s.time_ns[d].fetch_add(duration_ns, std::memory_order_relaxed);
  add_double(s.flops[d], c.flops);
}

void summary_reset() {
  for (auto& s : g_ops) {
    for (int d = 0; d < 2; ++d) { s.calls[d] = 0; s.time_ns[d] = 0; s.flops[d] = 0; }
    s.nested = 0;
    s.queries = 0;
  }
  for (auto& r : g_reasons) r = 0;
  g_verify_mismatches = 0;
  g_kept_operands = g_kept_bytes = 0;
}

void summary_print(int fd) {
  bool any_call = false;
  for (const auto& s : g_ops) any_call |= (s.calls[0] + s.calls[1] + s.nested + s.queries) > 0;
  if (!any_call) return;  // a helper process (shell, pyenv shim) that made no calls stays silent
  std::string out;
  char line[256];
  const Settings& st = settings();
  snprintf(line, sizeof line, "gpu-offload summary (pid %d, device %s, level %d, profile %s)\n", int(getpid()),
           device_mode_name(st.device), st.level, active_profile_label().c_str());
  out += line;
  snprintf(line, sizeof line, "  %-10s %8s %8s %8s %11s %11s %9s\n", "operation", "cpu", "gpu", "nested", "cpu time s",
           "gpu time s", "GFLOP/s");
  out += line;
  for (int i = 0; i < GOFL_N_OPS; ++i) {
    const OpStats& s = g_ops[i];
    uint64_t c0 = s.calls[0], c1 = s.calls[1], nested = s.nested;
    if (c0 + c1 + nested + s.queries == 0) continue;
    double t0 = s.time_ns[0] / 1e9, t1 = s.time_ns[1] / 1e9;
    double fl = s.flops[0].load() + s.flops[1].load();
    double rate = (t0 + t1) > 0 ? fl / (t0 + t1) / 1e9 : 0.0;
    snprintf(line, sizeof line, "  %-10s %8llu %8llu %8llu %11.4f %11.4f %9.2f\n", gofl_ops[i].name,
             (unsigned long long)c0, (unsigned long long)c1, (unsigned long long)nested, t0, t1, rate);
    out += line;
  }
  std::string reasons;
  for (int r = 0; r < GOFL_R_COUNT; ++r) {
    if (!g_reasons[r]) continue;
    snprintf(line, sizeof line, "%s%s %llu", reasons.empty() ? "" : ", ", gofl_reason_name(r),
             (unsigned long long)g_reasons[r].load());
    reasons += line;
  }
  if (!reasons.empty()) out += "  where calls ran and why: " + reasons + "\n";
  out += decide_summary();  // GPU start-up paid or avoided, predicted time saved
  if (gpu_started()) {
    char info[256] = "";
    gpu_backend()->residency_info(info, sizeof info);
    const double kb = double(g_kept_bytes.load());
    snprintf(line, sizeof line, "  residency: %llu operand copies avoided (%.1f MB, about %.1f ms of copying by the profile); %s\n",
             (unsigned long long)g_kept_operands.load(), kb / 1e6,
             kb > 0 ? predicted_copy_in_seconds(kb) * 1e3 : 0.0, info);
    out += line;
  }
  if (st.verify || g_verify_mismatches) {
    snprintf(line, sizeof line, "  verify: %llu of %llu checked calls differed beyond the tolerance\n",
             (unsigned long long)g_verify_mismatches.load(), (unsigned long long)g_reasons[GOFL_R_VERIFY].load());
    out += line;
  }
  ssize_t ignored = write(fd, out.data(), out.size());
  (void)ignored;
}

}  // namespace gofl
