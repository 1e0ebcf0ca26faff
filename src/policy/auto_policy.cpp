#include "policy/auto_policy.h"

#include <math.h>

#include <algorithm>
#include <cmath>
#include <new>

#include "common/keep_history.h"
#include "policy/registry.h"
#include "policy/reserve.h"
#include "trace/codes.h"

namespace gofl {

double first_call_charge_setting_s() { return 1e-3 * double(setting_long(SettingId::FIRST_CALL_MS, 0)); }

namespace {

// Predictions go into float fields of the call and the trace record.
float as_float(double s) { return float(std::min(s, 1e30)); }

// CPU runs whose duration is the CPU library's own work on the whole call.
bool cpu_observation(const gofl_call& c) {
  if (c.device != GOFL_DEV_CPU) return false;
  switch (c.reason) {
    case GOFL_R_PREDICTED_SLOWER:
    case GOFL_R_NOT_STARTED:
    case GOFL_R_STARTING:
    case GOFL_R_GPU_BUSY:
    case GOFL_R_GPU_MEMORY:
    case GOFL_R_PROBE:
    case GOFL_R_NO_BACKEND:
    case GOFL_R_NOT_GPU_CAPABLE:
      return true;
    default:
      return false;  // GPU_FAILED / GPU_HELD include a GPU attempt; INVALID_ARGS returns at once
  }
}

// The call was handed to the GPU by decide() (whatever became of it there).
bool gpu_attempt(const gofl_call& c) {
  return c.reason == GOFL_R_OFFLOADED || c.reason == GOFL_R_GPU_FAILED || c.reason == GOFL_R_GPU_HELD ||
         (c.reason == GOFL_R_INVALID_ARGS && c.gpu_status != 0);
}

}  // namespace

bool gpu_takes(gofl_call& c, GpuEnv& env, double reserve_bytes, double reserve_fraction,
               const std::function<bool()>& too_busy) {
  const gofl_plan plan = env.plan(c);
  switch (plan.status) {
    case GOFL_GPU_OK: break;
    case GOFL_GPU_INVALID_ARGS: c.reason = GOFL_R_INVALID_ARGS; return false;  // the CPU library's xerbla speaks
    default: c.reason = GOFL_R_NOT_GPU_CAPABLE; return false;                   // this variant stays on the CPU
  }
  if (too_busy && too_busy()) {
    c.reason = GOFL_R_GPU_BUSY;
    return false;
  }
  uint64_t free_b = 0, total_b = 0;
  if (env.memory(&free_b, &total_b)) {
    const double reserve = gpu_memory_reserve(reserve_bytes, reserve_fraction, double(total_b));
    if (double(free_b) < double(plan.device_bytes) + reserve) {
      c.reason = GOFL_R_GPU_MEMORY;
      return false;
    }
  }
  return true;
}

AutoPolicy::AutoPolicy(const Profile& profile, const PolicyConfig& cfg)
    : model_(profile), cfg_(cfg), level_(level_row(cfg.level)) {
  stats_.startup_s = profile.gpu_startup_s;
  stats_.at_once = cfg.earlier_runs > 0;
  stats_.start_needed_s = stats_.at_once ? 0.0 : profile.gpu_startup_s * level_.start_factor;
}

int SizeCorrection::band(double flops) {
  if (!(flops > 1e6)) return 0;
  const double b = std::log2(flops / 1e6) / 3;
  return b >= kBands - 1 ? kBands - 1 : int(b);
}

double SizeCorrection::at(double flops) const {
  const int b = band(flops);
  if (seen_[b]) return std::exp(log_factor_[b]);
  int lo = b - 1, hi = b + 1;
  while (lo >= 0 && !seen_[lo]) --lo;
  while (hi < kBands && !seen_[hi]) ++hi;
  const bool below = lo >= 0, above = hi < kBands;
  double log_f = 0;
  if (below && above) {
    log_f = log_factor_[lo] + (log_factor_[hi] - log_factor_[lo]) * double(b - lo) / double(hi - lo);
  } else if (below || above) {
    const int near = below ? lo : hi;
    log_f = log_factor_[near] / double(1 + std::abs(b - near));
  }
  return std::exp(log_f);
}

void SizeCorrection::learn(double flops, double ratio) {
  const int b = band(flops);
  // Halfway from what was predicted for this size (the neighbours' factor for a first observation).
  const double f = std::clamp(std::sqrt(at(flops) * ratio), 1e-2, 1e2);
  log_factor_[b] = std::log(f);
  seen_[b] = true;
}

double AutoPolicy::correction(int op, int device, double flops) const {
  std::lock_guard<std::mutex> lk(mu_);
  return ops_[op].correction[device].at(flops);
}

double AutoPolicy::predict_cpu(const gofl_call& c) const {
  return model_.cpu_seconds(c.op, c.flops) * correction(c.op, kCpu, c.flops);
}

double AutoPolicy::predict_gpu(const gofl_call& c) const {
  const CallBytes b = call_bytes(c);
  return model_.gpu_seconds(c.op, c.flops, b.in, b.out) * correction(c.op, kGpu, c.flops);
}

void AutoPolicy::after_fork() {
  new (&mu_) std::mutex();
  const PolicyStats fresh = [&] {
    PolicyStats p;
    p.startup_s = stats_.startup_s;
    p.start_needed_s = stats_.start_needed_s;
    p.at_once = stats_.at_once;
    return p;
  }();
  stats_ = fresh;
  gpu_inflight_ = 0;
  starting_ = false;  // a start in the parent's background is not this child's (it has no GPU)
  last_gpu_activity_ = util_read_at_ = -1e300;
  for (OpState& st : ops_) st.probed_after_start = false;
}

PolicyStats AutoPolicy::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

// NVML's reading, at most kUtilizationMaxAge old. Called without mu_ held (a first reading opens
// NVML, which takes a while).
int AutoPolicy::utilization(GpuEnv& env, double now) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (now - util_read_at_ < kUtilizationMaxAge) return util_value_;
  }
  return read_utilization(env, now);
}

