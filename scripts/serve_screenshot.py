"""Take the browser screenshots of `rcs-tui serve` (`screenshots/serve-*.png`) and time the first frame.

Builds the demo workspace, serves the fleet over it (and the console of its project), opens each printed
URL in the system Chromium through Playwright, and saves what the page shows. Prints how long the page
took from navigation to its first frame of the app, over `--runs` fresh tabs.

Usage: .venv/bin/python scripts/serve_screenshot.py [--out DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from rcs_tui.demo import build_workspace

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def serve(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "rcs_tui", "serve", "--port", "0", *args], env=env,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("http"):
            return proc, line.strip()
    raise SystemExit(f"serve printed no URL (exit {proc.wait()})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="screenshots")
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    out = Path(opts.out)
    out.mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="rcs-serve-shot-"))
    ws = build_workspace(tmp / "demo")
    env = {**os.environ, "RP1_DB": str(ws.rp1_db), "XDG_STATE_HOME": str(tmp / "state"),
           "RCS_TUI_CONFIG": str(tmp / "no-config.toml")}
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                str(tmp / "profile"), executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1200, "height": 560})
            for name, args in (("serve-fleet.png", ["--project", str(ws.project)]),
                               ("serve-console.png", ["--console", "--root", str(ws.project)])):
                proc, url = serve(args, env)
                try:
                    first = []
                    for run in range(opts.runs):
                        page = context.new_page()
                        started = time.perf_counter()
                        page.goto(url)
                        page.wait_for_selector("body.-first-byte", timeout=60_000)
                        first.append(time.perf_counter() - started)
                        page.wait_for_timeout(2500 if run == opts.runs - 1 else 300)
                        if run == opts.runs - 1:
                            page.screenshot(path=str(out / name))
                        page.close()
                    print(f"{name}: first frame after navigation, {opts.runs} fresh tabs: median "
                          f"{statistics.median(first):.2f} s, min {min(first):.2f} s, max {max(first):.2f} s")
                finally:
                    proc.terminate()
                    proc.wait(20)
            context.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
