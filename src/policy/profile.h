// The machine profile: how fast each device runs each operation, what copies cost and what starting
// the GPU costs. A plain, versioned text file (the format is documented in default_profile.txt, the
// built-in profile compiled into the library); `gpu-offload calibrate` writes one.
//
// Shared by libgpuoffload.so (the decision) and the gpu-offload tool (estimate, calibrate): one
// parser, one writer, one built-in default.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/table.h"

namespace gofl {

constexpr int kProfileVersion = 1;
constexpr const char* kProfileMagic = "gpu-offload profile";

enum ProfileDevice { kCpu = 0, kGpu = 1 };

// Speed as a function of work: (flops, flops per second) points, flops strictly increasing.
// Interpolated linearly in log-log space, held flat outside the calibrated range.
struct SpeedCurve {
  std::vector<std::pair<double, double>> points;
  int line = 0;  // where it was defined (0: not from a file)

  bool empty() const { return points.empty(); }
  double at(double flops) const;  // flops per second; 0 for an empty curve
};

// A copy across the link: a fixed cost per call plus bytes / bandwidth.
struct CopyCost {
  double fixed_s = 0;
  double bytes_per_s = 0;
  double seconds(double bytes) const { return fixed_s + (bytes_per_s > 0 ? bytes / bytes_per_s : 0.0); }
};

struct Profile {
  std::string name;       // where it came from: a path, or "built-in"
  std::string source;     // the `source` line: how the numbers were obtained
  std::string machine;    // the `machine` line
  std::string created;    // the `created` line
  bool provisional = false;  // `provisional yes`: not measured by calibrate on this machine
  double gpu_startup_s = 0;
  // Starting the split engines on each GPU beyond the first (their contexts and handles), paid by the
  // first split call; -1: not in the profile, gpu_startup_s serves (a context each).
  double split_startup_s = -1;
  // Measured speeds of calls split over G GPUs, copies included (the whole call's time):
  // (op, G) -> curve. Written by calibrate where more than one GPU is usable; none: the rule's formula.
  std::map<std::pair<int, int>, SpeedCurve> split_curves;
  CopyCost h2d, d2h;
  SpeedCurve curves[2][GOFL_N_OPS];            // [ProfileDevice][gofl_op_id]
  std::map<std::string, double> efficiency[2];  // routine family -> speed relative to gemm
  std::map<char, double> precision[2];          // 's','d','c','z' -> speed relative to 'd'
};

// Parses profile text. On failure returns false and sets *error to "NAME line N: what is wrong"
// (line 0 for something missing from the whole file).
bool parse_profile(const std::string& text, const std::string& name, Profile* out, std::string* error);

// The profile as text that parse_profile reads back (the writer of `calibrate`). `comment` lines
// are written after the version line, each prefixed with "# ".
std::string format_profile(const Profile& p, const std::vector<std::string>& comment = {});

// The built-in default (src/policy/default_profile.txt, compiled in), parsed once.
const Profile& builtin_profile();
const char* builtin_profile_text();

// The per-user profile location: $XDG_CONFIG_HOME/gpu-offload/profile, else
// $HOME/.config/gpu-offload/profile ("" when neither variable is set). `get` is a getenv.
std::string user_profile_path(const char* (*get)(const char*));

// Reads and parses the profile file `path` (a regular file of at most 16 MB: never a FIFO or a
// device). On failure returns false with *error saying why ("cannot read the profile PATH: is a
// directory", or parse_profile's message) and *missing set when the file does not exist.
bool read_profile(const std::string& path, Profile* out, std::string* error, bool* missing = nullptr);

// The profile a run uses: `explicit_path` (GPU_OFFLOAD_PROFILE / --profile) if set, else the
// per-user file if it exists, else the built-in default. A file that cannot be read or parsed
// gives the built-in default and a one-line message in *message (the caller prints it once).
Profile load_profile(const std::string& explicit_path, const char* (*get)(const char*), std::string* message);

// A short description for summaries and trace headers: the name, plus "(provisional)" when so.
std::string profile_label(const Profile& p);

}  // namespace gofl
