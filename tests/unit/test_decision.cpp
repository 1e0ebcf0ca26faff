// The --device auto decision (src/policy/auto_policy.h): the levels and their gates, the start of the
// GPU (ski rental), warming, and residency ahead of time, on a fake GPU whose readings the tests set.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "policy/auto_policy.h"
#include "policy/level.h"
#include "trace/codes.h"
#include "policy_test_support.h"

using namespace gofl;
using namespace gofl_policy_test;

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

// At the start, the operations decided more than once are warmed before those decided once, each
// group in the order first decided: a call the program repeats is likely to come again soon.
TEST(Warming, OperationsDecidedMoreThanOnceAreWarmedBeforeThoseDecidedOnce) {
  const std::string copies = "h2d 1e-4 1e10\nd2h 1e-4 1e10\n";
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.5, copies)), PolicyConfig{5});
  FakeGpu g;
  EXPECT_EQ(run(p, g, make_call("dgemm", 1e9, 1e12)), GOFL_R_PREDICTED_SLOWER);  // once, first
  EXPECT_EQ(run(p, g, make_call("zpotrf", 1e9)), GOFL_R_NOT_STARTED);            // once
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(run(p, g, make_call("ssyevd", 1e9)), GOFL_R_NOT_STARTED);
    EXPECT_EQ(run(p, g, make_call("sgetrf", 1e9)), GOFL_R_NOT_STARTED);
  }
  int guard = 0;
  while (run(p, g, make_call("ssyrk", 1e9)) == GOFL_R_NOT_STARTED && ++guard < 100) {
  }
  ASSERT_EQ(g.starts, 1);
  EXPECT_EQ(g.warmed, (std::vector<int>{op("ssyevd"), op("sgetrf"), op("dgemm"), op("zpotrf")}));
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

TEST(Warming, WithAFirstCallChargeAnOperationsFirstGpuCallWaitsOnTheCpuUntilTheWarmUpsEnded) {
  PolicyConfig cfg{5};
  cfg.first_call_s = 0.07;  // GPU_OFFLOAD_FIRST_CALL_MS=70
  AutoPolicy p(parse(flat_profile(1e10, 1e12, 0.5)), cfg);  // copies free: 1e8 flops take 10 ms / 0.1 ms
  FakeGpu g;
  int guard = 0;
  while (run(p, g, make_call("dgemm", 1e9)) == GOFL_R_NOT_STARTED && ++guard < 100) {
  }
  ASSERT_EQ(g.starts, 1);
  // dsyrk's first call after the start gains 9.9 ms, less than the charge: the CPU, and a warm-up asked.
  gofl_call c = make_call("dsyrk", 1e8);
  p.decide(c, g);
  EXPECT_EQ(c.reason, GOFL_R_PREDICTED_SLOWER);
  EXPECT_NEAR(c.pred_gpu_s, 0.0701, 1e-6);  // the GPU's time with the charge
  EXPECT_EQ(g.warmed, (std::vector<int>{op("dsyrk")}));
  g.warming_now = true;  // its warm-up (or another) still queued or running
  EXPECT_EQ(run(p, g, make_call("dsyrk", 1e8)), GOFL_R_PREDICTED_SLOWER);
  // A call that gains more than the charge goes at once, warm-ups running or not.
  EXPECT_EQ(run(p, g, make_call("dtrsm", 1e10)), GOFL_R_OFFLOADED);
  g.warming_now = false;  // every warm-up asked has ended
  EXPECT_EQ(run(p, g, make_call("dsyrk", 1e8)), GOFL_R_OFFLOADED);
  EXPECT_EQ(g.warmed, (std::vector<int>{op("dsyrk")}));  // asked once
  // Warm-ups that keep running (other operations', queued at a second run's start) hold a first call
  // for kFirstCallWaitS after its own warm-up was asked, no longer.
  g.warming_now = true;
  EXPECT_EQ(run(p, g, make_call("dpotrf", 1e8)), GOFL_R_PREDICTED_SLOWER);
  g.t += 0.2;
  EXPECT_EQ(run(p, g, make_call("dpotrf", 1e8)), GOFL_R_PREDICTED_SLOWER);
  g.t += kFirstCallWaitS;
  EXPECT_EQ(run(p, g, make_call("dpotrf", 1e8)), GOFL_R_OFFLOADED);

  // Without the charge (the default) the same first call goes to the GPU.
  AutoPolicy q(parse(flat_profile(1e10, 1e12, 0.5)), PolicyConfig{5});
  FakeGpu h;
  while (run(q, h, make_call("dgemm", 1e9)) == GOFL_R_NOT_STARTED && ++guard < 200) {
  }
  h.warming_now = true;
  EXPECT_EQ(run(q, h, make_call("dsyrk", 1e8)), GOFL_R_OFFLOADED);
  // Nor with warming off (GPU_OFFLOAD_WARM=0): no warm-up would end the charge.
  PolicyConfig unwarmed = cfg;
  unwarmed.warm = false;
  AutoPolicy u(parse(flat_profile(1e10, 1e12, 0.5)), unwarmed);
  FakeGpu k;
  while (run(u, k, make_call("dgemm", 1e9)) == GOFL_R_NOT_STARTED && ++guard < 300) {
  }
  EXPECT_EQ(run(u, k, make_call("dsyrk", 1e8)), GOFL_R_OFFLOADED);
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
