// The line for the GPU (src/preload/gpu_line.h) with real threads: calls get the GPU in the order
// they came, a call whose deadline passes leaves the line and the GPU, a call that the line's
// expected wait would keep past its deadline does not wait, and a fork child starts with a free GPU.
#include "preload/gpu_line.h"

#include <gtest/gtest.h>
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

// Waits until `n` calls stand in line (their expected wait grows by a mean hold each).
void wait_for_line(GpuLine& line, uint64_t one_hold_ns, int n) {
  for (int i = 0; i < 5000 && line.expected_wait_ns() < uint64_t(n) * one_hold_ns; ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
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
  EXPECT_GE(t.gave_up_ns, kMs);
}

TEST(GpuLine, WaitersGetTheGpuInTheOrderTheyCame) {
  GpuLine line;
  ASSERT_TRUE(line.try_take());
  // Teach the line a hold of about 2 ms so that expected_wait_ns() counts the waiters.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  line.give_back();
  ASSERT_TRUE(line.try_take());
  const uint64_t hold = line.expected_wait_ns();
  ASSERT_GT(hold, 0u);
  std::mutex m;
  std::vector<int> order;
  std::vector<std::thread> th;
  for (int i = 0; i < 6; ++i) {
    th.emplace_back([&, i] {
      ASSERT_TRUE(line.take_by(clock_ns() + 20000 * kMs));
      {
        std::lock_guard<std::mutex> lk(m);
        order.push_back(i);
      }
      line.give_back();
    });
    wait_for_line(line, hold, i + 1);  // thread i stands in line before thread i + 1 comes
  }
  // A call that arrives now finds the GPU taken and others waiting: try_take never jumps the line.
  EXPECT_FALSE(line.try_take());
  line.give_back();
  for (auto& t : th) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  const GpuLine::Tally t = line.tally();
  EXPECT_EQ(t.waited, 6u);
  EXPECT_EQ(t.gave_up, 0u);
  EXPECT_TRUE(line.try_take());  // free again, nobody in line
  line.give_back();
}

TEST(GpuLine, ACallThatGivesUpLeavesTheLineAndTheOthersKeepTheirOrder) {
  GpuLine line;
  ASSERT_TRUE(line.try_take());
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  line.give_back();
  ASSERT_TRUE(line.try_take());
  const uint64_t hold = line.expected_wait_ns();
  std::atomic<int> got_first{0}, got_last{0};
  std::atomic<bool> short_gave_up{false};
  std::thread first([&] {
    got_first = line.take_by(clock_ns() + 20000 * kMs) ? 1 : -1;
    if (got_first == 1) line.give_back();
  });
  wait_for_line(line, hold, 1);
  std::thread impatient([&] { short_gave_up = !line.take_by(clock_ns() + 30 * kMs); });
  wait_for_line(line, hold, 2);
  std::thread last([&] {
    got_last = line.take_by(clock_ns() + 20000 * kMs) ? 1 : -1;
    if (got_last == 1) line.give_back();
  });
  impatient.join();  // its 30 ms ran out while the GPU stayed taken
  EXPECT_TRUE(short_gave_up);
  line.give_back();
  first.join();
  last.join();
  EXPECT_EQ(got_first, 1);
  EXPECT_EQ(got_last, 1);
  const GpuLine::Tally t = line.tally();
  EXPECT_EQ(t.gave_up, 1u);
  EXPECT_EQ(t.waited, 2u);
}

TEST(GpuLine, ACallDoesNotWaitWhenTheLineIsLongerThanItsDeadline) {
  GpuLine line;
  ASSERT_TRUE(line.try_take());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // holds take about 50 ms
  line.give_back();
  ASSERT_TRUE(line.try_take());
  const uint64_t t0 = clock_ns();
  EXPECT_FALSE(line.take_by(clock_ns() + 20 * kMs));  // the current hold alone is expected to last longer
  EXPECT_LT(clock_ns() - t0, 20 * kMs);               // it said so at once, without waiting out its 20 ms
  EXPECT_EQ(line.tally().not_joined, 1u);
  line.give_back();
}

TEST(GpuLine, AForkChildStartsWithAFreeGpu) {
  GpuLine line;
  ASSERT_TRUE(line.try_take());
  std::thread waiter([&] {
    if (line.take_by(clock_ns() + 20000 * kMs)) line.give_back();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    line.reset();
    const bool ok = line.try_take();
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
