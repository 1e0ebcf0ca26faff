// The run history (policy/history.h): who "the same program" is, the file's safety (private folder
// and file, no links followed, malformed text, size bound, two processes writing at once), and the
// decision it changes (only after runs that all paid for the GPU), and the operations a run ran on
// the GPU (what the next run warms first).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "policy/history.h"

namespace gofl {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/gofl-history-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { (void)system(("rm -rf '" + path + "'").c_str()); }
};

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

mode_t mode_of(const std::string& p) {
  struct stat st;
  EXPECT_EQ(lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

HistoryRun run_of(uint64_t program, double gained, bool started = true) { return HistoryRun{program, gained, started, 1700000000}; }

TEST(History, TheSameProgramIsTheExecutableAndAnInterpretersScript) {
  TempDir d;
  const std::string script = d.path + "/job.py";
  std::ofstream(script) << "print(1)\n";
  char here[4096];
  ASSERT_NE(getcwd(here, sizeof here), nullptr);
  ASSERT_EQ(chdir(d.path.c_str()), 0);
  struct Back {
    const char* to;
    ~Back() { (void)!chdir(to); }
  } back{here};
  const std::string py = "/usr/bin/python3.12";
  // The script by any name, with any arguments after it, is the same program.
  EXPECT_EQ(program_identity(py, {"python3", "job.py", "--n", "100"}), program_identity(py, {"python3", script}));
  EXPECT_EQ(program_identity(py, {"python3", "-u", "-W", "ignore", script}), py + "\nscript " + script);
  EXPECT_NE(program_identity(py, {"python3", script}), program_identity(py, {"python3", d.path + "/other.py"}));
  EXPECT_EQ(program_identity(py, {"python3", "-m", "pkg.main", "x"}), py + "\n-m pkg.main");
  EXPECT_EQ(program_identity(py, {"python3", "-c", "import numpy"}), py + "\n-c import numpy");
  EXPECT_EQ(program_identity(py, {"python3", "-mpkg"}), py + "\n-m pkg");
  // python -m gpu_offload runs the script (or module) after its own options.
  EXPECT_EQ(program_identity(py, {"python3", "-m", "gpu_offload", "--level", "7", "--summary", "job.py", "9"}),
            py + "\nscript " + script);
  EXPECT_EQ(program_identity(py, {"python3", "-m", "gpu_offload", "--trace=t", "--", "-m", "pkg.main"}),
            py + "\n-m pkg.main");
  // R as Rscript runs it, Octave with code.
  EXPECT_EQ(program_identity("/usr/lib/R/bin/exec/R", {"R", "--no-echo", "--file=job.py"}),
            "/usr/lib/R/bin/exec/R\nscript " + script);
  EXPECT_EQ(program_identity("/usr/bin/octave-cli-8.4.0", {"octave-cli", "--eval", "A = rand(9);"}),
            "/usr/bin/octave-cli-8.4.0\n--eval A = rand(9);");
  // A compiled program's arguments are its input, not another program.
  EXPECT_EQ(program_identity("/opt/solver", {"solver", "in.dat"}), "/opt/solver");
  EXPECT_NE(program_key(program_identity(py, {"python3", script})), program_key(program_identity(py, {"python3"})));
}

TEST(History, FolderAndFileArePrivateAndTheRunsComeBack) {
  TempDir d;
  const std::string path = d.path + "/cache/gpu-offload/history";
  std::string why;
  ASSERT_TRUE(record_history(path, run_of(7, 2.5), &why)) << why;
  ASSERT_TRUE(record_history(path, run_of(8, -0.1), &why)) << why;
  EXPECT_EQ(mode_of(d.path + "/cache/gpu-offload"), 0700u);
  EXPECT_EQ(mode_of(path), 0600u);
  const std::vector<HistoryRun> runs = read_history(path);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].program, 7u);
  EXPECT_DOUBLE_EQ(runs[0].gained_s, 2.5);
  EXPECT_TRUE(runs[0].started);
  EXPECT_EQ(runs[1].program, 8u);
  EXPECT_EQ(history_path([](const char* n) -> const char* { return std::string(n) == "XDG_CACHE_HOME" ? "/x/c" : "/home/u"; }),
            "/x/c/gpu-offload/history");
  EXPECT_EQ(history_path([](const char* n) -> const char* { return std::string(n) == "HOME" ? "/home/u" : nullptr; }),
            "/home/u/.cache/gpu-offload/history");
  EXPECT_EQ(history_path([](const char*) -> const char* { return "relative"; }), "");
}

