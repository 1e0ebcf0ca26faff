#include "common/table.h"

#include <string.h>


const gofl_op_info gofl_ops[GOFL_N_OPS] = {
#define GOFL_OP(id, name, routine, prec, kind, gpu, cplx, family, calib, split, warmed, verify, tri) \
  {name, routine, prec, kind, gpu != 0, cplx != 0, family, calib, split, warmed != 0, verify, tri},
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
