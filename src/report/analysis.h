// What `gpu-offload report` computes from trace files, before any of it is printed: per operation
// and device, the GPU side (copies, failures, verify), the cost model's accuracy and the estimate of
// copies that unchanged data left on the GPU would have saved. The terminal and HTML reports both
// print this one analysis.
#pragma once

#include <stdint.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "report/conversions.h"
#include "trace/reader.h"

namespace gofl {
struct Profile;
}

namespace gofl::cli {

// Host-to-GPU rate assumed when no traced GPU call measured one: the pinned link rate measured on
// the GPU test machine (H200, 16-core host) (48-51 GB/s both ways). Only the avoidable-copy time uses it.
constexpr double kAssumedCopyBytesPerS = 50e9;

struct DeviceSplit {
  uint64_t calls = 0, ns = 0;
  double flops = 0;
};

struct OpStats {
  uint64_t calls = 0, gpu_calls = 0, nested = 0, queries = 0;
  uint64_t time_ns = 0;  // top-level calls only: a nested call's time is inside its caller's
  double flops = 0;
  std::map<int64_t, uint64_t> largest_dim;  // top-level calls by their largest dimension
  // Calls counted below the threshold (GOFL_REC_COUNTED), of every kind, and the timed ones among them:
  // part of the counts above; their time is estimated.
  uint64_t counted = 0, counted_timed = 0;
  DeviceSplit dev[2];                // top-level calls by the device that ran them
  // GPU calls (and verify calls, which also ran on the GPU) with their measured phases.
  uint64_t gpu_timed_calls = 0;
  double copy_in_s = 0, compute_s = 0, copy_out_s = 0, gpu_wall_s = 0;
  double bytes_in = 0, bytes_out = 0;  // operand bytes those calls copied in / out, where the copy was timed
  // Avoidable copies: calls that ran on the GPU, and GPU-capable calls that ran on the CPU (if offloaded).
  uint64_t gpu_walk_calls = 0;
  double gpu_in_bytes = 0, gpu_avoidable_bytes = 0, gpu_avoidable_s = 0;
  double gpu_avoidable_measured_s = 0;        // of calls with a copy-in time: at that call's own rate
  double gpu_avoidable_unmeasured_bytes = 0;  // of calls without a copy-in time: priced at the trace's rate
  double gpu_avoided_bytes = 0;               // inputs kept device copies served (residency): not copied
  uint64_t cpu_walk_calls = 0;
  double cpu_in_bytes = 0, cpu_avoidable_bytes = 0, cpu_avoidable_s = 0;
};

struct SiteStats {
  uint64_t calls = 0, time_ns = 0;
  uint64_t counted = 0;  // of the calls, those counted (their time estimated)
  std::set<int> ops;
  std::string label;
};

struct ReasonStats {
  uint64_t calls = 0, time_ns = 0;
  std::map<int, uint64_t> ops;  // op -> calls
};

// GPU attempts that failed before the copy-out: the CPU ran those calls.
struct FailureStats {
  uint64_t calls = 0;
  std::map<int, uint64_t> ops;
};

struct MismatchGroup {
  uint64_t calls = 0;
  double worst = 0;
};

struct VerifyStats {
  uint64_t calls = 0, mismatches = 0;
  double worst_mismatch = 0, worst_any = 0;
  // (op, m, n, k) -> mismatching calls of that shape
  std::map<std::tuple<int, int64_t, int64_t, int64_t>, MismatchGroup> groups;
};

// One call as a point of a chart: (x, y) plus what it was.
struct Point {
  double x = 0, y = 0, z = 0;
  double t = 0;  // the call's observed seconds, where x and y are something else
  uint8_t device = 0;
  uint16_t op = 0;
  int64_t dims[3] = {0, 0, 0};
};

// A fixed-size, deterministic sample of a stream of points (reservoir sampling with a fixed seed),
// so a trace of millions of calls still draws a readable, bounded chart.
class PointSample {
 public:
  explicit PointSample(size_t cap = 2500) : cap_(cap) {}
  void add(const Point& p);
  const std::vector<Point>& points() const { return pts_; }
  uint64_t seen() const { return seen_; }

