#include "report/conversions.h"

#include <string.h>

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

bool is_copy(int op) { return strcmp(gofl_ops[op].routine, "copy") == 0; }

// NumPy's or SciPy's own ?copy (their conversion to Fortran order and back), not a program's own.
bool converting_copy(const TimedCall& t) { return is_copy(t.op) && converting_module(*t.module); }

// One thread's calls in time order.
void account_thread(const std::vector<const TimedCall*>& calls, Conversions& c) {
  AroundLapack* last_lapack = nullptr;  // the thread's latest LAPACK call's row, while its copies-back slot is open
  std::vector<Run> pending;             // runs since then, waiting for the next LAPACK call
  Run run;
  bool in_run = false;
  bool after_copy = false;              // the thread's previous call was a converting copy
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
    // Across counted calls the time since the previous record is not time outside any call.
    const uint64_t since = !t->after_counted && prev_end && t->t_start_ns > prev_end ? t->t_start_ns - prev_end : 0;
    const bool right_after_copy = after_copy && !t->after_counted;
    after_copy = false;
    if (kind == GOFL_KIND_BLAS1 && converting_copy(*t)) {
      // The calls' own time: between them is NumPy's loop (nanoseconds) and, while tracing, the
      // library's own recording of each call (about 0.5 us), which is not the program's cost.
      const uint64_t ns = t->duration_ns;
      in_run = true;
      ++run.copies;
      run.span_ns += ns;
      run.modules[*t->module] += ns;
      after_copy = true;
    } else {
      close_run();
      if (kind == GOFL_KIND_LAPACK) {
        AroundLapack& row = c.around[{t->op, *t->module}];
        ++row.calls;
        row.in_call_ns += t->duration_ns;
        const uint64_t cap = right_after_copy ? conversion_cap_ns(t->in_bytes) : 0;
        row.gap_ns += std::min(since, cap);
        row.beyond_cap_ns += since - std::min(since, cap);
        for (const Run& r : pending) add_run(row, r);
        pending.clear();
        last_lapack = &row;
      } else {  // another BLAS call (a program's own copy too) or a transform: the copies before it were not for LAPACK
        pending.clear();
        last_lapack = nullptr;
      }
    }
    prev_end = std::max(prev_end, t->t_start_ns + t->duration_ns);
  }
  close_run();
}

// Counted calls: the LAPACK ones into their rows; a module's converting copies shared among the rows of
// the LAPACK calls that module made (NumPy's _umath_linalg copies around its own calls), by calls.
void account_counted(const std::vector<CountedCalls>& counted, Conversions& c) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> copies;  // module -> calls, ns
  for (const CountedCalls& k : counted) {
    if (gofl_ops[k.op].kind == GOFL_KIND_LAPACK) {
      AroundLapack& row = c.around[{k.op, *k.module}];
      row.calls += k.calls;
      row.in_call_ns += k.ns;
    } else if (is_copy(k.op) && converting_module(*k.module)) {
      c.copies += k.calls;
      c.copy_ns += k.ns;
      copies[*k.module].first += k.calls;
      copies[*k.module].second += k.ns;
    }
  }
  for (const auto& [module, n] : copies) {
    std::vector<AroundLapack*> rows;
    uint64_t lapack_calls = 0;
    for (auto& [key, row] : c.around)
      if (key.second == module) rows.push_back(&row), lapack_calls += row.calls;
    uint64_t calls_left = n.first, ns_left = n.second;
    for (size_t i = 0; i < rows.size(); ++i) {
      const bool last = i + 1 == rows.size();
      const double share = double(rows[i]->calls) / double(lapack_calls);
      const uint64_t calls = last ? calls_left : std::min(calls_left, uint64_t(double(n.first) * share + 0.5));
      const uint64_t ns = last ? ns_left : std::min(ns_left, uint64_t(double(n.second) * share + 0.5));
      rows[i]->copies += calls;
      rows[i]->copy_ns += ns;
      rows[i]->copiers[module] += ns;
      calls_left -= calls;
      ns_left -= ns;
    }
  }
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

void account_conversions(std::vector<TimedCall>& calls, const std::vector<CountedCalls>& counted, Conversions& c) {
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
  account_counted(counted, c);
}

std::string library_label(const std::string& module_path) {
  const std::string lib = library_of_module(module_path);
  if (!lib.empty()) return lib;
  const size_t slash = module_path.rfind('/');
  return module_path.empty() ? "unknown module" : slash == std::string::npos ? module_path : module_path.substr(slash + 1);
}

}  // namespace gofl::cli
