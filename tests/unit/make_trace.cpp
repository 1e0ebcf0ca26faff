// Test-only: writes synthetic trace files with GPU-side fields (device, reason, copy and compute
// times, predictions, verify results, GPU failures, fingerprints) through the library's own trace
// writer (src/trace/writer.cpp, src/trace/record.h), so the report's GPU side is tested on machines
// without a GPU. The file header is the writer's: the program is this command line.
//
//   make_trace DIR avoidable [ARGS...]  known answers for the avoidable-copy estimate (forks a child)
//   make_trace DIR mixed [ARGS...]      known answers for the GPU columns, failures, verify, the model
//   make_trace DIR demo [ARGS...]       a realistic offloaded run, to look at
//   make_trace DIR resident             known answers for the copies residency avoided
//   make_trace DIR cores_held           a GPU call that began beside other threads' CPU calls, and one not
//   make_trace DIR conversions          known answers for the conversions around a LAPACK call (the
//                                       copies are NumPy's when this binary runs from a numpy/ folder)
//   make_trace DIR own_work             LAPACK calls after long stretches of the caller's own work
//                                       and no copy (scikit-learn's kernel before scipy's solver)
//   make_trace DIR starts               GPU start records: the GPU each process ran on, and the forms
//                                       traces written before the GPU was recorded have (forks a child)
// Extra ARGS only end up in the header's program field (tests put HTML there).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/table.h"
#include "trace/call_record.h"
#include "trace/record.h"
#include "trace/writer.h"

