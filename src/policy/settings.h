// Run settings, read once from GPU_OFFLOAD_* environment variables (secure_getenv: a privileged
// program ignores them), then from the optional config file for what they leave unset (policy/config.h).
// `gpu-offload run` translates its options into these variables, so they come first.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "trace/codes.h"

namespace gofl {

// The default for split_copies. NumPy copies an n x n matrix one row of n elements per call. On the
// H200 host (bench/copy_split.py, 16 threads) a split row of 8 KiB (n = 1024, double) took 0.86-0.93x
// the time of the unsplit one, 32 KiB (n = 4096) 3.5-4.6x less, 64 KiB 5.9-7.5x less: the default is
// the smallest size measured to pay.
constexpr int64_t kSplitCopiesDefaultBytes = 32 << 10;

enum class DeviceMode { Cpu = GOFL_MODE_CPU, Gpu = GOFL_MODE_GPU, Auto = GOFL_MODE_AUTO };
// One call over several GPUs (policy/split.h): never, when the cost model predicts it faster than one
// GPU, or for every call the split engines run (tests, benchmarks).
enum class SplitMode { Off, Auto, Force };
const char* split_mode_name(SplitMode m);

struct Settings {
  DeviceMode device = DeviceMode::Auto;
  int level = 5;                 // 1..10, the level table (policy/level.h)
  double threshold = 1e6;        // flops below which no decision is made
  std::string trace_dir;         // empty: no trace
  bool summary = false;          // table on stderr at exit
  bool verify = false;           // run GPU-capable calls on both devices
  std::string profile;           // profile path (empty: per-user default, then built-in)
  double memory_reserve = -1;    // GPU memory always left free, bytes (-1: the level's fraction)
  bool residency = true;         // keep unchanged operands on the GPU between calls
  std::string gpus = "all";      // the GPUs the process may run on (common/gpu_placement.h)
  bool history = true;           // remember what runs of a program gained from the GPU (policy/history.h)
  // The smallest strided ?copy (elements × element size, bytes) split over the library's threads
  // (preload/copy_split.h); 0: never.
  int64_t split_copies = kSplitCopiesDefaultBytes;
  SplitMode split = SplitMode::Auto;  // one call over several of them
  // Warming (cuda/warm.h): the CUDA libraries' first-use work for an operation done beside the calls.
  // On: under auto, each operation the program calls (PolicyConfig::warm); off: none. warm_ops: the
  // operations named in the setting, warmed as soon as the GPU starts, whatever the mode.
  bool warm = true;
  std::vector<uint16_t> warm_ops;
  // While the GPU starts or warms up beside the calls, a CPU call whose library would use every core
  // runs with one thread fewer (preload/spare_core.h).
  bool spare_core = true;
};

// The process's settings (loaded on first use; messages for invalid values go to stderr once).
const Settings& settings();
// Parse the variables from `get` (a getenv-like function; it also names the config file through
// GPU_OFFLOAD_CONFIG, XDG_CONFIG_HOME or HOME); invalid values produce a message naming the valid ones
// and keep the default. Exposed for tests and the command-line tool.
Settings parse_settings(const char* (*get)(const char*), std::string* messages);

inline const char* device_mode_name(DeviceMode d) { return gofl_device_mode_name(int(d)); }

}  // namespace gofl