TEST(History, SizeIsBounded) {
  TempDir d;
  const std::string path = d.path + "/gpu-offload/history";
  // Each run with as long an operation list as a line can hold.
  for (int i = 0; i < kHistoryMaxRuns + 40; ++i) {
    HistoryRun r = run_of(uint64_t(i), 1.0);
    for (int k = 0; k < 2 * kHistoryMaxOps; ++k) r.gpu_ops.push_back({"operation_" + std::to_string(k) + "_with_a_long_nam", int64_t(1) << 40});
    ASSERT_TRUE(record_history(path, r));
  }
  const std::vector<HistoryRun> runs = read_history(path);
  ASSERT_EQ(runs.size(), size_t(kHistoryMaxRuns));
  EXPECT_EQ(runs.front().program, 40u);  // the oldest went
  EXPECT_EQ(runs.back().program, uint64_t(kHistoryMaxRuns + 39));
  EXPECT_GT(runs.back().gpu_ops.size(), 10u);  // cut to what fits a line, still read
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_LE(size_t(st.st_size), kHistoryMaxBytes);
}

TEST(History, LinksAndOtherPeoplesFilesAreRefusedAndLeftAlone) {
  TempDir d;
  // The file is a symbolic link to a file elsewhere: not read, not written through.
  const std::string dir = d.path + "/gpu-offload";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const std::string target = d.path + "/precious";
  std::ofstream(target) << "gpu-offload history 1\n00000000000000aa 9.000000 1 1\n";
  chmod(target.c_str(), 0600);
  ASSERT_EQ(symlink(target.c_str(), (dir + "/history").c_str()), 0);
  EXPECT_TRUE(read_history(dir + "/history").empty());
  std::string why;
  EXPECT_FALSE(record_history(dir + "/history", run_of(1, 1.0), &why));
  EXPECT_NE(why, "");
  EXPECT_EQ(slurp(target), "gpu-offload history 1\n00000000000000aa 9.000000 1 1\n");

  // The folder is a link: refused.
  const std::string real = d.path + "/real";
  ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
  ASSERT_EQ(symlink(real.c_str(), (d.path + "/linked").c_str()), 0);
  EXPECT_FALSE(record_history(d.path + "/linked/history", run_of(1, 1.0)));
  EXPECT_NE(access((real + "/history").c_str(), F_OK), 0);

  // A folder or file open to others: refused (the file is not read either).
  const std::string open_dir = d.path + "/open";
  ASSERT_EQ(mkdir(open_dir.c_str(), 0755), 0);
  chmod(open_dir.c_str(), 0755);
  EXPECT_FALSE(record_history(open_dir + "/history", run_of(1, 1.0)));
  const std::string shared = d.path + "/gpu-offload2";
  ASSERT_EQ(mkdir(shared.c_str(), 0700), 0);
  std::ofstream(shared + "/history") << "gpu-offload history 1\n00000000000000aa 9.000000 1 1\n";
  chmod((shared + "/history").c_str(), 0644);
  EXPECT_TRUE(read_history(shared + "/history").empty());
}

