// How many array operands one intercepted call can have: shared by the call description
// (common/call.h) and the trace format (trace/record.h), which both size arrays by it.
#pragma once

#define GOFL_MAX_OPERANDS 5  // geev (real) has a, wr, wi, vl, vr
