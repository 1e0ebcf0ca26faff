// The machine profile, the cost model and the --device auto decision (src/policy): hand-made
// profiles, hand-made calls, and a fake GPU whose readings the tests set.
#include <gtest/gtest.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>

#include "common/table.h"
#include "trace/codes.h"
#include "policy/auto_policy.h"
#include "policy/fit.h"
#include "policy/level.h"
#include "policy/model.h"
#include "policy/profile.h"
#include "policy/split.h"

using namespace gofl;

namespace {

int op(const char* name) {
  const int id = gofl_op_by_name(name);
  EXPECT_GE(id, 0) << name;
  return id;
}

Profile parse(const std::string& text) {
  Profile p;
  std::string err;
  EXPECT_TRUE(parse_profile(text, "test", &p, &err)) << err;
  return p;
}

std::string parse_error(const std::string& text) {
  Profile p;
  std::string err;
  EXPECT_FALSE(parse_profile(text, "bad.profile", &p, &err)) << "parsed:\n" << text;
  return err;
}

// Constant speeds, free copies unless given: the decision then sees exactly cpu/gpu speed ratios.
std::string flat_profile(double cpu_rate, double gpu_rate, double startup = 0.0, const std::string& copies =
                                                                                         "h2d 0 1e30\nd2h 0 1e30\n") {
  char b[512];
  snprintf(b, sizeof b,
           "gpu-offload profile 1\ngpu_startup_s %g\n%scpu dgemm 1e3:%g 1e15:%g\ngpu dgemm 1e3:%g 1e15:%g\n", startup,
           copies.c_str(), cpu_rate, cpu_rate, gpu_rate, gpu_rate);
  return b;
}

gofl_call make_call(const char* name, double flops, double bytes_in = 0, double bytes_out = 0) {
  gofl_call c{};
  c.op = uint16_t(op(name));
  c.flops = flops;
  if (bytes_in > 0) c.operands[c.n_operands++] = gofl_call_operand{nullptr, int64_t(bytes_in), 1, GOFL_IN, 0};
  if (bytes_out > 0) c.operands[c.n_operands++] = gofl_call_operand{nullptr, int64_t(bytes_out), 1, GOFL_OUT, 1};
  return c;
}

// A GPU whose state and readings the test sets; counts what the decision asked.
struct FakeGpu final : GpuEnv {
  bool is_started = false, is_unavailable = false, fail_start = false;
  int util = -1, support = GOFL_GPU_OK;
  bool memory_known = true;
  uint64_t free_b = uint64_t(1) << 40, total_b = uint64_t(1) << 40, need = 0;
  double t = 100.0;
  int starts = 0, util_reads = 0, asked_started_gpu = 0;

  // A start beside the calls (start_ahead) when start_takes >= 0: it ends start_takes seconds of the
  // clock after it began; start() then waits for it (moves the clock to its end).
  double start_takes = -1, start_ends = 0;
  bool in_start = false;
  int waits = 0;

  bool started() override {
    if (in_start && t >= start_ends) {
      in_start = false;
      (fail_start ? is_unavailable : is_started) = true;
    }
    return is_started;
  }
  bool unavailable() override {
    started();
    return is_unavailable;
  }
  bool start_ahead(const gofl_call& first) override {
    if (start_takes < 0) return start(first);
    ++starts;
    in_start = true;
    start_ends = t + start_takes;
    return true;
  }
  bool start(const gofl_call&) override {
    if (in_start) {
      ++waits;
      t = std::max(t, start_ends);
      return started();
    }
    ++starts;
    if (fail_start) {
      is_unavailable = true;
      return false;
    }
    is_started = true;
    return true;
  }
  int utilization() override {  // NVML: allowed before the start (it loads no CUDA library)
    ++util_reads;
    return util;
  }
  bool memory(uint64_t* f, uint64_t* tot) override {
    if (!is_started) ++asked_started_gpu;
    *f = free_b;
    *tot = total_b;
    return memory_known;
  }
  double now() override { return t; }
  std::vector<int> warmed;  // the operations warm() was asked for, in order
  std::vector<int64_t> warmed_n;  // and the size of each ask
  void warm(int op, int64_t n) override {
    if (!is_started) ++asked_started_gpu;
    warmed.push_back(op);
    warmed_n.push_back(n);
  }

 protected:
  // As the library's: a plan only from a running backend (asked before the start: counted as wrong).
  bool make_plan(const gofl_call&, gofl_plan* p) override {
    if (!is_started) {
      ++asked_started_gpu;
      return false;
    }
    *p = gofl_plan{};
    p->planned = 1;
    p->status = support;
    p->split_status = GOFL_GPU_UNSUPPORTED;
    p->device_bytes = need;
    return true;
  }
};

// Runs one call through decide() and observe() as the library does, `seconds` on its device.
int run(AutoPolicy& p, FakeGpu& g, gofl_call c, double seconds = -1) {
  p.decide(c, g);
  if (seconds < 0) seconds = c.device == GOFL_DEV_GPU ? c.pred_gpu_s : c.pred_cpu_s;
  g.t += seconds;
  p.observe(c, seconds, g.t);
  return c.reason;
}

}  // namespace

// ---- the profile ------------------------------------------------------------------------------

TEST(Profile, BuiltInParsesAndIsTheCalibratedOne) {
  const Profile& p = builtin_profile();
  EXPECT_EQ(p.name, "built-in");
  EXPECT_FALSE(p.provisional);  // written by gpu-offload calibrate on the GPU test machine
  EXPECT_NE(p.source.find("gpu-offload calibrate"), std::string::npos);
  EXPECT_FALSE(p.curves[kCpu][op("dgemm")].empty());
  EXPECT_FALSE(p.curves[kGpu][op("dgemm")].empty());
  EXPECT_GT(p.gpu_startup_s, 0.1);
  EXPECT_GT(p.h2d.bytes_per_s, 1e10);
  EXPECT_GT(p.d2h.bytes_per_s, 1e10);
  EXPECT_EQ(profile_label(p), "built-in");
  // The text is the one compiled in, readable.
  EXPECT_EQ(std::string(builtin_profile_text()).rfind("gpu-offload profile 1\n", 0), 0u);
}

TEST(Profile, BuiltInPredictsTheMeasuredH200Numbers) {
  Model m(builtin_profile());
  const int dgemm = op("dgemm");
  const double n = 4096, f = 2 * n * n * n, mat = n * n * 8;
  // Measured on the GPU test machine (H200, 16-core host; bench/numpy_bench.py): NumPy float64
  // a @ b at n = 4096 took 0.22-0.23 s on the CPU (16 OpenBLAS threads) and 13.5-13.8 ms in the
  // dgemm call under --device gpu (A and B in, C out).
  EXPECT_NEAR(m.cpu_seconds(dgemm, f), 0.25, 0.05);
  EXPECT_NEAR(m.gpu_seconds(dgemm, f, 2 * mat, mat), 0.0135, 0.004);
  // n = 8192, dgemm_ from a C program (bench/nvblas_bench.sh): 1.71 s on the CPU. The calibration
  // measured the CPU up to n = 4096 within its time budget and holds the speed flat beyond, so it
  // predicts about 15% more: pessimistic for the CPU, where the GPU is 30x faster anyway.
  EXPECT_GT(m.cpu_seconds(dgemm, 8 * f), 1.71 * 0.9);
  EXPECT_LT(m.cpu_seconds(dgemm, 8 * f), 1.71 * 1.35);
}

// BLAS-2 reads each matrix element once: the built-in profile's curves for it (estimated by hand
// until calibrate measures them) make the CPU memory-bound, the GPU's computation fast, and keep a
// gemv whose matrix must be copied in on every call on the CPU.
TEST(Profile, BuiltInBlas2IsMemoryBound) {
  Model m(builtin_profile());
  for (const char* name : {"sgemv", "dgemv", "cgemv", "zgemv", "ssymv", "dsymv", "chemv", "zhemv", "strsv", "dtrsv",
                           "ctrsv", "ztrsv"})
    for (int d : {kCpu, kGpu}) EXPECT_EQ(m.explain(d, op(name)), "curve") << name << " on " << d;
  const double n = 8192, f = 2 * n * n, mat = n * n * 8, vec = n * 8;
  const int dgemv = op("dgemv");
  EXPECT_NEAR(m.cpu_seconds(dgemv, f), mat / 60e9, 0.1 * mat / 60e9);  // 60 GB/s
  EXPECT_NEAR(m.gpu_compute_seconds(dgemv, f), 10e-6 + mat / 3e12, 0.1 * mat / 3e12);  // 3 TB/s
  EXPECT_GT(m.gpu_seconds(dgemv, f, mat + 2 * vec, vec), m.cpu_seconds(dgemv, f));
  // Against gemm's speed (the fallback without these curves) the CPU would seem 30x faster.
  EXPECT_GT(m.cpu_seconds(dgemv, f), 20 * m.cpu_seconds(op("dgemm"), f));
}

TEST(Profile, RoundTripsThroughTheWriter) {
  Profile p = builtin_profile();
  p.name = "x";
  const std::string text = format_profile(p, {"written by a test"});
  Profile q;
  std::string err;
  ASSERT_TRUE(parse_profile(text, "again", &q, &err)) << err << "\n" << text;
  EXPECT_EQ(q.provisional, p.provisional);
  EXPECT_EQ(q.source, p.source);
  EXPECT_NEAR(q.gpu_startup_s, p.gpu_startup_s, 1e-9);
  EXPECT_NEAR(q.d2h.bytes_per_s / p.d2h.bytes_per_s, 1.0, 1e-3);
  for (int d = 0; d < 2; ++d)
    for (int i = 0; i < GOFL_N_OPS; ++i) {
      ASSERT_EQ(q.curves[d][i].points.size(), p.curves[d][i].points.size()) << gofl_ops[i].name;
      for (size_t k = 0; k < p.curves[d][i].points.size(); ++k)
        EXPECT_NEAR(q.curves[d][i].points[k].second / p.curves[d][i].points[k].second, 1.0, 1e-3);
    }
  EXPECT_EQ(q.efficiency[kCpu], p.efficiency[kCpu]);
  EXPECT_EQ(q.precision[kGpu].size(), p.precision[kGpu].size());
}

