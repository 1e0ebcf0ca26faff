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
#include <vector>

#include "common/clock.h"

namespace gofl {
namespace {

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kNever = uint64_t(1) << 62;  // a deadline no test reaches (ctest's timeout ends a hang)

void wait_until_waiting(GpuLine& line, int n) {
  while (line.waiting() != n) std::this_thread::sleep_for(std::chrono::microseconds(100));
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

}  // namespace
}  // namespace gofl
