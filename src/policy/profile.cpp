#include "policy/profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "common/fs.h"
#include "common/text.h"

namespace gofl {

namespace {

// The text of src/policy/default_profile.txt, embedded at build time (embed_text.cmake).
const char kBuiltinText[] =
#include "default_profile.inc"
    ;

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// A finite number, the whole word.
bool number(const std::string& w, double* out) {
  if (w.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = strtod(w.c_str(), &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

std::string fmt(double v) {
  char buf[40];
  snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

bool device_word(const std::string& w, int* d) {
  if (w == "cpu") return *d = kCpu, true;
  if (w == "gpu") return *d = kGpu, true;
  return false;
}

const char* device_name(int d) { return d == kCpu ? "cpu" : "gpu"; }

// Routine names a profile may give an efficiency for: every routine of the table, the Hermitian
// names folded into the symmetric ones.
bool known_routine(const std::string& r) {
  for (int i = 0; i < GOFL_N_OPS; ++i)
    if (r == gofl_ops[i].routine) return true;
  return false;
}

}  // namespace

double SpeedCurve::at(double flops) const {
  if (points.empty()) return 0;
  if (flops <= points.front().first) return points.front().second;
  if (flops >= points.back().first) return points.back().second;
  // First point with more work than `flops`; interpolate between it and the one before.
  auto hi = std::upper_bound(points.begin(), points.end(), flops,
                             [](double f, const std::pair<double, double>& p) { return f < p.first; });
  auto lo = hi - 1;
  if (lo->first == flops) return lo->second;
  const double t = (log(flops) - log(lo->first)) / (log(hi->first) - log(lo->first));
  return exp(log(lo->second) + t * (log(hi->second) - log(lo->second)));
}

bool parse_profile(const std::string& text, const std::string& name, Profile* out, std::string* error) {
  Profile p;
  p.name = name;
  int line_no = 0;
  bool have_version = false, have_startup = false, have_h2d = false, have_d2h = false;
  auto fail = [&](int line, const std::string& what) {
    if (error) *error = name + (line > 0 ? " line " + std::to_string(line) : std::string()) + ": " + what;
    return false;
  };
  // A curve's FLOPS:RATE points, words[first..], into c (work increasing from point to point).
  auto read_points = [&](const std::vector<std::string>& words, size_t first, SpeedCurve* c) {
    for (size_t i = first; i < words.size(); ++i) {
      const size_t colon = words[i].find(':');
      double f = 0, r = 0;
      if (colon == std::string::npos || !number(words[i].substr(0, colon), &f) || !number(words[i].substr(colon + 1), &r))
        return fail(line_no, "'" + words[i] + "' is not a FLOPS:RATE point (e.g. 2.1e9:5.6e11)");
      if (f <= 0 || r <= 0) return fail(line_no, "'" + words[i] + "': work and speed must be > 0");
      if (!c->points.empty() && f <= c->points.back().first)
        return fail(line_no, "'" + words[i] + "': the work must increase from point to point");
      c->points.emplace_back(f, r);
    }
    c->line = line_no;
    return true;
  };
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  for (std::string line : lines) {
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    if (!have_version) {
      const std::string magic = kProfileMagic;
      if (line.compare(0, magic.size(), magic) != 0)
        return fail(line_no, "not a gpu-offload profile (the first line must be \"" + magic + " " +
                                 std::to_string(kProfileVersion) + "\")");
      const std::string v = trim(line.substr(magic.size()));
      double ver = 0;
      if (!number(v, &ver) || ver != floor(ver) || ver < 1)
        return fail(line_no, "the format version '" + v + "' is not a whole number");
      if (ver != double(kProfileVersion))  // compared as doubles: a huge version does not fit an int
        return fail(line_no, "profile format version " + v + " is not the one this gpu-offload reads (" +
                                 std::to_string(kProfileVersion) + "); run 'gpu-offload calibrate' again");
      have_version = true;
      continue;
    }
    const std::vector<std::string> w = words(line);
    const std::string& key = w[0];
    const std::string rest = trim(line.substr(key.size()));
    if (key == "source" || key == "machine" || key == "created") {
      (key == "source" ? p.source : key == "machine" ? p.machine : p.created) = rest;
    } else if (key == "provisional") {
      if (rest == "yes") p.provisional = true;
      else if (rest == "no") p.provisional = false;
      else return fail(line_no, "provisional takes yes or no, not '" + rest + "'");
    } else if (key == "gpu_startup_s") {
      double v = 0;
      if (w.size() != 2 || !number(w[1], &v) || v < 0)
        return fail(line_no, "gpu_startup_s takes one number of seconds >= 0");
      p.gpu_startup_s = v;
      have_startup = true;
    } else if (key == "split_startup_s") {
      double v = 0;
      if (w.size() != 2 || !number(w[1], &v) || v < 0)
        return fail(line_no, "split_startup_s takes one number of seconds >= 0");
      p.split_startup_s = v;
    } else if (key == "h2d" || key == "d2h") {
      double fixed = 0, bw = 0;
      if (w.size() != 3 || !number(w[1], &fixed) || !number(w[2], &bw))
        return fail(line_no, key + " takes two numbers: the fixed cost in seconds and bytes per second");
      if (fixed < 0) return fail(line_no, key + ": the fixed cost must be >= 0");
      if (bw <= 0) return fail(line_no, key + ": the bandwidth must be > 0 bytes per second");
      CopyCost& c = key == "h2d" ? p.h2d : p.d2h;
      c.fixed_s = fixed;
      c.bytes_per_s = bw;
      (key == "h2d" ? have_h2d : have_d2h) = true;
    } else if (key == "cpu" || key == "gpu") {
      int dev = 0;
      device_word(key, &dev);
      if (w.size() < 3) return fail(line_no, key + " takes an operation and at least one FLOPS:RATE point");
      const int op = gofl_op_by_name(w[1].c_str());
      if (op < 0) return fail(line_no, "unknown operation '" + w[1] + "' (names as in the trace: dgemm, zheevd, ...)");
      SpeedCurve& c = p.curves[dev][op];
      if (!c.empty())
        return fail(line_no, "a second " + key + " curve for " + w[1] + " (the first is on line " +
                                 std::to_string(c.line) + ")");
      if (!read_points(w, 2, &c)) return false;
    } else if (key == "split") {
      double g = 0;
      const int op = w.size() >= 2 ? gofl_op_by_name(w[1].c_str()) : -1;
      if (w.size() < 4 || op < 0 || !number(w[2], &g) || g != floor(g) || g < 1 || g > 1024)
        return fail(line_no, "split takes an operation, a number of GPUs and at least one FLOPS:RATE point");
      SpeedCurve& c = p.split_curves[{op, int(g)}];
      if (!c.empty()) return fail(line_no, "a second split curve for " + w[1] + " on " + w[2] + " GPUs");
      if (!read_points(w, 3, &c)) return false;
    } else if (key == "efficiency" || key == "precision") {
      int dev = 0;
      double v = 0;
      if (w.size() != 4 || !device_word(w[1], &dev) || !number(w[3], &v))
        return fail(line_no, key + " takes cpu or gpu, " +
                                 (key == "efficiency" ? "a routine (potrf)" : "a precision (s, d, c or z)") +
                                 " and a number");
      if (v <= 0) return fail(line_no, key + ": the factor must be > 0");
      if (key == "efficiency") {
        if (!known_routine(w[2])) return fail(line_no, "unknown routine '" + w[2] + "' (without precision: gemm, potrf, ...)");
        p.efficiency[dev][w[2]] = v;
      } else {
        if (w[2].size() != 1 || !strchr("sdcz", w[2][0]))
          return fail(line_no, "unknown precision '" + w[2] + "' (s, d, c or z)");
        p.precision[dev][w[2][0]] = v;
      }
    } else {
      return fail(line_no, "unknown entry '" + key +
                               "' (valid: source, machine, created, provisional, gpu_startup_s, split_startup_s, h2d, d2h, cpu, gpu, split, "
                               "efficiency, precision)");
    }
  }
  if (!have_version) return fail(0, "empty (the first line must be \"" + std::string(kProfileMagic) + " 1\")");
  if (!have_startup) return fail(0, "gpu_startup_s is missing");
  if (!have_h2d) return fail(0, "h2d (host-to-GPU copy cost) is missing");
  if (!have_d2h) return fail(0, "d2h (GPU-to-host copy cost) is missing");
  for (int d = 0; d < 2; ++d) {
    bool gemm = false;
    for (int i = 0; i < GOFL_N_OPS; ++i)
      if (!strcmp(gofl_ops[i].routine, "gemm") && !p.curves[d][i].empty()) gemm = true;
    if (!gemm)
      return fail(0, std::string("no ") + device_name(d) + " gemm curve (" + device_name(d) +
                         " dgemm ...): every other operation can fall back on it, so one is required");
  }
  if (out) *out = std::move(p);
  return true;
}

std::string format_profile(const Profile& p, const std::vector<std::string>& comment) {
  std::string s = std::string(kProfileMagic) + " " + std::to_string(kProfileVersion) + "\n";
  for (const std::string& c : comment) s += c.empty() ? "#\n" : "# " + c + "\n";
  s += "# The format: 'gpu-offload help calibrate'.\n\n";
  if (!p.source.empty()) s += "source " + p.source + "\n";
  if (!p.machine.empty()) s += "machine " + p.machine + "\n";
  if (!p.created.empty()) s += "created " + p.created + "\n";
  s += std::string("provisional ") + (p.provisional ? "yes" : "no") + "\n\n";
  s += "gpu_startup_s " + fmt(p.gpu_startup_s) + "\n";
  if (p.split_startup_s >= 0) s += "split_startup_s " + fmt(p.split_startup_s) + "\n";
  s += "h2d " + fmt(p.h2d.fixed_s) + " " + fmt(p.h2d.bytes_per_s) + "\n";
  s += "d2h " + fmt(p.d2h.fixed_s) + " " + fmt(p.d2h.bytes_per_s) + "\n";
  for (int d = 0; d < 2; ++d) {
    s += d == kCpu ? "\n# CPU speed curves: FLOPS:FLOPS_PER_SECOND\n" : "\n# GPU compute speed curves (copies not included)\n";
    for (int i = 0; i < GOFL_N_OPS; ++i) {
      const SpeedCurve& c = p.curves[d][i];
      if (c.empty()) continue;
      s += std::string(device_name(d)) + " " + gofl_ops[i].name;
      for (const auto& [f, r] : c.points) s += " " + fmt(f) + ":" + fmt(r);
      s += "\n";
    }
  }
  if (!p.split_curves.empty()) s += "\n# Calls split over several GPUs: OP GPUS FLOPS:FLOPS_PER_SECOND (copies included)\n";
  for (const auto& [key, c] : p.split_curves) {
    s += std::string("split ") + gofl_ops[key.first].name + " " + std::to_string(key.second);
    for (const auto& [f, r] : c.points) s += " " + fmt(f) + ":" + fmt(r);
    s += "\n";
  }
  for (int d = 0; d < 2; ++d) {
    if (!p.efficiency[d].empty()) s += "\n";
    for (const auto& [r, v] : p.efficiency[d]) s += std::string("efficiency ") + device_name(d) + " " + r + " " + fmt(v) + "\n";
  }
  for (int d = 0; d < 2; ++d) {
    if (!p.precision[d].empty()) s += "\n";
    for (const auto& [c, v] : p.precision[d])
      s += std::string("precision ") + device_name(d) + " " + std::string(1, c) + " " + fmt(v) + "\n";
  }
  return s;
}

const char* builtin_profile_text() { return kBuiltinText; }

const Profile& builtin_profile() {
  // Never destroyed: the library may still need it in its destructor (the summary at exit).
  static const Profile* p = [] {
    Profile* r = new Profile;
    std::string err;
    if (!parse_profile(kBuiltinText, "built-in", r, &err)) {
      // A build-time mistake in default_profile.txt; the unit tests catch it first.
      fprintf(stderr, "gpu-offload: the built-in profile is damaged: %s\n", err.c_str());
      abort();
    }
    return r;
  }();
  return *p;
}

std::string user_profile_path(const char* (*get)(const char*)) {
  if (const char* x = get("XDG_CONFIG_HOME"); x && *x == '/') return std::string(x) + "/gpu-offload/profile";
  if (const char* h = get("HOME"); h && *h) return std::string(h) + "/.config/gpu-offload/profile";
  return "";
}

bool read_profile(const std::string& path, Profile* out, std::string* error, bool* missing) {
  std::string text, why;
  if (missing) *missing = false;
  if (!read_regular_file(path, 16u << 20, &text, &why)) {
    if (missing) *missing = errno == ENOENT;
    if (error) *error = "cannot read the profile " + path + ": " + why;
    return false;
  }
  std::string err;
  if (!parse_profile(text, path, out, &err)) {
    if (error) *error = "the profile " + err;
    return false;
  }
  return true;
}

Profile load_profile(const std::string& explicit_path, const char* (*get)(const char*), std::string* message) {
  std::string path = explicit_path;
  bool must_exist = !path.empty();
  if (path.empty()) path = user_profile_path(get);
  if (path.empty()) return builtin_profile();
  Profile p;
  std::string err;
  bool missing = false;
  if (!read_profile(path, &p, &err, &missing)) {
    // A missing per-user file is the ordinary case: the built-in default serves, silently.
    if ((must_exist || !missing) && message) *message = err + "; using the built-in profile instead";
    return builtin_profile();
  }
  return p;
}

std::string profile_label(const Profile& p) { return p.provisional ? p.name + " (provisional)" : p.name; }

}  // namespace gofl
