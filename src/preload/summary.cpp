#include "preload/summary.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "common/gpu_placement.h"
#include "common/table.h"
#include "policy/settings.h"
#include "preload/decide.h"
#include "preload/run_history.h"
#include "preload/spare_core.h"
#include "preload/gpu.h"
#include "preload/summary_conversions.h"
#include "preload/verify.h"

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

// Calls counted below the threshold (counted.h), per operation: also in g_ops and g_reasons; kept
// apart to say how many there were and on how many timed calls their time rests. Set at exit.
struct CountedOp {
  uint64_t calls = 0, nested = 0, queries = 0, timed = 0, estimated_ns = 0;
};
CountedOp g_counted[GOFL_N_OPS];
std::atomic<uint64_t> g_reasons[GOFL_R_COUNT];
std::atomic<uint64_t> g_verify_mismatches{0};
std::atomic<uint64_t> g_verify_due{0};  // top-level calls of GPU-capable operations under --verify
std::atomic<uint64_t> g_kept_operands{0}, g_kept_bytes{0};  // inputs a kept device copy served
// GPU calls of one kind: how many, and their time.
struct GpuCallTally {
  std::atomic<uint64_t> calls{0}, ns{0};
  void add(uint64_t duration_ns) {
    calls.fetch_add(1, std::memory_order_relaxed);
    ns.fetch_add(duration_ns, std::memory_order_relaxed);
  }
  void reset() { calls = ns = 0; }
  // "  HEAD: N GPU calls (S s) TAIL" and a newline, or "" when there were none.
  std::string line(const char* head, const char* tail) const {
    if (!calls) return "";
    char text[320];
    snprintf(text, sizeof text, "  %s: %llu GPU calls (%.3f s) %s\n", head, (unsigned long long)calls.load(),
             double(ns.load()) * 1e-9, tail);
    return text;
  }
};
GpuCallTally g_split;       // top-level calls split over several GPUs (GOFL_F_SPLIT)
GpuCallTally g_cores_held;  // GPU calls made beside other threads' CPU calls (GOFL_F_CORES_HELD)
GpuCallTally g_staged;      // GPU calls staged in their thread's pinned buffer (GOFL_F_STAGED)

// GPU attempts that failed, by operation: how many, and the first one's failure (rare: a mutex is fine).
// Constant-initialised (std::mutex's constructor is constexpr, its destructor trivial): nothing runs at
// load or exit, and a fork child's handler never meets a half-made static.
struct Failures {
  std::mutex m;
  uint64_t count[GOFL_N_OPS] = {};
  char first[GOFL_N_OPS][128] = {};
};
Failures g_failures;

std::string failure_line() {
  Failures& f = g_failures;
  std::lock_guard<std::mutex> lk(f.m);
  std::string out;
  for (int i = 0; i < GOFL_N_OPS; ++i) {
    if (!f.count[i]) continue;
    out += (out.empty() ? "" : "; ") + std::string(gofl_ops[i].name) + " " + std::to_string(f.count[i]) + " (" +
           (f.count[i] > 1 ? "the first: " : "") + f.first[i] + ")";
  }
  return out.empty() ? out : "  GPU failures, run on the CPU instead: " + out + "\n";
}

std::string fmt_s(double s) {
  char b[32];
  if (s >= 1 || s == 0) snprintf(b, sizeof b, "%.2f s", s);
  else if (s >= 1e-3) snprintf(b, sizeof b, "%.1f ms", s * 1e3);
  else snprintf(b, sizeof b, "%.0f us", s * 1e6);
  return b;
}

std::string calls_phrase(uint64_t n) { return std::to_string(n) + (n == 1 ? " call" : " calls"); }

// Where a paid start-up went, its largest steps first (trace/record.h, gofl_setup_record); empty
// before a start.
std::string start_split_line() {
  const gofl_setup_phase* p = nullptr;
  const int n = gpu_start_phases(&p);
  if (n <= 0) return "";
  std::vector<gofl_setup_phase> steps(p, p + n);
  std::sort(steps.begin(), steps.end(), [](const gofl_setup_phase& a, const gofl_setup_phase& b) {
    return a.duration_ns > b.duration_ns;
  });
  std::string line = "  GPU start-up went to:";
  for (size_t i = 0; i < steps.size() && i < 4; ++i)
    line += std::string(i ? ", " : " ") + gofl_setup_phase_name(int(steps[i].phase)) + " " +
            fmt_s(double(steps[i].duration_ns) * 1e-9);
  return line + (steps.size() > 4 ? ", ...\n" : "\n");
}

