#include "trace/call_record.h"

#include <string.h>

namespace gofl {

gofl_call_record record_from_call(const gofl_call& c, const CallEnd& end) {
  gofl_call_record r;
  memset(&r, 0, sizeof r);
  const bool query = (c.flags & GOFL_F_QUERY) != 0;
  r.op = c.op;
  r.sym = c.sym;
  r.flags = c.flags;
  r.tid = end.tid;
  r.device = c.device;
  r.reason = c.reason;
  r.depth = c.depth;
  r.t_start_ns = c.t0_ns;
  r.duration_ns = end.duration_ns;
  memcpy(r.dims, c.dims, sizeof r.dims);
  r.flops = query ? 0.0 : c.flops;
  r.site = reinterpret_cast<uint64_t>(c.site);
  r.info = int32_t(end.info);
  r.verify_error = c.verify_error;
  r.pred_cpu_s = c.pred_cpu_s;
  r.pred_gpu_s = c.pred_gpu_s;
  r.copy_in_s = c.copy_in_s;
  r.compute_s = c.compute_s;
  r.copy_out_s = c.copy_out_s;
  r.gpu_status = c.gpu_status;
  r.gpu_detail = c.gpu_detail;
  const int n = c.n_operands < GOFL_MAX_OPERANDS ? c.n_operands : GOFL_MAX_OPERANDS;
  r.n_operands = uint8_t(n < 0 ? 0 : n);
  for (int i = 0; i < n; ++i) {
    const gofl_call_operand& o = c.operands[i];
    r.operands[i].addr = reinterpret_cast<uint64_t>(o.ptr);
    r.operands[i].bytes = uint64_t(o.elems) * o.elem_size;
    r.operands[i].fp_in = c.fp_in[i];
    r.operands[i].fp_out = end.fp_out[i];
  }
  return r;
}

gofl_call call_from_record(const gofl_call_record& r, uint32_t resident) {
  gofl_call c{};
  c.op = r.op;
  c.sym = r.sym;
  c.flags = r.flags;
  c.flops = r.flops;
  memcpy(c.dims, r.dims, sizeof c.dims);
  // Operand i stays operand i (the table's facts about operands go by their place, gofl_copied_share);
  // one that was empty or not looked at has no role, and nothing reads it.
  for (int i = 0; i < r.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
    const gofl_operand& o = r.operands[i];
    const bool in = o.fp_in != 0, out = o.fp_out != 0;
    c.resident |= GOFL_RESIDENCY_OF(resident, i) << (2 * i);
    c.operands[c.n_operands++] = gofl_call_operand{
        reinterpret_cast<const void*>(o.addr), in || out ? int64_t(o.bytes) : 0, 1,
        uint16_t(in && out ? GOFL_INOUT : in ? GOFL_IN : out ? GOFL_OUT : 0), int16_t(-1)};
  }
  return c;
}

}  // namespace gofl
