#include "report/conversions.h"

#include <algorithm>

#include "common/conversions.h"
#include "common/table.h"

namespace gofl::cli {
namespace {

struct Run {
  uint64_t copies = 0, span_ns = 0;
  std::map<std::string, uint64_t> modules;
};

void add_run(AroundLapack& to, const Run& r) {
  to.copies += r.copies;
  to.copy_ns += r.span_ns;
  for (const auto& [m, ns] : r.modules) to.copiers[m] += ns;
}

// One thread's calls in time order.
void account_thread(const std::vector<const TimedCall*>& calls, Conversions& c) {
  AroundLapack* last_lapack = nullptr;  // the thread's latest LAPACK call's row, while its copies-back slot is open
  std::vector<Run> pending;             // runs since then, waiting for the next LAPACK call
  Run run;
  bool in_run = false;
  uint64_t prev_end = 0;
  auto close_run = [&] {
    if (!in_run) return;
    in_run = false;
    c.copies += run.copies;
    c.copy_ns += run.span_ns;
    if (last_lapack) {
      add_run(*last_lapack, run);
      last_lapack = nullptr;
    } else {
      pending.push_back(run);
    }
    run = Run{};
  };
  for (const TimedCall* t : calls) {
    const gofl_kind kind = gofl_ops[t->op].kind;
    const uint64_t since = prev_end && t->t_start_ns > prev_end ? t->t_start_ns - prev_end : 0;
    if (kind == GOFL_KIND_BLAS1) {
      // The calls' own time: between them is NumPy's loop (nanoseconds) and, while tracing, the
      // library's own recording of each call (about 0.5 us), which is not the program's cost.
      const uint64_t ns = t->duration_ns;
      in_run = true;
      ++run.copies;
      run.span_ns += ns;
      run.modules[*t->module] += ns;
    } else {
      close_run();
      if (kind == GOFL_KIND_LAPACK) {
        AroundLapack& row = c.around[{t->op, *t->module}];
        ++row.calls;
        row.in_call_ns += t->duration_ns;
        const uint64_t cap = conversion_cap_ns(t->in_bytes);
        row.gap_ns += std::min(since, cap);
        row.beyond_cap_ns += since - std::min(since, cap);
        for (const Run& r : pending) add_run(row, r);
        pending.clear();
        last_lapack = &row;
      } else {  // another BLAS call or a transform between: the copies before it were not for LAPACK
        pending.clear();
        last_lapack = nullptr;
      }
    }
    prev_end = std::max(prev_end, t->t_start_ns + t->duration_ns);
  }
  close_run();
}

}  // namespace

AroundLapack Conversions::total() const {
  AroundLapack t;
  for (const auto& [key, r] : around) {
    t.calls += r.calls;
    t.in_call_ns += r.in_call_ns;
    t.copies += r.copies;
    t.copy_ns += r.copy_ns;
    t.gap_ns += r.gap_ns;
    t.beyond_cap_ns += r.beyond_cap_ns;
    for (const auto& [m, ns] : r.copiers) t.copiers[m] += ns;
  }
  return t;
}

void account_conversions(std::vector<TimedCall>& calls, Conversions& c) {
  std::sort(calls.begin(), calls.end(), [](const TimedCall& x, const TimedCall& y) {
    if (x.tid != y.tid) return x.tid < y.tid;
    return x.t_start_ns != y.t_start_ns ? x.t_start_ns < y.t_start_ns : x.order < y.order;
  });
  std::vector<const TimedCall*> thread;
  for (size_t i = 0; i < calls.size(); ++i) {
    thread.push_back(&calls[i]);
    if (i + 1 == calls.size() || calls[i + 1].tid != calls[i].tid) {
      account_thread(thread, c);
      thread.clear();
    }
  }
}

std::string library_label(const std::string& module_path) {
  const std::string lib = library_of_module(module_path);
  if (!lib.empty()) return lib;
  const size_t slash = module_path.rfind('/');
  return module_path.empty() ? "unknown module" : slash == std::string::npos ? module_path : module_path.substr(slash + 1);
}

}  // namespace gofl::cli
