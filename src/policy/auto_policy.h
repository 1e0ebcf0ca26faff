// The decision of --device auto (spec sections 3 and 4), with everything it reads from the GPU
// behind GpuEnv so that tests inject the readings and `gpu-offload estimate` replays traces
// through the same code as the library.
//
// For a top-level call of a GPU-capable operation:
//   - less work than the threshold (1e6 flops): no decision, CPU (BELOW_THRESHOLD);
//   - T_cpu and T_gpu predicted (model x the learnt corrections) and stored in the call;
//   - T_cpu < required_speedup(level) x T_gpu: CPU (PREDICTED_SLOWER);
//   - GPU not started (ski rental): the call's predicted saving T_cpu - T_gpu (never negative) is
//     added to the missed savings and it runs on the CPU (NOT_STARTED), until the missed savings
//     reach the level's start factor x the profile's start-up cost; then the GPU is started and
//     this call runs there. When each of the latest runs of the same program paid for the GPU
//     (PolicyConfig::earlier_runs, from policy/history.h), nothing is waited for: the first call
//     predicted to gain starts it, or with PolicyConfig::start_early the first decided call begins
//     it beside the calls, whatever that call's own prediction. A failed start: CPU from
//     then on (NO_BACKEND). Nothing asks the backend anything before that: a program with only small
//     math never loads CUDA;
//   - the GPU starting beside the calls (PolicyConfig::start_ahead, GpuEnv::start_ahead): a call runs
//     on the CPU (STARTING, its saving missed) unless its CPU time exceeds the rest of the start (the
//     profile's start-up cost less the time since the start began) plus its GPU time: then it waits
//     for the start and runs on the GPU. The call that began the start is decided the same way;
//   - the backend does not run this variant: CPU (NOT_GPU_CAPABLE / INVALID_ARGS);
//   - other programs load the GPU beyond the level's limit: CPU (GPU_BUSY). Utilisation is read
//     only when no call of this process ran on the GPU for a second (it includes our own work),
//     and a reading serves for 0.25 s;
//   - free GPU memory below the call's need plus the level's reserve: CPU (GPU_MEMORY);
//   - CPU probe: when the operation's CPU speed was not observed for 16 calls that went to the GPU,
//     or once after the GPU started if it was never observed, a probe is due, and the first call
//     of the operation that can afford it runs on the CPU (PROBE). A call affords it when its
//     predicted extra time on the CPU (T_cpu - T_gpu, with the CPU correction at most 1) is at
//     most kProbeShare (3%) of the GPU time the operation was predicted to use since its last CPU
//     observation. So probes never cost more than 3% of the predicted GPU time. Where the GPU is
//     less than 1.48x faster a probe still comes every 17th call (1.5x: every 18th); the probe
//     after the start waits for (speedup - 1) / 0.03 offloaded calls. Where the GPU is 45x faster
//     (a zgemm of n = 4096 on the GPU test machine, H200 with a 16-core host: 0.99 s on the CPU,
//     0.022 s on the GPU), a probe comes after ~1,500 such calls, or earlier on a call of the
//     operation about 90x smaller. Probing at simply the next call cost the n = 16384 sweep 1.8 s
//     in two probes, and a loop of such calls would have run 3x longer than on the GPU alone; a
//     CPU that much faster than its profile would be noticed just as well on a cheaper call of the
//     same operation. And a probe runs only while the operation's probes have measurably lost (their
//     observed CPU time less their predicted GPU time) at most that share of all its predicted GPU
//     time: where the CPU is persistently slower than its profile (PySCF's 16 OpenMP threads each
//     calling a 956^2 dsymm, which OpenBLAS then runs on one core each: 1,276 probes took 40.6 s on
//     the H200's host against 153 s saved), the probes that taught it make the next ones wait;
//   - with PolicyConfig::first_call_s (off by default): an operation's first GPU call before its
//     warm-up ended is charged that much more; a call that then gains too little stays on the CPU
//     (PREDICTED_SLOWER) and asks for the warm-up;
//   - otherwise the GPU (OFFLOADED).
//
// Learning: after each decided call, observe() gets its duration. The correction of the operation
// on that device, at the call's size, becomes sqrt(old x observed / predicted_uncorrected): halfway,
// in ratio terms, towards the latest ratio. Calls with info != 0 return early and teach nothing; the
// first GPU call of each operation neither (it pays lazy kernel loading and the device memory pool).
// A correction holds for a band of sizes (SizeCorrection: work within a factor of 8); a size not yet
// observed takes its neighbours' (interpolated between the nearest bands observed below and above,
// fading towards the profile's own speed beyond them). One factor for every size made the model
// worse than none: on that machine's sweep of bench/auto_sweep.py, small zgemm calls ran up to 8x slower
// than the calibrated curve (threads waking between calls) while large ones matched it within 1%,
// and the factor learnt from the small ones put the CPU time of the offloaded zgemm calls at 34x
// their measured time (the model alone: 0.99x), which the summary's "gained" and the run history
// then counted.
//
// Thread-safe: one small lock around the state; only calls with at least 1e6 flops take it.
#pragma once

