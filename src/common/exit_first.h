// Work that must come first when the process exits: before every exit handler (atexit, static
// destructors), which may tear down the CUDA libraries that a helper thread of the library is still
// using. glibc's exit() runs the exiting thread's thread_local destructors before any exit handler
// (stdlib/exit.c, __run_exit_handlers), so a function kept in a thread_local of the main thread runs
// first when main returns or the main thread calls exit() (Python's exit). An atexit handler registered
// before a library was loaded runs after that library's own handlers: the fallback for an exit from
// another thread.
#pragma once

namespace gofl {

// On the process's main thread `fn` is kept (true): it runs when that thread ends (the process's
// exit, or a pthread_exit of the main thread), before any exit handler, once however often it was
// asked. False on any other thread (its thread_local destructors also run when it merely ends), or
// with four functions kept already. After a thread's first call, a call costs a thread_local read.
bool at_main_thread_exit(void (*fn)());

}  // namespace gofl
