// Test-only: a backend "from another build": its entry point and interface version are right, but
// its routines are indexed by another op table. The preload library must refuse it before calling
// anything (test_library.py), so every function is left empty.
#include "cuda/backend_abi.h"

extern "C" __attribute__((visibility("default"))) const gofl_backend* gofl_backend_entry(void) {
  static const gofl_backend b = [] {
    gofl_backend f{};
    f.abi = GOFL_BACKEND_ABI;
    f.ops_hash = GOFL_OPS_HASH ^ 1u;
    f.call_size = sizeof(gofl_call);
    f.result_size = sizeof(gofl_gpu_result);
    return f;
  }();
  return &b;
}