namespace {

// Call sites: addresses inside this executable, so the writer names the module (dladdr).
__attribute__((noinline)) void site_anchor() { asm volatile(""); }
uint64_t site(int k) { return reinterpret_cast<uint64_t>(&site_anchor) + uint64_t(k); }

struct Operand {
  uint64_t addr, bytes;
  uint32_t fp_in, fp_out;
};

struct Call {
  Call(uint16_t op, uint16_t sym) : op(op), sym(sym) {}
  uint16_t op, sym;
  uint8_t device = GOFL_DEV_CPU, reason = GOFL_R_BELOW_THRESHOLD, depth = 0;
  uint32_t flags = 0;
  uint64_t t_ns = 0, dur_ns = 0;
  int64_t m = 0, n = 0, k = 0;
  double flops = 0;
  int site = 0;
  float pred_cpu = 0, pred_gpu = 0, copy_in = 0, compute = 0, copy_out = 0, verify_error = 0;
  uint16_t gpu_status = 0, gpu_detail = 0;
  uint32_t resident = 0;  // gofl_record.resident: which inputs a kept device copy served
  std::vector<Operand> operands;
};

// The call as the dispatcher would have described it, recorded through the library's own conversion.
void emit(const Call& c) {
  gofl_call g{};
  gofl::CallEnd end;
  g.op = c.op;
  g.sym = c.sym;
  g.flags = c.flags | (c.depth ? GOFL_F_NESTED : 0);
  g.device = c.device;
  g.reason = c.depth ? uint8_t(GOFL_R_NESTED) : c.reason;
  g.depth = c.depth;
  g.t0_ns = c.t_ns;
  g.dims[0] = c.m;
  g.dims[1] = c.n;
  g.dims[2] = c.k;
  g.flops = c.flops;
  g.site = reinterpret_cast<const void*>(site(c.site));
  g.verify_error = c.verify_error;
  g.pred_cpu_s = c.pred_cpu;
  g.pred_gpu_s = c.pred_gpu;
  g.copy_in_s = c.copy_in;
  g.compute_s = c.compute;
  g.copy_out_s = c.copy_out;
  g.gpu_status = c.gpu_status;
  g.gpu_detail = c.gpu_detail;
  for (const Operand& o : c.operands) {
    if (g.n_operands == GOFL_MAX_OPERANDS) break;
    const int i = g.n_operands++;
    const uint16_t role = o.fp_in && o.fp_out ? GOFL_INOUT : o.fp_out ? GOFL_OUT : GOFL_IN;
    g.operands[i] = gofl_call_operand{reinterpret_cast<const void*>(o.addr), int64_t(o.bytes), 1, role, int16_t(i)};
    g.fp_in[i] = o.fp_in;
    end.fp_out[i] = o.fp_out;
  }
  end.tid = uint32_t(getpid());
  end.duration_ns = c.dur_ns;
  gofl::trace_call(gofl::record_from_call(g, end), c.resident);
}

const uint64_t MB8 = 8000000;  // 1000 x 1000 doubles
const uint64_t A = 0x10000000, B = 0x20000000, C = 0x30000000, D = 0x40000000, E = 0x50000000, F = 0x60000000;
const uint64_t MS = 1000000;   // ns

Call gemm(uint64_t t, uint8_t device, uint8_t reason, std::initializer_list<Operand> ops, float copy_in = 0) {
  Call c{OP_dgemm, S_dgemm_};
  c.device = device;
  c.reason = reason;
  c.t_ns = t;
  c.dur_ns = 5 * MS;
  c.m = c.n = c.k = 1000;
  c.flops = 2e9;
  c.copy_in = copy_in;
  c.compute = device == GOFL_DEV_GPU ? 0.001f : 0;
  c.operands = ops;
  return c;
}

// Known answers (tests/unit/test_html_report.py checks them). Every timed copy runs at 4 GB/s
// (8 MB in 2 ms), so the measured rate is 4 GB/s and every avoidable 8 MB is worth 2 ms.
//   parent, calls that ran on the GPU: 4 calls, inputs 68 MB, avoidable 32 MB, 8 ms
//     (call 2: A and C, 16 MB; call 3: B, 8 MB; call 5: A, 8 MB, priced at the measured rate);
//   parent, GPU-capable calls on the CPU, if offloaded: 1 call, inputs 16 MB, avoidable 16 MB, 4 ms;
//   the forked child: 2 GPU calls, inputs 24 MB, avoidable 8 MB (nothing carries over from the parent).
//   Both processes: GPU 6 calls, 92 MB in, 40 MB (43.5%) avoidable, 10 ms.
// Residency: three GPU products reading A and B (8 MB each, copies at 4 GB/s). Call 2: a kept copy
// served A (avoided 8 MB); B was copied although unchanged (still avoidable 8 MB, 2 ms). Call 3: both
// kept (16 MB avoided). In all: 48 MB read, 24 MB avoided, 8 MB still avoidable.
void resident() {
  const uint8_t G = GOFL_DEV_GPU;
  emit(gemm(1 * MS, G, GOFL_R_OFFLOADED, {{A, MB8, 11, 0}, {B, MB8, 22, 0}, {C, MB8, 0, 33}}, 0.004f));
  Call two = gemm(10 * MS, G, GOFL_R_OFFLOADED, {{A, MB8, 11, 0}, {B, MB8, 22, 0}, {D, MB8, 0, 44}}, 0.002f);
  two.resident = GOFL_RES_KEPT;  // operand 0, A
  emit(two);
  Call three = gemm(20 * MS, G, GOFL_R_OFFLOADED, {{A, MB8, 11, 0}, {B, MB8, 22, 0}, {E, MB8, 0, 55}}, 0.0f);
  three.resident = GOFL_RES_KEPT | (GOFL_RES_KEPT << 2);
  emit(three);
}

// Two GPU products reading 16 MB each: the first began while other threads' CPU calls held the cores
// (GOFL_F_CORES_HELD) and copied in at 2 GB/s, the second at 8 GB/s.
void cores_held() {
  const uint8_t G = GOFL_DEV_GPU;
  Call held = gemm(1 * MS, G, GOFL_R_OFFLOADED, {{A, MB8, 11, 0}, {B, MB8, 22, 0}, {C, MB8, 0, 33}}, 0.008f);
  held.flags = GOFL_F_CORES_HELD;
  emit(held);
  emit(gemm(10 * MS, G, GOFL_R_OFFLOADED, {{D, MB8, 44, 0}, {E, MB8, 55, 0}, {F, MB8, 0, 66}}, 0.002f));
}

void avoidable() {
  const uint8_t G = GOFL_DEV_GPU, P = GOFL_DEV_CPU;
  // 1: A, B in; C out. Nothing held yet.
  emit(gemm(1 * MS, G, GOFL_R_FORCED_GPU, {{A, MB8, 11, 0}, {B, MB8, 22, 0}, {C, MB8, 0, 33}}, 0.004f));
  // 3 (written before 2: the report must sort by start time): A changed (fp 12), B unchanged -> B avoidable.
  emit(gemm(30 * MS, G, GOFL_R_FORCED_GPU, {{A, MB8, 12, 0}, {B, MB8, 22, 0}, {E, MB8, 0, 55}}, 0.004f));
  // 2: A unchanged since 1, C is 1's output unchanged -> both avoidable (16 MB, 4 ms of its 4 ms).
  emit(gemm(20 * MS, G, GOFL_R_FORCED_GPU, {{A, MB8, 11, 0}, {C, MB8, 33, 0}, {D, MB8, 0, 44}}, 0.004f));
  // Not in the estimate: a nested call, a workspace query, a call the GPU does not run (geevx with
  // condition numbers: "measured only").
  Call nested = gemm(31 * MS, P, GOFL_R_NESTED, {{A, MB8, 12, 0}, {B, MB8, 22, 0}});
  nested.depth = 1;
  emit(nested);
  Call query = gemm(32 * MS, P, GOFL_R_QUERY, {{A, MB8, 12, 0}});
  query.flags = GOFL_F_QUERY;
  emit(query);
  Call geevx{OP_dgeevx, S_dgeevx_};
  geevx.reason = GOFL_R_NOT_GPU_CAPABLE;
  geevx.t_ns = 33 * MS;
  geevx.dur_ns = MS;
  geevx.m = geevx.n = 1000;
  geevx.flops = 1e10;
  geevx.operands = {{A, MB8, 12, 0}};
  emit(geevx);
  // 4, on the CPU: A (fp 12, held since 3) and B (held since 1) would already be on the GPU: 16 MB.
  emit(gemm(40 * MS, P, GOFL_R_BELOW_THRESHOLD, {{A, MB8, 12, 0}, {B, MB8, 22, 0}, {F, MB8, 0, 66}}));
  // 5, on the GPU without a measured copy: F was written by the CPU call (the GPU never held it),
  // A still holds fp 12 -> 8 MB avoidable; the same address with another size is another buffer.
  emit(gemm(50 * MS, G, GOFL_R_FORCED_GPU, {{F, MB8, 66, 0}, {A, MB8, 12, 0}, {A, MB8 / 2, 12, 0}}, 0.0f));
  gofl::trace_flush();

  gofl::trace_fork_prepare();
  const pid_t pid = fork();
  if (pid == 0) {
    gofl::trace_fork_child();
    // The child's GPU holds nothing of the parent's: A and B are copied again, then A is avoidable.
    emit(gemm(60 * MS, G, GOFL_R_FORCED_GPU, {{A, MB8, 12, 0}, {B, MB8, 22, 0}}, 0.004f));
    emit(gemm(70 * MS, G, GOFL_R_FORCED_GPU, {{A, MB8, 12, 0}}, 0.002f));
    gofl::trace_flush();
    _exit(0);
  }
  gofl::trace_fork_parent();
  int status = 0;
  waitpid(pid, &status, 0);
}

// Known answers: see the comment of each call.
void mixed() {
  const uint64_t N = 4096, big = N * N * 8;  // 134217728 bytes
  // dgemm on the GPU, twice: 50 ms each = copy in 10 + compute 30 + copy out 5 (+5 other); predicted
  // 0.5 s on the CPU and 40 ms on the GPU (observed / predicted 1.25).
  for (int i = 0; i < 2; ++i) {
    Call c{OP_dgemm, S_dgemm_};
    c.device = GOFL_DEV_GPU;
    c.reason = GOFL_R_OFFLOADED;
    c.t_ns = uint64_t(100 + 100 * i) * MS;
    c.dur_ns = 50 * MS;
    c.m = c.n = c.k = int64_t(N);
    c.flops = 2.0 * N * N * N;
    c.site = 16;
    c.pred_cpu = 0.5f, c.pred_gpu = 0.04f;
    c.copy_in = 0.010f, c.compute = 0.030f, c.copy_out = 0.005f;
    // Fresh buffers each time: nothing avoidable.
    c.operands = {{A + i * 0x1000000000ull, big, 101u + i, 0}, {B + i * 0x1000000000ull, big, 201u + i, 0},
                  {C + i * 0x1000000000ull, big, 0, 301u + i}};
    emit(c);
  }
  // dgemm on the CPU, three times: predicted slower on the GPU; 1 ms each, predicted 1 ms (ratio 1).
  for (int i = 0; i < 3; ++i) {
    Call c{OP_dgemm, S_dgemm_};
    c.reason = GOFL_R_PREDICTED_SLOWER;
    c.t_ns = uint64_t(10 + 10 * i) * MS;
    c.dur_ns = MS;
    c.m = c.n = c.k = 256;
    c.flops = 2.0 * 256 * 256 * 256;
    c.site = 32;
    c.pred_cpu = 0.001f, c.pred_gpu = 0.002f;
    c.operands = {{D, 524288, 401u + i, 0}, {E, 524288, 501u + i, 0}, {F, 524288, 0, 601u + i}};
    emit(c);
  }
  // dpotrf: one GPU attempt failed (cuSOLVER error 7), the CPU ran it in 100 ms; one stayed for memory.
  Call failed{OP_dpotrf, S_dpotrf_};
  failed.reason = GOFL_R_GPU_FAILED;
  failed.gpu_status = 6;
  failed.gpu_detail = 7;
  failed.t_ns = 400 * MS;
  failed.dur_ns = 100 * MS;
  failed.m = failed.n = 3000;
  failed.flops = 9e9;
  failed.site = 48;
  failed.operands = {{A, 72000000, 701, 702}};
  emit(failed);
  Call memory = failed;
  memory.reason = GOFL_R_GPU_MEMORY;
  memory.gpu_status = memory.gpu_detail = 0;
  memory.t_ns = 600 * MS;
  memory.operands = {{A, 72000000, 702, 703}};
  emit(memory);
  // Two nested dgemm calls inside the dpotrf (CPU LAPACK calling BLAS).
  for (int i = 0; i < 2; ++i) {
    Call c{OP_dgemm, S_dgemm_};
    c.depth = 1;
    c.t_ns = (401 + i) * MS;
    c.dur_ns = 10 * MS;
    c.m = c.n = c.k = 1000;
    c.flops = 2e9;
    emit(c);
  }
  // dsyevd in verify mode, twice: one mismatch (3.5e-6 on a 2000 matrix), one agreement (1e-12).
  for (int i = 0; i < 2; ++i) {
    Call c{OP_dsyevd, S_dsyevd_};
    c.reason = GOFL_R_VERIFY;
    c.t_ns = uint64_t(800 + 100 * i) * MS;
    c.dur_ns = 80 * MS;
    c.m = c.n = i ? 1000 : 2000;
    c.flops = 1e10;
    c.site = 64;
    c.copy_in = 0.002f, c.compute = 0.02f, c.copy_out = 0.002f;
    c.verify_error = i ? 1e-12f : 3.5e-6f;
    c.flags = i ? 0 : GOFL_F_VERIFY_MISMATCH;
    c.operands = {{B, 32000000, 801u + i, 901u + i}};
    emit(c);
  }
  // A workspace query and four geevx calls the GPU does not run (with condition numbers).
  Call q{OP_dsyevd, S_dsyevd_};
  q.reason = GOFL_R_QUERY;
  q.flags = GOFL_F_QUERY;
  q.t_ns = 790 * MS;
  q.dur_ns = 1000;
  emit(q);
  for (int i = 0; i < 4; ++i) {
    Call c{OP_dgeevx, S_dgeevx_};
    c.reason = GOFL_R_NOT_GPU_CAPABLE;
    c.t_ns = uint64_t(1000 + i) * MS;
    c.dur_ns = MS / 2;
    c.m = c.n = 1000;
    c.flops = 1e10;
    c.site = 80;
    emit(c);
  }
  gofl::trace_flush();
}

// ---- demo: a solver loop on a big matrix, with growing problems, some of them offloaded ----------

uint64_t rng_state = 0x9e3779b97f4a7c15ull;
double noise(double spread) {  // log-normal factor with median 1
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  const double u1 = double((rng_state >> 11) + 1) / 9007199254740993.0;
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  const double u2 = double(rng_state >> 11) / 9007199254740992.0;
  return exp(spread * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
}
// Speeds like those measured on the GPU test machine (H200, 16-core host): 16 CPU cores near 600 GFLOP/s,
// the GPU near 55 TFLOP/s, copies at about 42 GB/s; small problems run far below the peak on both.
double cpu_time(double flops, double eff) { return flops / (eff * 600e9 * flops / (flops + 3e8)) + 2e-6; }
double gpu_compute(double flops, double eff) { return flops / (eff * 55e12 * flops / (flops + 4e10)) + 15e-6; }
double copy_time(double bytes) { return 25e-6 + bytes / 42e9; }

struct Demo {
  uint64_t t = 1000 * MS;
  bool started = false;
  uint32_t fp = 1000;
  // Decides like --device auto at level 5 and writes the call (inputs are {addr, bytes, fp}).
  void call(uint16_t op, uint16_t sym, int64_t n, int64_t k, double flops, double eff_cpu, double eff_gpu, int site_k,
            std::initializer_list<Operand> ops, bool gpu_fail = false) {
    double in = 0, out = 0;
    for (const Operand& o : ops) {
      if (o.fp_in) in += double(o.bytes);
      if (o.fp_out) out += double(o.bytes);
    }
    const double pc = cpu_time(flops, eff_cpu), pg = copy_time(in) + gpu_compute(flops, eff_gpu) + copy_time(out);
    Call c{op, sym};
    c.m = n, c.n = n, c.k = k;
    c.flops = flops;
    c.site = site_k;
    c.t_ns = t;
    c.operands = ops;
    double secs;
    if (flops < 1e6) {
      c.reason = GOFL_R_BELOW_THRESHOLD;
      secs = pc * noise(0.1);
    } else {
      c.pred_cpu = float(pc), c.pred_gpu = float(pg);
      if (pc < 1.3 * pg) {
        c.reason = GOFL_R_PREDICTED_SLOWER;
        secs = pc * noise(0.12);
      } else if (!started && pc < 0.05) {
        c.reason = GOFL_R_NOT_STARTED;
        secs = pc * noise(0.12);
      } else if (gpu_fail) {
        c.reason = GOFL_R_GPU_MEMORY;
        secs = pc * noise(0.12);
      } else {
        started = true;
        c.device = GOFL_DEV_GPU;
        c.reason = GOFL_R_OFFLOADED;
        c.copy_in = float(copy_time(in) * noise(0.08));
        c.compute = float(gpu_compute(flops, eff_gpu) * noise(0.1));
        c.copy_out = float(copy_time(out) * noise(0.08));
        secs = double(c.copy_in) + c.compute + c.copy_out + 30e-6;
      }
    }
    c.dur_ns = uint64_t(secs * 1e9);
    emit(c);
    t += c.dur_ns + 200000;
  }
};

void demo() {
  Demo d;
  // Growing matrix products, as a parameter sweep would make them; the same A is reused.
  for (int64_t n : {64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192}) {
    const uint64_t sz = uint64_t(n * n * 8);
    const uint64_t a = 0x100000000ull + uint64_t(n) * 0x10000000ull;
    for (int rep = 0; rep < (n < 2048 ? 6 : 3); ++rep) {
      const uint32_t fa = 7u + uint32_t(n);  // A does not change between repetitions
      d.call(OP_dgemm, S_dgemm_, n, n, 2.0 * n * n * n, 1.0, 1.0, 16,
             {{a, sz, fa, 0}, {a + 0x4000000, sz, ++d.fp, 0}, {a + 0x8000000, sz, 0, ++d.fp}});
    }
  }
  // A solver loop: factor once, then many products with the same operator.
  const int64_t n = 6000;
  const uint64_t sz = uint64_t(n * n * 8), op_addr = 0x900000000ull, x_addr = 0xa00000000ull;
  d.call(OP_dpotrf, S_dpotrf_, n, 0, n * double(n) * n / 3, 0.7, 0.6, 32, {{op_addr, sz, 4242, 4343}});
  for (int it = 0; it < 20; ++it)
    d.call(OP_dgemm, S_dgemm_, n, 64, 2.0 * n * n * 64, 0.9, 0.8, 48,
           {{op_addr, sz, 4343, 0},
            {x_addr, uint64_t(n * 64 * 8), ++d.fp, 0},
            {x_addr + 0x10000000, uint64_t(n * 64 * 8), 0, ++d.fp}});
  for (int64_t m : {500, 1000, 2000, 4000, 8000}) {
    const uint64_t s = uint64_t(m * m * 8);
    d.call(OP_dsyevd, S_dsyevd_, m, 0, 9.0 * m * m * m, 0.25, 0.35, 64, {{0xb00000000ull, s, ++d.fp, ++d.fp}});
    d.call(OP_dgesv, S_dgesv_, m, 100, 2.0 / 3 * m * m * m, 0.6, 0.5, 80,
           {{0xc00000000ull, s, ++d.fp, ++d.fp}, {0xd00000000ull, uint64_t(m * 100 * 8), ++d.fp, ++d.fp}},
           m == 8000);
  }
  // Small calls a loop makes, below the threshold, and eigenvalue calls the GPU does not run (geevx).
  for (int i = 0; i < 40; ++i)
    d.call(OP_dgemm, S_dgemm_, 24, 24, 2.0 * 24 * 24 * 24, 1.0, 1.0, 96, {{0xe00000000ull, 4608, ++d.fp, 0}});
  for (int i = 0; i < 30; ++i) {
    Call c{OP_dgeevx, S_dgeevx_};
    c.reason = GOFL_R_NOT_GPU_CAPABLE;
    c.t_ns = d.t;
    c.dur_ns = 400000;
    c.m = c.n = 400;
    c.flops = 6.4e8;
    c.site = 112;
    emit(c);
    d.t += 500000;
  }
  gofl::trace_flush();
}

// ---- conversions: NumPy's pattern around one GPU dgesv, with known answers ---------------------
// (tests/unit/test_conversions_report.py checks them.) 1000 dcopy of 3 us, 1 us apart, from 1 ms; the
// dgesv 1.001 ms after the last one ends (reads 8 MB + 8 kB: the 4 ns/byte cap is 32 ms, not reached),
// 0.5 ms on the GPU; one dcopy of 10 us after it (x back); then a dgemm, and a dcopy after it that
// belongs to no LAPACK call. Converting: 1001 copies, 3.01 ms + 1.001 ms before = 4.011 ms.
void conversions() {
  const uint64_t US = 1000;
  Call copy{OP_dcopy, S_scipy_dcopy_64_};
  copy.reason = GOFL_R_NOT_GPU_CAPABLE;
  copy.site = 40;
  copy.m = 1000;
  copy.dur_ns = 3 * US;
  for (int i = 0; i < 1000; ++i) {
    copy.t_ns = 1 * MS + uint64_t(i) * 4 * US;
    copy.operands = {{A + uint64_t(i) * 8, 8 * (1 + 999 * 1000), 7, 0}, {B + uint64_t(i) * 8000, 8000, 0, 8}};
    emit(copy);
  }
  Call gesv{OP_dgesv, S_scipy_dgesv_64_};
  gesv.device = GOFL_DEV_GPU;
  gesv.reason = GOFL_R_FORCED_GPU;
  gesv.site = 41;
  gesv.t_ns = 1 * MS + 999 * 4 * US + 3 * US + 1001 * US;
  gesv.dur_ns = 500 * US;
  gesv.m = gesv.n = 1000;
  gesv.k = 1;
  gesv.flops = 2.0 / 3 * 1e9;
  gesv.operands = {{B, MB8, 9, 10}, {C, 8000, 11, 12}};
  emit(gesv);
  copy.t_ns = gesv.t_ns + gesv.dur_ns + 100 * US;
  copy.dur_ns = 10 * US;
  copy.operands = {{C, 8000, 12, 0}, {D, 8000, 0, 13}};
  emit(copy);
  emit(gemm(copy.t_ns + 1 * MS, GOFL_DEV_CPU, GOFL_R_BELOW_THRESHOLD, {{A, MB8, 1, 0}, {B, MB8, 2, 0}, {C, MB8, 0, 3}}));
  copy.t_ns += 10 * MS;
  emit(copy);
}

// ---- own_work: three dposv of 1000 x 1000 (8 MB read: a 32 ms cap), each after 20 ms outside any call
// and no copy, 5 ms each. The 40 ms between them are the program's own work, not converting (they
// would dominate the 15 ms in them).
void own_work() {
  for (int i = 0; i < 3; ++i) {
    Call posv{OP_dposv, S_scipy_dposv_};
    posv.site = 50;
    posv.t_ns = uint64_t(i + 1) * 25 * MS;
    posv.dur_ns = 5 * MS;
    posv.m = posv.n = 1000;
    posv.k = 1;
    posv.flops = 1e9 / 3;
    posv.operands = {{A, MB8, 9, 10}, {B, 8000, 11, 12}};
    emit(posv);
  }
}

// The parent: an ok start as traces before the GPU was recorded wrote it (all zero after `ok`); a
// failed start whose message fills all 200 bytes (199 characters, as before); a start on GPU 1 of 2
// chosen by local rank (recorded 1: the program waited for all of it); a GPU call. The child: a start
// on GPU 0 chosen by load that ran beside the calls (recorded 2: the program waited 30 of its 280 ms);
// a GPU call.
gofl_start_gpu start_gpu(int index, const char* bus, const char* chosen) {
  gofl_start_gpu g{};
  g.recorded = 1;
  g.count = 2;
  g.index = index;
  snprintf(g.bus_id, sizeof g.bus_id, "%s", bus);
  snprintf(g.name, sizeof g.name, "NVIDIA H200");
  snprintf(g.chosen_by, sizeof g.chosen_by, "%s", chosen);
  return g;
}

void starts() {
  gofl::trace_gpu_start(1 * MS, 250 * MS, true, "");
  gofl::trace_gpu_start(2 * MS, 10 * MS, false, std::string(199, 'x').c_str());
  const gofl_start_gpu one = start_gpu(1, "00000000:2A:00.0", "local rank 1 (OMPI_COMM_WORLD_LOCAL_RANK) of 2 usable GPUs");
  gofl::trace_gpu_start(3 * MS, 300 * MS, true, "", &one);
  // Its steps (they sum to the 300 ms), and its first dgemm's set-up.
  const gofl_setup_phase steps[] = {{GOFL_SP_LOAD, 0, 40 * MS}, {GOFL_SP_CONTEXT, 0, 230 * MS},
                                    {GOFL_SP_STREAMS, 0, 5 * MS}, {GOFL_SP_OTHER, 0, 25 * MS}};
  gofl::trace_setup(GOFL_SETUP_AT_START, 303 * MS, steps, 4);
  const gofl_setup_phase first[] = {{GOFL_SP_CUBLAS, 0, 12 * MS}, {GOFL_SP_STAGING, 0, 3 * MS},
                                    {GOFL_SP_FIRST_CALL, 0, 90 * MS}};
  gofl::trace_setup(uint16_t(gofl_op_by_name("dgemm")), 500 * MS, first, 3);
  // A warm-up beside the calls (cuda/warm.h): dpotrf's, which loaded cuSOLVER and made a handle.
  const gofl_setup_phase warmed[] = {{GOFL_SP_WARMED, 0, 70 * MS}, {GOFL_SP_WARM_CPU, 0, 6 * MS}, {GOFL_SP_LOAD_CUSOLVER, 0, 40 * MS},
                                     {GOFL_SP_CUSOLVER, 0, 8 * MS}};
  gofl::trace_setup(uint16_t(gofl_op_by_name("dpotrf")), 520 * MS, warmed, 4);
  emit(gemm(400 * MS, GOFL_DEV_GPU, GOFL_R_FORCED_GPU, {{A, MB8, 11, 0}, {B, MB8, 22, 0}, {C, MB8, 0, 33}}, 0.004f));
  gofl::trace_flush();
  gofl::trace_fork_prepare();
  const pid_t pid = fork();
  if (pid == 0) {
    gofl::trace_fork_child();
    gofl_start_gpu zero = start_gpu(0, "00000000:18:00.0", "the least loaded of 2 usable GPUs");
    zero.recorded = 2;
    zero.waited_ns = 30 * MS;
    gofl::trace_gpu_start(4 * MS, 280 * MS, true, "", &zero);
    emit(gemm(400 * MS, GOFL_DEV_GPU, GOFL_R_FORCED_GPU, {{A, MB8, 11, 0}, {B, MB8, 22, 0}, {C, MB8, 0, 33}}, 0.004f));
    gofl::trace_flush();
    _exit(0);
  }
  gofl::trace_fork_parent();
  int status = 0;
  waitpid(pid, &status, 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: make_trace DIR avoidable|mixed|demo|conversions|own_work|starts|resident|cores_held [ARGS...]\n");
    return 2;
  }
  const std::string what = argv[2];
  const bool is_demo = what == "demo";
  // The header records the run's settings: device gpu for the known-answer traces, auto for the demo.
  gofl::trace_configure(argv[1],
                        gofl::TraceInfo{is_demo ? 5 : 7, is_demo ? 2 : 1,
                                        is_demo ? "built-in" : "test <profile> & \"synthetic\""});
  if (what == "avoidable") avoidable();
  else if (what == "resident") resident();
  else if (what == "cores_held") cores_held();
  else if (what == "mixed") mixed();
  else if (is_demo) demo();
  else if (what == "conversions") conversions();
  else if (what == "own_work") own_work();
  else if (what == "starts") starts();
  else {
    fprintf(stderr, "make_trace: unknown scenario '%s'\n", what.c_str());
    return 2;
  }
  return 0;
}
