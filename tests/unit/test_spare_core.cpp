// Sparing a core (src/preload/spare_core.h) on the real OpenBLAS builds programs use: the system's
// libopenblas.so.0, Debian's libblas.so.3 (whose threads are libopenblas.so.0's), NumPy's and SciPy's
// wheels (scipy_openblas...64_ and scipy_openblas... names). Found from the real function, lowered by
// one, put back (also after a save and restore around the call, for calls of two threads at once,
// and in a fork child); nothing for a library without thread controls or one that leaves a core free.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/table.h"
#include "preload/spare_core.h"

namespace {

struct Library {
  void* handle = nullptr;
  void* real = nullptr;           // a BLAS function it defines: the "real function" of a call
  int (*get)() = nullptr;         // its thread controls, as the test reads them
  void (*set)(int) = nullptr;
};

Library open_library(const std::string& path, const char* fn, const char* get, const char* set) {
  Library l;
  l.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!l.handle) return l;
  l.real = dlsym(l.handle, fn);
  l.get = reinterpret_cast<int (*)()>(dlsym(l.handle, get));
  l.set = reinterpret_cast<void (*)(int)>(dlsym(l.handle, set));
  return l;
}

// The system's libopenblas.so.0, with `fn` as the call's real function.
Library system_openblas(const char* fn) {
  return open_library("libopenblas.so.0", fn, "openblas_get_num_threads", "openblas_set_num_threads");
}

// Where a library needed is missing: CI (GOFL_REQUIRE_ALL_TOOLS) fails, elsewhere the test skips.
#define NEED(cond, what)                                                            \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      if (std::getenv("GOFL_REQUIRE_ALL_TOOLS")) FAIL() << what << " is missing";   \
      GTEST_SKIP() << what << " is missing";                                        \
    }                                                                               \
  } while (0)

#define NEED_ALL(l, what) NEED((l).real && (l).get && (l).set, what)

// A count at least the cores and at least 3: the library would keep every core busy.
int every_core() { return std::max(gofl::process_cores(), 3); }

// Sets the library to every core; false where its build caps the count below (NUM_THREADS).
bool on_every_core(const Library& l) {
  l.set(every_core());
  return l.get() == every_core();
}
#define EVERY_CORE(l) \
  if (!on_every_core(l)) GTEST_SKIP() << "this OpenBLAS runs at most " << (l).get() << " threads, fewer than the cores"

// As the resolver does when it finds a real function, then as a call does.
gofl::SparedCore noted_then_spared(const void* real, int scheme) {
  gofl::spare_core_note(real, scheme);
  return gofl::spare_core_in(real);
}

void lowers_and_puts_back(const Library& l, int scheme) {
  EVERY_CORE(l);
  const gofl::SparedCore s = noted_then_spared(l.real, scheme);
  ASSERT_GE(s.lib, 0);
  EXPECT_EQ(s.program_threads, every_core());
  EXPECT_EQ(s.call_threads, every_core() - 1);
  EXPECT_EQ(l.get(), every_core() - 1);  // what a call made now runs with
  gofl::give_core_back(s);
  EXPECT_EQ(l.get(), every_core());
}

}  // namespace

TEST(SpareCore, TheSystemOpenBlasRunsACallWithOneThreadFewerThenGetsItsCountBack) {
  const Library l = system_openblas("dgemm_");
  NEED_ALL(l, "libopenblas.so.0");
  uint64_t before = 0, after = 0;
  int p = 0, c = 0;
  gofl::spared_core_counts(&before, &p, &c);
  lowers_and_puts_back(l, GOFL_SCHEME_STD);
  gofl::spared_core_counts(&after, &p, &c);
  EXPECT_EQ(after, before + 1);  // the summary's count
  EXPECT_EQ(p, every_core());
  EXPECT_EQ(c, every_core() - 1);
}

TEST(SpareCore, ALibraryThatLeavesACoreFreeOrRunsTwoThreadsIsLeftAsItIs) {
  const Library l = system_openblas("dgetrf_");
  NEED_ALL(l, "libopenblas.so.0");
  // Two threads: one would also change OpenBLAS's affinity. Fewer than the cores: one is free.
  for (const int threads : {1, 2, gofl::process_cores() - 1}) {
    if (threads < 1) continue;
    l.set(threads);
    const gofl::SparedCore s = noted_then_spared(l.real, GOFL_SCHEME_STD);
    EXPECT_LT(s.lib, 0) << threads;
    EXPECT_EQ(l.get(), threads);
    gofl::give_core_back(s);  // nothing to put back
    EXPECT_EQ(l.get(), threads);
  }
}

TEST(SpareCore, ACountTheProgramSetsDuringTheCallStands) {
  const Library l = system_openblas("dgemm_");
  NEED_ALL(l, "libopenblas.so.0");
  EVERY_CORE(l);
  const gofl::SparedCore s = noted_then_spared(l.real, GOFL_SCHEME_STD);
  ASSERT_GE(s.lib, 0);
  l.set(1);  // another thread of the program, meanwhile (neither the program's count nor the lowered one)
  gofl::give_core_back(s);
  EXPECT_EQ(l.get(), 1);
  gofl::spare_core_check();  // nor at the next call
  EXPECT_EQ(l.get(), 1);
}

