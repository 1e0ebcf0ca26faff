// A program for test_exit_first.cpp: what it prints says in which order its exit ran the functions
// kept by gofl::at_main_thread_exit and an exit handler registered after them. With "exit" it ends by
// exit() from main, else by returning from main.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <thread>

#include "common/exit_first.h"

namespace {
void say(const char* s) { (void)!write(1, s, strlen(s)); }
void kept_first() { say("kept "); }
void kept_on_a_thread() { say("kept-on-a-thread "); }
void exit_handler() { say("exit-handler\n"); }
}  // namespace

int main(int argc, char** argv) {
  std::thread other([] {
    if (gofl::at_main_thread_exit(kept_on_a_thread)) say("a-thread-was-taken-for-main ");
  });
  other.join();  // its thread_local destructors have run: nothing may have been kept there
  if (!gofl::at_main_thread_exit(kept_first) || !gofl::at_main_thread_exit(kept_first)) return 2;
  if (atexit(exit_handler) != 0) return 3;  // registered after: an exit handler runs after the kept ones
  if (argc > 1 && strcmp(argv[1], "exit") == 0) exit(0);
  return 0;
}
