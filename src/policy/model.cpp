#include "policy/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

namespace gofl {

namespace {

// Precision speed relative to double when a profile gives no `precision` line (as the built-in one).
double default_precision(int d, char p) {
  if (d == kCpu) return (p == 's' || p == 'c') ? 2.0 : 1.0;
  return (p == 's' || p == 'c') ? 0.8 : 1.0;
}

// Other precisions to borrow a routine's curve from, closest first.
const char* precision_order(char p) {
  switch (p) {
    case 's': return "dcz";
    case 'd': return "szc";
    case 'c': return "zsd";
    case 'z': return "cds";
  }
  return "";
}

int op_of(const char* family, char precision) {
  for (int i = 0; i < GOFL_N_OPS; ++i)
    if (gofl_ops[i].precision == precision && !strcmp(gofl_ops[i].family, family)) return i;
  return -1;
}

std::string fmt(double v) {
  char b[32];
  snprintf(b, sizeof b, "%.3g", v);
  return b;
}

}  // namespace

CallBytes call_bytes(const gofl_call& c) {
  CallBytes b;
  for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
    const gofl_call_operand& o = c.operands[i];
    const double bytes = double(o.elems) * double(o.elem_size) * gofl_copied_share(c.op, i);
    // An input whose device copy was kept from an earlier call was not copied.
    const bool kept = GOFL_RESIDENCY_OF(c.resident, i) != GOFL_RES_COPIED;
    if ((o.role == GOFL_IN || o.role == GOFL_INOUT) && !kept) b.in += bytes;
    if (o.role == GOFL_OUT || o.role == GOFL_INOUT) b.out += bytes;
  }
  return b;
}

Model::Model(const Profile& p) : p_(p) {
  for (int d = 0; d < 2; ++d)
    for (int op = 0; op < GOFL_N_OPS; ++op) src_[d][op] = resolve(d, op, 0);
}

double Model::precision_factor(int d, char prec) const {
  auto it = p_.precision[d].find(prec);
  return it != p_.precision[d].end() ? it->second : default_precision(d, prec);
}

Model::Source Model::resolve(int d, int op, int depth) const {
  Source s;
  if (!p_.curves[d][op].empty()) {
    s.base_op = op;
    return s;
  }
  const char* family = gofl_ops[op].family;
  const char p = gofl_ops[op].precision;
  const int gemm_p = op_of("gemm", p);
  // 1. The same routine in another precision, scaled by the two precisions' gemm speeds.
  for (const char* q = precision_order(p); *q; ++q) {
    const int other = op_of(family, *q);
    if (other < 0 || p_.curves[d][other].empty()) continue;
    s.base_op = other;
    const int gemm_q = op_of("gemm", *q);
    if (gemm_p >= 0 && gemm_q >= 0 && !p_.curves[d][gemm_p].empty() && !p_.curves[d][gemm_q].empty()) {
      s.num_op = gemm_p;
      s.den_op = gemm_q;
    } else {
      s.factor = precision_factor(d, p) / precision_factor(d, *q);
    }
    return s;
  }
  // 2. The gemm speed of its precision times the routine's efficiency.
  if (strcmp(family, "gemm") == 0 || gemm_p < 0 || depth > 0) return s;  // nothing to fall back on
  s = resolve(d, gemm_p, depth + 1);
  double eff = 1.0;
  auto it = p_.efficiency[d].find(gofl_ops[op].routine);
  if (it == p_.efficiency[d].end()) it = p_.efficiency[d].find(family);
  if (it != p_.efficiency[d].end()) eff = it->second;
  s.factor *= eff;
  return s;
}

double Model::speed(int d, int op, double flops) const {
  if (op < 0 || op >= GOFL_N_OPS) return 0;
  const Source& s = src_[d][op];
  if (s.base_op < 0) return 0;
  double v = p_.curves[d][s.base_op].at(flops) * s.factor;
  if (s.num_op >= 0) v *= p_.curves[d][s.num_op].at(flops) / p_.curves[d][s.den_op].at(flops);
  return v;
}

double Model::cpu_seconds(int op, double flops) const {
  const double v = speed(kCpu, op, flops);
  return v > 0 ? flops / v : INFINITY;
}

double Model::gpu_compute_seconds(int op, double flops) const {
  const double v = speed(kGpu, op, flops);
  return v > 0 ? flops / v : INFINITY;
}

double Model::gpu_seconds(int op, double flops, double bytes_in, double bytes_out) const {
  return p_.h2d.seconds(bytes_in) + gpu_compute_seconds(op, flops) + p_.d2h.seconds(bytes_out);
}

std::string Model::explain(int d, int op) const {
  const Source& s = src_[d][op];
  if (s.base_op < 0) return "no curve";
  if (s.base_op == op && s.factor == 1 && s.num_op < 0) return "curve";
  std::string e = std::string(gofl_ops[s.base_op].name);
  if (s.num_op >= 0) e += std::string(" x ") + gofl_ops[s.num_op].name + "/" + gofl_ops[s.den_op].name;
  if (s.factor != 1) e += " x " + fmt(s.factor);
  return e;
}

}  // namespace gofl
