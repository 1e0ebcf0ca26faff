// The calibration workload: an ordinary BLAS/LAPACK client. `gpu-offload calibrate` runs it under
// the library (GPU_OFFLOAD_DEVICE=cpu, then gpu, each traced); it calls every GPU-capable routine in
// every precision through the exported Fortran names (so through the library's wrappers, into the
// BLAS/LAPACK it loaded), and FFTW's transforms through the fftw_ names (calibrate/fft_problem.h),
// over growing sizes, and writes which stretches of time hold the accepted
// repetitions of each point. The fit (calibrate.cpp) reads the durations from the trace.
//
// The canary: a small fixed job on every core, timed before and after each point. A point starts
// only when the canary runs at its normal speed (the median of its recent runs), and is measured
// again when the canary slowed down meanwhile: a multithreaded CPU library runs many times slower
// while other programs take its cores.
#include "calibrate/workload.h"
#include "policy/registry.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <complex>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.h"
#include "common/clock.h"
#include "calibrate/fft_problem.h"
#include "calibrate/matrix_problem.h"
#include "common/table.h"
#include "policy/model.h"
#include "policy/profile.h"

namespace gofl::cli {
namespace {

// ---- plan ---------------------------------------------------------------------------------------

struct PlanLimits {
  std::vector<int> sizes;  // n, growing
  double min_flops;        // smaller points are skipped (the curve starts near the 1e6 threshold)
  double max_call_s;       // a size is skipped when the previous one predicts a longer call
  double target_s;         // repetitions: about this much time per point ...
  int min_reps, max_reps;  // ... within these bounds (one repetition for a call over target_s)
  double canary_wait_s;    // how long a point waits for a quiet machine before it goes ahead
  int max_remeasure;
  double pass_budget_s;    // a pass measures no new point after this long (see the loop)
};

PlanLimits limits(bool quick) {
  if (quick) return {{64, 128, 256, 512, 1024}, 2e5, 0.08, 0.08, 3, 5, 0.15, 1, 60};
  // Full: the sizes are finest around the CPU/GPU crossover (n = 256 ... 2048). Each pass stops
  // after 180 s, so that the whole run ends within about 7 minutes even on a slow machine; as the
  // sizes are measured in rounds (every operation at one size, then the next size), what the
  // budget cuts off is the largest sizes, whose speed the profile then takes as flat.
  return {{64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192}, 3e5, 0.6, 0.15, 3, 7, 1.0, 1, 180};
}

// ---- the canary ---------------------------------------------------------------------------------

double canary_once(int threads) {
  std::atomic<double> sink{0};
  auto job = [&sink] {
    double x = 1.0, y = 0.5;
    for (int i = 0; i < 300000; ++i) {  // about 0.3 ms of dependent arithmetic
      x = x * 1.0000001 + y;
      y = y * 0.9999999 - 1e-9 * x;
    }
    sink.store(x + y, std::memory_order_relaxed);
  };
  const double t0 = now_s();
  std::vector<std::thread> ts;
  for (int i = 1; i < threads; ++i) ts.emplace_back(job);
  job();
  for (auto& t : ts) t.join();
  return now_s() - t0;
}

struct Canary {
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  double normal = 1e9;  // the canary's time on the quiet machine: the median at the start
  static constexpr double kSlow = 1.5;
  static constexpr size_t kWindow = 31;
  std::vector<double> recent;  // the last kWindow measurements taken before and after points