// Other programs load the GPU beyond the level's limit (an unknown reading, -1, is no objection).
bool AutoPolicy::too_busy(int util) const { return util >= 0 && util > level_.busy_limit * 100.0 + 1e-6; }

int AutoPolicy::read_utilization(GpuEnv& env, double now) {
  const int util = env.utilization();
  std::lock_guard<std::mutex> lk(mu_);
  util_value_ = util;
  util_read_at_ = now;
  return util;
}

void AutoPolicy::start_beside_failed() {
  starting_ = false;
  start_failed_ = stats_.start_failed = true;
  stats_.started = false;
}

void AutoPolicy::start_early(const gofl_call& c, GpuEnv& env, std::unique_lock<std::mutex>& lk) {
  early_tried_ = true;
  if (stats_.started || start_failed_ || env.started() || env.unavailable()) return;
  const uint64_t call_no = stats_.decided;
  lk.unlock();  // NVML's first reading and the start's first step take a while
  const bool busy = too_busy(utilization(env, env.now()));
  const bool ok = !busy && env.start_ahead(c);
  const double began = env.now();
  lk.lock();
  // Too busy: the first call predicted to gain asks again. Another thread's call may have started it meanwhile.
  if (busy || stats_.started || start_failed_) return;
  stats_.start_call = call_no;
  if (!ok) {
    start_failed_ = stats_.start_failed = true;
    return;
  }
  stats_.started = true;
  if (!env.started()) {
    starting_ = true;
    start_began_s_ = began;
  }
}

