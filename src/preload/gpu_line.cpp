#include "preload/gpu_line.h"

#include <errno.h>
#include <time.h>

#include <algorithm>

#include "common/clock.h"

namespace gofl {

// A waiting call, on its own stack: its condition variable (CLOCK_MONOTONIC, like the deadlines),
// whether the GPU was handed to it and when.
struct GpuLine::Waiter {
  pthread_cond_t cv;
  bool granted = false;
  uint64_t granted_at = 0;
  Waiter* prev = nullptr;
  Waiter* next = nullptr;
  Waiter() {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&cv, &a);
    pthread_condattr_destroy(&a);
  }
  ~Waiter() { pthread_cond_destroy(&cv); }
};

namespace {
// The mean hold moves this far towards each new hold: about the last ten holds count. A hold counts
// as at most kHoldCap times the mean, so that one long call (a large dgemm among PySCF's small
// dsymm calls) does not keep the next dozens of calls from waiting.
constexpr double kHoldWeight = 0.1;
constexpr double kHoldCap = 4.0;
}  // namespace

bool GpuLine::take_if_free_locked(uint64_t now) {
  if (held_ || first_) return false;
  held_ = true;
  held_since_ = now;
  return true;
}

bool GpuLine::try_take() {
  pthread_mutex_lock(&m_);  // held only for a few instructions at a time
  const bool took = take_if_free_locked(clock_ns());
  pthread_mutex_unlock(&m_);
  return took;
}

uint64_t GpuLine::expected_wait_locked(uint64_t now) const {
  if (!held_ || mean_hold_ns_ <= 0) return 0;
  const double into = double(now - held_since_);
  return uint64_t(std::max(0.0, mean_hold_ns_ - into) + double(waiting_) * mean_hold_ns_);
}

uint64_t GpuLine::expected_wait_ns() {
  pthread_mutex_lock(&m_);
  const uint64_t w = expected_wait_locked(clock_ns());
  pthread_mutex_unlock(&m_);
  return w;
}

int GpuLine::waiting() {
  pthread_mutex_lock(&m_);
  const int n = waiting_;
  pthread_mutex_unlock(&m_);
  return n;
}

void GpuLine::set_mean_hold_ns(double ns) {
  pthread_mutex_lock(&m_);
  mean_hold_ns_ = ns;
  pthread_mutex_unlock(&m_);
}

bool GpuLine::take_by(uint64_t deadline_ns) {
  pthread_mutex_lock(&m_);
  const uint64_t now = clock_ns();
  if (take_if_free_locked(now)) {
    pthread_mutex_unlock(&m_);
    return true;
  }
  if (deadline_ns <= now || now + expected_wait_locked(now) > deadline_ns) {
    ++tally_.not_joined;
    pthread_mutex_unlock(&m_);
    return false;
  }
  Waiter w;
  w.prev = last_;
  (last_ ? last_->next : first_) = &w;
  last_ = &w;
  ++waiting_;
  const timespec until{time_t(deadline_ns / 1000000000u), long(deadline_ns % 1000000000u)};
  // pthread_cond_timedwait is a cancellation point: a thread cancelled in line would leave m_ locked
  // and its Waiter linked. The wait is bounded, so it is not cancellable.
  int cancel_state = 0;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  while (!w.granted) {
    if (pthread_cond_timedwait(&w.cv, &m_, &until) == ETIMEDOUT) break;
  }
  pthread_setcancelstate(cancel_state, nullptr);
  const uint64_t ran = clock_ns();
  const uint64_t in_line = ran - now;
  if (w.granted) {  // give_back() took it out of the line and made this call the holder
    ++tally_.waited;
    tally_.waited_ns += in_line;
    tally_.handover_ns += ran - w.granted_at;
  } else {
    (w.prev ? w.prev->next : first_) = w.next;
    (w.next ? w.next->prev : last_) = w.prev;
    --waiting_;
    ++tally_.gave_up;
    tally_.gave_up_ns += in_line;
  }
  pthread_mutex_unlock(&m_);
  return w.granted;
}

void GpuLine::give_back(bool timed) {
  pthread_mutex_lock(&m_);
  const uint64_t now = clock_ns();
  const double hold = double(now - held_since_);
  ++tally_.holds;
  tally_.held_ns += uint64_t(hold);
  if (timed) {
    mean_hold_ns_ = mean_hold_ns_ > 0
                        ? mean_hold_ns_ + kHoldWeight * (std::min(hold, kHoldCap * mean_hold_ns_) - mean_hold_ns_)
                        : hold;
  }
  // The first in line gets the GPU even if its deadline has just passed: it has not run yet to
  // leave the line, and it takes the GPU as soon as it does (its time in line is then its bound
  // and a little more).
  if (Waiter* w = first_) {
    first_ = w->next;
    (first_ ? first_->prev : last_) = nullptr;
    --waiting_;
    w->granted = true;
    w->granted_at = now;
    held_since_ = now;
    pthread_cond_signal(&w->cv);
  } else {
    held_ = false;
  }
  pthread_mutex_unlock(&m_);
}

void GpuLine::reset() {
  pthread_mutex_init(&m_, nullptr);
  held_ = false;
  held_since_ = 0;
  mean_hold_ns_ = 0;
  first_ = last_ = nullptr;
  waiting_ = 0;
  tally_ = Tally{};
}

GpuLine::Tally GpuLine::tally() {
  pthread_mutex_lock(&m_);
  const Tally t = tally_;
  pthread_mutex_unlock(&m_);
  return t;
}

}  // namespace gofl