  double measure() { return std::min(canary_once(threads), canary_once(threads)); }
  // The median, not the fastest: one lucky run would make every later one look slow.
  void calibrate() {
    for (int i = 0; i < 9; ++i) recent.push_back(measure());
    normal = median();
  }
  double median() const {
    std::vector<double> t = recent;
    std::nth_element(t.begin(), t.begin() + long(t.size() / 2), t.end());
    return t[t.size() / 2];
  }
  // Quiet: no slower than 1.5 x the median of the recent measurements. Recent, not the start's: a
  // multithreaded CPU library's threads keep spinning for a while after each of its calls, which slows the
  // canary down for the whole pass without anything else running (on the GPU test machine, an H200 with 16
  // cores, every point then waited in vain). What the canary catches is a change: another program taking
  // cores. Only the checks before and after a point join the window, never the polls while waiting, so an
  // episode of several seconds (about 15 points) does not become the new normal.
  bool quiet(bool record = true) {
    const double t = measure();
    const bool ok = t <= kSlow * median();
    if (record) {
      recent.push_back(t);
      if (recent.size() > kWindow) recent.erase(recent.begin());
    }
    return ok;
  }
  // Waits up to max_wait_s for a quiet machine; false when it stayed noisy.
  bool wait_quiet(double max_wait_s) {
    if (quiet()) return true;
    const double end = now_s() + max_wait_s;
    do {
      if (now_s() > end) return false;
      usleep(20000);
    } while (!quiet(false));
    return true;
  }
};

// ---- the routines -------------------------------------------------------------------------------

// Every GPU-capable operation with a calibration coefficient in the table (ops/operations.py), in op id
// order.
struct Item {
  const char* routine;  // "gemm", "heevd"
  const char* problem;  // the problem prep() sets up: the routine, or for LAPACK its family ("syevd" for heevd)
  char p;
  std::string op;       // "dgemm"
  int op_id;
};

std::vector<Item> all_items() {
  std::vector<Item> v;
  for (int id = 0; id < GOFL_N_OPS; ++id) {
    const gofl_op_info& o = gofl_ops[id];
    if (!o.gpu_capable) continue;
    if (o.kind == GOFL_KIND_FFT) {  // an n x n transform (calibrate/fft_problem.h)
      v.push_back({o.routine, o.routine, o.precision, o.name, id});
      continue;
    }
    if (!(o.calib_n3 > 0)) continue;
    // The Hermitian BLAS take real scalars where the symmetric ones take complex: their own problem.
    v.push_back({o.routine, o.kind == GOFL_KIND_LAPACK ? o.family : o.routine, o.precision, o.name, id});
  }
  return v;
}

// The calibration's n x n problem does work ~ n^3, or ~ n^2 for BLAS-2 (matrix times vector).
int problem_power(const Item& it) { return gofl_ops[it.op_id].kind == GOFL_KIND_BLAS2 ? 2 : 3; }

bool is_fft(const Item& it) { return gofl_ops[it.op_id].kind == GOFL_KIND_FFT; }

double plan_flops(const Item& it, int n) {
  if (is_fft(it)) return fft_flops(it.op_id, n);
  return gofl_ops[it.op_id].calib_n3 * std::pow(double(n), problem_power(it)) *
         ((it.p == 'c' || it.p == 'z') ? 4.0 : 1.0);
}

MatrixProblem prepare(const Item& it, int n, Rng& rng, bool gpu_pass) {
  if (is_fft(it)) {
    FftProblem f = fft_problem(it.op_id, n, gpu_pass);
    return MatrixProblem{f.restore, f.call};
  }
  void* fn = exported_fn(it.p, it.routine);
  if (!fn) return MatrixProblem{};
  return matrix_problem(it.p, it.problem, fn, n, rng);
}

// ---- progress -----------------------------------------------------------------------------------

struct Progress {
  bool tty = isatty(STDERR_FILENO);
  std::string pass;
  double start = now_s();
  double last_line = 0;
  int last_pct = -10;

