#include "common/exit_first.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace gofl {
namespace {

// The functions, run latest first as exit handlers are; a few homes use it (the start, the warming).
struct FirstAtExit {
  void (*fns[4])() = {};
  int n = 0;
  ~FirstAtExit() {
    while (n > 0) fns[--n]();
  }
};

}  // namespace

bool at_main_thread_exit(void (*fn)()) {
  thread_local int main_thread = -1;  // unknown, 0 or 1
  if (main_thread < 0) main_thread = pid_t(syscall(SYS_gettid)) == getpid() ? 1 : 0;
  if (!main_thread || !fn) return false;
  thread_local FirstAtExit first;
  for (int i = 0; i < first.n; ++i)
    if (first.fns[i] == fn) return true;
  if (first.n == int(sizeof first.fns / sizeof first.fns[0])) return false;
  first.fns[first.n++] = fn;
  return true;
}

}  // namespace gofl
