"""gpu-offload for Python programs, without LD_PRELOAD.

Put ``import gpu_offload`` before ``import numpy`` (or ``import scipy``), or run a script with
``python -m gpu_offload [OPTIONS] script.py ARGS...``: NumPy's and SciPy's BLAS and LAPACK calls then go
through libgpuoffload.so, which measures them, traces them and runs the ones that pay on the GPU.

How it works: CPython loads NumPy's and SciPy's extension modules (and the OpenBLAS they bundle) with
RTLD_LOCAL, but every symbol an extension module needs is looked up in the process's global scope
first. This package loads libgpuoffload.so into that global scope (ctypes, RTLD_GLOBAL) before those
modules are loaded, so their ``scipy_dgemm_64_``, ``scipy_cblas_dgemm64_``, ``scipy_dgesdd_``... resolve
to the library's wrappers, which call NumPy's own OpenBLAS in turn. Once NumPy is loaded its symbols are
bound: loading the library later would leave NumPy's calls out, so that is refused with a warning.

``import gpu_offload`` arms the package: the library is loaded just before the first module from
outside the standard library is imported (numpy, scipy, ...), with the settings of GPU_OFFLOAD_*
variables and the config file. ``gpu_offload.activate(trace=..., summary=..., device=..., level=...)``
loads it at once with settings given in code; call it before importing numpy. The library reads its
settings once, when it loads.

The library is looked for in GPU_OFFLOAD_LIBRARY, then where ``cmake --install`` put it (relative to
this package), then next to this package, then in the source tree's build folder.
"""

import ctypes
import json
import os
import re
import subprocess
import sys
import warnings

__all__ = ["activate", "is_active", "library_path", "loaded_library", "GpuOffloadWarning"]

try:  # written by the build (build tree) and by cmake --install: where the library is, the version
    from . import _location
except ImportError:  # the package straight from the source tree
    _location = None

__version__ = getattr(_location, "VERSION", "unknown")

LIBRARY_NAME = "libgpuoffload.so"

# Libraries whose callers were bound before the activation: their calls are not intercepted.
_BLAS_LIBRARY = re.compile(r"(openblas|libblas|libcblas|liblapack|libflexiblas|libmkl_rt|libblis)", re.I)
_MODULES_TOO_LATE = ("numpy", "scipy")

_HOW_TO = ("put 'import gpu_offload' before 'import numpy' (the first line of the script), or run "
           "'python -m gpu_offload script.py' or 'gpu-offload run python script.py'")


class GpuOffloadWarning(RuntimeWarning):
    """gpu-offload could not (fully) attach to this Python process."""


def _warn(message):
    # Point at the user's `import gpu_offload` or activate() line, not at this package: count the frames
    # up to the first one outside it, skipping the import machinery's as warnings.warn itself does.
    here = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(0), 1
    while frame is not None and (frame.f_code.co_filename.startswith(here)
                                 or frame.f_code.co_filename.startswith("<frozen importlib")):
        frame = frame.f_back
        while frame is not None and "importlib" in frame.f_code.co_filename \
                and "_bootstrap" in frame.f_code.co_filename:
            frame = frame.f_back
        level += 1
    warnings.warn("gpu-offload: " + message, GpuOffloadWarning, stacklevel=level)


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def _candidates():
    here = _package_dir()
    out = []
    rel = getattr(_location, "LIBRARY", None)
    if rel:
        out.append(os.path.normpath(os.path.join(here, rel)))
    out.append(os.path.join(here, LIBRARY_NAME))
    # python/gpu_offload in a source checkout: the README's build folder.
    out.append(os.path.normpath(os.path.join(here, "..", "..", "build", "lib", LIBRARY_NAME)))
    return out


def library_path():
    """The path of the libgpuoffload.so this package loads (FileNotFoundError if there is none)."""
    env = os.environ.get("GPU_OFFLOAD_LIBRARY")
    if env:
        if not os.access(env, os.R_OK):
            raise FileNotFoundError(f"GPU_OFFLOAD_LIBRARY={env}: no such readable file; set it to the path "
                                    f"of {LIBRARY_NAME} or unset it")
        return os.path.realpath(env)
    tried = []
    for c in _candidates():
        if c not in tried:
            if os.access(c, os.R_OK):
                return os.path.realpath(c)
            tried.append(c)
    raise FileNotFoundError(f"cannot find {LIBRARY_NAME}; looked in {', '.join(tried)} "
                            "(set GPU_OFFLOAD_LIBRARY to its path)")


def _mapped_files():
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    paths = []
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/") and parts[5] not in paths:
            paths.append(parts[5])
    return paths


