#include "preload/run_history.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <mutex>
#include <vector>

#include "common/table.h"
#include "policy/settings.h"
#include "preload/decide.h"
#include "preload/gpu.h"

namespace gofl {
namespace {

std::mutex g_mu;
bool g_loaded = false;
ProgramHistory g_earlier;
uint64_t g_key = 0;
pid_t g_pid = 0;  // the process that read the history: the one whose run is recorded

std::vector<std::string> command_line() {
  std::vector<std::string> argv;
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return argv;
  std::string text;
  char buf[4096];
  ssize_t n;
  while (text.size() < 65536 && (n = read(fd, buf, sizeof buf)) > 0) text.append(buf, size_t(n));
  close(fd);
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = text.find('\0', pos);
    argv.push_back(text.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return argv;
}

std::string executable() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

const char* secure_get(const char* name) { return secure_getenv(name); }

void load_locked() {
  if (g_loaded) return;
  g_loaded = true;
  g_pid = getpid();
  if (!settings().history) return;
  g_key = program_key(program_identity(executable(), command_line()));
  g_earlier = program_history(read_history(history_path(secure_get)), g_key);
}

}  // namespace

ProgramHistory earlier_runs() {
  std::lock_guard<std::mutex> lk(g_mu);
  load_locked();
  return g_earlier;
}

void record_this_run() {
  if (!settings().history || !auto_mode()) return;
  const AutoPolicy* policy = auto_policy_made();
  if (!policy) return;
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_loaded || g_pid != getpid()) return;
  const PolicyStats st = policy->stats();
  if (st.decided == 0) return;  // no call large enough to decide: nothing learnt about the GPU
  HistoryRun run;
  run.program = g_key;
  run.started = st.started && gpu_started();
  // The summary's basis: predicted CPU time of the offloaded calls less their time on the GPU, less
  // the start-up the run paid.
  run.gained_s = run.started ? st.offloaded_pred_cpu_s - st.offloaded_actual_s - gpu_start_waited_seconds() : 0.0;
  run.when = int64_t(time(nullptr));
  if (run.started)
    for (const auto& [op, n] : policy->gpu_ops())
      if (run.gpu_ops.size() < size_t(kHistoryMaxOps)) run.gpu_ops.push_back(HistoryOp{gofl_ops[op].name, n});
  record_history(history_path(secure_get), run);  // a failure only costs the next run its head start
}

std::string history_summary_phrase() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_loaded || !g_earlier.all_paid()) return "";
  char b[160];
  const double g = g_earlier.gained_s;
  snprintf(b, sizeof b, "started at once: the last %s of this program gained %.3g s",
           g_earlier.runs == 1 ? "run" : (std::to_string(g_earlier.runs) + " runs").c_str(), g);
  return b;
}

}  // namespace gofl
