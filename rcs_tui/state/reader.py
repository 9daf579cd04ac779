"""Build a Snapshot of the `.rcs/state` tree. Never raises: per-file problems become FileErrors."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import Any

from rcs_tui.core.health import FileFacts, classify
from rcs_tui.core.lifecycle import is_active_doc
from rcs_tui.core.modes import CANONICAL_FILE, NAME_RE, STATE_SUFFIX, TRACKED_MODES, mode_from_filename
from rcs_tui.files import inputs
from rcs_tui.files.collector import paused
from rcs_tui.files.dirread import DirRead
from rcs_tui.files.io import JsonRead, parse_fast, read_json
from rcs_tui.files.layout import Layout
from rcs_tui.state.session import Resolution, resolve_session
from rcs_tui.state.snapshot import (
    CanonicalEntry,
    CanonicalSet,
    FileError,
    Member,
    ModeFile,
    Scope,
    Snapshot,
    canonical_entry,
    canonical_set,
    member,
    scope_read,
    well_read,
)

# The mode each tracked `<mode>-state.json` name stands for (`mode_from_filename`, as one lookup).
_MODE_OF_FILE = {f"{m}{STATE_SUFFIX}": mode_from_filename(f"{m}{STATE_SUFFIX}") for m in TRACKED_MODES}
_TRACKED = frozenset(TRACKED_MODES)  # valid names all (`NAME_RE`): most canonical entries need no match


def read_mode_file(path: Path, mode: str, session_id: str | None, within: Path) -> ModeFile:
    return _mode_file(read_json(path, within=within), mode, session_id)


def _mode_file(read: JsonRead, mode: str, session_id: str | None, directory: Path | None = None) -> ModeFile:
    """`directory`: the one object for `read.path`'s directory, kept by the mode file (see `ModeFile`)."""
    mtime = read.stat.st_mtime if read.stat is not None else None  # the read's own stat: no second syscall
    return ModeFile(mode, session_id, read.path, read.data if read.ok else None, read.error, read.sha, mtime,
                    directory=directory)


def parse_canonical(path: Path, within: Path, scope_session: str | None) -> CanonicalSet:
    """Read a canonical set, tolerating the legacy single-skill form and malformed entries."""
    return _canonical(read_json(path, within=within), scope_session)


def _canonical(read: JsonRead, scope_session: str | None) -> CanonicalSet:
    path = read.path
    if not read.exists:
        return CanonicalSet(path, False)
    if read.error:
        return CanonicalSet(path, True, error=read.error, sha=read.sha)
    return _canonical_set(path, read.data, read.sha, scope_session)


def _canonical_set(path: Path, data: dict[str, Any], sha: str | None, scope_session: str | None) -> CanonicalSet:
    """The canonical set a file read without error holds (`sha`: its digest)."""
    entries: list[CanonicalEntry] = []
    skills = data.get("active_skills")
    legacy = "active_skills" not in data
    if isinstance(skills, list):
        seen: set[tuple[str, str | None]] = set()
        for raw in skills:
            if not isinstance(raw, dict):
                continue
            get = raw.get
            skill = get("skill")
            if get("active") is False or not isinstance(skill, str) or (
                    skill not in _TRACKED and not NAME_RE.fullmatch(skill)):
                continue
            sid = get("session_id")
            if not isinstance(sid, str):
                sid = None
            elif scope_session is not None and sid != scope_session:
                continue
            key = (skill, sid)
            if key in seen:
                continue
            seen.add(key)
            phase = get("phase")
            at = get("activated_at")
            entries.append(canonical_entry(skill, phase if isinstance(phase, str) else None, sid,
                                           at if isinstance(at, str) else None, raw))
    elif skills is not None:
        return CanonicalSet(path, True, data, error="field active_skills: expected a list", sha=sha)
    elif data.get("active") is True and isinstance(data.get("skill"), str) and NAME_RE.fullmatch(data["skill"]):
        phase = data.get("phase") if isinstance(data.get("phase"), str) else None
        entries.append(CanonicalEntry(data["skill"], phase, scope_session, data.get("activated_at"), {}))
    if sha is None:
        return CanonicalSet(path, True, data, sha=sha, entries=tuple(entries), legacy=legacy)
    return canonical_set(path, data, sha, tuple(entries), legacy)


