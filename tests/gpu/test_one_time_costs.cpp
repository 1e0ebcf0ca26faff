// One-time costs, paid only for what is used: a fresh process that only multiplies never
// loads cuSOLVER or cuFFT nor makes a cuSOLVER handle, one that factors does; the start loads only
// the libraries of the call that starts it, beside the context's making, and a library first used
// later is loaded by that call; the staging buffers start at the size of the
// first call and grow for a larger one, the results staying right; each start step and each
// routine's first GPU call is in the trace (record.h, gofl_setup_record); every warm-up (cuda/warm.h)
// runs on the GPU, and under --device auto what the program called before the start is warmed at
// it, off the calls' path. The parent re-runs this
// binary as the fresh process, with a trace folder of its own, and reads the records itself.
#include <dirent.h>
#include <dlfcn.h>
#include <sched.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <map>
#include <string>
#include <vector>

#include <fftw3.h>

#include "common/table.h"
#include "cuda/backend_abi.h"
#include "gpu_harness.h"
#include "trace/record.h"

extern char** environ;

namespace {

using dgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                          const int*, const double*, const int*, const double*, double*, const int*);
using dpotrf_fn = void (*)(const char*, const int*, double*, const int*, int*);

bool in_child() { return std::getenv("GOFL_TEST_ONE_TIME_CHILD") != nullptr; }
// The sizes of ChildFactorsOnTheCpuBesideWarmUps's factorisations: while the warm-ups run, and after.
constexpr int kDuringWarmUps = 256, kAfterWarmUps = 128;

// C = A * B through the intercepted dgemm_, compared with the CPU library; true when it ran on the GPU and
// matched.
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

// Runs this binary's test `name` as a fresh process tracing into a folder of its own; its setup
// records (and its call records, in `calls` when given).
std::vector<SetupRecord> child_setups(const char* name, bool* ok, const std::vector<std::string>& extra_env = {},
                                      std::vector<gofl_call_record>* calls = nullptr) {
  char dir[] = "/tmp/gofl-one-time-XXXXXX";
  *ok = mkdtemp(dir) != nullptr;
  if (!*ok) return {};
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "GPU_OFFLOAD_TRACE=", 18) != 0) env_s.push_back(*e);
  env_s.push_back(std::string("GPU_OFFLOAD_TRACE=") + dir);
  env_s.push_back("GOFL_TEST_ONE_TIME_CHILD=1");
  for (const std::string& e : extra_env) {  // replaces the variable if set
    const std::string key = e.substr(0, e.find('=') + 1);
    for (auto it = env_s.begin(); it != env_s.end();)
      it = it->compare(0, key.size(), key) == 0 ? env_s.erase(it) : it + 1;
    env_s.push_back(e);
  }
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
  // A child can pass its test and still fail at exit (the warm-ups and the CUDA libraries' exit handlers).
  if (!*ok && pid > 0)
    std::fprintf(stderr, "child %s: %s %d\n", name, WIFSIGNALED(status) ? "killed by signal" : "exit status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
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
          if (r.kind == GOFL_REC_CALL && calls) calls->push_back(r.u.call);
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

// Whether a library whose file name contains `name` is mapped into this process.
bool mapped(const char* name) {
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return false;
  char line[4096];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f)) found = std::strstr(line, name) != nullptr;
  std::fclose(f);
  return found;
}

}  // namespace

// ---- the fresh processes (skipped in a normal run) ------------------------------------------------

TEST(OneTimeCosts, ChildMultipliesSmallThenLarge) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.AProgramThatOnlyMultipliesMakesNoCusolverHandle";
  EXPECT_TRUE(dgemm_checked(300, 1));   // 0.7 MB operands: the smallest staging ring
  EXPECT_TRUE(dgemm_checked(1500, 3));  // 18 MB: the ring grows between the calls
  EXPECT_TRUE(dgemm_checked(300, 5));   // and still serves a small one
  // Only the library the program used is loaded.
  EXPECT_TRUE(mapped("libcublas"));
  EXPECT_FALSE(mapped("libcusolver"));
  EXPECT_FALSE(mapped("libcufft"));
}

