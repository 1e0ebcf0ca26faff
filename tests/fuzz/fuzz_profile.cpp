// Profile text of any content through parse_profile (the library and the tool's only parser). A
// profile it accepts must survive format_profile -> parse_profile and give the cost model finite,
// non-negative predictions; read_profile must read it back from a file the same way.
#include <math.h>
#include <stdlib.h>

#include "fuzz_input.h"
#include "policy/model.h"
#include "policy/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gofl::Profile p;
  std::string err;
  const bool ok = gofl::parse_profile(text, "fuzz", &p, &err);
  FuzzFile f(data, size);
  gofl::Profile from_file;
  if (gofl::read_profile(f.path(), &from_file, &err) != ok) abort();
  if (!ok) return 0;
  gofl::Profile again;
  if (!gofl::parse_profile(gofl::format_profile(p), "fuzz again", &again, &err)) abort();
  const gofl::Model model(p);
  for (int op = 0; op < GOFL_N_OPS; ++op) {
    for (double flops : {1.0, 1e6, 1e12}) {
      const double cpu = model.cpu_seconds(op, flops), gpu = model.gpu_seconds(op, flops, 1e6, 1e6);
      if (!(cpu >= 0) || !(gpu >= 0) || isnan(cpu) || isnan(gpu)) abort();
    }
  }
  return 0;
}
