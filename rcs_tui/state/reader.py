"""Build a Snapshot of the `.rcs/state` tree. Never raises: per-file problems become FileErrors."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rcs_tui.core.health import FileFacts, classify
from rcs_tui.core.modes import CANONICAL_FILE, NAME_RE, mode_from_filename
from rcs_tui.state.io import read_json
from rcs_tui.state.layout import Layout
from rcs_tui.state.session import Resolution, resolve_session
from rcs_tui.state.snapshot import CanonicalEntry, CanonicalSet, FileError, Member, ModeFile, Scope, Snapshot


def read_mode_file(path: Path, mode: str, session_id: str | None, within: Path) -> ModeFile:
    read = read_json(path, within=within)
    mtime = read.stat.st_mtime if read.stat is not None else None  # the read's own stat: no second syscall
    return ModeFile(mode, session_id, path, read.data if read.ok else None, read.error, read.sha, mtime)


def parse_canonical(path: Path, within: Path, scope_session: str | None) -> CanonicalSet:
    """Read a canonical set, tolerating the legacy single-skill form and malformed entries."""
    read = read_json(path, within=within)
    if not read.exists:
        return CanonicalSet(path, False)
    if read.error:
        return CanonicalSet(path, True, error=read.error, sha=read.sha)
    data: dict[str, Any] = read.data
    entries: list[CanonicalEntry] = []
    skills = data.get("active_skills")
    legacy = "active_skills" not in data
    if isinstance(skills, list):
        seen: set[tuple[str, str | None]] = set()
        for raw in skills:
            if not isinstance(raw, dict) or raw.get("active") is False:
                continue
            skill = raw.get("skill")
            sid = raw.get("session_id") if isinstance(raw.get("session_id"), str) else None
            if not isinstance(skill, str) or not NAME_RE.fullmatch(skill):
                continue
            if scope_session is not None and sid not in (None, scope_session):
                continue
            if (skill, sid) in seen:
                continue
            seen.add((skill, sid))
            phase = raw.get("phase") if isinstance(raw.get("phase"), str) else None
            at = raw.get("activated_at") if isinstance(raw.get("activated_at"), str) else None
            entries.append(CanonicalEntry(skill, phase, sid, at, raw))
    elif skills is not None:
        return CanonicalSet(path, True, data, error="field active_skills: expected a list", sha=read.sha)
    elif data.get("active") is True and isinstance(data.get("skill"), str) and NAME_RE.fullmatch(data["skill"]):
        phase = data.get("phase") if isinstance(data.get("phase"), str) else None
        entries.append(CanonicalEntry(data["skill"], phase, scope_session, data.get("activated_at"), {}))
    return CanonicalSet(path, True, data, sha=read.sha, entries=tuple(entries), legacy=legacy)


def read_scope(layout: Layout, session_id: str | None, errors: list[FileError], *, linked: bool = False) -> Scope:
    """Every tracked mode file and the canonical set of one scope directory.

    The scope's own errors are appended to `errors` and kept in `Scope.errors` (so a refresh can reuse
    them). `linked`: the directory is reached through a symlink.
    """
    directory = layout.scope_dir(session_id)
    within = layout.rcs  # a new Path on every access: once per scope, not once per file
    own: list[FileError] = []
    modes: dict[str, ModeFile] = {}
    hud_state = None
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=_name)
    except FileNotFoundError:
        entries = []
    except OSError as exc:
        own.append(FileError(directory, f"cannot list directory: {exc.strerror or exc}"))
        entries = []
    names = set()
    for entry in entries:
        name = entry.name
        names.add(name)
        if not linked:
            try:
                linked = entry.is_symlink()  # from the directory listing: no syscall on Linux
            except OSError:
                linked = True
        mode = mode_from_filename(name)
        if mode is None:
            continue
        mf = read_mode_file(directory / name, mode, session_id, within)
        if mf.error:
            own.append(FileError(mf.path, mf.error))
        modes[mode] = mf
    canonical = parse_canonical(directory / CANONICAL_FILE, within, session_id)
    if canonical.error:
        own.append(FileError(canonical.path, canonical.error))
    if session_id is not None and "hud-state.json" in names:
        hud = read_json(directory / "hud-state.json", within=within)
        if hud.ok:
            hud_state = hud.data
        elif hud.error:
            own.append(FileError(hud.path, hud.error))
    errors.extend(own)
    return Scope(session_id, directory, modes, canonical, hud_state, tuple(own), linked)


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _session_entries(layout: Layout, errors: list[FileError]) -> list[tuple[str, bool]]:
    """(name, is a symlink) of every usable session directory, sorted by name."""
    try:
        with os.scandir(layout.sessions) as it:
            entries = sorted(it, key=_name)
    except FileNotFoundError:
        return []
    except OSError as exc:
        errors.append(FileError(layout.sessions, f"cannot list directory: {exc.strerror or exc}"))
        return []
    out = []
    rcs_resolved: Path | None = None
    for entry in entries:
        if not NAME_RE.fullmatch(entry.name):
            if entry.is_dir():
                errors.append(FileError(Path(entry.path), "invalid session directory name; ignored"))
            continue
        link = entry.is_symlink()
        if link:
            path = Path(entry.path)
            try:
                rcs_resolved = rcs_resolved or layout.rcs.resolve()
                path.resolve().relative_to(rcs_resolved)
            except (ValueError, OSError, RuntimeError):
                errors.append(FileError(path, "symlink leads outside .rcs/; not followed"))
                continue
        if entry.is_dir():
            out.append((entry.name, link))
    return out


# The last listing of each `sessions/` directory: its stat signature, entries and listing errors.
_LISTINGS: dict[str, tuple[tuple[int, int, int], list[tuple[str, bool]], list[FileError]]] = {}


def _dir_signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def _listing(layout: Layout, dirty: set[str], errors: list[FileError]) -> list[tuple[str, bool]]:
    """The session directories, listed again only when the list may have changed.

    Creating, removing or renaming an entry changes the directory's mtime and ctime, so an unchanged
    stat means an unchanged list; a changed path in a session the list lacks, or a changed session
    whose directory is gone, forces a new listing too (an entry added within the same timestamp tick
    as the last listing still shows up that way, through its files' events).
    """
    key = str(layout.sessions)
    sig = _dir_signature(layout.sessions)
    known = _LISTINGS.get(key)
    if sig is not None and known is not None and known[0] == sig:
        names = {name for name, _ in known[1]}
        if all(name in names and os.path.isdir(layout.scope_dir(name)) for name in dirty):
            errors.extend(known[2])
            return known[1]
    own: list[FileError] = []
    entries = _session_entries(layout, own)
    errors.extend(own)
    if sig is not None and sig == _dir_signature(layout.sessions):
        _LISTINGS[key] = (sig, entries, own)
    return entries


def list_sessions(layout: Layout, errors: list[FileError]) -> list[str]:
    return [name for name, _ in _session_entries(layout, errors)]


def _facts(scope: Scope) -> dict[str, FileFacts]:
    return {m: FileFacts(True, f.active, f.phase, f.tombstone, f.error) for m, f in scope.modes.items()}


def compute_members(layout: Layout, resolution: Resolution, root: Scope,
                    sessions: dict[str, Scope]) -> tuple[Member, ...]:
    sid = resolution.session_id
    scope = root if sid is None else sessions.get(sid) or Scope(sid, layout.scope_dir(sid))
    canonical = scope.canonical
    members = canonical.members if canonical is not None and canonical.usable else None
    tombstoned: set[str] = set()
    if sid is None:
        for mode, f in root.modes.items():
            if f.active and any(s.modes.get(mode) and s.modes[mode].tombstone for s in sessions.values()):
                tombstoned.add(mode)
    verdicts = classify(sid, members, _facts(scope), _facts(root) if sid is not None else {}, tombstoned)
    entries = {e.skill: e for e in canonical.entries} if canonical is not None else {}
    out = []
    for v in verdicts:
        where = root if v.in_root else scope
        out.append(Member(v.mode, v.health, where.session_id, where.modes.get(v.mode),  # type: ignore[arg-type]
                          entries.get(v.mode) if not v.in_root else None, v.reason))
    return tuple(out)


def read_snapshot(root: Path, session_id: str | None = None, *, all_sessions: bool = True,
                  environ: dict[str, str] | None = None, resolution: Resolution | None = None) -> Snapshot:
    """Read the state tree. `all_sessions=False` reads only root and the current session (cheap path)."""
    layout = Layout(root)
    errors: list[FileError] = []
    res = resolution or resolve_session(layout, session_id, environ)
    root_scope = read_scope(layout, None, errors)
    entries = _session_entries(layout, errors)
    if not all_sessions:
        entries = [e for e in entries if e[0] == res.session_id]
    sessions = {name: read_scope(layout, name, errors, linked=link) for name, link in entries}
    if not all_sessions and res.session_id is None:
        # Root is authoritative: still look for session tombstones of modes active at root.
        active_root = [m for m, f in root_scope.modes.items() if f.active]
        if active_root:
            for name in list_sessions(layout, []):
                for mode in active_root:
                    path = layout.mode_file(mode, name)
                    if path.exists():
                        mf = read_mode_file(path, mode, name, layout.rcs)
                        if mf.tombstone:
                            sessions.setdefault(name, Scope(name, layout.scope_dir(name))).modes[mode] = mf
    members = compute_members(layout, res, root_scope, sessions)
    return Snapshot(root, time.time(), res, root_scope, sessions, members, tuple(errors))


def changed_sessions(layout: Layout, changed: Iterable[Path | str]) -> set[str]:
    """Names of the session directories that hold (or are) one of the `changed` paths."""
    prefix = os.path.join(os.path.abspath(layout.sessions), "")
    out = set()
    for p in changed:
        s = os.path.abspath(p)
        if s.startswith(prefix):
            out.add(s[len(prefix):].split(os.sep, 1)[0])
    return out


def refresh_snapshot(previous: Snapshot, changed: Iterable[Path | str], session_id: str | None = None, *,
                     environ: dict[str, str] | None = None, resolution: Resolution | None = None) -> Snapshot:
    """What `read_snapshot(previous.root, session_id)` would return, given that since `previous` (a full,
    all-sessions read) only the `changed` paths changed.

    Re-reads the resolution, root, the session list and every session scope whose directory holds a
    changed path (plus new sessions and scopes reached through symlinks, which can change without an
    event in their directory); reuses every other Scope of `previous` as it is (they are immutable),
    with its errors. Members are recomputed by the same `compute_members`. Paths must be spelled under
    `previous.root`, as the watcher reports them.
    """
    layout = Layout(previous.root)
    dirty = changed_sessions(layout, changed)
    errors: list[FileError] = []
    res = resolution or resolve_session(layout, session_id, environ)
    root_scope = read_scope(layout, None, errors)
    sessions: dict[str, Scope] = {}
    for name, link in _listing(layout, dirty, errors):
        old = previous.sessions.get(name)
        if old is None or link or old.linked or name in dirty:
            sessions[name] = read_scope(layout, name, errors, linked=link)
        else:
            sessions[name] = old
            if old.errors:
                errors.extend(old.errors)
    members = compute_members(layout, res, root_scope, sessions)
    return Snapshot(previous.root, time.time(), res, root_scope, sessions, members, tuple(errors))