#include <stdint.h>

#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/call.h"
#include "policy/level.h"
#include "policy/model.h"

namespace gofl {

// What the decision may ask about the GPU. The library's implementation talks to the backend
// (src/preload/decide.cpp); tests and `estimate` bring their own.
class GpuEnv {
 public:
  virtual ~GpuEnv() = default;
  virtual bool started() = 0;      // the backend runs; never starts it
  virtual bool unavailable() = 0;  // a start was tried and failed (or the GPU was lost by fork)
  // Load and start the backend (or wait for a start begun); true when it runs. `first`: the call that
  // would run there first (the start loads the CUDA libraries it uses beside the context's making).
  virtual bool start(const gofl_call& first) = 0;
  // Begin the start and return before its slow part (the driver and the context) ends: true when it
  // began or is done; started() turns true once it has ended well. By default the whole start.
  virtual bool start_ahead(const gofl_call& first) { return start(first); }
  // The backend's plan for `c` (common/call.h: whether it runs, its device memory, the bytes kept
  // device copies serve, the split engines): asked once and kept in c.plan. While no backend runs,
  // GOFL_GPU_NO_DEVICE, not kept.
  gofl_plan plan(gofl_call& c) {
    if (c.plan.planned) return c.plan;
    gofl_plan p{};
    if (make_plan(c, &p)) {
      c.plan = p;
      return p;
    }
    p.status = p.split_status = GOFL_GPU_NO_DEVICE;
    return p;
  }
  virtual int utilization() = 0;   // GPU utilisation in percent, -1 when unknown (needs no start)
  virtual bool memory(uint64_t* free_bytes, uint64_t* total_bytes) = 0;  // false when unknown
  virtual double now() = 0;        // seconds, monotonic
  // After the start: have the backend warm operation `op` beside the calls (cuda/warm.h), when it
  // can, for calls of about size `n` (their largest dimension; the backend picks its sizes from it).
  // Returns at once.
  virtual void warm(int /*op*/, int64_t /*n*/) {}
  // A warm-up runs or is queued (an atomic read). When none does, every warm-up asked has ended.
  virtual bool warming() { return false; }

 protected:
  // The backend's plan for `c` into *p (planned set); false while no backend runs.
  virtual bool make_plan(const gofl_call& c, gofl_plan* p) = 0;
};

// The GPU as a replay of recorded calls sees it (`gpu-offload estimate`, bench/replay_policy.cpp):
// it starts when asked, runs every call, and has no load or memory reading to object with; the
// clock is the replay's.
class ReplayGpu final : public GpuEnv {
 public:
  bool started() override { return started_; }
  bool unavailable() override { return false; }
  bool start(const gofl_call&) override { return started_ = true; }
  int utilization() override { return -1; }
  bool memory(uint64_t*, uint64_t*) override { return false; }
  double now() override { return now_; }
  void set_now(double t) { now_ = t; }

 protected:
  // Every recorded call runs; its kept copies are in the call itself (gofl_call.resident, counted by
  // call_bytes()).
  bool make_plan(const gofl_call&, gofl_plan* p) override {
    *p = gofl_plan{};
    p->planned = 1;
    p->status = GOFL_GPU_OK;
    p->split_status = GOFL_GPU_UNSUPPORTED;
    return true;
  }

