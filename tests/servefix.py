"""`rcs-tui serve` as a real server process for the tests: start it, read its URL, count its app processes,
and drive the system Chromium through Playwright (never a downloaded browser)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ANSI = re.compile(r"\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is not installed (apt-get install chromium; scripts/test.sh does it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (the test extra has it)"
    return None


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str
    lines: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return self.url.split("/?", 1)[0]

    @property
    def token(self) -> str:
        return self.url.rsplit("token=", 1)[1]

    def children(self) -> list[int]:
        """The pids of the server's child processes (one app process per open session)."""
        return children(self.proc.pid)

    def wait_children(self, count: int, timeout: float = 15.0) -> list[int]:
        deadline = time.monotonic() + timeout
        while len(found := self.children()) != count:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {count} app processes, found {found}")
            time.sleep(0.05)
        return found


def children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            out += [int(p) for p in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except OSError:
            continue
    return sorted(set(out))


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not count: it has ended and waits only to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@contextmanager
def serving(*args: str, env: dict[str, str] | None = None, timeout: float = 30.0) -> Iterator[Served]:
    """Run `rcs-tui serve --port 0 ARGS…` until the block ends; yields it once it printed its URL."""
    full = {**os.environ, **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "rcs_tui", "serve", "--port", "0", *args], env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    served = Served(proc, "")
    try:
        deadline = time.monotonic() + timeout
        assert proc.stdout is not None
        for line in proc.stdout:
            served.lines.append(line)
            if line.startswith("http"):
                served.url = line.strip()
                served.lines.append(proc.stdout.readline())  # where the token is kept
                break
            if time.monotonic() > deadline:
                break
        if not served.url:
            proc.kill()
            error = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"serve printed no URL: {''.join(served.lines)} {error}")
        yield served
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def chromium() -> Iterator[object]:
    """A fresh headless system Chromium (its own profile directory), as a Playwright browser context."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="rcs-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1200, "height": 640})
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


class Screen:
    """What one page's terminal was sent over its WebSocket, as plain text (escape sequences removed)."""

    def __init__(self, page) -> None:
        self.page = page
        self.frames: list[bytes] = []
        self.statuses: list[int] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload: bytes | str) -> None:
        self.frames.append(payload if isinstance(payload, bytes) else b"")

    def text(self, since: int = 0) -> str:
        return ANSI.sub("", b"".join(self.frames[since:]).decode("utf-8", "replace"))

    def wait_for(self, predicate: Callable[[str], bool], timeout: float = 20.0, since: int = 0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.text(since)
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"not shown in time; the page got: {text[-3000:]!r}")
            self.page.wait_for_timeout(50)


requires_browser = pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))
