#!/usr/bin/env python3
"""Real applications, unmodified, end to end: bare, under `auto` and under `--device gpu`.

Each case is a whole program run (wall time of the process, start-up and exit included) in a fresh
work folder: Quantum ESPRESSO pw.x, NWChem, PySCF and scikit-learn. `auto` runs with --summary and
--trace on (what a user who wants to know why turns on); its run history lives in a folder of the
case's own, so its first run has none and later runs have the earlier ones'. Bare and auto alternate
(--repeats each), then `--device gpu` runs (--gpu-repeats). Prints per case the median, min and max
of each mode, auto and gpu against bare, and whether the physical result (energy, score) equals the
bare run's to its printed digits; then auto's report of its last run (where the time went).

  . bench/apps/unpack_apps.sh        # the kits of bench/apps/fetch_apps.sh, on the GPU machine
  python3 bench/apps/apps_bench.py --build BUILD --cases qe-si64,nwchem-w8 --repeats 3 --out DIR
"""
import argparse, json, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
SI_BASIS = [(0, 0, 0), (0, .5, .5), (.5, 0, .5), (.5, .5, 0),
            (.25, .25, .25), (.25, .75, .75), (.75, .25, .75), (.75, .75, .25)]


def qe_input(cells, ecut=24.0):
    """A silicon supercell of cells^3 conventional cells (8 atoms each) at the Gamma point, with 25%
    more bands than occupied ones (pw.x then computes empty bands too, as band-structure users do)."""
    pos = [((b[0] + i) / cells, (b[1] + j) / cells, (b[2] + k) / cells)
           for i in range(cells) for j in range(cells) for k in range(cells) for b in SI_BASIS]
    nat = len(pos)
    lines = [
        "&control", f"  calculation='scf', prefix='si{nat}', outdir='./tmp', pseudo_dir='{os.environ.get('QE_PSEUDO', '.')}'", "/",
        "&system", f"  ibrav=1, celldm(1)={10.26 * cells}, nat={nat}, ntyp=1, ecutwfc={ecut}, nbnd={nat * 5 // 2}", "/",
        "&electrons", "  conv_thr=1.0d-8, mixing_beta=0.5", "/",
        "ATOMIC_SPECIES", "Si 28.086 Si.pz-vbc.UPF", "ATOMIC_POSITIONS crystal"]
    lines += [f"Si {x:.6f} {y:.6f} {z:.6f}" for x, y, z in pos]
    lines += ["K_POINTS gamma", ""]
    return "\n".join(lines)


def nwchem_input(waters_per_side):
    """B3LYP/6-31G* on a cubic cluster of waters_per_side^3 water molecules 3 A apart."""
    atoms = []
    s = waters_per_side
    for i in range(s):
        for j in range(s):
            for k in range(s):
                x, y, z = 3.0 * i, 3.0 * j, 3.0 * k
                atoms += [f"O {x:.3f} {y:.3f} {z:.3f}", f"H {x + .757:.3f} {y + .586:.3f} {z:.3f}",
                          f"H {x - .757:.3f} {y + .586:.3f} {z:.3f}"]
    return "\n".join(["start nwbench", "memory total 4000 mb", "geometry units angstrom noautosym"] + atoms +
                     ["end", "basis", " * library 6-31G*", "end", "dft", " xc b3lyp", " iterations 40", "end",
                      "task dft energy", ""])


