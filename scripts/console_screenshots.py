"""Regenerate the console's SVG screenshots (`screenshots/console-*.svg`) from the demo workspace.

Usage: .venv/bin/python scripts/console_screenshots.py [OUTPUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from rcs_tui.demo import SESSION, build_workspace
from rcs_tui.ui.console.app import ConsoleApp

FIXED = datetime(2026, 11, 25, 21, 45, tzinfo=UTC)
EPOCH = FIXED.timestamp()
MEMBER = f"member:{SESSION}:{SESSION}:team"


async def _row(pilot, table: str, key: str) -> None:
    pilot.app.screen.query_one(f"#{table}").select_key(key)
    await pilot.pause()


async def scopes(pilot, ws) -> None:
    await _row(pilot, "scopes-table", MEMBER)


async def member(pilot, ws) -> None:
    await scopes(pilot, ws)
    await pilot.press("enter")


async def clear(pilot, ws) -> None:
    await scopes(pilot, ws)
    await pilot.press("d")


async def journal(pilot, ws) -> None:
    await clear(pilot, ws)
    await pilot.press("y")
    await pilot.pause()
    await pilot.press("5")


async def run(pilot, ws) -> None:
    await pilot.press("4")
    await pilot.pause()
    await _row(pilot, "runs-table", ws.runs["build"])
    await pilot.press("enter")


async def task(pilot, ws) -> None:
    await pilot.press("3")
    await pilot.pause()
    await _row(pilot, "tasks-table", "login-api")
    await pilot.press("enter")


async def override(pilot, ws) -> None:
    await pilot.press("3")
    await pilot.pause()
    await _row(pilot, "tasks-table", "login-api")
    await pilot.press("o", "down")
    await pilot.pause()
    pilot.app.screen.query_one("#override-reason").value = "review done by hand on the call"


async def whatif(pilot, ws) -> None:
    await pilot.press("w", *"$blueprint $team $forge fix it")


SHOTS = [  # file name, (columns, rows), setup
    ("console-scopes-80x24.svg", (80, 24), scopes),
    ("console-scopes-60x20.svg", (60, 20), scopes),
    ("console-member-80x24.svg", (80, 24), member),
    ("console-clear-80x24.svg", (80, 24), clear),
    ("console-team-80x24.svg", (80, 24), lambda p, ws: p.press("2")),
    ("console-tasks-80x24.svg", (80, 24), lambda p, ws: p.press("3")),
    ("console-task-80x24.svg", (80, 24), task),
    ("console-override-80x24.svg", (80, 24), override),
    ("console-rp1-80x24.svg", (80, 24), lambda p, ws: p.press("4")),
    ("console-run-80x24.svg", (80, 24), run),
    ("console-journal-80x24.svg", (80, 24), journal),
    ("console-doctor-80x24.svg", (80, 24), lambda p, ws: p.press("D")),
    ("console-whatif-80x24.svg", (80, 24), whatif),
    ("console-help-80x24.svg", (80, 24), lambda p, ws: p.press("question_mark")),
]


async def shoot(out: Path) -> None:
    for name, size, setup in SHOTS:
        with tempfile.TemporaryDirectory(prefix="rcs-shot-") as tmp:
            ws = build_workspace(tmp, now=FIXED, pid=os.getpid())
            for p in Path(tmp).rglob("*"):
                if p.is_file():
                    os.utime(p, (EPOCH - 60, EPOCH - 60))
            app = ConsoleApp(ws.project, rp1_db=ws.rp1_db, live=False, blink=False, clock=lambda: EPOCH + 3,
                             actor="operator@demo", theme="textual-dark")
            app.watch_mode = "native"  # shown as the live demo shows it; the shot itself is static
            async with app.run_test(size=size) as pilot:
                await pilot.pause()
                await setup(pilot, ws)
                await pilot.pause()
                app.save_screenshot(name, str(out))
        print(out / name)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "screenshots"
    target.mkdir(parents=True, exist_ok=True)
    os.environ["TZ"] = "UTC"  # the run and task bars show times of day: the same on every machine
    time.tzset()
    asyncio.run(shoot(target))
