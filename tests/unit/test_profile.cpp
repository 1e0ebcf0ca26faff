// The machine profile, the cost model and fitting a profile (src/policy): parsing, writing, where it is
// found, the times it predicts, and what `gpu-offload calibrate` fits.
#include <gtest/gtest.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/table.h"
#include "policy/fit.h"
#include "policy/model.h"
#include "policy/profile.h"
#include "policy/split.h"
#include "trace/call_record.h"
#include "policy_test_support.h"

using namespace gofl;
using namespace gofl_policy_test;

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

// symm reads one triangle of A and syr2k reads and writes one of C; only that triangle crosses the
// host (Engine::upload_triangle, download_triangle), so the model counts half of those operands.
TEST(Model, AnOperandReadOneTriangleAtATimeCountsHalfItsBytes) {
  gofl_call c{};
  c.op = OP_dsymm;
  c.n_operands = 3;
  c.operands[0] = gofl_call_operand{nullptr, 100, 8, GOFL_IN, 0};    // a
  c.operands[1] = gofl_call_operand{nullptr, 10, 8, GOFL_IN, 1};     // b
  c.operands[2] = gofl_call_operand{nullptr, 10, 8, GOFL_INOUT, 2};  // c
  CallBytes b = call_bytes(c);
  EXPECT_DOUBLE_EQ(b.in, 400 + 80 + 80);
  EXPECT_DOUBLE_EQ(b.out, 80);
  c.op = OP_zsyr2k;  // a, b, c: c is the triangle
  b = call_bytes(c);
  EXPECT_DOUBLE_EQ(b.in, 800 + 80 + 40);
  EXPECT_DOUBLE_EQ(b.out, 40);
  c.op = OP_dgemm;  // no triangle
  EXPECT_DOUBLE_EQ(call_bytes(c).in, 800 + 80 + 80);
}

// A replayed call (estimate, calibrate, replay_policy) keeps each operand in its place, so the table's
// facts by place still apply: a dsyrk whose A was not looked at still has its C second, counted half,
// with C's residency.
TEST(Model, AReplayedCallKeepsItsOperandsInPlace) {
  gofl_call_record r{};
  r.op = OP_dsyrk;
  r.n_operands = 2;
  r.operands[0] = gofl_operand{0x1000, 800, 0, 0};
  r.operands[1] = gofl_operand{0x2000, 400, 5, 6};
  const gofl_call c = gofl::call_from_record(r, GOFL_RES_KEPT << 2);
  ASSERT_EQ(c.n_operands, 2);
  EXPECT_EQ(c.operands[0].role, 0);
  EXPECT_EQ(c.operands[1].role, GOFL_INOUT);
  EXPECT_EQ(GOFL_RESIDENCY_OF(c.resident, 1), GOFL_RES_KEPT);
  EXPECT_DOUBLE_EQ(call_bytes(gofl::call_from_record(r)).in, 200);
  EXPECT_DOUBLE_EQ(call_bytes(gofl::call_from_record(r)).out, 200);
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
