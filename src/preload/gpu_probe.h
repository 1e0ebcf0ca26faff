// Why this process could not use a GPU, found without loading any CUDA library: the summary and
// the trace say it even when no start was ever due, and a failed start is explained in these words
// rather than in CUDA's ("CUDA driver version is insufficient for CUDA runtime version").
#pragma once

#include <string>

namespace gofl {

struct GpuAbsence {
  // None: nothing rules a GPU out (a start may still fail: then its own message says why). The
  // first two mean there is nothing to load: a start is not even tried.
  enum Kind { None, NotBuilt, BackendMissing, NoDriver, NoGpuVisible } kind = None;
  std::string text;  // what the user reads, e.g. "no NVIDIA driver (...)"
};

// `backend` is the path the start would dlopen; `env` reads the environment.
GpuAbsence gpu_absence(const std::string& backend, const char* (*env)(const char*));

}  // namespace gofl