def read_scope(layout: Layout, session_id: str | None, errors: list[FileError], *, linked: bool = False,
               previous: Scope | None = None, changed: Collection[str] | None = None,
               places: Places | None = None) -> Scope:
    """Every tracked mode file and the canonical set of one scope directory.

    The scope's own errors are appended to `errors` and kept in `Scope.errors` (so a refresh can reuse
    them). `linked`: the directory is reached through a symlink. With `previous` (this scope as last
    read) and `changed` (the names of the files in it that changed since), the directory is listed
    again but only the changed files are read; the others are taken from `previous`. Never done for a
    scope holding or reached through a symlink: its files can change without an event naming them.
    `places`: the layout's paths, built once by a caller reading many scopes.
    """
    places = places or Places(layout)
    directory = places.state if session_id is None else places.sessions / session_id
    keep = previous if previous is not None and changed is not None and not (linked or previous.linked) else None
    fresh: Collection[str] = changed if changed is not None else ()
    own: list[FileError] = []
    modes: dict[str, ModeFile] = {}
    hud_state = None
    if session_id is not None and places.parent is not None:
        listed = places.parent.child(session_id, directory)
    else:
        listed = DirRead(directory, within=places.rcs)
    with listed:  # one descriptor and one listing per scope
        if listed.error:
            own.append(FileError(directory, listed.error))
        names = listed.names
        linked = linked or listed.linked
        newest: float | None = None  # the newest mode-file write, as `Scope.newest` would find it
        for name in names:
            mode = _MODE_OF_FILE.get(name)
            if mode is None:
                continue
            if keep is not None and name not in fresh and (old := keep.modes.get(mode)) is not None:
                mf = old
            else:
                got = listed.read_object(name)
                if isinstance(got, tuple):  # the common case, built without a path or a record of the read
                    mtime = got[2].st_mtime
                    modes[mode] = well_read(mode, session_id, directory, name, got[0], sha256(got[1]).digest(), mtime)
                    if newest is None or mtime > newest:
                        newest = mtime
                    continue
                mf = _mode_file(got, mode, session_id, directory)
            if mf.error:
                own.append(FileError(mf.path, mf.error))
            modes[mode] = mf
            if mf.mtime is not None and (newest is None or mf.mtime > newest):
                newest = mf.mtime
        if keep is not None and keep.canonical is not None and CANONICAL_FILE not in fresh:
            canonical = keep.canonical
        else:
            got = listed.read_object(CANONICAL_FILE)
            if isinstance(got, tuple):
                canonical = _canonical_set(directory / CANONICAL_FILE, got[0], sha256(got[1]).hexdigest(), session_id)
            else:
                canonical = _canonical(got, session_id)
        if canonical.error:
            own.append(FileError(canonical.path, canonical.error))
        if session_id is None or "hud-state.json" not in names:
            pass
        elif keep is not None and "hud-state.json" not in fresh:
            hud_state = keep.hud_state
            hud_path = directory / "hud-state.json"
            own += [e for e in keep.errors if e.path == hud_path]
        else:
            hud = listed.read_json("hud-state.json")
            if hud.ok:
                hud_state = hud.data
            elif hud.error:
                own.append(FileError(hud.path, hud.error))
    if own:
        errors.extend(own)
    return scope_read(session_id, directory, modes, canonical, hud_state, tuple(own), linked, newest)