def loaded_library():
    """The path of the libgpuoffload.so in this process's global scope (loaded by this package or
    LD_PRELOAD), or None."""
    try:
        addr = ctypes.addressof(ctypes.c_char.in_dll(ctypes.CDLL(None), "gpu_offload_library_marker"))
    except ValueError:
        return None
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                lo, _, hi = parts[0].partition("-")
                if int(lo, 16) <= addr < int(hi, 16) and len(parts) == 6:
                    return parts[5].strip()
    except OSError:
        pass
    return "libgpuoffload.so"


def is_active():
    """True if libgpuoffload.so is in this process's global scope (by this package or LD_PRELOAD)."""
    return loaded_library() is not None


def _load_settings():
    """The settings registry (src/policy/settings_table.h), as the build wrote it next to this package
    (_settings.json, from 'gpu-offload help settings --machine'); else asked of the tool. {} when neither
    is there: values then go to the library unchecked, and it says what is wrong with them."""
    try:
        with open(os.path.join(_package_dir(), "_settings.json")) as f:
            table = json.load(f)
    except (OSError, ValueError):
        table = []
        here = _package_dir()
        for tool in (os.path.join(here, "..", "..", "build", "bin", "gpu-offload"), "gpu-offload"):
            try:
                p = subprocess.run([tool, "help", "settings", "--machine"], capture_output=True, text=True,
                                   timeout=30)
                if p.returncode == 0:
                    table = json.loads(p.stdout)
                    break
            except (OSError, ValueError, subprocess.SubprocessError):
                pass
    return {s["key"]: s for s in table if s.get("key")}


SETTINGS = _load_settings()  # config key -> the registry's entry
DEVICES = tuple(SETTINGS["device"]["choices"].split("|")) if "device" in SETTINGS else ()
_BOOL_WORDS = ("1", "0", "yes", "no", "true", "false", "on", "off")
_GPU_LIST = re.compile(r"all|\d+(-\d+)?(,\d+(-\d+)?)*")


def _valid(setting, text):
    """Whether `text` is a valid value of the setting, by its type (the library's rule, registry.cpp)."""
    kind = setting["type"]
    if kind == "enum":
        return text.lower() in setting["choices"].split("|")
    if kind == "int":
        return re.fullmatch(r"\d+", text) is not None and setting["min"] <= int(text) <= setting["max"]
    if kind == "bool":
        return text.lower() in _BOOL_WORDS
    if kind == "gpu_list":
        return _GPU_LIST.fullmatch(text) is not None
    return True


def _valid_values(name, setting):
    """The valid values as an activate() argument takes them."""
    kind = setting["type"]
    if kind == "enum":
        quoted = [repr(c) for c in setting["choices"].split("|")]
        return ", ".join(quoted[:-1]) + " or " + quoted[-1]
    if kind == "bool":
        return "True or False (or 'on' / 'off')"
    if kind == "gpu_list":
        return "'all' or GPU numbers such as '1', '0,2' or '0-3'"
    return setting["values"] + f" ({setting['default']} is the default)"


def _check(name, value, text):
    """`text` (the value as the variable holds it) checked against the registry; ValueError if invalid."""
    setting = SETTINGS.get(name)
    if setting is not None and (text is None or not _valid(setting, text)):
        raise ValueError(f"gpu_offload: {name}={value!r} is not valid; use {name}=" + _valid_values(name, setting))
    if text is None:
        raise ValueError(f"gpu_offload: {name}={value!r} is not valid")
    return text


def _bool_text(value):
    if value is True or value is False:
        return "on" if value else "off"
    return value if isinstance(value, str) else None


def _settings_env(trace, summary, device, level, verify, profile, residency=None, gpus=None, history=None, split=None):
    """The GPU_OFFLOAD_* variables for the settings given (None: not given); ValueError for bad ones."""
    env = {}
    if device is not None:
        env["GPU_OFFLOAD_DEVICE"] = _check("device", device, device if isinstance(device, str) else None)
    if level is not None:
        text = str(level) if isinstance(level, int) and not isinstance(level, bool) else None
        if isinstance(level, str) and level.isdigit():
            text = str(int(level))
        env["GPU_OFFLOAD_LEVEL"] = _check("level", level, text)
    if summary is not None:
        env["GPU_OFFLOAD_SUMMARY"] = "1" if summary else "0"
    if verify is not None:
        env["GPU_OFFLOAD_VERIFY"] = "1" if verify else "0"
    if residency is not None:
        text = _check("residency", residency, _bool_text(residency))
        env["GPU_OFFLOAD_RESIDENCY"] = "on" if text.lower() in ("1", "yes", "true", "on") else "off"
    if history is not None:
        text = _check("history", history, _bool_text(history))
        env["GPU_OFFLOAD_HISTORY"] = "on" if text.lower() in ("1", "yes", "true", "on") else "off"
    if gpus is not None:
        text = ",".join(str(g) for g in gpus) if isinstance(gpus, (list, tuple)) else str(gpus)
        env["GPU_OFFLOAD_GPUS"] = _check("gpus", gpus, text)
    if split is not None:
        env["GPU_OFFLOAD_SPLIT"] = _check("split", split, split if isinstance(split, str) else None)
    if profile is not None:
        profile = os.fspath(profile)
        if not os.access(profile, os.R_OK):
            raise FileNotFoundError(f"gpu_offload: cannot read the profile {profile}")
        env["GPU_OFFLOAD_PROFILE"] = os.path.abspath(profile)
    if trace is not None:
        trace = os.fspath(trace)
        if not trace:
            raise ValueError("gpu_offload: trace needs a folder name")
        # Absolute: the program may change its working directory before its first call.
        env["GPU_OFFLOAD_TRACE"] = os.path.abspath(trace)
    return env