// Warming (cuda/warm.h), in any mode: how many operations the backend was asked to warm, how many
// warm-ups ended well and the work they did beside the calls. Empty when none was asked.
std::string warm_line() {
  int asked = 0, warmed = 0;
  double warmed_s = 0, cpu_s = 0;
  gpu_warmed(&asked, &warmed, &warmed_s, &cpu_s);
  if (asked == 0) return "";
  char line[320];
  snprintf(line, sizeof line,
           "  warmed beside the calls: %d of %d operations asked (%s of the CUDA libraries' first-use work, off the "
           "calls' path; %s of CPU time at the lowest priority)\n",
           warmed, asked, fmt_s(warmed_s).c_str(), fmt_s(cpu_s).c_str());
  return line;
}

// Sparing a core (spare_core.h): how many CPU calls ran with one library thread fewer beside the GPU's
// one-time work. Empty when none did.
std::string spare_line() {
  uint64_t calls = 0;
  int program = 0, call = 0;
  spared_core_counts(&calls, &program, &call);
  if (calls == 0) return "";
  char line[320];
  snprintf(line, sizeof line,
           "  a core spared beside the GPU's start and warm-ups: %llu CPU calls ran with %d OpenBLAS threads instead of "
           "%d (GPU_OFFLOAD_SPARE_CORE=off: none)\n",
           (unsigned long long)calls, call, program);
  return line;
}

// Lines (each starting with two spaces) on the GPU start-up, paid or avoided, and the time the
// decision saved.
std::string policy_lines() {
  char line[512];
  if (!auto_mode()) {
    // --device gpu (or verify): the start-up is not part of any call's time, so say what it cost.
    if (!gpu_started()) {
      if (!gpu_unavailable()) return "";
      snprintf(line, sizeof line, "  GPU: none used: %s; every call ran on the CPU\n", gpu_unavailable_reason());
      return line;
    }
    snprintf(line, sizeof line, "  GPU start-up: paid %s, before the first GPU call (not in the calls' times)\n",
             fmt_s(gpu_startup_seconds()).c_str());
    return line + start_split_line();
  }
  const AutoPolicy* policy = auto_policy_made();
  if (!policy) return "";
  std::string out;
  // Said even though no start was due: a user reading "avoided" expects a longer run to use a GPU.
  if (const std::string never = gpu_never_usable(); !never.empty()) {
    snprintf(line, sizeof line, "  GPU: none can be used here: %s; every call stays on the CPU, whatever its size\n",
             never.c_str());
    out += line;
  }
  const PolicyStats st = policy->stats();
  if (st.decided == 0) return out;
  if (st.started && gpu_started()) {
    // What the program paid: all of the start, or, when it ran beside the calls, what it waited.
    const double took = gpu_startup_seconds(), waited = gpu_start_waited_seconds();
    const std::string profile = "profile: " + fmt_s(st.startup_s) + ")";
    const std::string paid = waited < took - 5e-4 ? fmt_s(waited) + " of " + fmt_s(took) + " (the rest beside the calls; " + profile
                                                  : fmt_s(took) + " (" + profile;
    char factor[32];
    snprintf(factor, sizeof factor, "%.2gx", policy->level().start_factor);
    const std::string why = st.at_once ? history_summary_phrase()
                                       : "after " + fmt_s(st.missed_savings_s) + " of predicted savings were missed (level " +
                                             std::to_string(policy->config().level) + " starts at " + factor +
                                             " the start-up cost)";
    snprintf(line, sizeof line, "  GPU start-up: paid %s at decided call %llu, %s\n", paid.c_str(),
             (unsigned long long)st.start_call, why.c_str());
  } else if (st.start_failed || (st.started && gpu_unavailable())) {  // (a start beside the calls failed)
    const std::string at_once = st.at_once ? " (" + history_summary_phrase() + ")" : std::string();
    snprintf(line, sizeof line,
             "  GPU start-up: justified at decided call %llu%s, but it failed: %s; calls stay on the CPU\n",
             (unsigned long long)st.start_call, at_once.c_str(), gpu_unavailable_reason());
  } else if (gpu_unavailable()) {
    // A child forked after its parent's start failed (a child of a started GPU decides nothing:
    // its calls are "forked child" before the policy sees them).
    snprintf(line, sizeof line, "  GPU start-up: none in this process: %s; calls stay on the CPU\n",
             gpu_unavailable_reason());
  } else if (st.not_started_calls > 0) {
    snprintf(line, sizeof line,
             "  GPU start-up: avoided (%s); %s would have gained %s on the GPU (predicted CPU time less predicted "
             "GPU time, copies included), less than the %s that justify starting it\n",
             fmt_s(st.startup_s).c_str(), calls_phrase(st.not_started_calls).c_str(), fmt_s(st.missed_savings_s).c_str(),
             fmt_s(st.start_needed_s).c_str());
  } else {
    snprintf(line, sizeof line, "  GPU start-up: avoided (%s); no call was predicted to gain from the GPU\n",
             fmt_s(st.startup_s).c_str());
  }
  out += line;
  if (st.started && gpu_started() && st.starting_calls) {
    snprintf(line, sizeof line, "  while the GPU started: %s ran on the CPU (predicted to gain %s on the GPU)\n",
             calls_phrase(st.starting_calls).c_str(), fmt_s(st.starting_missed_s).c_str());
    out += line;
  }
  if (st.started) out += start_split_line();
  if (st.offloaded > 0) {
    const double saved = st.offloaded_pred_cpu_s - st.offloaded_actual_s;
    snprintf(line, sizeof line,
             "  offloaded: %s predicted to take %s on the CPU took %s on the GPU (predicted %s): about %s "
             "%s\n",
             calls_phrase(st.offloaded).c_str(), fmt_s(st.offloaded_pred_cpu_s).c_str(),
             fmt_s(st.offloaded_actual_s).c_str(), fmt_s(st.offloaded_pred_gpu_s).c_str(),
             fmt_s(saved >= 0 ? saved : -saved).c_str(), saved >= 0 ? "saved" : "lost");
    out += line;
  }
  if (st.probes > 0) {
    snprintf(line, sizeof line, "  CPU probes: %s took %s on the CPU (predicted %s on the GPU)\n",
             calls_phrase(st.probes).c_str(), fmt_s(st.probe_actual_s).c_str(), fmt_s(st.probe_pred_gpu_s).c_str());
    out += line;
  }
  return out;
}

