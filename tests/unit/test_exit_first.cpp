// gofl::at_main_thread_exit (common/exit_first.h): the waits for the library's helper threads run
// before any exit handler when the main thread ends the process, once each, and never at the end
// of another thread. Run in a real child process (exit_first_child.cpp) on this machine's C library.
#include <stdio.h>
#include <sys/wait.h>

#include <string>

#include <gtest/gtest.h>

namespace {
// The child's output and exit status.
std::string run_child(const char* how, int* status) {
  const std::string cmd = std::string("'") + GOFL_EXIT_FIRST_CHILD + "' " + how;
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  if (!p) return out;
  char buf[256];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}
}  // namespace

TEST(ExitFirst, KeptFunctionsRunBeforeTheExitHandlersWhenMainReturns) {
  int status = -1;
  EXPECT_EQ(run_child("return", &status), "kept exit-handler\n");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ExitFirst, KeptFunctionsRunBeforeTheExitHandlersAtExitFromMain) {
  int status = -1;
  EXPECT_EQ(run_child("exit", &status), "kept exit-handler\n");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
