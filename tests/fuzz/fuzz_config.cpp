// A config file of any content, read as every preloaded process reads it (GPU_OFFLOAD_CONFIG, then
// parse_settings): each message is whole (no NUL that would cut it short where it is printed), and
// the settings stay in their ranges whatever the file says.
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "policy/settings.h"

namespace {
std::string g_config_path;
const char* get(const char* name) { return strcmp(name, "GPU_OFFLOAD_CONFIG") == 0 ? g_config_path.c_str() : nullptr; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzFile f(data, size);
  g_config_path = f.path();
  std::string msgs;
  const gofl::Settings s = gofl::parse_settings(get, &msgs);
  if (msgs.find('\0') != std::string::npos) abort();
  if (s.level < 1 || s.level > 10 || !(s.threshold >= 0)) abort();
  return 0;
}
