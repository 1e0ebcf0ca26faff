// The terminal view of `gpu-offload report`: what the traced programs asked of BLAS/LAPACK/FFTW,
// where the time went and from which call sites, where the calls ran and why, the GPU side (copies,
// failures, verify), how well the cost model predicted, and what copying unchanged data left on the
// GPU would have saved. Its tables are the HTML view's too (html_view.cpp).
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/table.h"
#include "report/names.h"
#include "report/text.h"
#include "report/views.h"

namespace gofl::cli {

std::string format_percent(double part, double whole) {
  char buf[16];
  snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

std::string format_bytes(double bytes) {
  const std::string s = format_si(bytes);
  return s + (s.back() >= '0' && s.back() <= '9' ? " B" : "B");
}

std::string format_ratio(double r) {
  char buf[32];
  snprintf(buf, sizeof buf, r >= 99.5 ? "%.0f" : r >= 9.95 ? "%.1f" : r >= 0.995 ? "%.2f" : "%.2g", r);
  return buf;
}

namespace {

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}

std::string plural(uint64_t n, const char* what) { return format_count(n) + " " + what + (n == 1 ? "" : "s"); }

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

// "dgemm 3, dsyrk 1": the operations of a group, most calls first, at most `n` of them.
std::string top_ops(const std::map<int, uint64_t>& ops, size_t n) {
  std::vector<std::pair<uint64_t, int>> v;
  for (const auto& [op, calls] : ops) v.push_back({calls, op});
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : strcmp(gofl_ops[a.second].name, gofl_ops[b.second].name) < 0;
  });
  std::string out;
  for (size_t i = 0; i < v.size() && i < n; ++i)
    out += (out.empty() ? "" : ", ") + std::string(gofl_ops[v[i].second].name) + " " + format_count(v[i].first);
  if (v.size() > n) out += ", ...";
  return out;
}

void print_summary(const Analysis& a) {
  printf("\nIn short\n");
  for (const std::string& line : report_summary(a)) {
    // Wrapped at about 100 columns, continuation lines indented under the text.
    std::string rest = line;
    const char* lead = "  - ";
    while (!rest.empty()) {
      size_t cut = rest.size();
      if (cut > 96) {
        cut = rest.rfind(' ', 96);
        if (cut == std::string::npos || cut == 0) cut = 96;
      }
      printf("%s%s\n", lead, rest.substr(0, cut).c_str());
      rest = rest.substr(std::min(rest.size(), cut + (cut < rest.size() && rest[cut] == ' ' ? 1 : 0)));
      lead = "    ";
    }
  }
}

void print_table(const ReportTable& t) {
  printf("\n%s\n", t.title.c_str());
  if (!t.headers.empty()) {
    TextTable table(t.headers, t.left);
    for (const auto& r : t.rows) {
      if (r.empty()) table.add_rule();
      else table.add_row(r);
    }
    table.print(stdout);
  }
  for (const std::string& n : t.notes) printf("  %s\n", n.c_str());
}

// min / median / max of the calls' largest dimensions (dimension -> calls).
std::string size_range(const std::map<int64_t, uint64_t>& v) {
  if (v.empty()) return "";
  uint64_t n = 0;
  for (const auto& [dim, calls] : v) n += calls;
  int64_t median = v.begin()->first;
  uint64_t seen = 0;
  for (const auto& [dim, calls] : v) {
    seen += calls;
    if (seen > n / 2) {
      median = dim;
      break;
    }
  }
  return std::to_string(v.begin()->first) + " / " + std::to_string(median) + " / " + std::to_string(v.rbegin()->first);
}

// A time that rests partly on calls counted below the threshold is estimated: marked "~".
std::string time_cell(uint64_t ns, uint64_t counted) { return format_seconds(ns * 1e-9) + (counted ? " ~" : ""); }

// The note under a table with "~" cells, or nothing.
void counted_note(const OpStats& total, std::vector<std::string>* notes) {
  if (!total.counted) return;
  notes->push_back("~: includes " + plural(total.counted, "call") +
                   " counted below the threshold, not recorded one by one (sizes: the first of each call site and "
                   "size class); their time is estimated from " + plural(total.counted_timed, "timed call") + ".");
}

