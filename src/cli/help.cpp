#include "cli/help.h"

#include <string.h>

#include <string>

#include "policy/level.h"
#include "policy/registry.h"

namespace gofl::cli {

const CommandHelp kCommandHelp[] = {
    {"run", "run a program with its BLAS/LAPACK calls intercepted (and traced, offloaded)",
     R"(Usage: gpu-offload run [OPTIONS] [--] PROGRAM [ARGS...]

Runs PROGRAM with libgpuoffload.so preloaded, so that its BLAS, LAPACK and FFTW calls are
intercepted, measured and (where it pays) run on the GPU. The options become GPU_OFFLOAD_*
environment variables, which the program's children inherit too. Options stop at PROGRAM.

Options:
  --trace DIR       write one trace file per process into DIR (created if missing);
                    read it with 'gpu-offload report DIR' or 'gpu-offload dump DIR'
                    (GPU_OFFLOAD_TRACE)
  --summary         print a table of the intercepted calls on stderr when each process
                    exits (GPU_OFFLOAD_SUMMARY=1). With it or --trace, calls below the
                    threshold are counted after the first 64 of each call site and size
                    class, their time estimated from a sample: a few ns a call, not 0.1 us
  --device MODE     cpu: never offload; gpu: offload every GPU-capable call;
                    auto: decide per call from the machine profile (default)
                    (GPU_OFFLOAD_DEVICE)
  --level N         1 to 10, how much predicted gain offloading needs and how much room
                    is left to other users of the GPU; 5 is the default (GPU_OFFLOAD_LEVEL)
  --verify          run GPU-capable calls on both devices and compare the results; the
                    program gets the CPU result (GPU_OFFLOAD_VERIFY=1)
  --profile FILE    the machine profile to decide with (GPU_OFFLOAD_PROFILE)
  --residency on|off  keep operands the program has not changed on the GPU between calls
                    (default on; GPU_OFFLOAD_RESIDENCY)
  --gpus LIST|all   the GPUs a process may run on, as CUDA numbers them ("1", "0,2", "0-3");
                    each process runs on one of them: a rank of mpirun/srun on its node-local
                    rank modulo their number, any other process on the least loaded one
                    (default all; GPU_OFFLOAD_GPUS)
  --history on|off  remember what each run of a program gained from the GPU, in a private
                    file in the cache folder ($XDG_CACHE_HOME/gpu-offload/history, else
                    ~/.cache/gpu-offload/history); when the latest runs of the same program
                    (executable, and an interpreter's script) all gained, auto starts the
                    GPU at the first call predicted to gain (default on; GPU_OFFLOAD_HISTORY)
  --split off|auto|force  one call over several of those GPUs (cuBLASXt, cusolverMg): auto when
                    the cost model predicts it faster than one GPU (never with one usable GPU),
                    force for every call the split engines run (default auto; GPU_OFFLOAD_SPLIT)
  -h, --help        this text

Settings not given as options come from GPU_OFFLOAD_* variables already in the environment, then
from the config file, then the defaults: see 'gpu-offload help config'; 'gpu-offload config' shows
the settings in force and where each comes from.

The library is found through GPU_OFFLOAD_LIBRARY, else next to this tool in ../lib,
../lib64 or ../lib/x86_64-linux-gnu. It is put first in LD_PRELOAD; entries already there stay.

Exit status: the program's; 127 if PROGRAM is not found, 126 if it cannot be executed,
2 for a wrong command line, 1 if the library or the trace folder is not usable.
)"},
    {"dump", "print every traced call, as a table or as CSV",
     R"(Usage: gpu-offload dump [--csv] [--starts] [--setup] DIR|FILE...

Prints one line per intercepted call in the trace files given, in file order, and one
aggregated line per call site and size class of the calls counted below the threshold (at the
end of each file; column aggregated). A DIR stands for every *.gofltrace file in it, sorted by
name.

Options:
  --csv        comma-separated values with a header line (quoted where a value needs it),
               for scripts and spreadsheets; without it, an aligned table with fewer columns
  --starts     the GPU starts instead of the calls: one line per process that started the GPU
               backend or tried to (columns file, pid, tid, t_start_ns, duration_ns, ok,
               message, gpu, gpu_count, pci_bus_id, gpu_name, chosen_by: why the start failed,
               or the GPU it runs on and why that one; waited_ns: how much of the start the
               program waited for, less than duration_ns when it ran beside the calls).
               The start-up is in no call's time.
               The table is followed by each start's steps and their times.
  --setup      the one-time costs instead of the calls: each step of the GPU start (loading
               the CUDA libraries, the context, the staging buffers, ...) and what each
               routine's first GPU call set up (the cuBLAS or cuSOLVER handle, device memory,
               cuFFT plans; "first call, in all" is that call's whole time on the GPU side),
               one line per process and start or call; with --csv one line per step (columns
               file, pid, tid, t_ns, what: "start" or the operation, phase, seconds)
  -h, --help   this text

CSV columns, in this order:
  file         the trace file
  pid, ppid    the process that wrote it and its parent
  op           the operation with its precision (dgemm)
  routine      the operation without precision (gemm)
  precision    s, d, c or z
  symbol       the exported name the program called (dgemm_, cblas_dgemm, scipy_dgemm_64_,
               fftw_execute, fftwf_execute)
  iface        fortran, cblas or fftw
  scheme       the symbol naming scheme: standard, scipy, numpy-ilp64, ilp64, fftw
  ilp64        1 when the caller passed 64-bit integers
  depth        nesting depth (0 = the application's own call)
  nested       1 when called from inside another intercepted routine
  query        1 for a LAPACK workspace query (lwork = -1)
  row_major    1 for a row-major CBLAS call
  device       cpu or gpu: where the call ran
  reason       why it ran there (below threshold, offloaded, nested, ...)
  m, n, k      the sizes as the routine names them
  flops        estimated work
  info         LAPACK info after the call (0 for BLAS)
  tid          the calling thread
  t_start_ns   start, CLOCK_MONOTONIC nanoseconds
  duration_ns  how long the call took
  site         the return address in the caller (hex)
  site_module  the module holding that address (empty if unknown)
  site_offset  the address's offset inside that module (hex)
  operands     ';'-separated addr:bytes:fp_in:fp_out per matrix or vector: hex address,
               extent in bytes, content fingerprints before and after the call (0: not read)
  copy_in_s, compute_s, copy_out_s
               the GPU side of a call that ran there: seconds copying in, computing, copying out
  gpu_status   why a GPU attempt failed (0: none; see src/trace/codes.h)
  verify_error verify mode: largest GPU-CPU difference relative to the largest value
  verify_mismatch 1 when that difference was beyond the tolerance
  pred_cpu_s, pred_gpu_s
               the cost model's predictions (0 when it made none)
  gpu, pci_bus_id
               a GPU call's GPU (the one its process started on: CUDA's number, PCI bus id);
               empty for CPU calls and in traces written before the GPU was recorded
  copy_split   1 for a ?copy the library ran in pieces on its own threads (split_copies)
  gpu_split    1 for a call run over several GPUs in one call (split)
  core_spared  1 for a CPU call run with one OpenBLAS thread fewer beside the GPU's start or
               warm-ups (spare_core)
  avoided_bytes
               bytes of a GPU call's inputs that a device copy kept from an earlier call served
               (residency): not copied by this call; 0 when every input was copied
  aggregated   1 for a line standing for calls counted below the threshold (recorded with
               --summary or --trace after the first 64 of each call site and size class):
               m, n, k are the first such call's, flops the calls' sum, t_start_ns the first
               one's start, duration_ns their estimated time, depth 1 "nested"; tid, info and
               operands are not kept. 0 for a call recorded on its own
  calls        how many calls the line stands for (1 unless aggregated)
  timed_calls  of those, how many were timed (the estimate rests on them; 1 unless aggregated)
  cores_held   1 for a GPU call made while other threads' CPU calls held the cores: its host
               copies ran on the calling thread alone while they did
  staged       1 for a GPU call whose thread copied its operands into its own pinned buffer
               before taking the GPU and wrote its results after (contended small BLAS calls)

Exit status: 0; 1 if a file is missing, no file is a trace of this gpu-offload version, or a
record is damaged. A file that is not a readable trace (empty, cut short in its header, another
version) is skipped with a warning when others are given. A file that ends in a partial record
(its writer was killed) is read up to it, with a warning.
)"},
    {"report", "summarise traces: where the time went, the GPU side, avoidable copies; --html page",
     R"(Usage: gpu-offload report [--top N] [--html FILE] [--profile FILE] DIR|FILE...

Summarises the trace files in DIR (every *.gofltrace file) or the FILEs given:
  - the programs and processes traced, the device mode, level and profile in force;
  - in short: how much BLAS/LAPACK time, how much of it on the GPU, what the model expected;
  - per operation and precision, sorted by time: the application's own calls (top level),
    how many ran on the GPU, nested calls (made inside another intercepted routine), workspace
    queries, the time of the top-level calls, their share of the total, estimated GFLOP,
    GFLOP/s and the size range (smallest, median and largest of each call's largest dimension);
  - by device: calls and time on the CPU and the GPU, the GPU's copy-in, compute and copy-out
    times, bytes copied in and the copy rate;
  - the busiest call sites by time (module and offset of the caller);
  - where calls ran and why; GPU attempts that failed (status and error code); verify-mode
    mismatches (operation, sizes, worst relative difference);
  - converting data around the LAPACK calls, per operation and calling library (NumPy, SciPy):
    the ?copy calls right before and after them (NumPy copies each operand into Fortran order,
    one ?copy per row) and the time outside any call just before each (SciPy's copies and NaN
    checks; counted up to 4 ns per byte the call reads), with what to do about it; one line in
    "in short" when converting took longer than the calls;
  - the cost model's accuracy (observed / predicted time per device) and the predicted CPU/GPU
    crossover per operation, from --profile FILE, else from the profile the traces name when
    that is the built-in one or this machine's own (GPU_OFFLOAD_PROFILE, the config file, the
    per-user file), else from the predictions recorded in the traces. A report opens no file
    because a trace names it: a trace may come from another machine;
  - copying that could be avoided if unchanged data stayed on the GPU: inputs whose buffer
    (address and size) the GPU already held with the same content fingerprint from an earlier
    call of the same process, for the calls that ran on the GPU and, if offloaded, for the
    GPU-capable calls that ran on the CPU.
Times are those of top-level calls only: a nested call's time is part of its caller's.

Options:
  --top N      how many call sites to list (default 10; 0 leaves the list out)
  --html FILE  write the report as one self-contained HTML page (charts as inline SVG, no
               scripts, nothing loaded from the network) instead of printing it; - for stdout
  --profile FILE  the profile for the crossovers (see above)
  -h, --help   this text

Exit status: 0; 1 if DIR is missing, holds no trace files, no file is a trace of this
gpu-offload version, a record is damaged, the --profile cannot be read or FILE cannot be
written. A file that is not a readable trace (empty, cut short in its header, another version)
is skipped with a warning when others are given. A file that ends in a partial record is read
up to it, with a warning.
)"},
    {"config", "show the settings in force and where each comes from; the config file",
     R"(Usage: gpu-offload config

Shows the settings a program started from here gets (under 'gpu-offload run', LD_PRELOAD or
'python -m gpu_offload'), and where each comes from: a GPU_OFFLOAD_* variable, a line of the
config file, or the default. Invalid values are reported as the library reports them.

Precedence, highest first:
  1. the options of 'gpu-offload run' / 'python -m gpu_offload' / gpu_offload.activate(...)
     (they are passed on as GPU_OFFLOAD_* variables);
  2. GPU_OFFLOAD_* environment variables (an empty one counts as unset);
  3. the config file;
  4. the defaults.

The config file: GPU_OFFLOAD_CONFIG if set (a file that cannot be read is reported), else
$XDG_CONFIG_HOME/gpu-offload/config, else ~/.config/gpu-offload/config (optional). Lines are
'key = value'; '#' starts a comment (at the start of a line, or after a blank); a value may be
in double quotes; the last line of a key wins. A malformed line or an unknown key gets a message
naming FILE:LINE and is ignored; an invalid value gets a message and the default is used.

@KEYS@A relative trace or profile path in the file is taken relative to the file's folder.

Example (~/.config/gpu-offload/config):
  # offload more eagerly, keep 4 GiB of GPU memory for others
  level = 7
  memory_reserve = 4G

Other variables: GPU_OFFLOAD_LIBRARY (the libgpuoffload.so that 'run' and the Python package load),
GPU_OFFLOAD_CONFIG (the config file); 'gpu-offload help settings' lists every variable, tuning and
test-only ones too. A privileged program (setuid, setgid, file capabilities) ignores every
GPU_OFFLOAD_* variable and the config file.

Exit status: 0; 1 if a variable or the config file holds something invalid (the messages say what).
)"},
    {"estimate", "predict from a trace what offloading would gain at a level, with a profile",
     R"(Usage: gpu-offload estimate [--profile FILE] [--level N] [--threshold FLOPS] [--gpus N] DIR|FILE...

Replays the application's own calls in the traces (one process per trace file) through the
decision --device auto makes, the same code as the library, against a machine profile:
  - per operation: calls, those with enough work to be decided (at least 1e6 flops), how many
    would run on the GPU, how many of those over several GPUs in one call (--split auto's rule),
    the predicted time on the CPU and on the GPU (split calls at their split time), the predicted time of the
    device chosen, the predicted saving, the time the trace measured (and where it ran), and
    where the model's speeds come from (a curve of the profile, or a fallback);
  - per process, the ski rental: at which call the GPU would start (the missed savings reach the
    level's factor x the start-up cost), or that it never would;
  - the predicted total with and without offloading, start-up included.
Predictions are the profile's: the replay learns nothing from the traced durations (they were
measured on whichever device ran them), and the GPU is taken as free and idle.

Options:
  --profile FILE      the profile (default: the one the library would use: GPU_OFFLOAD_PROFILE
                      or the config file's, then ~/.config/gpu-offload/profile, then the
                      built-in one)
  --level N           1 to 10 (default: the level the traces were recorded with, else 5)
  --threshold FLOPS   work below which no decision is made (default 1e6)
  --gpus N            GPUs a call may be split over (default: as each process's GPU start was
                      traced, the GPUs CUDA showed it; else 1, and nothing is split)
  -h, --help          this text

Exit status: 0; 1 if a trace or the profile named cannot be read; 2 for a wrong command line.
)"},
    {"calibrate", "measure this machine's CPU and GPU speeds and write the machine profile",
     R"(Usage: gpu-offload calibrate [--quick] [--output FILE] [--traces DIR] [--blas LIB] [--only LIST]

Runs the calibration workload, an ordinary BLAS/LAPACK client calling every GPU-capable routine
in every precision over a range of sizes (FFTW's transforms as n x n 2-D transforms, FFTW with
its threads on every core when libfftw3_threads is installed), twice under the library: every
call forced to the CPU, then every call forced to the GPU. From the two traces it fits the machine profile:
  - CPU speed curves per operation (flops per second against work);
  - GPU compute speed curves (the traced compute time, copies taken off);
  - the copy cost each way: fixed cost + bytes / bandwidth, a straight-line fit over the GPU
    calls whose copies are known exactly (gemm with beta != 0, trsm, potrf, getrf);
  - the GPU start-up cost: loading the backend, starting the driver and creating the context, measured once;
  - where more than one GPU is usable, a third pass with every call of the routines the split
    engines run (gemm, getrf, getrs, potrf, potrs, syevd, heevd) split over all of them: the whole
    call's speed on that many GPUs (`split` lines); with one GPU it says it skipped this.
A canary (a small fixed job on every core) is timed before and after each point: a point
starts only when the canary runs at its normal speed (the median of its recent runs) and is
measured again when it slowed meanwhile. Each point uses the lower quartile of its
repetitions; LAPACK calls with info != 0 are left out. Sizes are measured in rounds (every
routine at one size, then the next size); each pass stops starting new points after 180 s (60 s
with --quick), so a slow machine loses only its largest sizes, and the profile holds the speed
flat beyond them. The full run takes about 7 minutes at most. A progress line shows what is
measured and the time left.

Without a usable GPU only the CPU side is calibrated (it says so); the GPU part of the profile
written is the built-in one's.

Options:
  --quick        fewer and smaller sizes: a rough profile in a minute or two
  --output FILE  where to write the profile (default: $XDG_CONFIG_HOME/gpu-offload/profile,
                 else ~/.config/gpu-offload/profile, where every run finds it)
  --traces DIR   keep the two traces there (default: a temporary folder, removed afterwards)
  --blas LIB     the BLAS/LAPACK library to calibrate (default: the system's libblas.so.3 and
                 liblapack.so.3); ':'-separated to load several
  --only LIST    measure only these routines (','-separated: gemm,potrf,heevd); the others
                 fall back on gemm in the profile written
  -h, --help     this text

The profile is a text file:
  gpu-offload profile 1              the format version (the first line)
  source / machine / created TEXT    where the numbers come from
  provisional yes|no                 yes: not measured on this machine
  gpu_startup_s SECONDS              GPU start-up cost
  split_startup_s SECONDS            optional: starting the split engines on each GPU beyond the
                                     first (default: gpu_startup_s, a context each)
  h2d FIXED_S BYTES_PER_S            copy cost to the GPU per call: FIXED_S + bytes / BYTES_PER_S
  d2h FIXED_S BYTES_PER_S            and back
  cpu OP FLOPS:RATE ...              CPU speed of OP (dgemm, zheevd, ...): points of work (flops)
                                     and speed (flops per second), work increasing
  gpu OP FLOPS:RATE ...              GPU compute speed of OP (copies not included)
  split OP GPUS FLOPS:RATE ...       optional: speed of OP split over GPUS GPUs, copies included
                                     (without one, the split rule shares copies and work: see
                                     'gpu-offload help run', --split)
  efficiency cpu|gpu ROUTINE F       a routine without a curve runs at F x its precision's gemm
  precision cpu|gpu P F              precision P runs at F x double's speed (for fallbacks)
'#' starts a comment. Speeds are interpolated in log-log space and held flat outside the points.
A profile that cannot be parsed is reported with its line number and the built-in one is used.

Exit status: 0; 1 if the workload or the library cannot run, or the profile cannot be written.
)"},
    {"help", "show the help of a command, or every setting",
     R"(Usage: gpu-offload help [COMMAND]
       gpu-offload help settings [--machine|--markdown]

Shows the help of COMMAND, or the list of commands. 'help settings' lists every GPU_OFFLOAD_*
variable the library, the tool and the CUDA backend read, with its config file key, values and
default, tuning and test-only ones marked; --machine prints them as JSON (the Python package's
list is made from it), --markdown as README's table.
)"},
};

const int kCommandCount = int(sizeof kCommandHelp / sizeof kCommandHelp[0]);

namespace {

// The config file's keys, from the registry: key, variable, values (default).
void print_config_keys(FILE* out) {
  fprintf(out, "  %-16s %-28s %s\n", "key", "variable", "values");
  for (const SettingInfo& s : kSettings) {
    if (!*s.key) continue;
    fprintf(out, "  %-16s %-28s %s (default %s)\n", s.key, s.var, s.values, s.deflt);
    fprintf(out, "      %s\n", s.help);
  }
}

const char* kind_mark(SettingKind k) {
  return k == SettingKind::Tuning ? " [tuning]" : k == SettingKind::Test ? " [test only]" : "";
}

std::string json(const char* s) {
  std::string out = "\"";
  for (const char* p = s; *p; ++p) {
    if (*p == '"' || *p == '\\') out += '\\';
    out += *p;
  }
  return out + "\"";
}

}  // namespace

void print_settings_help(FILE* out, SettingsFormat format) {
  if (format == SettingsFormat::Machine) {
    fputs("[\n", out);
    for (int i = 0; i < kSettingCount; ++i) {
      const SettingInfo& s = kSettings[i];
      fprintf(out,
              "  {\"name\": %s, \"key\": %s, \"kind\": %s, \"type\": %s, \"choices\": %s, \"min\": %ld, "
              "\"max\": %ld, \"default\": %s, \"values\": %s, \"help\": %s}%s\n",
              json(s.var).c_str(), json(s.key).c_str(), json(setting_kind_name(s.kind)).c_str(),
              json(setting_type_name(s.type)).c_str(), json(s.choices).c_str(), s.min, s.max, json(s.deflt).c_str(),
              json(s.values).c_str(), json(s.help).c_str(), i + 1 < kSettingCount ? "," : "");
    }
    fputs("]\n", out);
    return;
  }
  if (format == SettingsFormat::Markdown) {
    fputs("| variable | config key | kind | values | default | what it does |\n|---|---|---|---|---|---|\n", out);
    for (const SettingInfo& s : kSettings)
      fprintf(out, "| `%s` | %s | %s | %s | %s | %s |\n", s.var, *s.key ? (std::string("`") + s.key + "`").c_str() : "",
              setting_kind_name(s.kind), s.values, s.deflt, s.help);
    return;
  }
  fputs("Every GPU_OFFLOAD_* variable the library, the tool and the CUDA backend read. User settings come\n"
        "from the options of 'gpu-offload run' (python -m gpu_offload, gpu_offload.activate()), then the\n"
        "variable, then the config file (its key), then the default; 'gpu-offload config' shows them. Settings\n"
        "marked [tuning] are for measurements and may change between versions, [test only] ones for the\n"
        "tests; both come from the variable only. An invalid value gets a message naming the valid ones and\n"
        "the default is kept. A privileged program (setuid, setgid, file capabilities) reads none of them.\n\n",
        out);
  for (const SettingInfo& s : kSettings) {
    fprintf(out, "  %s%s%s%s%s\n", s.var, *s.key ? " (config key " : "", s.key, *s.key ? ")" : "", kind_mark(s.kind));
    fprintf(out, "      %s; default %s\n      %s\n", s.values, s.deflt, s.help);
  }
}

void print_command_help(const CommandHelp& h, FILE* out) {
  if (const char* keys = strstr(h.text, "@KEYS@")) {
    fwrite(h.text, 1, size_t(keys - h.text), out);
    print_config_keys(out);
    fputs(keys + 6, out);
  } else {
    fputs(h.text, out);
  }
  if (strcmp(h.name, "run") != 0) return;
  fputs("\nThe levels (--level): offload when the GPU is predicted this much faster, back off when other\n"
        "programs load the GPU above, GPU memory always left free, start the GPU once the savings missed\n"
        "so far reach this many times its start-up cost:\n"
        "  level  speedup  busy limit  memory free  start factor\n", out);
  for (int l = 1; l <= 10; ++l) {
    const LevelRow& r = level_row(l);
    fprintf(out, "  %5d  %6.2fx  %9.0f%%  %10.0f%%  %11.2fx%s\n", r.level, r.required_speedup, r.busy_limit * 100,
            r.memory_reserve * 100, r.start_factor, l == 5 ? "   (default)" : "");
  }
}

const CommandHelp* find_command_help(const char* name) {
  for (const CommandHelp& h : kCommandHelp)
    if (strcmp(h.name, name) == 0) return &h;
  return nullptr;
}

void print_overview(FILE* out) {
  fputs("Usage: gpu-offload COMMAND [OPTIONS] [ARGS...]\n"
        "\n"
        "Runs programs with their BLAS, LAPACK and FFTW calls intercepted, offloads the calls that\n"
        "pay to the GPU, and reads the traces it writes.\n"
        "\n"
        "Commands:\n",
        out);
  for (const CommandHelp& h : kCommandHelp) fprintf(out, "  %-10s %s\n", h.name, h.summary);
  fputs("\n"
        "Options:\n"
        "  -h, --help   this text; 'gpu-offload help COMMAND' for a command's options\n"
        "  --version    the version of gpu-offload\n"
        "\n"
        "'gpu-offload help settings' lists every GPU_OFFLOAD_* setting.\n"
        "\n"
        "Example:\n"
        "  gpu-offload run --trace out --summary python3 script.py\n"
        "  gpu-offload report out\n",
        out);
}

}  // namespace gofl::cli
