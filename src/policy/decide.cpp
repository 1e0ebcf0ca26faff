#include "policy/decide.h"

#include "common/nvml.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mutex>

#include "common/table.h"
#include "policy/auto_policy.h"
#include "policy/level.h"
#include "policy/profile.h"
#include "policy/settings.h"
#include "preload/gpu.h"

namespace gofl {

namespace {

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// The GPU as the decision sees it: the backend of src/preload/gpu.cpp. Only start() loads it.
class LibraryGpu final : public GpuEnv {
 public:
  bool started() override { return gpu_started(); }
  bool unavailable() override { return gpu_unavailable(); }
  bool start() override { return gpu_backend() != nullptr; }
  int supports(const gofl_call& c) override {
    const gofl_backend* b = running();
    return b ? b->supports(&c) : GOFL_GPU_NO_DEVICE;
  }
  // Before the start, NVML straight from here (no CUDA library is loaded for it); after it, the
  // backend's reading, whose NVML device is matched to the CUDA device by PCI bus id.
  int utilization() override {
    const gofl_backend* b = running();
    if (b && b->utilization) return b->utilization();
    return nvml_utilization();
  }
  bool memory(uint64_t* free_b, uint64_t* total_b) override {
    const gofl_backend* b = running();
    return b && b->memory(free_b, total_b) == 0;
  }
  uint64_t device_bytes(const gofl_call& c) override {
    const gofl_backend* b = running();
    return b ? b->device_bytes(&c) : 0;
  }
  uint64_t resident_bytes(const gofl_call& c) override {
    const gofl_backend* b = running();
    return b ? b->resident_bytes(&c) : 0;
  }
  double now() override { return now_s(); }

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
    // Never destroyed: calls may still arrive from other threads while the process exits.
    AutoPolicy* made = new AutoPolicy(active_profile(), cfg);
    __atomic_store_n(&g_policy, made, __ATOMIC_RELEASE);
    return made;
  }();
  return *p;
}

bool auto_mode() {
  const Settings& s = settings();
  return s.device == DeviceMode::Auto && !s.verify;
}

std::string fmt_s(double s) {
  char b[32];
  if (s >= 1 || s == 0) snprintf(b, sizeof b, "%.2f s", s);
  else if (s >= 1e-3) snprintf(b, sizeof b, "%.1f ms", s * 1e3);
  else snprintf(b, sizeof b, "%.0f us", s * 1e6);
  return b;
}

}  // namespace

void decide(gofl_call& c) {
  const Settings& s = settings();
  c.device = GOFL_DEV_CPU;
  if (!gofl_ops[c.op].gpu_capable) { c.reason = GOFL_R_NOT_GPU_CAPABLE; return; }
  if (s.device == DeviceMode::Cpu) { c.reason = GOFL_R_FORCED_CPU; return; }
  if (gpu_lost_by_fork()) { c.reason = GOFL_R_AFTER_FORK; return; }
  if (auto_mode()) {
    policy().decide(c, g_env);
    return;
  }
  // --device gpu, or verify mode (which checks every GPU-capable call, whatever its size).
  const gofl_backend* b = gpu_backend();
  if (!b) { c.reason = gpu_lost_by_fork() ? GOFL_R_AFTER_FORK : GOFL_R_NO_BACKEND; return; }
  switch (b->supports(&c)) {
    case GOFL_GPU_OK: break;
    case GOFL_GPU_INVALID_ARGS: c.reason = GOFL_R_INVALID_ARGS; return;  // the CPU library's xerbla speaks
    default: c.reason = GOFL_R_NOT_GPU_CAPABLE; return;                   // this variant stays on the CPU
  }
  uint64_t free_b = 0, total_b = 0;
  if (b->memory(&free_b, &total_b) == 0) {
    const double reserve = s.memory_reserve >= 0 ? s.memory_reserve : level_row(s.level).memory_reserve * double(total_b);
    if (double(free_b) < double(b->device_bytes(&c)) + reserve) { c.reason = GOFL_R_GPU_MEMORY; return; }
  }
  c.device = GOFL_DEV_GPU;
  c.reason = s.verify ? GOFL_R_VERIFY : GOFL_R_FORCED_GPU;
}