TEST(Profile, MalformedProfilesNameTheLine) {
  const std::string head = "gpu-offload profile 1\ngpu_startup_s 0.3\nh2d 1e-5 4e10\nd2h 1e-5 1e10\n";
  const std::string gemms = "cpu dgemm 1e6:1e10\ngpu dgemm 1e6:1e11\n";
  struct Case {
    std::string text, expect;
  };
  const Case cases[] = {
      {"# comment\n\nnot a profile\n", "bad.profile line 3: not a gpu-offload profile"},
      {"gpu-offload profile 2\n", "line 1: profile format version 2 is not the one this gpu-offload reads (1)"},
      {"gpu-offload profile one\n", "line 1: the format version 'one' is not a whole number"},
      {head + gemms + "cpu dgemn 1e6:1e9\n", "line 7: unknown operation 'dgemn'"},
      {head + gemms + "cpu dpotrf 1e6:1e9 1e6:2e9\n", "line 7: '1e6:2e9': the work must increase"},
      {head + gemms + "gpu dpotrf 1e6;1e9\n", "line 7: '1e6;1e9' is not a FLOPS:RATE point"},
      {head + gemms + "gpu dpotrf 1e6:-1\n", "line 7: '1e6:-1': work and speed must be > 0"},
      {head + gemms + "cpu dgemm 1e7:1e9\n", "line 7: a second cpu curve for dgemm (the first is on line 5)"},
      {head + gemms + "bandwidth 3\n", "line 7: unknown entry 'bandwidth'"},
      {head + gemms + "h2d 1e-5\n", "line 7: h2d takes two numbers"},
      {head + gemms + "d2h 0 0\n", "line 7: d2h: the bandwidth must be > 0"},
      {head + gemms + "gpu_startup_s -1\n", "line 7: gpu_startup_s takes one number of seconds >= 0"},
      {head + gemms + "efficiency cpu potrfx 0.5\n", "line 7: unknown routine 'potrfx'"},
      {head + gemms + "efficiency tpu potrf 0.5\n", "line 7: efficiency takes cpu or gpu"},
      {head + gemms + "precision gpu q 0.5\n", "line 7: unknown precision 'q'"},
      {head + gemms + "provisional maybe\n", "line 7: provisional takes yes or no"},
      {head + "cpu dgemm 1e6:1e10   # no gpu gemm\n", "bad.profile: no gpu gemm curve"},
      {"gpu-offload profile 1\nh2d 0 1\nd2h 0 1\n" + gemms, "bad.profile: gpu_startup_s is missing"},
      {"", "bad.profile: empty"},
  };
  for (const Case& c : cases) {
    const std::string err = parse_error(c.text);
    EXPECT_NE(err.find(c.expect), std::string::npos) << "expected: " << c.expect << "\ngot: " << err;
  }
}

namespace {
std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* n) {
  auto it = g_env.find(n);
  return it == g_env.end() ? nullptr : it->second.c_str();
}
std::string temp_dir() {
  char tmpl[] = "/tmp/gofl-profile-XXXXXX";
  EXPECT_NE(mkdtemp(tmpl), nullptr);
  return tmpl;
}
void write_file(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  fputs(text.c_str(), f);
  fclose(f);
}
}  // namespace

TEST(Profile, PerUserLocation) {
  g_env = {{"XDG_CONFIG_HOME", "/x/cfg"}, {"HOME", "/home/u"}};
  EXPECT_EQ(user_profile_path(fake_getenv), "/x/cfg/gpu-offload/profile");
  g_env = {{"HOME", "/home/u"}};
  EXPECT_EQ(user_profile_path(fake_getenv), "/home/u/.config/gpu-offload/profile");
  g_env = {{"XDG_CONFIG_HOME", "relative"}, {"HOME", "/home/u"}};  // XDG: only absolute paths count
  EXPECT_EQ(user_profile_path(fake_getenv), "/home/u/.config/gpu-offload/profile");
  g_env = {};
  EXPECT_EQ(user_profile_path(fake_getenv), "");
}

