// One-time costs, paid only for what is used (issue 19): a fresh process that only multiplies never
// makes a cuSOLVER handle, one that factors does; the staging buffers start at the size of the
// first call and grow for a larger one, the results staying right; each start step and each
// routine's first GPU call is in the trace (record.h, gofl_setup_record). The parent re-runs this
// binary as the fresh process, with a trace folder of its own, and reads the records itself.
#include <dirent.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gpu_harness.h"
#include "trace/record.h"

extern char** environ;

namespace {

using dgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                          const int*, const double*, const int*, const double*, double*, const int*);
using dpotrf_fn = void (*)(const char*, const int*, double*, const int*, int*);

bool in_child() { return std::getenv("GOFL_TEST_ONE_TIME_CHILD") != nullptr; }

// C = A * B through the intercepted dgemm_, compared with the CPU library; true when it ran on the GPU and matched.
bool dgemm_checked(int n, uint64_t seed) {
  const auto a = gpu_test::random_matrix<double>(n, n, n, seed);
  const auto b = gpu_test::random_matrix<double>(n, n, n, seed + 1);
  std::vector<double> g(size_t(n) * n, 0.0), c(size_t(n) * n, 0.0);
  const double one = 1, zero = 0;
  gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, g.data(), &n);
  const bool on_gpu = gpu_test::last_call().device == 1;
  gpu_test::cpu<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, c.data(), &n);
  double num = 0, den = 0;
  for (size_t i = 0; i < c.size(); ++i) num = std::max(num, std::fabs(g[i] - c[i])), den = std::max(den, std::fabs(c[i]));
  return on_gpu && num <= gpu_test::tolerance<double>() * den;
}

struct SetupRecord {
  uint16_t op;
  std::map<uint32_t, uint64_t> phases;  // gofl_setup_phase_id -> ns
};

// Runs this binary's test `name` as a fresh process tracing into a folder of its own; its setup records.
std::vector<SetupRecord> child_setups(const char* name, bool* ok) {
  char dir[] = "/tmp/gofl-one-time-XXXXXX";
  *ok = mkdtemp(dir) != nullptr;
  if (!*ok) return {};
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "GPU_OFFLOAD_TRACE=", 18) != 0) env_s.push_back(*e);
  env_s.push_back(std::string("GPU_OFFLOAD_TRACE=") + dir);
  env_s.push_back("GOFL_TEST_ONE_TIME_CHILD=1");
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string filter = std::string("--gtest_filter=OneTimeCosts.") + name;
  char self[] = "/proc/self/exe";
  char* argv[] = {self, filter.data(), nullptr};
  pid_t pid = 0;
  int status = 0;
  *ok = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) == 0 && waitpid(pid, &status, 0) == pid &&
        WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::vector<SetupRecord> out;
  if (DIR* d = opendir(dir)) {
    while (dirent* e = readdir(d)) {
      const std::string path = std::string(dir) + "/" + e->d_name;
      if (path.size() < 10 || path.compare(path.size() - 10, 10, GOFL_TRACE_SUFFIX) != 0) continue;
      FILE* f = std::fopen(path.c_str(), "rb");
      gofl_file_header h{};
      gofl_record r{};
      if (f && std::fread(&h, sizeof h, 1, f) == 1 && h.version == GOFL_TRACE_VERSION)
        while (std::fread(&r, sizeof r, 1, f) == 1 && r.kind != 0) {
          if (r.kind != GOFL_REC_SETUP) continue;
          SetupRecord s{r.u.setup.op, {}};
          for (int i = 0; i < r.u.setup.n_phases && i < GOFL_SETUP_MAX_PHASES; ++i)
            s.phases[r.u.setup.phases[i].phase] += r.u.setup.phases[i].duration_ns;
          out.push_back(s);
        }
      if (f) std::fclose(f);
      std::remove(path.c_str());
    }
    closedir(d);
  }
  rmdir(dir);
  return out;
}

bool has(const std::vector<SetupRecord>& v, uint32_t phase) {
  for (const SetupRecord& s : v)
    if (s.phases.count(phase)) return true;
  return false;
}

bool reserve_mode() { return std::getenv("GPU_OFFLOAD_MEMORY_RESERVE") != nullptr; }

}  // namespace

// ---- the fresh processes (skipped in a normal run) ------------------------------------------------

TEST(OneTimeCosts, ChildMultipliesSmallThenLarge) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.AProgramThatOnlyMultipliesMakesNoCusolverHandle";
  EXPECT_TRUE(dgemm_checked(300, 1));   // 0.7 MB operands: the smallest staging ring
  EXPECT_TRUE(dgemm_checked(1500, 3));  // 18 MB: the ring grows between the calls
  EXPECT_TRUE(dgemm_checked(300, 5));   // and still serves a small one
}

TEST(OneTimeCosts, ChildFactors) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.AProgramThatFactorsMakesItsCusolverHandle";
  int n = 600, info = -1;
  auto a = gpu_test::random_matrix<double>(n, n, n, 7);
  for (int i = 0; i < n; ++i) a[size_t(i) * n + i] += 2.0 * n;  // symmetric part dominant: positive definite
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < j; ++i) a[size_t(j) * n + i] = a[size_t(i) * n + j];
  gpu_test::intercepted<dpotrf_fn>("dpotrf_")("L", &n, a.data(), &n, &info);
  EXPECT_EQ(info, 0);
  EXPECT_EQ(gpu_test::last_call().device, 1);
}

// ---- the checks -----------------------------------------------------------------------------------

TEST(OneTimeCosts, AProgramThatOnlyMultipliesMakesNoCusolverHandle) {
  if (in_child() || reserve_mode()) GTEST_SKIP();
  bool ok = false;
  const std::vector<SetupRecord> s = child_setups("ChildMultipliesSmallThenLarge", &ok);
  ASSERT_TRUE(ok) << "the child process failed (its results are checked there)";
  ASSERT_FALSE(s.empty()) << "no setup records in the child's trace";
  // The start: its steps, no library handle.
  EXPECT_EQ(s[0].op, GOFL_SETUP_AT_START);
  EXPECT_TRUE(s[0].phases.count(GOFL_SP_LOAD) && s[0].phases.count(GOFL_SP_CONTEXT));
  EXPECT_FALSE(s[0].phases.count(GOFL_SP_CUBLAS) || s[0].phases.count(GOFL_SP_CUSOLVER));
  EXPECT_TRUE(has(s, GOFL_SP_CUBLAS));
  EXPECT_FALSE(has(s, GOFL_SP_CUSOLVER));
  int first_calls = 0, staging = 0;
  for (const SetupRecord& x : s) first_calls += int(x.phases.count(GOFL_SP_FIRST_CALL)), staging += int(x.phases.count(GOFL_SP_STAGING));
  EXPECT_EQ(first_calls, 1);  // dgemm's first call only
  EXPECT_EQ(staging, 2);      // made for the first call, grown for the larger one
}

TEST(OneTimeCosts, AProgramThatFactorsMakesItsCusolverHandle) {
  if (in_child() || reserve_mode()) GTEST_SKIP();
  bool ok = false;
  const std::vector<SetupRecord> s = child_setups("ChildFactors", &ok);
  ASSERT_TRUE(ok) << "the child process failed";
  EXPECT_TRUE(has(s, GOFL_SP_CUSOLVER));
  EXPECT_TRUE(has(s, GOFL_SP_FIRST_CALL));
}
