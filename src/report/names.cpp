#include "report/names.h"

#include <stdio.h>

#include "common/table.h"
#include "trace/reader.h"

namespace gofl::cli {

const char* symbol_name(const gofl_call_record& c) {
  if (c.sym == GOFL_SYM_FFTW) return gofl_ops[c.op].precision == 's' ? "fftwf_execute" : "fftw_execute";
  return gofl_syms[c.sym].name;
}

uint64_t resident_input_bytes(const gofl_call_record& c, uint32_t resident) {
  uint64_t bytes = 0;
  for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i)
    if (c.operands[i].fp_in && GOFL_RESIDENCY_OF(resident, i) != GOFL_RES_COPIED) bytes += c.operands[i].bytes;
  return bytes;
}

const char* iface_name(const gofl_call_record& c) {
  if (c.sym == GOFL_SYM_FFTW) return "fftw";
  switch (gofl_syms[c.sym].iface) {
    case GOFL_IFACE_FORTRAN: return "fortran";
    case GOFL_IFACE_CBLAS: return "cblas";
    case GOFL_IFACE_FFTW: return "fftw";
  }
  return "?";
}

const char* scheme_name(const gofl_call_record& c) {
  return c.sym == GOFL_SYM_FFTW ? "fftw" : gofl_scheme_name(gofl_syms[c.sym].scheme);
}

const char* device_name(int device) { return gofl_device_name(device); }

std::string site_label(const std::string& module, uint64_t offset, uint64_t addr) {
  char buf[64];
  if (module.empty()) {
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)addr);
    return buf;
  }
  const size_t slash = module.rfind('/');
  snprintf(buf, sizeof buf, "+0x%llx", (unsigned long long)offset);
  return (slash == std::string::npos ? module : module.substr(slash + 1)) + buf;
}

}  // namespace gofl::cli
