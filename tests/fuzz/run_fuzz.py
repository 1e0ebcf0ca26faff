"""ctest entry `fuzz`: runs each fuzz target (tests/fuzz, built with clang, libFuzzer, ASan and UBSan)
for a bounded time from seeds made here: a synthetic trace (make_trace, the library's own writer) and
its header alone, the built-in profile, a config file. A crash, a sanitizer report, a hang (-timeout)
or a memory blow-up (-rss_limit_mb) fails the test; libFuzzer writes the input that did it to
GOFL_BUILD_DIR/fuzz-artifacts/.

Usage: run_fuzz.py FUZZ_BUILD_DIR SECONDS_PER_TARGET (GOFL_BUILD_DIR: the main build, for make_trace)"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("fuzz_trace", "fuzz_profile", "fuzz_config", "fuzz_history")
SKIP = 77  # ctest SKIP_RETURN_CODE


def seeds(corpus, build):
    trace, profile, config, history = (corpus / t for t in TARGETS)
    for d in (trace, profile, config, history):
        d.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([str(build / "bin" / "make_trace"), tmp, "mixed"], check=True, timeout=60)
        (f,) = Path(tmp).glob("*.gofltrace")
        data = f.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        # GPU starts and their one-time costs (setup records).
        subprocess.run([str(build / "bin" / "make_trace"), tmp, "starts"], check=True, timeout=60)
        for i, f in enumerate(sorted(Path(tmp).glob("*.gofltrace"))):
            (trace / f"starts-{i}").write_bytes(f.read_bytes())
    (history / "three-runs").write_text("gpu-offload history 1\n0123456789abcdef 2.500000 1 1700000000\n"
                                        "0123456789abcdef -0.100000 0 1700000100\nfedcba9876543210 12.000000 1 1700000200\n")
    (trace / "mixed").write_bytes(data)
    (trace / "header-only").write_bytes(data[:512])
    shutil.copy(ROOT / "src" / "policy" / "default_profile.txt", profile / "default")
    (config / "all-keys").write_text("device = auto\nlevel = 7\ntrace = t\nsummary = 1\nverify = 0\n"
                                     "profile = \"p\"  # a comment\nmemory_reserve = 2G\nthreshold = 1e9\n"
                                     "residency = off\ngpus = all\n")
    # Inputs that once failed, kept so that they stay fixed (tests/fuzz/regressions/TARGET/).
    for t in TARGETS:
        for f in sorted((ROOT / "tests" / "fuzz" / "regressions" / t).glob("*")):
            shutil.copy(f, corpus / t / f.name)


def main():
    fuzz_dir, seconds = Path(sys.argv[1]), int(sys.argv[2])
    build = Path(os.environ.get("GOFL_BUILD_DIR", ROOT / "build"))
    missing = [t for t in TARGETS if not (fuzz_dir / t).exists()]
    if missing:
        print(f"fuzz targets not built ({', '.join(missing)} in {fuzz_dir}): clang with libFuzzer is missing "
              "(scripts/setup.sh installs clang and libclang-rt-14-dev)")
        return 1 if os.environ.get("GOFL_REQUIRE_ALL_TOOLS") == "1" else SKIP
    artifacts = build / "fuzz-artifacts"
    artifacts.mkdir(exist_ok=True)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    failed = []
    with tempfile.TemporaryDirectory(prefix="gofl-fuzz-") as tmp:
        corpus = Path(tmp)
        seeds(corpus, build)
        for t in TARGETS:
            cmd = [str(fuzz_dir / t), f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=2048",
                   "-max_len=65536", "-print_final_stats=1", f"-artifact_prefix={artifacts}/{t}-", str(corpus / t)]
            print("+", " ".join(cmd), flush=True)
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=seconds + 120)
            tail = "\n".join(p.stderr.splitlines()[-40:])
            print(tail, flush=True)
            if p.returncode != 0:
                failed.append(t)
    if failed:
        print(f"fuzz: {', '.join(failed)} found a failing input (see above; kept in {artifacts})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