void AutoPolicy::decide(gofl_call& c, GpuEnv& env) {
  c.device = GOFL_DEV_CPU;
  c.pred_cpu_s = c.pred_gpu_s = 0;
  if (!(c.flops >= cfg_.threshold) || c.op >= GOFL_N_OPS) {
    c.reason = GOFL_R_BELOW_THRESHOLD;
    return;
  }
  CallBytes bytes = call_bytes(c);
  // Inputs already on the GPU cost no copy: a call too small to pay its copies may still gain.
  const double resident = env.started() ? double(env.plan(c).resident_bytes) : 0.0;
  bytes.in = std::max(0.0, bytes.in - resident);

  std::unique_lock<std::mutex> lk(mu_);
  if (resident == 0) bytes.in = std::min(bytes.in, amortized_in_bytes(c));
  const double raw_cpu = model_.cpu_seconds(c.op, c.flops);
  const double raw_gpu = model_.gpu_seconds(c.op, c.flops, bytes.in, bytes.out);
  OpState& st = ops_[c.op];
  const double cpu_correction = st.correction[kCpu].at(c.flops);
  const double t_cpu = raw_cpu * cpu_correction;
  const double t_gpu = raw_gpu * st.correction[kGpu].at(c.flops);
  c.pred_cpu_s = as_float(t_cpu);
  c.pred_gpu_s = as_float(t_gpu);
  ++stats_.decided;
  if (cfg_.start_early && stats_.at_once && !early_tried_) start_early(c, env, lk);
  if (!(t_cpu >= level_.required_speedup * t_gpu)) {
    warm_for(c, env, false);
    c.reason = GOFL_R_PREDICTED_SLOWER;
    return;
  }

  // Ski rental: start the GPU only once the savings missed so far pay for it.
  bool trigger = false;
  if (!env.started()) {
    if (start_failed_ || env.unavailable()) {
      if (starting_) start_beside_failed();
      c.reason = GOFL_R_NO_BACKEND;
      return;
    }
    const double saving = std::max(0.0, t_cpu - t_gpu);
    if (!starting_) {
      if (!stats_.at_once && stats_.missed_savings_s + saving < stats_.start_needed_s) {
        stats_.missed_savings_s += saving;
        ++stats_.not_started_calls;
        warm_for(c, env, false);  // noted for the start
        c.reason = GOFL_R_NOT_STARTED;
        return;
      }
      // Starting is justified, unless other programs load the GPU beyond the level's limit: then the
      // start-up would buy a GPU this process may not use (NVML needs no CUDA; this process has not
      // used the GPU, so the reading is all theirs).
      const uint64_t call_no = stats_.decided;
      // NVML's first reading and the start take a while and load foreign code: never under our lock.
      lk.unlock();
      if (too_busy(utilization(env, env.now()))) {
        c.reason = GOFL_R_GPU_BUSY;
        return;
      }
      const bool ok = cfg_.start_ahead ? env.start_ahead(c) : env.start(c);
      const double began = env.now();
      lk.lock();
      if (!ok) {
        start_failed_ = true;
        stats_.start_failed = true;
        stats_.start_call = call_no;
        stats_.missed_savings_s += saving;
        c.reason = GOFL_R_NO_BACKEND;
        return;
      }
      if (!stats_.started) {
        stats_.started = true;
        stats_.start_call = call_no;
        trigger = true;  // this call pays for the start: it runs there, no probe
        if (env.started()) warm_at_start(&c, env);
      }
      if (!env.started()) {  // the start goes on beside the calls (GpuEnv::start_ahead)
        starting_ = true;
        start_began_s_ = began;
      }
    }
    if (starting_ && !env.started()) {
      // Wait for the start only when the call gains even so: when the rest of the start (by the
      // profile's start-up cost) and the GPU's time are shorter than the CPU's.
      const double rest = std::max(0.0, stats_.startup_s - (env.now() - start_began_s_));
      if (!(t_cpu > rest + t_gpu)) {
        stats_.starting_missed_s += saving;
        ++stats_.starting_calls;
        warm_for(c, env, false);  // noted for when the start ends
        c.reason = GOFL_R_STARTING;
        return;
      }
      lk.unlock();
      const bool ok = env.start(c);  // waits for the start to end
      lk.lock();
      if (!ok) {
        start_beside_failed();
        c.reason = GOFL_R_NO_BACKEND;
        return;
      }
      trigger = true;  // it waited for the GPU: it runs there, no probe
    }
    starting_ = false;
  }
  lk.unlock();

  // Other programs' load: only meaningful while we do not use the GPU ourselves.
  double now = 0;
  const auto others_too_busy = [&] {
    now = env.now();
    lk.lock();
    const bool idle = gpu_inflight_ == 0 && now - last_gpu_activity_ >= kIdleForUtilization;
    lk.unlock();
    return idle && too_busy(utilization(env, now));
  };
  if (!gpu_takes(c, env, cfg_.memory_reserve, level_.memory_reserve, others_too_busy)) return;

  lk.lock();
  if (!trigger) {
    // Due once after the start, for an operation never seen on the CPU, and after 16 offloaded
    // calls; taken by the first call whose predicted loss the GPU time since pays for. The loss is
    // counted with the CPU correction at most 1: one slow CPU observation (OpenBLAS's first getrf
    // of a size has taken 30x its usual time) would otherwise make probes rarer by the same
    // factor, just when the CPU most needs looking at again.
    const double probe_loss = raw_cpu * std::min(cpu_correction, 1.0) - t_gpu;
    const bool due = (!st.cpu_seen && !st.probed_after_start) || st.since_cpu >= uint32_t(kProbeEvery);
    const bool affordable = probe_loss <= kProbeShare * st.gpu_s_since_cpu &&
                            st.probe_lost_s + std::max(probe_loss, 0.0) <= kProbeShare * st.gpu_s_total;
    if (due && affordable) {
      if (!st.cpu_seen) st.probed_after_start = true;
      st.since_cpu = 0;
      st.gpu_s_since_cpu = 0;
      ++stats_.probes;
      warm_for(c, env, false);
      c.reason = GOFL_R_PROBE;
      return;
    }
    // The operation's first GPU call before its warm-up ended (never asked, or warm-ups still queued
    // or running, for at most kFirstCallWaitS since it was asked: PolicyConfig::first_call_s) pays
    // the libraries' first-use work, or waits behind it.
    if (cfg_.first_call_s > 0 && cfg_.warm && !st.warm_settled &&
        (st.warm_n < 0 || (env.now() - st.warm_asked_s < kFirstCallWaitS && env.warming()))) {
      const double with_first = t_gpu + cfg_.first_call_s;
      if (!(t_cpu >= level_.required_speedup * with_first)) {
        c.pred_gpu_s = as_float(with_first);
        warm_for(c, env, false);
        c.reason = GOFL_R_PREDICTED_SLOWER;
        return;
      }
    }
  }
  ++st.since_cpu;
  st.gpu_s_since_cpu += t_gpu;
  st.gpu_s_total += t_gpu;
  ++gpu_inflight_;
  last_gpu_activity_ = now;
  warm_for(c, env, true);
  c.device = GOFL_DEV_GPU;
  c.reason = GOFL_R_OFFLOADED;
}

