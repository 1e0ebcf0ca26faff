// Where libgpuoffload.so is: the one `gpu-offload run` preloads.
#pragma once

#include <string>

namespace gofl::cli {

// GPU_OFFLOAD_LIBRARY, else next to this executable in ../lib, ../lib64, ../lib/x86_64-linux-gnu
// (the build tree and the usual install layouts). An absolute path; throws Failure naming the
// places searched when there is none.
std::string find_preload_library();

}  // namespace gofl::cli
