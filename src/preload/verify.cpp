#include "preload/verify.h"

#include <math.h>

#include <atomic>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <complex>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/table.h"
#include "generated/descs.h"
#include "preload/gpu.h"

namespace gofl {
namespace {

struct VerifyRun {
  std::vector<unsigned char> desc;                // the call's descriptor, its outputs pointing below
  std::vector<std::vector<unsigned char>> bufs;  // per operand: the GPU's private output
  int64_t iout[GOFL_MAX_INT_OUTPUTS] = {};        // private integer outputs (info, m, rank), caller's width
  int status = -1;                                // GPU status; -1: the GPU was busy
  gofl_gpu_result res{};
  gofl_fft fft{};                                 // FFTW executes: the transform on the private array
};

bool is_single(const gofl_call& c) { const char p = gofl_ops[c.op].precision; return p == 's' || p == 'c'; }

// Integer output i of the call's descriptor (gofl_call.int_outputs: info, m, rank in argument order).
const desc::IntOut& int_output(const gofl_call& c, int i) {
  return *reinterpret_cast<const desc::IntOut*>(static_cast<const char*>(c.desc) + c.int_outputs[i]);
}
// The GPU's value of integer output i.
int64_t private_int(const gofl_call& c, const VerifyRun& v, int i) {
  return desc::IntOut{const_cast<int64_t*>(&v.iout[i]), int_output(c, i).ilp64}.get();
}
// A field of the call's descriptor D<T> (generated/descs.h), read through its precision's type.
template <template <class> class D, class F> int64_t desc_field(const gofl_call& c, F get) {
  switch (gofl_ops[c.op].precision) {
    case 's': return get(*static_cast<const D<float>*>(c.desc));
    case 'd': return get(*static_cast<const D<double>*>(c.desc));
    case 'c': return get(*static_cast<const D<std::complex<float>>*>(c.desc));
    default: return get(*static_cast<const D<std::complex<double>>*>(c.desc));
  }
}

// Largest difference relative to the largest value, over `n` reals of a column-major block.
template <class R>
double rel_error(const R* gpu, const R* cpu, int64_t rows, int64_t cols, int64_t ld) {
  double num = 0, den = 0;
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      const double g = gpu[i + j * ld], c = cpu[i + j * ld];
      if (std::isnan(g) != std::isnan(c)) return std::numeric_limits<double>::infinity();
      if (std::isnan(c)) continue;
      num = std::max(num, fabs(g - c));
      den = std::max(den, fabs(c));
    }
  return den > 0 ? num / den : num;
}

double block_error(const gofl_call& c, const void* gpu, const void* cpu, int64_t rows, int64_t cols, int64_t ld) {
  // Complex data compares as interleaved reals: rows and ld double.
  const int k = gofl_ops[c.op].complex ? 2 : 1;
  if (is_single(c)) return rel_error(static_cast<const float*>(gpu), static_cast<const float*>(cpu), rows * k, cols, ld * k);
  return rel_error(static_cast<const double*>(gpu), static_cast<const double*>(cpu), rows * k, cols, ld * k);
}

double operand_error(const gofl_call& c, const VerifyRun& v, int i) {
  const gofl_call_operand& o = c.operands[i];
  if (o.elems == 0) return 0;
  return block_error(c, v.bufs[i].data(), o.ptr, o.elems, 1, o.elems);
}

// Eigenvalues of a general matrix come in no fixed order: compare them sorted.
double eigenvalue_set_error(const gofl_call& c, const VerifyRun& v, int n) {
  std::vector<std::complex<double>> g(n), p(n);
  const bool single = is_single(c);
  auto get = [&](const void* base, int64_t idx) -> double {
    return single ? double(static_cast<const float*>(base)[idx]) : static_cast<const double*>(base)[idx];
  };
  for (int j = 0; j < n; ++j) {
    if (gofl_ops[c.op].complex) {  // operands: a, w, ...
      g[j] = {get(v.bufs[1].data(), 2 * j), get(v.bufs[1].data(), 2 * j + 1)};
      p[j] = {get(c.operands[1].ptr, 2 * j), get(c.operands[1].ptr, 2 * j + 1)};
    } else {  // operands: a, wr, wi, ...
      g[j] = {get(v.bufs[1].data(), j), get(v.bufs[2].data(), j)};
      p[j] = {get(c.operands[1].ptr, j), get(c.operands[2].ptr, j)};
    }
  }
  auto less = [](std::complex<double> a, std::complex<double> b) {
    return a.real() != b.real() ? a.real() < b.real() : a.imag() < b.imag();
  };
  std::sort(g.begin(), g.end(), less);
  std::sort(p.begin(), p.end(), less);
  double num = 0, den = 0;
  for (int j = 0; j < n; ++j) {
    num = std::max(num, std::abs(g[j] - p[j]));
    den = std::max(den, std::abs(p[j]));
  }
  return den > 0 ? num / den : num;
}

int64_t info_value(const gofl_call& c) {
  return (c.flags & GOFL_F_ILP64) ? *static_cast<const int64_t*>(c.info) : *static_cast<const int32_t*>(c.info);
}

bool same_bytes(const VerifyRun& v, const gofl_call& c, int i) {
  const gofl_call_operand& o = c.operands[i];
  return memcmp(v.bufs[i].data(), o.ptr, size_t(o.elems) * o.elem_size) == 0;
}

// The comparison of the table's verify column (README: --verify): vectors defined only up to sign
// are skipped (their values are compared), LU factors only when the pivots agree.
double compare(const gofl_call& c, const VerifyRun& v) {
  double err = 0;
  auto all_outputs = [&](std::initializer_list<int> skip) {
    for (int i = 0; i < c.n_operands; ++i) {
      if (c.operands[i].role == GOFL_IN) continue;
      if (std::find(skip.begin(), skip.end(), i) != skip.end()) continue;
      err = std::max(err, operand_error(c, v, i));
    }
  };
  switch (gofl_ops[c.op].verify) {
    case GOFL_VERIFY_EIGENVALUES:
      all_outputs({0});  // a: eigenvectors (jobz V) or destroyed (jobz N)
      break;
    case GOFL_VERIFY_EIGENVALUE_RANGE: {  // syevr, heevr: m is the first integer output
      const int64_t m_cpu = int_output(c, 0).get(), m_gpu = private_int(c, v, 0);
      if (m_cpu != m_gpu) return std::numeric_limits<double>::infinity();
      err = block_error(c, v.bufs[1].data(), c.operands[1].ptr, m_cpu, 1, m_cpu);
      break;
    }
    case GOFL_VERIFY_GENERALIZED:
      err = std::max(operand_error(c, v, 1), operand_error(c, v, 2));  // b: the factor, w; a: vectors up to sign
      break;
    case GOFL_VERIFY_GENERALIZED_RANGE: {  // sygvx, hegvx: m is the first integer output
      const int64_t m_cpu = int_output(c, 0).get(), m_gpu = private_int(c, v, 0);
      if (m_cpu != m_gpu) return std::numeric_limits<double>::infinity();
      err = std::max(operand_error(c, v, 1), block_error(c, v.bufs[2].data(), c.operands[2].ptr, m_cpu, 1, m_cpu));
      break;
    }
    case GOFL_VERIFY_SINGULAR_VALUES:
      err = operand_error(c, v, 1);  // s; a, u, vt hold vectors
      break;
    case GOFL_VERIFY_EIGENVALUE_SET:
      err = eigenvalue_set_error(c, v, int(c.dims[0]));  // vectors are defined up to their scaling
      break;
    case GOFL_VERIFY_LEAST_SQUARES:  // gels
    case GOFL_VERIFY_LEAST_SQUARES_SVD: {  // gelsd
      // Rank-deficient or failed: B holds partial results whose form the two algorithms need not share.
      if (c.info && info_value(c) != 0) break;
      // The solution: the leading rows of b (n rows for trans N, m for trans T/C).
      const bool gels = gofl_ops[c.op].verify == GOFL_VERIFY_LEAST_SQUARES;
      const auto nrhs = [](const auto& d) { return d.nrhs; };
      const auto ldb = [](const auto& d) { return d.ldb; };
      const bool trans = gels && desc_field<desc::gels>(c, [](const auto& d) { return int64_t(d.trans != 'N'); });
      const int64_t rows = trans ? c.dims[0] : c.dims[1];
      err = block_error(c, v.bufs[1].data(), c.operands[1].ptr, rows,
                        gels ? desc_field<desc::gels>(c, nrhs) : desc_field<desc::gelsd>(c, nrhs),
                        gels ? desc_field<desc::gels>(c, ldb) : desc_field<desc::gelsd>(c, ldb));
      if (!gels) err = std::max(err, operand_error(c, v, 2));  // s
      break;
    }
    case GOFL_VERIFY_LU_FACTORS:  // getrf
    case GOFL_VERIFY_LU_SOLVE:    // gesv
      if (same_bytes(v, c, 1)) err = operand_error(c, v, 0);  // factors only when the pivots agree
      if (gofl_ops[c.op].verify == GOFL_VERIFY_LU_SOLVE) err = std::max(err, operand_error(c, v, 2));
      break;
    case GOFL_VERIFY_OUTPUTS:
    case GOFL_VERIFY_TRANSFORM:  // not here: FFTW executes compare in fft_compare
      all_outputs({});
      break;
  }
  return err;
}

// ---- FFTW executes ----------------------------------------------------------------------------------
// The GPU writes a private copy of the output array (in place: of the one array), made from the
// program's current contents; only the transform's output elements are compared, not the padding of
// an in-place real transform, which the two libraries may leave differently.

// Calls fn(offset) for the offset (in elements of the output array) of every output element.
template <class F>
void for_each_output(const gofl_fft& f, F fn) {
  const int nd = f.rank + f.loop_rank;
  const size_t dims = size_t(nd);
  std::vector<int64_t> len(dims), stride(dims), idx(dims, 0);
  for (int k = 0; k < f.loop_rank; ++k) len[size_t(k)] = f.loop[k].n, stride[size_t(k)] = f.loop[k].os;
  for (int k = 0; k < f.rank; ++k) {
    const bool halved = f.kind == GOFL_FFT_R2C && k == f.rank - 1;  // the complex output of r2c
    len[size_t(f.loop_rank + k)] = halved ? f.dims[k].n / 2 + 1 : f.dims[k].n;
    stride[size_t(f.loop_rank + k)] = f.dims[k].os;
  }
  for (int64_t l : len)
    if (l <= 0) return;
  for (;;) {
    int64_t off = 0;
    for (int k = 0; k < nd; ++k) off += idx[size_t(k)] * stride[size_t(k)];
    fn(off);
    int k = nd - 1;
    while (k >= 0 && ++idx[size_t(k)] == len[size_t(k)]) idx[size_t(k--)] = 0;
    if (k < 0) return;
  }
}

template <class R>
double fft_error(const gofl_fft& f, const void* gpu_base, const void* cpu_base) {
  const int parts = f.kind == GOFL_FFT_C2R ? 1 : 2;
  double num = 0, den = 0;
  bool nan_mismatch = false;
  for_each_output(f, [&](int64_t off) {
    for (int p = 0; p < parts; ++p) {
      const double g = static_cast<const R*>(gpu_base)[off * parts + p];
      const double c = static_cast<const R*>(cpu_base)[off * parts + p];
      if (std::isnan(g) != std::isnan(c)) nan_mismatch = true;
      if (std::isnan(c)) continue;
      num = std::max(num, fabs(g - c));
      den = std::max(den, fabs(c));
    }
  });
  if (nan_mismatch) return std::numeric_limits<double>::infinity();
  return den > 0 ? num / den : num;
}

void fft_gpu_first(gofl_call& c, VerifyRun* v, gofl_call& shadow) {
  const gofl_fft& f = *c.fft;
  const bool inplace = f.in == f.out;
  const int64_t in_bytes = f.in_elems * f.in_elem, out_bytes = f.out_elems * f.out_elem;
  const int64_t bytes = inplace ? std::max(in_bytes, out_bytes) : out_bytes;
  v->bufs.assign(1, std::vector<unsigned char>(size_t(bytes)));
  memcpy(v->bufs[0].data(), static_cast<const char*>(f.out) + f.out_lo * f.out_elem, size_t(bytes));
  v->fft = f;
  v->fft.out = v->bufs[0].data() - f.out_lo * f.out_elem;
  if (inplace) v->fft.in = v->fft.out;
  shadow.fft = &v->fft;
  for (int i = 0; i < shadow.n_operands; ++i)
    if (shadow.operands[i].role != GOFL_IN) shadow.operands[i].ptr = v->bufs[0].data();
}

double fft_compare(const gofl_call& c, const VerifyRun& v) {
  const char* gpu = static_cast<const char*>(v.fft.out);
  return c.fft->single ? fft_error<float>(*c.fft, gpu, c.fft->out) : fft_error<double>(*c.fft, gpu, c.fft->out);
}

void args_gpu_first(gofl_call& c, VerifyRun* v, gofl_call& shadow);

std::atomic<int> g_messages{0};
std::atomic<uint64_t> g_checked{0};

}  // namespace

