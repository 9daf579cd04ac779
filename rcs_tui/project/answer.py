"""The answer behind `hud --once`: one status line at little more than the cost of starting Python.

A status line respawns the command every few hundred milliseconds while the tree rarely changes, so
the answer is cached in rcs-tui's own cache directory (`$XDG_CACHE_HOME/rcs-tui/`, never in `.rcs/`
and never beside rp1's database) together with what it was built from:

- every file and directory the build read, listed or only checked for existence (the readers look at
  the disk only through `files.inputs` and `files.io`, which note each path in the active `Recorder`),
  the `.rcs` directories whose entries decide what exists, and rp1's database and WAL, each with inode,
  size, mtime and ctime in nanoseconds;
- every process whose liveness the answer depends on (a session pointer, team workers), with its start time;
- the options and environment variables that select the scope.

A stored answer is used only when all of that is unchanged; anything else (a different key, another
owner, a truncated or unparsable file, a changed stat, a process gone) means it is ignored and rebuilt.
A file written within the filesystem's timestamp granularity of the build could change again without
changing its stat, so such a build is not stored. The clock-dependent parts of the line (ages, "updated
… ago", recently ended modes) are written at render time, never stored.

This module imports only what the cached path needs (os, json, zlib and the file layer's small modules);
the readers, Textual, Rich, click and pydantic are imported only to build an answer.
"""

from __future__ import annotations

import binascii
import json
import os
import time
import zlib

from rcs_tui.files.cache import cache_dir, code_stamp, read_own, write_own
from rcs_tui.files.host import ENV_VARS
from rcs_tui.files.inputs import (
    Recorder,
    compact,
    process_print,
    recording,
    resolved_unchanged,
    signature,
    unchanged,
)

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the cached path imports no typing
if TYPE_CHECKING:
    from rcs_tui.state.snapshot import Snapshot

FORMAT = 4  # 4: where links led; 3: a compact record of the inputs, the JSON document stored as compressed text
RACY_NS = 100_000_000  # a write this close to the build may share its timestamp with a later one
COARSE_RACY_NS = 2_000_000_000  # the same on filesystems with whole-second timestamps


# -- the cache file ------------------------------------------------------------------------------
def cache_key(root: str, session: str | None, as_json: bool, ascii_only: bool, preset: str | None,
              rp1_db: str | None = None) -> dict[str, object]:
    """Everything besides file contents and processes that selects what the answer is."""
    env = {v: os.environ.get(v) for v in (*ENV_VARS, "RP1_DB", "HOME")}
    return {"root": root, "session": session, "json": as_json, "ascii": ascii_only, "preset": preset, "env": env,
            "uid": os.geteuid(), "code": code_stamp(), **({"rp1_db": rp1_db} if rp1_db else {})}


def cache_path(key: dict[str, object]) -> str:
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
        for pid, alive, ticks in doc["pids"]:
            if process_print(pid) != [pid, alive, ticks]:
                return None
        if not unchanged(doc["inputs"]) or not resolved_unchanged(doc["resolved"]):
            return None
        result = doc["result"]
        if not isinstance(result, dict):
            return None
        if result.get("json") is not None:
            result["json"] = zlib.decompress(binascii.a2b_base64(result["json"], strict_mode=True))
        return result
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError, OSError, zlib.error):
        return None


def racy(inputs: Recorder, started_ns: int) -> bool:
    """Was any input written so close to the build that a later write could keep its stat?"""
    for sig in inputs.inputs.values():
        if sig is None:
            continue
        for t in sig[2:]:
            window = COARSE_RACY_NS if t % 1_000_000_000 == 0 else RACY_NS
            if t >= started_ns - window:
                return True
    return False


def store(path: str, key: dict[str, object], inputs: Recorder, result: dict[str, object]) -> bool:
    """Write the answer for next time (atomically, privately); False when it was not written.

    The record of inputs is compact (it grows with directories, not files) and the JSON document is kept
    as compressed text, so even a current session holding thousands of files fits the cache file's size
    limit. An answer too large even so is not stored (the file layer refuses any cache file larger than it
    would read): every call then builds afresh, as with no cache.
    """
    stored = dict(result)
    if isinstance(result.get("json"), bytes | bytearray):
        stored["json"] = binascii.b2a_base64(zlib.compress(result["json"], 1), newline=False).decode("ascii")  # type: ignore[arg-type]
    pids = sorted(inputs.pids.values(), key=lambda p: p[0])  # type: ignore[arg-type,return-value]
    doc = {"format": FORMAT, "key": key, "inputs": compact(inputs.inputs, os.path.dirname(inputs.top)),
           "pids": pids, "resolved": sorted([path, out] for path, out in inputs.resolved.items()), "result": stored}
    return write_own(path, json.dumps(doc, separators=(",", ":")).encode("utf-8", "surrogateescape"))


