// gpu-offload report: what the traced programs asked of BLAS/LAPACK/FFTW, where the time went,
// from which call sites, and where the calls ran and why.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/names.h"
#include "cli/options.h"
#include "cli/text.h"
#include "cli/traces.h"
#include "common/table.h"

namespace gofl::cli {
namespace {

struct OpStats {
  uint64_t calls = 0, gpu_calls = 0, nested = 0, queries = 0;
  uint64_t time_ns = 0;  // top-level calls only: a nested call's time is inside its caller's
  double flops = 0;
  std::vector<int64_t> largest_dim;  // per top-level call
};

struct SiteStats {
  uint64_t calls = 0, time_ns = 0;
  std::set<int> ops;
  std::string label;
};

struct ReasonStats {
  uint64_t calls = 0, time_ns = 0;
};

struct Totals {
  std::set<std::pair<std::string, int32_t>> processes;  // host, pid
  std::map<std::string, int> programs;                  // command line -> processes
  std::set<std::string> profiles, levels, device_modes, hosts;
  uint64_t first_realtime_ns = 0;
  std::map<int, OpStats> ops;
  std::map<std::pair<std::string, uint64_t>, SiteStats> sites;  // module (or "" + address), offset
  std::map<std::pair<int, int>, ReasonStats> reasons;           // device, reason
  uint64_t records = 0;
};

// Sites are keyed by module and offset, so one line of code counts once across processes (ASLR).
void add_call(Totals& t, TraceReader& r, const gofl_call_record& c) {
  const bool nested = c.flags & GOFL_F_NESTED, query = c.flags & GOFL_F_QUERY;
  ReasonStats& rs = t.reasons[{c.device, c.reason}];
  ++rs.calls;
  OpStats& s = t.ops[c.op];
  if (nested) { ++s.nested; return; }
  if (query) { ++s.queries; return; }
  rs.time_ns += c.duration_ns;
  ++s.calls;
  if (c.device == GOFL_DEV_GPU) ++s.gpu_calls;
  s.time_ns += c.duration_ns;
  s.flops += c.flops;
  s.largest_dim.push_back(std::max({c.dims[0], c.dims[1], c.dims[2]}));

  const TraceSite* site = r.site(c.site);
  const std::pair<std::string, uint64_t> key =
      site && !site->module.empty() ? std::make_pair(site->module, site->offset) : std::make_pair(std::string(), c.site);
  SiteStats& ss = t.sites[key];
  if (ss.label.empty()) ss.label = site_label(key.first, key.second, c.site);
  ++ss.calls;
  ss.time_ns += c.duration_ns;
  ss.ops.insert(c.op);
}

void add_file(Totals& t, TraceReader& r) {
  const gofl_file_header& h = r.header();
  const std::string host = trace_text(h.host, sizeof h.host);
  t.processes.insert({host, h.pid});
  t.hosts.insert(host);
  ++t.programs[trace_text(h.program, sizeof h.program)];
  const std::string profile = trace_text(h.profile, sizeof h.profile);
  t.profiles.insert(profile.empty() ? "built-in" : profile);
  t.levels.insert(std::to_string(h.level));
  t.device_modes.insert(device_mode_name(h.device_mode));
  if (!t.first_realtime_ns || h.start_realtime_ns < t.first_realtime_ns) t.first_realtime_ns = h.start_realtime_ns;
  gofl_record rec;
  while (r.next(&rec)) {
    if (rec.kind != GOFL_REC_CALL) continue;
    ++t.records;
    add_call(t, r, rec.u.call);
  }
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

void print_header(const Totals& t, size_t n_files, const std::vector<std::string>& args) {
  std::string what;
  for (const std::string& a : args) what += (what.empty() ? "" : " ") + a;
  printf("gpu-offload report: %s\n", what.c_str());
  printf("  files       %zu\n", n_files);
  printf("  processes   %zu on %s\n", t.processes.size(), join(t.hosts).c_str());
  // The most frequent programs first; a long list is cut, it is context, not data.
  std::vector<std::pair<int, std::string>> progs;
  for (const auto& [cmd, n] : t.programs) progs.push_back({-n, cmd});
  std::sort(progs.begin(), progs.end());
  for (size_t i = 0; i < progs.size() && i < 5; ++i)
    printf("  %-11s %s (%d process%s)\n", i == 0 ? "programs" : "", shorten(progs[i].second, 72).c_str(),
           -progs[i].first, progs[i].first == -1 ? "" : "es");
  if (progs.size() > 5) printf("  %-11s ... and %zu more\n", "", progs.size() - 5);
  printf("  device      %s\n", join(t.device_modes).c_str());
  printf("  level       %s\n", join(t.levels).c_str());
  printf("  profile     %s\n", join(t.profiles).c_str());
  const time_t secs = time_t(t.first_realtime_ns / 1000000000ull);
  char when[64];
  struct tm tm;
  if (localtime_r(&secs, &tm) && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm))
    printf("  traced      %s (the first trace file opened)\n", when);
}

std::string size_range(std::vector<int64_t> v) {
  if (v.empty()) return "";
  std::sort(v.begin(), v.end());
  return std::to_string(v.front()) + " / " + std::to_string(v[v.size() / 2]) + " / " + std::to_string(v.back());
}

std::string percent(double part, double whole) {
  char buf[16];
  snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

std::string rate(double flops, uint64_t ns) {
  if (!ns || flops <= 0) return "";
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f", flops / double(ns));  // flops per ns = GFLOP/s
  return buf;
}

void print_ops(const Totals& t) {
  std::vector<std::pair<int, const OpStats*>> ops;
  for (const auto& [op, s] : t.ops) ops.push_back({op, &s});
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    if (a.second->time_ns != b.second->time_ns) return a.second->time_ns > b.second->time_ns;
    if (a.second->calls != b.second->calls) return a.second->calls > b.second->calls;
    return strcmp(gofl_ops[a.first].name, gofl_ops[b.first].name) < 0;
  });
  OpStats total;
  for (const auto& [op, s] : ops) {
    total.calls += s->calls;
    total.gpu_calls += s->gpu_calls;
    total.nested += s->nested;
    total.queries += s->queries;
    total.time_ns += s->time_ns;
    total.flops += s->flops;
  }
  printf("\nOperations (sorted by time of the application's own calls)\n");
  TextTable table({"operation", "calls", "on gpu", "nested", "queries", "time", "share", "flops", "GFLOP/s",
                   "largest dim min / median / max"});
  auto row = [&](const std::string& name, const OpStats& s, bool sizes) {
    const bool own = s.calls > 0;  // only nested calls or queries: no time or work of its own
    table.add_row({name, format_count(s.calls), format_count(s.gpu_calls), format_count(s.nested),
                   format_count(s.queries), own ? format_seconds(s.time_ns * 1e-9) : "",
                   own ? percent(double(s.time_ns), double(total.time_ns)) : "", own ? format_si(s.flops) : "",
                   rate(s.flops, s.time_ns), sizes ? size_range(s.largest_dim) : ""});
  };
  for (const auto& [op, s] : ops) row(gofl_ops[op].name, *s, true);
  table.add_rule();
  row("total", total, false);
  table.print(stdout);
}

void print_sites(const Totals& t, long top) {
  if (top <= 0 || t.sites.empty()) return;
  std::vector<const SiteStats*> sites;
  uint64_t total_ns = 0;
  for (const auto& [key, s] : t.sites) {
    sites.push_back(&s);
    total_ns += s.time_ns;
  }
  std::sort(sites.begin(), sites.end(), [](const SiteStats* a, const SiteStats* b) {
    if (a->time_ns != b->time_ns) return a->time_ns > b->time_ns;
    return a->label < b->label;
  });
  printf("\nBusiest call sites (top %ld of %zu by time)\n", std::min<long>(top, long(sites.size())), sites.size());
  TextTable table({"call site", "calls", "time", "share", "operations"}, {true, false, false, false, true});
  for (size_t i = 0; i < sites.size() && long(i) < top; ++i) {
    std::string ops;
    for (int op : sites[i]->ops) ops += std::string(ops.empty() ? "" : " ") + gofl_ops[op].name;
    table.add_row({sites[i]->label, format_count(sites[i]->calls), format_seconds(sites[i]->time_ns * 1e-9),
                   percent(double(sites[i]->time_ns), double(total_ns)), ops});
  }
  table.print(stdout);
}

void print_reasons(const Totals& t) {
  std::vector<std::pair<std::pair<int, int>, ReasonStats>> rs(t.reasons.begin(), t.reasons.end());
  std::sort(rs.begin(), rs.end(), [](const auto& a, const auto& b) {
    if (a.second.calls != b.second.calls) return a.second.calls > b.second.calls;
    return a.first < b.first;
  });
  printf("\nWhere calls ran and why (all calls; time of the application's own calls)\n");
  TextTable table({"device", "reason", "calls", "time"}, {true, true, false, false});
  for (const auto& [key, s] : rs)
    table.add_row({device_name(key.first), gofl_reason_name(key.second), format_count(s.calls),
                   s.time_ns ? format_seconds(s.time_ns * 1e-9) : ""});
  table.print(stdout);
}

long parse_top(const ParsedOptions& o) {
  if (!o.has("--top")) return 10;
  const std::string& v = o.values.at("--top");
  char* end = nullptr;
  const long n = strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 0 || n > 1000000)
    throw UsageError("report", "--top '" + v + "' is not valid; use a whole number >= 0");
  return n;
}

}  // namespace

int report_command(const std::vector<std::string>& args) {
  const ParsedOptions o = parse_options("report", args, {{"--top", "N"}}, false);
  if (o.help) {
    fputs(find_command_help("report")->text, stdout);
    return 0;
  }
  if (o.positionals.empty()) throw UsageError("report", "report needs a trace folder (or trace files)");
  const long top = parse_top(o);
  auto traces = open_traces(o.positionals);
  Totals t;
  for (auto& r : traces) add_file(t, *r);

  print_header(t, traces.size(), o.positionals);
  if (t.records == 0) {
    printf("\nNo BLAS, LAPACK or FFTW calls were traced.\n");
    return 0;
  }
  print_ops(t);
  print_sites(t, top);
  print_reasons(t);
  return 0;
}

}  // namespace gofl::cli
