#include "cli/help.h"

#include <string.h>

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
                    exits (GPU_OFFLOAD_SUMMARY=1)
  --device MODE     cpu: never offload; gpu: offload every GPU-capable call;
                    auto: decide per call from the machine profile (default)
                    (GPU_OFFLOAD_DEVICE)
  --level N         1 to 10, how much predicted gain offloading needs and how much room
                    is left to other users of the GPU; 5 is the default (GPU_OFFLOAD_LEVEL)
  --verify          run GPU-capable calls on both devices and compare the results; the
                    program gets the CPU result (GPU_OFFLOAD_VERIFY=1)
  --profile FILE    the machine profile to decide with (GPU_OFFLOAD_PROFILE)
  -h, --help        this text

The library is found through GPU_OFFLOAD_LIBRARY, else next to this tool in ../lib,
../lib64 or ../lib/x86_64-linux-gnu. It is put first in LD_PRELOAD; entries already there stay.

Exit status: the program's; 127 if PROGRAM is not found, 126 if it cannot be executed,
2 for a wrong command line, 1 if the library or the trace folder is not usable.
)"},
    {"dump", "print every traced call, as a table or as CSV",
     R"(Usage: gpu-offload dump [--csv] DIR|FILE...

Prints one line per intercepted call in the trace files given, in file order. A DIR stands for
every *.gofltrace file in it, sorted by name.

Options:
  --csv        comma-separated values with a header line (quoted where a value needs it),
               for scripts and spreadsheets; without it, an aligned table with fewer columns
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
  gpu_status   why a GPU attempt failed (0: none; see src/cuda/backend_abi.h)
  verify_error verify mode: largest GPU-CPU difference relative to the largest value
  verify_mismatch 1 when that difference was beyond the tolerance
  pred_cpu_s, pred_gpu_s
               the cost model's predictions (0 when it made none)

Exit status: 0; 1 if a file is missing or is not a trace of this gpu-offload version.
A file that ends in a partial record (its writer was killed) is read up to it, with a warning.
)"},
    {"report", "summarise traces: time per operation, call sites, where calls ran",
     R"(Usage: gpu-offload report [--top N] DIR|FILE...

Summarises the trace files in DIR (every *.gofltrace file) or the FILEs given:
  - the programs and processes traced, the device mode, level and profile in force;
  - per operation and precision, sorted by time: the application's own calls (top level),
    how many ran on the GPU, nested calls (made inside another intercepted routine), workspace
    queries, the time of the top-level calls, their share of the total, estimated GFLOP,
    GFLOP/s and the size range (smallest, median and largest of each call's largest dimension);
  - the busiest call sites by time (module and offset of the caller);
  - where calls ran and why.
Times are those of top-level calls only: a nested call's time is part of its caller's.

Options:
  --top N      how many call sites to list (default 10; 0 leaves the list out)
  -h, --help   this text

Exit status: 0; 1 if DIR is missing, holds no trace files, or a file is not a trace of this
gpu-offload version. A file that ends in a partial record is read up to it, with a warning.
)"},
    {"help", "show the help of a command",
     R"(Usage: gpu-offload help [COMMAND]

Shows the help of COMMAND (run, dump, report), or the list of commands.
)"},
};

const int kCommandCount = int(sizeof kCommandHelp / sizeof kCommandHelp[0]);

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
  for (const CommandHelp& h : kCommandHelp) fprintf(out, "  %-8s %s\n", h.name, h.summary);
  fputs("\n"
        "Options:\n"
        "  -h, --help   this text; 'gpu-offload help COMMAND' for a command's options\n"
        "  --version    the version of gpu-offload\n"
        "\n"
        "Example:\n"
        "  gpu-offload run --trace out --summary python3 script.py\n"
        "  gpu-offload report out\n",
        out);
}

}  // namespace gofl::cli
