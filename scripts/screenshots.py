"""Regenerate the SVG screenshots in `screenshots/` from the demo workspace at a fixed time.

Usage: .venv/bin/python scripts/screenshots.py [OUTPUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from rcs_tui.demo import Simulator, build_workspace
from rcs_tui.ui.hud_app import HudApp

FIXED = datetime(2026, 11, 25, 21, 45, tzinfo=UTC)
EPOCH = FIXED.timestamp()
SHOTS = [  # file name, (columns, rows), keys to press, simulator ticks first
    ("hud-line-80x1.svg", (80, 1), [], 0),
    ("hud-stack-60x20.svg", (60, 20), [], 4),
    ("hud-narrow-40x6.svg", (40, 6), [], 0),
    ("overlay-100x24.svg", (100, 24), ["o"], 0),
]


async def shoot(out: Path) -> None:
    for name, size, keys, ticks in SHOTS:
        with tempfile.TemporaryDirectory(prefix="rcs-shot-") as tmp:
            ws = build_workspace(tmp, now=FIXED)
            sim = Simulator(ws)
            for _ in range(ticks):
                sim.step()
            for p in Path(tmp).rglob("*"):
                if p.is_file():
                    os.utime(p, (EPOCH, EPOCH))
            app = HudApp(ws.project, rp1_db=ws.rp1_db, watch=False, clock=lambda: EPOCH + 3)
            async with app.run_test(size=size) as pilot:
                await pilot.press(*keys)
                await pilot.pause(0.1)
                app.save_screenshot(filename=name, path=str(out))
        print(out / name)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "screenshots"
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(shoot(target))
