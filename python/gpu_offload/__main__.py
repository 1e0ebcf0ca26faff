"""python -m gpu_offload [OPTIONS] [--] SCRIPT [ARGS...] | -m MODULE [ARGS...]

Runs a Python script (or module) in this interpreter with libgpuoffload.so active: the library is
loaded into the global scope before the script runs, so NumPy's and SciPy's calls go through it
without LD_PRELOAD. The options are those of `gpu-offload run`. Child processes the script starts
(subprocess, multiprocessing's spawn and forkserver workers) get the library through LD_PRELOAD and
the settings through GPU_OFFLOAD_* variables, as under `gpu-offload run`.
"""

import os
import runpy
import sys

import gpu_offload

USAGE = """\
Usage: python -m gpu_offload [OPTIONS] [--] SCRIPT [ARGS...]
       python -m gpu_offload [OPTIONS] -m MODULE [ARGS...]

Runs SCRIPT (or MODULE, as python -m does) in this interpreter with libgpuoffload.so loaded first,
so that NumPy's and SciPy's BLAS and LAPACK calls are intercepted, measured and (where it pays) run
on the GPU, without LD_PRELOAD. The settings become GPU_OFFLOAD_* variables; child processes inherit
them and get the library through LD_PRELOAD. Options stop at SCRIPT (or after -m MODULE).

Options (those of 'gpu-offload run'):
  --trace DIR       write one trace file per process into DIR (created if missing);
                    read it with 'gpu-offload report DIR' (GPU_OFFLOAD_TRACE)
  --summary         print a table of the intercepted calls on stderr at exit (GPU_OFFLOAD_SUMMARY=1)
  --device MODE     cpu, gpu or auto (default) (GPU_OFFLOAD_DEVICE)
  --level N         1 to 10; 5 is the default (GPU_OFFLOAD_LEVEL)
  --verify          run GPU-capable calls on both devices and compare (GPU_OFFLOAD_VERIFY=1)
  --profile FILE    the machine profile to decide with (GPU_OFFLOAD_PROFILE)
  --residency on|off  keep unchanged operands on the GPU between calls (default on)
                    (GPU_OFFLOAD_RESIDENCY)
  --gpus LIST|all   the GPUs a process may run on: 1, 0,2, 0-3 (default all) (GPU_OFFLOAD_GPUS)
  --history on|off  remember what runs of the script gained from the GPU; when the latest ones all
                    gained, start it at the first call predicted to gain (default on)
                    (GPU_OFFLOAD_HISTORY)
  --split off|auto|force  one call over several of those GPUs (default auto) (GPU_OFFLOAD_SPLIT)
  -m MODULE         run a module instead of a script
  -h, --help        this text
  --version         the version of gpu-offload

Settings not given here come from GPU_OFFLOAD_* variables, then the config file
('gpu-offload help config'). The library is found through GPU_OFFLOAD_LIBRARY, else where
'cmake --install' put it next to this package.

In a script, 'import gpu_offload' before 'import numpy' does the same; gpu_offload.activate(trace=...,
summary=..., device=..., level=..., verify=..., profile=...) sets the settings in code.

Exit status: the script's; 2 for a wrong command line, 1 if the library is not usable.
"""

OPTIONS = {"--trace": "DIR", "--summary": None, "--device": "cpu|gpu|auto", "--level": "1-10",
           "--verify": None, "--profile": "FILE", "--residency": "on|off",
           "--gpus": "LIST|all", "--history": "on|off",
           "--split": "off|auto|force"}


class UsageError(Exception):
    pass


def parse(argv):
    """(options, kind, target, args): kind is 'script' or 'module'."""
    opts = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if a in ("-h", "--help"):
            return None
        if a == "--version":
            return "version"
        if a == "-m":
            if i + 1 >= len(argv):
                raise UsageError("-m needs a module name: -m MODULE")
            return opts, "module", argv[i + 1], argv[i + 2:]
        if len(a) < 2 or not a.startswith("-"):
            break
        name, eq, value = a.partition("=")
        if name not in OPTIONS:
            valid = ", ".join(n + (" " + v if v else "") for n, v in OPTIONS.items())
            raise UsageError(f"unknown option '{name}'; valid options: {valid}, -m MODULE, --help, --version")
        if OPTIONS[name] is None:
            if eq:
                raise UsageError(f"option {name} takes no value")
            opts[name] = True
        elif eq:
            opts[name] = value
        elif i + 1 < len(argv):
            i += 1
            opts[name] = argv[i]
        else:
            raise UsageError(f"option {name} needs a value: {name} {OPTIONS[name]}")
        i += 1
    if i >= len(argv):
        raise UsageError("a SCRIPT (or -m MODULE) to run is needed")
    return opts, "script", argv[i], argv[i + 1:]


def settings(opts):
    """activate()'s keyword arguments; UsageError for values the command line got wrong."""
    kw = {}

    def checked(option, key):
        """The option's value, checked as the library checks its setting (the registry's rule and words)."""
        v = opts[option]
        setting = gpu_offload.SETTINGS.get(key)
        if setting is not None and not gpu_offload._valid(setting, v):
            raise UsageError(f"{option} '{v}' is not valid; use {setting['values']} (default {setting['default']})")
        return v

    if "--device" in opts:
        kw["device"] = checked("--device", "device")
    if "--level" in opts:
        v = checked("--level", "level")
        kw["level"] = int(v) if v.isdigit() else v
    if "--trace" in opts:
        if not opts["--trace"]:
            raise UsageError("--trace needs a folder name")
        kw["trace"] = opts["--trace"]
    if "--summary" in opts:
        kw["summary"] = True
    if "--verify" in opts:
        kw["verify"] = True
    if "--profile" in opts:
        kw["profile"] = opts["--profile"]
    if "--residency" in opts:
        kw["residency"] = checked("--residency", "residency")
    if "--gpus" in opts:
        kw["gpus"] = opts["--gpus"]
    if "--history" in opts:
        kw["history"] = checked("--history", "history")
    if "--split" in opts:
        kw["split"] = checked("--split", "split")
    return kw


def error(message, status):
    print(f"gpu_offload: {message}", file=sys.stderr)
    if status == 2:
        print("Run 'python -m gpu_offload --help' for its options.", file=sys.stderr)
    return status


def preload_for_children(lib):
    """The library first in LD_PRELOAD for the processes the script starts; entries there stay."""
    old = [p for p in os.environ.get("LD_PRELOAD", "").replace(" ", ":").split(":") if p and p != lib]
    os.environ["LD_PRELOAD"] = ":".join([lib] + old)


def main(argv):
    try:
        parsed = parse(argv)
        if parsed is None:
            sys.stdout.write(USAGE)
            return 0
        if parsed == "version":
            print(f"gpu-offload {gpu_offload.__version__}")
            return 0
        opts, kind, target, args = parsed
        kw = settings(opts)
    except UsageError as e:
        return error(str(e), 2)
    if kind == "script" and not os.path.isfile(target):
        return error(f"{target}: no such file", 2)
    try:
        active = gpu_offload.activate(**kw)
        lib = gpu_offload.loaded_library() if active else None
    except (OSError, ValueError) as e:
        return error(str(e), 1)
    if not active:
        return error("the library could not be activated (see the warning above)", 1)
    preload_for_children(lib)

    # The script runs as __main__ with sys.argv and sys.path[0] as `python SCRIPT` would set them.
    if kind == "module":
        sys.argv[:] = [target] + args
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.argv[:] = [target] + args
        sys.path[0] = os.path.dirname(os.path.abspath(target))
        runpy.run_path(target, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