TEST(Profile, LoadingFallsBackToTheBuiltInAndSaysWhichLine) {
  const std::string dir = temp_dir();
  g_env = {{"XDG_CONFIG_HOME", dir}};
  std::string msg;
  // No per-user file: the built-in one, silently.
  EXPECT_EQ(load_profile("", fake_getenv, &msg).name, "built-in");
  EXPECT_EQ(msg, "");
  // A good per-user file is used.
  mkdir((dir + "/gpu-offload").c_str(), 0700);
  write_file(dir + "/gpu-offload/profile", flat_profile(1e10, 1e11, 0.2));
  Profile p = load_profile("", fake_getenv, &msg);
  EXPECT_EQ(p.name, dir + "/gpu-offload/profile");
  EXPECT_DOUBLE_EQ(p.gpu_startup_s, 0.2);
  EXPECT_EQ(msg, "");
  // A malformed one: the built-in profile, and a message naming the file and line.
  write_file(dir + "/gpu-offload/profile", "gpu-offload profile 1\ngpu_startup_s 0.2\nh2d 0 x\n");
  p = load_profile("", fake_getenv, &msg);
  EXPECT_EQ(p.name, "built-in");
  EXPECT_NE(msg.find(dir + "/gpu-offload/profile line 3: h2d takes two numbers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("using the built-in profile"), std::string::npos) << msg;
  // An explicit path wins over the per-user file; a missing one is reported.
  write_file(dir + "/mine", flat_profile(1e10, 1e11, 0.7));
  msg.clear();
  EXPECT_DOUBLE_EQ(load_profile(dir + "/mine", fake_getenv, &msg).gpu_startup_s, 0.7);
  EXPECT_EQ(msg, "");
  EXPECT_EQ(load_profile(dir + "/missing", fake_getenv, &msg).name, "built-in");
  EXPECT_NE(msg.find("cannot read the profile " + dir + "/missing"), std::string::npos) << msg;
}

// ---- the model --------------------------------------------------------------------------------

TEST(Model, InterpolatesInLogLogSpaceAndIsFlatOutside) {
  SpeedCurve c;
  c.points = {{1e6, 1e9}, {1e8, 1e11}, {1e10, 4e11}};
  EXPECT_DOUBLE_EQ(c.at(1e6), 1e9);
  EXPECT_DOUBLE_EQ(c.at(1e8), 1e11);
  EXPECT_NEAR(c.at(1e7), 1e10, 1e10 * 1e-12);    // halfway in log work: geometric mean of speeds
  EXPECT_NEAR(c.at(1e9), 2e11, 2e11 * 1e-12);
  EXPECT_NEAR(c.at(1e6 * pow(100, 0.25)), 1e9 * pow(100, 0.25), 1e-3);  // a power law is exact
  EXPECT_DOUBLE_EQ(c.at(10), 1e9);      // held flat below the calibrated range
  EXPECT_DOUBLE_EQ(c.at(1e15), 4e11);   // and above it
  SpeedCurve one;
  one.points = {{1e6, 5e9}};
  EXPECT_DOUBLE_EQ(one.at(1), 5e9);
  EXPECT_DOUBLE_EQ(one.at(1e12), 5e9);
  EXPECT_EQ(SpeedCurve().at(1e6), 0.0);
}

TEST(Model, TimesFollowTheSpecFormula) {
  Profile p = parse(
      "gpu-offload profile 1\ngpu_startup_s 0.3\nh2d 1e-5 4e10\nd2h 2e-5 1e10\n"
      "cpu dgemm 1e6:1e10 1e12:1e12\ngpu dgemm 1e6:1e11 1e12:1e13\n");
  Model m(p);
  const int dgemm = op("dgemm");
  const double f = 1e9;  // halfway: cpu 1e11, gpu 1e12
  EXPECT_NEAR(m.cpu_seconds(dgemm, f), f / 1e11, 1e-12);
  const double in = 8e6, out = 3e6;
  EXPECT_NEAR(m.gpu_seconds(dgemm, f, in, out), 1e-5 + in / 4e10 + f / 1e12 + 2e-5 + out / 1e10, 1e-12);
  EXPECT_NEAR(m.gpu_compute_seconds(dgemm, f), f / 1e12, 1e-12);
}

// One call over G GPUs: copies over G links, the work shared, the other GPUs' start paid once.
TEST(Split, SecondsFollowTheRule) {
  Profile p = parse(
      "gpu-offload profile 1\ngpu_startup_s 0.3\nsplit_startup_s 0.05\nh2d 1e-5 4e10\nd2h 2e-5 1e10\n"
      "cpu dgemm 1e6:1e10 1e12:1e12\ngpu dgemm 1e6:1e11 1e12:1e13\n");
  EXPECT_NEAR(p.split_startup_s, 0.05, 1e-12);
  Model m(p);
  const int dgemm = op("dgemm");
  const double f = 1e9, in = 8e6, out = 3e6;
  for (int g : {1, 2, 3, 8}) {
    const double shared = 1e-5 + in / (g * 4e10) + f / (g * 1e12) + 2e-5 + out / (g * 1e10);
    EXPECT_NEAR(split_seconds(m, dgemm, f, in, out, g, true), shared, 1e-12) << g;
    EXPECT_NEAR(split_seconds(m, dgemm, f, in, out, g, false), shared + (g - 1) * 0.05, 1e-12) << g;
  }
  // Without split_startup_s, each extra GPU costs a context start (gpu_startup_s).
  Profile q = parse("gpu-offload profile 1\ngpu_startup_s 0.3\nh2d 0 1e30\nd2h 0 1e30\n"
                    "cpu dgemm 1e3:1e10 1e15:1e10\ngpu dgemm 1e3:1e12 1e15:1e12\n");
  EXPECT_LT(q.split_startup_s, 0);
  EXPECT_NEAR(split_seconds(Model(q), dgemm, 1e12, 0, 0, 4, false), 0.25 + 3 * 0.3, 1e-9);
}

TEST(Split, PaysOnlyWithSeveralGpusAndEnoughWork) {
  Profile p = parse(flat_profile(1e10, 1e12, 0.3, "h2d 1e-5 5e10\nd2h 1e-5 5e10\n"));
  Model m(p);
  const int dgemm = op("dgemm");
  const double n = 32768, f = 2 * n * n * n, bytes = 8 * n * n;
  // One usable GPU: never, however large the call.
  EXPECT_FALSE(split_pays(m, dgemm, f, 2 * bytes, bytes, 1, true));
  EXPECT_FALSE(split_pays(m, dgemm, f, 2 * bytes, bytes, 0, true));
  // Two: a large product pays, the engines' start included; a small one does not pay their start.
  EXPECT_TRUE(split_pays(m, dgemm, f, 2 * bytes, bytes, 2, false));
  EXPECT_TRUE(split_pays(m, dgemm, f, 2 * bytes, bytes, 8, true));
  const double s = 1024, fs = 2 * s * s * s, bs = 8 * s * s;
  EXPECT_FALSE(split_pays(m, dgemm, fs, 2 * bs, bs, 2, false));
  // Once started, only the fixed copy costs are not shared: a call needs little work to pay.
  EXPECT_TRUE(split_pays(m, dgemm, fs, 2 * bs, bs, 2, true));
}

// A curve measured on G GPUs replaces the formula for that operation and count.
TEST(Split, AMeasuredCurveReplacesTheFormula) {
  Profile p = parse("gpu-offload profile 1\ngpu_startup_s 0.3\nsplit_startup_s 0.1\nh2d 0 1e30\nd2h 0 1e30\n"
                    "cpu dgemm 1e3:1e10 1e15:1e10\ngpu dgemm 1e3:1e12 1e15:1e12\n"
                    "split dgemm 2 1e9:5e11 1e13:1.5e12\n");
  ASSERT_EQ(p.split_curves.size(), 1u);
  Model m(p);
  const int dgemm = op("dgemm"), dgetrf = op("dgetrf");
  EXPECT_NEAR(split_seconds(m, dgemm, 1e13, 0, 0, 2, true), 1e13 / 1.5e12, 1e-9);
  EXPECT_NEAR(split_seconds(m, dgemm, 1e13, 0, 0, 2, false), 1e13 / 1.5e12 + 0.1, 1e-9);
  EXPECT_NEAR(split_seconds(m, dgemm, 1e9, 0, 0, 2, true), 1e9 / 5e11, 1e-12);  // slower than one GPU: not split
  EXPECT_FALSE(split_pays(m, dgemm, 1e9, 0, 0, 2, true));
  EXPECT_TRUE(split_pays(m, dgemm, 1e13, 0, 0, 2, true));
  // Another count, another operation: the formula.
  EXPECT_NEAR(split_seconds(m, dgemm, 1e12, 0, 0, 4, true), 1e12 / 4e12, 1e-9);
  EXPECT_GT(split_seconds(m, dgetrf, 1e12, 0, 0, 2, true), 0);
  // The writer keeps it; a malformed line is named.
  EXPECT_EQ(parse(format_profile(p)).split_curves.at({dgemm, 2}).points.size(), 2u);
  EXPECT_NE(parse_error("gpu-offload profile 1\ngpu_startup_s 0.3\nsplit dgemm 0 1e9:1e11\n")
                .find("line 3: split takes an operation, a number of GPUs and at least one FLOPS:RATE point"),
            std::string::npos);
  EXPECT_NE(parse_error("gpu-offload profile 1\ngpu_startup_s 0.3\nsplit dgemm 2 1e9:1e11\nsplit dgemm 2 1e9:1e11\n")
                .find("line 4: a second split curve for dgemm on 2 GPUs"),
            std::string::npos);
}

TEST(Split, TheProfileKeepsItsStartCostAndOldProfilesStayReadable) {
  Profile p = parse("gpu-offload profile 1\ngpu_startup_s 0.3\nsplit_startup_s 0.125\nh2d 0 1e30\nd2h 0 1e30\n"
                    "cpu dgemm 1e3:1e10 1e15:1e10\ngpu dgemm 1e3:1e12 1e15:1e12\n");
  Profile q = parse(format_profile(p));
  EXPECT_NEAR(q.split_startup_s, 0.125, 1e-12);
  EXPECT_EQ(format_profile(parse(flat_profile(1e10, 1e12))).find("split_startup_s"), std::string::npos);
  EXPECT_NE(parse_error("gpu-offload profile 1\ngpu_startup_s 0.3\nsplit_startup_s -2\n").find(
                "line 3: split_startup_s takes one number of seconds >= 0"),
            std::string::npos);
}

TEST(Model, BytesComeFromTheOperandRoles) {
  gofl_call c{};
  c.n_operands = 3;
  c.operands[0] = gofl_call_operand{nullptr, 100, 8, GOFL_IN, 0};
  c.operands[1] = gofl_call_operand{nullptr, 10, 4, GOFL_INOUT, 1};
  c.operands[2] = gofl_call_operand{nullptr, 7, 16, GOFL_OUT, 2};
  const CallBytes b = call_bytes(c);
  EXPECT_DOUBLE_EQ(b.in, 800 + 40);
  EXPECT_DOUBLE_EQ(b.out, 40 + 112);
}

// The table's facts the model and the calibration read: a family is a routine of the table in the
// same precisions' kind, and every operation the GPU runs can be calibrated, itself or through the
// family whose measurements it borrows (geevx through geev).
TEST(Model, TheTableNamesFamiliesAndCalibrationWork) {
  for (int op = 0; op < GOFL_N_OPS; ++op) {
    const gofl_op_info& o = gofl_ops[op];
    bool found = false;
    for (int other = 0; other < GOFL_N_OPS; ++other)
      found |= strcmp(gofl_ops[other].routine, o.family) == 0 && gofl_ops[other].kind == o.kind;
    EXPECT_TRUE(found) << o.name << " family " << o.family;
    if (o.gpu_capable && o.kind != GOFL_KIND_FFT) {  // FFTs have calibrate's FFT pass instead
      double calib = o.calib_n3;
      for (int other = 0; other < GOFL_N_OPS; ++other)
        if (strcmp(gofl_ops[other].routine, o.family) == 0 && gofl_ops[other].precision == o.precision)
          calib = std::max(calib, gofl_ops[other].calib_n3);
      EXPECT_GT(calib, 0) << o.name;
    }
  }
  EXPECT_STREQ(gofl_ops[OP_zhemm].family, "symm");
  EXPECT_STREQ(gofl_ops[OP_cungqr].family, "orgqr");
  EXPECT_STREQ(gofl_ops[OP_dgemm].family, "gemm");
  EXPECT_STREQ(gofl_ops[OP_dgeevx].family, "geev");
  EXPECT_DOUBLE_EQ(gofl_ops[OP_sgetrf].calib_n3, 2.0 / 3);
}

TEST(Model, OperationsWithoutACurveFallBack) {
  Profile p = parse(
      "gpu-offload profile 1\ngpu_startup_s 0.3\nh2d 0 1e10\nd2h 0 1e10\n"
      "cpu dgemm 1e6:1e10 1e10:1e11\n"
      "cpu zgemm 1e6:2e10 1e10:1e11\n"
      "gpu dgemm 1e6:1e11\n"
      "cpu dpotrf 1e6:5e9 1e10:5e10\n"
      "gpu dpotrf 1e6:3e10\n"
      "efficiency cpu getrf 0.5\n"
      "efficiency gpu syevd 0.1\n"
      "precision gpu s 2\n"
      "precision cpu s 3\n");
  Model m(p);
  const double f = 1e6;
  // Its own curve.
  EXPECT_DOUBLE_EQ(m.speed(kCpu, op("dpotrf"), f), 5e9);
  EXPECT_EQ(m.explain(kCpu, op("dpotrf")), "curve");
  // Same routine, other precision, scaled by the two gemm curves at that work.
  EXPECT_DOUBLE_EQ(m.speed(kCpu, op("zpotrf"), f), 5e9 * 2e10 / 1e10);
  EXPECT_NEAR(m.speed(kCpu, op("zpotrf"), 1e10), 5e10 * 1e11 / 1e11, 1);
  EXPECT_EQ(m.explain(kCpu, op("zpotrf")), "dpotrf x zgemm/dgemm");
  // ... or by the precision factors when a gemm curve is missing (no sgemm curve).
  EXPECT_DOUBLE_EQ(m.speed(kGpu, op("spotrf"), f), 3e10 * 2.0);
  EXPECT_DOUBLE_EQ(m.speed(kCpu, op("sgemm"), f), 1e10 * 3.0);
  EXPECT_EQ(m.explain(kGpu, op("spotrf")), "dpotrf x 2");
  // Gemm of the precision times the routine's efficiency.
  EXPECT_DOUBLE_EQ(m.speed(kCpu, op("dgetrf"), f), 1e10 * 0.5);
  EXPECT_EQ(m.explain(kCpu, op("dgetrf")), "dgemm x 0.5");
  // Hermitian routines count as symmetric ones; gemm resolved first (zgemm on the GPU from dgemm).
  EXPECT_DOUBLE_EQ(m.speed(kGpu, op("zheevd"), f), 1e11 * 1.0 * 0.1);
  EXPECT_DOUBLE_EQ(m.speed(kGpu, op("dsyevd"), f), 1e11 * 0.1);
  // No efficiency given: gemm speed as is.
  EXPECT_DOUBLE_EQ(m.speed(kCpu, op("dgesdd"), f), 1e10);
  // Every GPU-capable operation gets a finite prediction from the built-in profile.
  Model b(builtin_profile());
  for (int i = 0; i < GOFL_N_OPS; ++i) {
    if (!gofl_ops[i].gpu_capable) continue;
    EXPECT_TRUE(std::isfinite(b.cpu_seconds(i, 1e9)) && b.cpu_seconds(i, 1e9) > 0) << gofl_ops[i].name;
    EXPECT_TRUE(std::isfinite(b.gpu_seconds(i, 1e9, 1e6, 1e6))) << gofl_ops[i].name;
  }
}

// ---- the decision -----------------------------------------------------------------------------

TEST(Decision, BelowTheThresholdNothingIsAsked) {
  AutoPolicy p(parse(flat_profile(1e10, 1e12)), PolicyConfig{});
  FakeGpu g;
  gofl_call c = make_call("dgemm", 999999);
  p.decide(c, g);
  EXPECT_EQ(c.reason, GOFL_R_BELOW_THRESHOLD);
  EXPECT_EQ(c.device, GOFL_DEV_CPU);
  EXPECT_EQ(c.pred_cpu_s, 0.0f);
  EXPECT_EQ(g.starts + g.util_reads + g.asked_started_gpu, 0);
  gofl_call d = make_call("dgemm", 1e6);
  p.decide(d, g);
  EXPECT_NE(d.reason, GOFL_R_BELOW_THRESHOLD);
  EXPECT_GT(d.pred_cpu_s, 0.0f);
}

TEST(Decision, PredictionsAreStoredInTheCall) {
  AutoPolicy p(parse("gpu-offload profile 1\ngpu_startup_s 0\nh2d 1e-5 1e10\nd2h 1e-5 1e10\n"
                     "cpu dgemm 1e6:1e10\ngpu dgemm 1e6:1e12\n"),
               PolicyConfig{});
  FakeGpu g;
  gofl_call c = make_call("dgemm", 1e9, 1e8, 1e7);
  p.decide(c, g);
  EXPECT_FLOAT_EQ(c.pred_cpu_s, 0.1f);
  EXPECT_FLOAT_EQ(c.pred_gpu_s, float(1e-5 + 1e-2 + 1e-3 + 1e-5 + 1e-3));
}

namespace {
// A started GPU and an operation already seen on the CPU: the next worthwhile call is offloaded
// unless a gate says otherwise.
struct Started {
  AutoPolicy p;
  FakeGpu g;
  explicit Started(int level, double memory_reserve = -1, const std::string& profile = flat_profile(1e10, 1e12))
      : p(parse(profile), PolicyConfig{level, 1e6, memory_reserve}) {
    g.is_unavailable = true;  // not started: the first call runs on the CPU and is observed there
    run(p, g, make_call("dgemm", 1e9));
    g.is_unavailable = false;
    g.is_started = true;
  }
  int next() { return run(p, g, make_call("dgemm", 1e9)); }
};
}  // namespace

TEST(Decision, EachLevelRequiresItsSpeedup) {
  for (int level = 1; level <= 10; ++level) {
    const double required = level_row(level).required_speedup;
    Started above(level, -1, flat_profile(1e10, 1e10 * required * 1.01));
    EXPECT_EQ(above.next(), GOFL_R_OFFLOADED) << "level " << level;
    Started below(level, -1, flat_profile(1e10, 1e10 * required * 0.99));
    EXPECT_EQ(below.next(), GOFL_R_PREDICTED_SLOWER) << "level " << level;
  }
}

TEST(Decision, TheLevelTableIsTheSpecs) {
  const double speedup[] = {3.0, 2.5, 2.0, 1.6, 1.3, 1.2, 1.1, 1.05, 1.0, 0.9};
  const double busy[] = {0.30, 0.37, 0.44, 0.52, 0.59, 0.66, 0.73, 0.81, 0.88, 0.95};
  const double reserve[] = {0.50, 0.45, 0.40, 0.35, 0.30, 0.25, 0.20, 0.15, 0.10, 0.05};
  const double start[] = {3.0, 2.75, 2.5, 2.25, 2.0, 1.75, 1.5, 1.25, 1.0, 0.75};
  for (int l = 1; l <= 10; ++l) {
    EXPECT_DOUBLE_EQ(level_row(l).required_speedup, speedup[l - 1]);
    EXPECT_DOUBLE_EQ(level_row(l).busy_limit, busy[l - 1]);
    EXPECT_DOUBLE_EQ(level_row(l).memory_reserve, reserve[l - 1]);
    EXPECT_DOUBLE_EQ(level_row(l).start_factor, start[l - 1]);
  }
}

TEST(Decision, OtherProgramsLoadBeyondTheLevelsLimitKeepsCallsOnTheCpu) {
  for (int level = 1; level <= 10; ++level) {
    const int limit = int(lround(level_row(level).busy_limit * 100));
    Started s(level);
    s.g.util = limit;  // at the limit: fine
    EXPECT_EQ(s.next(), GOFL_R_OFFLOADED) << level;
    s.g.t += 5;  // idle long enough for the reading to count
    s.g.util = limit + 1;
    EXPECT_EQ(s.next(), GOFL_R_GPU_BUSY) << level;
    s.g.util = -1;  // unknown: no objection
    s.g.t += 1;
    EXPECT_EQ(s.next(), GOFL_R_OFFLOADED) << level;
  }
}

TEST(Decision, UtilisationIsReadOnlyAfterASecondWithoutOwnGpuWork) {
  Started s(5);
  s.g.util = 100;       // our own work would show up here
  s.g.t += 10;
  EXPECT_EQ(s.next(), GOFL_R_GPU_BUSY);
  EXPECT_EQ(s.g.util_reads, 1);
  s.g.util = 0;
  s.g.t += 10;
  EXPECT_EQ(s.next(), GOFL_R_OFFLOADED);  // our GPU call ends at g.t
  EXPECT_EQ(s.g.util_reads, 2);
  s.g.util = 100;
  for (int i = 0; i < 5; ++i) {
    s.g.t += 0.1;  // within a second of our last GPU call: not consulted
    EXPECT_EQ(s.next(), GOFL_R_OFFLOADED);
  }
  EXPECT_EQ(s.g.util_reads, 2);
  s.g.t += 1.5;
  EXPECT_EQ(s.next(), GOFL_R_GPU_BUSY);
  EXPECT_EQ(s.g.util_reads, 3);
  // A call in flight on another thread counts as our own use, however long it runs.
  Started t(5);
  gofl_call inflight = make_call("dgemm", 1e9);
  t.g.util = 0;
  t.g.t += 10;
  t.p.decide(inflight, t.g);
  ASSERT_EQ(inflight.reason, GOFL_R_OFFLOADED);
  t.g.util = 100;
  t.g.t += 30;
  const int reads = t.g.util_reads;
  gofl_call c = make_call("dgemm", 1e9);
  t.p.decide(c, t.g);
  EXPECT_EQ(c.reason, GOFL_R_OFFLOADED);
  EXPECT_EQ(t.g.util_reads, reads);
}

TEST(Decision, MemoryReserveOfEachLevel) {
  for (int level = 1; level <= 10; ++level) {
    Started s(level);
    const double total = 1e11;
    s.g.total_b = uint64_t(total);
    s.g.need = uint64_t(1e9);
    const double reserve = level_row(level).memory_reserve * total;
    s.g.free_b = uint64_t(1e9 + reserve) + 1;
    EXPECT_EQ(s.next(), GOFL_R_OFFLOADED) << level;
    s.g.free_b = uint64_t(1e9 + reserve) - 1000;
    EXPECT_EQ(s.next(), GOFL_R_GPU_MEMORY) << level;
    s.g.memory_known = false;  // unknown: no objection (an allocation failure still returns to the CPU)
    EXPECT_EQ(s.next(), GOFL_R_OFFLOADED) << level;
  }
  // An explicit reserve in bytes replaces the level's fraction.
  Started s(5, 5e8);
  s.g.total_b = uint64_t(1e11);
  s.g.need = uint64_t(1e9);
  s.g.free_b = uint64_t(1.5e9) + 1;
  EXPECT_EQ(s.next(), GOFL_R_OFFLOADED);
  s.g.free_b = uint64_t(1.5e9) - 1;
  EXPECT_EQ(s.next(), GOFL_R_GPU_MEMORY);
}

TEST(Decision, VariantsTheBackendDoesNotRunStayOnTheCpu) {
  Started s(5);
  s.g.support = GOFL_GPU_UNSUPPORTED;
  EXPECT_EQ(s.next(), GOFL_R_NOT_GPU_CAPABLE);
  s.g.support = GOFL_GPU_INVALID_ARGS;
  EXPECT_EQ(s.next(), GOFL_R_INVALID_ARGS);
  s.g.support = GOFL_GPU_OK;
  EXPECT_EQ(s.next(), GOFL_R_OFFLOADED);
}

// The check the forced path (--device gpu, verify) shares with the policy: variant, load, memory.
TEST(Decision, TheForcedPathAsksTheSameQuestionsInTheSameOrder) {
  FakeGpu g;
  g.is_started = true;
  gofl_call c = make_call("dgemm", 1e9);
  int busy_asked = 0;
  const auto busy = [&] { ++busy_asked; return true; };
  // Each check below stands for a new call, with a plan of its own (the plan is asked once per call).
  const auto next = [&c] { c.plan = gofl_plan{}; };
  g.support = GOFL_GPU_UNSUPPORTED;
  EXPECT_FALSE(gpu_takes(c, g, -1, 0.1, busy));
  EXPECT_EQ(c.reason, GOFL_R_NOT_GPU_CAPABLE);
  EXPECT_EQ(busy_asked, 0);  // a variant the GPU cannot run is not worth a utilisation reading
  g.support = GOFL_GPU_INVALID_ARGS;
  next();
  EXPECT_FALSE(gpu_takes(c, g, -1, 0.1));
  EXPECT_EQ(c.reason, GOFL_R_INVALID_ARGS);
  g.support = GOFL_GPU_OK;
  next();
  EXPECT_FALSE(gpu_takes(c, g, -1, 0.1, busy));
  EXPECT_EQ(c.reason, GOFL_R_GPU_BUSY);
  // Memory: the reserve in bytes wins over the level's fraction of the total.
  g.total_b = 10000;
  g.free_b = 2000;
  g.need = 1000;
  next();
  EXPECT_TRUE(gpu_takes(c, g, -1, 0.1));          // 1000 + 10% of 10000 <= 2000
  EXPECT_FALSE(gpu_takes(c, g, 1001, 0.1));       // 1000 + 1001 > 2000
  EXPECT_EQ(c.reason, GOFL_R_GPU_MEMORY);
  EXPECT_EQ(c.plan.device_bytes, 1000u);  // asked once for this call, kept in it
  g.memory_known = false;                         // no reading: no objection
  EXPECT_TRUE(gpu_takes(c, g, 1e12, 0.1));
}

// ---- ski rental -------------------------------------------------------------------------------

TEST(SkiRental, StartsWhenMissedSavingsReachTheLevelsFactor) {
  // CPU 1e10, GPU 1e12, no copies: a 1e9-flop call saves 0.1 - 0.001 = 0.099 s.
  const double saving = 0.1 - 0.001;
  for (int level = 1; level <= 10; ++level) {
    const double startup = 0.5, needed = startup * level_row(level).start_factor;
    AutoPolicy p(parse(flat_profile(1e10, 1e12, startup)), PolicyConfig{level});
    FakeGpu g;
    const int before = int(ceil(needed / saving)) - 1;  // calls whose savings stay below `needed`
    for (int i = 0; i < before; ++i) {
      EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_NOT_STARTED) << level << " call " << i;
      EXPECT_EQ(g.starts, 0);
      EXPECT_EQ(g.asked_started_gpu, 0);  // nothing asked of the backend before it starts
    }
    EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED) << level;
    EXPECT_EQ(g.starts, 1);
    const PolicyStats st = p.stats();
    EXPECT_TRUE(st.started);
    EXPECT_EQ(st.start_call, uint64_t(before + 1));
    EXPECT_NEAR(st.missed_savings_s, before * saving, 1e-6);
    EXPECT_LT(st.missed_savings_s, needed);
    EXPECT_EQ(st.not_started_calls, uint64_t(before));
    EXPECT_DOUBLE_EQ(st.start_needed_s, needed);
  }
}