  static std::string clock(double s) {
    char b[32];
    if (s < 60) snprintf(b, sizeof b, "%.0fs", s);
    else snprintf(b, sizeof b, "%dm%02ds", int(s) / 60, int(s) % 60);
    return b;
  }
  void show(double frac, const std::string& what, double left_s) {
    frac = std::clamp(frac, 0.0, 1.0);
    const int pct = int(frac * 100);
    if (tty) {
      const int width = 24, filled = int(frac * width);
      fprintf(stderr, "\r  %s [%s%s] %3d%%  %-22s  ~%s left   ", pass.c_str(), std::string(filled, '#').c_str(),
              std::string(width - filled, '.').c_str(), pct, what.c_str(), clock(left_s).c_str());
      fflush(stderr);
    } else if (pct >= last_pct + 10 || now_s() - last_line > 30) {
      fprintf(stderr, "  %s %3d%%  %s, ~%s left\n", pass.c_str(), pct, what.c_str(), clock(left_s).c_str());
      last_pct = pct;
      last_line = now_s();
    }
  }
  void done() {
    if (tty) fprintf(stderr, "\r  %s [%s] 100%%  done in %s%-30s\n", pass.c_str(), std::string(24, '#').c_str(),
                     clock(now_s() - start).c_str(), "");
    else fprintf(stderr, "  %s 100%%  done in %s\n", pass.c_str(), clock(now_s() - start).c_str());
  }
};

}  // namespace

int calibrate_workload(const WorkloadOptions& o) {
  FILE* out = fopen(o.points_path.c_str(), "w");
  if (!out) throw Failure("cannot write " + o.points_path + ": " + strerror(errno));
  setvbuf(out, nullptr, _IOLBF, 0);
  fprintf(out, "workload %s %s\n", o.gpu ? "gpu" : "cpu", o.quick ? "quick" : "full");

  // The BLAS/LAPACK to calibrate, in the global scope so that the library's wrappers find it.
  std::string libs = o.blas;
  size_t pos = 0;
  int loaded = 0;
  while (pos <= libs.size()) {
    size_t colon = libs.find(':', pos);
    if (colon == std::string::npos) colon = libs.size();
    const std::string lib = libs.substr(pos, colon - pos);
    pos = colon + 1;
    if (lib.empty()) continue;
    if (dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      ++loaded;
      fprintf(out, "blas %s\n", lib.c_str());
    } else {
      fprintf(stderr, "gpu-offload: warning: cannot load %s: %s\n", lib.c_str(), dlerror());
    }
  }
  if (!loaded) throw Failure("no BLAS/LAPACK library could be loaded (" + o.blas + "); name one with --blas LIB");
  fft_load(out);  // FFTW for the FFT operations (skipped, "no symbol", where it is not installed)
  using last_call_fn = void (*)(int*, int*, int*);
  auto last_call = reinterpret_cast<last_call_fn>(dlsym(RTLD_DEFAULT, "gpu_offload_last_call"));
  if (!last_call) throw Failure("the calibration workload must run under libgpuoffload.so (LD_PRELOAD)");

  Rng rng;
  if (o.gpu) {
    // The start-up: the first call starts the GPU; the same call again costs what a call costs.
    void* dgemm = exported_fn('d', "gemm");
    if (!dgemm) throw Failure("the BLAS library has no dgemm_");
    MatrixProblem tiny = matrix_problem('d', "gemm", dgemm, 8, rng);
    // A child starts the GPU once first, so that the CUDA libraries (about a gigabyte) are in the
    // page cache, as they are for nearly every run: on the GPU test machine the first start after boot
    // took 1.1 s, a later one about 0.2-0.4 s. The child's trace records fall before every point.
    fflush(nullptr);
    if (const pid_t child = fork(); child == 0) {
      // Its messages (a GPU that cannot start) would repeat the parent's word for word.
      if (const int null_fd = open("/dev/null", O_WRONLY); null_fd >= 0) dup2(null_fd, STDERR_FILENO);
      tiny.restore();
      tiny.call();
      _exit(0);
    } else if (child > 0) {
      int st = 0;
      while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
      }
    }
    tiny.restore();
    const double t0 = now_s();
    tiny.call();
    const double first = now_s() - t0;
    int device = -1, reason = -1, status = 0;
    last_call(&device, &reason, &status);
    if (device != GOFL_DEV_GPU) {
      fprintf(out, "no_gpu %s\n", gofl_reason_name(reason));
      fclose(out);
      return 3;
    }
    double again = 1e9;
    for (int i = 0; i < 3; ++i) {
      tiny.restore();
      const double t1 = now_s();
      tiny.call();
      again = std::min(again, now_s() - t1);
    }
    fprintf(out, "startup_s %.6g\n", std::max(0.0, first - again));
  }

