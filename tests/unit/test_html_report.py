"""`gpu-offload report`'s GPU side and its HTML page.

- The terminal report's GPU columns, failures, verify mismatches, model accuracy and the avoidable-copy
  estimate, on synthetic traces with known answers. They are written by tests/unit/make_trace.cpp through
  the library's own trace writer (src/trace/record.h), so no GPU is needed and no second reader exists.
- `report --html` on a real traced NumPy run and on a synthetic offloaded run: one self-contained page
  (nothing external), opened in headless Chromium; the screenshot is not blank and the DOM holds the
  charts. Screenshots are kept in GOFL_BUILD_DIR/test-artifacts/html-report for people to look at.
"""

import csv
import io
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import BUILD, CLI, base_env, dump, require, require_tool, run  # noqa: E402

MAKE_TRACE = BUILD / "bin" / "make_trace"
ARTIFACTS = BUILD / "test-artifacts" / "html-report"
CHARTS = ("chart-time-by-op", "chart-work-vs-time", "chart-model-accuracy", "chart-cpu-reasons",
          "chart-copy-vs-compute", "chart-avoidable-copy")
CPU_BLUE = (0x3B, 0x75, 0xAF)    # src/report/html_view.cpp's kCpu
GPU_ORANGE = (0xE1, 0x81, 0x2C)  # src/report/html_view.cpp's kGpu

# A NumPy program with the reuse the estimate looks for: the same operands multiplied again and again.
NUMPY_PROGRAM = r"""
import numpy as np
rng = np.random.default_rng(3)
for n in (24, 48, 96, 192, 384, 600):
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    for _ in range(3):
        c = a @ b
s = a @ a.T + n * np.eye(n)
x = np.linalg.solve(s, b[:, :20])
L = np.linalg.cholesky(s)
w = np.linalg.eigvalsh(s[:300, :300])
sv = np.linalg.svd(a[:300, :200], compute_uv=False)
print(float(c.sum() + x.sum() + L.sum() + w.sum() + sv.sum()))
"""


def cli(*args, check=True):
    p = subprocess.run([str(CLI), *map(str, args)], env=base_env(), capture_output=True, text=True, timeout=120)
    if check:
        assert p.returncode == 0, (args, p.returncode, p.stdout, p.stderr)
    return p