TEST(OneTimeCosts, ChildMultipliesThenFactors) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.AProgramThatFactorsLoadsCusolverAtItsFirstUse";
  EXPECT_TRUE(dgemm_checked(300, 1));  // starts the GPU: cuBLAS only
  EXPECT_FALSE(mapped("libcusolver"));
  int n = 600, info = -1;
  auto a = gpu_test::random_matrix<double>(n, n, n, 7);
  for (int i = 0; i < n; ++i) a[size_t(i) * n + i] += 2.0 * n;  // symmetric part dominant: positive definite
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < j; ++i) a[size_t(j) * n + i] = a[size_t(i) * n + j];
  gpu_test::intercepted<dpotrf_fn>("dpotrf_")("L", &n, a.data(), &n, &info);
  EXPECT_EQ(info, 0);
  EXPECT_EQ(gpu_test::last_call().device, 1);
  EXPECT_TRUE(mapped("libcusolver"));
  EXPECT_FALSE(mapped("libcufft"));
}

TEST(OneTimeCosts, ChildTransforms) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.AProgramThatOnlyTransformsLoadsOnlyCufft";
  const int n = 1024;
  std::vector<std::complex<double>> a(size_t(n) * n), out(a.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = {double(i % 17) - 8.0, double(i % 5)};
  fftw_plan p = fftw_plan_dft_2d(n, n, reinterpret_cast<fftw_complex*>(a.data()), reinterpret_cast<fftw_complex*>(out.data()),
                                 FFTW_FORWARD, FFTW_ESTIMATE);
  ASSERT_NE(p, nullptr);
  fftw_execute(p);
  EXPECT_EQ(gpu_test::last_call().device, 1);
  // The sum of the input is the transform's first element.
  std::complex<double> sum = 0;
  for (const auto& x : a) sum += x;
  EXPECT_LT(std::abs(out[0] - sum), 1e-9 * std::abs(sum));
  fftw_destroy_plan(p);
  EXPECT_TRUE(mapped("libcufft"));
  EXPECT_FALSE(mapped("libcublas"));
  EXPECT_FALSE(mapped("libcusolver"));
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
  // cuBLAS, which the first call uses, is loaded beside the start, so no call loads it.
  EXPECT_TRUE(s[0].phases.count(GOFL_SP_LIBRARIES_BESIDE));
  EXPECT_TRUE(has(s, GOFL_SP_CUBLAS));
  EXPECT_FALSE(has(s, GOFL_SP_LOAD_CUBLAS) || has(s, GOFL_SP_CUSOLVER) || has(s, GOFL_SP_LOAD_CUSOLVER) ||
               has(s, GOFL_SP_LOAD_CUFFT));
  int first_calls = 0, staging = 0;
  for (const SetupRecord& x : s) first_calls += int(x.phases.count(GOFL_SP_FIRST_CALL)), staging += int(x.phases.count(GOFL_SP_STAGING));
  EXPECT_EQ(first_calls, 1);  // dgemm's first call only
  EXPECT_EQ(staging, 2);      // made for the first call, grown for the larger one
}

TEST(OneTimeCosts, AProgramThatFactorsLoadsCusolverAtItsFirstUse) {
  if (in_child() || reserve_mode()) GTEST_SKIP();
  bool ok = false;
  const std::vector<SetupRecord> s = child_setups("ChildMultipliesThenFactors", &ok);
  ASSERT_TRUE(ok) << "the child process failed";
  // The first potrf's record: cuSOLVER loaded and its handle made there.
  bool potrf_loaded = false;
  for (const SetupRecord& x : s)
    potrf_loaded = potrf_loaded || (x.op != GOFL_SETUP_AT_START && x.phases.count(GOFL_SP_LOAD_CUSOLVER) &&
                                    x.phases.count(GOFL_SP_CUSOLVER));
  EXPECT_TRUE(potrf_loaded);
  EXPECT_FALSE(has(s, GOFL_SP_LOAD_CUFFT));
  EXPECT_TRUE(has(s, GOFL_SP_FIRST_CALL));
}

TEST(OneTimeCosts, AProgramThatOnlyTransformsLoadsOnlyCufft) {
  if (in_child() || reserve_mode()) GTEST_SKIP();
  bool ok = false;
  const std::vector<SetupRecord> s = child_setups("ChildTransforms", &ok);
  ASSERT_TRUE(ok) << "the child process failed (its results are checked there)";
  // cuFFT was loaded beside the start (the child checks that it alone is mapped); no handle is made.
  ASSERT_FALSE(s.empty());
  EXPECT_TRUE(s[0].phases.count(GOFL_SP_LIBRARIES_BESIDE));
  EXPECT_TRUE(has(s, GOFL_SP_CUFFT_PLAN));
  EXPECT_FALSE(has(s, GOFL_SP_CUBLAS) || has(s, GOFL_SP_CUSOLVER));
}