class Places:
    """The paths of a layout a scope read needs (each `Layout` property builds new Path objects), and
    `sessions/` held open while many sessions are read (`parent`: each is opened relative to it)."""

    __slots__ = ("rcs", "state", "sessions", "parent")

    def __init__(self, layout: Layout) -> None:
        self.rcs = layout.rcs
        self.state = self.rcs / "state"
        self.sessions = self.state / "sessions"
        self.parent: DirRead | None = None

    def open_sessions(self) -> DirRead:
        """`sessions/` opened (not listed) as the parent of the session reads that follow; close it after."""
        self.parent = DirRead(self.sessions, within=self.rcs, listed=False)
        return self.parent


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def read_scope_alone(layout: Layout, session_id: str | None) -> Scope | None:
    """One scope as `read_snapshot(root, session_id, all_sessions=False).scope(session_id)` gives it, without
    listing the session directories: a session whose directory is not usable (not a directory, or a link
    leading outside `.rcs/`) is None, as it is missing from that snapshot."""
    errors: list[FileError] = []
    if session_id is None:
        return read_scope(layout, None, errors)
    path = layout.sessions / session_id
    if not NAME_RE.fullmatch(session_id):
        return None
    link = inputs.is_symlink(path)
    if link:
        try:
            Path(inputs.realpath(path)).relative_to(inputs.realpath(layout.rcs))
        except (ValueError, OSError, RuntimeError):
            return None
    if not inputs.is_dir(path):
        return None
    return read_scope(layout, session_id, errors, linked=link)


def _session_entries(layout: Layout, errors: list[FileError]) -> list[tuple[str, bool]]:
    """(name, is a symlink) of every usable session directory, sorted by name."""
    try:
        with inputs.scandir(layout.sessions) as it:
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
                rcs_resolved = rcs_resolved or Path(inputs.realpath(layout.rcs))
                Path(inputs.realpath(path)).relative_to(rcs_resolved)
            except (ValueError, OSError, RuntimeError):
                errors.append(FileError(path, "symlink leads outside .rcs/; not followed"))
                continue
        if entry.is_dir():
            out.append((entry.name, link))
    return out


@dataclass(frozen=True)
class Listing:
    """One listing of `sessions/`: (name, is a symlink) of each usable directory in name order, the
    names as a set, and the problems found while listing."""

    entries: tuple[tuple[str, bool], ...]
    names: frozenset[str]
    links: frozenset[str]
    errors: tuple[FileError, ...]


# The last listing of each `sessions/` directory, with the directory's stat signature then.
_LISTINGS: dict[str, tuple[tuple[int, int, int], Listing]] = {}


def _dir_signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = inputs.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def _listing(layout: Layout, dirty: set[str]) -> Listing:
    """The session directories, listed again only when the list may have changed.

    Creating, removing or renaming an entry changes the directory's mtime and ctime, so an unchanged
    stat means an unchanged list; a changed path in a session the list lacks, or a changed session
    whose directory is gone, forces a new listing too (an entry added within the same timestamp tick
    as the last listing still shows up that way, through its files' events). The same Listing object
    comes back while it holds, so a caller can tell "nothing was added or removed" by identity.
    """
    key = str(layout.sessions)
    sig = _dir_signature(layout.sessions)
    known = _LISTINGS.get(key)
    if sig is not None and known is not None and known[0] == sig:
        names = known[1].names
        if all(name in names and inputs.is_dir(layout.scope_dir(name)) for name in dirty):
            return known[1]
    own: list[FileError] = []
    entries = _session_entries(layout, own)
    listing = Listing(tuple(entries), frozenset(name for name, _ in entries),
                      frozenset(name for name, link in entries if link), tuple(own))
    if sig is not None and sig == _dir_signature(layout.sessions):
        _LISTINGS[key] = (sig, listing)
    return listing


def list_sessions(layout: Layout, errors: list[FileError]) -> list[str]:
    return [name for name, _ in _session_entries(layout, errors)]


def _facts(scope: Scope) -> dict[str, FileFacts]:
    """`FileFacts(True, f.active, f.phase, f.tombstone, f.error)` of each mode file.

    The doctor asks this of every session, and nearly all files come down to a handful of distinct facts
    (active or not, in one of a few phases): those are built once and shared (FileFacts is immutable)."""
    out = {}
    for mode, f in scope.modes.items():
        phase = f.phase
        key = (f.active, phase, f.tombstone, f.error)
        facts = _SHARED_FACTS.get(key)
        if facts is None:
            facts = FileFacts(True, *key)
            if len(_SHARED_FACTS) < _SHARED_FACTS_MAX and len(phase or "") <= 40 and key[3] is None:
                _SHARED_FACTS[key] = facts
        out[mode] = facts
    return out