TEST(History, MalformedTextIsIgnoredLineByLineAndAnyTextIsSafe) {
  EXPECT_TRUE(parse_history("").empty());
  EXPECT_TRUE(parse_history("not a history\n0000000000000001 1.0 1 1\n").empty());
  const std::vector<HistoryRun> runs = parse_history(
      "gpu-offload history 1\n"
      "0000000000000001 1.500000 1 1700000000\n"    // good
      "0000000000000002 nan 1 1\n"                  // not finite
      "0000000000000003 1e300 1 1\n"                // absurd
      "0000000000000004 1.0 2 1\n"                  // started is 0 or 1
      "00000000000000zz 1.0 1 1\n"                  // not hex
      "0000000000000006 1.0 1 1 trailing\n"         // extra text
      "0000000000000007 1.0 1 -5\n"                 // negative time
      "000000000000000800 1.0 1 1\n"                // key too long
      "0000000000000009 -2.000000 0 1700000001\n"   // good
      "000000000000000a 1.0 1 1");                  // cut short (no newline)
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].program, 1u);
  EXPECT_EQ(runs[1].program, 9u);
  EXPECT_FALSE(runs[1].started);
  // Random bytes and random mutations of a good file never crash and never yield a non-finite gain.
  std::mt19937 rng(19);
  const std::string good = format_history({run_of(1, 1.0), run_of(2, 3.0, false)});
  for (int i = 0; i < 3000; ++i) {
    std::string t = good;
    if (i % 2) {
      t.assign(size_t(rng() % 300), '\0');
      for (char& ch : t) ch = char(rng());
      if (i % 4 == 1) t = "gpu-offload history 1\n" + t;
    } else {
      for (int k = 0; k < 4; ++k) t[rng() % t.size()] = char(rng());
    }
    for (const HistoryRun& r : parse_history(t)) EXPECT_TRUE(std::isfinite(r.gained_s));
  }
  // A damaged file is replaced by a good one at the next record.
  TempDir d;
  const std::string path = d.path + "/gpu-offload/history";
  ASSERT_TRUE(record_history(path, run_of(1, 1.0)));
  std::ofstream(path) << "\x01\x02garbage";
  EXPECT_TRUE(read_history(path).empty());
  ASSERT_TRUE(record_history(path, run_of(2, 1.0)));
  ASSERT_EQ(read_history(path).size(), 1u);
}