// ---- warming (cuda/warm.h) -------------------------------------------------------------------------

namespace {

// The backend the preload library loaded (this process's copy: its warming state is the one in use).
const gofl_backend* loaded_backend() {
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return nullptr;
  char line[4096];
  std::string path;
  while (path.empty() && std::fgets(line, sizeof line, f))
    if (const char* p = std::strstr(line, "/"); p && std::strstr(line, GOFL_BACKEND_SONAME)) path = std::string(p, std::strcspn(p, "\n"));
  std::fclose(f);
  void* h = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto entry = h ? reinterpret_cast<gofl_backend_entry_fn>(dlsym(h, GOFL_BACKEND_ENTRY)) : nullptr;
  return entry ? entry() : nullptr;
}

// Whether a thread of this process has `value` in field `at` of /proc/self/task/*/stat (19: nice,
// 41: scheduling policy).
bool a_thread_with(int at, int value) {
  DIR* d = opendir("/proc/self/task");
  if (!d) return false;
  bool found = false;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.' || found) continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/stat");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t paren = text.rfind(')');  // the thread's name may hold spaces
    if (paren == std::string::npos) continue;
    std::istringstream fields(text.substr(paren + 2));
    std::string v;
    for (int field = 3; field <= at && (fields >> v); ++field)
      if (field == at) found = std::atoi(v.c_str()) == value;
  }
  closedir(d);
  return found;
}

}  // namespace

TEST(OneTimeCosts, EveryWarmUpRunsOnTheGpuAndLeavesTheCallsRight) {
  if (in_child() || reserve_mode()) GTEST_SKIP();
  ASSERT_TRUE(dgemm_checked(300, 11));  // the GPU runs
  const gofl_backend* b = loaded_backend();
  ASSERT_NE(b, nullptr);
  // Each operation at every size it has (n = 0): the eigenvalue and SVD families twice (small and
  // WarmLane::kLargeN), the rest once.
  const auto large_too = [](uint32_t op) {
    for (const char* r : {"syevd", "heevd", "syev", "heev", "syevr", "heevr", "gesvd", "gesdd", "sygv", "hegv", "sygvd",
                          "hegvd", "sygvx", "hegvx"})
      if (std::strcmp(gofl_ops[op].routine, r) == 0) return true;
    return false;
  };
  std::map<uint32_t, int> asked;  // warm-ups still due
  size_t due = 0;
  for (uint32_t op = 0; op < GOFL_N_OPS; ++op) {
    const int st = b->warm(op, 0);
    if (st == GOFL_GPU_OK) due += size_t(asked[op] = large_too(op) ? 2 : 1);
    else EXPECT_EQ(st, GOFL_GPU_UNSUPPORTED) << gofl_ops[op].name;
    EXPECT_EQ(st == GOFL_GPU_OK, gofl_ops[op].kind == GOFL_KIND_BLAS3 || (gofl_ops[op].kind == GOFL_KIND_LAPACK && gofl_ops[op].gpu_capable))
        << gofl_ops[op].name;
  }
  EXPECT_EQ(b->warm(OP_dgemm, 0), GOFL_GPU_OK);      // asked again: nothing more is queued
  EXPECT_EQ(b->warm(OP_dsyevd, 4096), GOFL_GPU_OK);  // nor for a larger size
  // Meanwhile the program's own calls run on the GPU and stay right.
  EXPECT_TRUE(dgemm_checked(700, 13));
  size_t done = 0;
  for (int waited = 0; done < due && waited < 1200; ++waited) {
    gofl_warmed w[16];
    const int n = b->take_warmed(w, 16);
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(asked.count(w[i].op)) << w[i].op;
      EXPECT_GT(asked[w[i].op], 0) << gofl_ops[w[i].op].name << " warmed more often than its sizes";
      --asked[w[i].op];
      ++done;
      EXPECT_EQ(w[i].status, GOFL_GPU_OK) << gofl_ops[w[i].op].name;
      ASSERT_GE(w[i].n_phases, 2);
      EXPECT_EQ(w[i].phases[0].phase, uint32_t(GOFL_SP_WARMED));
      EXPECT_GT(w[i].phases[0].duration_ns, 0u);
      // The warming thread's CPU time in it: some, and never more than the warm-up's own time.
      EXPECT_EQ(w[i].phases[1].phase, uint32_t(GOFL_SP_WARM_CPU));
      EXPECT_LE(w[i].phases[1].duration_ns, w[i].phases[0].duration_ns + 2000000) << gofl_ops[w[i].op].name;
    }
    if (n == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(done, due) << "warm-ups still unfinished after 120 s";
  // The warming thread runs only where no other thread wants the core (SCHED_IDLE).
  EXPECT_TRUE(a_thread_with(41, SCHED_IDLE)) << "no thread of this process is SCHED_IDLE";
  EXPECT_TRUE(dgemm_checked(300, 17));
}

TEST(OneTimeCosts, ChildDecidesThenStarts) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.AnAutoProgramWarmsWhatItCalledBeforeTheStart";
  // A Cholesky factorisation decided before the start: it runs on the CPU (the GPU is not started).
  int n = 400, info = -1;
  auto a = gpu_test::random_matrix<double>(n, n, n, 7);
  for (int i = 0; i < n; ++i) a[size_t(i) * n + i] += 2.0 * n;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < j; ++i) a[size_t(j) * n + i] = a[size_t(i) * n + j];
  gpu_test::intercepted<dpotrf_fn>("dpotrf_")("L", &n, a.data(), &n, &info);
  EXPECT_EQ(info, 0);
  EXPECT_EQ(gpu_test::last_call().device, 0);
  // Products until the missed savings start the GPU (the built-in profile, level 5).
  bool started = false;
  for (int i = 0; i < 200 && !started; ++i) {
    const int m = 2000;
    static std::vector<double> x = gpu_test::random_matrix<double>(m, m, m, 3), c(size_t(m) * m);
    const double one = 1, zero = 0;
    gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &m, &m, &m, &one, x.data(), &m, x.data(), &m, &zero, c.data(), &m);
    started = gpu_test::last_call().device == 1;
  }
  ASSERT_TRUE(started);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the warm-up runs beside; queued ones are dropped at exit
}