  PlanLimits lim = limits(o.quick);
  // GPU_OFFLOAD_CALIBRATE_PASS_MS: another time budget per pass (the tests: 1 ms; the FFT curves of
  // the built-in profile: 55 s).
  lim.pass_budget_s = 1e-3 * double(setting_long(SettingId::CALIBRATE_PASS_MS, long(lim.pass_budget_s * 1e3)));
  Canary canary;
  canary.calibrate();
  fprintf(out, "canary_s %.6g threads %d\n", canary.normal, canary.threads);

  // What to measure; the time it takes is predicted from the built-in profile, scaled by what the
  // points measured so far took against their prediction.
  std::vector<Item> items = all_items();
  if (!o.only.empty()) {
    const std::string list = "," + o.only + ",";
    std::vector<Item> chosen;
    for (const Item& it : items) {
      if (list.find("," + std::string(it.routine) + ",") != std::string::npos ||
          list.find("," + std::string(it.problem) + ",") != std::string::npos)
        chosen.push_back(it);
    }
    items = chosen;
  }
  const Model model(builtin_profile());
  auto predicted_call = [&](const Item& it, int n) {
    const double f = plan_flops(it, n);
    if (!o.gpu) return model.cpu_seconds(it.op_id, f);
    const double bytes = is_fft(it) ? fft_bytes(it.op_id, n)
                                    : double(n) * n * (it.p == 's' ? 4 : it.p == 'z' ? 16 : 8) * (problem_power(it) == 2 ? 1 : 2);
    return model.gpu_seconds(it.op_id, f, bytes, bytes);
  };
  auto point_cost = [&](double call_s) {
    const int reps = call_s >= lim.target_s ? 1 : std::clamp(int(ceil(lim.target_s / std::max(call_s, 1e-9))), lim.min_reps, lim.max_reps);
    return call_s * (reps + 1) + 4 * canary.normal + 0.002;
  };
  std::vector<std::vector<int>> plan(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    for (int n : lim.sizes)
      if (plan_flops(items[i], n) >= lim.min_flops) plan[i].push_back(n);
  double scale = 1.0, measured_s = 0, predicted_done_s = 0;
  // Per operation: the last size measured, and whether it has reached its largest size.
  struct State {
    double last_call_s = -1, last_flops = 0;
    int last_n = 0;
    bool done = false;
  };
  // The time a call of size n should take, from the previous size's measured call. On the CPU: that
  // call's time scaled by the work (speed only grows with size, so this bounds it). On the GPU a small
  // call is mostly fixed costs (launches, the copies' latency), and scaling it by the work stopped the
  // FFTs after their first size: there the model's time for n, scaled by what the previous size took
  // against the model's time for it.
  // Where the model cannot say (no curve: an infinite time), the work-scaled time stands; and a GPU
  // point never goes ahead when even that bound is 20 times the limit (as for a first size).
  auto next_call_s = [&](const Item& it, const State& s, int n, double f) {
    const double by_work = s.last_call_s * f / s.last_flops;
    if (!o.gpu) return by_work;
    const double before = predicted_call(it, s.last_n), after = predicted_call(it, n);
    if (!(before > 0 && after > 0 && std::isfinite(before) && std::isfinite(after))) return by_work;
    if (by_work > 20 * lim.max_call_s) return by_work;
    return after * s.last_call_s / before;
  };
  std::vector<State> st(items.size());
  // What is left after point (item, size index k) of the rounds: later items at size k, every
  // item at the larger sizes, each up to the call-time limit.
  auto remaining = [&](size_t item, size_t k) {
    double total = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      if (st[i].done) continue;
      for (size_t kk = (i <= item ? k + 1 : k); kk < plan[i].size(); ++kk) {
        const double t = predicted_call(items[i], plan[i][kk]) * scale;
        if (t > lim.max_call_s) break;
        total += point_cost(t);
      }
    }
    return total;
  };