 private:
  bool started_ = false;
  double now_ = 0;
};

// Whether the started GPU takes `c` now: the one check of --device auto (AutoPolicy::decide) and of
// the forced path (--device gpu, verify). In order: the backend runs this variant (else
// NOT_GPU_CAPABLE, or INVALID_ARGS for the CPU library's xerbla to report); `too_busy`, when given,
// does not object (else GPU_BUSY); the free GPU memory covers the call's need plus the reserve,
// `reserve_bytes` or, when that is negative, `reserve_fraction` of the total (else GPU_MEMORY).
// False with c.reason set when it does not.
bool gpu_takes(gofl_call& c, GpuEnv& env, double reserve_bytes, double reserve_fraction,
               const std::function<bool()>& too_busy = nullptr);

struct PolicyConfig {
  int level = 5;
  double threshold = 1e6;       // flops below which no decision is made
  double memory_reserve = -1;   // bytes always left free; -1: the level's fraction of the total
  bool residency = true;        // the backend keeps unchanged operands on the GPU between calls
  // Earlier runs of this program (policy/history.h): when each of the latest ones paid for the GPU
  // (earlier_runs > 0), the GPU starts at the first call predicted to gain, without waiting for
  // missed savings to reach the start factor; otherwise the rule above holds.
  int earlier_runs = 0;
  double earlier_gained_s = 0;
  // The operations earlier runs of this program ran on the GPU (op, largest dimension), in the
  // order of their first GPU call: warmed as soon as the GPU starts, whoever started it, after the
  // ones decided before the start (PolicyConfig::warm).
  std::vector<std::pair<int, int64_t>> earlier_gpu_ops = {};
  // Start the GPU beside the calls (GpuEnv::start_ahead) rather than in the call that justified it.
  // Off by default: on that machine's sweep of bench/auto_sweep.py the start beside OpenBLAS's 16 threads
  // took 482-562 ms instead of 308-372, and the calls it left on the CPU lost more than the wait it
  // saved (1.097 and 1.084 of the best plan known in advance, against 1.082 and 1.022 in the call).
  bool start_ahead = false;
  // With earlier runs that paid (earlier_runs > 0): the first decided call, whatever its own
  // prediction, begins the start beside the calls (GpuEnv::start_ahead), so that the start goes on
  // while the program works towards its first call that gains; calls meanwhile are decided as under
  // start_ahead. Without such runs it changes nothing (the ski rental decides when to start). Off by
  // default: on an H100 host (16 cores) it hid the start (0 s paid against 0.20-0.23 s) but the sweep
  // at n <= 2048 came to 1.116 and 1.110 of the best plan against 1.120 and 1.129, inside the
  // sweep's run-to-run spread (bench/probes/start_early_ab.sh).
  bool start_early = false;
  // Warm each operation the program calls before its first GPU call (GpuEnv::warm): at the start,
  // every one decided before it (those decided more than once first), then earlier_gpu_ops; after,
  // one decided on the CPU.
  // GPU_OFFLOAD_WARM=0 turns it off.
  bool warm = true;
  // With warm: an operation's first GPU call is charged this much more (the CUDA libraries' first-use
  // work for it) until its warm-up has ended, so that a call that gains less waits on the CPU while
  // the warm-up runs beside it. 0 (GPU_OFFLOAD_FIRST_CALL_MS unset): no charge. In the sweep to 16384
  // on an H100 host, first GPU calls cost first runs 0.42-0.51 s over the best plan (a zgemm of
  // n = 64 took 175 ms behind a zheevd warm-up; unwarmed first calls of n = 1024: 1.68 s over 24
  // routines); whether charging them pays has not been measured, so it is off. The charge holds while
  // the warm-up has not been asked, or for kFirstCallWaitS after the ask while warm-ups run.
  double first_call_s = 0;
};
// GPU_OFFLOAD_FIRST_CALL_MS in seconds, for PolicyConfig::first_call_s (0 when unset), read the same
// by the library's policy and by bench/replay_policy.
double first_call_charge_setting_s();

// With PolicyConfig::first_call_s: how long after an operation's warm-up was asked a warm-up still
// running or queued keeps its first call charged. GpuEnv::warming() tells of any operation's, and a
// second run queues every operation its earlier runs used. In the sweep's auto runs on an H100 host
// a warm-up took 3 ms (median of 256) and at most 0.29 s (zgesdd).
constexpr double kFirstCallWaitS = 0.5;
constexpr int kProbeEvery = 16;          // offloaded calls without a CPU observation before a probe
constexpr double kProbeShare = 0.03;     // most a probe may lose, as a share of the operation's
                                         // predicted GPU time since its last CPU observation
constexpr double kIdleForUtilization = 1.0;  // seconds without our own GPU work before NVML counts
constexpr double kUtilizationMaxAge = 0.25;  // seconds a utilisation reading serves

struct PolicyStats {
  bool started = false;          // this policy started the GPU
  bool start_failed = false;     // it tried, and the GPU could not be used
  uint64_t start_call = 0;       // the decided call (1-based) that started it (or tried to)
  double missed_savings_s = 0;   // predicted savings of NOT_STARTED calls
  uint64_t not_started_calls = 0;
  uint64_t starting_calls = 0;   // calls that ran on the CPU while the GPU started beside them
  double starting_missed_s = 0;  // their predicted savings
  double startup_s = 0;          // the profile's start-up cost
  double start_needed_s = 0;     // start factor x start-up cost (0 when started at once)
  bool at_once = false;          // earlier runs of this program paid: start at the first call predicted to gain
  uint64_t decided = 0;          // calls that got a prediction
  uint64_t offloaded = 0;        // calls observed on the GPU
  double offloaded_pred_cpu_s = 0;  // their predicted CPU time
  double offloaded_pred_gpu_s = 0;
  double offloaded_actual_s = 0;    // their measured time
  uint64_t probes = 0;
  double probe_actual_s = 0, probe_pred_gpu_s = 0;
};

// The learnt correction of one operation on one device, by size: a factor per band of work (a
// factor of 8 in flops, from 1e6 up), each moved halfway towards the latest observed / predicted
// ratio of a call in its band.
class SizeCorrection {
 public:
  static constexpr int kBands = 16;
  static int band(double flops);
  // The factor for a call of `flops`: its band's when observed; else interpolated in log terms
  // between the nearest observed bands below and above; else the nearest observed band's factor
  // fading with the distance d in bands (its logarithm divided by 1 + d); 1 when none is observed.
  double at(double flops) const;
  void learn(double flops, double ratio);