TEST(OneTimeCosts, AnAutoProgramWarmsWhatItCalledBeforeTheStart) {
  if (in_child() || reserve_mode()) GTEST_SKIP();
  bool ok = false;
  const std::vector<SetupRecord> s =
      child_setups("ChildDecidesThenStarts", &ok,
                   {"GPU_OFFLOAD_DEVICE=auto", "GPU_OFFLOAD_HISTORY=off", "GPU_OFFLOAD_WARM=on", "GPU_OFFLOAD_START_AHEAD=0"});
  ASSERT_TRUE(ok) << "the child process failed";
  // dpotrf was warmed beside the calls (loading cuSOLVER and making the warming thread's handle
  // there; only a warm-up that ended well is recorded), and never ran on the GPU; dgemm, which
  // started it, was not warmed.
  bool warmed = false;
  for (const SetupRecord& x : s) {
    if (x.op == OP_dpotrf) {
      EXPECT_FALSE(x.phases.count(GOFL_SP_FIRST_CALL));
      warmed = warmed || (x.phases.count(GOFL_SP_WARMED) && x.phases.count(GOFL_SP_LOAD_CUSOLVER) &&
                          x.phases.count(GOFL_SP_CUSOLVER));
    }
    if (x.op == OP_dgemm) {
      EXPECT_FALSE(x.phases.count(GOFL_SP_WARMED));
    }
  }
  EXPECT_TRUE(warmed);
}

// ---- warming what the last run used (policy/history.h) ----------------------------------------------

namespace {
// Products until the missed savings (or the history) start the GPU; true once one ran there.
bool multiply_until_started() {
  for (int i = 0; i < 200; ++i) {
    const int m = 2000;
    static std::vector<double> x = gpu_test::random_matrix<double>(m, m, m, 3), c(size_t(m) * m);
    const double one = 1, zero = 0;
    gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &m, &m, &m, &one, x.data(), &m, x.data(), &m, &zero, c.data(), &m);
    if (gpu_test::last_call().device == 1) return true;
  }
  return false;
}

// dpotrf of a symmetric positive definite matrix of order n, through the library.
void factor_a_positive_definite_matrix(int n) {
  int info = -1;
  auto a = gpu_test::random_matrix<double>(n, n, n, 7);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < j; ++i) a[size_t(j) * n + i] = a[size_t(i) * n + j];
  for (int i = 0; i < n; ++i) a[size_t(i) * n + i] += 2.0 * n;
  gpu_test::intercepted<dpotrf_fn>("dpotrf_")("L", &n, a.data(), &n, &info);
  EXPECT_EQ(info, 0);
}
}  // namespace