# name: (application, what, files to write {name: text}, command, result pattern)
CASES = {
    "qe-si64": ("Quantum ESPRESSO 6.7 pw.x", "Si64 Gamma SCF, 160 bands, 24 Ry", lambda: {"si.in": qe_input(2)},
                ["pw.x", "-in", "si.in"], r"^!\s+total energy\s+=\s+(\S+) Ry"),
    "qe-si216": ("Quantum ESPRESSO 6.7 pw.x", "Si216 Gamma SCF, 540 bands, 24 Ry", lambda: {"si.in": qe_input(3)},
                 ["pw.x", "-in", "si.in"], r"^!\s+total energy\s+=\s+(\S+) Ry"),
    "nwchem-w8": ("NWChem 7.0.2", "B3LYP/6-31G*, 8 waters (152 functions)", lambda: {"nw.nw": nwchem_input(2)},
                  ["nwchem", "nw.nw"], r"Total DFT energy =\s+(\S+)"),
    "nwchem-w27": ("NWChem 7.0.2", "B3LYP/6-31G*, 27 waters (513 functions)", lambda: {"nw.nw": nwchem_input(3)},
                   ["nwchem", "nw.nw"], r"Total DFT energy =\s+(\S+)"),
    "pyscf-c8": ("PySCF 2.14", "DF-RHF C8H18/cc-pVTZ (492 functions)", dict,
                 [PY, os.path.join(HERE, "pyscf_case.py"), "8", "cc-pvtz"], r"energy (\S+)"),
    "pyscf-c16": ("PySCF 2.14", "DF-RHF C16H34/cc-pVTZ (956 functions)", dict,
                  [PY, os.path.join(HERE, "pyscf_case.py"), "16", "cc-pvtz"], r"energy (\S+)"),
}
for _c, _n, _what in (("pca", 20000, "PCA(svd_solver='full'), 20000 x 3000"),
                      ("krr", 12000, "KernelRidge(rbf) fit, 12000 x 400"),
                      ("gpr", 8000, "GaussianProcessRegressor(RBF) fit, 8000 x 20"),
                      ("ridge", 20000, "Ridge(solver='cholesky'), 20000 x 3000")):
    CASES[f"sklearn-{_c}"] = ("scikit-learn", _what, dict,
                              [PY, os.path.join(HERE, "sklearn_case.py"), _c, str(_n)], r"score (\S+)")


