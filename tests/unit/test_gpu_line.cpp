// The line for the GPU (src/preload/gpu_line.h) with real threads: calls get the GPU in the order
// they came, a call whose deadline passes leaves the line and the others keep their order, a call
// that the line's expected wait would keep past its deadline does not wait, one long hold does not
// stop the next calls from waiting, a cancelled waiter leaves the line usable, and a fork child
// starts with a free GPU. The tests set the mean hold themselves and wait for exact line lengths,
// so a loaded machine makes them slower, not wrong.
#include "preload/gpu_line.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace gofl {
namespace {

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kNever = uint64_t(1) << 62;  // a deadline no test reaches (ctest's timeout ends a hang)

void wait_until_waiting(GpuLine& line, int n) {
  while (line.waiting() != n) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

TEST(GpuLine, NoServingUnlessAsked) {
  GpuLine line;
  EXPECT_EQ(line.serves(), 0);
}

TEST(GpuLine, OneHolderAtATime) {
  GpuLine line;
  EXPECT_TRUE(line.try_take());
  EXPECT_FALSE(line.try_take());
  EXPECT_FALSE(line.take_by(clock_ns() + kMs));  // nobody gives it back: the deadline passes
  line.give_back();
  EXPECT_TRUE(line.try_take());
  line.give_back();
  const GpuLine::Tally t = line.tally();
  EXPECT_EQ(t.holds, 2u);
  EXPECT_EQ(t.gave_up, 1u);
  EXPECT_EQ(line.waiting(), 0);
}

TEST(GpuLine, WaitersGetTheGpuInTheOrderTheyCame) {
  GpuLine line;
  ASSERT_TRUE(line.try_take());
  std::mutex m;
  std::vector<int> order;
  std::vector<std::thread> th;
  for (int i = 0; i < 6; ++i) {
    th.emplace_back([&, i] {
      if (!line.take_by(kNever)) return;
      {
        std::lock_guard<std::mutex> lk(m);
        order.push_back(i);
      }
      line.give_back();
    });
    wait_until_waiting(line, i + 1);  // thread i stands in line before thread i + 1 comes
  }
  // A call that arrives now finds the GPU taken and others waiting: try_take never jumps the line.
  EXPECT_FALSE(line.try_take());
  line.give_back();
  for (auto& t : th) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  const GpuLine::Tally t = line.tally();
  EXPECT_EQ(t.waited, 6u);
  EXPECT_EQ(t.gave_up, 0u);
  EXPECT_LE(t.handover_ns, t.waited_ns);  // each handover is the end of a call's time in line
  EXPECT_LE(t.handover_ns, t.held_ns);    // and the start of its hold
  EXPECT_TRUE(line.try_take());  // free again, nobody in line
  line.give_back();
}

TEST(GpuLine, ACallThatGivesUpLeavesTheLineAndTheOthersKeepTheirOrder) {
  GpuLine line;
  line.set_mean_hold_ns(0.1 * kMs);
  ASSERT_TRUE(line.try_take());
  std::mutex m;
  std::vector<int> order;
  auto patient = [&](int id) {
    if (!line.take_by(kNever)) return;
    {
      std::lock_guard<std::mutex> lk(m);
      order.push_back(id);
    }
    line.give_back();
  };
  std::thread first(patient, 1);
  wait_until_waiting(line, 1);
  std::atomic<bool> impatient_got{true};
  // Its 200 ms is far beyond the expected wait of two 0.1 ms holds: it joins, and its deadline passes.
  std::thread impatient([&] { impatient_got = line.take_by(clock_ns() + 200 * kMs); });
  wait_until_waiting(line, 2);
  std::thread last(patient, 3);
  wait_until_waiting(line, 3);
  impatient.join();  // the GPU stayed taken
  EXPECT_FALSE(impatient_got);
  EXPECT_EQ(line.waiting(), 2);
  line.give_back();
  first.join();
  last.join();
  EXPECT_EQ(order, (std::vector<int>{1, 3}));
  const GpuLine::Tally t = line.tally();
  EXPECT_EQ(t.gave_up, 1u);
  EXPECT_EQ(t.not_joined, 0u);
  EXPECT_EQ(t.waited, 2u);
}

TEST(GpuLine, ACallDoesNotWaitWhenTheLineIsLongerThanItsDeadline) {
  GpuLine line;
  line.set_mean_hold_ns(50.0 * kMs);
  ASSERT_TRUE(line.try_take());
  EXPECT_FALSE(line.take_by(clock_ns() + 20 * kMs));  // the current hold alone is expected to last longer
  GpuLine::Tally t = line.tally();
  EXPECT_EQ(t.not_joined, 1u);  // it did not stand in line
  EXPECT_EQ(t.gave_up, 0u);
  line.give_back();
}

// Asked before a call copies its operands into pinned memory (thread staging), so that a call that
// will not wait does not copy them for nothing: the same answer as take_by's at once, counted the same.
TEST(GpuLine, ACallCanTellBeforeJoiningThatTheLineIsTooLong) {
  GpuLine line;
  line.set_mean_hold_ns(50.0 * kMs);
  EXPECT_FALSE(line.too_long_for(clock_ns() + 20 * kMs));  // the GPU is free
  ASSERT_TRUE(line.try_take());
  EXPECT_TRUE(line.too_long_for(clock_ns() + 20 * kMs));   // the current hold alone is expected to last longer
  EXPECT_FALSE(line.too_long_for(clock_ns() + 200 * kMs));
  EXPECT_TRUE(line.too_long_for(clock_ns() - 1));          // a deadline already passed
  GpuLine::Tally t = line.tally();
  EXPECT_EQ(t.not_joined, 2u);
  EXPECT_EQ(t.waited + t.gave_up, 0u);
  EXPECT_EQ(line.waiting(), 0);  // asking joins nothing
  line.give_back();
  EXPECT_TRUE(line.try_take());  // and takes nothing
  line.give_back();
}

TEST(GpuLine, OneLongHoldDoesNotStopTheNextCallsFromWaiting) {
  GpuLine line;
  line.set_mean_hold_ns(1.0 * kMs);
  ASSERT_TRUE(line.try_take());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // one hold of 100 mean holds
  line.give_back();
  // It counts as at most 4 mean holds: the mean is now at most 1.3 ms.
  ASSERT_TRUE(line.try_take());
  EXPECT_LE(line.expected_wait_ns(), uint64_t(1.31 * kMs));
  line.give_back();
  // A hold that set something up does not count at all.
  line.set_mean_hold_ns(1.0 * kMs);
  ASSERT_TRUE(line.try_take());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  line.give_back(false);
  ASSERT_TRUE(line.try_take());
  EXPECT_LE(line.expected_wait_ns(), uint64_t(1.0 * kMs));
  line.give_back();
}

TEST(GpuLine, ACancelledWaiterLeavesTheLineUsable) {
  GpuLine line;
  ASSERT_TRUE(line.try_take());
  std::atomic<bool> returned{false};
  pthread_t t;
  struct Arg {
    GpuLine* line;
    std::atomic<bool>* returned;
  } arg{&line, &returned};
  ASSERT_EQ(pthread_create(&t, nullptr,
                           [](void* p) -> void* {
                             Arg* a = static_cast<Arg*>(p);
                             a->line->take_by(clock_ns() + 300 * kMs);  // not cancellable while in line
                             a->returned->store(true);
                             pthread_testcancel();
                             return nullptr;
                           },
                           &arg),
            0);
  wait_until_waiting(line, 1);
  pthread_cancel(t);  // takes effect once it has left the line
  pthread_join(t, nullptr);
  EXPECT_TRUE(returned);
  EXPECT_EQ(line.waiting(), 0);
  line.give_back();
  EXPECT_TRUE(line.try_take());
  line.give_back();
}

TEST(GpuLine, AForkChildStartsWithAFreeGpu) {
  GpuLine line;
  ASSERT_TRUE(line.try_take());
  std::thread waiter([&] {
    if (line.take_by(kNever)) line.give_back();
  });
  wait_until_waiting(line, 1);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    line.reset();
    const bool ok = line.try_take() && line.waiting() == 0;
    line.give_back();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  line.give_back();
  waiter.join();
}

// A waiting call's work as a test sees it: which thread ran it, in what order among the others.
struct Job {
  int id;
  std::mutex* m;
  std::vector<std::pair<int, std::thread::id>>* ran;
  int sleep_ms = 0;
  static bool run(void* arg) {
    Job* j = static_cast<Job*>(arg);
    if (j->sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(j->sleep_ms));
    std::lock_guard<std::mutex> lk(*j->m);
    j->ran->push_back({j->id, std::this_thread::get_id()});
    return true;
  }
};

// N calls, one thread each, lined up in order behind the GPU this thread holds, each leaving its job
// as work (but call `no_work`); a call handed the GPU runs its own job and gives the GPU back, serving
// whoever waits then. run() gives the GPU back and waits for them all.
struct Lineup {
  std::mutex m;
  std::vector<std::pair<int, std::thread::id>> ran;  // (job, the thread that ran it), in the order run
  std::vector<Job> jobs;
  std::vector<GpuLine::Work> works;
  std::vector<GpuLine::Took> took;
  std::vector<std::thread::id> ids;  // each call's thread
  Lineup(int n, int sleep_ms, uint64_t expected_ns) : took(size_t(n), GpuLine::Took::No), ids(size_t(n)) {
    jobs.reserve(size_t(n));  // works point into it
    for (int i = 0; i < n; ++i) jobs.push_back(Job{i, &m, &ran, sleep_ms});
    for (Job& j : jobs) works.push_back(GpuLine::Work{Job::run, &j, expected_ns});
  }
  void run(GpuLine& line, int no_work = -1) {
    std::vector<std::thread> th;
    for (size_t i = 0; i < jobs.size(); ++i) {
      th.emplace_back([&, i] {
        ids[i] = std::this_thread::get_id();
        took[i] = line.take_or_serve_by(kNever, int(i) == no_work ? nullptr : &works[i]);
        if (took[i] == GpuLine::Took::Held) {
          Job::run(&jobs[i]);
          line.give_back();
        }
      });
      wait_until_waiting(line, int(i) + 1);
    }
    line.give_back();
    for (auto& t : th) t.join();
  }
};

TEST(GpuLine, TheHolderRunsAWaitingCallsWorkOnItsOwnThread) {
  GpuLine line;
  line.set_serves(8);
  ASSERT_TRUE(line.try_take());
  std::mutex m;
  std::vector<std::pair<int, std::thread::id>> ran;
  Job job{1, &m, &ran, 5};
  GpuLine::Work work{Job::run, &job, 0};
  GpuLine::Took took = GpuLine::Took::No;
  std::thread waiter([&] { took = line.take_or_serve_by(kNever, &work); });
  wait_until_waiting(line, 1);
  const uint64_t served_ns = line.give_back();
  waiter.join();
  EXPECT_EQ(took, GpuLine::Took::Served);  // it does not hold the GPU: nothing for it to give back
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0].second, std::this_thread::get_id());
  EXPECT_GE(served_ns, 5 * kMs);
  const GpuLine::Tally t = line.tally();
  EXPECT_EQ(t.served, 1u);
  EXPECT_EQ(t.served_ns, served_ns);
  EXPECT_EQ(t.waited, 1u);
  EXPECT_EQ(t.holds, 2u);  // the holder's own and the one it ran for the waiter
  EXPECT_TRUE(line.try_take());  // free: the served call left nothing held
  line.give_back();
}

