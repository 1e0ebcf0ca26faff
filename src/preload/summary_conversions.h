// The exit summary's line on converting data around the LAPACK calls (the report's fuller account:
// src/report/conversions.h): NumPy's and SciPy's own ?copy calls, the time outside any call right
// after them before a LAPACK call, against the LAPACK calls' own time.
#pragma once

#include <stdint.h>

#include <string>

#include "common/call.h"
#include "trace/record.h"

namespace gofl {

// A described top-level call (not nested, not a query) that took duration_ns.
void conversions_add_call(const gofl_call& c, uint64_t duration_ns);
// Counted top-level calls (counted.h): their estimated time; no gap is known around them.
void conversions_add_counted(const gofl_counted_record& r);
// The summary's line (two spaces first, a newline last) when converting took longer than the LAPACK
// calls; else empty.
std::string conversions_line();
// In a fork child: nothing converted yet.
void conversions_reset();

// Whether a ?copy called from `site` is NumPy's or SciPy's own (their code converts operands to
// Fortran order with it), by the module the site is in; a program's own copies are not. Cached.
bool converting_copy_site(const void* site);

}  // namespace gofl
