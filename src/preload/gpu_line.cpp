#include "preload/gpu_line.h"

#include <errno.h>
#include <time.h>

#include <algorithm>

#include "common/clock.h"

namespace gofl {

// A waiting call, on its own stack: its condition variable (CLOCK_MONOTONIC, like the deadlines),
// the work it leaves to the holder (or none), and what became of it.
struct GpuLine::Waiter {
  enum State { Waiting, Granted, Serving, Served };
  pthread_cond_t cv;
  Work* work = nullptr;
  State state = Waiting;
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
// A holder serves another call only while the work it ran and that call's predicted hold stay
// within this: a handover costs a few ms at most, which matters beside holds of a few ms (PySCF's
// dsymm: about 2 ms) but not beside long ones, and the holder's own program waits meanwhile.
constexpr uint64_t kServeBudgetNs = 20000000;
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

bool GpuLine::too_long_for(uint64_t deadline_ns) {
  pthread_mutex_lock(&m_);
  const uint64_t now = clock_ns();
  const bool free = !held_ && !first_;
  const bool no = !free && (deadline_ns <= now || now + expected_wait_locked(now) > deadline_ns);
  if (no) ++tally_.not_joined;
  pthread_mutex_unlock(&m_);
  return no;
}

GpuLine::Took GpuLine::take_or_serve_by(uint64_t deadline_ns, Work* work) {
  pthread_mutex_lock(&m_);
  const uint64_t now = clock_ns();
  if (take_if_free_locked(now)) {
    pthread_mutex_unlock(&m_);
    return Took::Held;
  }
  if (deadline_ns <= now || now + expected_wait_locked(now) > deadline_ns) {
    ++tally_.not_joined;
    pthread_mutex_unlock(&m_);
    return Took::No;
  }
  Waiter w;
  w.work = work;
  w.prev = last_;
  (last_ ? last_->next : first_) = &w;
  last_ = &w;
  ++waiting_;
  const timespec until{time_t(deadline_ns / 1000000000u), long(deadline_ns % 1000000000u)};
  // pthread_cond_timedwait is a cancellation point: a thread cancelled in line would leave m_ locked
  // and its Waiter linked. The wait is bounded, so it is not cancellable.
  int cancel_state = 0;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  while (w.state == Waiter::Waiting) {
    if (pthread_cond_timedwait(&w.cv, &m_, &until) == ETIMEDOUT) break;
  }
  // The holder has begun this call's work: it ends within one hold, deadline or not.
  while (w.state == Waiter::Serving) pthread_cond_wait(&w.cv, &m_);
  pthread_setcancelstate(cancel_state, nullptr);
  const uint64_t ran = clock_ns();
  const uint64_t in_line = ran - now;
  Took took = Took::No;
  if (w.state == Waiter::Waiting) {  // the deadline came first: still in line
    (w.prev ? w.prev->next : first_) = w.next;
    (w.next ? w.next->prev : last_) = w.prev;
    --waiting_;
    ++tally_.gave_up;
    tally_.gave_up_ns += in_line;
  } else {  // give_back() took it out of the line, and made this call the holder or ran its work
    ++tally_.waited;
    tally_.waited_ns += in_line;  // a served call's includes its work
    if (w.state == Waiter::Granted) {
      tally_.handover_ns += ran - w.granted_at;
      took = Took::Held;
    } else {
      took = Took::Served;
    }
  }
  pthread_mutex_unlock(&m_);
  return took;
}

void GpuLine::end_hold_locked(uint64_t now, bool timed) {
  const double hold = double(now - held_since_);
  ++tally_.holds;
  tally_.held_ns += uint64_t(hold);
  if (timed) {
    mean_hold_ns_ = mean_hold_ns_ > 0
                        ? mean_hold_ns_ + kHoldWeight * (std::min(hold, kHoldCap * mean_hold_ns_) - mean_hold_ns_)
                        : hold;
  }
}

GpuLine::Waiter* GpuLine::pop_first_locked() {
  Waiter* w = first_;
  first_ = w->next;
  (first_ ? first_->prev : last_) = nullptr;
  --waiting_;
  return w;
}

uint64_t GpuLine::give_back(bool timed) {
  pthread_mutex_lock(&m_);
  uint64_t now = clock_ns();
  end_hold_locked(now, timed);
  // The first in line gets the GPU even if its deadline has just passed: it has not run yet to
  // leave the line, and it takes the GPU as soon as it does (its time in line is then its bound
  // and a little more). Its work, if it left any, runs here first, while the GPU stays this thread's.
  uint64_t served_ns = 0;
  for (int n = 0; first_ && first_->work && n < serves_ && served_ns + first_->work->expected_ns < kServeBudgetNs;
       ++n) {
    Waiter* w = pop_first_locked();
    w->state = Waiter::Serving;
    held_since_ = now;
    pthread_mutex_unlock(&m_);
    const bool work_timed = w->work->run(w->work->arg);
    pthread_mutex_lock(&m_);
    const uint64_t end = clock_ns();
    end_hold_locked(end, work_timed);
    ++tally_.served;
    tally_.served_ns += end - now;
    served_ns += end - now;
    now = end;
    w->state = Waiter::Served;  // w lives until its thread gets m_ after this one lets it go
    pthread_cond_signal(&w->cv);
  }
  if (first_) {
    Waiter* w = pop_first_locked();
    w->state = Waiter::Granted;
    w->granted_at = now;
    held_since_ = now;
    pthread_cond_signal(&w->cv);
  } else {
    held_ = false;
  }
  pthread_mutex_unlock(&m_);
  return served_ns;
}

void GpuLine::set_serves(int n) {
  pthread_mutex_lock(&m_);
  serves_ = std::max(0, n);
  pthread_mutex_unlock(&m_);
}

int GpuLine::serves() {
  pthread_mutex_lock(&m_);
  const int n = serves_;
  pthread_mutex_unlock(&m_);
  return n;
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