  Progress progress;
  progress.pass = o.gpu ? "GPU pass" : "CPU pass";
  const double deadline = progress.start + lim.pass_budget_s;
  int noisy = 0, remeasured = 0, skipped = 0, out_of_time = 0;
  size_t rounds = 0;
  for (const auto& p : plan) rounds = std::max(rounds, p.size());
  for (size_t k = 0; k < rounds; ++k) {
    for (size_t i = 0; i < items.size(); ++i) {
      const Item& it = items[i];
      State& s = st[i];
      if (s.done || k >= plan[i].size()) continue;
      const int n = plan[i][k];
      const double f = plan_flops(it, n);
      // Grow while the previous size predicts a call within the limit (speed only grows with size).
      if ((s.last_call_s > 0 && !(next_call_s(it, s, n, f) <= lim.max_call_s)) ||
          (s.last_call_s < 0 && predicted_call(it, n) * scale > 20 * lim.max_call_s)) {
        s.done = true;
        continue;
      }
      // Out of time: this size and the larger ones stay unmeasured. Never in the first round:
      // every routine gets at least its smallest size.
      if (k > 0 && now_s() > deadline) {
        s.done = true;
        ++out_of_time;
        continue;
      }
      const double elapsed = now_s() - progress.start;
      const double left = std::min(remaining(i, k), std::max(0.0, deadline - now_s()));
      progress.show(elapsed / std::max(elapsed + left, 1e-9), it.op + " n=" + std::to_string(n), left);

      MatrixProblem pr = prepare(it, n, rng, o.gpu);
      if (!pr.call) {
        fprintf(out, "skip %s no symbol\n", it.op.c_str());
        ++skipped;
        s.done = true;
        continue;
      }
      const double t_point0 = now_s();
      uint64_t w0 = 0, w1 = 0;  // the accepted repetitions started inside [w0, w1]
      int reps = 0, bad_info = 0;
      double call_s = 0;
      for (int attempt = 0;; ++attempt) {
        if (!canary.wait_quiet(lim.canary_wait_s)) ++noisy;
        // On the GPU a size's first call also pays one-time costs (CUDA loads the kernels it uses
        // lazily; an FFT makes its cuFFT plan): an untimed call first, outside the point's window.
        if (o.gpu && attempt == 0) {
          pr.restore();
          pr.call();
        }
        // The first call sets the number of repetitions and warms caches and threads up; a call
        // longer than the time a point should take is measured once, by itself.
        pr.restore();
        const uint64_t first0 = clock_ns();
        int info = pr.call();
        const uint64_t first1 = clock_ns();
        call_s = double(first1 - first0) * 1e-9;
        bad_info = info != 0;
        if (call_s >= lim.target_s) {
          reps = 1;
          w0 = first0;
          w1 = first1;
        } else {
          reps = std::clamp(int(ceil(lim.target_s / std::max(call_s, 1e-9))), lim.min_reps, lim.max_reps);
          bad_info = 0;
          w0 = clock_ns();
          double fastest = 1e9;
          for (int r = 0; r < reps; ++r) {
            pr.restore();
            const double r0 = now_s();
            bad_info += pr.call() != 0;
            fastest = std::min(fastest, now_s() - r0);
          }
          w1 = clock_ns();
          // The next size is planned from a repetition, not from the first call: that one also
          // loads the GPU kernels the routine uses (CUDA loads them lazily), which made the first
          // calibration stop sgemm, zgemm and ssyevd on the GPU after their smallest size.
          call_s = fastest;
        }
        if (canary.quiet() || attempt >= lim.max_remeasure) break;
        ++remeasured;  // the machine got busy while this point ran: again
      }
      fprintf(out, "point %s %d %.6g %llu %llu %d %d\n", it.op.c_str(), n, f, (unsigned long long)w0,
              (unsigned long long)w1, reps, bad_info);
      measured_s += now_s() - t_point0;
      predicted_done_s += point_cost(predicted_call(it, n));
      if (predicted_done_s > 0) scale = std::clamp(measured_s / predicted_done_s, 0.01, 1000.0);
      s.last_call_s = call_s;
      s.last_flops = f;
      s.last_n = n;
    }
  }
  progress.done();
  fprintf(out, "noisy %d remeasured %d skipped %d\n", noisy, remeasured, skipped);
  fprintf(out, "out_of_time %d\n", out_of_time);
  fprintf(out, "end\n");
  fclose(out);
  return 0;
}

}  // namespace gofl::cli
