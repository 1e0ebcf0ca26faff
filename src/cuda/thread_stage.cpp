// ThreadStage (thread_stage.h): a thread's pinned buffer, the call's operand ranges in it, and the
// outputs written back after the GPU was given back.
#include "cuda/thread_stage.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <utility>

#include "cuda/cuda_libraries.h"

namespace gofl {
namespace cuda {

namespace {
// Pinned buffers of threads that ended, for the next thread that stages: an OpenMP program's
// threads live long, but a program that makes threads per task would otherwise pin anew each time.
std::mutex& g_spare_m = *new std::mutex;
std::vector<std::pair<char*, size_t>>& g_spare = *new std::vector<std::pair<char*, size_t>>;

// Pinned memory is taken in steps of this size and at least this much (three 956² float64 matrices
// fit the first one).
constexpr size_t kStep = 32u << 20;

char* take_pinned(size_t want, size_t* got) {
  {
    std::lock_guard<std::mutex> lk(g_spare_m);
    for (size_t i = 0; i < g_spare.size(); ++i)
      if (g_spare[i].second >= want) {
        char* p = g_spare[i].first;
        *got = g_spare[i].second;
        g_spare.erase(g_spare.begin() + std::ptrdiff_t(i));
        return p;
      }
  }
  const size_t bytes = (want + kStep - 1) / kStep * kStep;
  void* p = nullptr;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocDefault) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  *got = bytes;
  return static_cast<char*>(p);
}

bool overlaps(const char* a, size_t an, const char* b, size_t bn) { return a < b + bn && b < a + an; }

// The stages that hold a call now (between stage() and finish()), so that the thread serving a call
// finds its stage. One lookup a GPU call.
std::mutex& g_active_m = *new std::mutex;
std::vector<ThreadStage*>& g_active = *new std::vector<ThreadStage*>;
void set_active(ThreadStage* s, bool on) {
  std::lock_guard<std::mutex> lk(g_active_m);
  const auto at = std::find(g_active.begin(), g_active.end(), s);
  if (on && at == g_active.end()) g_active.push_back(s);
  if (!on && at != g_active.end()) g_active.erase(at);
}
}  // namespace

ThreadStage& ThreadStage::mine() {
  static thread_local ThreadStage s;
  return s;
}

ThreadStage::~ThreadStage() {
  set_active(this, false);
  if (!buf_) return;
  std::lock_guard<std::mutex> lk(g_spare_m);
  g_spare.emplace_back(buf_, cap_);
}

ThreadStage* ThreadStage::for_call(const gofl_call* c) {
  if (!c) return nullptr;
  ThreadStage& s = mine();
  if (s.call_ == c) return &s;
  std::lock_guard<std::mutex> lk(g_active_m);
  for (ThreadStage* t : g_active)
    if (t->call_ == c) return t;
  return nullptr;
}

bool ThreadStage::stage(const gofl_call& c, size_t cap) {
  set_active(this, false);
  call_ = nullptr;
  used_ = false;
  ranges_.clear();
  writes_.clear();
  size_t need = 0;
  for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
    const gofl_call_operand& o = c.operands[i];
    if (!o.ptr) continue;
    if (o.elems <= 0) return false;  // an extent not known before the call
    const size_t bytes = size_t(o.elems) * o.elem_size;
    need += (o.role == GOFL_INOUT ? 2 : 1) * bytes;
  }
  if (need == 0 || need > cap) return false;
  if (need > cap_) {
    size_t got = 0;
    char* fresh = take_pinned(need, &got);
    if (!fresh) return false;
    if (buf_) cudaFreeHost(buf_);  // a larger call than this thread made before: rare
    buf_ = fresh;
    cap_ = got;
  }
  char* at = buf_;
  for (int i = 0; i < c.n_operands && i < GOFL_MAX_OPERANDS; ++i) {
    const gofl_call_operand& o = c.operands[i];
    if (!o.ptr) continue;
    const char* host = static_cast<const char*>(o.ptr);
    const size_t bytes = size_t(o.elems) * o.elem_size;
    if (o.role == GOFL_IN || o.role == GOFL_INOUT) {
      // The whole extent, gaps between columns included: it lies inside the program's array.
      std::memcpy(at, host, bytes);
      ranges_.push_back({host, bytes, at, false});
      at += bytes;
    }
    if (o.role == GOFL_OUT || o.role == GOFL_INOUT) {
      ranges_.push_back({host, bytes, at, true});
      at += bytes;
    }
  }
  call_ = &c;
  set_active(this, true);
  return true;
}

const char* ThreadStage::input(const char* host, size_t bytes) const {
  for (const Range& r : ranges_)
    if (!r.out && host >= r.host && host + bytes <= r.host + r.bytes) {
      used_ = true;
      return r.pinned + (host - r.host);
    }
  return nullptr;
}

char* ThreadStage::output(const char* host, size_t span, size_t packed) const {
  for (const Range& r : ranges_) {
    if (!r.out || host < r.host || host + span > r.host + r.bytes) continue;
    char* at = r.pinned + (host - r.host);  // packed <= span: it stays inside the range
    for (const Write& w : writes_)
      if (overlaps(at, packed, w.pinned, w.v.total())) return nullptr;
    return at;
  }
  return nullptr;
}

void ThreadStage::defer(const HostView& v, const char* pinned) {
  used_ = true;
  writes_.push_back({v, pinned});
}

bool ThreadStage::pending(const char* host, size_t bytes) const {
  for (const Write& w : writes_)
    if (overlaps(host, bytes, w.v.base, w.v.span())) return true;
  return false;
}

bool ThreadStage::flush() {
  if (writes_.empty()) return false;
  for (const Write& w : writes_) w.v.copy(const_cast<char*>(w.pinned), 0, 0, w.v.total(), true);
  writes_.clear();
  return true;
}

double ThreadStage::finish(const gofl_call* c, bool ok, bool* used) {
  if (used) *used = false;
  if (!c || call_ != c) return 0;
  set_active(this, false);  // before anything changes: a serving thread reads call_ of listed stages
  if (used) *used = used_;
  const auto t0 = std::chrono::steady_clock::now();
  if (ok) flush();
  writes_.clear();
  ranges_.clear();
  call_ = nullptr;
  used_ = false;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace cuda
}  // namespace gofl