// Warming (PolicyConfig::warm). A routine's first GPU call pays the CUDA libraries' one-time work for it
// (cuBLAS's set-up of each precision: 49-114 ms on the GPU test machine (H200, 16-core host); cuSOLVER's
// kernels: up to 36 ms more), which a small call on another thread pays as well, off the program's path
// (cuda/warm.h). A program that calls an operation is likely to call it again, larger: so, once the GPU
// runs, each operation decided on the CPU (predicted slower, or a probe) is warmed, and at the start every
// one decided before it, for the largest size decided so far; a later call on the CPU of a larger size asks
// again (the backend warms a second, larger size only where larger calls use other kernels). Nothing for an
// operation once its first GPU call came, nor for one whose first decided call after the start went there;
// none for calls below the threshold (no decision), so small math never warms anything.
namespace {
int64_t call_size(const gofl_call& c) { return std::max({c.dims[0], c.dims[1], c.dims[2], int64_t(0)}); }
}  // namespace

void AutoPolicy::warm_for(const gofl_call& c, GpuEnv& env, bool gpu) {
  if (!cfg_.warm) return;
  // A start beside the calls (start_ahead) ends after the call that began it: its warm-ups come with
  // the first decision that finds the GPU running.
  if (!warmed_at_start_ && stats_.started && env.started()) warm_at_start(nullptr, env);
  OpState& st = ops_[c.op];
  if (st.warm_settled) return;
  const int64_t n = call_size(c);
  if (!env.started()) {
    if (st.decided_before_start == 0) decided_order_.push_back(c.op);
    if (st.decided_before_start < 2) ++st.decided_before_start;  // once, or more than once
    st.decided_n = std::max(st.decided_n, n);
    return;
  }
  if (gpu) {
    st.warm_settled = true;
    return;
  }
  ask_warm(c.op, n, env);
}

