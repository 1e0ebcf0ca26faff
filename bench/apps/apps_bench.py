#!/usr/bin/env python3
"""Real applications, unmodified, end to end: bare, under `auto` and under `--device gpu`.

Each case is a whole program run (wall time of the process, start-up and exit included) in a fresh
work folder: Quantum ESPRESSO pw.x, NWChem, PySCF and scikit-learn. `auto` runs with --summary and
--trace on (what a user who wants to know why turns on); its run history lives in a folder of the
case's own, so its first run has none and later runs have the earlier ones'. Bare and auto alternate
(--repeats each), then `--device gpu` runs (--gpu-repeats). Prints per case the median, min and max
of each mode, auto and gpu against bare, and whether the physical result (energy, score) equals the
bare run's to its printed digits; then auto's report of its last run (where the time went).

--variants runs `auto` under several sets of settings, alternating within each repeat (bare, then
each variant), each with a run history of its own: `--variants 'default=;combo=GPU_OFFLOAD_THREAD_STAGING=auto,GPU_OFFLOAD_LINE_SERVES=8'`
gives the rows auto[default] and auto[combo]. GOFL_BUILD=DIR in a variant runs it under another build
of the library (an older commit's, for an A/B of a change that has no setting) instead of --build.
--budget SECONDS starts no run that the longest run of its case so far would carry past that many
seconds from the start, so a device call ends in its limit.

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


def parse_variants(text):
    """'NAME=VAR=VALUE,VAR=VALUE;NAME2=' -> [(NAME, {VAR: VALUE})]; none: [(None, {})]."""
    out = []
    for part in filter(None, (p.strip() for p in (text or "").split(";"))):
        name, _, settings = part.partition("=")
        env = {}
        for kv in filter(None, settings.split(",")):
            k, eq, v = kv.partition("=")
            if not eq or not k:
                sys.exit(f"apps_bench: --variants: {kv!r} in {part!r} is not VAR=VALUE")
            env[k] = v
        if not name or name in [n for n, _ in out]:
            sys.exit(f"apps_bench: --variants: each variant needs a name of its own ({part!r})")
        out.append((name, env))
    return out or [(None, {})]


def run_once(name, mode, args, hist_dir, keep, variant=None, extra_env=None):
    app, what, files, cmd, pattern = CASES[name]
    work = tempfile.mkdtemp(prefix=f"gofl-app-{name}-")
    for fn, text in files().items():
        with open(os.path.join(work, fn), "w") as f:
            f.write(text)
    env = dict(os.environ)
    extra = dict(extra_env or {})
    build = os.path.abspath(extra.pop("GOFL_BUILD", args.build))  # a variant's own build of the library
    env.update(extra)
    if name.startswith("pyscf") and os.environ.get("PYSCF_SITE"):
        env["PYTHONPATH"] = os.environ["PYSCF_SITE"] + os.pathsep + env.get("PYTHONPATH", "")
    env["XDG_CACHE_HOME"] = hist_dir  # the run history of this case alone
    trace = os.path.join(work, "trace")
    full = list(cmd)
    if mode != "bare":
        opts = ["--device", mode, "--summary"] + (["--trace", trace] if mode == "auto" else [])
        full = [os.path.join(build, "bin", "gpu-offload"), "run"] + opts + ["--"] + full
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
    if variant is not None:
        r["variant"], r["settings"] = variant, extra_env
    if p.returncode != 0 or result is None:
        r["tail"] = (p.stdout[-1500:] + "\n" + p.stderr[-1500:]).strip()
    if mode != "bare":
        i = p.stderr.find("gpu-offload summary")
        r["summary"] = p.stderr[i:] if i >= 0 else p.stderr[-3000:]
    if mode == "auto" and os.path.isdir(trace):
        rep = subprocess.run([os.path.join(build, "bin", "gpu-offload"), "report", trace],
                             capture_output=True, text=True)
        r["report"] = rep.stdout + rep.stderr
    if keep:
        with open(os.path.join(keep, f"{name}.{mode}.out"), "a") as f:
            f.write(f"==== {' '.join(full)}\n{p.stdout}\n---- stderr\n{p.stderr}\n")
    shutil.rmtree(work, ignore_errors=True)
    return r


def label_of(variant):
    return f"[{variant}]" if variant is not None else ""


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
    ap.add_argument("--variants", default=None,
                    help="auto under each set of settings, alternating: 'NAME=VAR=VALUE,VAR=VALUE;NAME2=...' "
                         "(GOFL_BUILD=DIR: that variant under another build of the library)")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds from the start after which no run may end: a run the longest run of its case so "
                         "far would carry past it is not started")
    args = ap.parse_args()
    variants = parse_variants(args.variants)
    t_start = time.perf_counter()
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
        # The run history of each variant's auto runs is its own: its first run has none, later runs have
        # its earlier ones'.
        hists = {v: tempfile.mkdtemp(prefix=f"gofl-hist-{name}-") for v, _ in variants}
        runs = []
        longest = [0.0]

        def one(mode, i, variant=None, env=None):
            if args.budget is not None and time.perf_counter() - t_start + longest[0] > args.budget:
                print(f"  {name} {mode}{label_of(variant)} run {i + 1}: not started, the budget of {args.budget:.1f} s "
                      f"would not hold a run of {longest[0]:.1f} s", flush=True)
                return
            r = run_once(name, mode, args, hists[variant if mode == "auto" else variants[0][0]], keep, variant, env)
            runs.append(r)
            longest[0] = max(longest[0], r["wall_s"])
            print(f"  {name} {mode}{label_of(variant)} run {i + 1}: {r['wall_s']:.2f} s, result {r['result']}, rc {r['rc']}",
                  flush=True)
            if "tail" in r:
                print(f"  !! {name} {r['mode']} rc {r['rc']}:\n" + "\n".join("     " + l for l in r["tail"].splitlines()[-25:]))
            if keep:  # each run as it ends, so that a call stopped later keeps it
                with open(os.path.join(keep, "results.jsonl"), "a") as f:
                    f.write(json.dumps(dict(r, commit=commit)) + "\n")

        for i in range(args.repeats):
            for mode in [m for m in modes if m != "gpu"]:
                if mode == "auto":
                    for v, env in variants:
                        one(mode, i, v, env)
                else:
                    one(mode, i)
        if "gpu" in modes:
            for i in range(args.gpu_repeats):
                one("gpu", i)
        rows.append((name, runs))
        for h in hists.values():
            shutil.rmtree(h, ignore_errors=True)
    # The table's rows of a case: each mode, auto once for each variant.
    shown = [(m, v) for m in modes for v in ([v for v, _ in variants] if m == "auto" else [None])]
    mw = max(len(m + label_of(v)) for m, v in shown)
    print(f"\n{'case':14} {'what':44} {'mode':{mw}} {'median s':>8} {'min':>7} {'max':>7} {'vs bare':>8}  result (= bare?)")
    for name, runs in rows:
        app, what = CASES[name][0], CASES[name][1]
        bare = [r["wall_s"] for r in runs if r["mode"] == "bare" and r["rc"] == 0]
        bare_res = {r["result"] for r in runs if r["mode"] == "bare"}
        for mode, variant in shown:
            rs = [r for r in runs if r["mode"] == mode and r.get("variant") == variant]
            ts = [r["wall_s"] for r in rs if r["rc"] == 0]
            stopped = [r for r in rs if r["rc"] != 0 and "stopped after" in r.get("tail", "")]
            ratio = f"{statistics.median(bare) / statistics.median(ts):7.2f}x" if bare and ts and mode != "bare" else ""
            res = sorted({str(r["result"]) for r in rs})
            # Against the bare runs of this invocation; without one there is nothing to compare.
            same = ("" if mode == "bare" else " (no bare run)" if not bare_res
                    else " (same)" if set(res) <= {str(x) for x in bare_res} else " (DIFFERS)")
            first = (mode, variant) == shown[0]
            label = f"{app}: {what}" if first else ""
            note = f"  {len(stopped)} run(s) stopped at the {args.gpu_timeout if mode == 'gpu' else args.timeout:.0f} s limit" if stopped else ""
            print(f"{name if first else '':14} {label[:44]:44} {mode + label_of(variant):{mw}} {fmt(ts)} {ratio:>8}  "
                  f"{', '.join(res)}{same}{note}")
        for v, _ in variants:
            autos = [r["wall_s"] for r in runs if r["mode"] == "auto" and r.get("variant") == v]
            if len(autos) > 1:
                print(f"{'':14} {'auto' + label_of(v) + ', first run (no history)':44} {'':{mw}} {autos[0]:8.2f}")
    for name, runs in rows:
        last = {r["mode"]: r for r in runs}  # with variants: the last variant's
        for mode in ("auto", "gpu"):
            if mode in last and last[mode].get("summary"):
                print(f"\n==== {name}: {mode} summary (last run)\n{last[mode]['summary'].rstrip()}")
        if "auto" in last and last["auto"].get("report"):
            print(f"\n==== {name}: auto report (last run)\n{last['auto']['report'].rstrip()}")


if __name__ == "__main__":
    main()
