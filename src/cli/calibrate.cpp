// gpu-offload calibrate: runs the calibration workload (src/calibrate/workload.cpp) under the library
// twice, every call forced to the CPU and then to the GPU, each pass traced, and fits the machine
// profile from the two traces (policy/fit.h): speed curves, copy costs and the GPU start-up cost.
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "calibrate/workload.h"
#include "cli/cli.h"
#include "cli/help.h"
#include "cli/library_path.h"
#include "cli/options.h"
#include "common/fs.h"
#include "common/table.h"
#include "policy/fit.h"
#include "policy/model.h"
#include "policy/profile.h"
#include "policy/registry.h"
#include "report/text.h"
#include "trace/call_record.h"
#include "trace/reader.h"

extern char** environ;

namespace gofl::cli {
namespace {

const std::vector<OptionSpec> kCalibrateOptions = {
    {"--quick", nullptr}, {"--output", "FILE"}, {"--traces", "DIR"}, {"--blas", "LIB"}, {"--only", "ROUTINES"}};
const char* const kDefaultBlas = "libblas.so.3:liblapack.so.3";

// Routines whose GPU copies are exactly the operands' extents in the workload (gemm runs with
// beta = 1, so C is copied in): the samples of the copy-cost fit.
bool exact_copies(int op) {
  const char* r = gofl_ops[op].routine;
  return !strcmp(r, "gemm") || !strcmp(r, "trsm") || !strcmp(r, "potrf") || !strcmp(r, "getrf");
}

struct Point {
  std::string op;
  int op_id = -1;
  int n = 0;
  uint64_t w0 = 0, w1 = 0;
  int reps = 0, bad = 0;
  std::vector<double> seconds, compute, copy_in, copy_out;
  int elsewhere = 0;        // calls of the point that ran on the other device (GPU pass: on the CPU)
  std::string why_elsewhere;  // the reason of the last of them
  double flops = 0, bytes_in = 0, bytes_out = 0;
};

struct Pass {
  bool ran = false, no_gpu = false;
  std::string no_gpu_reason, blas;
  double startup_s = -1, canary_s = 0;
  int noisy = 0, remeasured = 0, skipped = 0, out_of_time = 0;
  std::vector<Point> points;
};

std::string exe_path() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Failure("cannot find this program (/proc/self/exe) to run the calibration workload");
  buf[n] = '\0';
  return buf;
}

void mkdirs(const std::string& dir) {
  std::string failed;
  if (!make_dirs(dir, &failed))
    throw Failure("cannot create the folder " + (failed.empty() ? dir : failed) + ": " + strerror(errno));
}

// Removes the trace files and points file a previous calibration left in `dir`.
void clear_dir(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > strlen(GOFL_TRACE_SUFFIX) && name.compare(name.size() - strlen(GOFL_TRACE_SUFFIX), std::string::npos, GOFL_TRACE_SUFFIX) == 0)
        unlink((dir + "/" + name).c_str());
    }
    closedir(d);
  }
  unlink((dir + "/points.txt").c_str());
}

void remove_tree(const std::string& dir) {
  for (const char* sub : {"/cpu", "/gpu", "/split"}) {
    clear_dir(dir + sub);
    rmdir((dir + sub).c_str());
  }
  rmdir(dir.c_str());
}

