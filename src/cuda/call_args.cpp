// Reading an intercepted call's arguments through its argv pointers, whatever the interface
// (Fortran: everything by reference; CBLAS: `layout` first, enums and values by address) and the
// integer width of the symbol's scheme.
#include "cuda/engine.h"

#include "common/cblas.h"
#include "common/table.h"

namespace gofl {
namespace cuda {

CallArgs::CallArgs(const gofl_call& c) : c_(c) {
  const gofl_sym_info& s = gofl_syms[c.sym < GOFL_N_SYMS ? c.sym : 0];
  cblas_ = c.argv && s.iface == GOFL_IFACE_CBLAS;  // FFTW executes have no argv (their gofl_call.fft)
  ilp64_ = s.ilp64;
  off_ = cblas_ ? 1 : 0;
  row_major_ = cblas_ && *static_cast<const int*>(c.argv[0]) == GOFL_CBLAS_ROW_MAJOR;
}

char CallArgs::ch(int pos) const {
  if (cblas_) return cblas_flag(*static_cast<const int*>(c_.argv[pos + off_]));
  const char v = *static_cast<const char*>(c_.argv[pos]);
  return (v >= 'a' && v <= 'z') ? char(v - 32) : v;
}

int64_t CallArgs::i(int pos) const {
  const void* p = c_.argv[pos + off_];
  return ilp64_ ? *static_cast<const int64_t*>(p) : int64_t(*static_cast<const int32_t*>(p));
}

void CallArgs::set_i(int pos, int64_t v) const {
  void* p = c_.argv[pos + off_];
  if (ilp64_) *static_cast<int64_t*>(p) = v;
  else *static_cast<int32_t*>(p) = int32_t(v);
}

}  // namespace cuda
}  // namespace gofl
