"""`rcs-tui hud --once`: the status line's project root (from `--root` or an agent statusline's payload)
and the text it prints for an answer.

When stdin is a pipe or a file holding an agent statusline's JSON object (`workspace.current_dir`,
`cwd`, `workspace.project_dir`), the project root is the nearest directory holding `.rcs/` above it,
unless `--root` is given. A terminal, an empty pipe or one with nothing ready is never waited on.
The answer itself, and its cache, is `rcs_tui.project.answer`.

This module imports only what the cached path needs (os, sys, json, select, stat); the readers, Textual,
Rich, click and pydantic are imported only to build an answer.
"""

from __future__ import annotations

import json
import os
import stat
import time

from rcs_tui.files.host import RootNotFound, find_root_dir, nearest_root
from rcs_tui.views.line_fit import Seg, place, plain, spans_from_json, to_ansi

MAX_STDIN_BYTES = 256 * 1024
STDIN_GAP = 0.05  # seconds to wait for the rest of a payload once its first bytes are in
STDIN_DEADLINE = 0.25  # seconds a payload may take in all: a pipe that keeps trickling is not waited on


# -- the statusline payload ----------------------------------------------------------------------
def read_stdin_payload(fd: int = 0) -> dict[str, object] | None:
    """The JSON object an agent statusline pipes to stdin, or None (a terminal, nothing ready, not JSON).

    Only a pipe, socket or regular file is read; nothing is waited for unless bytes are already there,
    and the read stops at EOF, at `MAX_STDIN_BYTES`, when no more bytes arrive for `STDIN_GAP` s, or
    `STDIN_DEADLINE` s after the first bytes (a payload cut off by a limit is no payload).
    """
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISREG(mode)):
        return None
    import select

    chunks: list[bytes] = []
    size = 0
    wait = 0.0
    try:
        deadline: float | None = None
        while size <= MAX_STDIN_BYTES:
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            now = time.monotonic()
            deadline = deadline if deadline is not None else now + STDIN_DEADLINE
            if now >= deadline:
                return None  # still trickling at the deadline: whatever came is cut off, not a payload
            wait = min(STDIN_GAP, deadline - now)
    except (OSError, ValueError):
        return None
    if not chunks or size > MAX_STDIN_BYTES:
        return None
    try:
        data = json.loads(b"".join(chunks))
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def payload_dirs(payload: dict[str, object]) -> list[str]:
    """The directories a statusline payload names, most specific first."""
    workspace = payload.get("workspace")
    ws = workspace if isinstance(workspace, dict) else {}
    out = []
    for value in (ws.get("current_dir"), payload.get("cwd"), ws.get("project_dir")):
        if isinstance(value, str) and value and "\0" not in value and os.path.isabs(value) and value not in out:
            out.append(value)
    return out


NEUTRAL_LINE = "[RCS] no project here"


class NoProjectForStatusline(RootNotFound):
    """An agent's statusline asked from a directory with no project: not a failure for it (it would show
    an error in the agent's status bar on every turn); the plain command keeps its error."""


def once_root(explicit: str | None, stdin_fd: int | None = 0) -> str:
    """The project root for `hud --once`: `--root`, else the statusline payload's, else `RCS_ROOT`/the cwd.

    Raises `RootNotFound` (from `host`) with the reason; `NoProjectForStatusline` when a statusline payload
    came on stdin (the command runs as an agent's statusline) and no project was found.
    """
    payload = None
    if not explicit and stdin_fd is not None:
        payload = read_stdin_payload(stdin_fd)
        for start in payload_dirs(payload or {}):
            if os.path.isdir(start):
                found = nearest_root(start)
                if found is not None:
                    return found
    try:
        return find_root_dir(explicit)
    except RootNotFound as exc:
        if payload is not None and not exc.named:
            raise NoProjectForStatusline(str(exc)) from None
        raise


def render(result: dict[str, object], now: float, width: int, lines: int, ascii_only: bool, as_json: bool,
           color: bool) -> str | bytes:
    """The text `hud --once` prints for an answer at `now`: the line(s), or with `as_json` the document as
    UTF-8 bytes (stored as text, never parsed to be printed)."""
    segs = [Seg.from_json(s) for s in result["segs"]]  # type: ignore[attr-defined]
    head = list(spans_from_json(result["head"]))
    rows = place(segs, head, now, width, lines, ascii_only)
    if as_json:
        from rcs_tui.views.json_text import with_keys
        from rcs_tui.views.text import strip_controls

        first = rows if lines == 1 else place(segs, head, now, width, 1, ascii_only)  # fit once when one line
        extra: dict[str, object] = {"line": strip_controls(plain(first[0]))}
        if lines > 1:
            extra["lines"] = [strip_controls(plain(r)) for r in rows]
        stored = result["json"]  # sanitised JSON text (see `answer._answer`)
        return with_keys(stored if isinstance(stored, bytes | bytearray) else b"{}", extra)
    return "\n".join(to_ansi(r, color) for r in rows)
