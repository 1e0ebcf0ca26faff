// Every GPU_OFFLOAD_* setting the code reads: the one table. The library's settings
// (policy/settings.cpp), the config file's keys (policy/config.cpp), `gpu-offload run`'s option
// checks, `gpu-offload help settings` / `help config`, the CUDA backend's tuning knobs (it compiles
// policy/registry.cpp in) and the Python package (python/CMakeLists.txt writes _settings.json from
// `gpu-offload help settings --machine`) all come from here. A test (tests/unit/test_registry.cpp)
// checks that every GPU_OFFLOAD_ name in the source tree is in this table, and README's settings
// table agrees with it.
//
// X(ID, key, kind, type, choices, min, max, default, values, help)
//   ID       GPU_OFFLOAD_<ID> is the variable
//   key      the config file key ("" when the file cannot set it)
//   kind     User (documented, stable), Tuning (measurements and experiments), Test (tests only)
//   type     how a value is checked (policy/registry.h, SettingType)
//   choices  Enum: the values, '|'-separated (compared without case)
//   min/max  Int: the range
//   default  the default, as help shows it
//   values   the valid values, as messages and help name them ("use ...")
//   help     one sentence for `gpu-offload help settings`
#pragma once

// clang-format off
#define GOFL_SETTINGS(X) \
  X(DEVICE, "device", User, Enum, "cpu|gpu|auto", 0, 0, "auto", "cpu, gpu or auto", \
    "where GPU-capable calls run: never on the GPU, always, or where the cost model predicts a gain") \
  X(LEVEL, "level", User, Int, "", 1, 10, "5", "a whole number from 1 to 10", \
    "how much predicted gain offloading needs and how much room is left to other users of the GPU") \
  X(TRACE, "trace", User, Path, "", 0, 0, "no trace", "a folder", \
    "a folder for one trace file per process") \
  X(SUMMARY, "summary", User, Bool, "", 0, 0, "0", "1 or 0", \
    "print a table of the intercepted calls on stderr at exit") \
  X(VERIFY, "verify", User, Bool, "", 0, 0, "0", "1 or 0", \
    "run GPU-capable calls on both devices and compare; the program gets the CPU result") \
  X(PROFILE, "profile", User, Path, "", 0, 0, "per-user profile, else built-in", "a machine profile file", \
    "the machine profile the cost model decides with") \
  X(MEMORY_RESERVE, "memory_reserve", User, Size, "", 0, 0, "the level's reserve", \
    "a size in bytes, optionally with K, M or G", "GPU memory always left free") \
  X(THRESHOLD, "threshold", User, Number, "", 0, 0, "1e6", "a number of flops >= 0", \
    "work below which a call is not considered for the GPU (and is counted, not described, in traces)") \
  X(RESIDENCY, "residency", User, Bool, "", 0, 0, "on", "on or off", \
    "keep operands the program has not changed on the GPU between calls") \
  X(GPUS, "gpus", User, GpuList, "", 0, 0, "all", "all, or GPU numbers such as 1, 0,2 or 0-3", \
    "the GPUs a process may run on, as CUDA numbers them") \
  X(HISTORY, "history", User, Bool, "", 0, 0, "on", "on or off", \
    "remember what runs of a program gained from the GPU and start it at once when they paid") \
  X(SPLIT_COPIES, "split_copies", User, BoolOrSize, "", 0, 0, "on", \
    "on, off, or the smallest copy to split: bytes, optionally with K, M or G", \
    "run strided ?copy calls of at least this many bytes (on: 32K) on several threads") \
  X(SPLIT, "split", User, Enum, "off|auto|force", 0, 0, "auto", "off, auto or force", \
    "one call over several GPUs: never, when predicted faster, or for every call the split engines run") \
  X(WARM, "warm", User, WarmList, "", 0, 0, "on", \
    "on, off, or operations the GPU runs, as a trace names them: dgemm,zheevd,...", \
    "do the CUDA libraries' first-use work beside the calls (under auto); a list warms those at the start") \
  X(SPARE_CORE, "spare_core", User, Bool, "", 0, 0, "on", "on or off", \
    "while the GPU starts or warms up, run a CPU call that would use every core with one thread fewer") \
  X(CONFIG, "", User, Path, "", 0, 0, "$XDG_CONFIG_HOME/gpu-offload/config, else ~/.config/gpu-offload/config", \
    "a file (/dev/null: none)", "the config file") \
  X(LIBRARY, "", User, Path, "", 0, 0, "next to gpu-offload (../lib) or the Python package", "a file", \
    "the libgpuoffload.so that 'gpu-offload run' and the Python package load") \
  X(START_AHEAD, "", Tuning, Bool, "", 0, 0, "0", "1 or 0", \
    "start the GPU beside the calls, before the first call predicted to gain (measured not to pay)") \
  X(START_EARLY, "", Tuning, Bool, "", 0, 0, "0", "1 or 0", \
    "when the latest runs of the program all gained from the GPU, begin its start beside the calls at the first call large enough to decide (off: no gain beyond the spread measured yet)") \
  X(FIRST_CALL_MS, "", Tuning, Int, "", 0, 10000, "0", "a whole number of milliseconds from 0 to 10000", \
    "under auto, add this to an operation's first GPU call until its warm-up has ended (0: nothing; unwarmed first calls measured about 70)") \
  X(RESIDENCY_CHECK, "", Tuning, Enum, "auto|pages|content", 0, 0, "auto", "auto, pages or content", \
    "how residency sees that the program changed a kept buffer: page tracking, a digest, or the best available") \
  X(RESIDENCY_MIN_MB, "", Tuning, Int, "", 0, 1L << 40, "4", "a whole number of MiB >= 0", \
    "the smallest operand residency keeps on the GPU, in MiB") \
  X(COPY_THREADS, "", Tuning, Int, "", 1, 1L << 40, "3/4 of the cores, at most 12", "a whole number >= 1", \
    "threads copying between the program's memory and the pinned staging buffers (at most 64)") \
  X(COPY_SPIN_US, "", Tuning, Int, "", 0, 1L << 40, "200", "a whole number of microseconds >= 0", \
    "how long an idle copy thread spins before it sleeps (at most 100000)") \
  X(COPY_NT, "", Tuning, Enum, "out|0|1", 0, 0, "out", "out, 0 or 1", \
    "streaming stores: at copy-out only, never, or both ways") \
  X(STAGING_BUFFERS, "", Tuning, Int, "", 1, 1L << 40, "8", "a whole number >= 1", \
    "pinned staging buffers (2 to 64)") \
  X(STAGING_MB, "", Tuning, Int, "", 1, 1L << 40, "8", "a whole number of MiB >= 1", \
    "the largest pinned staging buffer, in MiB (at most 1024)") \
  X(THREAD_STAGING, "", Tuning, Enum, "auto|on|off", 0, 0, "off", "auto, on or off", \
    "copy a small BLAS call's operands into the calling thread's own pinned buffer before it takes the GPU: when contended, always, or never") \
  X(LINE_SERVES, "", Tuning, Int, "", 0, 64, "0", "a whole number from 0 to 64", \
    "waiting calls the thread holding the GPU runs itself, one after another, before it hands the GPU over (0: none, it hands the GPU over at once)") \
  X(LINE_WAIT_PERCENT, "", Tuning, Int, "", 1, 100, "50", "a whole number from 1 to 100", \
    "how much of its predicted gain a call that finds the GPU held by another thread's call waits for it, in percent (at most 2 s), before it runs on the CPU") \
  X(THREAD_STAGING_MB, "", Tuning, Int, "", 1, 1L << 40, "64", "a whole number of MiB >= 1", \
    "the largest call, its inputs and outputs together, that thread staging takes, in MiB") \
  X(RAMP_KB, "", Tuning, Int, "", 0, 1L << 40, "half a staging buffer", "a whole number of KiB >= 0", \
    "the first and last pieces of a transfer, in KiB; 0: every piece a whole buffer") \
  X(PREFAULT_THREADS, "", Tuning, Int, "", 0, 1L << 40, "a quarter of the cores, 1 to 4", "a whole number >= 0", \
    "threads touching a fresh output's pages before the copy-out (at most 64); 0: none") \
  X(LIBRARIES_AHEAD, "", Tuning, Int, "", 0, 1L << 40, "1", "0 or 1", \
    "load the first call's CUDA libraries beside the context's making; 0: at first use") \
  X(HANDLES_AHEAD, "", Tuning, Int, "", 0, 1L << 40, "1", "0 or 1", \
    "make the cuBLAS and cuSOLVER handles on a helper thread; 0: on the call's thread at first use") \
  X(GEMM_K_PIECES, "", Tuning, Int, "", 1, 1L << 40, "8", "a whole number >= 1", \
    "the most pieces over k a gemm with B kept on the GPU is split into (at most 64); 1: no split") \
  X(FFT_PIECES, "", Tuning, Int, "", 1, 1L << 40, "16", "a whole number >= 1", \
    "the most pieces a large FFT is split into to overlap its copies with cuFFT (at most 256); 1: whole") \
  X(FFT_PIECE_KB, "", Tuning, Int, "", 1, 1L << 40, "32768", "a whole number of KiB >= 1", \
    "the smallest piece of a split FFT, in KiB") \
  X(GETRS_SWAPS, "", Tuning, Enum, "host|gpu", 0, 0, "host", "host or gpu", \
    "where getrs applies LAPACK's row interchanges: while the host copies B in, or cuSOLVER's own") \
  X(CALIBRATE_PASS_MS, "", Tuning, Int, "", 1, 1L << 40, "180000 (quick: 60000)", "a whole number of milliseconds >= 1", \
    "how long each pass of gpu-offload calibrate measures new points, in ms") \
  X(SPLIT_BLOCK, "", Tuning, Int, "", 64, 1L << 40, "4096", "a whole number >= 64", \
    "cuBLASXt's tile size for calls split over several GPUs") \
  X(BACKEND, "", Test, Path, "", 0, 0, "libgpuoffload-cuda.so next to the library", "a file", \
    "the CUDA backend to load") \
  X(FAULT, "", Test, Text, "", 0, 0, "none", "alloc, h2d, piece, compute, panel, d2h-before, d2h-after, corrupt or qr64, comma-separated", \
    "make a GPU step fail or corrupt its result, to test the fallbacks")
// clang-format on