TEST(OneTimeCosts, ChildMultipliesThenFactorsOnTheGpu) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.ASecondRunWarmsWhatTheFirstRanOnTheGpu";
  ASSERT_TRUE(multiply_until_started());
  factor_a_positive_definite_matrix(4000);
  EXPECT_EQ(gpu_test::last_call().device, 1);  // the history's entry for the next run
}

TEST(OneTimeCosts, ChildOnlyMultiplies) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.ASecondRunWarmsWhatTheFirstRanOnTheGpu";
  ASSERT_TRUE(multiply_until_started());
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the warm-ups run beside
}

TEST(OneTimeCosts, ASecondRunWarmsWhatTheFirstRanOnTheGpu) {
  if (in_child() || reserve_mode()) GTEST_SKIP();
  char cache[] = "/tmp/gofl-history-XXXXXX";
  ASSERT_NE(mkdtemp(cache), nullptr);
  const std::vector<std::string> env = {"GPU_OFFLOAD_DEVICE=auto", "GPU_OFFLOAD_HISTORY=on", "GPU_OFFLOAD_WARM=on",
                                        "GPU_OFFLOAD_START_AHEAD=0", std::string("XDG_CACHE_HOME=") + cache};
  // The first run (this binary is "the program" whatever test it runs) factors on the GPU: the
  // history keeps dgemm and dpotrf, in that order, at their sizes.
  bool ok = false;
  (void)child_setups("ChildMultipliesThenFactorsOnTheGpu", &ok, env);
  ASSERT_TRUE(ok) << "the first child failed";
  std::ifstream f(std::string(cache) + "/gpu-offload/history");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(" ops=dgemm:2000,dpotrf:4000\n"), std::string::npos) << text;
  // The second never factors, yet dpotrf is warmed once its GPU runs (never a first call of it).
  const std::vector<SetupRecord> s = child_setups("ChildOnlyMultiplies", &ok, env);
  ASSERT_TRUE(ok) << "the second child failed";
  bool warmed = false;
  for (const SetupRecord& x : s)
    if (x.op == OP_dpotrf) {
      EXPECT_FALSE(x.phases.count(GOFL_SP_FIRST_CALL));
      warmed = warmed || x.phases.count(GOFL_SP_WARMED);
    }
  EXPECT_TRUE(warmed);
  (void)system((std::string("rm -rf '") + cache + "'").c_str());
}

// ---- the start begun at the first decided call, for a program whose runs gained (PolicyConfig::start_early) --

namespace {
// The CUDA driver is mapped into this process: a start has reached the driver.
bool cuda_driver_mapped() {
  std::ifstream f("/proc/self/maps");
  std::string line;
  while (std::getline(f, line))
    if (line.find("libcuda.so") != std::string::npos) return true;
  return false;
}

// The gain the latest history line records (its second field), or -1e9 when there is none.
double last_gain(const std::string& cache) {
  std::ifstream f(cache + "/gpu-offload/history");
  std::string line, last;
  while (std::getline(f, line))
    if (!line.empty()) last = line;
  std::istringstream fields(last);
  std::string key;
  double gained = -1e9;
  fields >> key >> gained;
  return gained;
}
}  // namespace

TEST(OneTimeCosts, ChildGainsOnTheGpu) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.ARunAfterRunsThatGainedStartsTheGpuAtItsFirstDecidedCall";
  ASSERT_TRUE(multiply_until_started());
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(multiply_until_started());  // each at once on the GPU now
  factor_a_positive_definite_matrix(4000);
  EXPECT_EQ(gpu_test::last_call().device, 1);
}

namespace {
// A product of n = 100 (2e6 flops: decided, and predicted faster on the CPU); true when the CPU ran it.
bool small_product_on_the_cpu() {
  const int m = 100;
  static std::vector<double> x = gpu_test::random_matrix<double>(m, m, m, 5), c(size_t(m) * m);
  const double one = 1, zero = 0;
  gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &m, &m, &m, &one, x.data(), &m, x.data(), &m, &zero, c.data(), &m);
  return gpu_test::last_call().device == 0;
}
}  // namespace