def _too_late():
    """Why loading the library now would leave calls out (None if it would not)."""
    modules = [m for m in _MODULES_TOO_LATE if m in sys.modules]
    if modules:
        one = len(modules) == 1
        return (f"too late: {' and '.join(modules)} {'was' if one else 'were'} imported before gpu_offload, "
                f"so {'its' if one else 'their'} BLAS/LAPACK calls are bound to {'its' if one else 'their'} "
                "own OpenBLAS already; gpu-offload is NOT active in this process. To use it, " + _HOW_TO)
    return None


def activate(trace=None, summary=None, device=None, level=None, verify=None, profile=None, residency=None,
             gpus=None, history=None, split=None):
    """Load libgpuoffload.so into the global scope now; returns True if the library is active.

    trace: a folder for the trace files (created if missing); summary: print a table at exit;
    device: 'cpu', 'gpu' or 'auto'; level: 1 to 10; verify: run GPU-capable calls on both devices;
    profile: the machine profile; residency: keep unchanged operands on the GPU between calls (default
    True); gpus: the GPUs the process may run on ('all', '1', '0,2', '0-3' or a list of numbers);
    history: remember what runs of the program gained from the GPU, and start it at once when the
    latest ones all gained (default True).
    split: one call over several of them, 'off', 'auto' (default) or 'force'.
    A setting left None comes from its GPU_OFFLOAD_* variable, then the
    config file. The settings given become GPU_OFFLOAD_* variables, which child processes inherit.
    Must run before numpy or scipy is imported: otherwise it warns and leaves the library unloaded.
    """
    _disarm()
    env = _settings_env(trace, summary, device, level, verify, profile, residency, gpus, history, split)
    if is_active():
        if env:
            _warn("libgpuoffload.so is already loaded (LD_PRELOAD, gpu-offload run or an earlier "
                  f"activate()), with the settings it read when it loaded; ignoring {', '.join(sorted(env))}")
        return True
    why = _too_late()
    if why:
        _warn(why)
        return False
    path = library_path()
    trace = env.get("GPU_OFFLOAD_TRACE")
    if trace:  # created here, so that a folder that cannot be made fails here, once
        os.makedirs(trace, exist_ok=True)
        if not os.access(trace, os.W_OK | os.X_OK):
            raise PermissionError(f"gpu_offload: cannot write into the trace folder {trace}")
    bound = [p for p in _mapped_files() if _BLAS_LIBRARY.search(os.path.basename(p))]
    if bound:
        _warn(f"{', '.join(bound)} {'is' if len(bound) == 1 else 'are'} loaded already: calls from modules "
              "loaded before gpu_offload are not intercepted (NumPy and SciPy imported from now on are)")
    os.environ.update(env)  # the library reads its settings in its constructor, from the environment
    ctypes.CDLL(path, mode=os.RTLD_GLOBAL | os.RTLD_NOW)
    return True


class _ActivateOnFirstImport:
    """A sys.meta_path entry: loads the library just before the first module from outside the standard
    library (numpy, scipy, ...) is imported, so activate() may still be called after `import gpu_offload`."""

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top == __name__ or top in _STDLIB:
            return None
        _disarm()
        try:
            activate()
        except (OSError, ValueError) as e:
            _warn(f"not active: {e}")
        return None


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(sys.builtin_module_names)
_hook = None


def _disarm():
    global _hook
    if _hook is not None:
        try:
            sys.meta_path.remove(_hook)
        except ValueError:
            pass
        _hook = None


def _arm():
    global _hook
    if is_active():
        return  # gpu-offload run / LD_PRELOAD: nothing to do
    why = _too_late()
    if why:
        _warn(why)
        return
    if not _STDLIB:  # Python < 3.10 cannot tell the standard library apart: load now
        try:
            activate()
        except (OSError, ValueError) as e:
            _warn(f"not active: {e}")
        return
    try:
        library_path()
    except FileNotFoundError as e:
        _warn(f"not active: {e}")
        return
    _hook = _ActivateOnFirstImport()
    sys.meta_path.insert(0, _hook)


_arm()