TEST(GpuLine, ServingKeepsTheOrderAndACallWithoutWorkGetsTheGpu) {
  GpuLine line;
  line.set_serves(8);
  ASSERT_TRUE(line.try_take());
  Lineup calls(4, 0, 0);
  calls.run(line, 2);  // call 2 leaves no work (a staged call): it is handed the GPU and runs its own
  const auto& ran = calls.ran;
  ASSERT_EQ(ran.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(ran[size_t(i)].first, i);
  EXPECT_EQ(ran[0].second, std::this_thread::get_id());  // 0 and 1 by the first holder
  EXPECT_EQ(ran[1].second, std::this_thread::get_id());
  EXPECT_EQ(ran[2].second, calls.ids[2]);  // 2 by itself, and 3 by 2, its holder
  EXPECT_EQ(ran[3].second, calls.ids[2]);
  EXPECT_EQ(calls.took, (std::vector<GpuLine::Took>{GpuLine::Took::Served, GpuLine::Took::Served,
                                                    GpuLine::Took::Held, GpuLine::Took::Served}));
  EXPECT_EQ(line.tally().served, 3u);
}

TEST(GpuLine, AHolderServesAtMostItsCountInARow) {
  for (int serves : {0, 2}) {
    GpuLine line;
    line.set_serves(serves);
    ASSERT_TRUE(line.try_take());
    Lineup calls(3, 0, 0);
    calls.run(line);  // a call handed the GPU serves the rest, up to its count
    ASSERT_EQ(calls.ran.size(), 3u);
    int by_first = 0;
    for (auto& r : calls.ran) by_first += r.second == std::this_thread::get_id();
    EXPECT_EQ(by_first, serves) << serves;  // 0: each ran its own; 2: the third was handed the GPU
    EXPECT_EQ(line.tally().served, uint64_t(serves));
  }
}

// Serving stops at 20 ms of other calls' work, run or predicted: a call predicted to hold the GPU
// longer is handed the GPU, and so is the call after one that ran past the budget.
TEST(GpuLine, AHolderServesAtMost20MsOfOtherCallsWork) {
  for (const bool predicted : {false, true}) {
    GpuLine line;
    line.set_serves(8);
    ASSERT_TRUE(line.try_take());
    // Not predicted: the first runs 25 ms (a sleep lasts at least that). Predicted: 30 ms each.
    Lineup calls(3, predicted ? 1 : 25, predicted ? 30 * kMs : 0);
    calls.run(line);
    const auto& ran = calls.ran;
    ASSERT_EQ(ran.size(), 3u);
    if (predicted) {  // none served: each handed the GPU in turn
      for (int i = 0; i < 3; ++i) EXPECT_EQ(ran[size_t(i)].second, calls.ids[size_t(i)]);
      EXPECT_EQ(line.tally().served, 0u);
    } else {  // the first served, then the second handed the GPU; it serves the third
      EXPECT_EQ(ran[0].second, std::this_thread::get_id());
      EXPECT_EQ(ran[1].second, calls.ids[1]);
      EXPECT_EQ(ran[2].second, calls.ids[1]);
      EXPECT_EQ(line.tally().served, 2u);
    }
  }
}

// A call whose deadline passes while the holder serves the call ahead of it leaves the line, and
// its work never runs.
TEST(GpuLine, ACallThatGivesUpWhileAnotherIsServedIsNeverRun) {
  GpuLine line;
  line.set_serves(8);
  ASSERT_TRUE(line.try_take());
  std::mutex m;
  std::vector<std::pair<int, std::thread::id>> ran;
  Job late{2, &m, &ran};
  // The work served first lasts until the second call has given up (the line's own count says so).
  struct Slow {
    GpuLine* line;
    Job job;
    static bool run(void* arg) {
      Slow* s = static_cast<Slow*>(arg);
      const uint64_t until = clock_ns() + 5000 * kMs;
      while (s->line->tally().gave_up == 0 && clock_ns() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return Job::run(&s->job);
    }
  } slow{&line, Job{1, &m, &ran}};
  GpuLine::Work slow_work{Slow::run, &slow, 0}, late_work{Job::run, &late, 0};
  GpuLine::Took took_slow = GpuLine::Took::No, took_late = GpuLine::Took::Held;
  std::thread a([&] { took_slow = line.take_or_serve_by(kNever, &slow_work); });
  wait_until_waiting(line, 1);
  std::thread b([&] { took_late = line.take_or_serve_by(clock_ns() + 5 * kMs, &late_work); });
  wait_until_waiting(line, 2);
  line.give_back();  // serves the first; the second's deadline passes meanwhile
  a.join();
  b.join();
  EXPECT_EQ(took_slow, GpuLine::Took::Served);
  EXPECT_EQ(took_late, GpuLine::Took::No);
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0].first, 1);
  EXPECT_EQ(line.tally().gave_up, 1u);
  EXPECT_EQ(line.waiting(), 0);
  EXPECT_TRUE(line.try_take());  // nobody was handed the GPU
  line.give_back();
}

