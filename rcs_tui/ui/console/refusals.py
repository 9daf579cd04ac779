"""Repeated "changed underneath" refusals: which file keeps moving, who writes it, how often, what to do.

A refusal is right when a runtime rewrote a file between the preview and the write; a dead end is not.
After the second one the console explains the writer instead of offering the same retry forever.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from rcs_tui.files.io import read_bounded
from rcs_tui.views.text import ago, strip_controls

WRITER_FIELDS = ("source", "updated_by", "owner", "writer", "session_id", "pid")


@dataclass(frozen=True)
class Refusal:
    """One refusal: when, which file (relative to the root), its mtime then, and who the file says wrote it."""

    at: float
    path: str
    mtime: float | None
    writer: str


def refused_path(message: str) -> str:
    """The file a "changed underneath" message names first (the transaction layer starts with it)."""
    return message.split(" ", 1)[0] if message else "?"


def writer_of(path: Path) -> str:
    """What the file itself says about its writer (`source`, `owner`, `session_id`…), bounded read."""
    got = read_bounded(path, max_bytes=64 * 1024, part="head")  # never blocks on a FIFO swapped in
    if got.raw is None:
        return ""
    try:
        data = json.loads(got.raw)
    except (ValueError, RecursionError):
        return ""
    if not isinstance(data, dict):
        return ""
    parts = [f"{key}={strip_controls(data[key])[:40]}" for key in WRITER_FIELDS
             if isinstance(data.get(key), str | int) and not isinstance(data.get(key), bool)]
    return ", ".join(parts)


def refusal_record(root: Path, message: str, now: float | None = None) -> Refusal:
    rel = refused_path(message)
    path = root / rel
    try:
        mtime: float | None = path.stat().st_mtime
    except OSError:
        mtime = None
    return Refusal(now if now is not None else time.time(), rel, mtime, writer_of(path))


def busy_writer_advice(history: list[Refusal]) -> str:
    """Why the same action keeps being refused and what the operator can do about it."""
    last = history[-1]
    span = last.at - history[0].at
    times = sorted({r.mtime for r in history if r.mtime is not None})
    cadence = f", about every {ago((times[-1] - times[0]) / (len(times) - 1))}" if len(times) > 1 and \
        times[-1] > times[0] else ""
    writer = f" The file says it was written by {last.writer}." if last.writer else ""
    paths = sorted({r.path for r in history})
    return (f"Refused {len(history)} times in {ago(span)}: {', '.join(paths)} keeps changing{cadence}.{writer}\n"
            "Something is still running and rewriting it (an agent session, its hooks, or a simulator).\n"
            "What to do:\n"
            "  • pause the runtime that writes it (stop that agent session), then clear again;\n"
            "  • or clear in root and all sessions (C), so no stale copy brings it back;\n"
            "  • the doctor (D) finds root survivors and stale copies that rewrite modes.")
