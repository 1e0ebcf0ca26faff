// A trace file of any content, read by `gpu-offload dump`, `dump --csv --starts`, `report`, `report
// --html` and `estimate`, through the tool's own main(): whatever the bytes, each ends with output or
// an error message and exit status 1, never a crash, undefined behaviour, a hang or unbounded memory.
#include <stdio.h>

#include <string>
#include <vector>

#include "fuzz_input.h"

int gofl_cli_main(int argc, char** argv);

namespace {

int run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "gpu-offload");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return gofl_cli_main(int(args.size()), argv.data());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The commands' output and messages are not what is tested; sanitizer reports go to fd 2 still.
  if (!freopen("/dev/null", "w", stdout)) return 1;
  stderr = fopen("/dev/null", "w");
  setenv("XDG_CONFIG_HOME", "/nonexistent-gofl-fuzz", 1);  // no per-user profile or config
  unsetenv("GPU_OFFLOAD_CONFIG");
  unsetenv("GPU_OFFLOAD_PROFILE");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzFile f(data, size);
  const std::string& p = f.path();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"dump", p}, {"dump", "--csv", "--starts", p}, {"report", p}, {"report", "--html", "/dev/null", p},
           {"estimate", p}}) {
    const int rc = run_cli(args);
    if (rc != 0 && rc != 1) abort();  // 2 is a usage error: these command lines are right
  }
  return 0;
}