# -- building and rendering ----------------------------------------------------------------------
def watched(root: str) -> tuple[tuple[str, ...], list[str]]:
    """Prefixes the recorder records under, and paths always recorded (whose entries decide what exists)."""
    rcs = os.path.join(root, ".rcs")
    fixed = [rcs, *(os.path.join(rcs, d) for d in ("state", "state/sessions", "state/team", "tasks", "plans")),
             os.path.join(root, ".rp1")]
    return (rcs, os.path.join(root, ".rp1")), fixed


def build(root: str, session: str | None, as_json: bool, ascii_only: bool,
          preset: str | None, rp1_db: str | None = None) -> tuple[dict[str, object], Recorder]:
    """Read the world once (recording its inputs) and return the answer in its stored form."""
    from pathlib import Path

    from rcs_tui.rp1.db import default_db_path, wal_of

    db = str(default_db_path(rp1_db))
    prefixes, fixed = watched(root)
    recorder = Recorder(prefixes, os.path.join(root, ".rcs"))
    for path in fixed:
        recorder.inputs[path] = signature(path)
    recorder.inputs[db] = signature(db)  # followed to the file: a link pointed elsewhere is another inode
    wal = wal_of(db)
    recorder.inputs[wal] = signature(wal, ctime=False)
    with recording(recorder):
        result = _answer(Path(root), session, as_json, ascii_only, preset, Path(db))
    return result, recorder


def _answer(root: object, session: str | None, as_json: bool, ascii_only: bool,
            preset: str | None, rp1_db: object = True) -> dict[str, object]:
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
    world = WorldLoader(layout.root, session_id=session, all_sessions=False, sections=sections,
                        rp1_db=rp1_db).load()  # type: ignore[arg-type]
    out: dict[str, object] = {"segs": [s.as_json() for s in template_segments(world, chosen, ascii_only=ascii_only)],
                              "head": [list(s) for s in header(world)], "json": None}
    if as_json:
        from rcs_tui.views.json_stream import encoded
        from rcs_tui.views.snapshot_json import snapshot_json
        from rcs_tui.views.world import HUD_JSON_KIND, HUD_JSON_VERSION, world_json_extra

        # Sanitised and encoded as UTF-8 text once, when built, piece by piece: each scope's JSON is made
        # as it is written (no sanitised copy, no whole string beside the bytes). Every cache hit prints
        # it as stored, unparsed.
        doc: dict[str, object] = {"version": HUD_JSON_VERSION, "kind": HUD_JSON_KIND}
        doc.update(snapshot_json(_own_scopes(world.snapshot), streamed=True))
        doc.update(world_json_extra(world))
        out["json"] = encoded(doc)
    return out


def _own_scopes(snap: Snapshot) -> Snapshot:
    """The snapshot with root and the current session as its only scopes. At root the reader also holds,
    for each session that cleared one of root's active modes, that one file (it makes root's copy a
    survivor): those sessions are judged in root's members, not listed as if that were all they held."""
    from dataclasses import replace

    sid = snap.resolution.session_id
    return replace(snap, sessions={sid: snap.sessions[sid]} if sid is not None and sid in snap.sessions else {})


def answer(root: str, session: str | None, as_json: bool, ascii_only: bool, preset: str | None,
           rp1_db: str | None = None) -> dict[str, object]:
    """The stored answer when still valid, else a fresh one (stored for next time when it safely can be).
    `rp1_db`: the rp1 database to read (None: RP1_DB, else ~/.rp1/rp1.db)."""
    key = cache_key(root, session, as_json, ascii_only, preset, rp1_db)
    path = cache_path(key)
    cached = load_cached(path, key)
    if cached is not None:
        return cached
    started = time.time_ns()
    result, recorder = build(root, session, as_json, ascii_only, preset, rp1_db)
    if not racy(recorder, started):
        store(path, key, recorder, result)
    return result