// Runs this program's workload under the library; returns its exit status.
int run_pass(const std::string& exe, const std::string& lib, bool gpu, bool quick, const std::string& blas,
             const std::string& only, const std::string& dir, bool split = false) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("GPU_OFFLOAD_", 0) == 0 || kv.rfind("LD_PRELOAD=", 0) == 0) continue;
    env.push_back(kv);
  }
  env.push_back("LD_PRELOAD=" + lib);
  env.push_back(std::string("GPU_OFFLOAD_DEVICE=") + (gpu ? "gpu" : "cpu"));
  // The GPU pass measures one GPU; the split pass every call over all of them (policy/split.h).
  env.push_back(std::string("GPU_OFFLOAD_SPLIT=") + (split ? "force" : "off"));
  // The copy rates are fitted from every call's copies: none may be skipped by a kept device copy.
  env.push_back("GPU_OFFLOAD_RESIDENCY=off");
  env.push_back("GPU_OFFLOAD_TRACE=" + dir);
  // Every call recorded on its own, none counted below the threshold (preload/counted.h): the fit
  // needs each call's measured time. The forced device makes the threshold decide nothing else.
  env.push_back("GPU_OFFLOAD_THRESHOLD=0");
  env.push_back("GPU_OFFLOAD_VERIFY=0");
  env.push_back("GPU_OFFLOAD_SUMMARY=0");
  // Kept: which profile plans the sizes, which GPU backend the library loads, and each pass's budget.
  for (const SettingId keep : {SettingId::PROFILE, SettingId::BACKEND, SettingId::CALIBRATE_PASS_MS})
    if (const char* v = setting_env(keep)) env.push_back(std::string(setting_info(keep).var) + "=" + v);
  std::vector<std::string> args = {exe, "calibrate", "--workload", gpu ? "gpu" : "cpu", "--points", dir + "/points.txt",
                                   "--blas", blas};
  if (quick) args.push_back("--quick");
  if (!only.empty()) {
    args.push_back("--only");
    args.push_back(only);
  }
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  fflush(stdout);
  fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw Failure(std::string("cannot start the calibration workload: ") + strerror(errno));
  if (pid == 0) {
    execve(argv[0], argv.data(), envp.data());
    fprintf(stderr, "gpu-offload: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

Pass read_points(const std::string& path) {
  Pass p;
  std::ifstream in(path);
  if (!in) throw Failure("the calibration workload left no results (" + path + ")");
  std::string line;
  bool ended = false;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string key;
    ss >> key;
    if (key == "point") {
      Point pt;
      unsigned long long w0 = 0, w1 = 0;
      ss >> pt.op >> pt.n >> pt.flops >> w0 >> w1 >> pt.reps >> pt.bad;
      pt.w0 = w0;
      pt.w1 = w1;
      pt.flops = 0;  // taken from the trace
      pt.op_id = gofl_op_by_name(pt.op.c_str());
      if (pt.op_id >= 0 && w1 >= w0) p.points.push_back(pt);
    } else if (key == "startup_s") {
      ss >> p.startup_s;
    } else if (key == "canary_s") {
      ss >> p.canary_s;
    } else if (key == "blas") {
      std::string lib;
      ss >> lib;
      p.blas += (p.blas.empty() ? "" : ":") + lib;
    } else if (key == "no_gpu") {
      p.no_gpu = true;
      std::getline(ss >> std::ws, p.no_gpu_reason);
    } else if (key == "noisy") {
      std::string w;
      ss >> p.noisy >> w >> p.remeasured >> w >> p.skipped;
    } else if (key == "out_of_time") {
      ss >> p.out_of_time;
    } else if (key == "end") {
      ended = true;
    }
  }
  p.ran = ended || p.no_gpu;
  return p;
}

// The GPUs the GPU pass's process saw (its traced GPU start), 0 when none was recorded.
int traced_gpu_count(const std::string& dir) {
  for (const std::string& path : trace_paths({dir})) {
    TraceReader r;
    r.open(path);
    gofl_record rec;
    while (r.next(&rec))
      if (rec.kind == GOFL_REC_GPU_START && rec.u.start.ok && rec.u.start.gpu.recorded) return rec.u.start.gpu.count;
  }
  return 0;
}

// The routines the split engines run in some precision (the table's split column), of those
// calibrated (`only`; empty: all), in table order.
std::string split_routines_of(const std::string& only) {
  std::string out;
  const std::string padded = "," + only + ",";
  for (int op = 0; op < GOFL_N_OPS; ++op) {
    const std::string r = gofl_ops[op].routine;
    if (gofl_ops[op].split == GOFL_SPLIT_NONE || ("," + out + ",").find("," + r + ",") != std::string::npos) continue;
    if (!only.empty() && padded.find("," + r + ",") == std::string::npos) continue;
    out += (out.empty() ? "" : ",") + r;
  }
  return out;
}

// Assigns the pass's trace records to its points: the application's own calls of the point's
// operation that started inside its window; calls with info != 0 are left out.
void read_trace(const std::string& dir, bool gpu, Pass& pass, bool split = false) {
  std::sort(pass.points.begin(), pass.points.end(), [](const Point& a, const Point& b) { return a.w0 < b.w0; });
  for (const std::string& path : trace_paths({dir})) {
    TraceReader r;
    r.open(path);
    gofl_record rec;
    while (r.next(&rec)) {
      if (rec.kind != GOFL_REC_CALL) continue;
      const gofl_call_record& c = rec.u.call;
      if (c.depth != 0 || (c.flags & (GOFL_F_QUERY | GOFL_F_INFO_NONZERO))) continue;
      auto it = std::upper_bound(pass.points.begin(), pass.points.end(), c.t_start_ns,
                                 [](uint64_t t, const Point& p) { return t < p.w0; });
      if (it == pass.points.begin()) continue;
      Point& pt = *(it - 1);
      if (c.t_start_ns > pt.w1 || c.op != pt.op_id) continue;
      if (c.device != (gpu ? GOFL_DEV_GPU : GOFL_DEV_CPU) || (split && !(c.flags & GOFL_F_SPLIT))) {
        ++pt.elsewhere;  // e.g. a variant or a failure the GPU did not run
        pt.why_elsewhere = gofl_reason_name(c.reason);
        if (c.reason == GOFL_R_GPU_FAILED) pt.why_elsewhere += std::string(" (") + gofl_gpu_status_name(c.gpu_status) + ")";
        continue;
      }
      pt.flops = c.flops;
      pt.seconds.push_back(double(c.duration_ns) * 1e-9);
      if (gpu) {
        pt.compute.push_back(c.compute_s);
        pt.copy_in.push_back(c.copy_in_s);
        pt.copy_out.push_back(c.copy_out_s);
        const CallBytes b = call_bytes(call_from_record(c, rec.resident));
        pt.bytes_in = b.in;
        pt.bytes_out = b.out;
      }
    }
  }
}

std::string hostname_and_cpu() {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 1);
      while (!model.empty() && model[0] == ' ') model.erase(0, 1);
      break;
    }
  return std::string(host) + ": " + (model.empty() ? "unknown CPU" : model) + ", " +
         std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
}

