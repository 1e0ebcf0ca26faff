"""bench/apps/apps_bench.py's A/B of settings (--variants) and its time budget (--budget), without a GPU:
a shell command stands in for the application, run bare and under the real `gpu-offload run --device
auto`, and prints the setting it was given as its "result" and its run-history folder."""

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import BUILD, ROOT  # noqa: E402

sys.path.insert(0, str(ROOT / "bench" / "apps"))
import apps_bench  # noqa: E402

SHOW = ('sleep 0.2; echo "energy ${GPU_OFFLOAD_LINE_SERVES:-none}"; echo "history $XDG_CACHE_HOME"; '
        'echo "build ${GOFL_BUILD:-unset}"')


@pytest.fixture
def show_case(monkeypatch):
    monkeypatch.setitem(apps_bench.CASES, "show", ("sh", "prints its setting", dict, ["sh", "-c", SHOW], r"energy (\S+)"))


def bench(monkeypatch, capsys, out, *args):
    monkeypatch.setattr(sys, "argv", ["apps_bench.py", "--build", str(BUILD), "--cases", "show", "--out", str(out), *args])
    apps_bench.main()
    return capsys.readouterr().out, [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines()]


def test_variants_alternate_each_with_its_settings_and_history(show_case, monkeypatch, capsys, tmp_path):
    text, runs = bench(monkeypatch, capsys, tmp_path, "--repeats", "2", "--modes", "bare,auto",
                       "--variants", "plain=;served=GPU_OFFLOAD_LINE_SERVES=8,GPU_OFFLOAD_THREAD_STAGING=auto")
    order = [(r["mode"], r.get("variant")) for r in runs]
    assert order == [("bare", None), ("auto", "plain"), ("auto", "served")] * 2
    assert all(r["rc"] == 0 for r in runs)
    assert [r["result"] for r in runs] == ["none", "none", "8"] * 2
    assert [r.get("settings") for r in runs[:3]] == [
        None, {}, {"GPU_OFFLOAD_LINE_SERVES": "8", "GPU_OFFLOAD_THREAD_STAGING": "auto"}]
    # auto ran under the library, bare without it
    assert (tmp_path / "show.auto.out").read_text().count("bin/gpu-offload run --device auto --summary --trace") == 4
    assert "gpu-offload" not in (tmp_path / "show.bare.out").read_text()
    # each variant keeps a run history of its own across its repeats
    histories = {}
    for block in (tmp_path / "show.auto.out").read_text().split("==== ")[1:]:
        variant = "served" if "energy 8" in block else "plain"
        histories.setdefault(variant, set()).update(re.findall(r"^history (\S+)", block, re.M))
    assert len(histories["plain"]) == 1 and len(histories["served"]) == 1
    assert histories["plain"] != histories["served"]
    # one table row a variant, against the bare runs; a variant whose result differs says so
    assert re.search(r"auto\[plain\]\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+x\s+none \(same\)", text)
    assert re.search(r"auto\[served\]\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+x\s+8 \(DIFFERS\)", text)


def test_a_variant_may_run_under_another_build(show_case, monkeypatch, capsys, tmp_path):
    # An "older build": its bin/gpu-offload says so and runs the program after "--".
    other = tmp_path / "other-build"
    (other / "bin").mkdir(parents=True)
    (other / "bin" / "gpu-offload").write_text('#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift\n'
                                               'echo "under the other build"\nexec "$@"\n')
    (other / "bin" / "gpu-offload").chmod(0o755)
    text, runs = bench(monkeypatch, capsys, tmp_path / "out", "--repeats", "1", "--modes", "auto",
                       "--variants", f"new=;old=GOFL_BUILD={other}")
    assert [r.get("variant") for r in runs] == ["new", "old"] and all(r["rc"] == 0 for r in runs)
    assert runs[1]["settings"] == {"GOFL_BUILD": str(other)}
    new_run, old_run = (tmp_path / "out" / "show.auto.out").read_text().split("==== ")[1:]
    assert new_run.startswith(f"{BUILD}/bin/gpu-offload run --device auto") and "under the other build" not in new_run
    assert old_run.startswith(f"{other}/bin/gpu-offload run --device auto") and "under the other build" in old_run
    assert "build unset" in old_run  # GOFL_BUILD chose the build; the program's environment does not have it


def test_a_run_the_budget_cannot_hold_is_not_started(show_case, monkeypatch, capsys, tmp_path):
    # Each run takes 0.2 s and more: after the first two, a third would end past 0.5 s.
    text, runs = bench(monkeypatch, capsys, tmp_path, "--repeats", "3", "--modes", "bare,auto",
                       "--variants", "a=;b=GPU_OFFLOAD_LINE_SERVES=2", "--budget", "0.5")
    assert 1 <= len(runs) <= 2
    assert [(r["mode"], r.get("variant")) for r in runs] == [("bare", None), ("auto", "a")][:len(runs)]
    assert "not started, the budget of 0.5 s" in text


@pytest.mark.parametrize("spec", ["=GPU_OFFLOAD_LINE_SERVES=8", "a=;a=", "a=GPU_OFFLOAD_LINE_SERVES"])
def test_a_malformed_variant_is_refused_with_a_message(show_case, monkeypatch, capsys, tmp_path, spec):
    monkeypatch.setattr(sys, "argv", ["apps_bench.py", "--build", str(BUILD), "--cases", "show", "--variants", spec])
    with pytest.raises(SystemExit) as e:
        apps_bench.main()
    assert "apps_bench: --variants" in str(e.value)
