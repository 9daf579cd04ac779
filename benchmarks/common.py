"""Shared helpers for the benchmark scripts: percentiles, CPU of a process tree, a pty runner, result rows."""

from __future__ import annotations

import os
import re
import select
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_()][0-9A-Za-z]?")


@dataclass
class Row:
    """One line of the results table."""

    bench: str
    measure: str
    value: str
    target: str = ""
    note: str = ""


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


def median(values: list[float]) -> float:
    return statistics.median(values)


async def seen_after(seen: dict[object, float], key: object, t0: float, timeout: float = 5.0) -> float | None:
    """Seconds from `t0` until `seen[key]` holds a time (set by the app once the frame showing it is
    drawn), measured to that time; None when it did not come within `timeout`."""
    import asyncio

    while key not in seen and time.perf_counter() < t0 + timeout:
        await asyncio.sleep(0.002)
    return seen[key] - t0 if key in seen else None


def tree_pids(pid: int) -> list[int]:
    """`pid` and all its descendants (from /proc)."""
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def cpu_ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total


def rss_kb(pid: int) -> int:
    """Peak RSS (VmHWM) of one live process, in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


class PtyProc:
    """A command running on a pseudo-terminal of a fixed size; its screen output is collected as text."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], cols: int = 160, rows: int = 30) -> None:
        import fcntl
        import struct
        import termios

        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(argv, cwd=cwd, env={**env, "COLUMNS": str(cols), "LINES": str(rows)},
                                     stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
        os.close(slave)
        self.raw = b""

    def pump(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                self.raw += os.read(self.master, 65536)
            except OSError:
                pass

    def text(self) -> str:
        return ANSI.sub("", self.raw.decode("utf-8", "replace"))

    def wait_for(self, needle: str, timeout: float, start: int = 0) -> float | None:
        """Seconds until `needle` appears in the output after byte offset `start`, else None."""
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < timeout:
            if needle in ANSI.sub("", self.raw[start:].decode("utf-8", "replace")):
                return time.perf_counter() - t0
            self.pump(0.005)
        return None

    def drain(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            self.pump(0.02)

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, 15)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        os.close(self.master)