std::string today() {
  char b[64];
  const time_t t = time(nullptr);
  struct tm tm;
  localtime_r(&t, &tm);
  strftime(b, sizeof b, "%Y-%m-%d %H:%M", &tm);
  return b;
}

std::string gflops(const SpeedCurve& c) {
  if (c.empty()) return "-";
  char b[64];
  double lo = 1e300, hi = 0;
  for (const auto& [f, r] : c.points) lo = std::min(lo, r), hi = std::max(hi, r);
  if (c.points.size() == 1) snprintf(b, sizeof b, "%.3g", hi / 1e9);
  else snprintf(b, sizeof b, "%.3g - %.3g", lo / 1e9, hi / 1e9);
  return b;
}

int workload_main(const std::vector<std::string>& args) {
  WorkloadOptions w;
  w.blas = kDefaultBlas;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw UsageError("calibrate", a + " needs a value");
      return args[++i];
    };
    if (a == "--quick") w.quick = true;
    else if (a == "--points") w.points_path = value();
    else if (a == "--blas") w.blas = value();
    else if (a == "--only") w.only = value();
    else throw UsageError("calibrate", "unknown workload option '" + a + "'");
  }
  if (args[0] != "cpu" && args[0] != "gpu") throw UsageError("calibrate", "--workload takes cpu or gpu");
  w.gpu = args[0] == "gpu";
  if (w.points_path.empty()) throw UsageError("calibrate", "--workload needs --points FILE");
  return calibrate_workload(w);
}

}  // namespace

