// What the --device auto decision learns from the calls it saw: corrections of the profile and the
// CPU probes made after the GPU started (src/policy/auto_policy.h), on a fake GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "policy/auto_policy.h"
#include "trace/codes.h"
#include "policy_test_support.h"

using namespace gofl;
using namespace gofl_policy_test;

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

// A GPU call that waited in line behind other threads' calls: the wait is the line's, and the GPU's
// correction learns from the call's own time. In PySCF C8H18 (16 OpenMP threads, bursts of dsymm)
// the waits learnt as GPU speed made 12,640 calls predict the GPU slower, 3.9 ms each on the CPU
// against 0.7 ms of copies and kernel on the GPU. The offloaded calls' statistics keep the wait.
TEST(Learning, AGpuCallsTimeInLineIsNotTheGpusSpeed) {
  Started s(5);
  const int dgemm = op("dgemm");
  gofl_call warm = make_call("dgemm", 1e9);
  s.p.decide(warm, s.g);
  ASSERT_EQ(warm.reason, GOFL_R_OFFLOADED);
  s.p.observe(warm, warm.pred_gpu_s, s.g.t);  // first GPU call: teaches nothing
  const double before = s.p.stats().offloaded_actual_s;
  // 10x its prediction in all, 9x of it in line: its own time is the prediction.
  gofl_call c = make_call("dgemm", 1e9);
  s.p.decide(c, s.g);
  ASSERT_EQ(c.reason, GOFL_R_OFFLOADED);
  s.p.observe(c, 10 * c.pred_gpu_s, s.g.t, 9 * c.pred_gpu_s);
  EXPECT_NEAR(s.p.correction(dgemm, kGpu, 1e9), 1.0, 1e-6);
  EXPECT_NEAR(s.p.stats().offloaded_actual_s - before, 10 * c.pred_gpu_s, 1e-9);
  // Its own time 4x the prediction (16x in all): that it learns.
  gofl_call d = make_call("dgemm", 1e9);
  s.p.decide(d, s.g);
  s.p.observe(d, 16 * d.pred_gpu_s, s.g.t, 12 * d.pred_gpu_s);
  EXPECT_NEAR(s.p.correction(dgemm, kGpu, 1e9), 2.0, 1e-6);
  // A wait that is not less than the call's time (a clock's step) leaves the whole time.
  gofl_call e = make_call("dgemm", 1e9);
  s.p.decide(e, s.g);
  const double pred = e.pred_gpu_s;  // already corrected by 2
  s.p.observe(e, 2 * pred, s.g.t, 3 * pred);
  EXPECT_NEAR(s.p.correction(dgemm, kGpu, 1e9), sqrt(2.0 * 4.0), 1e-6);
  // A CPU call's time is the CPU's whatever is passed as a wait.
  gofl_call f = make_call("dgemm", 1e9);
  s.p.decide(f, s.g);
  f.device = GOFL_DEV_CPU;
  f.reason = GOFL_R_PREDICTED_SLOWER;
  s.p.observe(f, 4 * s.p.model().cpu_seconds(f.op, f.flops), s.g.t, 3 * s.p.model().cpu_seconds(f.op, f.flops));
  EXPECT_NEAR(s.p.correction(dgemm, kCpu, 1e9), 2.0, 1e-6);
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