 private:
  double log_factor_[kBands] = {};
  bool seen_[kBands] = {};
};

class AutoPolicy {
 public:
  AutoPolicy(const Profile& profile, const PolicyConfig& cfg);

  // Sets c.device, c.reason, c.pred_cpu_s and c.pred_gpu_s (0 when no prediction was made).
  void decide(gofl_call& c, GpuEnv& env);
  // The call has run on c.device in `seconds` (`now`: when it ended). Every call decide() made a
  // prediction for must come back here, whatever happened to it. `line_wait_s`: of a GPU call's
  // seconds, those it spent waiting in line behind other threads' calls. The GPU's correction learns
  // from the rest, its own time: the wait is the line's (preload/gpu_line.h), which a call weighs
  // against its gain with the line as it finds it; learnt into the GPU's speed, the waits of one burst
  // of calls made the next calls of that size predict the GPU slower even with the line empty (PySCF
  // C8H18: 12,640 dsymm calls predicted slower on the GPU, 3.9 ms each on the CPU, 0.7 ms of copies
  // and kernel on the GPU). The summary's times keep the wait.
  void observe(const gofl_call& c, double seconds, double now, double line_wait_s = 0);

  // Predicted seconds with the current corrections.
  double predict_cpu(const gofl_call& c) const;
  double predict_gpu(const gofl_call& c) const;
  double correction(int op, int device, double flops) const;
  PolicyStats stats() const;
  // The operations this run offloaded (op, largest dimension of its calls there), in the order of
  // their first GPU call: what the run history keeps for the next run.
  std::vector<std::pair<int, int64_t>> gpu_ops() const;
  // In a forked child: a fresh lock (another thread may have held it) and counters of its own (it
  // pays its own start-up); the learnt corrections stay.
  void after_fork();
  const Model& model() const { return model_; }
  const LevelRow& level() const { return level_; }
  const PolicyConfig& config() const { return cfg_; }