std::string rate(double flops, uint64_t ns) {
  if (!ns || flops <= 0) return "";
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f", flops / double(ns));  // flops per ns = GFLOP/s
  return buf;
}

std::string seconds_or_blank(double s) { return s > 0 ? format_seconds(s) : ""; }

std::string format_error(double e) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3g", e);
  return buf;
}

// Operations by the time of the application's own calls, then calls, then name.
std::vector<std::pair<int, const OpStats*>> sorted_ops(const Analysis& a) {
  std::vector<std::pair<int, const OpStats*>> ops;
  for (const auto& [op, s] : a.ops) ops.push_back({op, &s});
  std::sort(ops.begin(), ops.end(), [](const auto& x, const auto& y) {
    if (x.second->time_ns != y.second->time_ns) return x.second->time_ns > y.second->time_ns;
    if (x.second->calls != y.second->calls) return x.second->calls > y.second->calls;
    return strcmp(gofl_ops[x.first].name, gofl_ops[y.first].name) < 0;
  });
  return ops;
}

ReportTable ops_table(const Analysis& a) {
  const OpStats total = a.total();
  ReportTable t;
  t.id = "operations";
  t.title = "Operations (sorted by time of the application's own calls)";
  t.headers = {"operation", "calls", "on gpu", "nested", "queries", "time", "share", "flops", "GFLOP/s",
               "largest dim min / median / max"};
  auto row = [&](const std::string& name, const OpStats& s, bool sizes) {
    const bool own = s.calls > 0;  // only nested calls or queries: no time or work of its own
    t.rows.push_back({name, format_count(s.calls), format_count(s.gpu_calls), format_count(s.nested),
                      format_count(s.queries), own ? time_cell(s.time_ns, s.counted) : "",
                      own ? format_percent(double(s.time_ns), double(total.time_ns)) : "",
                      own ? format_si(s.flops) : "", rate(s.flops, s.time_ns), sizes ? size_range(s.largest_dim) : ""});
  };
  for (const auto& [op, s] : sorted_ops(a)) row(gofl_ops[op].name, *s, true);
  t.rows.emplace_back();
  row("total", total, false);
  counted_note(total, &t.notes);
  return t;
}

ReportTable devices_table(const Analysis& a) {
  const OpStats total = a.total();
  ReportTable t;
  t.id = "devices";
  if (total.dev[1].calls == 0 && total.gpu_timed_calls == 0) {
    t.title = "By device: every call ran on the CPU (the reasons are below)";
    return t;
  }
  t.title = "By device (the application's own calls; GPU phases as the backend measured them)";
  t.headers = {"operation", "cpu calls", "cpu time", "gpu calls", "gpu time", "copy in", "compute", "copy out",
               "copied in", "in GB/s", "copy share"};
  auto row = [&](const std::string& name, const OpStats& s) {
    const double copies = s.copy_in_s + s.copy_out_s;
    t.rows.push_back({name, format_count(s.dev[0].calls), s.dev[0].ns ? time_cell(s.dev[0].ns, s.counted) : "",
                      format_count(s.dev[1].calls), seconds_or_blank(s.dev[1].ns * 1e-9), seconds_or_blank(s.copy_in_s),
                      seconds_or_blank(s.compute_s), seconds_or_blank(s.copy_out_s),
                      s.bytes_in > 0 ? format_bytes(s.bytes_in) : "",
                      s.copy_in_s > 0 && s.bytes_in > 0 ? format_ratio(s.bytes_in / s.copy_in_s * 1e-9) : "",
                      copies > 0 && s.gpu_wall_s > 0 ? format_percent(copies, s.gpu_wall_s) : ""});
  };
  for (const auto& [op, s] : sorted_ops(a))
    if (s->calls) row(gofl_ops[op].name, *s);
  t.rows.emplace_back();
  row("total", total);
  t.notes = {"copy share: copy in + copy out as a share of the GPU calls' time. Verify-mode calls count as",
             "CPU calls (the program got the CPU result) but their GPU phases are included."};
  return t;
}