void decide_done(const gofl_call& c, uint64_t duration_ns) {
  if (c.pred_cpu_s <= 0 && c.pred_gpu_s <= 0) return;  // no prediction: nothing to learn
  if (!auto_mode()) return;
  policy().observe(c, double(duration_ns) * 1e-9, now_s());
}

void decide_fork_child() {
  if (AutoPolicy* p = __atomic_load_n(&g_policy, __ATOMIC_ACQUIRE)) p->after_fork();
}

std::string active_profile_label() { return profile_label(active_profile()); }

double predicted_copy_in_seconds(double bytes) { return active_profile().h2d.seconds(bytes); }

std::string decide_summary() {
  if (!auto_mode()) {
    // --device gpu (or verify): the start-up is not part of any call's time, so say what it cost.
    if (!gpu_started()) return "";
    char line[160];
    snprintf(line, sizeof line, "  GPU start-up: paid %s, before the first GPU call (not in the calls' times)\n",
             fmt_s(gpu_startup_seconds()).c_str());
    return line;
  }
  const PolicyStats st = policy().stats();
  if (st.decided == 0) return "";
  std::string out;
  char line[512];
  if (st.started) {
    const double actual = gpu_startup_seconds();
    snprintf(line, sizeof line,
             "  GPU start-up: paid %s (profile: %s) at decided call %llu, after %s of predicted savings were "
             "missed (level %d starts at %.2gx the start-up cost)\n",
             fmt_s(actual).c_str(), fmt_s(st.startup_s).c_str(), (unsigned long long)st.start_call,
             fmt_s(st.missed_savings_s).c_str(), policy().config().level, policy().level().start_factor);
  } else if (st.start_failed) {
    snprintf(line, sizeof line,
             "  GPU start-up: justified at decided call %llu, but it failed: %s; calls stay on the CPU\n",
             (unsigned long long)st.start_call, gpu_unavailable_reason());
  } else if (gpu_unavailable()) {
    // A child forked after its parent's start failed (a child of a started GPU decides nothing:
    // its calls are "forked child" before the policy sees them).
    snprintf(line, sizeof line, "  GPU start-up: none in this process: %s; calls stay on the CPU\n",
             gpu_unavailable_reason());
  } else if (st.not_started_calls > 0) {
    snprintf(line, sizeof line,
             "  GPU start-up: avoided (%s); %llu calls would have gained %s on the GPU, less than the %s that "
             "justify starting it\n",
             fmt_s(st.startup_s).c_str(), (unsigned long long)st.not_started_calls, fmt_s(st.missed_savings_s).c_str(),
             fmt_s(st.start_needed_s).c_str());
  } else {
    snprintf(line, sizeof line, "  GPU start-up: avoided (%s); no call was predicted to gain from the GPU\n",
             fmt_s(st.startup_s).c_str());
  }
  out += line;
  if (st.offloaded > 0) {
    const double saved = st.offloaded_pred_cpu_s - st.offloaded_actual_s;
    snprintf(line, sizeof line,
             "  offloaded: %llu calls predicted to take %s on the CPU took %s on the GPU (predicted %s): about %s "
             "%s\n",
             (unsigned long long)st.offloaded, fmt_s(st.offloaded_pred_cpu_s).c_str(),
             fmt_s(st.offloaded_actual_s).c_str(), fmt_s(st.offloaded_pred_gpu_s).c_str(),
             fmt_s(saved >= 0 ? saved : -saved).c_str(), saved >= 0 ? "saved" : "lost");
    out += line;
  }
  if (st.probes > 0) {
    snprintf(line, sizeof line, "  CPU probes: %llu calls took %s on the CPU (predicted %s on the GPU)\n",
             (unsigned long long)st.probes, fmt_s(st.probe_actual_s).c_str(), fmt_s(st.probe_pred_gpu_s).c_str());
    out += line;
  }
  return out;
}

}  // namespace gofl