TEST(SkiRental, NeverLosesMoreThanTheFactorTimesTheStartUpCost) {
  std::mt19937 rng(42);
  for (int level = 1; level <= 10; ++level) {
    for (int trial = 0; trial < 40; ++trial) {
      const double startup = std::uniform_real_distribution<double>(0.05, 2.0)(rng);
      const double needed = startup * level_row(level).start_factor;
      AutoPolicy p(parse(flat_profile(1e10, 2e11, startup, "h2d 1e-4 1e10\nd2h 1e-4 1e10\n")), PolicyConfig{level});
      FakeGpu g;
      double missed = 0;  // savings of calls that could have gone to the GPU but ran on the CPU
      std::uniform_real_distribution<double> lf(6, 11.5);
      for (int i = 0; i < 200; ++i) {
        const double flops = pow(10, lf(rng));
        gofl_call c = make_call(i % 3 ? "dgemm" : "dpotrf", flops, flops / 100, flops / 300);
        p.decide(c, g);
        const double r = c.pred_cpu_s / (level_row(level).required_speedup * c.pred_gpu_s);
        if (c.reason == GOFL_R_NOT_STARTED) {
          EXPECT_GT(r, 1 - 1e-5);
          missed += std::max(0.0, double(c.pred_cpu_s) - double(c.pred_gpu_s));
        }
        if (r < 1 - 1e-5) {
          EXPECT_EQ(c.reason, GOFL_R_PREDICTED_SLOWER);
        }
        p.observe(c, c.device == GOFL_DEV_GPU ? c.pred_gpu_s : c.pred_cpu_s, g.t += 0.01);
        EXPECT_LT(missed, needed * (1 + 1e-6)) << "level " << level << " trial " << trial;
      }
      EXPECT_NEAR(p.stats().missed_savings_s, missed, 1e-3 * (1 + missed));
      EXPECT_LE(g.starts, 1);
    }
  }
}

TEST(SkiRental, SmallOrUnprofitableWorkNeverStartsTheGpu) {
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.3)), PolicyConfig{});
  FakeGpu g;
  for (int i = 0; i < 10000; ++i) run(p, g, make_call("dgemm", 5e5));  // below the threshold
  // Worth offloading, but together they save less than 2 x 0.3 s.
  for (int i = 0; i < 50; ++i) EXPECT_EQ(run(p, g, make_call("dgemm", 1e7)), GOFL_R_NOT_STARTED);
  EXPECT_EQ(g.starts, 0);
  EXPECT_EQ(g.asked_started_gpu, 0);
  EXPECT_EQ(g.util_reads, 0);  // not even NVML is opened
  // The GPU is slower: never a reason to start.
  AutoPolicy q(parse(flat_profile(1e12, 1e10, 0.0)), PolicyConfig{});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(run(q, g, make_call("dgemm", 1e11)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(g.starts, 0);
}

TEST(SkiRental, TheGpuIsNotStartedWhileOtherProgramsLoadItBeyondTheLimit) {
  for (int level : {1, 5, 10}) {
    const int limit = int(lround(level_row(level).busy_limit * 100));
    AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.0)), PolicyConfig{level});  // start-up free: start at once
    FakeGpu g;
    g.util = limit + 1;
    EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_GPU_BUSY) << level;
    EXPECT_EQ(g.starts, 0);
    EXPECT_EQ(g.util_reads, 1);
    EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_GPU_BUSY) << level;
    EXPECT_EQ(g.util_reads, 1);  // 0.1 s later: the reading still serves
    g.t += kUtilizationMaxAge;
    EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_GPU_BUSY) << level;
    EXPECT_EQ(g.util_reads, 2);
    EXPECT_FALSE(p.stats().started);
    g.util = limit;  // at the limit: room enough
    g.t += 1;
    EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED) << level;
    EXPECT_EQ(g.starts, 1);
    EXPECT_TRUE(p.stats().started);
  }
  // Unknown load (no NVML): no objection.
  AutoPolicy q(parse(flat_profile(1e10, 1e12, 0.0)), PolicyConfig{});
  FakeGpu h;
  h.util = -1;
  EXPECT_EQ(run(q, h, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED);
  EXPECT_EQ(h.starts, 1);
}

