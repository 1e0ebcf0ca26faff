// Words for the fields of a call record, as dump and report print them.
#pragma once

#include <stdint.h>

#include <string>

#include "trace/record.h"

namespace gofl::cli {

const char* symbol_name(const gofl_call_record& c);  // dgemm_, cblas_dgemm, fftw_execute
const char* iface_name(const gofl_call_record& c);   // fortran, cblas, fftw
const char* scheme_name(const gofl_call_record& c);  // standard, scipy, numpy-ilp64, ilp64, fftw
const char* device_name(int device);                 // cpu, gpu

// Bytes of a call's inputs that a device copy kept from an earlier call served, so the call did not
// copy them (gofl_record.resident, GOFL_RESIDENCY_OF): the report's "avoided", per call.
uint64_t resident_input_bytes(const gofl_call_record& c, uint32_t resident);

// A call site as people read it: "libfoo.so+0x1a2b", or the bare address when the module is unknown.
std::string site_label(const std::string& module, uint64_t offset, uint64_t addr);

}  // namespace gofl::cli
