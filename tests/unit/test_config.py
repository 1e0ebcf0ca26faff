"""Settings precedence and the config file, through the real library and the command-line tool:
command-line options over GPU_OFFLOAD_* variables over the config file over the defaults; malformed
config lines named by file:line and ignored; where the file is looked for; a setuid program ignoring
it; `gpu-offload config`; every option and setting documented in the help; unknown commands and
options naming the valid ones.

The program is tests/clients/secure_client (linked with libgpuoffload.so, three dgemm_ calls): the
level and device mode the library ran with are read from its trace file's header."""

import os
import pwd
import json
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import BUILD, CLI, CLIENTS, ROOT, base_env, dump, setuid_copies, top_level  # noqa: E402

CLIENT = CLIENTS / "secure_client"
DEVICE = {0: "cpu", 1: "gpu", 2: "auto"}


def env_without_config(extra=None, home=None):
    """The tests' environment with no config file unless one is named: HOME points at an empty folder."""
    e = base_env()
    e.pop("XDG_CONFIG_HOME", None)
    e["HOME"] = str(home or "/nonexistent-gofl-home")
    e.update(extra or {})
    return e


def run_client(env, trace, *, via_run=()):
    """Runs the client (optionally under `gpu-offload run ARGS`), returns (level, device, stderr)."""
    trace = Path(trace)
    cmd = [str(CLI), "run", *map(str, via_run), "--", str(CLIENT)] if via_run else [str(CLIENT)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    files = sorted(trace.iterdir()) if trace.is_dir() else []
    assert len(files) == 1, f"want one trace file in {trace}: {files}\n{p.stderr}"
    data = files[0].read_bytes()
    level, device = struct.unpack_from("<ii", data, 48)  # src/trace/record.h: gofl_file_header
    assert len(top_level(dump(trace), "dgemm")) == 3
    return level, DEVICE[device], p.stderr


def cli(*args, env=None):
    return subprocess.run([str(CLI), *map(str, args)], env=env or env_without_config(), capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def conf(tmp_path):
    def write(text, name="gofl.conf"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path
    return write


def test_config_file_alone(tmp_path, conf):
    trace = tmp_path / "from-config"
    trace.mkdir()
    c = conf(f"# machine-wide choices\ndevice = cpu\nlevel = 4\ntrace = {trace.name}\nsummary = yes\n")
    level, device, err = run_client(env_without_config({"GPU_OFFLOAD_CONFIG": str(c)}), trace)
    assert (level, device) == (4, "cpu")
    assert "gpu-offload summary" in err  # summary = yes
    assert "gpu-offload:" not in err.replace("gpu-offload summary", ""), err  # nothing else said


def test_environment_over_config_and_options_over_environment(tmp_path, conf):
    trace = tmp_path / "t"
    c = conf(f"device = cpu\nlevel = 4\ntrace = {trace}\n")
    env = env_without_config({"GPU_OFFLOAD_CONFIG": str(c)})
    trace.mkdir()
    assert run_client(env, trace)[:2] == (4, "cpu")
    shutil.rmtree(trace)
    trace.mkdir()
    env.update(GPU_OFFLOAD_LEVEL="6", GPU_OFFLOAD_DEVICE="auto")
    assert run_client(env, trace)[:2] == (6, "auto")  # the environment wins, key by key; trace from the file
    shutil.rmtree(trace)
    # gpu-offload run's options win over both.
    assert run_client(env, trace, via_run=("--level", "2", "--device", "cpu", "--trace", trace))[:2] == (2, "cpu")
    shutil.rmtree(trace)
    # An empty variable counts as unset: the file's value applies.
    env.update(GPU_OFFLOAD_LEVEL="")
    trace.mkdir()
    assert run_client(env, trace)[:2] == (4, "auto")


def test_default_locations(tmp_path):
    home = tmp_path / "home"
    trace = tmp_path / "t"
    (home / ".config" / "gpu-offload").mkdir(parents=True)
    (home / ".config" / "gpu-offload" / "config").write_text(f"level = 3\ntrace = {trace}\n")
    trace.mkdir()
    assert run_client(env_without_config(home=home), trace)[0] == 3
    shutil.rmtree(trace)
    xdg = tmp_path / "xdg"
    (xdg / "gpu-offload").mkdir(parents=True)
    (xdg / "gpu-offload" / "config").write_text(f"level = 9\ntrace = {trace}\n")
    trace.mkdir()
    assert run_client(env_without_config({"XDG_CONFIG_HOME": str(xdg)}, home=home), trace)[0] == 9


def test_malformed_lines_named_and_ignored(tmp_path, conf):
    trace = tmp_path / "t"
    trace.mkdir()
    c = conf(f"level 7\nlevle = 7\ndevice = tpu\nlevel = 8   # a comment\nsummary =\ntrace = {trace}\n")
    level, device, err = run_client(env_without_config({"GPU_OFFLOAD_CONFIG": str(c)}), trace)
    assert (level, device) == (8, "auto")
    assert f"gpu-offload: {c}:1: 'level 7' is not a 'key = value' line; line ignored" in err
    assert f"gpu-offload: {c}:2: unknown key 'levle' (valid keys: device, level, trace, summary, verify, " \
           "profile, memory_reserve, threshold, residency, gpus, history, split_copies, split, warm, spare_core); line ignored" in err
    assert f"gpu-offload: {c}:3: device='tpu' is not valid (use cpu, gpu or auto); using auto" in err
    assert f"gpu-offload: {c}:5: 'summary' has no value; line ignored" in err
    assert len([line for line in err.splitlines() if line.startswith("gpu-offload")]) == 4, err  # once each


def test_missing_named_config_file(tmp_path):
    trace = tmp_path / "t"
    trace.mkdir()
    env = env_without_config({"GPU_OFFLOAD_CONFIG": str(tmp_path / "none.conf"), "GPU_OFFLOAD_TRACE": str(trace)})
    level, _, err = run_client(env, trace)
    assert level == 5
    assert f"GPU_OFFLOAD_CONFIG={tmp_path / 'none.conf'}: cannot read it" in err


def test_config_command_shows_values_and_sources(tmp_path, conf):
    c = conf("device = cpu\nlevel = 7\ntrace = traces\nverify = on\n")
    env = env_without_config({"GPU_OFFLOAD_CONFIG": str(c), "GPU_OFFLOAD_LEVEL": "3"})
    p = cli("config", env=env)
    assert p.returncode == 0, p.stderr
    rows = {line.split()[0]: line.split() for line in p.stdout.splitlines()[4:] if line.strip()}
    assert re.search(rf"config file\s+{re.escape(str(c))} \(GPU_OFFLOAD_CONFIG\)", p.stdout), p.stdout
    assert rows["device"][1:] == ["cpu", f"{c}:1"]
    assert rows["level"][1:] == ["3", "GPU_OFFLOAD_LEVEL"]
    assert rows["trace"][1:] == [str(tmp_path / "traces"), f"{c}:3"]
    assert rows["verify"][1:] == ["on", f"{c}:4"]
    assert rows["summary"][1:] == ["off", "default"]
    for key in ("profile", "memory_reserve", "threshold"):
        assert rows[key][-1] == "default", rows[key]

    bad = conf("level = 12\nnonsense\n", "bad.conf")
    p = cli("config", env=env_without_config({"GPU_OFFLOAD_CONFIG": str(bad), "GPU_OFFLOAD_DEVICE": "fast"}))
    assert p.returncode == 1
    assert f"{bad}:1: level='12' is not valid" in p.stderr and f"{bad}:2: 'nonsense'" in p.stderr
    assert "GPU_OFFLOAD_DEVICE='fast' is not valid (use cpu, gpu or auto)" in p.stderr
    assert re.search(r"level\s+5\s+" + re.escape(f"{bad}:1 (not valid"), p.stdout), p.stdout
    p = cli("config", env=env_without_config())
    assert p.returncode == 0 and "/nonexistent-gofl-home/.config/gpu-offload/config (not there)" in p.stdout
    assert cli("config", "extra").returncode == 2
    assert cli("config", "--frob").returncode == 2


def test_setuid_program_ignores_the_config_file(tmp_path):
    """As GPU_OFFLOAD_* variables, the config file does not reach a privileged program: the same binary
    made setuid writes no trace although the file (named by GPU_OFFLOAD_CONFIG and found under HOME) asks
    for one; the control without the setuid bit, run as the same user, writes it."""
    with setuid_copies(CLIENT, "gofl-secure-config-") as (plain, suid, nobody, base):
        results = {}
        for name, exe in (("plain", plain), ("suid", suid)):
            d = base / f"trace-{name}"
            d.mkdir()
            os.chmod(d, 0o777)
            home = base / f"home-{name}"
            (home / ".config" / "gpu-offload").mkdir(parents=True)
            (home / ".config" / "gpu-offload" / "config").write_text(f"trace = {d}\nsummary = 1\n")
            os.chmod(home / ".config" / "gpu-offload" / "config", 0o644)
            for q in (home, home / ".config", home / ".config" / "gpu-offload"):
                os.chmod(q, 0o755)
            env = env_without_config(home=home)
            kw = {"preexec_fn": lambda: (os.setgroups([]), os.setgid(nobody.pw_gid), os.setuid(nobody.pw_uid))} \
                if name == "plain" else {}
            p = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=120, **kw)
            assert p.returncode == 0, p.stderr
            results[name] = (p, d)
        p, d = results["plain"]
        assert "at_secure 0" in p.stderr and "gpu-offload summary" in p.stderr
        assert len(top_level(dump(d), "dgemm")) == 3
        p, d = results["suid"]
        assert "at_secure 1" in p.stderr, p.stderr
        assert list(d.iterdir()) == [] and "gpu-offload" not in p.stderr, p.stderr


# ----- help and errors -----

def commands():
    out = cli("--help").stdout
    section = out.split("Commands:", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in section.splitlines() if line.strip()]


def test_every_option_of_every_command_is_documented():
    cmds = commands()
    assert {"run", "dump", "report", "config", "help"} <= set(cmds), cmds
    for cmd in cmds:
        if cmd == "help":
            continue
        text = cli("help", cmd).stdout
        assert text.startswith("Usage: gpu-offload " + cmd), text[:80]
        p = cli(cmd, "--no-such-option-gofl")
        assert p.returncode == 2, (cmd, p.stderr)
        m = re.search(r"valid options: (.*)", p.stderr)
        assert m, (cmd, p.stderr)
        assert f"gpu-offload help {cmd}" in p.stderr
        if m.group(1).strip() == "none":
            continue
        for opt in re.findall(r"--[a-z][a-z-]*", m.group(1)):
            assert re.search(rf"^\s+{re.escape(opt)}\b", text, re.M), f"'gpu-offload help {cmd}' misses {opt}"
        assert "-h, --help" in text


def test_help_config_documents_every_key_and_variable():
    text = cli("help", "config").stdout
    # The keys, straight from a malformed file's message.
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write("bogus_key = 1\n")
        f.flush()
        err = cli("config", env=env_without_config({"GPU_OFFLOAD_CONFIG": f.name})).stderr
    keys = re.search(r"valid keys: ([^)]*)\)", err).group(1).split(", ")
    # The registry's keys (src/policy/settings_table.h), as the tool lists them.
    registry = json.loads(cli("help", "settings", "--machine").stdout)
    assert keys == [r["key"] for r in registry if r["key"]], keys
    for k in keys:
        assert re.search(rf"^\s+{k}\s+GPU_OFFLOAD_{k.upper()}\s", text, re.M), f"help config misses {k}"
    for words in ("GPU_OFFLOAD_CONFIG", "~/.config/gpu-offload/config", "XDG_CONFIG_HOME", "FILE:LINE",
                  "setuid", "Precedence"):
        assert words in text, words
    assert "gpu-offload help config" in cli("help", "run").stdout
    assert "config" in cli("--help").stdout


def test_unknown_commands_name_the_valid_ones():
    for args in (["frobnicate"], ["help", "frobnicate"]):
        p = cli(*args)
        assert p.returncode == 2
        assert "'frobnicate'" in p.stderr and re.search(r"commands: run, dump, report", p.stderr), p.stderr
        assert "config" in p.stderr
