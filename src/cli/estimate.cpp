// gpu-offload estimate: replays traces through the library's own decision (policy/auto_policy.h,
// the same code as --device auto) against a profile and a level: per operation the predicted CPU
// and GPU time, what would be offloaded, the predicted saving, and when the GPU would start.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/options.h"
#include "cli/traces.h"
#include "common/table.h"
#include "policy/auto_policy.h"
#include "policy/profile.h"
#include "policy/settings.h"
#include "policy/split.h"
#include "report/text.h"
#include "trace/call_record.h"

namespace gofl::cli {
namespace {

const std::vector<OptionSpec> kEstimateOptions = {{"--profile", "FILE"}, {"--level", "1-10"}, {"--threshold", "FLOPS"},
                                                   {"--gpus", "N"}};

struct OpRow {
  uint64_t calls = 0, decided = 0, to_gpu = 0, split = 0, probes = 0, not_started = 0, traced_gpu = 0;
  double cpu_s = 0, gpu_s = 0, chosen_s = 0, traced_s = 0;
};

struct ProcessResult {
  std::string label;
  uint64_t decided = 0;
  PolicyStats stats;
  double start_at_s = -1;  // seconds into the trace when the GPU would start
};

int parse_level(const std::string& v) {
  char* end = nullptr;
  const long l = strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || l < 1 || l > 10)
    throw UsageError("estimate", "--level '" + v + "' is not valid; use a whole number from 1 to 10");
  return int(l);
}

std::string pct(double part, double whole) {
  if (whole <= 0) return "";
  char b[32];
  snprintf(b, sizeof b, "%.0f%%", 100.0 * part / whole);
  return b;
}

std::string secs(double s) { return s > 0 ? format_seconds(s) : "0"; }

}  // namespace