TEST(History, TwoProcessesWritingAtOnceLoseNothing) {
  TempDir d;
  const std::string path = d.path + "/gpu-offload/history";
  const int per_process = 100;
  pid_t kids[2];
  for (int k = 0; k < 2; ++k) {
    kids[k] = fork();
    ASSERT_GE(kids[k], 0);
    if (kids[k] == 0) {
      bool ok = true;
      for (int i = 0; i < per_process; ++i) ok = record_history(path, run_of(uint64_t(k + 1), double(i))) && ok;
      _exit(ok ? 0 : 1);
    }
  }
  for (pid_t kid : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(kid, &status, 0), kid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const std::vector<HistoryRun> runs = read_history(path);
  ASSERT_EQ(runs.size(), size_t(2 * per_process));
  int seen[3] = {0, 0, 0};
  for (const HistoryRun& r : runs) {
    ASSERT_TRUE(r.program == 1 || r.program == 2);
    EXPECT_DOUBLE_EQ(r.gained_s, double(seen[r.program]++));  // each process's runs in its own order
  }
  EXPECT_EQ(access((path + ".tmp." + std::to_string(kids[0])).c_str(), F_OK), -1);  // no leftovers
}

TEST(History, TheOperationsARunRanOnTheGpuComeBackInTheirOrder) {
  TempDir d;
  const std::string path = d.path + "/gpu-offload/history";
  HistoryRun older = run_of(5, 2.0), latest = run_of(5, 3.0), other = run_of(6, 1.0);
  older.gpu_ops = {{"dgemm", 4096}, {"zheevd", 2048}};
  latest.gpu_ops = {{"sgetrf", 256}, {"dgemm", 1024}};
  other.gpu_ops = {{"cgemm", 64}};
  ASSERT_TRUE(record_history(path, older));
  ASSERT_TRUE(record_history(path, other));
  ASSERT_TRUE(record_history(path, latest));
  const std::vector<HistoryRun> runs = read_history(path);
  ASSERT_EQ(runs.size(), 3u);
  ASSERT_EQ(runs[2].gpu_ops.size(), 2u);
  EXPECT_EQ(runs[2].gpu_ops[0].name, "sgetrf");
  EXPECT_EQ(runs[2].gpu_ops[1].n, 1024);
  // The latest run's in its order, then what only older runs used; each at its largest size; never
  // another program's.
  const ProgramHistory h = program_history(runs, 5);
  ASSERT_EQ(h.gpu_ops.size(), 3u);
  EXPECT_EQ(h.gpu_ops[0].name, "sgetrf");
  EXPECT_EQ(h.gpu_ops[1].name, "dgemm");
  EXPECT_EQ(h.gpu_ops[1].n, 4096);
  EXPECT_EQ(h.gpu_ops[2].name, "zheevd");
  EXPECT_TRUE(program_history(runs, 7).gpu_ops.empty());
  // A line of the first format (no operations) still reads, with none.
  const std::vector<HistoryRun> plain = parse_history("gpu-offload history 1\n0000000000000001 1.500000 1 1700000000\n");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_TRUE(plain[0].gpu_ops.empty());
}

TEST(History, AMalformedOperationListLosesItsLineOnly) {
  const std::vector<HistoryRun> runs = parse_history(
      "gpu-offload history 1\n"
      "0000000000000001 1.0 1 1 ops=dgemm:64,zgesdd:512\n"  // good
      "0000000000000002 1.0 1 1 ops=\n"                     // empty list
      "0000000000000003 1.0 1 1 ops=dgemm:64,\n"            // trailing comma
      "0000000000000004 1.0 1 1 ops=DGEMM:64\n"             // not a table name
      "0000000000000005 1.0 1 1 ops=dgemm:0\n"              // no size
      "0000000000000006 1.0 1 1 ops=dgemm:99999999999999\n" // absurd size
      "0000000000000007 1.0 1 1 ops=dgemm:64,dgemm:128\n"   // twice
      "0000000000000008 1.0 1 1 ops=dgemm:6x\n"             // not a number
      "0000000000000009 1.0 1 1  ops=dgemm:64\n"            // two spaces
      "000000000000000a 1.0 1 1 ops=dgemm\n"                // no size at all
      "000000000000000b 1.0 1 1 ops=sgemm:1\n");            // good
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].program, 1u);
  ASSERT_EQ(runs[0].gpu_ops.size(), 2u);
  EXPECT_EQ(runs[0].gpu_ops[1].name, "zgesdd");
  EXPECT_EQ(runs[0].gpu_ops[1].n, 512);
  EXPECT_EQ(runs[1].program, 11u);
  // What cannot be read back is not written: bad names, repeats and sizes are left out, the rest kept.
  HistoryRun r = run_of(1, 1.0);
  r.gpu_ops = {{"dgemm", 64}, {"Bad Name", 8}, {"dgemm", 128}, {"zgetrf", 0}, {"zgetrf", 32}};
  const std::vector<HistoryRun> back = parse_history(format_history({r}));
  ASSERT_EQ(back.size(), 1u);
  ASSERT_EQ(back[0].gpu_ops.size(), 2u);
  EXPECT_EQ(back[0].gpu_ops[0].n, 64);
  EXPECT_EQ(back[0].gpu_ops[1].name, "zgetrf");
}

TEST(History, OnlyRunsThatAllPaidCount) {
  std::vector<HistoryRun> runs = {run_of(5, 4.0), run_of(6, 9.0)};
  EXPECT_TRUE(program_history(runs, 5).all_paid());
  EXPECT_FALSE(program_history(runs, 7).all_paid());  // never ran
  runs.push_back(run_of(5, 3.0));
  runs.push_back(run_of(5, 5.0));
  ProgramHistory h = program_history(runs, 5);
  EXPECT_TRUE(h.all_paid());
  EXPECT_EQ(h.runs, kHistoryRunsConsidered);
  EXPECT_DOUBLE_EQ(h.gained_s, 12.0);
  runs.push_back(run_of(5, -0.2));  // the latest lost what its start-up cost
  EXPECT_FALSE(program_history(runs, 5).all_paid());
  runs.push_back(run_of(5, 0.0, false));  // and the next never started the GPU
  EXPECT_FALSE(program_history(runs, 5).all_paid());
}

}  // namespace
}  // namespace gofl
