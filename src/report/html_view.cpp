// gpu-offload report --html: the report as one self-contained page (inline CSS, charts as inline
// SVG, no scripts, nothing fetched), so that a scientist sees in a minute whether the GPU helps.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/table.h"
#include "report/names.h"
#include "report/svg.h"
#include "report/text.h"
#include "report/views.h"

#ifndef GOFL_VERSION
#define GOFL_VERSION "?"
#endif

namespace gofl::cli {
namespace {

using svg::escape;
using svg::Series;

// Colour-blind-safe pairs; the CPU/GPU colours are the same in every chart.
const char* const kCpu = "#3b75af";
const char* const kGpu = "#e1812c";
const char* const kCopyIn = "#8c6bb1";
const char* const kCompute = "#3a9a5b";
const char* const kCopyOut = "#c9534f";
const char* const kOther = "#b9b9b9";
const char* const kNeeded = "#c5d3e6";
const char* const kAvoided = "#3a9a5b";  // copies residency avoided
const char* const kCross = "#6b4c9a";
constexpr int kWidth = 1040;

const char* const kStyle = R"(
:root { color-scheme: light; }
body { margin: 0; background: #f4f5f7; color: #1d1f23;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 48px; }
header h1 { font-size: 26px; margin: 0 0 2px; }
header .what { color: #555; margin: 0 0 14px; word-break: break-all; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0 0 18px;
  background: #fff; border: 1px solid #dde0e5; border-radius: 8px; padding: 12px 16px; }
dl.facts dt { color: #666; } dl.facts dd { margin: 0; word-break: break-all; }
.cards { display: grid; grid-template-columns: repeat(4, 1fr); gap: 12px; margin: 0 0 18px; }
.card { background: #fff; border: 1px solid #dde0e5; border-radius: 8px; padding: 12px 14px; }
.card .k { color: #666; font-size: 13px; } .card .v { font-size: 24px; font-weight: 650; margin-top: 2px; }
.card .s { color: #555; font-size: 13px; }
.card.gpu .v { color: #b85f12; } .card.cpu .v { color: #2c5d8f; }
section { background: #fff; border: 1px solid #dde0e5; border-radius: 8px; padding: 16px 18px 14px; margin: 0 0 18px; }
section h2 { font-size: 19px; margin: 0 0 4px; }
section h3 { font-size: 15px; margin: 16px 0 4px; }
p.how { color: #555; margin: 0 0 10px; max-width: 80ch; }
ul.summary { margin: 4px 0 0; padding-left: 20px; } ul.summary li { margin: 3px 0; }
svg.chart { display: block; max-width: 100%; height: auto; margin: 6px 0 4px; }
p.empty { background: #f7f7f8; border: 1px dashed #c9ccd2; border-radius: 6px; color: #555;
  padding: 14px 16px; margin: 8px 0; }
p.note { color: #666; font-size: 13px; margin: 4px 0 0; max-width: 100ch; }
.scroll { overflow-x: auto; }
table.t { border-collapse: collapse; font-size: 13px; margin: 6px 0 2px; font-variant-numeric: tabular-nums; }
table.t th, table.t td { padding: 3px 10px; text-align: right; white-space: nowrap; }
table.t th { border-bottom: 1.5px solid #9aa0a8; font-weight: 600; background: #fafbfc; }
table.t td.l, table.t th.l { text-align: left; }
table.t tr:nth-child(even) td { background: #fafbfc; }
table.t tr.total td { border-top: 1.5px solid #9aa0a8; font-weight: 600; }
table.t tr.group th { text-align: left; background: #eef1f5; border-bottom: none; padding-top: 6px; }
footer { color: #777; font-size: 12px; text-align: center; }
@media (max-width: 800px) { .cards { grid-template-columns: repeat(2, 1fr); } }
)";

std::string bytes_tick(double v) { return format_bytes(v); }
std::string seconds_tick(double v) { return svg::time_tick(v); }

std::string empty(const std::string& id, const std::string& message) {
  return "<p class=\"empty\" id=\"" + escape(id) + "\">" + escape(message) + "</p>\n";
}

std::string dims_text(const Point& p) {
  char buf[96];
  snprintf(buf, sizeof buf, "m=%lld n=%lld k=%lld", (long long)p.dims[0], (long long)p.dims[1], (long long)p.dims[2]);
  return buf;
}

std::string table_html(const ReportTable& t) {
  std::string out;
  if (!t.headers.empty()) {
    std::vector<bool> left = t.left;
    left.resize(t.headers.size(), false);
    left[0] = true;
    out += "<div class=\"scroll\"><table class=\"t\" id=\"table-" + escape(t.id) + "\"><thead><tr>";
    for (size_t c = 0; c < t.headers.size(); ++c)
      out += std::string("<th") + (left[c] ? " class=\"l\"" : "") + ">" + escape(t.headers[c]) + "</th>";
    out += "</tr></thead><tbody>";
    bool after_rule = false;
    for (const auto& r : t.rows) {
      if (r.empty()) {
        after_rule = true;
        continue;
      }
      if (r.size() == 1) {
        out += "<tr class=\"group\"><th colspan=\"" + std::to_string(t.headers.size()) + "\">" + escape(r[0]) +
               "</th></tr>";
        after_rule = false;
        continue;
      }
      const bool total = after_rule || r[0] == "  total";
      out += total ? "<tr class=\"total\">" : "<tr>";
      for (size_t c = 0; c < t.headers.size(); ++c) {
        const std::string cell = c < r.size() ? r[c] : "";
        out += std::string("<td") + (left[c] ? " class=\"l\"" : "") + ">" + escape(cell) + "</td>";
      }
      out += "</tr>";
      after_rule = false;
    }
    out += "</tbody></table></div>\n";
  }
  if (!t.notes.empty()) {
    std::string note;
    for (const std::string& n : t.notes) note += (note.empty() ? "" : " ") + n;
    out += "<p class=\"note\">" + escape(note) + "</p>\n";
  }
  return out;
}

const ReportTable* find_table(const std::vector<ReportTable>& tables, const char* id) {
  for (const ReportTable& t : tables)
    if (t.id == id) return &t;
  return nullptr;
}

std::string table_block(const std::vector<ReportTable>& tables, const char* id, bool with_title = true) {
  const ReportTable* t = find_table(tables, id);
  if (!t) return "";
  return (with_title ? "<h3>" + escape(t->title) + "</h3>\n" : std::string()) + table_html(*t);
}

std::vector<std::pair<int, const OpStats*>> ops_by_time(const Analysis& a) {
  std::vector<std::pair<int, const OpStats*>> v;
  for (const auto& [op, s] : a.ops)
    if (s.calls) v.push_back({op, &s});
  std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) {
    return x.second->time_ns != y.second->time_ns ? x.second->time_ns > y.second->time_ns
                                                  : strcmp(gofl_ops[x.first].name, gofl_ops[y.first].name) < 0;
  });
  return v;
}

// (a) Time per operation, stacked by device.
std::string chart_time_by_op(const Analysis& a) {
  const auto ops = ops_by_time(a);
  if (ops.empty()) return empty("chart-time-by-op", "No call of the application's own was traced.");
  svg::BarChart c("chart-time-by-op", kWidth, {{"on the CPU", kCpu}, {"on the GPU", kGpu}},
                  "time of the application's own calls (seconds)", seconds_tick);
  const size_t shown = ops.size() > 14 ? 13 : ops.size();
  for (size_t i = 0; i < shown; ++i) {
    const OpStats& s = *ops[i].second;
    std::string note = format_seconds(s.time_ns * 1e-9) + " \xC2\xB7 " + format_count(s.calls) + " call" +
                       (s.calls == 1 ? "" : "s") +
                       (s.dev[1].calls ? ", " + format_count(s.dev[1].calls) + " on the GPU" : "");
    c.row(gofl_ops[ops[i].first].name, {s.dev[0].ns * 1e-9, s.dev[1].ns * 1e-9}, note);
  }
  if (shown < ops.size()) {
    double cpu = 0, gpu = 0;
    uint64_t calls = 0;
    for (size_t i = shown; i < ops.size(); ++i) {
      cpu += ops[i].second->dev[0].ns * 1e-9;
      gpu += ops[i].second->dev[1].ns * 1e-9;
      calls += ops[i].second->calls;
    }
    c.row(std::to_string(ops.size() - shown) + " other operations", {cpu, gpu},
          format_seconds(cpu + gpu) + " \xC2\xB7 " + format_count(calls) + " calls");
  }
  return c.str();
}

// (b) Work against time, log-log, with the model's predictions and crossover when the trace has them.
std::string chart_work_vs_time(const Analysis& a, std::string* caption) {
  const auto& pts = a.work_points.points();
  if (pts.empty()) return empty("chart-work-vs-time", "No traced call had work (flops) and a duration to plot.");
  // The curve of the operation with the most calls (the points it explains), preferring curves that
  // span at least two bins of work.
  const Crossover* x = nullptr;
  for (const Crossover& c : a.crossovers) {
    auto better = [&](const Crossover& o) {
      if ((c.curve.size() >= 2) != (o.curve.size() >= 2)) return c.curve.size() >= 2;
      return c.calls > o.calls;
    };
    if (!x || better(*x)) x = &c;
  }
  svg::Axis ax{"work of the call (floating-point operations, flop)", true, svg::si_tick};
  svg::Axis ay{"time of the call (seconds)", true, seconds_tick};
  bool dev_used[2] = {false, false};
  for (const Point& p : pts) {
    ax.fit(p.x);
    ay.fit(p.y);
    dev_used[p.device] = true;
  }
  if (x)
    for (const auto& [f, pc, pg] : x->curve) {
      ax.fit(f);
      ay.fit(pc);
      ay.fit(pg);
    }
  std::vector<Series> legend;
  int s_cpu = -1, s_gpu = -1, s_pc = -1, s_pg = -1, s_x = -1;
  if (dev_used[0]) s_cpu = int(legend.size()), legend.push_back({"call on the CPU", kCpu, Series::kCircle});
  if (dev_used[1]) s_gpu = int(legend.size()), legend.push_back({"call on the GPU", kGpu, Series::kDiamond});
  // A line needs two sizes: with one, the legend would name lines the chart does not draw.
  const bool lines = x && x->curve.size() >= 2;
  if (lines) {
    const std::string op = gofl_ops[x->op].name;
    s_pc = int(legend.size()), legend.push_back({"predicted CPU time (" + op + ")", kCpu, Series::kDashed});
    s_pg = int(legend.size()), legend.push_back({"predicted GPU time (" + op + ")", kGpu, Series::kDashed});
    if (x->kind == Crossover::kBetween)
      s_x = int(legend.size()), legend.push_back({"predicted crossover (" + op + ")", kCross, Series::kDashed});
  }
  legend.push_back({"constant GFLOP/s", "#9a9a9a", Series::kLine});
  svg::XYChart c("chart-work-vs-time", kWidth, 500, ax, ay, legend);
  // Lines of constant speed: where a call of this work would land at 1, 10, 100 ... GFLOP/s.
  const svg::Axis& dx = c.x_axis();
  for (double r = 1e6; r <= 1e16; r *= 10)
    c.reference(dx.lo, dx.lo / r, dx.hi, dx.hi / r, svg::si_tick(r) + "FLOP/s", true);
  for (const Point& p : pts) {
    const std::string tip = std::string(gofl_ops[p.op].name) + " " + dims_text(p) + ": " + format_seconds(p.y) + ", " +
                            format_si(p.x) + "flop, " + format_si(p.x / p.y) + "FLOP/s on the " + device_name(p.device);
    c.point(p.x, p.y, p.device ? s_gpu : s_cpu, tip);
  }
  if (lines) {
    std::vector<std::pair<double, double>> cpu, gpu;
    for (const auto& [f, pc, pg] : x->curve) {
      cpu.push_back({f, pc});
      gpu.push_back({f, pg});
    }
    c.line(cpu, s_pc);
    c.line(gpu, s_pg);
    if (s_x >= 0) c.vline(x->flops, s_x, "crossover \xE2\x89\x88 " + format_si(x->flops) + "flop");
    *caption = "The dashed lines are the cost model's predictions for the traced " + std::string(gofl_ops[x->op].name) +
               " calls (median per quarter decade of work), " +
               (a.crossover_source == "trace" ? std::string("as recorded in the trace")
                                              : "from the profile " + a.crossover_source) +
               "; the GPU time includes the copies. " +
               (x->kind == Crossover::kBetween
                    ? "Left of the crossover the model expects the CPU to be faster, right of it the GPU."
                : x->kind == Crossover::kGpuAlways ? "The model expected the GPU to be faster at every traced size."
                                                   : "The model expected the CPU to be faster at every traced size.");
  } else if (x && !x->curve.empty()) {
    const auto& [f, pc, pg] = x->curve.front();
    *caption = "Every traced " + std::string(gofl_ops[x->op].name) + " call has the same work (" + format_si(f) +
               "flop), so there is no prediction line: the cost model predicts " + format_seconds(pc) +
               " on the CPU and " + format_seconds(pg) + " on the GPU, copies included.";
  } else {
    *caption = "No profile predictions in this trace, so no crossover line: the calls were not decided by the cost "
               "model (below the decision threshold, or --device cpu / gpu).";
  }
  if (a.work_points.seen() > pts.size())
    *caption += " Showing a random sample of " + format_count(pts.size()) + " of " +
                format_count(a.work_points.seen()) + " calls.";
  return c.str();
}

// (c) Predicted against observed time, with the diagonal.
std::string chart_model_accuracy(const Analysis& a) {
  const auto& pts = a.model.points.points();
  if (pts.empty())
    return empty("chart-model-accuracy",
                 "No profile predictions in this trace: the cost model's accuracy cannot be shown. Calls are "
                 "predicted when --device auto decides them (at least 1e6 flops).");
  svg::Axis ax{"predicted time (seconds)", true, seconds_tick};
  svg::Axis ay{"observed time (seconds)", true, seconds_tick};
  bool dev_used[2] = {false, false};
  for (const Point& p : pts) {
    ax.fit(p.x), ax.fit(p.y), ay.fit(p.x), ay.fit(p.y);
    dev_used[p.device] = true;
  }
  std::vector<Series> legend;
  int s[2] = {-1, -1};
  if (dev_used[0]) s[0] = int(legend.size()), legend.push_back({"call on the CPU", kCpu, Series::kCircle});
  if (dev_used[1]) s[1] = int(legend.size()), legend.push_back({"call on the GPU", kGpu, Series::kDiamond});
  legend.push_back({"observed = predicted", "#9a9a9a", Series::kLine});
  legend.push_back({"2\xC3\x97 off", "#9a9a9a", Series::kDashed});
  svg::XYChart c("chart-model-accuracy", kWidth, 480, ax, ay, legend);
  const double lo = std::min(c.x_axis().lo, c.y_axis().lo), hi = std::max(c.x_axis().hi, c.y_axis().hi);
  c.reference(lo, lo, hi, hi, "exact", false);
  c.reference(lo, 2 * lo, hi, 2 * hi, "2\xC3\x97 slower than predicted", true);
  c.reference(lo, lo / 2, hi, hi / 2, "2\xC3\x97 faster", true);
  for (const Point& p : pts)
    c.point(p.x, p.y, s[p.device],
            std::string(gofl_ops[p.op].name) + " " + dims_text(p) + " on the " + device_name(p.device) +
                ": predicted " + format_seconds(p.x) + ", observed " + format_seconds(p.y));
  return c.str();
}

// (d) Why calls stayed on the CPU.
std::string chart_cpu_reasons(const Analysis& a) {
  std::vector<std::pair<int, const ReasonStats*>> rs;
  for (const auto& [key, s] : a.reasons)
    if (key.first == GOFL_DEV_CPU) rs.push_back({key.second, &s});
  if (rs.empty()) return empty("chart-cpu-reasons", "Every traced call ran on the GPU: none stayed on the CPU.");
  std::sort(rs.begin(), rs.end(), [](const auto& x, const auto& y) {
    return x.second->time_ns != y.second->time_ns ? x.second->time_ns > y.second->time_ns
                                                  : x.second->calls > y.second->calls;
  });
  svg::BarChart c("chart-cpu-reasons", kWidth, {{"time of the application's own calls that stayed on the CPU", kCpu}},
                  "time on the CPU (seconds)", seconds_tick);
  for (const auto& [reason, s] : rs) {
    std::string note = format_count(s->calls) + " call" + (s->calls == 1 ? "" : "s");
    if (s->time_ns) note += ", " + format_seconds(s->time_ns * 1e-9);
    else if (reason == GOFL_R_NESTED) note += " inside other routines (their time is the caller's)";
    else if (reason == GOFL_R_QUERY) note += " (workspace size queries, no work)";
    if (reason == GOFL_R_VERIFY) note += " (verify mode: ran on both devices, the program got the CPU result)";
    c.row(gofl_reason_name(reason), {s->time_ns * 1e-9}, note);
  }
  return c.str();
}

// (e) Copy time against compute time of the GPU calls.
std::string chart_copy_vs_compute(const Analysis& a) {
  std::vector<std::pair<int, const OpStats*>> ops;
  for (const auto& [op, s] : a.ops)
    if (s.gpu_timed_calls) ops.push_back({op, &s});
  if (ops.empty())
    return empty("chart-copy-vs-compute",
                 "No call ran on the GPU, so there is no copy or compute time to show.");
  std::sort(ops.begin(), ops.end(),
            [](const auto& x, const auto& y) { return x.second->gpu_wall_s > y.second->gpu_wall_s; });
  svg::BarChart c("chart-copy-vs-compute", kWidth,
                  {{"copy in (host to GPU)", kCopyIn}, {"compute", kCompute}, {"copy out (GPU to host)", kCopyOut},
                   {"other (set-up, waiting)", kOther}},
                  "time of the calls that ran on the GPU (seconds)", seconds_tick);
  auto add = [&](const std::string& label, const OpStats& s) {
    const double other = std::max(0.0, s.gpu_wall_s - s.copy_in_s - s.compute_s - s.copy_out_s);
    c.row(label, {s.copy_in_s, s.compute_s, s.copy_out_s, other},
          "copies " + format_percent(s.copy_in_s + s.copy_out_s, s.gpu_wall_s) + " \xC2\xB7 " +
              format_count(s.gpu_timed_calls) + " call" + (s.gpu_timed_calls == 1 ? "" : "s"));
  };
  if (ops.size() > 1) add("all GPU calls", a.total());
  for (size_t i = 0; i < ops.size() && i < 14; ++i) add(gofl_ops[ops[i].first].name, *ops[i].second);
  return c.str();
}

// (f) Copies residency avoided, and the avoidable-copy estimate.
std::string chart_avoidable(const Analysis& a) {
  const OpStats t = a.total();
  if (t.gpu_walk_calls == 0 && t.cpu_walk_calls == 0)
    return empty("chart-avoidable-copy", "No GPU-capable calls were traced, so no copy could have been avoided.");
  svg::BarChart c("chart-avoidable-copy", kWidth,
                  {{"avoided: a kept copy on the GPU served it", kAvoided},
                   {"still avoidable: copied although the GPU held it unchanged", kGpu},
                   {"copied (or would be, if offloaded)", kNeeded}},
                  "input bytes of the calls (bytes)", bytes_tick);
  auto note = [](double avoided, double avoid, double in, double secs) {
    std::string out = avoided > 0 ? format_bytes(avoided) + " avoided, " : "";
    return out + format_bytes(avoid) + " of " + format_bytes(in) + " still avoidable (" + format_percent(avoid, in) +
           ")" + (avoid > 0 ? ", \xE2\x89\x88 " + format_seconds(secs) : "");
  };
  std::vector<std::pair<int, const OpStats*>> ops;
  for (const auto& [op, s] : a.ops) ops.push_back({op, &s});
  if (t.gpu_walk_calls) {
    c.heading("Calls that ran on the GPU");
    std::sort(ops.begin(), ops.end(),
              [](const auto& x, const auto& y) { return x.second->gpu_in_bytes > y.second->gpu_in_bytes; });
    for (size_t i = 0, n = 0; i < ops.size() && n < 10; ++i) {
      const OpStats& s = *ops[i].second;
      if (!s.gpu_walk_calls) continue;
      ++n;
      const double copied = std::max(0.0, s.gpu_in_bytes - s.gpu_avoided_bytes - s.gpu_avoidable_bytes);
      c.row(gofl_ops[ops[i].first].name, {s.gpu_avoided_bytes, s.gpu_avoidable_bytes, copied},
            note(s.gpu_avoided_bytes, s.gpu_avoidable_bytes, s.gpu_in_bytes, s.gpu_avoidable_s));
    }
  }
  if (t.cpu_walk_calls) {
    c.heading("GPU-capable calls that ran on the CPU, if they had been offloaded");
    std::sort(ops.begin(), ops.end(),
              [](const auto& x, const auto& y) { return x.second->cpu_in_bytes > y.second->cpu_in_bytes; });
    for (size_t i = 0, n = 0; i < ops.size() && n < 10; ++i) {
      const OpStats& s = *ops[i].second;
      if (!s.cpu_walk_calls) continue;
      ++n;
      c.row(gofl_ops[ops[i].first].name, {0.0, s.cpu_avoidable_bytes, s.cpu_in_bytes - s.cpu_avoidable_bytes},
            note(0, s.cpu_avoidable_bytes, s.cpu_in_bytes, s.cpu_avoidable_s));
    }
  }
  return c.str();
}

std::string card(const char* cls, const std::string& key, const std::string& value, const std::string& sub) {
  return std::string("<div class=\"card ") + cls + "\"><div class=\"k\">" + escape(key) + "</div><div class=\"v\">" +
         escape(value) + "</div><div class=\"s\">" + escape(sub) + "</div></div>";
}

std::string cards(const Analysis& a) {
  const OpStats t = a.total();
  std::string out = "<div class=\"cards\" id=\"cards\">";
  out += card("", "BLAS/LAPACK time", format_seconds(t.time_ns * 1e-9),
              format_count(t.calls) + " calls of the application's own");
  out += card(t.dev[1].calls ? "gpu" : "cpu", "On the GPU", format_percent(double(t.dev[1].ns), double(t.time_ns)),
              format_count(t.dev[1].calls) + " calls, " + format_seconds(t.dev[1].ns * 1e-9));
  if (a.model.gpu_calls_with_cpu_pred) {
    const double pc = a.model.gpu_pred_cpu_s, obs = a.model.gpu_observed_s;
    out += card(pc >= obs ? "gpu" : "cpu", "GPU vs predicted CPU time",
                pc >= obs ? format_ratio(pc / obs) + "\xC3\x97 faster" : format_ratio(obs / pc) + "\xC3\x97 slower",
                (pc >= obs ? format_seconds(pc - obs) + " saved" : format_seconds(obs - pc) + " lost") +
                    " on the GPU calls");
  } else {
    std::vector<float> r0 = a.model.ratio[0];
    out += card("", "Cost model", r0.empty() ? "no predictions" : "median " + format_ratio(quantile(r0, 0.5)),
                r0.empty() ? "in this trace" : "observed / predicted CPU time");
  }
  if (t.gpu_avoided_bytes > 0)
    out += card("gpu", "Copies avoided", format_bytes(t.gpu_avoided_bytes),
                format_percent(t.gpu_avoided_bytes, t.gpu_in_bytes) + " of GPU inputs kept on the GPU; " +
                    format_bytes(t.gpu_avoidable_bytes) + " still avoidable");
  else if (t.gpu_walk_calls)
    out += card("", "Avoidable copying", format_bytes(t.gpu_avoidable_bytes),
                format_percent(t.gpu_avoidable_bytes, t.gpu_in_bytes) + " of GPU inputs, \xE2\x89\x88 " +
                    format_seconds(t.gpu_avoidable_s));
  else
    out += card("", "Avoidable copying, if offloaded", format_bytes(t.cpu_avoidable_bytes),
                format_percent(t.cpu_avoidable_bytes, t.cpu_in_bytes) + " of the GPU-capable calls' inputs");
  return out + "</div>\n";
}

void section(std::string& out, const char* id, const std::string& title, const std::string& how,
             const std::string& body) {
  out += "<section id=\"" + std::string(id) + "\"><h2>" + escape(title) + "</h2>\n";
  if (!how.empty()) out += "<p class=\"how\">" + escape(how) + "</p>\n";
  out += body + "</section>\n";
}

}  // namespace

void write_html_report(FILE* f, const Analysis& a, const std::string& what, long top) {
  const std::vector<ReportTable> tables = report_tables(a, top);
  std::string out;
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>gpu-offload report: " +
      escape(what) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<main>\n";
  out += "<header><h1>gpu-offload report</h1><p class=\"what\">" + escape(what) +
         "</p>\n<dl class=\"facts\" id=\"facts\">";
  for (const auto& [label, value] : report_facts(a, 256))
    out += "<dt>" + escape(label) + "</dt><dd>" + escape(value) + "</dd>";
  out += "</dl></header>\n";

  if (a.records == 0 && a.counted_records == 0) {
    out += empty("no-calls", "No BLAS, LAPACK or FFTW calls were traced.");
    out += "</main>\n</body>\n</html>\n";
    fputs(out.c_str(), f);
    return;
  }
  out += cards(a);
  std::string summary = "<ul class=\"summary\">";
  for (const std::string& s : report_summary(a)) summary += "<li>" + escape(s) + "</li>";
  section(out, "summary", "In short", "", summary + "</ul>\n");

  section(out, "time-by-op", "Where the time went: each operation, by device",
          "The application's own calls (not the routines LAPACK calls inside them), longest first. Blue ran on the "
          "CPU, orange on the GPU.",
          chart_time_by_op(a) + table_block(tables, "operations") + table_block(tables, "devices"));

  std::string caption;
  std::string work = chart_work_vs_time(a, &caption);
  section(out, "work-vs-time", "Each call's work against its time",
          "One point per call, both axes logarithmic. Points further right are bigger problems; lower is faster. The "
          "grey dotted lines are constant speeds (GFLOP/s): on a GPU that helps, big calls sit on faster lines.",
          work + "<p class=\"note\">" + escape(caption) + "</p>\n" + table_block(tables, "crossover"));

  section(
      out, "model-accuracy", "Predicted against observed time (the cost model's accuracy)",
      "Each call the cost model predicted, at its predicted time (x) and its measured time (y). On the diagonal the "
      "prediction was exact; above it the call was slower than predicted.",
      chart_model_accuracy(a) + table_block(tables, "model"));

  section(out, "cpu-reasons", "Why calls stayed on the CPU",
          "For each reason, the time of the application's own calls it kept on the CPU; the labels give the calls.",
          chart_cpu_reasons(a) + table_block(tables, "reasons") + table_block(tables, "failures"));

  section(out, "copy-vs-compute", "Copy time against compute time on the GPU",
          "For the calls that ran on the GPU: moving the operands in, computing, and moving the results out. When "
          "copies dominate, the GPU is waiting on the link.",
          chart_copy_vs_compute(a));

  if (const std::string conv = table_block(tables, "conversions", false); !conv.empty())
    section(out, "conversions", "Converting data around the LAPACK calls",
            "Time the calling library spent putting operands into the layout LAPACK reads and back: NumPy's ?copy "
            "calls next to each LAPACK call, and the time outside any call just before it.",
            conv);

  section(out, "avoidable-copy", "Copying avoided by keeping data on the GPU, and what is still avoidable",
          "Avoided: inputs a device copy kept from an earlier call served (residency; the trace says which). Still "
          "avoidable, walking each process's calls in time order: an input whose buffer (address and size) the GPU "
          "already held with the same content fingerprint, from an earlier call, but that was copied again.",
          chart_avoidable(a) + table_block(tables, "avoidable", false));

  std::string more = table_block(tables, "sites") + table_block(tables, "verify");
  if (!more.empty()) section(out, "details", "Call sites and verify mode", "", more);

  out += "<footer>gpu-offload " GOFL_VERSION
         " \xC2\xB7 this page is self-contained: no scripts, nothing loaded from the network</footer>\n";
  out += "</main>\n</body>\n</html>\n";
  fputs(out.c_str(), f);
}

}  // namespace gofl::cli