int estimate_command(const std::vector<std::string>& args) {
  const ParsedOptions o = parse_options("estimate", args, kEstimateOptions, false);
  if (o.help) {
    fputs(find_command_help("estimate")->text, stdout);
    return 0;
  }
  if (o.positionals.empty()) throw UsageError("estimate", "estimate needs a trace folder or files (DIR|FILE...)");

  // The profile: --profile, else what the library would use (GPU_OFFLOAD_PROFILE, the per-user file,
  // the built-in one). A named profile that is wrong is an error here, not a fallback.
  Profile profile;
  if (o.has("--profile")) {
    std::string err;
    if (!read_profile(o.values.at("--profile"), &profile, &err)) throw Failure(err);
  } else {
    // The library's own settings (GPU_OFFLOAD_PROFILE, then the config file) name it, if anything does.
    std::string ignored, msg;
    auto get = [](const char* n) -> const char* { return getenv(n); };
    profile = load_profile(parse_settings(get, &ignored).profile, get, &msg);
    if (!msg.empty()) print_warning(msg);
  }
  double threshold = 1e6;
  if (o.has("--threshold")) {
    const std::string& v = o.values.at("--threshold");
    char* end = nullptr;
    threshold = strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(threshold >= 0))
      throw UsageError("estimate", "--threshold '" + v + "' is not valid; use a number of flops >= 0");
  }

  // GPUs a split call could spread over (policy/split.h): --gpus, else each process's as traced (the
  // GPUs CUDA showed it at its GPU start), else 1 (then nothing is split).
  int gpus_option = 0;
  if (o.has("--gpus")) {
    const std::string& v = o.values.at("--gpus");
    char* end = nullptr;
    const long g = strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || g < 1 || g > 1024)
      throw UsageError("estimate", "--gpus '" + v + "' is not valid; use the number of GPUs, 1 or more");
    gpus_option = int(g);
  }

  std::vector<std::unique_ptr<TraceReader>> traces = open_traces(o.positionals);
  // The level: --level, else the one the traces were recorded with (5 when they differ).
  int level = 5;
  std::string level_from = "default";
  if (o.has("--level")) {
    level = parse_level(o.values.at("--level"));
    level_from = "--level";
  } else {
    std::set<int> levels;
    for (const auto& t : traces) levels.insert(t->header().level);
    if (levels.size() == 1 && *levels.begin() >= 1 && *levels.begin() <= 10) {
      level = *levels.begin();
      level_from = "as traced";
    }
  }
  const LevelRow& row = level_row(level);

  std::map<int, OpRow> rows;
  std::vector<ProcessResult> procs;
  uint64_t other_calls = 0;
  double other_s = 0;
  std::unique_ptr<Model> model_for_notes;
  for (auto& t : traces) {
    PolicyConfig cfg;
    cfg.level = level;
    cfg.threshold = threshold;
    AutoPolicy policy(profile, cfg);  // one per process: each pays its own GPU start-up
    if (!model_for_notes) model_for_notes = std::make_unique<Model>(profile);
    ReplayGpu gpu;
    ProcessResult pr;
    pr.label = "pid " + std::to_string(t->header().pid) + " (" + trace_text(t->header().program, sizeof t->header().program) + ")";
    uint64_t first_ns = 0;
    int gpus = gpus_option > 0 ? gpus_option : 1;
    bool split_started = false;
    gofl_record rec;
    while (t->next(&rec)) {
      if (rec.kind == GOFL_REC_GPU_START && rec.u.start.ok && rec.u.start.gpu.recorded && gpus_option == 0)
        gpus = std::max<int>(1, rec.u.start.gpu.count);
      if (rec.kind != GOFL_REC_CALL) continue;
      const gofl_call_record& r = rec.u.call;
      if (r.depth != 0 || (r.flags & GOFL_F_QUERY) || r.op >= GOFL_N_OPS) continue;
      if (!first_ns) first_ns = r.t_start_ns;
      if (!gofl_ops[r.op].gpu_capable) {
        ++other_calls;
        other_s += r.duration_ns * 1e-9;
        continue;
      }
      OpRow& row_s = rows[r.op];
      ++row_s.calls;
      gofl_call c = call_from_record(r, rec.resident);  // replayed with the copies residency avoided
      c.flags &= ~uint32_t(GOFL_F_INFO_NONZERO);  // decided before the call: its outcome is not known yet
      gpu.set_now(double(r.t_start_ns) * 1e-9);
      const bool was_started = gpu.started();
      policy.decide(c, gpu);
      if (!was_started && gpu.started()) pr.start_at_s = double(r.t_start_ns - first_ns) * 1e-9;
      if (c.pred_cpu_s <= 0 && c.pred_gpu_s <= 0) continue;  // below the threshold: no decision
      ++row_s.decided;
      ++pr.decided;
      row_s.cpu_s += c.pred_cpu_s;
      row_s.gpu_s += c.pred_gpu_s;
      row_s.traced_s += r.duration_ns * 1e-9;
      if (r.device == GOFL_DEV_GPU) ++row_s.traced_gpu;
      const bool on_gpu = c.device == GOFL_DEV_GPU;
      row_s.to_gpu += on_gpu;
      // Over several GPUs when the model says so (--split auto), as the library decides.
      if (on_gpu && split_routine(c.op)) {
        const CallBytes b = call_bytes(c);
        if (split_pays(*model_for_notes, c.op, c.flops, b.in, b.out, gpus, split_started)) {
          c.pred_gpu_s = float(split_seconds(*model_for_notes, c.op, c.flops, b.in, b.out, gpus, split_started));
          split_started = true;
          ++row_s.split;
        }
      }
      row_s.probes += c.reason == GOFL_R_PROBE;
      row_s.not_started += c.reason == GOFL_R_NOT_STARTED;
      const double t_run = on_gpu ? c.pred_gpu_s : c.pred_cpu_s;
      row_s.chosen_s += t_run;
      // As predicted: the corrections stay 1, the probes and the start follow the library's rules.
      policy.observe(c, t_run, double(r.t_start_ns) * 1e-9 + t_run);
    }
    pr.stats = policy.stats();
    procs.push_back(std::move(pr));
  }

  printf("Estimate: %zu process%s, profile %s, level %d (%s): offload at %.2gx predicted speedup, start the GPU\n"
         "once missed savings reach %.2gx its start-up cost (%s)\n",
         procs.size(), procs.size() == 1 ? "" : "es", profile_label(profile).c_str(), level, level_from.c_str(),
         row.required_speedup, row.start_factor, format_seconds(profile.gpu_startup_s).c_str());
  if (profile.provisional)
    printf("The profile is provisional (%s); 'gpu-offload calibrate' measures this machine.\n",
           profile.source.empty() ? "not measured on this machine" : profile.source.c_str());

  // Operations by predicted CPU time.
  std::vector<std::pair<int, OpRow>> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second.cpu_s != b.second.cpu_s) return a.second.cpu_s > b.second.cpu_s;
    return strcmp(gofl_ops[a.first].name, gofl_ops[b.first].name) < 0;
  });
  TextTable table({"operation", "calls", "decided", "to gpu", "split", "cpu pred", "gpu pred", "chosen", "saved", "traced",
                   "traced on", "model cpu / gpu"},
                  {true, false, false, false, false, false, false, false, false, false, false, true});
  OpRow total;
  for (const auto& [op, s] : sorted) {
    std::string on = s.decided == 0 ? "" : s.traced_gpu == 0 ? "cpu" : s.traced_gpu == s.decided ? "gpu" : "both";
    table.add_row({gofl_ops[op].name, format_count(s.calls), format_count(s.decided), format_count(s.to_gpu),
                   format_count(s.split), secs(s.cpu_s), secs(s.gpu_s), secs(s.chosen_s), secs(s.cpu_s - s.chosen_s), secs(s.traced_s), on,
                   model_for_notes ? model_for_notes->explain(kCpu, op) + " / " + model_for_notes->explain(kGpu, op) : ""});
    total.calls += s.calls;
    total.decided += s.decided;
    total.to_gpu += s.to_gpu;
    total.split += s.split;
    total.cpu_s += s.cpu_s;
    total.gpu_s += s.gpu_s;
    total.chosen_s += s.chosen_s;
    total.traced_s += s.traced_s;
    total.probes += s.probes;
    total.not_started += s.not_started;
  }
  if (!sorted.empty()) {
    table.add_rule();
    table.add_row({"total", format_count(total.calls), format_count(total.decided), format_count(total.to_gpu),
                   format_count(total.split), secs(total.cpu_s), secs(total.gpu_s), secs(total.chosen_s), secs(total.cpu_s - total.chosen_s),
                   secs(total.traced_s), "", ""});
  }
  printf("\nGPU-capable calls (the application's own; 'decided': at least %s flops; times predicted, 'traced' as"
         " measured)\n",
         format_si(threshold).c_str());
  if (sorted.empty()) printf("  none\n");
  else table.print(stdout);
  if (other_calls)
    printf("  and %s calls of operations that always run on the CPU (measured only: ?copy): %s traced\n",
           format_count(other_calls).c_str(), format_seconds(other_s).c_str());

  printf("\nGPU start-up (ski rental, per process)\n");
  double startup_total = 0, missed_total = 0;
  for (const ProcessResult& p : procs) {
    const PolicyStats& st = p.stats;
    missed_total += st.missed_savings_s;
    if (st.started) {
      startup_total += st.startup_s;
      printf("  %s: starts at decided call %llu of %llu (%s into the trace), after %llu calls ran on the CPU missing"
             " %s of savings (the start needs %s)\n",
             p.label.c_str(), (unsigned long long)st.start_call, (unsigned long long)p.decided,
             format_seconds(std::max(0.0, p.start_at_s)).c_str(), (unsigned long long)st.not_started_calls,
             secs(st.missed_savings_s).c_str(), secs(st.start_needed_s).c_str());
    } else if (st.not_started_calls) {
      printf("  %s: never starts: %llu calls would gain %s on the GPU, less than the %s a start needs\n",
             p.label.c_str(), (unsigned long long)st.not_started_calls, secs(st.missed_savings_s).c_str(),
             secs(st.start_needed_s).c_str());
    } else {
      printf("  %s: never starts: no call is predicted to gain %.2gx on the GPU\n", p.label.c_str(),
             row.required_speedup);
    }
  }

  const double with = total.chosen_s + startup_total;
  printf("\nPredicted: %s with every decided call on the CPU; %s with offloading at level %d (%s of it GPU start-up):"
         " %s %s (%s)",
         secs(total.cpu_s).c_str(), secs(with).c_str(), level, secs(startup_total).c_str(),
         with <= total.cpu_s ? "saves" : "loses", secs(std::abs(total.cpu_s - with)).c_str(),
         pct(std::abs(total.cpu_s - with), total.cpu_s).c_str());
  printf(". The ski rental left %s of savings on the table; %llu CPU probe%s.\n", secs(missed_total).c_str(),
         (unsigned long long)total.probes, total.probes == 1 ? "" : "s");
  return 0;
}

}  // namespace gofl::cli
