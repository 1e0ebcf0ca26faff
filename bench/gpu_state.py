"""The GPU's own state while a benchmark runs: nvidia-smi beside it, every half second, for the SM clock's
range while the GPU works, the hottest reading, the most power drawn and the clock-event reasons seen
(a power or thermal slowdown, clocks set by someone else). On the shared GPU machine the same forced
sweep's calls have come to 1.03 of the per-call fastest of three runs on one host and 1.08-1.22 on
another; this says whether the GPU itself slowed down. Reading it never fails a benchmark: whatever
goes wrong, the line says "not read" and why.

    with GpuState() as g:
        run()
    print(g.line())  # "GPU during the run: SM clock 1980 MHz (1755-1980) in 40 of 96 readings, ..."

It reads the first GPU (-i 0): the benchmarks that use it run on one.
"""

import statistics
import shutil
import subprocess
import tempfile

FIELDS = ("clocks.sm", "temperature.gpu", "power.draw")
# The clock-event reasons have two names (drivers from 535 on call them clocks_event_reasons, older ones
# clocks_throttle_reasons); the first that nvidia-smi takes is used, and remembered for the next run.
REASONS = ("clocks_event_reasons.active", "clocks_throttle_reasons.active")
IDLE = 0x1  # nvmlClocksEventReasonGpuIdle: nothing running; such readings say nothing of a slowdown
REASON_BITS = {0x2: "application clocks set", 0x4: "software power cap", 0x8: "hardware slowdown",
               0x10: "sync boost", 0x20: "software thermal slowdown", 0x40: "hardware thermal slowdown",
               0x80: "hardware power brake", 0x100: "display clock setting"}
_query = []  # the query nvidia-smi took, once found
LINE = "GPU during the run: "  # how line() begins, for those who look for it in a run's summary


def parse(text):
    """nvidia-smi's CSV lines (no header, no units) -> [(sm MHz, temperature C, power W or None, reasons)]."""
    out = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(FIELDS) + 1:
            continue
        try:
            sm, temp, reasons = float(cells[0]), float(cells[1]), int(cells[3], 16)
        except ValueError:
            continue
        try:
            power = float(cells[2])
        except ValueError:  # "[N/A]" where the board does not report it
            power = None
        out.append((sm, temp, power, reasons))
    return out


def describe(readings):
    """The readings while the GPU worked (not idle): SM clock median (min-max), hottest, most power, reasons."""
    busy = [r for r in readings if not r[3] & IDLE]
    if not busy:
        return f"the GPU idle in all {len(readings)} readings"
    sm = [r[0] for r in busy]
    power = [r[2] for r in busy if r[2] is not None]
    reasons = 0
    for r in busy:
        reasons |= r[3]
    said = [name for bit, name in REASON_BITS.items() if reasons & bit]
    return (f"SM clock {statistics.median(sm):.0f} MHz ({min(sm):.0f}-{max(sm):.0f}) in {len(busy)} of "
            f"{len(readings)} readings (the others idle), up to {max(r[1] for r in busy):.0f} C"
            + (f", {max(power):.0f} W" if power else "") + "; "
            + ("clock-event reasons: " + ", ".join(said) if said else "no clock-event reason"))


class GpuState:
    """nvidia-smi sampling beside a block; nothing where there is no nvidia-smi or it takes no query."""

    def __init__(self, every_ms=500):
        self.every_ms, self.proc, self.file, self.why = every_ms, None, None, ""

    def _find_query(self):
        smi = shutil.which("nvidia-smi")
        if not smi:
            self.why = "nvidia-smi not found"
            return None
        if _query and _query[0][0] == smi:
            return _query[0]
        for reasons in REASONS:
            query = [smi, f"--query-gpu={','.join(FIELDS + (reasons,))}", "--format=csv,noheader,nounits", "-i", "0"]
            probe = subprocess.run(query, capture_output=True, text=True, timeout=10)
            if probe.returncode == 0 and parse(probe.stdout):
                _query[:] = [query]
                return query
            self.why = f"nvidia-smi took no query ({(probe.stderr or probe.stdout).strip()[:120]})"
        return None

    def __enter__(self):
        try:
            query = self._find_query()
            if query:
                self.file = tempfile.TemporaryFile("w+")  # no pipe to fill while nobody reads it
                self.proc = subprocess.Popen(query + ["-lms", str(self.every_ms)], stdout=self.file,
                                             stderr=subprocess.DEVNULL, text=True)
        except Exception as e:  # noqa: BLE001 -- a benchmark must not fail for its GPU readings
            self.why = f"nvidia-smi: {e}"
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return False

    def line(self):
        """LINE and what the readings say, or why there are none (once: the readings are read and dropped)."""
        try:
            if not self.file:
                return f"{LINE}not read ({self.why or 'already read'})"
            self.file.seek(0)
            readings = parse(self.file.read())
            self.file.close()
            self.file, self.why = None, ""
            return LINE + (describe(readings) if readings else "not read (no reading)")
        except Exception as e:  # noqa: BLE001
            return f"{LINE}not read ({e})"