bool sites_table(const Analysis& a, long top, ReportTable* t) {
  if (top <= 0 || a.sites.empty()) return false;
  std::vector<const SiteStats*> sites;
  uint64_t total_ns = 0;
  for (const auto& [key, s] : a.sites) {
    sites.push_back(&s);
    total_ns += s.time_ns;
  }
  std::sort(sites.begin(), sites.end(), [](const SiteStats* x, const SiteStats* y) {
    if (x->time_ns != y->time_ns) return x->time_ns > y->time_ns;
    return x->label < y->label;
  });
  t->id = "sites";
  t->title = "Busiest call sites (top " + std::to_string(std::min<long>(top, long(sites.size()))) + " of " +
             std::to_string(sites.size()) + " by time)";
  t->headers = {"call site", "calls", "time", "share", "operations"};
  t->left = {true, false, false, false, true};
  bool estimated = false;
  for (size_t i = 0; i < sites.size() && long(i) < top; ++i) {
    std::string ops;
    for (int op : sites[i]->ops) ops += std::string(ops.empty() ? "" : " ") + gofl_ops[op].name;
    t->rows.push_back({sites[i]->label, format_count(sites[i]->calls), time_cell(sites[i]->time_ns, sites[i]->counted),
                       format_percent(double(sites[i]->time_ns), double(total_ns)), ops});
    estimated = estimated || sites[i]->counted;
  }
  if (estimated)
    t->notes.push_back("~: the site's calls include calls counted below the threshold; their time is estimated.");
  return true;
}

ReportTable reasons_table(const Analysis& a) {
  std::vector<std::pair<std::pair<int, int>, const ReasonStats*>> rs;
  for (const auto& [key, s] : a.reasons) rs.push_back({key, &s});
  std::sort(rs.begin(), rs.end(), [](const auto& x, const auto& y) {
    if (x.second->calls != y.second->calls) return x.second->calls > y.second->calls;
    return x.first < y.first;
  });
  ReportTable t;
  t.id = "reasons";
  t.title = "Where calls ran and why (all calls; time of the application's own calls)";
  t.headers = {"device", "reason", "calls", "time", "operations"};
  t.left = {true, true, false, false, true};
  for (const auto& [key, s] : rs)
    t.rows.push_back({device_name(key.first), gofl_reason_name(key.second), format_count(s->calls),
                      s->time_ns ? format_seconds(s->time_ns * 1e-9) : "", top_ops(s->ops, 4)});
  counted_note(a.total(), &t.notes);
  return t;
}

bool failures_table(const Analysis& a, ReportTable* t) {
  if (a.failures.empty()) return false;
  uint64_t n = 0;
  for (const auto& [key, f] : a.failures) n += f.calls;
  t->id = "failures";
  t->title =
      "GPU attempts that failed (" + plural(n, "call") + "; the CPU library ran them, the results are the CPU's)";
  t->headers = {"failure", "code", "error", "calls", "operations"};
  t->left = {true, false, false, false, true};
  for (const auto& [key, f] : a.failures)
    t->rows.push_back({gofl_gpu_status_name(key.first), std::to_string(key.first), std::to_string(key.second),
                       format_count(f.calls), top_ops(f.ops, 4)});
  return true;
}

bool verify_table(const Analysis& a, ReportTable* t) {
  const VerifyStats& v = a.verify;
  if (v.calls == 0) return false;
  t->id = "verify";
  t->title = "Verify mode: " + format_count(v.calls) + " calls ran on both devices; " + format_count(v.mismatches) +
             " mismatch" + (v.mismatches == 1 ? "" : "es") + " beyond the tolerance";
  t->notes = {"tolerance: 2e-3 single, 1e-8 double, relative to the largest value; largest difference seen " +
              format_error(v.worst_any)};
  if (v.groups.empty()) return true;
  std::vector<std::pair<const std::tuple<int, int64_t, int64_t, int64_t>*, const MismatchGroup*>> g;
  for (const auto& [key, m] : v.groups) g.push_back({&key, &m});
  std::sort(g.begin(), g.end(), [](const auto& x, const auto& y) { return x.second->worst > y.second->worst; });
  t->headers = {"operation", "m", "n", "k", "mismatches", "worst error"};
  for (size_t i = 0; i < g.size() && i < 20; ++i) {
    const auto& [op, m, n, k] = *g[i].first;
    t->rows.push_back({gofl_ops[op].name, std::to_string(m), std::to_string(n), std::to_string(k),
                       format_count(g[i].second->calls), format_error(g[i].second->worst)});
  }
  if (g.size() > 20) t->notes.push_back("... and " + std::to_string(g.size() - 20) + " more shapes");
  return true;
}