TEST(SkiRental, EarlierRunsThatPaidStartTheGpuAtTheFirstCallPredictedToGain) {
  // As StartsWhenMissedSavingsReachTheLevelsFactor, with what policy/history.h says of earlier runs.
  for (int level : {1, 5, 10}) {
    PolicyConfig paid{level};
    paid.earlier_runs = 3;
    paid.earlier_gained_s = 12;
    // (start_early off, the default: EarlierRunsThatPaidBeginTheStartBesideTheFirstDecidedCall has it on)
    AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.5, "h2d 1e-4 1e10\nd2h 1e-4 1e10\n")), paid);
    FakeGpu g;
    EXPECT_EQ(run(p, g, make_call("dgemm", 5e5)), GOFL_R_BELOW_THRESHOLD);  // small work still starts nothing
    EXPECT_EQ(run(p, g, make_call("dgemm", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);  // nor does a call the GPU loses
    EXPECT_EQ(g.starts, 0);
    EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED) << level;
    EXPECT_EQ(g.starts, 1);
    const PolicyStats st = p.stats();
    EXPECT_TRUE(st.started && st.at_once);
    EXPECT_EQ(st.start_call, 2u);
    EXPECT_EQ(st.not_started_calls, 0u);
    EXPECT_DOUBLE_EQ(st.start_needed_s, 0.0);
  }
  // No earlier run that paid: today's rule (the first call only adds to the missed savings).
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.5)), PolicyConfig{5});
  FakeGpu g;
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_NOT_STARTED);
  EXPECT_FALSE(p.stats().at_once);
}

// Warming (PolicyConfig::warm, cuda/warm.h): nothing is asked of the backend before the start; at
// the start, each operation decided before it (in that order) is warmed, except the starting call's
// own; after it, an operation whose call stays on the CPU is warmed once; one whose first decided
// call after the start goes to the GPU, and small math that is never decided, are not.
TEST(Warming, OperationsDecidedBeforeTheStartAreWarmedAtItAndLaterOnesWhenTheyStayOnTheCpu) {
  const std::string copies = "h2d 1e-4 1e10\nd2h 1e-4 1e10\n";
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.5, copies)), PolicyConfig{5});
  FakeGpu g;
  EXPECT_EQ(run(p, g, make_call("sgemm", 5e5)), GOFL_R_BELOW_THRESHOLD);
  EXPECT_EQ(run(p, g, make_call("dpotrf", 1e9)), GOFL_R_NOT_STARTED);
  EXPECT_EQ(run(p, g, make_call("zgemm", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(run(p, g, make_call("dpotrf", 1e9)), GOFL_R_NOT_STARTED);
  int guard = 0;
  while (run(p, g, make_call("dgemm", 1e9)) == GOFL_R_NOT_STARTED && ++guard < 100) {
  }
  ASSERT_EQ(g.starts, 1);
  EXPECT_EQ(g.asked_started_gpu, 0);
  EXPECT_EQ(g.warmed, (std::vector<int>{op("dpotrf"), op("zgemm")}));  // not dgemm: it runs there
  EXPECT_EQ(run(p, g, make_call("dsyevd", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);  // stays on the CPU: warmed
  EXPECT_EQ(run(p, g, make_call("dsyevd", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);  // once
  EXPECT_EQ(run(p, g, make_call("ssyrk", 1e9)), GOFL_R_OFFLOADED);               // its first GPU call: no warm-up
  EXPECT_EQ(run(p, g, make_call("ssyrk", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);  // nor afterwards
  EXPECT_EQ(run(p, g, make_call("dpotrf", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);  // warmed at the start already
  EXPECT_EQ(g.warmed, (std::vector<int>{op("dpotrf"), op("zgemm"), op("dsyevd")}));

  PolicyConfig off{5};
  off.warm = false;  // GPU_OFFLOAD_WARM=0
  AutoPolicy q(parse(flat_profile(1e10, 1e12, 0.5, copies)), off);
  FakeGpu h;
  EXPECT_EQ(run(q, h, make_call("dpotrf", 1e9)), GOFL_R_NOT_STARTED);
  while (run(q, h, make_call("dgemm", 1e9)) == GOFL_R_NOT_STARTED && ++guard < 200) {
  }
  EXPECT_EQ(run(q, h, make_call("dsyevd", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_TRUE(h.warmed.empty());
}

// The size a warm-up is asked for is the largest dimension of the calls decided so far: at the start,
// the largest decided before it; afterwards a call on the CPU asks again only when it is larger than
// any asked before (the backend adds its larger warm-up where the family has one).
gofl_call sized(const char* name, double flops, int64_t n, double bytes_in = 0) {
  gofl_call c = make_call(name, flops, bytes_in);
  c.dims[0] = c.dims[1] = n;
  return c;
}
TEST(Warming, EachAskCarriesTheLargestSizeDecidedSoFar) {
  const std::string copies = "h2d 1e-4 1e10\nd2h 1e-4 1e10\n";
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.5, copies)), PolicyConfig{5});
  FakeGpu g;
  EXPECT_EQ(run(p, g, sized("dsyevd", 1e9, 300)), GOFL_R_NOT_STARTED);
  EXPECT_EQ(run(p, g, sized("dsyevd", 1e9, 900)), GOFL_R_NOT_STARTED);
  EXPECT_EQ(run(p, g, sized("dsyevd", 1e9, 200)), GOFL_R_NOT_STARTED);
  int guard = 0;
  while (run(p, g, sized("dgemm", 1e9, 1000)) == GOFL_R_NOT_STARTED && ++guard < 100) {
  }
  ASSERT_EQ(g.starts, 1);
  EXPECT_EQ(g.warmed, (std::vector<int>{op("dsyevd")}));
  EXPECT_EQ(g.warmed_n, (std::vector<int64_t>{900}));
  EXPECT_EQ(run(p, g, sized("dsyevd", 1e9, 800, 1e12)), GOFL_R_PREDICTED_SLOWER);   // not larger: nothing
  EXPECT_EQ(run(p, g, sized("dsyevd", 1e9, 2048, 1e12)), GOFL_R_PREDICTED_SLOWER);  // larger: asked again
  EXPECT_EQ(run(p, g, sized("zgesdd", 1e9, 64, 1e12)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(g.warmed, (std::vector<int>{op("dsyevd"), op("dsyevd"), op("zgesdd")}));
  EXPECT_EQ(g.warmed_n, (std::vector<int64_t>{900, 2048, 64}));
  EXPECT_EQ(run(p, g, sized("dsyevd", 1e9, 2048)), GOFL_R_OFFLOADED);              // its first GPU call
  EXPECT_EQ(run(p, g, sized("dsyevd", 1e9, 8192, 1e12)), GOFL_R_PREDICTED_SLOWER);  // settled: no more asks
  EXPECT_EQ(g.warmed.size(), 3u);
}

TEST(Warming, WhatEarlierRunsRanOnTheGpuIsWarmedAtTheStartAfterWhatWasDecided) {
  const std::string copies = "h2d 1e-4 1e10\nd2h 1e-4 1e10\n";
  PolicyConfig cfg{5};
  cfg.earlier_gpu_ops = {{op("zgesdd"), 1024}, {op("dgemm"), 4096}, {op("dsyevd"), 100}, {op("spotrf"), 256}};
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.5, copies)), cfg);
  FakeGpu g;
  EXPECT_EQ(run(p, g, sized("dsyevd", 1e9, 300)), GOFL_R_NOT_STARTED);
  EXPECT_TRUE(g.warmed.empty());  // nothing before the start
  int guard = 0;
  while (run(p, g, sized("dgemm", 1e9, 1000)) == GOFL_R_NOT_STARTED && ++guard < 100) {
  }
  ASSERT_EQ(g.starts, 1);
  // dsyevd (decided before) first, then the history's in its order: dgemm runs there now, and
  // dsyevd was already asked for a larger size than the history's.
  EXPECT_EQ(g.warmed, (std::vector<int>{op("dsyevd"), op("zgesdd"), op("spotrf")}));
  EXPECT_EQ(g.warmed_n, (std::vector<int64_t>{300, 1024, 256}));
  EXPECT_EQ(run(p, g, sized("zgesdd", 1e9, 512, 1e12)), GOFL_R_PREDICTED_SLOWER);  // no larger than asked
  EXPECT_EQ(g.warmed.size(), 3u);
  // What this run offloaded, for the next: in the order of the first GPU call, at the largest size.
  EXPECT_EQ(run(p, g, sized("spotrf", 1e9, 2000)), GOFL_R_OFFLOADED);
  EXPECT_EQ(run(p, g, sized("dgemm", 1e9, 3000)), GOFL_R_OFFLOADED);
  const std::vector<std::pair<int, int64_t>> used = p.gpu_ops();
  ASSERT_EQ(used.size(), 2u);
  EXPECT_EQ(used[0], std::make_pair(op("dgemm"), int64_t(3000)));
  EXPECT_EQ(used[1], std::make_pair(op("spotrf"), int64_t(2000)));
}

TEST(SkiRental, AFailedStartIsNotRetried) {
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.0)), PolicyConfig{});
  FakeGpu g;
  g.fail_start = true;
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_NO_BACKEND);
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_NO_BACKEND);
  EXPECT_EQ(g.starts, 1);
  EXPECT_FALSE(p.stats().started);
  EXPECT_TRUE(p.stats().start_failed);
  EXPECT_EQ(p.stats().start_call, 1u);
}

// A policy whose earlier runs paid (the first call predicted to gain begins the start), on a CPU of
// 1e10 and a GPU of 1e12 flop/s, the profile's start-up 0.5 s; and a GPU whose start takes `seconds`
// of the clock beside the calls (FakeGpu::start_takes), and fails at its end when `fails`.
AutoPolicy at_once(bool start_ahead) {
  PolicyConfig cfg;
  cfg.earlier_runs = 1;
  cfg.start_ahead = start_ahead;
  // (start_early off, the default: the start begins at the first call predicted to gain)
  return AutoPolicy(parse(flat_profile(1e10, 1e12, 0.5)), cfg);
}
FakeGpu starting_for(double seconds, bool fails = false) {
  FakeGpu g;
  g.start_takes = seconds;
  g.fail_start = fails;
  return g;
}

TEST(SkiRental, CallsRunOnTheCpuWhileTheGpuStartsBesideThemUnlessWaitingGains) {
  // A 1e9-flop call takes 0.1 s on the CPU, 0.001 s on the GPU; the start takes the profile's 0.5 s.
  AutoPolicy p = at_once(true);
  FakeGpu g = starting_for(0.5);
  const double t0 = g.t;
  // 0.1 s on the CPU against the rest of the start plus 0.001 s: the CPU, and the start goes on.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_STARTING) << i;
  EXPECT_EQ(g.starts, 1);
  EXPECT_EQ(g.asked_started_gpu, 0);  // nothing asked of the backend while it starts
  EXPECT_NEAR(g.t - t0, 0.4, 1e-6);  // (the predictions are floats)
  // 1 s on the CPU against 0.1 s of start left and 0.01 s on the GPU: it waits, and runs there.
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e10)), GOFL_R_OFFLOADED);
  EXPECT_EQ(g.waits, 1);
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED);  // seen on the CPU: no probe due
  const PolicyStats st = p.stats();
  EXPECT_TRUE(st.started);
  EXPECT_EQ(st.start_call, 1u);
  EXPECT_EQ(st.starting_calls, 4u);
  EXPECT_NEAR(st.starting_missed_s, 4 * 0.099, 1e-6);
  EXPECT_EQ(st.missed_savings_s, 0.0);  // the ski rental's count stops at the start
  EXPECT_EQ(g.starts, 1);

  // A start that ends between calls: the next call simply finds the GPU there.
  AutoPolicy q = at_once(true);
  FakeGpu h = starting_for(0.25);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run(q, h, make_call("dgemm", 1e9)), GOFL_R_STARTING) << i;
  EXPECT_EQ(run(q, h, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED);
  EXPECT_EQ(h.waits, 0);
}

