"""The GPU's own state while a benchmark runs: nvidia-smi beside it, every half second, for the SM clock's
range, the hottest reading, the most power drawn and the clock-event reasons seen (a power or thermal
slowdown, the clocks held by someone else). On the shared GPU machine the same forced run's calls have
come to 1.03 of the per-call fastest of three runs on one host and 1.08-1.22 on another; this says
whether the GPU itself slowed down.

    with GpuState() as g:
        run()
    print(g.line())   # "GPU during the run: SM clock 1980 MHz (1755-1980), up to 61 C, 402 W; no clock-event reason"
"""

import shutil
import statistics
import subprocess

# Field names of the query: the clock-event reasons have two names (drivers from 535 on call them
# clocks_event_reasons, older ones clocks_throttle_reasons); the first that nvidia-smi takes is used.
FIELDS = ("clocks.sm", "temperature.gpu", "power.draw")
REASONS = ("clocks_event_reasons.active", "clocks_throttle_reasons.active")
# nvidia-smi's bits of the reasons (nvmlClocksEventReasons): the GPU idle (0x1) is not a slowdown.
REASON_BITS = {0x2: "application clocks set", 0x4: "software power cap", 0x8: "hardware slowdown",
               0x10: "sync boost", 0x20: "software thermal slowdown", 0x40: "hardware thermal slowdown",
               0x80: "hardware power brake", 0x100: "display clock setting"}


def parse(text):
    """nvidia-smi's CSV lines (no header, no units): the clocks, temperatures, powers and reasons read."""
    sm, temp, power, reasons = [], [], [], 0
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(FIELDS) + 1:
            continue
        try:
            sm.append(float(cells[0]))
            temp.append(float(cells[1]))
        except ValueError:
            continue
        try:
            power.append(float(cells[2]))
        except ValueError:  # "[N/A]" where the board does not report it
            pass
        try:
            reasons |= int(cells[3], 16)
        except ValueError:
            pass
    return sm, temp, power, reasons


def describe(sm, temp, power, reasons):
    if not sm:
        return "no reading"
    said = [name for bit, name in REASON_BITS.items() if reasons & bit]
    return (f"SM clock {statistics.median(sm):.0f} MHz ({min(sm):.0f}-{max(sm):.0f}), up to {max(temp):.0f} C"
            + (f", {max(power):.0f} W" if power else "") + "; "
            + ("clock-event reasons: " + ", ".join(said) if said else "no clock-event reason"))


class GpuState:
    """nvidia-smi sampling beside a block (nothing where there is no nvidia-smi or it takes no query)."""

    def __init__(self, every_ms=500):
        self.every_ms, self.proc, self.out, self.why = every_ms, None, "", ""

    def __enter__(self):
        smi = shutil.which("nvidia-smi")
        if not smi:
            self.why = "nvidia-smi not found"
            return self
        for reasons in REASONS:
            query = [smi, f"--query-gpu={','.join(FIELDS + (reasons,))}", "--format=csv,noheader,nounits", "-i", "0"]
            try:
                probe = subprocess.run(query, capture_output=True, text=True, timeout=10)
            except (OSError, subprocess.TimeoutExpired) as e:
                self.why = f"nvidia-smi: {e}"
                return self
            if probe.returncode == 0 and parse(probe.stdout)[0]:
                self.proc = subprocess.Popen(query + ["-lms", str(self.every_ms)], stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL, text=True)
                self.out = probe.stdout
                return self
            self.why = f"nvidia-smi took no query ({(probe.stderr or probe.stdout).strip()[:120]})"
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.terminate()
            try:
                self.out += self.proc.communicate(timeout=10)[0]
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.out += self.proc.communicate()[0]
        return False

    def line(self):
        return "GPU during the run: " + (describe(*parse(self.out)) if self.out else f"not read ({self.why})")
