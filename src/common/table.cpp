#include "common/table.h"

#include <string.h>

#include "trace/record.h"

const gofl_op_info gofl_ops[GOFL_N_OPS] = {
#define GOFL_OP(id, name, routine, prec, kind, gpu, cplx, iout) {name, routine, prec, kind, gpu != 0, cplx != 0, iout},
#include "generated/ops.inc"
#undef GOFL_OP
};

const gofl_sym_info gofl_syms[GOFL_N_SYMS] = {
#define GOFL_SYM(id, name, op, iface, scheme, ilp64) {name, op, iface, scheme, ilp64 != 0},
#include "generated/symbols.inc"
#undef GOFL_SYM
};

const char* gofl_scheme_name(int scheme) {
  switch (scheme) {
    case GOFL_SCHEME_STD: return "standard";
    case GOFL_SCHEME_SCIPY: return "scipy";
    case GOFL_SCHEME_NUMPY64: return "numpy-ilp64";
    case GOFL_SCHEME_ILP64: return "ilp64";
  }
  return "?";
}

int gofl_op_by_name(const char* name) {
  for (int i = 0; i < GOFL_N_OPS; ++i)
    if (strcmp(gofl_ops[i].name, name) == 0) return i;
  return -1;
}

const char* gofl_reason_name(int r) {
  switch (r) {
    case GOFL_R_FORCED_CPU: return "device cpu";
    case GOFL_R_BELOW_THRESHOLD: return "below threshold";
    case GOFL_R_NESTED: return "nested";
    case GOFL_R_QUERY: return "workspace query";
    case GOFL_R_NOT_GPU_CAPABLE: return "measured only";
    case GOFL_R_NO_BACKEND: return "no GPU backend";
    case GOFL_R_PREDICTED_SLOWER: return "predicted slower";
    case GOFL_R_NOT_STARTED: return "GPU not started yet";
    case GOFL_R_GPU_BUSY: return "GPU busy";
    case GOFL_R_GPU_MEMORY: return "GPU memory";
    case GOFL_R_PROBE: return "CPU probe";
    case GOFL_R_GPU_FAILED: return "GPU failed";
    case GOFL_R_INVALID_ARGS: return "invalid arguments";
    case GOFL_R_AFTER_FORK: return "forked child";
    case GOFL_R_IN_BACKEND: return "inside backend";
    case GOFL_R_OFFLOADED: return "offloaded";
    case GOFL_R_FORCED_GPU: return "device gpu";
    case GOFL_R_VERIFY: return "verified";
  }
  return "?";
}

