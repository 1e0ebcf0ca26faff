// How deep this thread is inside intercepted calls (0: the application's own call comes next). The
// dispatcher counts it; a split copy's pieces run on the pool's threads at their caller's depth, so
// that what the CPU library calls from a piece (reference cblas_dcopy calls dcopy_) counts as nested.
#pragma once

namespace gofl {

// initial-exec: the preload library is loaded at start-up, so its TLS is static and cheap.
extern __thread int t_call_depth __attribute__((tls_model("initial-exec")));

}  // namespace gofl