void add_double(std::atomic<double>& a, double v) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {
  }
}

bool any_call() {
  for (const auto& s : g_ops)
    if (s.calls[0] + s.calls[1] + s.nested + s.queries > 0) return true;
  return false;
}

// The calls counted below the threshold, per operation (already in the table above): how many, and
// their estimated time with the number of timed calls it rests on. Empty when none was counted.
std::string counted_lines() {
  std::string out;
  char line[256];
  uint64_t calls = 0, timed = 0;
  for (int i = 0; i < GOFL_N_OPS; ++i) {
    const CountedOp& k = g_counted[i];
    if (k.calls + k.nested + k.queries == 0) continue;
    if (out.empty()) {
      snprintf(line, sizeof line, "  %-10s %8s %8s %8s %11s %11s\n", "counted", "cpu", "nested", "queries",
               "cpu time s~", "timed");
      out = line;
    }
    snprintf(line, sizeof line, "  %-10s %8llu %8llu %8llu %11.4f %11llu\n", gofl_ops[i].name,
             (unsigned long long)k.calls, (unsigned long long)k.nested, (unsigned long long)k.queries,
             double(k.estimated_ns) * 1e-9, (unsigned long long)k.timed);
    out += line;
    calls += k.calls + k.nested + k.queries;
    timed += k.timed;
  }
  if (out.empty()) return out;
  snprintf(line, sizeof line,
           "  counted: %llu calls below the threshold, in the table above too; not recorded one by one, their time "
           "(~) estimated from %llu timed calls\n",
           (unsigned long long)calls, (unsigned long long)timed);
  return out + line;
}

// What --verify found, never silent: checked calls and differences, or why calls went unchecked.
std::string verify_line() {
  const uint64_t due = g_verify_due.load(), checked = verify_checked_calls(), bad = g_verify_mismatches.load();
  std::string out;
  char line[512];
  if (due == 0) return "  verify: no call the GPU can run was made; nothing to check\n";
  if (checked == 0 && gpu_unavailable()) {
    snprintf(line, sizeof line, "  verify: nothing was checked: %s; %s ran on the CPU only\n", gpu_unavailable_reason(),
             calls_phrase(due).c_str());
    return line;
  }
  snprintf(line, sizeof line, "  verify: %llu of %s checked differed beyond the tolerance", (unsigned long long)bad,
           calls_phrase(checked).c_str());
  out = line;
  if (due > checked) {
    snprintf(line, sizeof line, "; %s not checked (the GPU declined, failed or was busy: see where calls ran)",
             calls_phrase(due - checked).c_str());
    out += line;
  }
  return out + "\n";
}

}  // namespace