TEST(GpuLine, ACallWhoseWorkHasBegunWaitsForItPastItsDeadline) {
  GpuLine line;
  line.set_serves(8);
  line.set_mean_hold_ns(0.1 * kMs);
  ASSERT_TRUE(line.try_take());
  std::mutex m;
  std::vector<std::pair<int, std::thread::id>> ran;
  Job job{7, &m, &ran, 600};  // runs well past the waiter's deadline
  GpuLine::Work work{Job::run, &job, 0};
  GpuLine::Took took = GpuLine::Took::No;
  uint64_t returned_at = 0;
  const uint64_t deadline = clock_ns() + 300 * kMs;
  std::thread waiter([&] {
    took = line.take_or_serve_by(deadline, &work);
    returned_at = clock_ns();
  });
  wait_until_waiting(line, 1);
  line.give_back();  // runs the job: 600 ms
  const uint64_t job_done = clock_ns();
  waiter.join();
  EXPECT_EQ(took, GpuLine::Took::Served);  // not given up: its work ran to the end
  EXPECT_GE(returned_at, job_done - kMs);   // and it returned only after its work ended
  EXPECT_GT(returned_at, deadline);
  EXPECT_EQ(line.tally().gave_up, 0u);
}

}  // namespace
}  // namespace gofl