def make_trace(tmp_path, scenario, *args):
    out = tmp_path / scenario
    p = subprocess.run([str(MAKE_TRACE), str(out), scenario, *args], env=base_env(), capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return out


@pytest.fixture(scope="module")
def numpy_trace(tmp_path_factory):
    """A real NumPy program traced under the library (its own device choice: no GPU in CI)."""
    d = tmp_path_factory.mktemp("numpy")
    prog = d / "numpy_program.py"
    prog.write_text(NUMPY_PROGRAM)
    tdir = d / "numpy-trace"
    run([sys.executable, prog], trace_dir=tdir)
    return tdir


def section(report, title):
    """The lines of the report section whose title starts with `title` (up to the next blank line)."""
    m = re.search(rf"^{re.escape(title)}.*?(?=\n\n|\Z)", report, re.M | re.S)
    assert m, (title, report)
    return m.group(0).splitlines()


def row(lines, first):
    """Cells (split on 2+ spaces) of the table line whose first cell is `first`."""
    for line in lines:
        cells = re.split(r"\s{2,}", line.strip())
        if cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in\n" + "\n".join(lines))


# ----- the avoidable-copy estimate --------------------------------------------------------------------

def avoidable_rows(report):
    """The estimate's two parts: rows of the calls that ran on the GPU, and of the GPU-capable calls that
    ran on the CPU (if offloaded); [] for a part the report leaves out."""
    lines = section(report, "Copying avoided by keeping data on the GPU")
    gpu_at = next((i for i, l in enumerate(lines) if "ran on the GPU:" in l), None)
    cpu_at = next((i for i, l in enumerate(lines) if "ran on the CPU (if offloaded):" in l), None)
    end = next(i for i, l in enumerate(lines) if l.startswith("  Avoided:"))
    gpu = lines[gpu_at:cpu_at if cpu_at is not None else end] if gpu_at is not None else []
    cpu = lines[cpu_at:end] if cpu_at is not None else []
    return gpu, cpu


def test_avoidable_copy_known_answers(tmp_path):
    """make_trace.cpp's `avoidable` scenario documents each call's answer."""
    out = cli("report", make_trace(tmp_path, "avoidable")).stdout
    gpu, cpu = avoidable_rows(out)
    # Both processes: 6 GPU calls read 92 MB; 40 MB of it the GPU held unchanged; 4 GB/s measured.
    assert row(gpu, "total") == ["total", "6", "92.0 MB", "0 B", "40.0 MB", "43.5%", "10.0 ms"]
    assert row(gpu, "dgemm") == ["dgemm", "6", "92.0 MB", "0 B", "40.0 MB", "43.5%", "10.0 ms"]
    # The one GPU-capable CPU call: both its inputs were on the GPU already, if it had been offloaded.
    assert row(cpu, "total") == ["total", "1", "16.0 MB", "-", "16.0 MB", "100.0%", "4.0 ms"]
    assert "measured copy-in rate (4.0 GB/s" in out
    assert "could have avoided copying 40.0 MB of the 92.0 MB" in out
    # Nested calls, workspace queries and geevx (not GPU-capable) are not in the estimate.
    assert not re.search(r"^\s+dgeevx\s", "\n".join(gpu + cpu), re.M)


def test_copies_residency_avoided_and_what_is_still_avoidable(tmp_path):
    """make_trace.cpp's `resident` scenario: 48 MB read by three GPU products, 24 MB served by kept device
    copies (the trace says which), 8 MB copied although unchanged (2 ms at the measured 4 GB/s)."""
    out = cli("report", make_trace(tmp_path, "resident")).stdout
    gpu, _ = avoidable_rows(out)
    assert row(gpu, "total") == ["total", "3", "48.0 MB", "24.0 MB", "8.00 MB", "16.7%", "2.0 ms"]
    flat = " ".join(out.split())
    assert "(residency) avoided copying 24.0 MB of the 48.0 MB the GPU calls read" in flat
    assert "Copies of unchanged data still cost 8.00 MB of the 48.0 MB the GPU calls read (about 2.0 ms" in flat
    # The measured copy rate counts only what was copied: 24 MB in 6 ms.
    assert row(section(out, "By device"), "dgemm")[6:9] == ["24.0 MB", "4.00", "40.0%"]


def test_dump_csv_gives_the_bytes_residency_avoided_per_call(tmp_path):
    """The `resident` scenario through `dump --csv`: call 1 copied everything, call 2's A (8 MB) and call 3's
    A and B (16 MB) were served by kept copies; the column's sum is the report's "avoided"."""
    tdir = make_trace(tmp_path, "resident")
    p = cli("dump", "--csv", tdir)
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    header = p.stdout.splitlines()[0].split(",")
    assert header[header.index("core_spared") + 1] == "avoided_bytes"
    assert [(r["device"], r["avoided_bytes"]) for r in rows] == [("gpu", "0"), ("gpu", "8000000"), ("gpu", "16000000")]
    # A trace without kept copies: 0 on every call, CPU calls included.
    other = list(csv.DictReader(io.StringIO(cli("dump", "--csv", make_trace(tmp_path, "avoidable")).stdout)))
    assert other and {r["avoided_bytes"] for r in other} == {"0"}


def test_gpu_calls_beside_the_programs_cpu_calls_are_told_apart(tmp_path):
    """make_trace.cpp's `cores_held` scenario: one GPU call began while other threads' CPU calls held the
    cores (it copied on its own thread, 16 MB in 8 ms), one did not (16 MB in 2 ms). The report gives each
    group's copy-in rate, and `dump --csv` marks the first."""
    tdir = make_trace(tmp_path, "cores_held")
    flat = " ".join(cli("report", tdir).stdout.split())
    assert ("1 GPU call began while the program's other threads were inside CPU calls, which held the cores: "
            "they copied on their own thread (copy-in 2.00 GB/s; the other 1 GPU call: 8.00 GB/s).") in flat
    rows = list(csv.DictReader(io.StringIO(cli("dump", "--csv", tdir).stdout)))
    assert [r["cores_held"] for r in rows] == ["1", "0"]
    # No such call: no such line.
    assert "held the cores" not in " ".join(cli("report", make_trace(tmp_path, "resident")).stdout.split())


def test_avoidable_copy_is_per_process_and_in_time_order(tmp_path):
    """The parent's file alone: 4 GPU calls, 68 MB, 32 MB avoidable. Its third call was written before its
    second (threads finish out of order): in file order A's newer content would be held first and only
    16 MB would count; and if the child's calls counted the parent's GPU state, 56 MB would."""
    tdir = make_trace(tmp_path, "avoidable")
    rows = dump(tdir)
    parents = {r["ppid"] for r in rows}
    parent = next(r["file"] for r in rows if r["pid"] in parents)
    child = next(r["file"] for r in rows if r["pid"] not in parents)
    gpu, cpu = avoidable_rows(cli("report", parent).stdout)
    assert row(gpu, "total") == ["total", "4", "68.0 MB", "0 B", "32.0 MB", "47.1%", "8.0 ms"]
    assert row(cpu, "total") == ["total", "1", "16.0 MB", "-", "16.0 MB", "100.0%", "4.0 ms"]
    gpu, cpu = avoidable_rows(cli("report", child).stdout)
    assert row(gpu, "total") == ["total", "2", "24.0 MB", "0 B", "8.00 MB", "33.3%", "2.0 ms"]
    assert cpu == []


def test_avoidable_copy_of_a_cpu_only_run_is_if_offloaded(numpy_trace):
    """A real NumPy run without a GPU: the estimate is the "if offloaded" one, and `a @ b` repeated on the
    same arrays reads inputs the GPU would already hold. No copy was measured: the profile's rate prices it."""
    out = cli("report", numpy_trace).stdout
    assert "By device: every call ran on the CPU" in out
    gpu, cpu = avoidable_rows(out)
    assert gpu == []
    total = row(cpu, "total")
    assert int(total[1]) >= 18 and total[3] != "0 B", total
    dgemm = row(cpu, "dgemm")
    assert dgemm[3] != "0 B", dgemm  # 2 of every 3 products reread both operands
    assert re.search(r"host-to-GPU rate of the profile \([\d.]+ GB/s\)", out)


# ----- the GPU columns, failures, verify, the model ---------------------------------------------------

def test_gpu_columns_failures_verify_and_model(tmp_path):
    """make_trace.cpp's `mixed` scenario: every number below is written there."""
    out = cli("report", make_trace(tmp_path, "mixed")).stdout
    assert re.search(r"device\s+gpu\n", out) and re.search(r"level\s+7\n", out)
    # Verify calls whose GPU run succeeded ran on the GPU too: the reader says so even for records
    # written with device cpu (as writers did before), and the report still counts them on the CPU.
    rows = list(csv.DictReader(io.StringIO(cli("dump", "--csv", tmp_path / "mixed").stdout)))
    verify = [r for r in rows if r["reason"] == "verified"]
    assert len(verify) == 2 and all(r["device"] == "gpu" for r in verify), verify
    assert 'profile     test <profile> & "synthetic"' in out

    dev = section(out, "By device")
    assert row(dev, "dgemm") == ["dgemm", "3", "3.0 ms", "2", "100.0 ms", "20.0 ms", "60.0 ms", "10.0 ms", "537 MB",
                                 "26.8", "30.0%"]
    # Verify calls count on the CPU (the program got the CPU result), their GPU phases are shown.
    assert row(dev, "dsyevd") == ["dsyevd", "2", "160.0 ms", "0", "4.0 ms", "40.0 ms", "4.0 ms", "64.0 MB", "16.0",
                                  "16.7%"]
    assert row(dev, "dgeevx")[:4] == ["dgeevx", "4", "2.0 ms", "0"]
    assert row(dev, "total")[:8] == ["total", "11", "365.0 ms", "2", "100.0 ms", "24.0 ms", "100.0 ms", "14.0 ms"]

    reasons = section(out, "Where calls ran and why")
    assert row(reasons, "gpu")[1:] == ["offloaded", "2", "100.0 ms", "dgemm 2"]
    assert any(re.split(r"\s{2,}", l.strip())[1:] == ["GPU failed", "1", "100.0 ms", "dpotrf 1"] for l in reasons)
    assert any(re.split(r"\s{2,}", l.strip())[1:] == ["GPU memory", "1", "100.0 ms", "dpotrf 1"] for l in reasons)

    failures = section(out, "GPU attempts that failed")
    assert "(1 call;" in failures[0]
    assert row(failures, "cuSOLVER error") == ["cuSOLVER error", "6", "7", "1", "dpotrf 1"]

    verify = section(out, "Verify mode")
    assert "2 calls ran on both devices; 1 mismatch beyond" in verify[0]
    assert row(verify, "dsyevd") == ["dsyevd", "2000", "2000", "0", "1", "3.5e-06"]

    model = section(out, "Cost model accuracy")
    assert row(model, "cpu") == ["cpu", "3", "1.00", "1.00", "1.00", "100.0%"]
    assert row(model, "gpu") == ["gpu", "2", "1.25", "1.25", "1.25", "100.0%"]
    # The named profile is not this machine's (nor a file): the crossover comes from the trace's own
    # predictions, and no file the trace names is opened.
    cross = section(out, "Predicted CPU/GPU crossover")
    assert "recorded in the trace" in cross[0]
    assert row(cross, "dgemm") == ["dgemm", "5", "about 2.15 Gflop"]
    assert "which is not this machine's" in "\n".join(cross)

    summary = "\n".join(section(out, "In short"))
    assert "2 of them ran on the GPU (100.0 ms" in summary
    assert "predicted 1.00 s on the CPU; they took 100.0 ms: about 10.0x faster on the GPU, 900.0 ms saved" in \
        " ".join(summary.split())
    assert "1 mismatch (worst relative difference 3.5e-06)" in summary
    assert "1 GPU attempt failed" in summary and "cuSOLVER error" in summary


def test_profile_crossover_from_the_builtin_profile(tmp_path):
    """The demo trace names the built-in profile: the crossover comes from the cost model at the traced
    calls' sizes (policy/model.h), not from the trace's predictions."""
    out = cli("report", make_trace(tmp_path, "demo")).stdout
    cross = section(out, "Predicted CPU/GPU crossover")
    assert "(profile built-in, at the traced calls' sizes)" in cross[0]
    assert row(cross, "dgemm")[1] == "123"


# ----- the HTML page ----------------------------------------------------------------------------------



def html_report(tdir, out):
    p = cli("report", tdir, "--html", out)
    assert f"HTML report written to {out}" in p.stdout
    return out.read_text()


def assert_self_contained(html):
    """Nothing the page would fetch: no scripts, links, external images, fonts or stylesheets."""
    assert html.startswith("<!DOCTYPE html>")
    for bad in (r"<script", r"<link", r"<img", r"<iframe", r"@import", r"\bsrc\s*=", r"\bhref\s*=", r"https?://",
                r"url\((?!#)"):
        assert not re.search(bad, html, re.I), bad


def chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    require(exe is not None, "chromium (headless, for the HTML report)")
    return exe


def browse(page, tmp_path, shot):
    """Headless Chromium: the DOM after loading `page`, and a 1200 x 2400 screenshot at `shot`."""
    exe = chromium()
    common = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
              f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1200,2400"]
    url = page.resolve().as_uri()
    dom = subprocess.run(common + ["--dump-dom", url], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    shot.parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(common + [f"--screenshot={shot}", url], capture_output=True, text=True, timeout=180)
    assert p.returncode == 0 and shot.exists(), p.stderr[-2000:]
    return dom.stdout, read_png(shot)


def read_png(path):
    """(width, height, rows of RGB tuples' bytes): a small PNG decoder (8-bit RGB/RGBA, not interlaced)."""
    import numpy as np
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 4 if color == 6 else 3
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + w * bpp)
    img = np.zeros((h, w * bpp), dtype=np.uint8)
    prev = np.zeros(w * bpp, dtype=np.int32)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if f == 0:
            cur = line
        elif f == 1:  # Sub: a running sum per channel
            cur = np.cumsum(line.reshape(w, bpp), axis=0).reshape(-1) & 255
        elif f == 2:  # Up
            cur = (line + prev) & 255
        else:  # Average, Paeth: sequential along the row
            cur = line.copy()
            up = prev.tolist()
            out = cur.tolist()
            for i in range(len(out)):
                left = out[i - bpp] if i >= bpp else 0
                if f == 3:
                    out[i] = (out[i] + ((left + up[i]) >> 1)) & 255
                else:
                    ul = up[i - bpp] if i >= bpp else 0
                    p = left + up[i] - ul
                    pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - ul)
                    out[i] = (out[i] + (left if pa <= pb and pa <= pc else up[i] if pb <= pc else ul)) & 255
            cur = np.array(out, dtype=np.int32)
        img[y] = cur
        prev = cur
    return img.reshape(h, w, bpp)[:, :, :3]


