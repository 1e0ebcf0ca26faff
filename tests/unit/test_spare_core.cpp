// Sparing a core (src/preload/spare_core.h) on the real OpenBLAS builds programs use: the system's
// libopenblas.so.0, Debian's libblas.so.3 (whose threads are libopenblas.so.0's), NumPy's and SciPy's
// wheels (scipy_openblas...64_ and scipy_openblas... names). Found from the real function, lowered by
// one, put back; nothing for a library without thread controls or one that leaves a core free.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <string.h>

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

// Where a library needed is missing: CI (GOFL_REQUIRE_ALL_TOOLS) fails, elsewhere the test skips.
#define NEED(cond, what)                                                            \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      if (std::getenv("GOFL_REQUIRE_ALL_TOOLS")) FAIL() << what << " is missing";   \
      GTEST_SKIP() << what << " is missing";                                        \
    }                                                                               \
  } while (0)

// A count at least the cores and at least 3: the library would keep every core busy.
int every_core() { return std::max(gofl::process_cores(), 3); }

// As the resolver does when it finds a real function, then as a call does.
gofl::SparedCore noted_then_spared(const void* real, int scheme) {
  gofl::spare_core_note(real, scheme);
  return gofl::spare_core_in(real);
}

void lowers_and_puts_back(const Library& l, int scheme) {
  l.set(every_core());
  const gofl::SparedCore s = noted_then_spared(l.real, scheme);
  ASSERT_NE(s.set, nullptr);
  EXPECT_EQ(s.program_threads, every_core());
  EXPECT_EQ(s.call_threads, every_core() - 1);
  EXPECT_EQ(l.get(), every_core() - 1);  // what a call made now runs with
  gofl::give_core_back(s);
  EXPECT_EQ(l.get(), every_core());
}

}  // namespace

TEST(SpareCore, TheSystemOpenBlasRunsACallWithOneThreadFewerThenGetsItsCountBack) {
  const Library l = open_library("libopenblas.so.0", "dgemm_", "openblas_get_num_threads", "openblas_set_num_threads");
  NEED(l.real && l.get && l.set, "libopenblas.so.0");
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
  const Library l = open_library("libopenblas.so.0", "dgetrf_", "openblas_get_num_threads", "openblas_set_num_threads");
  NEED(l.real && l.get && l.set, "libopenblas.so.0");
  // Two threads: one would also change OpenBLAS's affinity. Fewer than the cores: one is free.
  for (const int threads : {1, 2, gofl::process_cores() - 1}) {
    if (threads < 1) continue;
    l.set(threads);
    const gofl::SparedCore s = noted_then_spared(l.real, GOFL_SCHEME_STD);
    EXPECT_EQ(s.set, nullptr) << threads;
    EXPECT_EQ(l.get(), threads);
    gofl::give_core_back(s);  // nothing to put back
    EXPECT_EQ(l.get(), threads);
  }
}

TEST(SpareCore, ACountTheProgramSetsDuringTheCallStands) {
  const Library l = open_library("libopenblas.so.0", "dgemm_", "openblas_get_num_threads", "openblas_set_num_threads");
  NEED(l.real && l.get && l.set, "libopenblas.so.0");
  l.set(every_core());
  const gofl::SparedCore s = noted_then_spared(l.real, GOFL_SCHEME_STD);
  ASSERT_NE(s.set, nullptr);
  l.set(every_core() + 3);  // another thread of the program, meanwhile
  gofl::give_core_back(s);
  EXPECT_EQ(l.get(), every_core() + 3);
  l.set(every_core());
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
    EXPECT_EQ(noted_then_spared(real, GOFL_SCHEME_STD).set, nullptr);
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
  EXPECT_EQ(noted_then_spared(reinterpret_cast<const void*>(&strlen), GOFL_SCHEME_STD).set, nullptr);
  EXPECT_EQ(noted_then_spared(nullptr, GOFL_SCHEME_STD).set, nullptr);
  const Library l = open_library("libopenblas.so.0", "dsyrk_", "openblas_get_num_threads", "openblas_set_num_threads");
  NEED(l.real && l.get && l.set, "libopenblas.so.0");
  l.set(every_core());
  // Not yet seen by the resolver: a call never looks its library up itself (the loader's lock).
  EXPECT_EQ(gofl::spare_core_in(l.real).set, nullptr);
  // Noted under a scheme whose names that library does not have (no scipy_openblas_...).
  EXPECT_EQ(noted_then_spared(l.real, GOFL_SCHEME_NUMPY64).set, nullptr);
  EXPECT_EQ(l.get(), every_core());
}