void AutoPolicy::ask_warm(int op, int64_t n, GpuEnv& env) {
  OpState& st = ops_[op];
  if (st.warm_settled || n <= st.warm_n) return;
  st.warm_n = n;
  st.warm_asked_s = env.now();
  env.warm(op, n);
}

void AutoPolicy::warm_at_start(const gofl_call* first, GpuEnv& env) {
  if (!cfg_.warm) return;
  warmed_at_start_ = true;
  if (first) ops_[first->op].warm_settled = true;  // it runs there now
  // The operations called more than once first: a program that repeats a call is likely to make it
  // again soon, while one made once (a set-up product, say) may not come back for a while. In the
  // sweep's traces on an H100 host a dgemm made once at the program's start was warmed first
  // (55–94 ms), while the single-precision calls it had repeated came to the GPU cold.
  for (const bool repeated : {true, false})
    for (const int op : decided_order_)
      if ((ops_[op].decided_before_start > 1) == repeated) ask_warm(op, ops_[op].decided_n, env);
  decided_order_.clear();
  // Then what earlier runs of the program ran on the GPU, in their order: a program that called an
  // operation there last time is likely to again, and its warm-up then has time to end before.
  for (const auto& [op, n] : cfg_.earlier_gpu_ops)
    if (op >= 0 && op < GOFL_N_OPS) ask_warm(op, n, env);
}

std::vector<std::pair<int, int64_t>> AutoPolicy::gpu_ops() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<std::pair<int, int64_t>> out;
  for (const int op : gpu_order_) out.emplace_back(op, ops_[op].gpu_n);
  return out;
}

namespace {
// An input as residency knows it: its address and size (what the backend keys a kept copy by).
uint64_t reuse_key(const gofl_call_operand& o, double bytes) {
  return reinterpret_cast<uint64_t>(o.ptr) ^ (uint64_t(bytes) << 1);
}
}  // namespace

double AutoPolicy::amortized_in_bytes(const gofl_call& c) {
  double in = 0;
  for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
    const gofl_call_operand& o = c.operands[i];
    if (o.role != GOFL_IN && o.role != GOFL_INOUT) continue;
    const double bytes = double(o.elems) * double(o.elem_size);
    if (GOFL_RESIDENCY_OF(c.resident, i) != GOFL_RES_COPIED) continue;  // (a replayed call's kept inputs)
    const auto it = o.role == GOFL_IN && cfg_.residency && bytes >= double(residency_min_bytes())
                        ? reuse_.find(reuse_key(o, bytes))
                        : reuse_.end();
    if (it == reuse_.end() || it->second.uses < (2u << it->second.changes)) {
      in += bytes * gofl_copied_share(c.op, i);
      continue;
    }
    // Over this use and as many again as were seen, the GPU copies it at most until the backend
    // keeps it (KeepHistory::kKeptFromUpload: the upload that is kept).
    constexpr uint32_t kept_at = KeepHistory::kKeptFromUpload;
    const double copies_left = double(kept_at - std::min<uint32_t>(it->second.gpu_copies, kept_at));
    in += bytes * copies_left / double(it->second.uses + 1);
  }
  return in;
}

