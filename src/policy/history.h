// What earlier runs of the same program gained from the GPU, remembered in a small file in the user's
// cache folder, so that a program that keeps paying for the GPU can start it at its first call
// predicted to gain (auto_policy.h) instead of waiting for missed savings to justify the start.
//
// The file is private and disposable: $XDG_CACHE_HOME/gpu-offload/history (else
// ~/.cache/gpu-offload/history), in a folder made 0700 and refused unless it is a real folder
// owned by the user with no access for others; the file itself is made 0600, never followed through
// a symbolic link, and ignored unless it is a regular file of the user's with no access for others.
// Every line is checked (a malformed one is skipped); at most kHistoryMaxRuns runs are kept, newest
// last; writers take a lock file and replace the file whole (rename), so readers need no lock.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

namespace gofl {

constexpr int kHistoryMaxRuns = 256;           // runs kept over all programs (oldest dropped)
constexpr int kHistoryRunsConsidered = 3;      // the latest runs of a program the decision reads
constexpr int kHistoryMaxOps = 48;             // GPU operations kept per run (the first ones used)
constexpr size_t kHistoryMaxLine = 1000;       // a longer line is not ours: skipped (256 of them fit)
constexpr size_t kHistoryMaxBytes = 256 << 10; // a larger file is not read (it cannot be ours)

// An operation a run ran on the GPU: its name in the operation table ("dgemm") and the largest
// dimension of its calls there.
struct HistoryOp {
  std::string name;
  int64_t n = 0;
};

struct HistoryRun {
  uint64_t program = 0;  // program_key()
  double gained_s = 0;   // what the GPU gained the run, start-up paid included (<= 0: it did not pay)
  bool started = false;  // the run started the GPU
  int64_t when = 0;      // seconds since the epoch
  // The operations it ran on the GPU, in the order of their first GPU call (at most kHistoryMaxOps):
  // the next run warms them as soon as its GPU starts (auto_policy.h, warming). A line written
  // before this field existed has none.
  std::vector<HistoryOp> gpu_ops = {};
};

// What the decision reads: the latest runs of this program (at most kHistoryRunsConsidered).
struct ProgramHistory {
  int runs = 0;          // how many were found
  int paid = 0;          // of those, how many started the GPU and gained from it
  double gained_s = 0;   // their summed gain
  // The operations they ran on the GPU: the latest run's in its order, then those only older ones
  // ran; each with the largest size any of them ran it at (at most kHistoryMaxOps).
  std::vector<HistoryOp> gpu_ops;
  // Every one of the latest runs (at least one) paid for the GPU.
  bool all_paid() const { return runs > 0 && paid == runs; }
};

// Who "the same program" is: the executable, and for an interpreter (python, Rscript, R, octave,
// julia, perl, ruby, node, sh/bash) its program too: the script's resolved path, or the module
// (-m) or code (-c, -e, --eval) it was given. `exe`: the executable's resolved path; `argv`: the
// command line. Other arguments (input files, sizes) do not change the program.
std::string program_identity(const std::string& exe, const std::vector<std::string>& argv);
uint64_t program_key(const std::string& identity);  // 64-bit FNV-1a of the identity

// The history file's path, from XDG_CACHE_HOME or HOME through `get` (a getenv-like function);
// empty when neither names an absolute folder.
std::string history_path(const char* (*get)(const char*));

// The runs in the file (empty when it is missing, unsafe or unreadable; *why says which, when given).
std::vector<HistoryRun> read_history(const std::string& path, std::string* why = nullptr);
ProgramHistory program_history(const std::vector<HistoryRun>& runs, uint64_t program);
// Parses the file's text: the runs of every well-formed line (fuzz-safe: any text is fine).
std::vector<HistoryRun> parse_history(const std::string& text);
std::string format_history(const std::vector<HistoryRun>& runs);

// Appends `run` (the folder and file made as above when missing); false with *why when the folder
// or the file is not safe, or the lock or the write failed. Drops the oldest runs beyond
// kHistoryMaxRuns.
bool record_history(const std::string& path, const HistoryRun& run, std::string* why = nullptr);

}  // namespace gofl