_SHARED_FACTS: dict[tuple[bool, str | None, bool, str | None], FileFacts] = {}
_SHARED_FACTS_MAX = 256  # distinct (active, phase, tombstone) kept; phases are the runtime's few words


def compute_members(layout: Layout, resolution: Resolution, root: Scope,
                    sessions: dict[str, Scope], tombstoned_elsewhere: Collection[str] = ()) -> tuple[Member, ...]:
    """The members of the resolved scope, each with its health. `tombstoned_elsewhere`: root's modes that
    sessions not in `sessions` tombstoned (another process read those; see `root_tombstones`)."""
    sid = resolution.session_id
    scope = root if sid is None else sessions.get(sid) or Scope(sid, layout.scope_dir(sid))
    canonical = scope.canonical
    members = canonical.members if canonical is not None and canonical.usable else None
    tombstoned: set[str] = set()
    if sid is None:
        tombstoned = root_tombstones(root, sessions) | set(tombstoned_elsewhere)
    verdicts = classify(sid, members, _facts(scope), _facts(root) if sid is not None else {}, tombstoned)
    entries = {e.skill: e for e in canonical.entries} if canonical is not None else {}
    out = []
    for v in verdicts:
        where = root if v.in_root else scope
        out.append(member(v.mode, v.health, where.session_id, where.modes.get(v.mode),
                          entries.get(v.mode) if not v.in_root else None, v.reason))
    return tuple(out)


def root_tombstones(root: Scope, sessions: dict[str, Scope]) -> set[str]:
    """Root's active modes that one of `sessions` holds a tombstone of (cleared there: root's copy then
    survives a clear)."""
    return {mode for mode, f in root.modes.items()
            if f.active and any(s.modes.get(mode) and s.modes[mode].tombstone for s in sessions.values())}


def read_active_sets(root: Path, *, over: int = 0) -> dict[str, tuple[str, ...]] | None:
    """Each session's active set (`Scope.active_modes()` of a full read), read from its mode files alone;
    None when there are no more than `over` scopes (root and the sessions), where it would not pay.

    What a long list of sessions shows before the full read is in: the same session directories, read
    the same way and judged by the same rule, without the canonical sets, the file digests and the
    records a full read keeps."""
    with paused():
        layout = Layout(root)
        entries = _session_entries(layout, [])
        if len(entries) + 1 <= over:
            return None
        places = Places(layout)
        out: dict[str, tuple[str, ...]] = {}
        with places.open_sessions():
            for name, link in entries:
                out[name] = _active_set(places, name, link)
        return out


def _active_set(places: Places, name: str, link: bool) -> tuple[str, ...]:
    parent = places.parent
    directory = places.sessions / name
    active = []
    with parent.child(name, directory) if parent is not None else DirRead(directory, within=places.rcs) as listed:
        for file in listed.names:
            mode = mode_from_filename(file)
            if mode is not None and _is_active(listed, file):
                active.append(mode)
    return tuple(sorted(active))


def _is_active(listed: DirRead, name: str) -> bool:
    """`ModeFile.active` of the file as a full read reads it, mostly without its strict parse.

    The plain JSON decoder accepts everything the strict one does and decodes it alike (the strict one
    only refuses more: NaN, infinite numbers, deep nesting, lone surrogates), and a file the full read
    refuses is never active. So a file the plain decoder cannot decode, or decodes as not active, is not
    active; only one it finds active is parsed again by the full read's own parser to confirm it."""
    got = listed.read_raw(name)
    if got is None:  # not a plain regular file: the full read's reader answers
        read = listed.read_json(name)
        return read.ok and is_active_doc(read.data)
    raw, st = got
    try:
        plain = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return False
    if not is_active_doc(plain):
        return False
    read = parse_fast(listed.directory / name, raw, st)
    return read.ok and is_active_doc(read.data)


