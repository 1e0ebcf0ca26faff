#include "common/gpu_placement.h"

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>

namespace gofl {

const char* const kLocalRankVariables[] = {
    "OMPI_COMM_WORLD_LOCAL_RANK",  // Open MPI's mpirun
    "MV2_COMM_WORLD_LOCAL_RANK",   // MVAPICH2
    "MPI_LOCALRANKID",             // Intel MPI, MPICH's Hydra
    "PMI_LOCAL_RANK",              // PMI launchers
    "PALS_LOCAL_RANKID",           // HPE Cray PALS (aprun's successor)
    "JSM_NAMESPACE_LOCAL_RANK",    // IBM LSF jsrun
    "FLUX_TASK_LOCAL_ID",          // Flux
    "SLURM_LOCALID",               // srun; last: a batch script's own step has it too (0)
};
const int kNumLocalRankVariables = int(sizeof kLocalRankVariables / sizeof kLocalRankVariables[0]);

namespace {

bool whole_number(const char* s, long* out) {
  if (!s || *s < '0' || *s > '9') return false;
  char* end = nullptr;
  const long v = strtol(s, &end, 10);
  if (*end != '\0' || v < 0 || v > 1000000) return false;
  *out = v;
  return true;
}

std::string percent(double fraction) {
  char b[16];
  snprintf(b, sizeof b, "%.0f%%", fraction * 100);
  return b;
}

// Memory in use and utilisation count alike: a GPU another program fills but leaves idle is as
// loaded as one it keeps half busy with half the memory.
double load_score(const GpuLoad& l) {
  return (l.memory_used >= 0 ? l.memory_used : 0) + (l.utilization >= 0 ? l.utilization / 100.0 : 0);
}

}  // namespace

LocalRank find_local_rank(const char* (*get)(const char*)) {
  LocalRank r;
  for (const char* var : kLocalRankVariables) {
    long v = 0;
    if (whole_number(get(var), &v)) {
      r.variable = var;
      r.rank = v;
      return r;
    }
  }
  return r;
}

bool parse_gpu_list(const std::string& text, GpuList* out, std::string* why) {
  GpuList list;
  if (text.empty() || text == "all") {
    *out = list;
    return true;
  }
  list.all = false;
  auto bad = [&](const std::string& what) {
    if (why) *why = what + " (use all, or GPU numbers such as 1, 0,2 or 0-3)";
    return false;
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(pos, comma - pos);
    pos = comma + 1;
    long lo = 0, hi = 0;
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      if (!whole_number(item.c_str(), &lo)) return bad("'" + item + "' is not a GPU number");
      hi = lo;
    } else if (!whole_number(item.substr(0, dash).c_str(), &lo) || !whole_number(item.substr(dash + 1).c_str(), &hi) ||
               hi < lo) {
      return bad("'" + item + "' is not a range of GPU numbers");
    }
    if (hi > 4095) return bad("GPU " + std::to_string(hi) + " is beyond any machine");
    for (long d = lo; d <= hi; ++d)
      if (std::find(list.devices.begin(), list.devices.end(), int(d)) == list.devices.end())
        list.devices.push_back(int(d));
  }
  *out = list;
  return true;
}

std::string gpu_list_text(const GpuList& list) {
  if (list.all) return "all";
  std::string s;
  for (int d : list.devices) s += (s.empty() ? "" : ",") + std::to_string(d);
  return s;
}

Placement choose_gpu(int count, const GpuList& list, const LocalRank& rank, const std::vector<GpuLoad>& loads) {
  Placement p;
  if (count <= 0) {
    p.why = "no GPU is visible";
    return p;
  }
  std::string left_out;  // GPUs the list names that CUDA does not show
  if (list.all) {
    for (int d = 0; d < count; ++d) p.usable.push_back(d);
  } else {
    for (int d : list.devices) {
      if (d < count) p.usable.push_back(d);
      else left_out += (left_out.empty() ? "" : ",") + std::to_string(d);
    }
  }
  const std::string visible = std::to_string(count) + (count == 1 ? " GPU is" : " GPUs are") + " visible";
  if (p.usable.empty()) {
    p.why = "the GPU setting '" + gpu_list_text(list) + "' names no visible GPU (" + visible + ")";
    return p;
  }
  const std::string note = left_out.empty() ? "" : "; GPU " + left_out + " of the GPU setting not visible (" + visible + ")";
  const size_t n = p.usable.size();
  if (n == 1) {
    p.device = p.usable[0];
    p.why = (list.all ? "the only GPU" : "the GPU setting '" + gpu_list_text(list) + "'") + note;
    return p;
  }
  const std::string of = " of " + std::to_string(n) + " usable GPUs" + note;
  if (rank.variable) {
    p.device = p.usable[size_t(rank.rank) % n];
    p.why = "local rank " + std::to_string(rank.rank) + " (" + rank.variable + ")" + of;
    return p;
  }
  int best = -1;
  double best_score = 0;
  bool known = false;
  std::string seen;
  for (int d : p.usable) {
    if (size_t(d) >= loads.size()) continue;
    const GpuLoad& l = loads[size_t(d)];
    if (l.memory_used < 0 && l.utilization < 0) continue;
    known = true;
    seen += (seen.empty() ? "" : ", ") + std::string("GPU ") + std::to_string(d) + " " +
            (l.memory_used >= 0 ? percent(l.memory_used) : std::string("?")) + " memory, " +
            (l.utilization >= 0 ? std::to_string(l.utilization) + "%" : std::string("?")) + " busy";
    const double s = load_score(l);
    if (best < 0 || s < best_score) best = d, best_score = s;
  }
  if (!known) {
    p.device = p.usable[0];
    p.why = "the first" + of + " (their load is unknown)";
    return p;
  }
  p.device = best;
  p.why = "the least loaded" + of + " (" + seen + ")";
  return p;
}

}  // namespace gofl