ReportTable model_table(const Analysis& a) {
  ReportTable t;
  t.id = "model";
  std::vector<float> r[2] = {a.model.ratio[0], a.model.ratio[1]};
  if (r[0].empty() && r[1].empty()) {
    t.title = "Cost model: no profile predictions in this trace";
    t.notes = {"(calls below the decision threshold, and runs with --device cpu or gpu, are not predicted)"};
    return t;
  }
  t.title = "Cost model accuracy (observed / predicted time of each call; 1 is exact, 2 twice as slow as predicted)";
  t.headers = {"device", "calls", "median", "10%", "90%", "within 2x"};
  for (int d = 0; d < 2; ++d) {
    if (r[d].empty()) continue;
    size_t within = 0;
    for (float x : r[d]) within += x >= 0.5f && x <= 2.0f;
    const size_t n = r[d].size();
    t.rows.push_back({device_name(d), format_count(n), format_ratio(quantile(r[d], 0.5)),
                      format_ratio(quantile(r[d], 0.1)), format_ratio(quantile(r[d], 0.9)),
                      format_percent(double(within), double(n))});
  }
  return t;
}

std::string crossover_words(const Crossover& x) {
  return x.kind == Crossover::kGpuAlways   ? "GPU predicted faster at every traced size"
         : x.kind == Crossover::kCpuAlways ? "CPU predicted faster at every traced size"
                                           : "about " + format_si(x.flops) + "flop";
}

bool crossover_table(const Analysis& a, ReportTable* t) {
  if (a.crossovers.empty()) return false;
  t->id = "crossover";
  t->title = a.crossover_source == "trace"
                 ? "Predicted CPU/GPU crossover (from the cost model's predictions recorded in the trace)"
                 : "Predicted CPU/GPU crossover (profile " + a.crossover_source + ", at the traced calls' sizes)";
  if (!a.profile_note.empty()) t->notes.push_back("The profile was not used: " + a.profile_note + ".");
  t->notes.push_back("Crossover: the work where the predicted GPU time (copies included) falls below the CPU's; "
                     "the decision also asks for the level's speedup.");
  t->headers = {"operation", "calls", "crossover"};
  t->left = {true, false, true};
  for (size_t i = 0; i < a.crossovers.size() && i < 8; ++i) {
    const Crossover& x = a.crossovers[i];
    t->rows.push_back({gofl_ops[x.op].name, format_count(x.calls), crossover_words(x)});
  }
  return true;
}

