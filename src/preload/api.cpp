// The small public C interface of libgpuoffload.so (for tests and curious programs); declared in
// include/gpu_offload.h.
#include "preload/api.h"

#include <stdio.h>

#include "gpu_offload.h"  // the declarations these definitions must match
#include "preload/gpu.h"
#include "preload/wrapper_support.h"

namespace gofl {
__thread int t_last_device __attribute__((tls_model("initial-exec"))) = -1;
__thread int t_last_reason __attribute__((tls_model("initial-exec"))) = -1;
__thread int t_last_gpu_status __attribute__((tls_model("initial-exec"))) = 0;
__thread unsigned t_last_resident __attribute__((tls_model("initial-exec"))) = 0;
__thread int t_last_split __attribute__((tls_model("initial-exec"))) = 0;
__thread unsigned t_last_cpu_beside __attribute__((tls_model("initial-exec"))) = 0;
__thread int t_last_staged __attribute__((tls_model("initial-exec"))) = 0;
__thread int t_last_served __attribute__((tls_model("initial-exec"))) = 0;
// The failure's text lives in dynamically allocated TLS (the default model): a library loaded with
// dlopen (python -m gpu_offload) draws its initial-exec variables from glibc's small static reserve.
// Calls only clear the flag, which is initial-exec like the rest.
__thread bool t_has_failure __attribute__((tls_model("initial-exec"))) = false;
__thread char t_last_failure[128];

void note_last_call(const gofl_call& c) {
  t_last_device = c.device;
  t_last_reason = c.reason;
  t_last_gpu_status = c.gpu_status;
  t_last_resident = c.device == GOFL_DEV_GPU ? c.resident : 0;
  t_last_split = c.device == GOFL_DEV_GPU && (c.flags & GOFL_F_SPLIT) ? gpu_split_gpus() : 0;
  t_last_cpu_beside = c.device == GOFL_DEV_GPU ? c.cpu_calls_beside : 0;
  t_last_staged = c.device == GOFL_DEV_GPU && (c.flags & GOFL_F_STAGED) ? 1 : 0;
  t_last_served = c.device == GOFL_DEV_GPU && gpu_last_run_served() ? 1 : 0;
  if (c.reason != GOFL_R_GPU_FAILED) t_has_failure = false;
}

void note_last_failure(const char* text) {
  snprintf(t_last_failure, sizeof t_last_failure, "%s", text);
  t_has_failure = true;
}
}  // namespace gofl

extern "C" {

GOFL_EXPORT void gpu_offload_last_call(int* device, int* reason, int* gpu_status) {
  if (device) *device = gofl::t_last_device;
  if (reason) *reason = gofl::t_last_reason;
  if (gpu_status) *gpu_status = gofl::t_last_gpu_status;
}

GOFL_EXPORT unsigned gpu_offload_last_call_resident(void) { return gofl::t_last_resident; }

GOFL_EXPORT int gpu_offload_last_call_split(void) { return gofl::t_last_split; }

GOFL_EXPORT unsigned gpu_offload_last_call_cpu_beside(void) { return gofl::t_last_cpu_beside; }

GOFL_EXPORT int gpu_offload_last_call_staged(void) { return gofl::t_last_staged; }

GOFL_EXPORT int gpu_offload_last_call_served(void) { return gofl::t_last_served; }

GOFL_EXPORT const char* gpu_offload_last_call_failure(void) {
  return gofl::t_has_failure ? gofl::t_last_failure : "";
}

GOFL_EXPORT void gpu_offload_test_fault(const char* spec) { gofl::gpu_set_fault(spec); }

}  // extern "C"
