"""The answer behind `hud --once`: one status line at little more than the cost of starting Python.

A status line respawns the command every few hundred milliseconds while the tree rarely changes, so
the answer is cached in rcs-tui's own cache directory (`$XDG_CACHE_HOME/rcs-tui/`, never in `.rcs/`
and never beside rp1's database) together with what it was built from:

- every file and directory the build opened or listed (traced through the interpreter's audit events,
  so nothing the readers look at is left out), the `.rcs` directories whose entries decide what exists,
  and rp1's database and WAL, each with inode, size, mtime and ctime in nanoseconds;
- every process whose liveness the answer depends on (a session pointer, team workers), with its start time;
- the options and environment variables that select the scope.

A stored answer is used only when all of that is unchanged; anything else (a different key, another
owner, a truncated or unparsable file, a changed stat, a process gone) means it is ignored and rebuilt.
A file written within the filesystem's timestamp granularity of the build could change again without
changing its stat, so such a build is not stored. The clock-dependent parts of the line (ages, "updated
… ago", recently ended modes) are written at render time, never stored.

This module imports only what the cached path needs (os, sys, json, zlib, select, stat); the readers, Textual,
Rich, click and pydantic are imported only to build an answer.
"""

from __future__ import annotations

import json
import os
import sys
import time

from rcs_tui.files.cache import cache_dir, code_stamp, read_own, write_own
from rcs_tui.files.host import ENV_VARS, pid_alive, pid_start_ticks

FORMAT = 1
RACY_NS = 100_000_000  # a write this close to the build may share its timestamp with a later one
COARSE_RACY_NS = 2_000_000_000  # the same on filesystems with whole-second timestamps