// With the start beside the calls (start_ahead), the operations decided before it and while it runs
// are warmed at the first decision that finds the GPU running.
TEST(Warming, AStartBesideTheCallsWarmsWhenItEnds) {
  AutoPolicy p = at_once(true);
  FakeGpu g = starting_for(0.5);
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_STARTING);  // began the start
  EXPECT_EQ(run(p, g, make_call("zpotrf", 1e9)), GOFL_R_STARTING);
  EXPECT_EQ(run(p, g, make_call("ssyevd", 1e9)), GOFL_R_STARTING);
  EXPECT_TRUE(g.warmed.empty());
  EXPECT_EQ(g.asked_started_gpu, 0);
  g.t += 1.0;  // the start has ended
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED);
  EXPECT_EQ(g.warmed, (std::vector<int>{op("dgemm"), op("zpotrf"), op("ssyevd")}));
}

TEST(SkiRental, AStartBesideTheCallsThatFailsSendsThemToTheCpuForGood) {
  AutoPolicy p = at_once(true);
  FakeGpu g = starting_for(0.3, true);
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_STARTING);
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_STARTING);
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_STARTING);
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_NO_BACKEND);  // it failed at 0.3 s
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e11)), GOFL_R_NO_BACKEND);
  EXPECT_EQ(g.starts, 1);
  EXPECT_FALSE(p.stats().started);
  EXPECT_TRUE(p.stats().start_failed);
  // A call that waits for a start that fails runs on the CPU too.
  AutoPolicy q = at_once(true);
  FakeGpu h = starting_for(0.3, true);
  EXPECT_EQ(run(q, h, make_call("dgemm", 1e11)), GOFL_R_NO_BACKEND);  // 10 s on the CPU: it waited
  EXPECT_EQ(h.waits, 1);
  EXPECT_TRUE(q.stats().start_failed);
}

// PolicyConfig::start_early: with earlier runs that paid, the first decided call begins
// the start beside the calls even when it stays on the CPU itself; calls predicted to gain meanwhile
// are decided as under start_ahead, and the start's warm-ups (what was decided before it, then what
// the earlier runs ran on the GPU) come with the first decision that finds the GPU running.
TEST(SkiRental, EarlierRunsThatPaidBeginTheStartBesideTheFirstDecidedCall) {
  const std::string copies = "h2d 1e-4 1e10\nd2h 1e-4 1e10\n";
  PolicyConfig cfg;
  cfg.earlier_runs = 2;
  cfg.earlier_gpu_ops = {{op("zpotrf"), 2000}};
  cfg.start_early = true;
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.5, copies)), cfg);
  FakeGpu g = starting_for(0.5);
  EXPECT_EQ(run(p, g, make_call("dgemm", 5e5)), GOFL_R_BELOW_THRESHOLD);  // small math starts nothing
  EXPECT_EQ(g.starts, 0);
  // 1e12 bytes to copy: the GPU loses this one, but it begins the start.
  EXPECT_EQ(run(p, g, make_call("dsyrk", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(g.starts, 1);
  EXPECT_EQ(g.asked_started_gpu, 0);
  PolicyStats st = p.stats();
  EXPECT_TRUE(st.started && st.at_once);
  EXPECT_EQ(st.start_call, 1u);
  // A call predicted to gain while it goes on: the CPU (0.1 s) against the rest of it plus 0.001 s.
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_STARTING);
  EXPECT_TRUE(g.warmed.empty());
  g.t += 1.0;  // the start has ended
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED);
  EXPECT_EQ(g.waits, 0);
  EXPECT_EQ(g.starts, 1);
  EXPECT_EQ(g.warmed, (std::vector<int>{op("dsyrk"), op("dgemm"), op("zpotrf")}));
  st = p.stats();
  EXPECT_EQ(st.starting_calls, 1u);
  EXPECT_EQ(st.missed_savings_s, 0.0);

  // Off: the first call predicted to gain starts it, in the call.
  cfg.start_early = false;
  AutoPolicy q(parse(flat_profile(1e10, 1e12, 0.5, copies)), cfg);
  FakeGpu h = starting_for(0.5);
  EXPECT_EQ(run(q, h, make_call("dsyrk", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(h.starts, 0);
  EXPECT_EQ(run(q, h, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED);
  EXPECT_EQ(h.starts, 1);

  // No earlier run that paid: the first decided call starts nothing (the ski rental decides).
  AutoPolicy r(parse(flat_profile(1e10, 1e12, 0.5, copies)), PolicyConfig{});
  FakeGpu k = starting_for(0.5);
  EXPECT_EQ(run(r, k, make_call("dsyrk", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(run(r, k, make_call("dgemm", 1e9)), GOFL_R_NOT_STARTED);
  EXPECT_EQ(k.starts, 0);
}

TEST(SkiRental, AnEarlyStartLeavesAGpuOthersLoadForTheFirstCallPredictedToGain) {
  PolicyConfig cfg;
  cfg.earlier_runs = 1;
  cfg.start_early = true;
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.5, "h2d 1e-4 1e10\nd2h 1e-4 1e10\n")), cfg);
  FakeGpu g = starting_for(0.5);
  g.util = 100;  // other programs load the GPU
  EXPECT_EQ(run(p, g, make_call("dsyrk", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(g.starts, 0);
  EXPECT_FALSE(p.stats().started);
  g.t += 1.0;
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_GPU_BUSY);  // asked again: still loaded
  g.util = 0;
  g.t += 1.0;
  // The load gone, the first call predicted to gain begins the start (beside it; it waits when that gains).
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e11)), GOFL_R_OFFLOADED);
  EXPECT_EQ(g.starts, 1);
}

// A call that waits for a start beside the calls still brings the start's warm-ups (earlier runs' operations).
TEST(Warming, ACallThatWaitsForAStartBesideTheCallsWarmsWhatEarlierRunsRan) {
  PolicyConfig cfg;
  cfg.earlier_runs = 1;
  cfg.start_ahead = true;
  cfg.start_early = true;
  cfg.earlier_gpu_ops = {{op("dgetrf"), 4096}};
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.5)), cfg);
  FakeGpu g = starting_for(0.5);
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e11)), GOFL_R_OFFLOADED);  // 10 s on the CPU: it waited
  EXPECT_EQ(g.waits, 1);
  EXPECT_EQ(g.warmed, (std::vector<int>{op("dgetrf")}));
}

TEST(SkiRental, WithoutStartAheadTheCallThatJustifiesTheStartWaitsForAllOfIt) {
  AutoPolicy p = at_once(false);
  FakeGpu g = starting_for(0.5);  // (start_ahead would go on beside the calls)
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED);
  EXPECT_EQ(g.starts, 1);
  EXPECT_EQ(p.stats().starting_calls, 0u);
}

// ---- learning and probes ----------------------------------------------------------------------

TEST(Learning, CorrectionMovesHalfwayInRatioTermsAndConverges) {
  AutoPolicy p(parse(flat_profile(1e12, 1e10, 0.0)), PolicyConfig{});  // always the CPU
  FakeGpu g;
  const int dgemm = op("dgemm");
  const double ratio = 3.0;
  for (int k = 1; k <= 12; ++k) {
    gofl_call c = make_call("dgemm", 1e9);
    p.decide(c, g);
    ASSERT_EQ(c.reason, GOFL_R_PREDICTED_SLOWER);
    p.observe(c, ratio * 1e9 / 1e12, g.t);  // always 3x the uncorrected prediction
    // log(factor) covers half the remaining distance each time: factor_k = ratio^(1 - 2^-k).
    EXPECT_NEAR(p.correction(dgemm, kCpu, 1e9), pow(ratio, 1 - pow(2, -k)), 1e-9) << k;
    EXPECT_NEAR(c.pred_cpu_s, float(1e-3 * pow(ratio, 1 - pow(2, -(k - 1)))), 1e-7) << k;
  }
  EXPECT_NEAR(p.correction(dgemm, kCpu, 1e9), ratio, 1e-3);
  EXPECT_DOUBLE_EQ(p.correction(dgemm, kGpu, 1e9), 1.0);  // per device
  EXPECT_DOUBLE_EQ(p.correction(op("sgemm"), kCpu, 1e9), 1.0);  // per operation and precision
  EXPECT_NEAR(p.predict_cpu(make_call("dgemm", 1e9)), 3e-3, 1e-5);
}

// Teaches the CPU correction of dgemm at `flops`: `times` calls, each `ratio` x the uncorrected model.
void teach_cpu(AutoPolicy& p, FakeGpu& g, double flops, double ratio, int times) {
  for (int k = 0; k < times; ++k) {
    gofl_call c = make_call("dgemm", flops);
    p.decide(c, g);
    ASSERT_EQ(c.device, GOFL_DEV_CPU);
    p.observe(c, ratio * p.model().cpu_seconds(c.op, c.flops), g.t);
  }
}

TEST(Learning, ACorrectionLearntOnSmallCallsFadesForMuchLargerOnes) {
  // The GPU test machine's sweep: small calls ran several times slower than the calibrated curve
  // (threads waking between calls), large ones at its speed. One factor for all sizes put the
  // offloaded calls' CPU time at 6.5x what they took on the CPU.
  AutoPolicy p(parse(flat_profile(1e12, 1e10, 0.0)), PolicyConfig{});  // always the CPU
  FakeGpu g;
  const int dgemm = op("dgemm");
  teach_cpu(p, g, 1e7, 4.0, 30);
  EXPECT_NEAR(p.correction(dgemm, kCpu, 1e7), 4.0, 1e-6);
  EXPECT_NEAR(p.correction(dgemm, kCpu, 1.5e7), 4.0, 1e-6);  // the same band: within a factor of 8
  EXPECT_NEAR(p.correction(dgemm, kCpu, 1e8), 2.0, 1e-6);    // the next band: half the logarithm
  const double far = p.correction(dgemm, kCpu, 1e13);        // 6 bands further: a seventh of it
  EXPECT_NEAR(far, pow(4.0, 1.0 / 7), 1e-6);
  EXPECT_NEAR(p.predict_cpu(make_call("dgemm", 1e13)), far * 1e13 / 1e12, 1e-6);
  EXPECT_NEAR(p.correction(dgemm, kCpu, 1e6 * 0.5), 2.0, 1e-6);  // below: band 0, next to 1
}

TEST(Learning, BetweenTwoObservedSizesTheCorrectionIsInterpolated) {
  AutoPolicy p(parse(flat_profile(1e12, 1e10, 0.0)), PolicyConfig{});
  FakeGpu g;
  const int dgemm = op("dgemm");
  teach_cpu(p, g, 1e7, 4.0, 40);   // band 1
  teach_cpu(p, g, 5e10, 1.0, 40);  // band 5: the CPU at its profiled speed
  EXPECT_NEAR(p.correction(dgemm, kCpu, 5e10), 1.0, 1e-6);
  // Band 3, halfway between them in bands: halfway in log terms.
  EXPECT_NEAR(p.correction(dgemm, kCpu, 1e9), 2.0, 1e-5);
  // A first observation moves halfway from the interpolated factor, not from 1.
  teach_cpu(p, g, 1e9, 2.0, 1);
  EXPECT_NEAR(p.correction(dgemm, kCpu, 1e9), 2.0, 1e-5);
  EXPECT_DOUBLE_EQ(p.correction(dgemm, kGpu, 1e9), 1.0);  // per device
}

