#include "cli/library_path.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vector>

#include "cli/cli.h"
#include "policy/registry.h"

namespace gofl::cli {
namespace {

constexpr const char* kLibraryName = "libgpuoffload.so";

// The absolute path of an existing readable file, or "".
std::string usable(const std::string& path) {
  if (access(path.c_str(), R_OK) != 0) return "";
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : "";
}

std::string exe_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  char* slash = strrchr(buf, '/');
  if (!slash) return "";
  *slash = '\0';
  return buf;
}

}  // namespace

std::string find_preload_library() {
  if (const char* env = setting_env(SettingId::LIBRARY)) {
    const std::string p = usable(env);
    if (p.empty())
      throw Failure(std::string("GPU_OFFLOAD_LIBRARY=") + env + ": " + strerror(errno) +
                    "; set it to the path of libgpuoffload.so or unset it");
    return p;
  }
  const std::string dir = exe_dir();
  if (dir.empty()) throw Failure("cannot find libgpuoffload.so: /proc/self/exe is not readable; set GPU_OFFLOAD_LIBRARY");
  std::vector<std::string> tried;
  for (const char* sub : {"/../lib/", "/../lib64/", "/../lib/x86_64-linux-gnu/"}) {
    const std::string candidate = dir + sub + kLibraryName;
    const std::string p = usable(candidate);
    if (!p.empty()) return p;
    tried.push_back(candidate);
  }
  std::string list;
  for (const std::string& t : tried) list += (list.empty() ? "" : ", ") + t;
  throw Failure(std::string("cannot find ") + kLibraryName + "; looked in " + list +
                " (set GPU_OFFLOAD_LIBRARY to its path)");
}

}  // namespace gofl::cli
