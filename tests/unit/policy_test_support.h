// What the policy tests share (test_profile.cpp, test_decision.cpp, test_learning.cpp): hand-made
// profiles, hand-made calls, and a fake GPU whose readings the tests set.
#pragma once

#include <gtest/gtest.h>

#include <stdio.h>

#include <algorithm>
#include <string>
#include <vector>

#include "policy/auto_policy.h"
#include "policy/profile.h"
#include "trace/codes.h"

namespace gofl_policy_test {

using namespace gofl;


inline int op(const char* name) {
  const int id = gofl_op_by_name(name);
  EXPECT_GE(id, 0) << name;
  return id;
}

inline Profile parse(const std::string& text) {
  Profile p;
  std::string err;
  EXPECT_TRUE(parse_profile(text, "test", &p, &err)) << err;
  return p;
}

inline std::string parse_error(const std::string& text) {
  Profile p;
  std::string err;
  EXPECT_FALSE(parse_profile(text, "bad.profile", &p, &err)) << "parsed:\n" << text;
  return err;
}

// Constant speeds, free copies unless given: the decision then sees exactly cpu/gpu speed ratios.
inline std::string flat_profile(double cpu_rate, double gpu_rate, double startup = 0.0, const std::string& copies =
                                                                                         "h2d 0 1e30\nd2h 0 1e30\n") {
  char b[512];
  snprintf(b, sizeof b,
           "gpu-offload profile 1\ngpu_startup_s %g\n%scpu dgemm 1e3:%g 1e15:%g\ngpu dgemm 1e3:%g 1e15:%g\n", startup,
           copies.c_str(), cpu_rate, cpu_rate, gpu_rate, gpu_rate);
  return b;
}

inline gofl_call make_call(const char* name, double flops, double bytes_in = 0, double bytes_out = 0) {
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
  bool warming_now = false;  // what warming() says: a warm-up runs or is queued
  bool warming() override { return warming_now; }
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
inline int run(AutoPolicy& p, FakeGpu& g, gofl_call c, double seconds = -1) {
  p.decide(c, g);
  if (seconds < 0) seconds = c.device == GOFL_DEV_GPU ? c.pred_gpu_s : c.pred_cpu_s;
  g.t += seconds;
  p.observe(c, seconds, g.t);
  return c.reason;
}


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

}  // namespace gofl_policy_test