# -- stat signatures -----------------------------------------------------------------------------
def signature(path: str, ctime: bool = True) -> list[int] | None:
    """inode, size, mtime_ns, ctime_ns (following a symlink), or None when the path does not exist.

    `ctime=False` for rp1's database and WAL: SQLite itself truncates an empty WAL when a reader
    closes, which moves its ctime without changing a byte; every commit changes size or mtime.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not ctime:
        return [st.st_ino, st.st_size, st.st_mtime_ns]
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def process_print(pid: int) -> list[object]:
    """What the answer assumed about a process: alive or not, and which process (its start time)."""
    alive = pid_alive(pid)
    return [pid, alive, pid_start_ticks(pid) if alive else None]


class Trace:
    """While a build runs: every path under the watched prefixes it opens or lists, every pid it checks.

    Fed by `sys.audit` events ("open", "os.listdir", "os.scandir", "os.kill"); each path's signature
    and each process's print is taken when first seen, before the build reads it, so a change made
    during the build makes the stored signature differ from the file's, never the other way round.
    """

    def __init__(self, prefixes: tuple[str, ...], top: str) -> None:
        self.prefixes = prefixes
        self.top = top  # ancestors are recorded up to (and including) this directory
        self.inputs: dict[str, list[int] | None] = {}
        self.pids: dict[int, list[object]] = {}
        self._busy = False

    def add(self, path: str) -> None:
        while path not in self.inputs:
            self.inputs[path] = signature(path)
            if path == self.top or len(path) <= len(self.top):
                break
            path = os.path.dirname(path)

    def event(self, name: str, args: tuple[object, ...]) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            if name == "os.kill":
                pid, sig = args[0], args[1]
                if sig == 0 and isinstance(pid, int) and pid not in self.pids:
                    self.pids[pid] = process_print(pid)
                return
            target = args[0] if args else None
            if isinstance(target, int) or target is None:
                return
            path = os.path.abspath(os.fsdecode(os.fspath(target)))  # type: ignore[arg-type]
            if any(path == p or path.startswith(p + os.sep) for p in self.prefixes):
                self.add(path)
        except (TypeError, ValueError, OSError):
            return
        finally:
            self._busy = False


_ACTIVE: list[Trace] = []


def _audit(name: str, args: tuple[object, ...]) -> None:
    if _ACTIVE and name in ("open", "os.listdir", "os.scandir", "os.kill"):
        _ACTIVE[-1].event(name, args)


_HOOKED: list[bool] = []


def traced(trace: Trace) -> _Tracing:
    if not _HOOKED:
        sys.addaudithook(_audit)  # once per process; it does nothing unless a trace is active
        _HOOKED.append(True)
    return _Tracing(trace)


class _Tracing:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def __enter__(self) -> Trace:
        _ACTIVE.append(self.trace)
        return self.trace

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.remove(self.trace)


# -- the cache file ------------------------------------------------------------------------------
def cache_key(root: str, session: str | None, as_json: bool, ascii_only: bool, preset: str | None) -> dict[str, object]:
    """Everything besides file contents and processes that selects what the answer is."""
    env = {v: os.environ.get(v) for v in (*ENV_VARS, "RP1_DB", "HOME")}
    return {"root": root, "session": session, "json": as_json, "ascii": ascii_only, "preset": preset, "env": env,
            "uid": os.geteuid(), "code": code_stamp()}


def cache_path(key: dict[str, object]) -> str:
    import zlib

    text = json.dumps(key, sort_keys=True)
    return os.path.join(cache_dir(), f"once-{zlib.crc32(text.encode('utf-8', 'surrogateescape')):08x}.json")


def load_cached(path: str, key: dict[str, object]) -> dict[str, object] | None:
    """The stored answer when everything it was built from is unchanged; None for anything else."""
    raw = read_own(path)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("key") != key:
            return None
        for path_, sig in doc["inputs"]:
            if signature(path_, sig is None or len(sig) == 4) != sig:
                return None
        for pid, alive, ticks in doc["pids"]:
            if process_print(pid) != [pid, alive, ticks]:
                return None
        result = doc["result"]
        return result if isinstance(result, dict) else None
    except (ValueError, TypeError, KeyError, RecursionError, OSError):
        return None


def racy(trace: Trace, started_ns: int) -> bool:
    """Was any input written so close to the build that a later write could keep its stat?"""
    for sig in trace.inputs.values():
        if sig is None:
            continue
        for t in sig[2:]:
            window = COARSE_RACY_NS if t % 1_000_000_000 == 0 else RACY_NS
            if t >= started_ns - window:
                return True
    return False


def store(path: str, key: dict[str, object], trace: Trace, result: dict[str, object]) -> None:
    """Write the answer for next time (atomically, privately); a cache that cannot be written is no error."""
    doc = {"format": FORMAT, "key": key, "inputs": sorted(trace.inputs.items()),
           "pids": sorted(trace.pids.values(), key=lambda p: p[0]), "result": result}  # type: ignore[arg-type,return-value]
    write_own(path, json.dumps(doc, separators=(",", ":")).encode("utf-8", "surrogateescape"))


# -- building and rendering ----------------------------------------------------------------------
def watched(root: str) -> tuple[tuple[str, ...], list[str]]:
    """Prefixes the trace records under, and paths always recorded (whose entries decide what exists)."""
    rcs = os.path.join(root, ".rcs")
    fixed = [rcs, *(os.path.join(rcs, d) for d in ("state", "state/sessions", "state/team", "tasks", "plans")),
             os.path.join(root, ".rp1")]
    return (rcs, os.path.join(root, ".rp1")), fixed


def build(root: str, session: str | None, as_json: bool, ascii_only: bool,
          preset: str | None) -> tuple[dict[str, object], Trace]:
    """Read the world once (under a trace) and return the answer in its stored form."""
    from pathlib import Path

    from rcs_tui.rp1.db import default_db_path

    db = str(default_db_path(None))
    prefixes, fixed = watched(root)
    trace = Trace(prefixes, os.path.join(root, ".rcs"))
    for path in fixed:
        trace.inputs[path] = signature(path)
    for path in (db, db + "-wal"):
        trace.inputs[path] = signature(path, ctime=False)
    with traced(trace):
        result = _answer(Path(root), session, as_json, ascii_only, preset)
    return result, trace


def _answer(root: object, session: str | None, as_json: bool, ascii_only: bool,
            preset: str | None) -> dict[str, object]:
    from rcs_tui.files.layout import Layout
    from rcs_tui.project.loader import WorldLoader
    from rcs_tui.state.metrics import PRESET_ELEMENTS, read_hud_config, resolve_preset
    from rcs_tui.views.hud_line import header, template_segments

    layout = Layout(root)  # type: ignore[arg-type]
    config, _ = read_hud_config(layout.hud_config, layout.rcs)
    chosen = resolve_preset(preset, config)
    wanted = PRESET_ELEMENTS[chosen]
    sections = {"state", "metrics", "config", "team"}
    if "task" in wanted or as_json:
        sections.add("tasks")
    if "rp1" in wanted or as_json:
        sections.add("rp1")
    world = WorldLoader(layout.root, session_id=session, all_sessions=as_json, sections=sections).load()
    out: dict[str, object] = {"segs": [s.as_json() for s in template_segments(world, chosen, ascii_only=ascii_only)],
                              "head": [list(s) for s in header(world)], "json": None}
    if as_json:
        from rcs_tui.views.snapshot_json import snapshot_json
        from rcs_tui.views.text import sanitize
        from rcs_tui.views.world import world_json_extra

        doc = snapshot_json(world.snapshot)
        doc.update(world_json_extra(world))
        out["json"] = sanitize(doc, keep_newlines=True)  # once, when built: every cache hit prints it as stored
    return out


def answer(root: str, session: str | None, as_json: bool, ascii_only: bool, preset: str | None) -> dict[str, object]:
    """The stored answer when still valid, else a fresh one (stored for next time when it safely can be)."""
    key = cache_key(root, session, as_json, ascii_only, preset)
    path = cache_path(key)
    cached = load_cached(path, key)
    if cached is not None:
        return cached
    started = time.time_ns()
    result, trace = build(root, session, as_json, ascii_only, preset)
    if not racy(trace, started):
        store(path, key, trace, result)
    return result
