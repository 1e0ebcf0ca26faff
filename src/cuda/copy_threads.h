// The engine's copy threads: a few host threads that run the parts of one host copy (pageable <->
// pinned) in parallel while the DMA engine moves the previous chunk. Private to the engine files.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gofl {
namespace cuda {

// A few host threads that run the parts of one copy in parallel; the caller works too. One job at
// a time (the engine runs one call at a time).
class CopyPool {
 public:
  // `on_thread` runs first in each worker (the engine's GPU made the thread's current device).
  // An idle worker spins `spin_us` before it sleeps: a call's copies come in jobs tens of
  // microseconds apart (a chunk's DMA, a panel's kernel), and waking sleeping threads for each took
  // longer than that.
  void start(int threads, long spin_us, const std::function<void()>& on_thread) {
    spin_ = std::chrono::microseconds(spin_us);
    for (int i = 1; i < threads; ++i)
      workers_.emplace_back([this, on_thread] {
        on_thread();
        loop();
      });
    // Detached: the process may exit while they wait; they hold nothing that needs cleaning up.
    for (auto& t : workers_) t.detach();
  }
  int threads() const { return int(workers_.size()) + 1; }

  // Runs fn(p) for p in [0, parts); returns when every part is done.
  void run(int parts, const std::function<void(int)>& fn) {
    if (parts <= 0) return;
    if (parts == 1 || workers_.empty()) {
      for (int p = 0; p < parts; ++p) fn(p);
      return;
    }
    Job job;
    job.fn = &fn;
    job.parts = parts;
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = &job;
      gen_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    work(job);
    std::unique_lock<std::mutex> lk(m_);
    job_ = nullptr;  // late wakers skip it
    done_.wait(lk, [this] { return in_job_ == 0; });
  }

 private:
  struct Job {
    const std::function<void(int)>* fn = nullptr;
    int parts = 0;
    std::atomic<int> next{0};
  };
  static void work(Job& j) {
    for (int p; (p = j.next.fetch_add(1, std::memory_order_relaxed)) < j.parts;) (*j.fn)(p);
  }
  void loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      if (spin_.count() > 0 && gen_.load(std::memory_order_acquire) == seen) {
        lk.unlock();
        const auto until = std::chrono::steady_clock::now() + spin_;
        while (gen_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until) pause();
        lk.lock();
      }
      cv_.wait(lk, [&] { return job_ != nullptr && gen_.load(std::memory_order_relaxed) != seen; });
      seen = gen_.load(std::memory_order_relaxed);
      Job* j = job_;
      ++in_job_;
      lk.unlock();
      work(*j);
      lk.lock();
      if (--in_job_ == 0) done_.notify_all();
    }
  }
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::chrono::microseconds spin_{0};
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_, done_;
  Job* job_ = nullptr;
  std::atomic<uint64_t> gen_{0};  // bumped under m_ for each job; spinning workers read it without
  int in_job_ = 0;
};

}  // namespace cuda
}  // namespace gofl
