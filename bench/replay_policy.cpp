// Replays measured calls through --device auto's decision (src/policy/auto_policy.cpp, the
// library's own code) to see what a change of the policy would have done on a measured sweep,
// without the GPU machine: bench/auto_sweep.py --replay writes the calls from an earlier sweep's
// cpu and gpu runs and reads this program's totals.
//
//   replay_policy CALLS STARTUP_S [--profile P] [--level L] [--earlier-runs N]
//
// CALLS: one call per line, in program order:
//   OP FLOPS T_CPU T_GPU N_OPERANDS {BYTES IN OUT}...
// with T_CPU and T_GPU its measured seconds on each device (the gpu run's time, which has paid its
// own first uses at other sizes, not auto's). Each call runs where the decision sends it and takes
// that device's measured time; starting the GPU adds STARTUP_S once to the total. The GPU is the
// one `gpu-offload estimate` replays with (ReplayGpu: no load, no memory readings). Prints one
// line of totals and the count and extra time per reason. --earlier-runs N replays a run whose N
// latest earlier runs all gained (the run history's rule: the GPU starts at the first call
// predicted to gain). GPU_OFFLOAD_FIRST_CALL_MS from the environment (auto_sweep.py --set) is the
// decision's first-call charge; the replay's GPU warms nothing, so each warm-up asked counts as ended.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "common/table.h"
#include "policy/auto_policy.h"
#include "policy/model.h"
#include "policy/profile.h"
#include "policy/registry.h"
#include "trace/call_record.h"

using namespace gofl;

namespace {

int usage() {
  fprintf(stderr, "usage: replay_policy CALLS STARTUP_S [--profile P] [--level L] [--earlier-runs N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  std::string profile_path;
  PolicyConfig cfg;
  cfg.start_early = false;  // a start beside the calls is not replayed: the replay's GPU starts at once
  for (int i = 3; i < argc; ++i) {
    if (!strcmp(argv[i], "--profile") && i + 1 < argc) profile_path = argv[++i];
    else if (!strcmp(argv[i], "--level") && i + 1 < argc) cfg.level = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--earlier-runs") && i + 1 < argc) cfg.earlier_runs = atoi(argv[++i]);
    else return usage();
  }
  if (cfg.level < 1 || cfg.level > 10 || cfg.earlier_runs < 0) return usage();
  // The library's own policy settings that a replay can show (auto_sweep.py --set passes them).
  cfg.first_call_s = first_call_charge_setting_s();
  std::string msg;
  const Profile profile = load_profile(profile_path, [](const char*) -> const char* { return nullptr; }, &msg);
  if (!msg.empty()) fprintf(stderr, "%s", msg.c_str());
  AutoPolicy policy(profile, cfg);
  ReplayGpu gpu;
  const double startup_s = atof(argv[2]);
  std::ifstream in(argv[1]);
  if (!in) {
    fprintf(stderr, "replay_policy: cannot read %s\n", argv[1]);
    return 1;
  }
  std::map<std::string, std::pair<int, double>> by_reason;  // reason -> calls, seconds over the best
  // Per operation, over the calls the decision sent to the GPU: the CPU time predicted then (model x
  // the learnt correction: what the summary's "gained" and the run history count), the uncorrected
  // model's, and the CPU run's measured time.
  struct Accuracy {
    int calls = 0;
    double predicted = 0, model = 0, measured = 0;
  };
  std::map<std::string, Accuracy> offloaded_cpu;
  double chosen = 0, best = 0, all_cpu = 0, now = 0;
  int calls = 0, lineno = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++lineno;
    std::istringstream ss(line);
    std::string name;
    double flops, t_cpu, t_gpu;
    int n_ops, op = -1;
    if (!(ss >> name >> flops >> t_cpu >> t_gpu >> n_ops) || (op = gofl_op_by_name(name.c_str())) < 0 || n_ops < 0) {
      fprintf(stderr, "replay_policy: %s line %d: not a call\n", argv[1], lineno);
      return 1;
    }
    // As a trace record, so that the call is made from it as `gpu-offload estimate` makes it.
    gofl_call_record r{};
    r.op = uint16_t(op);
    r.flops = flops;
    for (int i = 0; i < n_ops; ++i) {
      double bytes;
      int is_in, is_out;
      if (!(ss >> bytes >> is_in >> is_out)) {
        fprintf(stderr, "replay_policy: %s line %d: operand %d incomplete\n", argv[1], lineno, i + 1);
        return 1;
      }
      if (r.n_operands < GOFL_MAX_OPERANDS)
        r.operands[r.n_operands++] = gofl_operand{0, uint64_t(bytes), uint32_t(is_in != 0), uint32_t(is_out != 0)};
    }
    gofl_call c = call_from_record(r);
    gpu.set_now(now);
    policy.decide(c, gpu);
    const double t = c.device == GOFL_DEV_GPU ? t_gpu : t_cpu;
    now += t;
    policy.observe(c, t, now);
    chosen += t;
    if (c.device == GOFL_DEV_GPU) {
      Accuracy& a = offloaded_cpu[name];
      ++a.calls;
      a.predicted += c.pred_cpu_s;
      a.model += policy.model().cpu_seconds(c.op, c.flops);
      a.measured += t_cpu;
    }
    best += std::min(t_cpu, t_gpu);
    all_cpu += t_cpu;
    auto& slot = by_reason[gofl_reason_name(c.reason)];
    slot.first += 1;
    slot.second += t - std::min(t_cpu, t_gpu);
    ++calls;
  }
  const double start = policy.stats().started ? startup_s : 0.0;
  printf("replayed %d calls (profile %s, level %d): auto %.3f s in its calls + %.3f s start-up = %.3f s; "
         "per-call best %.3f s; ratio %.3f\n",
         calls, profile.name.c_str(), cfg.level, chosen, start, chosen + start, best, best > 0 ? (chosen + start) / best : 1.0);
  // The best plan known in advance, as far as a replay sees it (no first GPU calls on either side):
  // all on the CPU, or the GPU started first and each call on its better device.
  const double plan = std::min(all_cpu, startup_s + best);
  printf("best plan known in advance %.3f s (%s); auto / that = %.3f\n", plan,
         plan == all_cpu ? "all on the CPU" : "start the GPU first, then the better device per call",
         plan > 0 ? (chosen + start) / plan : 1.0);
  for (const auto& [reason, v] : by_reason) printf("  %-24s %5d calls %+9.3f s\n", reason.c_str(), v.first, v.second);
  printf("the CPU time of the calls sent to the GPU: predicted at the decision (model x learnt correction), "
         "the model alone, measured by the cpu run\n");
  Accuracy all;
  const auto row = [](const char* name, const Accuracy& a) {
    printf("  %-8s %5d calls  predicted %10.3f s  model %10.3f s  measured %9.3f s  predicted/measured %6.2f  "
           "model/measured %5.2f\n",
           name, a.calls, a.predicted, a.model, a.measured, a.predicted / a.measured, a.model / a.measured);
  };
  for (const auto& [name, a] : offloaded_cpu) {
    row(name.c_str(), a);
    all.calls += a.calls, all.predicted += a.predicted, all.model += a.model, all.measured += a.measured;
  }
  if (all.calls) row("all", all);
  return 0;
}