uint64_t verify_checked_calls() { return g_checked.load(std::memory_order_relaxed); }
void verify_reset() { g_checked = 0; }

double verify_tolerance(const gofl_call& c) { return is_single(c) ? 2e-3 : 1e-8; }

bool verify_gpu_first(gofl_call& c) {
  std::unique_ptr<VerifyRun> owner(new VerifyRun);  // freed here if a private copy cannot be made
  VerifyRun* v = owner.get();
  gofl_call shadow = c;
  if (c.fft) {
    fft_gpu_first(c, v, shadow);
  } else {
    args_gpu_first(c, v, shadow);
  }
  shadow.verify = nullptr;
  c.verify = owner.release();
  bool busy = false;
  int st = gpu_run(shadow, &v->res, &busy);
  v->status = busy ? -1 : st;
  if (!busy && st == 0) {
    c.copy_in_s = v->res.copy_in_s;
    c.compute_s = v->res.compute_s;
    c.copy_out_s = v->res.copy_out_s;
    c.resident = v->res.resident;  // the GPU run read kept device copies: verify checks them too
  } else if (!busy) {
    c.gpu_status = uint16_t(st);
    c.gpu_detail = uint16_t(v->res.detail);
  }
  return !busy && st == 0;
}

namespace {

// BLAS and LAPACK calls: private copies of every output argument, integer outputs included, in a
// copy of the call's descriptor whose output fields point at them.
void args_gpu_first(gofl_call& c, VerifyRun* v, gofl_call& shadow) {
  const char* d = static_cast<const char*>(c.desc);
  v->desc.assign(d, d + c.desc_size);
  v->bufs.resize(size_t(c.n_operands));
  for (int i = 0; i < c.n_operands; ++i) {
    const gofl_call_operand& o = c.operands[i];
    if (o.role == GOFL_IN || !o.ptr || o.field < 0) continue;
    int64_t elems = o.elems;
    if (elems == 0 && gofl_ops[c.op].verify == GOFL_VERIFY_EIGENVALUE_RANGE && i == 2) {
      // z for range 'V': the column count is known only afterwards; n columns bound it.
      const auto ldz = [](const auto& x) { return x.ldz; };
      elems = (gofl_ops[c.op].complex ? desc_field<desc::heevr>(c, ldz) : desc_field<desc::syevr>(c, ldz)) * c.dims[0];
    }
    // Start from the program's current contents, so untouched parts compare equal.
    auto& buf = v->bufs[i];
    buf.resize(size_t(elems) * o.elem_size);
    if (o.elems) memcpy(buf.data(), o.ptr, size_t(o.elems) * o.elem_size);
    void* const p = buf.data();
    memcpy(v->desc.data() + o.field, &p, sizeof p);  // a T* field, or an IntArray's first member
    shadow.operands[i].ptr = buf.data();
  }
  for (int i = 0; i < c.n_int_outputs; ++i) {
    const desc::IntOut& out = int_output(c, i);
    memcpy(&v->iout[i], out.p, out.ilp64 ? 8 : 4);
    desc::IntOut mine{&v->iout[i], out.ilp64};
    memcpy(v->desc.data() + c.int_outputs[i], &mine, sizeof mine);
    if (out.p == c.info) shadow.info = &v->iout[i];
  }
  shadow.desc = v->desc.data();
}

}  // namespace

bool verify_compare(gofl_call& c) {
  auto* v = static_cast<VerifyRun*>(c.verify);
  c.verify = nullptr;
  if (!v) return false;
  bool mismatch = false;
  if (v->status == 0) {
    g_checked.fetch_add(1, std::memory_order_relaxed);
    double err = c.fft ? fft_compare(c, *v) : compare(c, *v);
    // info must agree exactly.
    for (int i = 0; c.info && !c.fft && i < c.n_int_outputs; ++i)
      if (int_output(c, i).p == c.info && info_value(c) != private_int(c, *v, i)) err = std::numeric_limits<double>::infinity();
    c.verify_error = float(err);
    mismatch = !(err <= verify_tolerance(c));
    if (mismatch) {
      c.flags |= GOFL_F_VERIFY_MISMATCH;
      if (g_messages.fetch_add(1) < 10)
        fprintf(stderr, "gpu-offload: verify: %s (%lld x %lld x %lld): GPU and CPU results differ by %.3g (tolerance %.0e)\n",
                gofl_ops[c.op].name, (long long)c.dims[0], (long long)c.dims[1], (long long)c.dims[2], err,
                verify_tolerance(c));
    }
  }
  delete v;
  return mismatch;
}

}  // namespace gofl
