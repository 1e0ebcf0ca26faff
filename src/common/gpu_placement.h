// Which GPU a process runs on: the rule, pure (no CUDA, no NVML, no environment of its own), so
// that the backend's start, the pre-start load check and the unit tests apply the same one.
//
//   1. the usable GPUs: every GPU CUDA shows the process (CUDA_VISIBLE_DEVICES already applied by
//      CUDA), or those GPU_OFFLOAD_GPUS / --gpus / the config key `gpus` names;
//   2. one usable GPU: that one;
//   3. one rank of a parallel launch (mpirun, srun, ...): its node-local rank modulo the usable GPUs,
//      so the ranks of a node spread over its GPUs without talking to each other;
//   4. otherwise the least loaded one by NVML (memory in use, then utilisation); unknown: the first.
#pragma once

#include <string>
#include <vector>

namespace gofl {

// The launchers' node-local rank variables, in the order they are read (OpenMPI, Slurm, Intel MPI /
// MPICH Hydra, PMI, MVAPICH2, PMIx, PALS/Cray, LSF jsrun).
extern const char* const kLocalRankVariables[];
extern const int kNumLocalRankVariables;

struct LocalRank {
  const char* variable = nullptr;  // the variable that gave it; nullptr: not a rank of a launch
  long rank = -1;
};
// The process's node-local rank from a getenv-like function. A variable holding anything but a
// whole number >= 0 is skipped.
LocalRank find_local_rank(const char* (*get)(const char*));

// The GPU setting: "all", or CUDA device numbers and ranges ("1", "0,2", "0-3", "0-1,4").
struct GpuList {
  bool all = true;           // every GPU CUDA shows the process
  std::vector<int> devices;  // otherwise these, in the order given, without repeats
};
// False (and `why` says what is wrong) on anything else; an empty text means "all".
bool parse_gpu_list(const std::string& text, GpuList* out, std::string* why);
std::string gpu_list_text(const GpuList& list);  // "all" or "0,2"

// One GPU's load as NVML reports it; -1: unknown.
struct GpuLoad {
  double memory_used = -1;  // fraction of its memory in use, by anyone
  int utilization = -1;     // percent of the last sample period a kernel ran
};

struct Placement {
  int device = -1;          // the CUDA device number; -1: none usable (why says so)
  std::string why;          // "local rank 1 (OMPI_COMM_WORLD_LOCAL_RANK) of 2 GPUs", ...
  std::vector<int> usable;  // the usable GPUs, as step 1 found them
};
// `count`: the GPUs CUDA shows; `loads`: one per CUDA device number (shorter or empty: unknown).
Placement choose_gpu(int count, const GpuList& list, const LocalRank& rank, const std::vector<GpuLoad>& loads);

}  // namespace gofl