TEST(OneTimeCosts, ChildStartsAtItsFirstDecidedCall) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.ARunAfterRunsThatGainedStartsTheGpuAtItsFirstDecidedCall";
  EXPECT_FALSE(cuda_driver_mapped());
  ASSERT_TRUE(small_product_on_the_cpu());
  // No call predicted to gain yet: the start goes on beside, begun by that call.
  bool mapped = false;
  for (int i = 0; i < 100 && !(mapped = cuda_driver_mapped()); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(mapped) << "the CUDA driver was not loaded within 5 s of the first decided call";
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the start ends; the warm-ups come with the next decision
  ASSERT_TRUE(dgemm_checked(2000, 21));  // the first call predicted to gain, on the GPU at once
  std::this_thread::sleep_for(std::chrono::seconds(2));  // dpotrf's warm-up runs beside
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(multiply_until_started());  // a run that gains too
}

TEST(OneTimeCosts, ChildLeavesTheStartToItsCalls) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.ARunAfterRunsThatGainedStartsTheGpuAtItsFirstDecidedCall";
  ASSERT_TRUE(small_product_on_the_cpu());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_FALSE(cuda_driver_mapped()) << "a call predicted slower started the GPU";
  ASSERT_TRUE(multiply_until_started());
}

TEST(OneTimeCosts, ARunAfterRunsThatGainedStartsTheGpuAtItsFirstDecidedCall) {
  if (in_child() || reserve_mode()) GTEST_SKIP();
  char cache[] = "/tmp/gofl-history-XXXXXX";
  ASSERT_NE(mkdtemp(cache), nullptr);
  std::vector<std::string> env = {"GPU_OFFLOAD_DEVICE=auto", "GPU_OFFLOAD_HISTORY=on", "GPU_OFFLOAD_WARM=on",
                                  "GPU_OFFLOAD_START_EARLY=1", std::string("XDG_CACHE_HOME=") + cache};
  bool ok = false;
  (void)child_setups("ChildGainsOnTheGpu", &ok, env);
  ASSERT_TRUE(ok) << "the first child failed";
  ASSERT_GT(last_gain(cache), 0.0) << "the first run did not gain: nothing to start early for";
  // The second run begins the start at a call that stays on the CPU, and warms dpotrf, which it never calls.
  std::vector<gofl_call_record> calls;
  const std::vector<SetupRecord> s = child_setups("ChildStartsAtItsFirstDecidedCall", &ok, env, &calls);
  ASSERT_TRUE(ok) << "the second child failed";
  bool warmed = false;
  for (const SetupRecord& x : s)
    if (x.op == OP_dpotrf) warmed = warmed || x.phases.count(GOFL_SP_WARMED);
  EXPECT_TRUE(warmed);
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls[0].device, GOFL_DEV_CPU);
  EXPECT_EQ(calls[1].device, GOFL_DEV_GPU);
  // GPU_OFFLOAD_START_EARLY=0: the same kind of history, the start waits for the first call predicted to gain.
  ASSERT_GT(last_gain(cache), 0.0) << "the second run did not gain";
  env[3] = "GPU_OFFLOAD_START_EARLY=0";
  // It also returns from main right after its first GPU call, with the warm-ups of dgemm and dpotrf
  // (the earlier runs' operations) going: the exit waits for the one in progress.
  (void)child_setups("ChildLeavesTheStartToItsCalls", &ok, env);
  EXPECT_TRUE(ok) << "the third child failed";
  (void)system((std::string("rm -rf '") + cache + "'").c_str());
}

// ---- a core spared beside the GPU's one-time work (preload/spare_core.h) ---------------------------

namespace {
using dgetrf_fn = void (*)(const int*, const int*, double*, const int*, int*, int*);
using threads_get_fn = int (*)();
using threads_set_fn = void (*)(int);

int cores_here() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}
}  // namespace