def read_snapshot(root: Path, session_id: str | None = None, *, all_sessions: bool = True,
                  environ: dict[str, str] | None = None, resolution: Resolution | None = None,
                  share: Collection[str] | None = None) -> Snapshot:
    """Read the state tree. `all_sessions=False` reads only root and the current session (cheap path).
    `share`: read only these of the listed sessions (one part of a read split between processes; the
    snapshot's members are then judged from root and that part)."""
    with paused():  # a bulk build of acyclic records: no collection can find anything in it
        return _read_snapshot(root, session_id, all_sessions, environ, resolution, share)


def _read_snapshot(root: Path, session_id: str | None, all_sessions: bool, environ: dict[str, str] | None,
                   resolution: Resolution | None, share: Collection[str] | None = None) -> Snapshot:
    layout = Layout(root)
    errors: list[FileError] = []
    res = resolution or resolve_session(layout, session_id, environ)
    places = Places(layout)
    root_scope = read_scope(layout, None, errors, places=places)
    entries = _session_entries(layout, errors)
    if not all_sessions:
        entries = [e for e in entries if e[0] == res.session_id]
    elif share is not None:
        entries = [e for e in entries if e[0] in share]
    with places.open_sessions():
        sessions = {name: read_scope(layout, name, errors, linked=link, places=places) for name, link in entries}
    if not all_sessions and res.session_id is None:
        # Root is authoritative: still look for session tombstones of modes active at root.
        active_root = [m for m, f in root_scope.modes.items() if f.active]
        if active_root:
            for name in list_sessions(layout, []):
                for mode in active_root:
                    path = layout.mode_file(mode, name)
                    if inputs.exists(path):
                        mf = read_mode_file(path, mode, name, layout.rcs)
                        if mf.tombstone:
                            sessions.setdefault(name, Scope(name, layout.scope_dir(name))).modes[mode] = mf
    members = compute_members(layout, res, root_scope, sessions)
    return Snapshot(root, time.time(), res, root_scope, sessions, members, tuple(errors),
                    mode_newest=_newest(root_scope, sessions.values()),
                    linked=frozenset(n for n, sc in sessions.items() if sc.linked),
                    erring=frozenset(n for n, sc in sessions.items() if sc.errors))


def _newest(root: Scope, sessions: Iterable[Scope]) -> float | None:
    times = [t for t in (root.newest, *(sc.newest for sc in sessions)) if t is not None]
    return max(times) if times else None


def changed_sessions(layout: Layout, changed: Iterable[Path | str]) -> set[str]:
    """Names of the session directories that hold (or are) one of the `changed` paths."""
    return set(_split_changed(layout, changed)[0])


def _split_changed(layout: Layout, changed: Iterable[Path | str]
                   ) -> tuple[dict[str, set[str] | None], set[str] | None]:
    """Where the `changed` paths are, as scopes read them.

    Per session directory holding a changed path, the names of its entries that changed (None when
    the directory itself did: read it all); and the same for the root scope, `.rcs/state` (an empty set
    when nothing in it changed; sessions/, team/ and the rest of `.rcs` are not part of the root scope).
    """
    state = os.path.abspath(layout.state)
    state_prefix = os.path.join(state, "")
    prefix = os.path.join(os.path.abspath(layout.sessions), "")
    sessions: dict[str, set[str] | None] = {}
    root: set[str] | None = set()
    for p in changed:
        s = os.path.abspath(p)
        if s.startswith(prefix):
            sid, _, rest = s[len(prefix):].partition(os.sep)
            names = sessions.setdefault(sid, set())
            if not rest:
                sessions[sid] = None
            elif names is not None:
                names.add(rest.split(os.sep, 1)[0])
        elif s.startswith(state_prefix):
            if root is not None:
                root.add(s[len(state_prefix):].split(os.sep, 1)[0])
        elif state.startswith(os.path.join(s, "")) or s == state:
            root = None  # `.rcs/state` itself or a directory above it
    return sessions, root