int calibrate_command(const std::vector<std::string>& args) {
  // The workload itself: this program again, under the library (run_pass).
  if (!args.empty() && args[0] == "--workload")
    return workload_main(std::vector<std::string>(args.begin() + 1, args.end()));
  const ParsedOptions o = parse_options("calibrate", args, kCalibrateOptions, false);
  if (o.help) {
    fputs(find_command_help("calibrate")->text, stdout);
    return 0;
  }
  if (!o.positionals.empty()) throw UsageError("calibrate", "calibrate takes no arguments, only options");
  const bool quick = o.has("--quick");
  const std::string blas = o.has("--blas") ? o.values.at("--blas") : kDefaultBlas;
  const std::string only = o.has("--only") ? o.values.at("--only") : "";
  for (size_t pos = 0; pos <= only.size() && !only.empty();) {
    size_t comma = only.find(',', pos);
    if (comma == std::string::npos) comma = only.size();
    const std::string r = only.substr(pos, comma - pos);
    bool known = false;
    std::string borrows;  // a routine measured through its family's problem (geevx through geev's)
    for (int i = 0; i < GOFL_N_OPS; ++i) {
      const gofl_op_info& op = gofl_ops[i];
      if (!op.gpu_capable || r != op.routine) continue;
      known = true;
      if (!(op.calib_n3 > 0) && op.kind != GOFL_KIND_FFT) borrows = op.family;
    }
    if (!known) throw UsageError("calibrate", "--only: '" + r + "' is not a GPU-capable routine (gemm, potrf, heevd, ...)");
    if (!borrows.empty())
      throw UsageError("calibrate", "--only: '" + r + "' is not measured on its own: it borrows " + borrows +
                                        "'s measurements (--only " + borrows + ")");
    pos = comma + 1;
  }
  std::string output = o.has("--output") ? o.values.at("--output") : "";
  if (output.empty()) {
    output = user_profile_path([](const char* n) -> const char* { return getenv(n); });
    if (output.empty()) throw Failure("neither XDG_CONFIG_HOME nor HOME is set: name the profile with --output FILE");
  }
  const std::string lib = find_preload_library();
  const std::string exe = exe_path();

  std::string dir;
  const bool keep = o.has("--traces");
  if (keep) {
    dir = o.values.at("--traces");
    mkdirs(dir);
  } else {
    const char* tmp = getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpu-offload-calibrate-XXXXXX";
    if (!mkdtemp(tmpl.data())) throw Failure("cannot create a temporary folder: " + std::string(strerror(errno)));
    dir = tmpl;
  }
  const std::string cpu_dir = dir + "/cpu", gpu_dir = dir + "/gpu";
  mkdirs(cpu_dir);
  mkdirs(gpu_dir);
  clear_dir(cpu_dir);
  clear_dir(gpu_dir);

  printf("Calibrating %s (%s run): every GPU-capable routine in every precision over growing sizes,\n"
         "first with every call on the CPU, then on the GPU. BLAS/LAPACK: %s\n",
         hostname_and_cpu().c_str(), quick ? "quick" : "full", blas.c_str());
  fflush(stdout);

  Pass cpu, gpu;
  int rc = run_pass(exe, lib, false, quick, blas, only, cpu_dir);
  if (rc != 0) throw Failure("the CPU pass of the calibration workload failed (exit status " + std::to_string(rc) + ")");
  cpu = read_points(cpu_dir + "/points.txt");
  read_trace(cpu_dir, false, cpu);
  rc = run_pass(exe, lib, true, quick, blas, only, gpu_dir);
  if (rc == 3) {
    gpu = read_points(gpu_dir + "/points.txt");
    printf("No usable GPU (%s; the library's message above says why): only the CPU side is calibrated;\nthe GPU part of the profile is the built-in one's.\n",
           gpu.no_gpu_reason.c_str());
  } else if (rc != 0) {
    throw Failure("the GPU pass of the calibration workload failed (exit status " + std::to_string(rc) + ")");
  } else {
    gpu = read_points(gpu_dir + "/points.txt");
    read_trace(gpu_dir, true, gpu);
  }
  const bool gpu_measured = rc == 0;

  // Calls split over every usable GPU (cuda/split.h), where there are several: the whole call's speed
  // per operation on that many GPUs. With one GPU a call is never split, and nothing is measured.
  Pass split;
  const int gpus = gpu_measured ? traced_gpu_count(gpu_dir) : 0;
  const std::string split_only = split_routines_of(only);
  std::string split_note;
  if (!gpu_measured) {
    split_note = "multi-GPU curves: skipped (no usable GPU)";
  } else if (gpus < 2) {
    split_note = "multi-GPU curves: skipped (one usable GPU: a call is never split over several)";
  } else if (split_only.empty()) {
    split_note = "multi-GPU curves: skipped (--only names no routine the split engines run)";
  } else {
    printf("Then every call of %s split over the %d GPUs (cuBLASXt, cusolverMg).\n", split_only.c_str(), gpus);
    const std::string split_dir = dir + "/split";
    mkdirs(split_dir);
    clear_dir(split_dir);
    const int src = run_pass(exe, lib, true, quick, blas, split_only, split_dir, true);
    if (src != 0) {
      split_note = "multi-GPU curves: the split pass failed (exit status " + std::to_string(src) + "); none written";
    } else {
      split = read_points(split_dir + "/points.txt");
      read_trace(split_dir, true, split, true);
    }
  }

  // The fit.
  const Profile& builtin = builtin_profile();
  Profile p;
  p.name = output;
  p.provisional = !gpu_measured;
  p.source = std::string("gpu-offload calibrate") + (quick ? " --quick" : "") + (only.empty() ? "" : " --only " + only) +
             (gpu_measured ? " (CPU and GPU passes)" : " (CPU pass only; the GPU part is the built-in profile's)");
  p.machine = hostname_and_cpu() + "; BLAS " + (cpu.blas.empty() ? blas : cpu.blas);
  p.created = today();
  for (int d = 0; d < 2; ++d) {
    p.efficiency[d] = builtin.efficiency[d];
    p.precision[d] = builtin.precision[d];
  }
  std::map<int, std::vector<std::pair<double, double>>> cpu_pts, gpu_pts;
  for (const Point& pt : cpu.points) {
    const double t = lower_quartile(pt.seconds);
    if (t > 0 && pt.flops > 0) cpu_pts[pt.op_id].push_back({pt.flops, pt.flops / t});
  }
  std::vector<std::pair<double, double>> h2d, d2h;
  std::map<int, std::pair<int, std::string>> gpu_elsewhere;  // op -> calls not run on the GPU, a reason
  for (const Point& pt : gpu.points) {
    if (pt.elsewhere) {
      auto& e = gpu_elsewhere[pt.op_id];
      e.first += pt.elsewhere;
      e.second = pt.why_elsewhere;
    }
    // A point is the GPU's only when most of its calls ran there.
    if (pt.compute.empty() || 2 * pt.elsewhere > int(pt.compute.size())) continue;
    const double t = lower_quartile(pt.compute);
    if (t > 0 && pt.flops > 0) gpu_pts[pt.op_id].push_back({pt.flops, pt.flops / t});
    if (exact_copies(pt.op_id) && !pt.copy_in.empty()) {
      h2d.push_back({pt.bytes_in, lower_quartile(pt.copy_in)});
      d2h.push_back({pt.bytes_out, lower_quartile(pt.copy_out)});
    }
  }
  for (auto& [op, pts] : cpu_pts) p.curves[kCpu][op] = curve_from_points(pts);
  std::vector<std::string> notes;
  if (!split_note.empty()) notes.push_back(split_note);
  {
    std::map<int, std::vector<std::pair<double, double>>> split_pts;
    std::map<int, int> split_elsewhere;
    for (const Point& pt : split.points) {
      split_elsewhere[pt.op_id] += pt.elsewhere;
      if (pt.seconds.empty() || 2 * pt.elsewhere > int(pt.seconds.size())) continue;
      const double t = lower_quartile(pt.seconds);  // the whole call: the engines copy as they compute
      if (t > 0 && pt.flops > 0) split_pts[pt.op_id].push_back({pt.flops, pt.flops / t});
    }
    for (auto& [op, pts] : split_pts) {
      SpeedCurve c = curve_from_points(pts);
      if (c.points.size() >= 2) p.split_curves[{op, gpus}] = c;
    }
    for (const auto& [op, n] : split_elsewhere)
      if (n) notes.push_back(std::string("split ") + gofl_ops[op].name + ": " + std::to_string(n) +
                             " calls of the split pass ran on one GPU or the CPU (a variant the engines refuse)");
  }
  for (auto& [op, pts] : gpu_pts) {
    SpeedCurve c = curve_from_points(pts);
    // A single size says nothing about how the speed grows: such an operation falls back on its
    // precision's gemm (efficiency lines), as one without a curve does.
    if (c.points.size() >= 2) p.curves[kGpu][op] = c;
    else notes.push_back(std::string("GPU ") + gofl_ops[op].name + ": measured at one size only; its speed comes from gemm's");
  }
  for (const auto& [op, e] : gpu_elsewhere)
    notes.push_back(std::string("GPU ") + gofl_ops[op].name + ": " + std::to_string(e.first) +
                    " calls of the GPU pass ran on the CPU (" + e.second + ")");
  if (gpu_measured) {
    std::string why;
    if (!fit_copy_cost(h2d, &p.h2d, &why)) {
      p.h2d = builtin.h2d;
      notes.push_back("host-to-GPU copies could not be fitted (" + why + "): the built-in cost is used");
    }
    if (!fit_copy_cost(d2h, &p.d2h, &why)) {
      p.d2h = builtin.d2h;
      notes.push_back("GPU-to-host copies could not be fitted (" + why + "): the built-in cost is used");
    }
    p.gpu_startup_s = gpu.startup_s >= 0 ? gpu.startup_s : builtin.gpu_startup_s;
  } else {
    p.h2d = builtin.h2d;
    p.d2h = builtin.d2h;
    p.gpu_startup_s = builtin.gpu_startup_s;
    for (int i = 0; i < GOFL_N_OPS; ++i) p.curves[kGpu][i] = builtin.curves[kGpu][i];
  }
  // Every device needs a gemm curve to fall back on.
  for (int d = 0; d < 2; ++d) {
    bool any_gemm = false;
    for (int i = 0; i < GOFL_N_OPS; ++i)
      if (!strcmp(gofl_ops[i].routine, "gemm") && !p.curves[d][i].empty()) any_gemm = true;
    if (!any_gemm) {
      for (int i = 0; i < GOFL_N_OPS; ++i)
        if (!strcmp(gofl_ops[i].routine, "gemm")) p.curves[d][i] = builtin.curves[d][i];
      notes.push_back(std::string("no ") + (d == kCpu ? "CPU" : "GPU") + " gemm was measured: the built-in gemm curves stand in");
    }
  }

  std::vector<std::string> comment = {
      "Written by gpu-offload calibrate" + std::string(quick ? " --quick" : "") + " on " + p.created + ".",
      "BLAS/LAPACK calibrated: " + (cpu.blas.empty() ? blas : cpu.blas),
      std::to_string(cpu.points.size()) + " CPU points, " + std::to_string(gpu.points.size()) +
          " GPU points; canary " + format_seconds(cpu.canary_s) + "; " + std::to_string(cpu.noisy + gpu.noisy) +
          " points waited in vain for a quiet machine, " + std::to_string(cpu.remeasured + gpu.remeasured) +
          " were measured again.",
  };
  for (const Pass* pass : {&cpu, &gpu})
    if (pass->out_of_time)
      notes.push_back(std::string("the ") + (pass == &cpu ? "CPU" : "GPU") + " pass ran out of time: " +
                      std::to_string(pass->out_of_time) +
                      " operations were not measured at their largest sizes (their speed is taken as flat beyond the largest measured)");
  if (!gpu_measured) comment.push_back("No usable GPU (" + gpu.no_gpu_reason + "): the GPU lines are the built-in profile's.");
  for (const std::string& n : notes) comment.push_back(n);
  const std::string text = format_profile(p, comment);
  {
    Profile check;
    std::string err;
    if (!parse_profile(text, output, &check, &err)) throw Failure("the fitted profile does not read back: " + err);
  }
  const size_t slash = output.rfind('/');
  if (slash != std::string::npos && slash > 0) mkdirs(output.substr(0, slash));
  const std::string tmp = output + ".tmp";
  FILE* f = fopen(tmp.c_str(), "w");
  if (!f || fputs(text.c_str(), f) < 0 || fclose(f) != 0 || rename(tmp.c_str(), output.c_str()) != 0)
    throw Failure("cannot write the profile " + output + ": " + strerror(errno));

  // What was measured.
  TextTable t({"operation", "sizes", "cpu GFLOP/s", "gpu GFLOP/s (compute)"});
  std::map<int, std::pair<int, int>> sizes;
  for (const Point* pt : [&] {
         std::vector<const Point*> v;
         for (const Point& x : cpu.points) v.push_back(&x);
         for (const Point& x : gpu.points) v.push_back(&x);
         return v;
       }()) {
    auto& s = sizes.emplace(pt->op_id, std::make_pair(pt->n, pt->n)).first->second;
    s.first = std::min(s.first, pt->n);
    s.second = std::max(s.second, pt->n);
  }
  for (const auto& [op, s] : sizes)
    t.add_row({gofl_ops[op].name, std::to_string(s.first) + " - " + std::to_string(s.second), gflops(p.curves[kCpu][op]),
               gpu_measured ? gflops(p.curves[kGpu][op]) : "(built-in)"});
  printf("\nMeasured\n");
  t.print(stdout);
  if (gpu_measured)
    printf("  copies: to the GPU %s + bytes / %.3g GB/s, back %s + bytes / %.3g GB/s; GPU start-up %s\n",
           format_seconds(p.h2d.fixed_s).c_str(), p.h2d.bytes_per_s / 1e9, format_seconds(p.d2h.fixed_s).c_str(),
           p.d2h.bytes_per_s / 1e9, format_seconds(p.gpu_startup_s).c_str());
  for (const std::string& n : notes) printf("  %s\n", n.c_str());
  if (cpu.noisy + gpu.noisy + cpu.remeasured + gpu.remeasured)
    printf("  the machine was busy: %d points waited in vain for a quiet machine, %d were measured again\n",
           cpu.noisy + gpu.noisy, cpu.remeasured + gpu.remeasured);
  const std::string user = user_profile_path([](const char* n) -> const char* { return getenv(n); });
  printf("\nWrote the profile to %s", output.c_str());
  if (output == user) printf(" (every run uses it from now on).\n");
  else printf("; use it with --profile %s or GPU_OFFLOAD_PROFILE.\n", output.c_str());
  if (!p.split_curves.empty()) {
    printf("  split over %d GPUs (whole call, copies included):", gpus);
    for (const auto& [key, c] : p.split_curves) printf(" %s %s GFLOP/s", gofl_ops[key.first].name, gflops(c).c_str());
    printf("\n");
  }
  if (keep) printf("The traces of the two passes are in %s and %s.\n", cpu_dir.c_str(), gpu_dir.c_str());
  else remove_tree(dir);
  return 0;
}

}  // namespace gofl::cli