void summary_add(const gofl_call& c, uint64_t duration_ns) {
  OpStats& s = g_ops[c.op];
  if (c.reason < GOFL_R_COUNT) g_reasons[c.reason].fetch_add(1, std::memory_order_relaxed);
  if (c.flags & GOFL_F_VERIFY_MISMATCH) g_verify_mismatches.fetch_add(1, std::memory_order_relaxed);
  if (c.flags & GOFL_F_NESTED) { s.nested.fetch_add(1, std::memory_order_relaxed); return; }
  if (c.flags & GOFL_F_QUERY) { s.queries.fetch_add(1, std::memory_order_relaxed); return; }
  conversions_add_call(c, duration_ns);
  if (settings().verify && gofl_ops[c.op].gpu_capable) g_verify_due.fetch_add(1, std::memory_order_relaxed);
  // Verify: the GPU ran it too (the record says so), but the program got the CPU's result and the
  // call's time is mostly the CPU's: counted on the CPU, as the report does (report/analysis.cpp).
  const int d = c.device == GOFL_DEV_GPU && c.reason != GOFL_R_VERIFY ? 1 : 0;
  for (int i = 0; c.resident && i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
    if (GOFL_RESIDENCY_OF(c.resident, i) == GOFL_RES_COPIED) continue;
    g_kept_operands.fetch_add(1, std::memory_order_relaxed);
    g_kept_bytes.fetch_add(uint64_t(c.operands[i].elems) * c.operands[i].elem_size, std::memory_order_relaxed);
  }
  if (d == 1 && (c.flags & GOFL_F_CORES_HELD)) {
    g_cores_held.add(duration_ns);
  }
  if (d == 1 && (c.flags & GOFL_F_STAGED)) {
    g_staged.add(duration_ns);
  }
  if (d == 1 && (c.flags & GOFL_F_SPLIT)) {
    g_split.add(duration_ns);
  }
  s.calls[d].fetch_add(1, std::memory_order_relaxed);
  s.time_ns[d].fetch_add(duration_ns, std::memory_order_relaxed);
  add_double(s.flops[d], c.flops);
}

void summary_add_counted(const std::vector<gofl_counted_record>& counted) {
  for (const gofl_counted_record& r : counted) {
    if (r.op >= GOFL_N_OPS || r.calls == 0) continue;
    OpStats& s = g_ops[r.op];
    CountedOp& k = g_counted[r.op];
    if (r.reason < GOFL_R_COUNT) g_reasons[r.reason].fetch_add(r.calls, std::memory_order_relaxed);
    k.timed += r.timed_calls;
    if (r.flags & GOFL_F_NESTED) {
      s.nested.fetch_add(r.calls, std::memory_order_relaxed);
      k.nested += r.calls;
    } else if (r.flags & GOFL_F_QUERY) {
      s.queries.fetch_add(r.calls, std::memory_order_relaxed);
      k.queries += r.calls;
    } else {
      s.calls[0].fetch_add(r.calls, std::memory_order_relaxed);
      s.time_ns[0].fetch_add(r.estimated_ns, std::memory_order_relaxed);
      add_double(s.flops[0], r.flops);
      k.calls += r.calls;
      k.estimated_ns += r.estimated_ns;
      conversions_add_counted(r);
    }
  }
}

void summary_note_gpu_failure(int op, const char* text) {
  if (op < 0 || op >= GOFL_N_OPS) return;
  Failures& f = g_failures;
  std::lock_guard<std::mutex> lk(f.m);
  if (f.count[op]++ == 0) snprintf(f.first[op], sizeof f.first[op], "%s", text);
}

void summary_reset() {
  for (auto& s : g_ops) {
    for (int d = 0; d < 2; ++d) { s.calls[d] = 0; s.time_ns[d] = 0; s.flops[d] = 0; }
    s.nested = 0;
    s.queries = 0;
  }
  for (auto& r : g_reasons) r = 0;
  g_verify_mismatches = 0;
  g_split.reset();
  g_cores_held.reset();
  g_staged.reset();
  g_verify_due = 0;
  verify_reset();
  g_kept_operands = g_kept_bytes = 0;
  {  // called in a fork child, where another (now gone) thread may have held the mutex: start anew
    Failures& f = g_failures;
    new (&f.m) std::mutex;
    for (auto& n : f.count) n = 0;
  }
  conversions_reset();
  for (auto& c : g_counted) c = CountedOp{};
}

bool summary_any_call() { return any_call(); }

void summary_print_verify(int fd) {
  if (!any_call()) return;
  const std::string out = "gpu-offload" + verify_line().substr(1);  // "gpu-offload verify: ..."
  ssize_t ignored = write(fd, out.data(), out.size());
  (void)ignored;
}