void AutoPolicy::note_reuse(const gofl_call& c) {
  if (!cfg_.residency) return;
  if (reuse_.size() > 4096) reuse_.clear();  // bounded; forgetting only delays the next gain
  for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
    const gofl_call_operand& o = c.operands[i];
    const double bytes = double(o.elems) * double(o.elem_size);
    if (o.role != GOFL_IN || bytes < double(residency_min_bytes()) || !o.ptr) continue;
    Reuse& r = reuse_[reuse_key(o, bytes)];
    ++r.uses;
    if (c.device != GOFL_DEV_GPU) continue;
    if (GOFL_RESIDENCY_OF(c.resident, i) != GOFL_RES_COPIED) {
      r.gpu_copies = KeepHistory::kKeptFromUpload;  // kept: no copy left to pay
    } else if (++r.gpu_copies > KeepHistory::kKeptFromUpload) {
      // Copied again although it should have been kept: the program changes it between calls.
      r = Reuse{0, 0, std::min<uint32_t>(r.changes + 1, 8)};
    }
  }
}

void AutoPolicy::observe(const gofl_call& c, double seconds, double now, double line_wait_s) {
  if (c.op >= GOFL_N_OPS || (c.pred_cpu_s <= 0 && c.pred_gpu_s <= 0)) return;  // decide() made no prediction
  std::lock_guard<std::mutex> lk(mu_);
  note_reuse(c);
  if (gpu_attempt(c)) {
    if (gpu_inflight_ > 0) --gpu_inflight_;
    last_gpu_activity_ = now;
  }
  OpState& st = ops_[c.op];
  int d;
  if (c.device == GOFL_DEV_GPU && c.reason == GOFL_R_OFFLOADED) {
    d = kGpu;
    if (st.gpu_n == 0) gpu_order_.push_back(c.op);
    st.gpu_n = std::max<int64_t>({st.gpu_n, c.dims[0], c.dims[1], c.dims[2], 1});
    ++stats_.offloaded;
    stats_.offloaded_pred_cpu_s += c.pred_cpu_s;
    stats_.offloaded_pred_gpu_s += c.pred_gpu_s;
    stats_.offloaded_actual_s += seconds;
  } else if (cpu_observation(c)) {
    d = kCpu;
    if (c.reason == GOFL_R_PROBE) {
      stats_.probe_actual_s += seconds;
      stats_.probe_pred_gpu_s += c.pred_gpu_s;
      if (seconds > 0) st.probe_lost_s += std::max(seconds - c.pred_gpu_s, 0.0);
    }
  } else {
    return;
  }
  if ((c.flags & GOFL_F_INFO_NONZERO) || !(seconds > 0)) return;  // a failed call returns early
  if (d == kCpu) {
    st.cpu_seen = true;
    st.since_cpu = 0;
    st.gpu_s_since_cpu = 0;
  } else if (!st.gpu_warm) {
    st.gpu_warm = true;  // the first GPU call of an operation pays one-off costs: not a speed
    return;
  }
  double raw, own = seconds;
  if (d == kCpu) {
    raw = model_.cpu_seconds(c.op, c.flops);
  } else {
    const CallBytes b = call_bytes(c);
    raw = model_.gpu_seconds(c.op, c.flops, b.in, b.out);
    if (line_wait_s > 0 && line_wait_s < seconds) own = seconds - line_wait_s;
  }
  if (!(raw > 0) || !std::isfinite(raw)) return;
  st.correction[d].learn(c.flops, std::clamp(own / raw, 1e-3, 1e3));
}

}  // namespace gofl