TEST(Learning, SizeBandsAreFactorsOfEightInWorkFromAMillionFlops) {
  EXPECT_EQ(SizeCorrection::band(0), 0);
  EXPECT_EQ(SizeCorrection::band(-1), 0);
  EXPECT_EQ(SizeCorrection::band(std::nan("")), 0);
  EXPECT_EQ(SizeCorrection::band(1e6), 0);
  EXPECT_EQ(SizeCorrection::band(7.9e6), 0);
  EXPECT_EQ(SizeCorrection::band(8.1e6), 1);
  EXPECT_EQ(SizeCorrection::band(1e12), 6);
  EXPECT_EQ(SizeCorrection::band(1e300), SizeCorrection::kBands - 1);
  EXPECT_EQ(SizeCorrection::band(std::numeric_limits<double>::infinity()), SizeCorrection::kBands - 1);
}

TEST(Learning, FailedCallsAndTheFirstGpuCallTeachNothing) {
  Started s(5);
  const int dgemm = op("dgemm");
  gofl_call c = make_call("dgemm", 1e9);
  s.p.decide(c, s.g);
  ASSERT_EQ(c.reason, GOFL_R_OFFLOADED);
  s.p.observe(c, 10 * c.pred_gpu_s, s.g.t);  // first GPU call: warm-up
  EXPECT_DOUBLE_EQ(s.p.correction(dgemm, kGpu, 1e9), 1.0);
  gofl_call d = make_call("dgemm", 1e9);
  s.p.decide(d, s.g);
  d.flags |= GOFL_F_INFO_NONZERO;
  s.p.observe(d, 10 * d.pred_gpu_s, s.g.t);
  EXPECT_DOUBLE_EQ(s.p.correction(dgemm, kGpu, 1e9), 1.0);
  gofl_call e = make_call("dgemm", 1e9);
  s.p.decide(e, s.g);
  s.p.observe(e, 4 * e.pred_gpu_s, s.g.t);
  EXPECT_NEAR(s.p.correction(dgemm, kGpu, 1e9), 2.0, 1e-6);
  // A GPU attempt that failed and ran on the CPU says nothing about either speed.
  gofl_call f = make_call("dgemm", 1e9);
  s.p.decide(f, s.g);
  f.device = GOFL_DEV_CPU;
  f.reason = GOFL_R_GPU_FAILED;
  s.p.observe(f, 100, s.g.t);
  EXPECT_NEAR(s.p.correction(dgemm, kGpu, 1e9), 2.0, 1e-6);
  EXPECT_NEAR(s.p.correction(dgemm, kCpu, 1e9), 1.0, 1e-6);
}

TEST(Learning, ASlowerCpuThanProfiledIsNoticedThroughProbes) {
  // The profile says the GPU wins 1.5x; the CPU really is 2x faster than profiled, so the CPU wins.
  AutoPolicy p(parse(flat_profile(1e10, 1.5e10, 0.0)), PolicyConfig{5});
  FakeGpu g;
  int gpu = 0, cpu = 0;
  for (int i = 0; i < 200; ++i) {
    gofl_call c = make_call("dgemm", 1e9);
    p.decide(c, g);
    const double t = c.device == GOFL_DEV_GPU ? 1e9 / 1.5e10 : 0.5 * 1e9 / 1e10;
    p.observe(c, t, g.t += t);
    (c.device == GOFL_DEV_GPU ? gpu : cpu)++;
  }
  EXPECT_LT(p.correction(op("dgemm"), kCpu, 1e9), 0.55);
  EXPECT_LE(gpu, kProbeEvery + 1);  // after the first probe taught it, the CPU keeps the work
  EXPECT_GT(cpu, 180);
}

// Where the GPU is 1.4x faster (level 5 asks 1.3x), a probe loses 0.4 x a GPU call's time: the GPU
// time of 14 calls pays for it (3% each), of 16 calls with room to spare.
constexpr double kModest = 1.4;
constexpr int kAffordAfter = 14;  // ceil(0.4 / kProbeShare)

TEST(Probes, EverySeventeenthCallAndOnceAfterTheStartWhereTheGpuIsModestlyFaster) {
  static_assert(kAffordAfter * kProbeShare >= kModest - 1 && (kAffordAfter - 1) * kProbeShare < kModest - 1);
  AutoPolicy p(parse(flat_profile(1e10, kModest * 1e10, 0.0)), PolicyConfig{});
  FakeGpu g;
  // The first call starts the GPU (start-up cost 0) and runs there: it paid for the start.
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED);
  EXPECT_EQ(g.starts, 1);
  // dgemm was never seen on the CPU: a probe is due at once, and runs once the GPU time pays for it.
  for (int i = 1; i < kAffordAfter; ++i) EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED) << i;
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_PROBE);
  // Then 16 calls on the GPU, a probe, 16 on the GPU, a probe ...
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kProbeEvery; ++i) EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED) << round << " " << i;
    EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_PROBE) << round;
  }
  EXPECT_EQ(p.stats().probes, 4u);
}

TEST(Probes, OperationsSeenOnTheCpuBeforeTheStartAreNotProbedAfterIt) {
  AutoPolicy p(parse(flat_profile(1e10, kModest * 1e10, 0.3)), PolicyConfig{});
  FakeGpu g;
  int reason;
  do reason = run(p, g, make_call("dgemm", 1e9));
  while (reason == GOFL_R_NOT_STARTED);
  EXPECT_EQ(reason, GOFL_R_OFFLOADED);
  for (int i = 0; i < kProbeEvery - 1; ++i) EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED) << i;
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_PROBE);
}

TEST(Probes, ACpuRunForAnyReasonCountsAsAnObservation) {
  Started s(5, -1, flat_profile(1e10, kModest * 1e10));
  for (int i = 0; i < kProbeEvery - 1; ++i) EXPECT_EQ(s.next(), GOFL_R_OFFLOADED);
  s.g.util = 100;
  s.g.t += 5;
  EXPECT_EQ(s.next(), GOFL_R_GPU_BUSY);  // ran on the CPU: observed
  s.g.util = 0;
  s.g.t += 5;
  for (int i = 0; i < kProbeEvery; ++i) EXPECT_EQ(s.next(), GOFL_R_OFFLOADED) << i;
  EXPECT_EQ(s.next(), GOFL_R_PROBE);
}

TEST(Probes, AProbeThatWouldCostMuchWaitsForACheaperCallOfTheOperation) {
  // The GPU is 100x faster: a probe of a 1e9-flop dgemm loses 99 ms, while 16 such calls take 16 ms
  // on the GPU. The due probe waits; the first small dgemm takes it.
  Started s(5);
  for (int i = 0; i < 3 * kProbeEvery; ++i) EXPECT_EQ(s.next(), GOFL_R_OFFLOADED) << i;
  EXPECT_EQ(run(s.p, s.g, make_call("dgemm", 1e6)), GOFL_R_PROBE);  // loses 0.099 ms
  // Its CPU observation starts the count again.
  for (int i = 0; i < kProbeEvery; ++i) EXPECT_EQ(run(s.p, s.g, make_call("dgemm", 1e6)), GOFL_R_OFFLOADED) << i;
  // Due again, but 16 calls of 0.01 ms on the GPU pay for no probe of 0.099 ms.
  EXPECT_EQ(run(s.p, s.g, make_call("dgemm", 1e6)), GOFL_R_OFFLOADED);
  EXPECT_EQ(s.p.stats().probes, 1u);
}

TEST(Probes, AnOperationFirstSeenAfterTheStartIsProbedOnceTheGpuTimePaysForIt) {
  const std::string both = flat_profile(1e10, kModest * 1e10, 0.0) + "cpu sgemm 1e3:1e10 1e15:1e10\n" +
                           "gpu sgemm 1e3:" + std::to_string(kModest * 1e10) + " 1e15:" + std::to_string(kModest * 1e10) + "\n";
  AutoPolicy p(parse(both), PolicyConfig{});
  FakeGpu g;
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED);  // starts the GPU
  // sgemm was never seen on the CPU: due at once, affordable after kAffordAfter of its own calls
  // (dgemm's GPU time pays for nothing of sgemm's).
  for (int i = 0; i < kAffordAfter; ++i) EXPECT_EQ(run(p, g, make_call("sgemm", 1e9)), GOFL_R_OFFLOADED) << i;
  EXPECT_EQ(run(p, g, make_call("sgemm", 1e9)), GOFL_R_PROBE);
  for (int i = 0; i < kProbeEvery; ++i) EXPECT_EQ(run(p, g, make_call("sgemm", 1e9)), GOFL_R_OFFLOADED) << i;
  EXPECT_EQ(run(p, g, make_call("sgemm", 1e9)), GOFL_R_PROBE);
}

TEST(Probes, ACpuObservationForAnyReasonAlsoEmptiesTheBudget) {
  Started s(5);  // the GPU 100x faster
  for (int i = 0; i < 3 * kProbeEvery; ++i) EXPECT_EQ(s.next(), GOFL_R_OFFLOADED) << i;
  s.g.util = 100;
  s.g.t += 5;
  EXPECT_EQ(s.next(), GOFL_R_GPU_BUSY);  // observed on the CPU: the 48 ms of GPU time pay for nothing later
  s.g.util = 0;
  s.g.t += 5;
  for (int i = 0; i < kProbeEvery; ++i) EXPECT_EQ(run(s.p, s.g, make_call("dgemm", 1e6)), GOFL_R_OFFLOADED) << i;
  EXPECT_EQ(run(s.p, s.g, make_call("dgemm", 1e6)), GOFL_R_OFFLOADED);  // due, not affordable
  EXPECT_EQ(s.p.stats().probes, 0u);
}

TEST(Probes, AProbeThatFailsStillSpendsTheBudget) {
  Started s(5);
  for (int i = 0; i < 3 * kProbeEvery; ++i) EXPECT_EQ(s.next(), GOFL_R_OFFLOADED) << i;
  gofl_call c = make_call("dgemm", 1e6);
  s.p.decide(c, s.g);
  ASSERT_EQ(c.reason, GOFL_R_PROBE);
  c.flags |= GOFL_F_INFO_NONZERO;  // returns early: no observation
  s.p.observe(c, c.pred_cpu_s, s.g.t += c.pred_cpu_s);
  for (int i = 0; i < kProbeEvery; ++i) EXPECT_EQ(run(s.p, s.g, make_call("dgemm", 1e6)), GOFL_R_OFFLOADED) << i;
  EXPECT_EQ(run(s.p, s.g, make_call("dgemm", 1e6)), GOFL_R_OFFLOADED);
  EXPECT_EQ(s.p.stats().probes, 1u);
}