def run_once(name, mode, args, hist_dir, keep):
    app, what, files, cmd, pattern = CASES[name]
    work = tempfile.mkdtemp(prefix=f"gofl-app-{name}-")
    for fn, text in files().items():
        with open(os.path.join(work, fn), "w") as f:
            f.write(text)
    env = dict(os.environ)
    if name.startswith("pyscf") and os.environ.get("PYSCF_SITE"):
        env["PYTHONPATH"] = os.environ["PYSCF_SITE"] + os.pathsep + env.get("PYTHONPATH", "")
    env["XDG_CACHE_HOME"] = hist_dir  # the run history of this case alone
    trace = os.path.join(work, "trace")
    full = list(cmd)
    if mode != "bare":
        opts = ["--device", mode, "--summary"] + (["--trace", trace] if mode == "auto" else [])
        full = [os.path.join(args.build, "bin", "gpu-offload"), "run"] + opts + ["--"] + full
    limit = args.gpu_timeout if mode == "gpu" else args.timeout
    t = time.perf_counter()
    # A process group of its own, so that a run past its limit is stopped with all its children.
    proc = subprocess.Popen(full, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += f"\napps_bench: stopped after {limit:.0f} s"
    wall = time.perf_counter() - t
    p = subprocess.CompletedProcess(full, proc.returncode, out, err)
    m = re.findall(pattern, p.stdout, re.M)
    result = m[-1] if m else None
    r = {"case": name, "mode": mode, "wall_s": wall, "rc": p.returncode, "result": result}
    if p.returncode != 0 or result is None:
        r["tail"] = (p.stdout[-1500:] + "\n" + p.stderr[-1500:]).strip()
    if mode != "bare":
        i = p.stderr.find("gpu-offload summary")
        r["summary"] = p.stderr[i:] if i >= 0 else p.stderr[-3000:]
    if mode == "auto" and os.path.isdir(trace):
        rep = subprocess.run([os.path.join(args.build, "bin", "gpu-offload"), "report", trace],
                             capture_output=True, text=True)
        r["report"] = rep.stdout + rep.stderr
    if keep:
        with open(os.path.join(keep, f"{name}.{mode}.out"), "a") as f:
            f.write(f"==== {' '.join(full)}\n{p.stdout}\n---- stderr\n{p.stderr}\n")
    shutil.rmtree(work, ignore_errors=True)
    return r


def fmt(xs):
    return f"{statistics.median(xs):8.2f} {min(xs):7.2f} {max(xs):7.2f}" if xs else f"{'-':>8} {'-':>7} {'-':>7}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--cases", default="qe-si64,nwchem-w8", help=",".join(CASES))
    ap.add_argument("--repeats", type=int, default=3, help="bare and auto runs of each case")
    ap.add_argument("--gpu-repeats", type=int, default=1)
    ap.add_argument("--modes", default="bare,auto,gpu")
    ap.add_argument("--timeout", type=float, default=400, help="seconds a bare or auto run may take")
    ap.add_argument("--gpu-timeout", type=float, default=120,
                    help="seconds a --device gpu run may take: it forces every call there, millions of tiny ones too")
    ap.add_argument("--out", default=None, help="folder for results.jsonl and each run's output")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    modes = args.modes.split(",")
    keep = args.out
    if keep:
        os.makedirs(keep, exist_ok=True)
    commit = os.environ.get("GOFL_COMMIT") or subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                                             capture_output=True, text=True).stdout.strip()
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                         text=True).stdout.strip() if shutil.which("nvidia-smi") else "no GPU"
    print(f"# {' '.join(sys.argv)}\n# commit {commit}; {gpu}; {os.cpu_count()} cores; wall time of the whole program")
    rows = []
    for name in args.cases.split(","):
        if name not in CASES:
            sys.exit(f"apps_bench: unknown case {name!r}; cases: {', '.join(CASES)}")
        hist = tempfile.mkdtemp(prefix=f"gofl-hist-{name}-")
        runs = []
        for i in range(args.repeats):
            for mode in [m for m in modes if m != "gpu"]:
                runs.append(run_once(name, mode, args, hist, keep))
                print(f"  {name} {mode} run {i + 1}: {runs[-1]['wall_s']:.2f} s, result {runs[-1]['result']}, rc {runs[-1]['rc']}", flush=True)
        if "gpu" in modes:
            for i in range(args.gpu_repeats):
                runs.append(run_once(name, "gpu", args, hist, keep))
                print(f"  {name} gpu run {i + 1}: {runs[-1]['wall_s']:.2f} s, result {runs[-1]['result']}, rc {runs[-1]['rc']}", flush=True)
        for r in runs:
            if "tail" in r:
                print(f"  !! {name} {r['mode']} rc {r['rc']}:\n" + "\n".join("     " + l for l in r["tail"].splitlines()[-25:]))
        if keep:
            with open(os.path.join(keep, "results.jsonl"), "a") as f:
                for r in runs:
                    f.write(json.dumps(dict(r, commit=commit)) + "\n")
        rows.append((name, runs))
        shutil.rmtree(hist, ignore_errors=True)
    print(f"\n{'case':14} {'what':44} {'mode':5} {'median s':>8} {'min':>7} {'max':>7} {'vs bare':>8}  result (= bare?)")
    for name, runs in rows:
        app, what = CASES[name][0], CASES[name][1]
        bare = [r["wall_s"] for r in runs if r["mode"] == "bare" and r["rc"] == 0]
        bare_res = {r["result"] for r in runs if r["mode"] == "bare"}
        for mode in modes:
            rs = [r for r in runs if r["mode"] == mode]
            ts = [r["wall_s"] for r in rs if r["rc"] == 0]
            stopped = [r for r in rs if r["rc"] != 0 and "stopped after" in r.get("tail", "")]
            ratio = f"{statistics.median(bare) / statistics.median(ts):7.2f}x" if bare and ts and mode != "bare" else ""
            res = sorted({str(r["result"]) for r in rs})
            # Against the bare runs of this invocation; without one there is nothing to compare.
            same = ("" if mode == "bare" else " (no bare run)" if not bare_res
                    else " (same)" if set(res) <= {str(x) for x in bare_res} else " (DIFFERS)")
            label = f"{app}: {what}" if mode == modes[0] else ""
            note = f"  {len(stopped)} run(s) stopped at the {args.gpu_timeout if mode == 'gpu' else args.timeout:.0f} s limit" if stopped else ""
            print(f"{name if mode == modes[0] else '':14} {label[:44]:44} {mode:5} {fmt(ts)} {ratio:>8}  {', '.join(res)}{same}{note}")
        firsts = [r["wall_s"] for r in runs if r["mode"] == "auto"][:1]
        if firsts and len([r for r in runs if r["mode"] == "auto"]) > 1:
            print(f"{'':14} {'auto, first run (no history)':44} {'':5} {firsts[0]:8.2f}")
    for name, runs in rows:
        last = {r["mode"]: r for r in runs}
        for mode in ("auto", "gpu"):
            if mode in last and last[mode].get("summary"):
                print(f"\n==== {name}: {mode} summary (last run)\n{last[mode]['summary'].rstrip()}")
        if "auto" in last and last["auto"].get("report"):
            print(f"\n==== {name}: auto report (last run)\n{last['auto']['report'].rstrip()}")


if __name__ == "__main__":
    main()