def pixel_stats(img):
    import numpy as np
    flat = img.reshape(-1, 3)
    non_white = float(np.mean(np.any(flat < 235, axis=1)))
    colours = len(np.unique(flat[:: 7] // 8, axis=0))

    def near(rgb):
        return int(np.sum(np.all(np.abs(flat.astype(int) - np.array(rgb)) <= 6, axis=1)))
    return non_white, colours, near(CPU_BLUE), near(GPU_ORANGE)


def check_charts(dom, drawn, empty=()):
    for chart in drawn:
        m = re.search(rf'<svg[^>]*\bid="{chart}"[^>]*>(.*?)</svg>', dom, re.S)
        assert m, f"no <svg id={chart}>"
        body = m.group(1)
        assert 'class="legend"' in body, chart                           # a legend
        assert 'class="axis' in body, chart                              # axes with ticks ...
        assert "(seconds)" in body or "(bytes)" in body, chart           # ... and a label with the unit
        assert re.search(r"<(rect|circle|path)\b", body), chart          # something drawn
    for chart in empty:
        assert re.search(rf'<p class="empty" id="{chart}">[^<]+</p>', dom), f"{chart} should say it has no data"
    for chart in CHARTS:
        assert (f'id="{chart}"' in dom), f"{chart} is missing"


def test_html_report_of_a_numpy_run_in_chromium(numpy_trace, tmp_path):
    chromium()
    page = tmp_path / "numpy-report.html"
    html = html_report(numpy_trace, page)
    assert_self_contained(html)
    assert re.search(r"<dt>level</dt><dd>5</dd>", html) and re.search(r"<dt>profile</dt><dd>[^<]+</dd>", html)
    assert "numpy_program.py" in html
    dom, img = browse(page, tmp_path, ARTIFACTS / "numpy-report.png")
    # No GPU in CI: the copy chart says so; the others are drawn.
    check_charts(dom, drawn=("chart-time-by-op", "chart-work-vs-time", "chart-cpu-reasons", "chart-avoidable-copy"),
                 empty=("chart-copy-vs-compute",))
    for table in ("table-operations", "table-reasons", "table-avoidable", "table-sites"):
        assert f'id="{table}"' in dom, table
    assert "<script" not in dom
    non_white, colours, blue, orange = pixel_stats(img)
    assert non_white > 0.05, non_white
    assert colours > 60, colours
    assert blue > 2000, blue  # the CPU's bars and points


def test_html_report_of_an_offloaded_run_in_chromium(tmp_path):
    """Every chart drawn, GPU parts included; text from the trace (the program's arguments, the profile's
    name) is escaped."""
    chromium()
    page = tmp_path / "gpu-report.html"
    tdir = make_trace(tmp_path, "demo", '<script>alert("gofl")</script>', "&amp;", "<b>bold</b>")
    html = html_report(tdir, page)
    assert_self_contained(html)
    assert "&lt;script&gt;alert(&quot;gofl&quot;)&lt;/script&gt; &amp;amp; &lt;b&gt;bold&lt;/b&gt;" in html
    dom, img = browse(page, tmp_path, ARTIFACTS / "gpu-report.png")
    check_charts(dom, drawn=CHARTS)
    assert "<script" not in dom and "<b>bold</b>" not in dom
    assert "crossover" in dom  # the profile's crossover line
    non_white, colours, blue, orange = pixel_stats(img)
    assert non_white > 0.05 and colours > 60, (non_white, colours)
    assert blue > 2000 and orange > 2000, (blue, orange)


def test_html_escapes_the_profile_name_and_empty_sections(tmp_path):
    page = tmp_path / "mixed.html"
    html = html_report(make_trace(tmp_path, "mixed"), page)
    assert_self_contained(html)
    assert "test &lt;profile&gt; &amp; &quot;synthetic&quot;" in html
    assert "<profile>" not in html
    # No call of this trace read data the GPU held: the estimate's chart still shows the inputs.
    assert 'id="chart-avoidable-copy"' in html and 'id="chart-copy-vs-compute"' in html


def test_html_report_shows_the_copies_residency_avoided(tmp_path):
    """The `resident` scenario (24 MB of 48 MB served by kept copies, 8 MB still avoidable): the page says
    so in a card and in the chart, whose bars split each operation's inputs three ways."""
    page = tmp_path / "resident.html"
    html = html_report(make_trace(tmp_path, "resident"), page)
    card = re.search(r'<div class="card gpu"><div class="k">Copies avoided</div><div class="v">([^<]+)</div>'
                     r'<div class="s">([^<]+)</div>', html)
    assert card, "no 'Copies avoided' card"
    assert card.group(1) == "24.0 MB"
    assert card.group(2) == "50.0% of GPU inputs kept on the GPU; 8.00 MB still avoidable"
    chart = re.search(r'id="chart-avoidable-copy".*?</svg>', html, re.S).group(0)
    assert "avoided: a kept copy on the GPU served it" in chart and "still avoidable" in chart
    assert "24.0 MB avoided, 8.00 MB of 48.0 MB still avoidable (16.7%)" in chart
    assert "Copying avoided by keeping data on the GPU, and what is still avoidable" in html
    # The text report's table, with its "avoided" column, on the page too.
    table = re.search(r'<table class="t" id="table-avoidable">.*?</table>', html, re.S)
    assert table, "no table-avoidable"
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", table.group(0).split("</thead>")[0])
    assert heads == ["operation", "calls", "inputs", "avoided", "still avoidable", "share", "time"]
    total = re.search(r'<tr class="total">(.*?)</tr>', table.group(0)).group(1)
    assert re.findall(r"<td[^>]*>([^<]*)</td>", total) == ["  total", "3", "48.0 MB", "24.0 MB", "8.00 MB", "16.7%",
                                                          "2.0 ms"]


def test_html_report_of_an_empty_trace_and_errors(tmp_path):
    tdir = make_trace(tmp_path, "mixed")
    f = next(tdir.iterdir())
    empty = tmp_path / "empty.gofltrace"
    empty.write_bytes(f.read_bytes()[:512])
    html = html_report(empty, tmp_path / "empty.html")
    assert_self_contained(html)
    assert 'id="no-calls"' in html and "<svg" not in html
    p = cli("report", tdir, "--html", tmp_path / "no" / "such" / "dir" / "r.html", check=False)
    assert p.returncode == 1 and p.stderr.startswith("gpu-offload: ") and "r.html" in p.stderr
    p = cli("report", tdir, "--html", check=False)
    assert p.returncode == 2 and "--html" in p.stderr


def test_html_legend_names_only_the_lines_it_draws(tmp_path):
    """One size of one routine gives one predicted point, no line: the legend must not name lines."""
    tdir = tmp_path / "one-size"
    script = "import numpy as np\na = np.ones((500, 500))\nfor _ in range(3): b = a @ a\n"
    run([sys.executable, "-c", script], trace_dir=tdir)
    html = html_report(tdir, tmp_path / "one-size.html")
    chart = html[html.index('id="chart-work-vs-time"'):]
    chart = chart[:chart.index("</svg>")]
    if "has the same work" not in html:
        pytest.skip("no profile predictions for these calls here (decided outside the cost model)")
    assert "predicted CPU time" not in chart and "predicted GPU time" not in chart, chart
    assert re.search(r"the cost model predicts \S+ \S+ on the CPU and \S+ \S+ on the GPU", html)
