#include "preload/decide.h"

#include "common/gpu_placement.h"
#include "common/nvml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mutex>

#include "common/clock.h"
#include "common/table.h"
#include "policy/auto_policy.h"
#include "policy/level.h"
#include "policy/profile.h"
#include "policy/model.h"
#include "policy/registry.h"
#include "policy/settings.h"
#include "policy/split.h"
#include "preload/gpu.h"
#include "preload/run_history.h"

namespace gofl {

namespace {

// The GPU as the decision sees it: the backend of src/preload/gpu.cpp. Only start() loads it.
class LibraryGpu final : public GpuEnv {
 public:
  bool started() override { return gpu_started(); }
  bool unavailable() override { return gpu_unavailable(); }
  bool start(const gofl_call& first) override { return gpu_backend(first.op) != nullptr; }
  bool start_ahead(const gofl_call& first) override { return gpu_start_ahead(first.op); }

  // Before the start, NVML straight from here (no CUDA library is loaded for it): the GPU the start
  // would pick by the same rule; after it, the backend's reading of the GPU it runs on.
  int utilization() override {
    const gofl_backend* b = running();
    if (b && b->utilization) return b->utilization();
    const std::vector<GpuLoad> loads = nvml_visible_loads();
    GpuList list;
    if (loads.empty() || !parse_gpu_list(settings().gpus, &list, nullptr)) return nvml_utilization();
    const LocalRank rank = find_local_rank([](const char* n) -> const char* { return secure_getenv(n); });
    const Placement p = choose_gpu(int(loads.size()), list, rank, loads);
    return p.device >= 0 ? loads[size_t(p.device)].utilization : -1;
  }
  bool memory(uint64_t* free_b, uint64_t* total_b) override {
    const gofl_backend* b = running();
    return b && b->memory(free_b, total_b) == 0;
  }
  double now() override { return now_s(); }
  void warm(int op, int64_t n) override { gpu_warm(uint32_t(op), n); }
  bool warming() override { return gpu_working_beside(); }

 protected:
  bool make_plan(const gofl_call& c, gofl_plan* p) override {
    const gofl_backend* b = running();
    if (b) b->plan(&c, p);
    return b != nullptr;
  }