ReportTable avoidable_table(const Analysis& a) {
  const OpStats tot = a.total();
  ReportTable t;
  t.id = "avoidable";
  t.title = "Copying avoided by keeping data on the GPU, and what unchanged data still cost";
  if (tot.gpu_walk_calls == 0 && tot.cpu_walk_calls == 0) {
    t.notes = {"no GPU-capable calls were traced"};
    return t;
  }
  t.headers = {"operation", "calls", "inputs", "avoided", "still avoidable", "share", "time"};
  auto row = [&](const std::string& name, uint64_t calls, double in, double avoided, double avoid, double secs) {
    t.rows.push_back({name, format_count(calls), format_bytes(in), avoided >= 0 ? format_bytes(avoided) : "-",
                      format_bytes(avoid), format_percent(avoid, in), avoid > 0 ? format_seconds(secs) : ""});
  };
  const auto ops = sorted_ops(a);
  if (tot.gpu_walk_calls) {
    t.rows.push_back({"ran on the GPU:"});
    for (const auto& [op, s] : ops)
      if (s->gpu_walk_calls)
        row("  " + std::string(gofl_ops[op].name), s->gpu_walk_calls, s->gpu_in_bytes, s->gpu_avoided_bytes,
            s->gpu_avoidable_bytes, s->gpu_avoidable_s);
    row("  total", tot.gpu_walk_calls, tot.gpu_in_bytes, tot.gpu_avoided_bytes, tot.gpu_avoidable_bytes,
        tot.gpu_avoidable_s);
  }
  if (tot.cpu_walk_calls) {
    if (tot.gpu_walk_calls) t.rows.emplace_back();
    t.rows.push_back({"GPU-capable, ran on the CPU (if offloaded):"});
    for (const auto& [op, s] : ops)
      if (s->cpu_walk_calls)
        row("  " + std::string(gofl_ops[op].name), s->cpu_walk_calls, s->cpu_in_bytes, -1, s->cpu_avoidable_bytes,
            s->cpu_avoidable_s);
    row("  total", tot.cpu_walk_calls, tot.cpu_in_bytes, -1, tot.cpu_avoidable_bytes, tot.cpu_avoidable_s);
  }
  char rate[64];
  snprintf(rate, sizeof rate, "%.1f GB/s", a.copy_bytes_per_s * 1e-9);
  t.notes = {
      "Avoided: inputs a device copy kept from an earlier call served (residency; the trace records it).",
      "Still avoidable: inputs copied although the GPU had held their buffer (same address and size) with the",
      "same content fingerprint from an earlier call of the process. Fingerprints sample 8 words: an estimate.",
      a.copy_rate_source == Analysis::kMeasured
          ? std::string("Time: at each GPU call's measured copy-in rate (") + rate + " over all traced GPU calls)."
      : a.copy_rate_source == Analysis::kProfile ? std::string("Time: at the host-to-GPU rate of the profile (") +
                                                       rate + "); no traced GPU call measured a copy."
                                                 : std::string("Time: at an assumed ") + rate +
                                                       " (the pinned link rate); no traced GPU call measured a copy."};
  return t;
}

// The reason that kept the most top-level time on the CPU (the application's own calls).
const std::pair<const std::pair<int, int>, ReasonStats>* main_cpu_reason(const Analysis& a) {
  const std::pair<const std::pair<int, int>, ReasonStats>* best = nullptr;
  for (const auto& kv : a.reasons)
    if (kv.first.first == GOFL_DEV_CPU && kv.first.second != GOFL_R_VERIFY && kv.second.time_ns &&
        (!best || kv.second.time_ns > best->second.time_ns))
      best = &kv;
  return best;
}

}  // namespace

std::vector<ReportTable> report_tables(const Analysis& a, long top) {
  std::vector<ReportTable> out;
  out.push_back(ops_table(a));
  out.push_back(devices_table(a));
  ReportTable t;
  if (sites_table(a, top, &t)) out.push_back(std::move(t));
  out.push_back(reasons_table(a));
  if (ReportTable f; failures_table(a, &f)) out.push_back(std::move(f));
  if (ReportTable v; verify_table(a, &v)) out.push_back(std::move(v));
  if (ReportTable c; conversions_table(a, &c)) out.push_back(std::move(c));
  out.push_back(model_table(a));
  if (ReportTable x; crossover_table(a, &x)) out.push_back(std::move(x));
  out.push_back(avoidable_table(a));
  return out;
}

std::vector<std::pair<std::string, std::string>> report_facts(const Analysis& a, size_t program_width) {
  std::vector<std::pair<std::string, std::string>> f;
  f.push_back({"files", std::to_string(a.files)});
  f.push_back({"processes", std::to_string(a.processes.size()) + " on " + join(a.hosts)});
  // The most frequent programs first; a long list is cut, it is context, not data.
  std::vector<std::pair<int, std::string>> progs;
  for (const auto& [cmd, n] : a.programs) progs.push_back({-n, cmd});
  std::sort(progs.begin(), progs.end());
  for (size_t i = 0; i < progs.size() && i < 5; ++i)
    f.push_back({i == 0 ? "programs" : "", shorten(progs[i].second, program_width) + " (" +
                                               std::to_string(-progs[i].first) + " process" +
                                               (progs[i].first == -1 ? ")" : "es)")});
  if (progs.size() > 5) f.push_back({"", "... and " + std::to_string(progs.size() - 5) + " more"});
  f.push_back({"device", join(a.device_modes)});
  f.push_back({"level", join(a.levels)});
  f.push_back({"profile", join(a.profiles)});
  const time_t secs = time_t(a.first_realtime_ns / 1000000000ull);
  char when[64];
  struct tm tm;
  if (localtime_r(&secs, &tm) && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm))
    f.push_back({"traced", std::string(when) + " (the first trace file opened)"});
  return f;
}

