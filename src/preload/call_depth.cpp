#include "preload/call_depth.h"

namespace gofl {

__thread int t_call_depth __attribute__((tls_model("initial-exec")));

}  // namespace gofl
