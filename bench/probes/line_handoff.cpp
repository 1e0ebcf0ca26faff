// The GPU line's handover (src/preload/gpu_line.h) with no GPU: B threads keep every core busy, as a
// program's threads inside their CPU calls do, while W threads take the line, hold it H us (a GPU
// call's copies and computation), give it back and do H us of their own work. Prints the gap between
// a hold's end and the next waiting call running (the GPU idle between calls), the line's own count
// of that time, and the holds a second against 1 / H; then the same with a plain mutex in place of the
// line (what the library had before it: a thread already running may take the GPU ahead of the ones
// that wait, unfair but without a handover); and the line with its holder serving the waiting calls
// (GPU_OFFLOAD_LINE_SERVES: the thread giving the GPU back runs up to 8 waiting calls' holds itself).
//   line_handoff [BUSY [WAITERS [HOLD_US [HOLDS]]]]   defaults: the cores, 4, 2000, 1000
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "preload/gpu_line.h"

using gofl::clock_ns;

namespace {

void busy_for(uint64_t ns) {
  const uint64_t t = clock_ns();
  while (clock_ns() - t < ns) {
  }
}

using Took = gofl::GpuLine::Took;

// The GPU line (its holder serving waiting calls or not), or a timed mutex in its place. take_by may
// run `work` on another thread (Took::Served): the call then holds nothing.
struct Line {
  gofl::GpuLine line;
  Line() { line.set_serves(0); }
  bool try_take() { return line.try_take(); }
  Took take_by(uint64_t deadline_ns, gofl::GpuLine::Work*) { return line.take_by(deadline_ns) ? Took::Held : Took::No; }
  void give_back() { line.give_back(); }
  double handover_s() { return double(line.tally().handover_ns) * 1e-9; }
  static const char* name() { return "GPU line"; }
};
struct Serving : Line {
  Serving() { line.set_serves(8); }
  Took take_by(uint64_t deadline_ns, gofl::GpuLine::Work* work) { return line.take_or_serve_by(deadline_ns, work); }
  static const char* name() { return "serving"; }
};
struct Mutex {
  std::timed_mutex m;
  bool try_take() { return m.try_lock(); }
  Took take_by(uint64_t deadline_ns, gofl::GpuLine::Work*) {
    return m.try_lock_until(std::chrono::steady_clock::now() + std::chrono::nanoseconds(deadline_ns - clock_ns()))
               ? Took::Held : Took::No;
  }
  void give_back() { m.unlock(); }
  double handover_s() { return 0; }
  static const char* name() { return "mutex"; }
};

template <class L>
void run(int busy, int waiters, uint64_t hold_ns, int holds) {
  L line;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> released{0};
  std::atomic<int> done{0};
  std::mutex gm;
  std::vector<uint64_t> gaps;
  std::vector<std::thread> th;
  for (int i = 0; i < busy; ++i)
    th.emplace_back([&] {
      volatile double x = 1;
      while (!stop.load(std::memory_order_relaxed))
        for (int k = 0; k < 1000; ++k) x = x * 1.0000001 + 1e-9;
    });
  const uint64_t t0 = clock_ns();
  // One hold: the gap since the last one ended (when the call waited), then the call's GPU time.
  auto hold = [&](bool waited) {
    const uint64_t t = clock_ns();
    if (waited) {
      std::lock_guard<std::mutex> lk(gm);
      gaps.push_back(t - released.load());
    }
    busy_for(hold_ns);
    ++done;
    released = clock_ns();
  };
  struct Arg {
    decltype(hold)* h;
  } arg{&hold};
  gofl::GpuLine::Work work{[](void* a) { (*static_cast<Arg*>(a)->h)(true); return true; }, &arg, 0};
  for (int i = 0; i < waiters; ++i)
    th.emplace_back([&] {
      while (done.load() < holds) {
        bool waited = false;
        if (!line.try_take()) {
          waited = true;
          const Took took = line.take_by(clock_ns() + 2000000000ull, &work);
          if (took == Took::No) continue;
          if (took == Took::Served) {  // another thread ran this call's hold
            busy_for(hold_ns);
            continue;
          }
        }
        hold(waited);
        line.give_back();
        busy_for(hold_ns);  // the thread's own work before its next call
      }
    });
  for (int i = busy; i < int(th.size()); ++i) th[i].join();
  const double wall = double(clock_ns() - t0) * 1e-9;
  stop = true;
  for (int i = 0; i < busy; ++i) th[i].join();
  if (gaps.empty()) {
    printf("%-8s: no call waited\n", L::name());
    return;
  }
  std::sort(gaps.begin(), gaps.end());
  double sum = 0;
  for (const uint64_t g : gaps) sum += double(g);
  printf("%-8s: %6zu handovers, gap median %7.1f us, p90 %7.1f, max %8.1f, mean %7.1f (%3.0f%% of a hold); "
         "%6.0f holds/s (bound %.0f); the line's own handover time %.3f s\n",
         L::name(), gaps.size(), double(gaps[gaps.size() / 2]) / 1e3, double(gaps[gaps.size() * 9 / 10]) / 1e3,
         double(gaps.back()) / 1e3, sum / double(gaps.size()) / 1e3, 100 * sum / double(gaps.size()) / double(hold_ns),
         double(holds) / wall, 1e9 / double(hold_ns), line.handover_s());
}

}  // namespace

int main(int argc, char** argv) {
  const int cores = int(sysconf(_SC_NPROCESSORS_ONLN));
  const int busy = argc > 1 ? atoi(argv[1]) : cores;
  const int waiters = argc > 2 ? atoi(argv[2]) : 4;
  const double hold_us = argc > 3 ? atof(argv[3]) : 2000;
  const int holds = argc > 4 ? atoi(argv[4]) : 1000;
  if (busy < 0 || waiters < 2 || hold_us <= 0 || holds <= 0) {
    fprintf(stderr, "usage: line_handoff [BUSY [WAITERS>=2 [HOLD_US [HOLDS]]]]\n");
    return 2;
  }
  printf("%d cores, %d busy threads, %d threads taking the line, holds of %.0f us\n", cores, busy, waiters, hold_us);
  run<Line>(busy, waiters, uint64_t(hold_us * 1e3), holds);
  run<Mutex>(busy, waiters, uint64_t(hold_us * 1e3), holds);
  run<Serving>(busy, waiters, uint64_t(hold_us * 1e3), holds);
  return 0;
}