 private:
  size_t cap_;
  uint64_t seen_ = 0, rng_ = 0x2545f4914f6cdd1dull;
  std::vector<Point> pts_;
};

struct ModelAccuracy {
  std::vector<float> ratio[2];  // observed / predicted, per device it ran on
  PointSample points{3000};     // x = predicted s, y = observed s
  // Calls that ran on the GPU with a CPU prediction: what the model said the CPU would take.
  uint64_t gpu_calls_with_cpu_pred = 0;
  double gpu_pred_cpu_s = 0, gpu_observed_s = 0;
};

// Where the cost model puts the CPU/GPU crossover of one operation, from the traced predictions.
struct Crossover {
  int op = -1;
  uint64_t calls = 0;                 // calls of op with both predictions
  enum Kind { kBetween, kGpuAlways, kCpuAlways } kind = kBetween;
  double flops = 0;                   // kBetween: predicted equal time here
  // Median predicted seconds per bin of work: (flops, cpu s, gpu s), flops increasing.
  std::vector<std::tuple<double, double, double>> curve;
};

// The calls that ran on the CPU although the profile predicts them faster on the GPU (copies
// included; before the level's required speedup and the GPU start-up): what offloading could win.
struct ProfileVerdict {
  // Estimated from the size samples: measured CPU time, and the model's CPU and GPU predictions.
  double calls = 0, cpu_s = 0, pred_cpu_s = 0, pred_gpu_s = 0;
};

// A process's start of the GPU backend (or its failed attempt): in no call's time.
struct GpuStart {
  double seconds = 0;
  double waited_s = 0;  // how much of it the program waited for (less when it ran beside the calls)
  bool ok = false;
  std::string message;  // why it cannot be used
  std::string gpu;      // which GPU it ran on: "GPU 1 (00000000:18:00.0)", "" when not recorded
};

struct Analysis {
  // Header facts.
  size_t files = 0;
  std::set<std::pair<std::string, int32_t>> processes;  // host, pid
  std::map<std::string, int> programs;                  // command line -> processes
  std::set<std::string> profiles, levels, device_modes, hosts;
  uint64_t first_realtime_ns = 0;
  uint64_t records = 0;          // call records
  uint64_t counted_records = 0;  // counted records (each stands for calls of one call site and size class)
  std::vector<GpuStart> starts;  // in file order
  std::set<std::string> gpu_absent;  // processes that tried no start: why none could have succeeded
  // One-time costs (setup records), summed over the processes: the start's steps by phase; the
  // first GPU call of each operation (GOFL_SP_FIRST_CALL) and what it set up, by operation.
  std::map<int, double> start_phases;
  std::map<int, std::map<int, double>> first_calls;

  std::map<int, OpStats> ops;
  std::map<std::pair<std::string, uint64_t>, SiteStats> sites;  // module (or "" + address), offset
  std::map<std::pair<int, int>, ReasonStats> reasons;           // device, reason
  std::map<std::pair<int, int>, FailureStats> failures;         // gpu_status, gpu_detail
  VerifyStats verify;
  ModelAccuracy model;
  // Where the model puts the crossover of each operation: from the profile use_profile chose,
  // else from the predictions recorded in the trace.
  std::vector<Crossover> crossovers;  // the operation with the most time first
  std::string crossover_source;       // "trace", or the profile's label
  std::string profile_note;           // why the profile was not used (empty when it was)
  // Per GPU-capable operation, a sample of its top-level calls' sizes: x = flops, y = bytes in, z = bytes
  // out.
  std::map<int, PointSample> sizes;
  ProfileVerdict profile_verdict;     // set by use_profile
  PointSample work_points{2500};      // x = flops, y = seconds: top-level calls with work
  Conversions conversions;            // converting operands around the LAPACK calls
  // Timed GPU calls by whether other threads' CPU calls held the cores when they began
  // (GOFL_F_CORES_HELD: their copies ran on the calling thread alone), [0] not, [1] held.
  struct CopyIn {
    uint64_t calls = 0;
    double bytes = 0, seconds = 0;  // copied inputs and their copy-in time
  } copy_in_by_cores[2];

  // Copy rate the avoidable time is priced at: measured by the traced GPU calls, else the profile's
  // host-to-GPU bandwidth (use_profile), else assumed.
  double copy_bytes_per_s = kAssumedCopyBytesPerS;
  enum RateSource { kMeasured, kProfile, kAssumed } copy_rate_source = kAssumed;

  OpStats total() const;  // the sum over operations (largest_dim left empty)
};

// Reads every file to its end (each reader once) and computes the analysis.
Analysis analyze(std::vector<std::unique_ptr<TraceReader>>& traces);

// Which profile the report may use. A trace is read, never obeyed: it opens no file a trace
// names. `chosen` is the user's --profile (used whatever the traces name); else `own_path` is the
// profile file this machine's settings select (GPU_OFFLOAD_PROFILE, the config file, the per-user
// file), used only when the traces name that very file; "built-in" needs no file.
struct ProfileChoice {
  const Profile* chosen = nullptr;
  std::string own_path;
};

// Replaces the crossovers with the cost model's (policy/model.h) for the profile of `choice`
// (one profile for all files). False, with the reason in profile_note, when there is none to use;
// the trace's own predictions then stay.
bool use_profile(Analysis& a, const ProfileChoice& choice);

// The q-quantile (0..1) of v (reorders v); 0 for an empty vector.
double quantile(std::vector<float>& v, double q);

}  // namespace gofl::cli