TEST(SpareCore, ASaveAndRestoreAroundTheCallGivesTheProgramItsCountBack) {
  // threadpoolctl's limits on another thread: it saves the count it sees (the lowered one), sets
  // its own, and restores the saved one after the spared call ended.
  const Library l = system_openblas("dgemm_");
  NEED_ALL(l, "libopenblas.so.0");
  EVERY_CORE(l);
  const gofl::SparedCore s = noted_then_spared(l.real, GOFL_SCHEME_STD);
  ASSERT_GE(s.lib, 0);
  const int saved = l.get();
  EXPECT_EQ(saved, every_core() - 1);
  l.set(1);
  gofl::give_core_back(s);
  EXPECT_EQ(l.get(), 1);  // the other thread's limit stands while it lasts
  gofl::spare_core_check();
  EXPECT_EQ(l.get(), 1);
  l.set(saved);  // its restore: the lowered count, which no one chose for good
  gofl::spare_core_check();
  EXPECT_EQ(l.get(), every_core());
}

TEST(SpareCore, CallsOnSeveralThreadsShareOneLowering) {
  const Library l = system_openblas("dgemm_");
  NEED_ALL(l, "libopenblas.so.0");
  EVERY_CORE(l);
  const gofl::SparedCore a = noted_then_spared(l.real, GOFL_SCHEME_STD);
  const gofl::SparedCore b = gofl::spare_core_in(l.real);  // a second call while the first runs
  ASSERT_GE(a.lib, 0);
  ASSERT_GE(b.lib, 0);
  EXPECT_EQ(b.program_threads, every_core());  // not the lowered count taken for the program's
  EXPECT_EQ(l.get(), every_core() - 1);
  gofl::give_core_back(a);
  EXPECT_EQ(l.get(), every_core() - 1);  // the second still runs
  gofl::give_core_back(b);
  EXPECT_EQ(l.get(), every_core());
}

TEST(SpareCore, AForkChildGetsTheProgramsCountBack) {
  const Library l = system_openblas("dgemm_");
  NEED_ALL(l, "libopenblas.so.0");
  EVERY_CORE(l);
  const gofl::SparedCore s = noted_then_spared(l.real, GOFL_SCHEME_STD);
  ASSERT_GE(s.lib, 0);
  // Forked while the call runs (on another thread of the parent, say): the child never ends it.
  const pid_t pid = fork();
  if (pid == 0) {
    gofl::spare_core_fork_child();  // the library's atfork handler
    gofl::spare_core_check();       // the child's first call
    _exit(l.get() == every_core() ? 0 : 1);
  }
  int status = -1;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child kept the lowered count";
  gofl::give_core_back(s);
  EXPECT_EQ(l.get(), every_core());
}

TEST(SpareCore, DebiansLibblasTakesItsThreadsFromLibopenblas) {
  // libblas.so.3 is either OpenBLAS's interface library (its thread count lives in the
  // libopenblas.so.0 it depends on) or another BLAS: then there is nothing to spare.
  void* h = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  NEED(h, "libblas.so.3");
  void* real = dlsym(h, "dgemm_");
  ASSERT_NE(real, nullptr);
  const auto get = reinterpret_cast<int (*)()>(dlsym(h, "openblas_get_num_threads"));
  const auto set = reinterpret_cast<void (*)(int)>(dlsym(h, "openblas_set_num_threads"));
  if (!get || !set) {
    EXPECT_LT(noted_then_spared(real, GOFL_SCHEME_STD).lib, 0);
    return;
  }
  lowers_and_puts_back(Library{h, real, get, set}, GOFL_SCHEME_STD);
}

TEST(SpareCore, NumPysAndSciPysOpenBlasByTheirOwnNames) {
  NEED(*GOFL_TEST_NUMPY_OPENBLAS && *GOFL_TEST_SCIPY_OPENBLAS, "NumPy's and SciPy's bundled OpenBLAS");
  const Library np = open_library(GOFL_TEST_NUMPY_OPENBLAS, "scipy_dgemm_64_", "scipy_openblas_get_num_threads64_",
                                  "scipy_openblas_set_num_threads64_");
  ASSERT_TRUE(np.real && np.get && np.set) << GOFL_TEST_NUMPY_OPENBLAS << ": " << dlerror();
  lowers_and_puts_back(np, GOFL_SCHEME_NUMPY64);
  const Library sp = open_library(GOFL_TEST_SCIPY_OPENBLAS, "scipy_dgetrf_", "scipy_openblas_get_num_threads",
                                  "scipy_openblas_set_num_threads");
  ASSERT_TRUE(sp.real && sp.get && sp.set) << GOFL_TEST_SCIPY_OPENBLAS;
  lowers_and_puts_back(sp, GOFL_SCHEME_SCIPY);
  // One library's count is its own: sparing SciPy's left NumPy's as it was.
  EXPECT_EQ(np.get(), every_core());
}

TEST(SpareCore, AFunctionOutsideAnyBlasOrNeverNotedSparesNothing) {
  EXPECT_LT(noted_then_spared(reinterpret_cast<const void*>(&strlen), GOFL_SCHEME_STD).lib, 0);
  EXPECT_LT(noted_then_spared(nullptr, GOFL_SCHEME_STD).lib, 0);
  const Library l = system_openblas("dsyrk_");
  NEED_ALL(l, "libopenblas.so.0");
  EVERY_CORE(l);
  // Not yet seen by the resolver: a call never looks its library up itself (the loader's lock).
  EXPECT_LT(gofl::spare_core_in(l.real).lib, 0);
  // Noted under a scheme whose names that library does not have (no scipy_openblas_...).
  EXPECT_LT(noted_then_spared(l.real, GOFL_SCHEME_NUMPY64).lib, 0);
  EXPECT_EQ(l.get(), every_core());
}