 private:
  static const gofl_backend* running() { return gpu_started() ? gpu_backend() : nullptr; }
};

// Never destroyed, like the profile and the policy: decisions may still be made during exit.
LibraryGpu& g_env = *new LibraryGpu;

const Profile& active_profile() {
  // Never destroyed: the summary is printed by the library's destructor, after static objects.
  static const Profile* p = [] {
    std::string msg;
    Profile* r = new Profile(load_profile(settings().profile, [](const char* n) -> const char* { return secure_getenv(n); }, &msg));
    if (!msg.empty()) fprintf(stderr, "gpu-offload: %s\n", msg.c_str());
    return r;
  }();
  return *p;
}

AutoPolicy* g_policy = nullptr;  // set once policy() made it

AutoPolicy& policy() {
  static AutoPolicy* p = [] {
    const Settings& s = settings();
    PolicyConfig cfg;
    cfg.level = s.level;
    cfg.threshold = s.threshold;
    cfg.memory_reserve = s.memory_reserve;
    cfg.residency = s.residency;
    // Earlier runs of this program that all paid for the GPU: start it at once (policy/history.h).
    const ProgramHistory h = earlier_runs();
    if (h.all_paid()) {
      cfg.earlier_runs = h.runs;
      cfg.earlier_gained_s = h.gained_s;
    }
    for (const HistoryOp& o : h.gpu_ops)  // warmed once the GPU runs (a name not in our table: skipped)
      if (const int op = gofl_op_by_name(o.name.c_str()); op >= 0) cfg.earlier_gpu_ops.emplace_back(op, o.n);
    // GPU_OFFLOAD_START_AHEAD=1: the start beside the calls (PolicyConfig::start_ahead: measured
    // not to pay on the GPU test machine, so off by default).
    cfg.start_ahead = setting_bool(SettingId::START_AHEAD, false);
    // GPU_OFFLOAD_START_EARLY=1: with such earlier runs the first decided call begins the start beside
    // the calls (PolicyConfig::start_early: off, its gain not shown beyond the spread).
    cfg.start_early = setting_bool(SettingId::START_EARLY, false);
    cfg.warm = s.warm;  // GPU_OFFLOAD_WARM (off: no operation is warmed beside the calls)
    // GPU_OFFLOAD_FIRST_CALL_MS: a first GPU call's charge until its warm-up ended (off by default).
    cfg.first_call_s = first_call_charge_setting_s();
    // Never destroyed: calls may still arrive from other threads while the process exits.
    AutoPolicy* made = new AutoPolicy(active_profile(), cfg);
    __atomic_store_n(&g_policy, made, __ATOMIC_RELEASE);
    return made;
  }();
  return *p;
}

// A call going to the GPU: over several GPUs (GOFL_F_SPLIT) when the setting forces it and the
// split engines run it, or under `auto` when the model predicts it faster than one GPU.
void choose_split(gofl_call& c) {
  const Settings& s = settings();
  if (s.split == SplitMode::Off || c.reason == GOFL_R_VERIFY || g_env.plan(c).split_status != GOFL_GPU_OK) return;
  if (s.split == SplitMode::Auto) {
    const int gpus = gpu_split_gpus();
    if (gpus < 2) return;  // one GPU: a split cannot pay
    static const Model* model = new Model(active_profile());  // never destroyed, like the profile
    const CallBytes b = call_bytes(c);
    if (!split_pays(*model, c.op, c.flops, b.in, b.out, gpus, gpu_split_started())) return;
  }
  c.flags |= GOFL_F_SPLIT;
}

}  // namespace

bool auto_mode() {
  const Settings& s = settings();
  return s.device == DeviceMode::Auto && !s.verify;
}

const AutoPolicy* auto_policy_made() { return __atomic_load_n(&g_policy, __ATOMIC_ACQUIRE); }

void decide(gofl_call& c) {
  const Settings& s = settings();
  c.device = GOFL_DEV_CPU;
  if (!gofl_ops[c.op].gpu_capable) { c.reason = GOFL_R_NOT_GPU_CAPABLE; return; }
  if (s.device == DeviceMode::Cpu) { c.reason = GOFL_R_FORCED_CPU; return; }
  if (gpu_lost_by_fork()) { c.reason = GOFL_R_AFTER_FORK; return; }
  if (auto_mode()) {
    policy().decide(c, g_env);
    if (c.device == GOFL_DEV_GPU) choose_split(c);
    return;
  }
  // --device gpu, or verify mode (which checks every GPU-capable call, whatever its size).
  if (!gpu_backend(c.op)) { c.reason = gpu_lost_by_fork() ? GOFL_R_AFTER_FORK : GOFL_R_NO_BACKEND; return; }
  if (!gpu_takes(c, g_env, s.memory_reserve, level_row(s.level).memory_reserve)) return;
  c.device = GOFL_DEV_GPU;
  c.reason = s.verify ? GOFL_R_VERIFY : GOFL_R_FORCED_GPU;
  choose_split(c);
}

void decide_done(const gofl_call& c, uint64_t duration_ns, uint64_t line_wait_ns) {
  if (c.pred_cpu_s <= 0 && c.pred_gpu_s <= 0) return;  // no prediction: nothing to learn
  if (!auto_mode()) return;
  // A split call's time says nothing about one GPU's speed: it corrects no prediction.
  if (c.flags & GOFL_F_SPLIT) return;
  policy().observe(c, double(duration_ns) * 1e-9, now_s(), double(line_wait_ns) * 1e-9);
}

void decide_fork_child() {
  if (AutoPolicy* p = __atomic_load_n(&g_policy, __ATOMIC_ACQUIRE)) p->after_fork();
}

std::string active_profile_label() { return profile_label(active_profile()); }

double predicted_copy_in_seconds(double bytes) { return active_profile().h2d.seconds(bytes); }

}  // namespace gofl