TEST(OneTimeCosts, ChildFactorsOnTheCpuBesideWarmUps) {
  if (!in_child()) GTEST_SKIP() << "run by OneTimeCosts.ACpuCallBesideWarmUpsRunsWithACoreSpared";
  // The program's OpenBLAS on every core, as NumPy's and the system's are by default.
  const auto get = gpu_test::cpu<threads_get_fn>("openblas_get_num_threads");
  gpu_test::cpu<threads_set_fn>("openblas_set_num_threads")(cores_here());
  const int program = get();
  ASSERT_EQ(program, cores_here());
  ASSERT_TRUE(multiply_until_started());
  const gofl_backend* b = loaded_backend();
  ASSERT_NE(b, nullptr);
  // LU factorisations below the work threshold (the parent sets it to 1e8 flops: no decision sends
  // them to the GPU; traced, they pass the dispatcher), of n = 256 while the warm-ups run, then three of
  // n = 128 after they ended: each as the CPU library computes it, and the program's thread count there
  // after every call. A trace describes only the first 64 calls of each call site and size class and
  // counts the rest (preload/counted.h), so the three after the warm-ups are of another size: their
  // records are there however many calls the warm-ups outlasted.
  int during = 0;
  auto factor = [&](int n) {
    const auto a0 = gpu_test::random_matrix<double>(n, n, n, 5);
    std::vector<double> a = a0, r = a0;
    std::vector<int> piv(static_cast<size_t>(n)), rpiv(static_cast<size_t>(n));
    int info = -1, rinfo = -1;
    gpu_test::intercepted<dgetrf_fn>("dgetrf_")(&n, &n, a.data(), &n, piv.data(), &info);
    EXPECT_EQ(gpu_test::last_call().device, 0);
    EXPECT_EQ(get(), program) << "the thread count was not put back";
    gpu_test::cpu<dgetrf_fn>("dgetrf_")(&n, &n, r.data(), &n, rpiv.data(), &rinfo);
    EXPECT_EQ(info, rinfo);
    EXPECT_EQ(piv, rpiv);
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) num = std::max(num, std::fabs(a[i] - r[i])), den = std::max(den, std::fabs(r[i]));
    EXPECT_LE(num, gpu_test::tolerance<double>() * den);
  };
  for (int waited_ms = 0; b->warming() && waited_ms < 60000; ++during) {
    factor(kDuringWarmUps);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    waited_ms += 5;
  }
  EXPECT_FALSE(b->warming()) << "warm-ups still running after 60 s";
  EXPECT_GT(during, 0);
  for (int i = 0; i < 3; ++i) factor(kAfterWarmUps);
}

TEST(OneTimeCosts, ACpuCallBesideWarmUpsRunsWithACoreSpared) {
  if (in_child() || reserve_mode()) GTEST_SKIP();
  if (cores_here() < 3) GTEST_SKIP() << "fewer than 3 cores: no core is spared";
  const std::vector<std::string> env = {"GPU_OFFLOAD_DEVICE=auto", "GPU_OFFLOAD_HISTORY=off", "GPU_OFFLOAD_START_AHEAD=0",
                                        "GPU_OFFLOAD_THRESHOLD=1e8",
                                        "GPU_OFFLOAD_WARM=dsyevd,zheevd,dgesdd,zgesdd,ssyevd,sgesdd"};
  for (const bool spare : {true, false}) {
    std::vector<gofl_call_record> calls;
    bool ok = false;
    std::vector<std::string> e = env;
    e.push_back(spare ? "GPU_OFFLOAD_SPARE_CORE=on" : "GPU_OFFLOAD_SPARE_CORE=off");
    (void)child_setups("ChildFactorsOnTheCpuBesideWarmUps", &ok, e, &calls);
    ASSERT_TRUE(ok) << "the child failed (spare core " << spare << ")";
    std::vector<const gofl_call_record*> during, after;  // the child's factorisations, by size
    for (const gofl_call_record& c : calls) {
      if (c.flags & GOFL_F_CORE_SPARED) {
        EXPECT_EQ(c.device, GOFL_DEV_CPU) << gofl_ops[c.op].name;
        EXPECT_EQ(c.depth, 0) << gofl_ops[c.op].name;
      }
      if (c.op != OP_dgetrf || c.depth != 0) continue;
      if (c.dims[0] == kDuringWarmUps) during.push_back(&c);
      if (c.dims[0] == kAfterWarmUps) after.push_back(&c);
    }
    ASSERT_GE(during.size(), 1u);
    ASSERT_EQ(after.size(), 3u);
    size_t spared = 0;
    for (const gofl_call_record* c : during) spared += (c->flags & GOFL_F_CORE_SPARED) != 0;
    if (spare) EXPECT_GT(spared, 0u) << "of " << during.size() << " factorisations traced beside the warm-ups";
    else EXPECT_EQ(spared, 0u);
    for (const gofl_call_record* c : after)  // after the warm-ups: the program's count
      EXPECT_FALSE(c->flags & GOFL_F_CORE_SPARED);
  }
}