 private:
  struct OpState {
    SizeCorrection correction[2];
    uint32_t since_cpu = 0;       // calls sent to the GPU since the last CPU observation
    double gpu_s_since_cpu = 0;   // their predicted GPU seconds (what pays for a probe)
    double gpu_s_total = 0;       // predicted GPU seconds of all its offloaded calls
    double probe_lost_s = 0;      // what its probes measurably lost: CPU time less predicted GPU time
    bool cpu_seen = false;        // a CPU observation happened
    bool probed_after_start = false;
    bool gpu_warm = false;        // the first GPU observation (warm-up) is behind us
    int decided_before_start = 0;  // its calls decided before the GPU started: 0, 1, or 2 for more
    int64_t decided_n = 0;        // before the start: the largest size of its decided calls
    int64_t warm_n = -1;          // the largest size the backend was asked to warm it for (-1: none)
    double warm_asked_s = 0;      // when it was last asked (GpuEnv::now)
    bool warm_settled = false;    // its first GPU call came: nothing more to warm
    int64_t gpu_n = 0;            // the largest size of its calls observed on the GPU (0: none)
  };
  std::vector<int> gpu_order_;      // operations in the order of their first observed GPU call
  // Warming (PolicyConfig::warm), under mu_: the call `c` was decided; `gpu` when it goes there now.
  void warm_for(const gofl_call& c, GpuEnv& env, bool gpu);
  // At the start (`first`: the call that runs there now), or at the first decision after a start
  // beside the calls ended (null).
  void warm_at_start(const gofl_call* first, GpuEnv& env);
  // Has the backend warm `op` for size n unless its first GPU call came or a size as large was asked.
  void ask_warm(int op, int64_t n, GpuEnv& env);
  std::vector<int> decided_order_;  // operations in the order of their first decided call, before the start
  bool warmed_at_start_ = false;    // warm_at_start ran (after a start beside the calls: at the first decision after it)

  Model model_;
  PolicyConfig cfg_;
  const LevelRow& level_;
  mutable std::mutex mu_;
  OpState ops_[GOFL_N_OPS];
  // Residency ahead of time: how often each large input (address, bytes) came back. The backend
  // keeps an operand from its second GPU upload and serves it from its third use; a call whose
  // inputs keep coming back is charged its copies spread over the uses seen so far, so a loop of
  // matrix-vector products can move to the GPU before its matrix is there. The backend's answer
  // corrects it: an input it keeps copying (changed between calls) is charged in full again.
  struct Reuse {
    uint32_t uses = 0;        // decided calls that read it since it was last found changed
    uint32_t gpu_copies = 0;  // GPU calls that had to copy it since then
    uint32_t changes = 0;     // times it was found changed: each doubles the uses needed first
  };
  std::unordered_map<uint64_t, Reuse> reuse_;
  double amortized_in_bytes(const gofl_call& c);  // under mu_
  void note_reuse(const gofl_call& c);            // under mu_
  PolicyStats stats_;
  bool start_failed_ = false;
  bool starting_ = false;         // a start began beside the calls and has not ended yet
  double start_began_s_ = 0;      // when (GpuEnv::now)
  void start_beside_failed();     // it ended without a GPU (under mu_)
  bool early_tried_ = false;      // PolicyConfig::start_early: the first decided call tried it
  // PolicyConfig::start_early, from decide() with mu_ held through `lk` (released around the start).
  void start_early(const gofl_call& c, GpuEnv& env, std::unique_lock<std::mutex>& lk);
  int gpu_inflight_ = 0;
  double last_gpu_activity_ = -1e300;
  int utilization(GpuEnv& env, double now);       // cached reading (without mu_ held)
  int read_utilization(GpuEnv& env, double now);  // a new reading (without mu_ held)
  bool too_busy(int util) const;
  double util_read_at_ = -1e300;
  int util_value_ = -1;
};

}  // namespace gofl
