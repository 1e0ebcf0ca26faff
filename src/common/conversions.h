// Who converts data around the LAPACK calls, and what the user can do about it: named once for the
// exit summary (src/preload/summary.cpp) and the report (src/report/conversions.cpp).
#pragma once

#include <stdint.h>

#include <string>

namespace gofl {

// The time outside any call right before a LAPACK call counts as converting its operands up to this many
// nanoseconds per byte the call reads (0.25 GB/s: slower than NumPy's strided copies, 25 ns per double on
// the GPU test machine: H200, 16-core host); the rest of a longer gap is the program's own work (an import,
// a file).
constexpr double kConversionNsPerByte = 4.0;
// The most time before a LAPACK call that counts as converting its operands: kConversionNsPerByte
// of the bytes it reads, in ns. Saturates (a trace may say anything about its operands' sizes).
inline uint64_t conversion_cap_ns(double in_bytes) {
  const double ns = in_bytes * kConversionNsPerByte;
  if (!(ns > 0)) return 0;
  return ns >= 1.8e19 ? UINT64_MAX : uint64_t(ns);
}

// "NumPy" or "SciPy" when the module's path says so (a call site in numpy/… or scipy/…), else "".
std::string library_of_module(const std::string& module_path);

// Whether the module is NumPy's or SciPy's own code (numpy/linalg/_umath_linalg…, scipy/linalg/
// _flapack…), whose ?copy calls convert operands to Fortran order and back; not the libraries they
// bundle (numpy.libs, scipy.libs: OpenBLAS's own copies), nor any other program's or library's.
bool converting_module(const std::string& module_path);

// What converts the operands there and how a Python user avoids it, one sentence without a final
// period; a general sentence when the library is unknown.
const char* conversion_advice(const std::string& library);

}  // namespace gofl