def refresh_snapshot(previous: Snapshot, changed: Iterable[Path | str], session_id: str | None = None, *,
                     environ: dict[str, str] | None = None, resolution: Resolution | None = None) -> Snapshot:
    """What `read_snapshot(previous.root, session_id)` would return, given that since `previous` (a full,
    all-sessions read) only the `changed` paths changed.

    Costs what changed, not what exists. Re-reads the resolution; in the root scope and in each session
    whose directory holds a changed path, only the changed files (every file of a scope holding or
    reached through a symlink: it can change without an event naming it, so such sessions are re-read
    on every refresh). Every other Scope of `previous` is reused as it is (they are immutable), with its
    errors. While the session listing is the one `previous` was built from, no other session is even
    visited: the newest mode-file write and the sessions with errors or symlinks are carried over and
    adjusted for the scopes re-read. When the listing changed (a session added or removed), sessions are
    merged in one pass. Members are recomputed by the same `compute_members`. Paths must be spelled
    under `previous.root`, as the watcher reports them.
    """
    layout = Layout(previous.root)
    dirty, root_changed = _split_changed(layout, changed)
    res = resolution or resolve_session(layout, session_id, environ)
    old_root = previous.root_scope
    root_scope = old_root
    if root_changed is None or root_changed or old_root.linked:
        root_scope = read_scope(layout, None, [], previous=old_root, changed=root_changed)
    listing = _listing(layout, set(dirty))
    replaced: list[tuple[Scope | None, Scope]] = [(old_root, root_scope)] if root_scope is not old_root else []
    if listing is previous.listing:
        sessions = dict(previous.sessions)
        linked, erring = set(previous.linked), set(previous.erring)
        for name in dirty.keys() | previous.linked:
            old = sessions[name]
            scope = read_scope(layout, name, [], linked=name in listing.links, previous=old, changed=dirty.get(name))
            replaced.append((old, scope))
            sessions[name] = scope
            _mark(linked, name, scope.linked)
            _mark(erring, name, bool(scope.errors))
        newest = _adjusted_newest(previous, replaced, root_scope, sessions)
    else:
        sessions = {}
        places = Places(layout)
        with places.open_sessions():
            for name, link in listing.entries:
                kept = previous.sessions.get(name)
                if kept is None or link or kept.linked:
                    sessions[name] = read_scope(layout, name, [], linked=link, places=places)
                elif name in dirty:
                    sessions[name] = read_scope(layout, name, [], previous=kept, changed=dirty[name],
                                                places=places)
                else:
                    sessions[name] = kept
        linked = {n for n, sc in sessions.items() if sc.linked}
        erring = {n for n, sc in sessions.items() if sc.errors}
        newest = _newest(root_scope, sessions.values())
    errors = [*root_scope.errors, *listing.errors, *(e for n in sorted(erring) for e in sessions[n].errors)]
    members = compute_members(layout, res, root_scope, sessions)
    return Snapshot(previous.root, time.time(), res, root_scope, sessions, members, tuple(errors),
                    mode_newest=newest, linked=frozenset(linked), erring=frozenset(erring), listing=listing)


def _mark(names: set[str], name: str, on: bool) -> None:
    if on:
        names.add(name)
    else:
        names.discard(name)


def _adjusted_newest(previous: Snapshot, replaced: list[tuple[Scope | None, Scope]], root: Scope,
                     sessions: dict[str, Scope]) -> float | None:
    """The newest mode-file write after replacing some scopes: the old figure raised by what they hold
    now, or computed again over every scope when the one holding it lost its newest file."""
    newest = previous.mode_newest
    for old, new in replaced:
        before, after = (old.newest if old is not None else None), new.newest
        if before is not None and before == newest and (after is None or after < before):
            return _newest(root, sessions.values())
    times = [t for t in (newest, *(new.newest for _, new in replaced)) if t is not None]
    return max(times) if times else None