void summary_print(int fd) {
  if (!any_call()) return;  // a helper process (shell, pyenv shim) that made no calls stays silent
  std::string out;
  char line[768];
  const Settings& st = settings();
  // A rank of a parallel launch says which: the ranks' summaries arrive interleaved.
  const LocalRank rank = find_local_rank([](const char* n) -> const char* { return secure_getenv(n); });
  const std::string rank_text =
      rank.variable ? ", local rank " + std::to_string(rank.rank) + " (" + rank.variable + ")" : std::string();
  snprintf(line, sizeof line, "gpu-offload summary (pid %d%s, device %s, level %d, profile %s)\n", int(getpid()),
           rank_text.c_str(), device_mode_name(st.device), st.level, active_profile_label().c_str());
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
  out += counted_lines();
  std::string reasons;
  for (int r = 0; r < GOFL_R_COUNT; ++r) {
    if (!g_reasons[r]) continue;
    snprintf(line, sizeof line, "%s%s %llu", reasons.empty() ? "" : ", ", gofl_reason_name(r),
             (unsigned long long)g_reasons[r].load());
    reasons += line;
  }
  if (!reasons.empty()) out += "  where calls ran and why: " + reasons + "\n";
  out += failure_line();
  if (const gofl_gpu_device* g = gpu_device()) {
    snprintf(line, sizeof line, "  GPU: %d of %d, %s (PCI %s), chosen as %s\n", g->index, g->count, g->name, g->bus_id,
             g->chosen_by);
    out += line;
  }
  if (g_split.calls) {
    snprintf(line, sizeof line, "  split over %d GPUs in one call (--split %s): %llu calls, %.3f s\n", gpu_split_gpus(),
             split_mode_name(st.split), (unsigned long long)g_split.calls.load(), double(g_split.ns.load()) * 1e-9);
    out += line;
  }
  out += policy_lines();  // GPU start-up paid or avoided, predicted time saved
  out += warm_line();
  out += spare_line();
  out += g_cores_held.line("beside the program's own CPU calls on other threads",
                           "copied on their own thread, the cores being taken");
  {
    uint64_t in_ns = 0, out_ns = 0;
    gpu_staged_copies_ns(&in_ns, &out_ns);
    char tail[256];
    snprintf(tail, sizeof tail,
             "copied their operands into their thread's pinned buffer before taking the GPU, while other threads' "
             "calls held it or the cores (%.3f s), and their results out of it after giving it back (%.3f s)",
             double(in_ns) * 1e-9, double(out_ns) * 1e-9);
    out += g_staged.line("staged", tail);
  }
  if (const GpuLine::Tally l = gpu_line_tally(); l.waited || l.gave_up || l.not_joined) {
    char served[160] = "";
    if (l.served)  // GPU_OFFLOAD_LINE_SERVES
      snprintf(served, sizeof served, "; %llu of them run by the thread holding the GPU, %.3f s",
               (unsigned long long)l.served, double(l.served_ns) * 1e-9);
    snprintf(line, sizeof line,
             "  GPU line: held %.3f s by %llu calls (%.3f s of it handing the GPU to a waiting call until that call "
             "ran, %.3f s running the calls in the backend); %llu waited for other threads' calls (%.3f s in line%s), %llu gave up "
             "after %.3f s and %llu did not wait (the calls ahead would have held it longer than they could gain): "
             "those ran on the CPU (GPU held)\n",
             double(l.held_ns) * 1e-9, (unsigned long long)l.holds, double(l.handover_ns) * 1e-9,
             double(gpu_runs_in_holds_ns()) * 1e-9,
             (unsigned long long)l.waited, double(l.waited_ns) * 1e-9, served, (unsigned long long)l.gave_up,
             double(l.gave_up_ns) * 1e-9, (unsigned long long)l.not_joined);
    out += line;
  }
  out += conversions_line();
  if (gpu_started()) {
    char info[256] = "";
    gpu_backend()->residency_info(info, sizeof info);
    const double kb = double(g_kept_bytes.load());
    snprintf(line, sizeof line, "  residency: %llu operand copies avoided (%.1f MB, about %.1f ms of copying by the profile); %s\n",
             (unsigned long long)g_kept_operands.load(), kb / 1e6,
             kb > 0 ? predicted_copy_in_seconds(kb) * 1e3 : 0.0, info);
    out += line;
  }
  if (st.verify || g_verify_mismatches) out += verify_line();
  ssize_t ignored = write(fd, out.data(), out.size());
  (void)ignored;
}

}  // namespace gofl