TEST(Probes, OneSlowCpuObservationDoesNotMakeProbesRarer) {
  // The GPU 1.4x faster; one CPU call takes 30x its prediction (OpenBLAS's first getrf of a size
  // has). The CPU correction jumps to sqrt(30) = 5.5, but the probe budget counts the CPU at the
  // profile's speed: the next probe still comes after 16 offloaded calls, and teaches the truth.
  AutoPolicy p(parse(flat_profile(1e10, kModest * 1e10, 0.3)), PolicyConfig{});
  FakeGpu g;
  gofl_call first = make_call("dgemm", 1e9);
  p.decide(first, g);
  ASSERT_EQ(first.reason, GOFL_R_NOT_STARTED);
  p.observe(first, 30 * first.pred_cpu_s, g.t += 3);
  EXPECT_NEAR(p.correction(op("dgemm"), kCpu, 1e9), sqrt(30.0), 1e-6);
  int reason;
  do reason = run(p, g, make_call("dgemm", 1e9));
  while (reason == GOFL_R_NOT_STARTED);
  ASSERT_EQ(reason, GOFL_R_OFFLOADED);
  for (int i = 0; i < kProbeEvery - 1; ++i) EXPECT_EQ(run(p, g, make_call("dgemm", 1e9)), GOFL_R_OFFLOADED) << i;
  gofl_call probe = make_call("dgemm", 1e9);
  p.decide(probe, g);
  EXPECT_EQ(probe.reason, GOFL_R_PROBE);
  p.observe(probe, 1e9 / 1e10, g.t += 0.1);  // the CPU at its profiled speed
  EXPECT_LT(p.correction(op("dgemm"), kCpu, 1e9), 2.4);  // sqrt(5.5): on its way back
}

TEST(Probes, NeverCostMoreThanTheirShareOfTheGpuTime) {
  for (double speedup : {1.35, 2.0, 10.0, 100.0}) {
    AutoPolicy p(parse(flat_profile(1e10, speedup * 1e10, 0.0)), PolicyConfig{});
    FakeGpu g;
    double gpu_s = 0, lost_s = 0;
    int probes = 0;
    for (int i = 0; i < 20000; ++i) {
      gofl_call c = make_call("dgemm", 1e8 * (1 + i % 7));  // sizes vary
      p.decide(c, g);
      if (c.device == GOFL_DEV_GPU) gpu_s += c.pred_gpu_s;
      if (c.reason == GOFL_R_PROBE) lost_s += c.pred_cpu_s - c.pred_gpu_s, ++probes;
      p.observe(c, c.device == GOFL_DEV_GPU ? c.pred_gpu_s : c.pred_cpu_s, g.t += 0.01);
    }
    EXPECT_GT(probes, 0) << speedup;  // the CPU is still looked at
    EXPECT_LE(lost_s, 0.03 * gpu_s * 1.0001) << speedup;  // the 3% the README promises
    // And no more often than every 17th call.
    EXPECT_LE(probes, 20000 / (kProbeEvery + 1) + 1) << speedup;
  }
}

TEST(Probes, AProbesMeasuredLossKeepsThemWithinTheirShareWhereTheCpuStaysSlow) {
  // The profile says the GPU is 1.4x faster, but every CPU call takes 10x its prediction (BLAS
  // called from a program's own threads, which OpenBLAS then runs on one core each). The budget
  // counts each probe's loss at the profile's CPU speed, so it would allow one every 17th call,
  // each losing about 13 GPU calls' time; what the probes measurably lost keeps the next ones
  // waiting, so all of them together lose at most 3% of the GPU time and one probe more.
  AutoPolicy p(parse(flat_profile(1e10, kModest * 1e10, 0.0)), PolicyConfig{});
  FakeGpu g;
  double gpu_s = 0, lost_s = 0, largest_loss = 0;
  int probes = 0;
  for (int i = 0; i < 20000; ++i) {
    gofl_call c = make_call("dgemm", 1e9);
    p.decide(c, g);
    const double t = c.device == GOFL_DEV_GPU ? c.pred_gpu_s : 10 * 1e9 / 1e10;
    if (c.device == GOFL_DEV_GPU) gpu_s += c.pred_gpu_s;
    if (c.reason == GOFL_R_PROBE) {
      ++probes;
      lost_s += t - c.pred_gpu_s;
      largest_loss = std::max(largest_loss, t - c.pred_gpu_s);
    }
    p.observe(c, t, g.t += t);
  }
  EXPECT_GT(probes, 1);  // the CPU is still looked at
  EXPECT_LE(lost_s, kProbeShare * gpu_s + largest_loss);
  EXPECT_LT(probes, 20000 / (kProbeEvery + 1) / 4);  // far rarer than the profile alone would allow
}

// ---- fitting a profile (gpu-offload calibrate) -------------------------------------------------

TEST(Fit, LowerQuartileIgnoresSlowRepetitions) {
  EXPECT_DOUBLE_EQ(lower_quartile({}), 0.0);
  EXPECT_DOUBLE_EQ(lower_quartile({3.0}), 3.0);
  EXPECT_DOUBLE_EQ(lower_quartile({1.0, 2.0}), 1.25);
  EXPECT_DOUBLE_EQ(lower_quartile({5, 1, 4, 2, 3}), 2.0);
  EXPECT_DOUBLE_EQ(lower_quartile({1.0, 1.0, 1.1, 50.0, 90.0}), 1.0);  // two noisy repetitions
}

TEST(Fit, CurvesAreSortedAndMerged) {
  SpeedCurve c = curve_from_points({{1e9, 4e11}, {1e6, 1e9}, {1e9, 1e11}, {-1, 5}, {1e7, 0}});
  ASSERT_EQ(c.points.size(), 2u);
  EXPECT_DOUBLE_EQ(c.points[0].first, 1e6);
  EXPECT_NEAR(c.points[1].second, 2e11, 1);  // geometric mean of the two at 1e9
}

TEST(Fit, CopyCostIsAStraightLine) {
  CopyCost c;
  std::string why;
  std::vector<std::pair<double, double>> s;
  for (double b : {1e6, 1e7, 1e8, 1e9}) s.push_back({b, 2e-5 + b / 4e10});
  ASSERT_TRUE(fit_copy_cost(s, &c, &why)) << why;
  EXPECT_NEAR(c.fixed_s, 2e-5, 1e-9);
  EXPECT_NEAR(c.bytes_per_s / 4e10, 1.0, 1e-6);
  // Noise that would make the fixed cost negative: the line goes through the origin.
  s = {{1e6, 0.5e6 / 1e10}, {1e8, 1e8 / 1e10}, {2e8, 2e8 / 1e10}};
  ASSERT_TRUE(fit_copy_cost(s, &c, &why)) << why;
  EXPECT_EQ(c.fixed_s, 0.0);
  EXPECT_NEAR(c.bytes_per_s / 1e10, 1.0, 0.01);
  EXPECT_FALSE(fit_copy_cost({{1e6, 1e-3}, {1e6, 2e-3}}, &c, &why));
  EXPECT_NE(why.find("two different"), std::string::npos);
  EXPECT_FALSE(fit_copy_cost({{1e6, 1e-3}, {1e8, 1e-5}}, &c, &why));
}

TEST(Decision, AForkedChildCountsItsOwnMissedSavings) {
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.3)), PolicyConfig{});
  FakeGpu g;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run(p, g, make_call("dgemm", 1e9, 0, 0), 2e-3), GOFL_R_NOT_STARTED);
  const double corr = p.correction(op("dgemm"), kCpu, 1e9);
  EXPECT_LT(corr, 1.0);
  EXPECT_GT(p.stats().missed_savings_s, 0.0);
  p.after_fork();
  EXPECT_EQ(p.stats().missed_savings_s, 0.0);
  EXPECT_EQ(p.stats().not_started_calls, 0u);
  EXPECT_DOUBLE_EQ(p.stats().start_needed_s, 0.6);
  EXPECT_DOUBLE_EQ(p.correction(op("dgemm"), kCpu, 1e9), corr);  // what was learnt stays
}

// ---- residency ahead of time ------------------------------------------------------------------

namespace {
// A product whose 1 GB input A comes back call after call (same address and size): at 10 GB/s its
// copy (0.1 s) is as long as the CPU's whole call, so it gains only once A stays on the GPU.
gofl_call reused_input_call(const void* a, uint32_t resident = 0) {
  gofl_call c = make_call("dgemm", 1e9);
  c.operands[c.n_operands++] = gofl_call_operand{a, int64_t(1e9), 1, GOFL_IN, 0};
  c.resident = resident;
  return c;
}
}  // namespace

TEST(Residency, AnInputThatKeepsComingBackIsChargedItsCopiesSpreadOverItsUses) {
  Started s(5, -1, flat_profile(1e10, 1e12, 0.0, "h2d 0 1e10\nd2h 0 1e10\n"));
  static const char a[1] = {0};
  // First and second sight: the whole copy, slower than the CPU.
  EXPECT_EQ(run(s.p, s.g, reused_input_call(a)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(run(s.p, s.g, reused_input_call(a)), GOFL_R_PREDICTED_SLOWER);
  // Third: two copies left over three uses (0.067 s + 1 ms against 0.1 s): offloaded.
  gofl_call c = reused_input_call(a);
  s.p.decide(c, s.g);
  EXPECT_EQ(c.reason, GOFL_R_OFFLOADED);
  EXPECT_NEAR(c.pred_gpu_s, 2.0 / 3.0 * 0.1 + 1e-3, 1e-4);
  // Another input of the same size seen for the first time is charged in full.
  static const char b[1] = {0};
  EXPECT_EQ(run(s.p, s.g, reused_input_call(b)), GOFL_R_PREDICTED_SLOWER);
}

TEST(Residency, AnInputTheGpuKeepsCopyingIsChargedInFullAgain) {
  Started s(5, -1, flat_profile(1e10, 1e12, 0.0, "h2d 0 1e10\nd2h 0 1e10\n"));
  static const char a[1] = {0};
  run(s.p, s.g, reused_input_call(a));
  run(s.p, s.g, reused_input_call(a));
  // Three GPU calls that all had to copy A (the program rewrites it between calls).
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run(s.p, s.g, reused_input_call(a), 0.101), GOFL_R_OFFLOADED) << i;
  EXPECT_EQ(run(s.p, s.g, reused_input_call(a)), GOFL_R_PREDICTED_SLOWER);
  // Amortised again only after twice as many uses as before.
  EXPECT_EQ(run(s.p, s.g, reused_input_call(a)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(run(s.p, s.g, reused_input_call(a)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(run(s.p, s.g, reused_input_call(a)), GOFL_R_PREDICTED_SLOWER);
  EXPECT_EQ(run(s.p, s.g, reused_input_call(a)), GOFL_R_OFFLOADED);
}

TEST(Residency, AnInputAKeptCopyServedCostsNoCopy) {
  Started s(5, -1, flat_profile(1e10, 1e12, 0.0, "h2d 0 1e10\nd2h 0 1e10\n"));
  static const char a[1] = {0};
  run(s.p, s.g, reused_input_call(a));
  run(s.p, s.g, reused_input_call(a));
  // The backend reports that a kept copy served A: from then on no copy is charged.
  gofl_call c = reused_input_call(a);
  s.p.decide(c, s.g);
  c.resident = GOFL_RES_KEPT;  // operand 0
  s.g.t += 1e-3;
  s.p.observe(c, 1e-3, s.g.t);
  gofl_call next = reused_input_call(a);
  s.p.decide(next, s.g);
  EXPECT_EQ(next.reason, GOFL_R_OFFLOADED);
  EXPECT_NEAR(next.pred_gpu_s, 1e-3, 1e-4);
}

TEST(Residency, OffMeansEveryCopyIsCharged) {
  PolicyConfig cfg{5, 1e6, -1};
  cfg.residency = false;
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.0, "h2d 0 1e10\nd2h 0 1e10\n")), cfg);
  FakeGpu g;
  g.is_started = true;
  static const char a[1] = {0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(run(p, g, reused_input_call(a)), GOFL_R_PREDICTED_SLOWER) << i;
}