std::vector<std::string> report_summary(const Analysis& a) {
  std::vector<std::string> out;
  const OpStats t = a.total();
  const double total_s = t.time_ns * 1e-9, gpu_s = t.dev[1].ns * 1e-9;
  if (t.calls == 0) {
    out.push_back("No call of the application's own was traced (only nested calls or workspace queries).");
    return out;
  }
  out.push_back(plural(t.calls, "BLAS/LAPACK call") + " of the application's own took " + format_seconds(total_s) +
                "; " +
                (t.dev[1].calls ? format_count(t.dev[1].calls) + " of them ran on the GPU (" + format_seconds(gpu_s) +
                                      ", " + format_percent(gpu_s, total_s) + " of that time)."
                                : "none ran on the GPU."));
  if (std::string conv = conversion_summary(a); !conv.empty()) out.push_back(std::move(conv));
  if (a.model.gpu_calls_with_cpu_pred) {
    const double pc = a.model.gpu_pred_cpu_s, obs = a.model.gpu_observed_s;
    std::string verdict = pc >= obs ? "about " + format_ratio(pc / obs) + "x faster on the GPU, " +
                                          format_seconds(pc - obs) + " saved"
                                    : "about " + format_ratio(obs / pc) + "x slower on the GPU, " +
                                          format_seconds(obs - pc) + " lost";
    out.push_back("For the " + plural(a.model.gpu_calls_with_cpu_pred, "GPU call") + " the model predicted " +
                  format_seconds(pc) + " on the CPU; they took " + format_seconds(obs) + ": " + verdict + ".");
  } else if (t.dev[1].calls) {
    out.push_back("No CPU predictions for the GPU calls in this trace, so their saving is not known.");
  }
  if (a.profile_verdict.calls >= 0.5) {
    const ProfileVerdict& v = a.profile_verdict;
    out.push_back("The profile " + a.crossover_source + " predicts the GPU faster for CPU calls that took " +
                  format_seconds(v.cpu_s) + " (" + format_percent(v.cpu_s, total_s) + " of the time, about " +
                  plural(uint64_t(v.calls + 0.5), "call") + "): about " + format_seconds(v.pred_gpu_s) +
                  " there, copies included, against " + format_seconds(v.pred_cpu_s) +
                  " it predicts on the CPU, a predicted gain of " + format_seconds(v.pred_cpu_s - v.pred_gpu_s) +
                  " (the summary's basis: predicted CPU time less predicted GPU time, start-up not included). "
                  "'gpu-offload estimate' replays the whole decision.");
  }
  if (a.starts.empty() && !a.gpu_absent.empty()) {
    std::string why;
    for (const std::string& m : a.gpu_absent) why += (why.empty() ? "" : "; ") + m;
    out.push_back("No GPU could have been used in this run: " + why + ". Every call ran on the CPU.");
  }
  if (!a.starts.empty()) {
    double ok_s = 0, waited_s = 0;
    size_t ok_n = 0;
    const GpuStart* failed = nullptr;
    for (const GpuStart& s : a.starts) {
      if (s.ok) ok_s += s.seconds, waited_s += s.waited_s, ++ok_n;
      else if (!failed) failed = &s;
    }
    const std::string beside = waited_s < ok_s - 5e-4 ? " (the program waited " + format_seconds(waited_s) +
                                                            " of it: the rest ran beside the calls)"
                                                      : ", on top of the calls' times";
    if (ok_n)
      out.push_back("Starting the GPU (loading the backend, starting the CUDA driver, making the context) took " + format_seconds(ok_s) +
                    (ok_n > 1 ? " in " + format_count(ok_n) + " processes" : std::string()) + beside +
                    (a.starts.size() > ok_n ? "; " + plural(a.starts.size() - ok_n, "start") + " failed" : "") + ".");
    else
      out.push_back("The GPU could not be started (" + failed->message + "): every call ran on the CPU.");
    if (ok_n && !a.start_phases.empty()) {
      std::vector<std::pair<double, int>> by_time;
      for (const auto& [phase, sec] : a.start_phases) by_time.emplace_back(-sec, phase);
      std::sort(by_time.begin(), by_time.end());
      std::string list;
      for (const auto& [neg, phase] : by_time)
        list += (list.empty() ? "" : ", ") + std::string(gofl_setup_phase_name(phase)) + " " + format_seconds(-neg);
      out.push_back("The start-up went to: " + list + " ('gpu-offload dump --starts' per process).");
    }
    // Each routine's first GPU call: what it took in all, and what it set up.
    double first_s = 0;
    std::vector<std::pair<double, int>> firsts;
    for (const auto& [op, phases] : a.first_calls) {
      const auto it = phases.find(GOFL_SP_FIRST_CALL);
      if (it == phases.end()) continue;
      first_s += it->second;
      firsts.emplace_back(-it->second, op);
    }
    if (!firsts.empty()) {
      std::sort(firsts.begin(), firsts.end());
      std::string list;
      for (size_t i = 0; i < firsts.size() && i < 5; ++i) {
        const auto& phases = a.first_calls.at(firsts[i].second);
        std::string set_up;
        for (const auto& [phase, sec] : phases)
          if (phase != GOFL_SP_FIRST_CALL)
            set_up += (set_up.empty() ? "" : ", ") + std::string(gofl_setup_phase_name(phase)) + " " + format_seconds(sec);
        list += (list.empty() ? "" : "; ") + std::string(gofl_ops[firsts[i].second].name) + " " +
                format_seconds(-firsts[i].first) + (set_up.empty() ? "" : " (" + set_up + ")");
      }
      out.push_back("The first GPU call of each of " + plural(firsts.size(), "operation") + " took " +
                    format_seconds(first_s) + " in all, set-up included: " + list +
                    (firsts.size() > 5 ? "; ..." : "") + " ('gpu-offload dump --setup').");
    }
    // Warming (cuda/warm.h): operations whose library first-use work a thread did beside the calls.
    double warmed_s = 0, warm_cpu_s = 0;
    size_t warmed_n = 0;
    for (const auto& [op, phases] : a.first_calls) {
      if (const auto it = phases.find(GOFL_SP_WARMED); it != phases.end()) warmed_s += it->second, ++warmed_n;
      if (const auto it = phases.find(GOFL_SP_WARM_CPU); it != phases.end()) warm_cpu_s += it->second;
    }
    if (warmed_n)
      out.push_back("Warmed beside the calls: " + plural(warmed_n, "operation") + " (" + format_seconds(warmed_s) +
                    " of the CUDA libraries' first-use work, off the calls' path, " + format_seconds(warm_cpu_s) +
                    " of CPU time at the lowest priority; GPU_OFFLOAD_WARM).");
    // Which GPUs the processes ran on (a process runs its GPU calls on one GPU).
    std::map<std::string, size_t> gpus;
    for (const GpuStart& s : a.starts)
      if (s.ok && !s.gpu.empty()) ++gpus[a.hosts.size() > 1 ? s.gpu : s.gpu.substr(s.gpu.find(" GPU ") + 1)];
    if (!gpus.empty()) {
      std::string list;
      for (const auto& [gpu, n] : gpus)
        list += (list.empty() ? "" : ", ") + gpu + (ok_n > 1 ? " (" + format_count(n) + (n == 1 ? " process)" : " processes)") : "");
      out.push_back("The GPU calls ran on " + list + ".");
    }
  }
  if (const auto* r = main_cpu_reason(a)) {
    out.push_back("Most CPU time stayed there because of \"" + std::string(gofl_reason_name(r->first.second)) + "\" (" +
                  plural(r->second.calls, "call") + ", " + format_seconds(r->second.time_ns * 1e-9) + ", " +
                  format_percent(double(r->second.time_ns), double(t.time_ns)) + " of the time).");
  }
  if (t.gpu_timed_calls) {
    const double copies = t.copy_in_s + t.copy_out_s;
    out.push_back("On the GPU: copying in " + format_seconds(t.copy_in_s) + ", computing " +
                  format_seconds(t.compute_s) +
                  (t.copy_out_s > 0 ? ", copying out " + format_seconds(t.copy_out_s) : std::string()) +
                  "; copies are " + format_percent(copies, t.gpu_wall_s) + " of the GPU calls' time.");
  }
  if (const Analysis::CopyIn& held = a.copy_in_by_cores[1]; held.calls) {
    const Analysis::CopyIn& free = a.copy_in_by_cores[0];
    auto rate = [](const Analysis::CopyIn& x) {
      return x.seconds > 0 && x.bytes > 0 ? format_ratio(x.bytes / x.seconds * 1e-9) + " GB/s" : std::string("no timed copy-in");
    };
    out.push_back(plural(held.calls, "GPU call") + " began while the program's other threads were inside CPU calls, " +
                  "which held the cores: they copied on their own thread (copy-in " + rate(held) + "; the other " +
                  plural(free.calls, "GPU call") + ": " + rate(free) + ").");
  }
  if (t.gpu_avoided_bytes > 0)
    out.push_back("Keeping unchanged data on the GPU (residency) avoided copying " + format_bytes(t.gpu_avoided_bytes) +
                  " of the " + format_bytes(t.gpu_in_bytes) + " the GPU calls read.");
  if (t.gpu_walk_calls && t.gpu_avoidable_bytes > 0) {
    const double copy_in = t.copy_in_s;
    out.push_back(
        std::string(t.gpu_avoided_bytes > 0 ? "Copies of unchanged data still cost " : "Keeping unchanged data on the GPU could have avoided copying ") + format_bytes(t.gpu_avoidable_bytes) +
        " of the " + format_bytes(t.gpu_in_bytes) + " the GPU calls read (about " + format_seconds(t.gpu_avoidable_s) +
        (copy_in > 0 ? ", " + format_percent(t.gpu_avoidable_s, copy_in) + " of their copy-in time)." : ")."));
  } else if (t.gpu_walk_calls) {
    out.push_back("The GPU calls never read data the GPU already held unchanged: no copy was avoidable.");
  }
  if (t.cpu_walk_calls && t.cpu_avoidable_bytes > 0)
    out.push_back("If the " + plural(t.cpu_walk_calls, "GPU-capable call") + " that ran on the CPU were offloaded, " +
                  format_bytes(t.cpu_avoidable_bytes) + " of their " + format_bytes(t.cpu_in_bytes) +
                  " of inputs would already be on the GPU (about " + format_seconds(t.cpu_avoidable_s) +
                  " of copying at " + format_ratio(a.copy_bytes_per_s * 1e-9) + " GB/s" +
                  (a.copy_rate_source == Analysis::kMeasured  ? ", as measured"
                   : a.copy_rate_source == Analysis::kProfile ? ", the profile's rate"
                                                              : ", assumed") +
                  ").");
  if (a.verify.calls)
    out.push_back("Verify: " + format_count(a.verify.calls) + " calls compared on both devices, " +
                  format_count(a.verify.mismatches) + " mismatch" + (a.verify.mismatches == 1 ? "" : "es") +
                  (a.verify.mismatches ? " (worst relative difference " + format_error(a.verify.worst_mismatch) + ")."
                                       : "."));
  if (!a.failures.empty()) {
    uint64_t n = 0, most = 0;
    int most_status = 0;
    for (const auto& [key, f] : a.failures) {
      n += f.calls;
      if (f.calls > most) most = f.calls, most_status = key.first;
    }
    out.push_back(format_count(n) + " GPU attempt" + (n == 1 ? "" : "s") +
                  " failed and ran on the CPU instead (most: " + gofl_gpu_status_name(most_status) +
                  "); results are unaffected.");
  }
  return out;
}

// The terminal report: the header facts, the summary and every table.
void print_text_report(const Analysis& a, const std::string& what, long top) {
  printf("gpu-offload report: %s\n", what.c_str());
  for (const auto& [label, value] : report_facts(a, 72)) printf("  %-11s %s\n", label.c_str(), value.c_str());
  if (a.records == 0 && a.counted_records == 0) {
    printf("\nNo BLAS, LAPACK or FFTW calls were traced.\n");
    return;
  }
  print_summary(a);
  for (const ReportTable& t : report_tables(a, top)) print_table(t);
}

}  // namespace gofl::cli
