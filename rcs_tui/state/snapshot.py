"""An immutable picture of the `.rcs/state` tree: scopes, mode files, canonical sets, per-file errors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from rcs_tui.core.health import Health
from rcs_tui.core.lifecycle import Outcome, is_active_doc, lifecycle_outcome
from rcs_tui.core.modes import STATE_SUFFIX, TRACKED_MODES
from rcs_tui.core.values import count
from rcs_tui.files.io import rel_of
from rcs_tui.state.session import Resolution

_FILE_NAMES = {f"{m}{STATE_SUFFIX}": f"{m}{STATE_SUFFIX}" for m in TRACKED_MODES}


@dataclass(frozen=True)
class FileError:
    """One file that could not be used, with a one-line reason."""

    path: Path
    reason: str

    def as_json(self, root: Path) -> dict[str, str]:
        return {"path": rel_of(root, self.path), "error": self.reason}


@dataclass(frozen=True, slots=True, init=False, repr=False)
class ModeFile:
    """One `<mode>-state.json`. `data` keeps every field, known or not.

    A live fleet keeps one of these per mode file of every project it follows (hundreds of thousands), so
    it is kept small: slots and no per-instance dict; its path as its directory (one object shared by the
    files of a scope when the reader passes it) and its file name (one string per mode); its digest as
    bytes. `active` and `outcome` are worked out on first use and kept in slots of their own (a loader
    keeps an unchanged file's object, so later Worlds reuse them).
    """

    mode: str
    session_id: str | None
    directory: Path
    name: str
    data: dict[str, Any] | None
    error: str | None
    digest: bytes | None
    mtime: float | None
    _active: bool | None = field(compare=False)
    _outcome: Outcome | None = field(compare=False)

    def __init__(self, mode: str, session_id: str | None, path: Path, data: dict[str, Any] | None = None,
                 error: str | None = None, sha: str | None = None, mtime: float | None = None, *,
                 directory: Path | None = None) -> None:
        """`directory`: the caller's promise that it is `path`'s directory (its one object is kept)."""
        put = object.__setattr__
        put(self, "mode", mode)
        put(self, "session_id", session_id)
        put(self, "directory", directory if directory is not None else path.parent)
        put(self, "name", _FILE_NAMES.get(path.name) or path.name)
        put(self, "data", data)
        put(self, "error", error)
        put(self, "digest", bytes.fromhex(sha) if sha is not None else None)
        put(self, "mtime", mtime)
        put(self, "_active", None)
        put(self, "_outcome", None)

    def __repr__(self) -> str:
        return (f"ModeFile(mode={self.mode!r}, session_id={self.session_id!r}, path={self.path!r}, "
                f"data={self.data!r}, error={self.error!r}, sha={self.sha!r}, mtime={self.mtime!r})")

    @property
    def path(self) -> Path:
        return self.directory / self.name

    def rel_path(self, root: Path) -> str:
        """`rel_of(root, self.path)`: the directory as the operator sees it and the file's name, without
        joining a Path only to turn it into text again (a document of every scope asks it of every file)."""
        base = rel_of(root, self.directory)
        return self.name if base == "." else f"{base}/{self.name}"

    @property
    def sha(self) -> str | None:
        """The file's SHA-256 as hex (what was read; None when nothing was)."""
        return self.digest.hex() if self.digest is not None else None

    @property
    def phase(self) -> str | None:
        value = (self.data or {}).get("current_phase")
        return value if isinstance(value, str) else None

    @property
    def active(self) -> bool:
        """Marked active with a non-terminal phase (decided once per file read, as `outcome`)."""
        value = self._active
        if value is None:
            value = is_active_doc(self.data)
            object.__setattr__(self, "_active", value)
        return value

    @property
    def tombstone(self) -> bool:
        return (self.data or {}).get("active") is False and self.phase == "cleared"

    @property
    def outcome(self) -> Outcome:
        """The lifecycle outcome, decided once per file read (a loader keeps an unchanged file's object, so
        every view and every verdict of a later World reuses it)."""
        value = self._outcome
        if value is None:
            value = lifecycle_outcome(self.data)
            object.__setattr__(self, "_outcome", value)
        return value

    @property
    def iteration(self) -> int | None:
        return count((self.data or {}).get("iteration"))

    @property
    def max_iterations(self) -> int | None:
        return count((self.data or {}).get("max_iterations"))


@dataclass(frozen=True, slots=True)
class CanonicalEntry:
    skill: str
    phase: str | None
    session_id: str | None
    activated_at: str | None
    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CanonicalSet:
    """`skill-active-state.json`: the canonical active set of a scope (legacy single-skill form included)."""

    path: Path
    exists: bool
    data: dict[str, Any] | None = None
    error: str | None = None
    sha: str | None = None
    entries: tuple[CanonicalEntry, ...] = ()
    legacy: bool = False

    @property
    def members(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.skill for e in self.entries))

    @property
    def usable(self) -> bool:
        return self.exists and self.error is None


def _builders() -> tuple[Callable[..., ModeFile], Callable[..., CanonicalEntry], Callable[..., CanonicalSet]]:
    """Constructors of the three records a whole-tree read builds by the ten thousand, each a plain function
    setting the slots directly through their descriptors (half the cost of a frozen class's `__init__`,
    which goes through `object.__setattr__` for every field)."""
    new = object.__new__
    m_mode, m_sid, m_dir, m_name, m_data, m_error, m_digest, m_mtime, m_active, m_outcome = (
        ModeFile.__dict__[f].__set__ for f in ("mode", "session_id", "directory", "name", "data", "error", "digest",
                                               "mtime", "_active", "_outcome"))
    file_names = _FILE_NAMES

    def well_read(mode: str, session_id: str | None, directory: Path, name: str, data: dict[str, Any],
                  digest: bytes, mtime: float) -> ModeFile:
        """A file read without error, from its directory and its name in it: the same value as
        `ModeFile(mode, session_id, directory / name, data, None, sha, mtime, directory=directory)` with
        `digest` the bytes of `sha`, built without joining and splitting the path."""
        self = new(ModeFile)
        m_mode(self, mode)
        m_sid(self, session_id)
        m_dir(self, directory)
        m_name(self, file_names.get(name) or name)
        m_data(self, data)
        m_error(self, None)
        m_digest(self, digest)
        m_mtime(self, mtime)
        m_active(self, None)
        m_outcome(self, None)
        return self

    e_skill, e_phase, e_sid, e_at, e_raw = (CanonicalEntry.__dict__[f].__set__
                                            for f in ("skill", "phase", "session_id", "activated_at", "raw"))

    def canonical_entry(skill: str, phase: str | None, session_id: str | None, activated_at: str | None,
                        raw: dict[str, Any]) -> CanonicalEntry:
        """`CanonicalEntry(skill, phase, session_id, activated_at, raw)`."""
        self = new(CanonicalEntry)
        e_skill(self, skill)
        e_phase(self, phase)
        e_sid(self, session_id)
        e_at(self, activated_at)
        e_raw(self, raw)
        return self

    c_path, c_exists, c_data, c_error, c_sha, c_entries, c_legacy = (
        CanonicalSet.__dict__[f].__set__ for f in ("path", "exists", "data", "error", "sha", "entries", "legacy"))

    def canonical_set(path: Path, data: dict[str, Any], sha: str, entries: tuple[CanonicalEntry, ...],
                      legacy: bool) -> CanonicalSet:
        """`CanonicalSet(path, True, data, sha=sha, entries=entries, legacy=legacy)`: a set read without error."""
        self = new(CanonicalSet)
        c_path(self, path)
        c_exists(self, True)
        c_data(self, data)
        c_error(self, None)
        c_sha(self, sha)
        c_entries(self, entries)
        c_legacy(self, legacy)
        return self

    return well_read, canonical_entry, canonical_set


well_read, canonical_entry, canonical_set = _builders()


@dataclass(frozen=True)
class Scope:
    """Root (`session_id` None) or one session directory."""

    session_id: str | None
    dir: Path
    modes: dict[str, ModeFile] = field(default_factory=dict)
    canonical: CanonicalSet | None = None
    hud_state: dict[str, Any] | None = None
    errors: tuple[FileError, ...] = ()
    # Holds a symlink (or is reached through one): its content can change without an event in `dir`,
    # so an incremental refresh re-reads it every time instead of reusing it.
    linked: bool = field(default=False, compare=False, repr=False)

    @property
    def label(self) -> str:
        return "root" if self.session_id is None else f"session {self.session_id}"

    def active_modes(self) -> tuple[str, ...]:
        return tuple(m for m, f in sorted(self.modes.items()) if f.active)

    @cached_property
    def newest(self) -> float | None:
        """The newest modification time of its mode files (None without any); computed once per Scope."""
        return max((f.mtime for f in self.modes.values() if f.mtime is not None), default=None)


def scope_read(session_id: str | None, directory: Path, modes: dict[str, ModeFile], canonical: CanonicalSet | None,
               hud_state: dict[str, Any] | None, errors: tuple[FileError, ...], linked: bool,
               newest: float | None) -> Scope:
    """`Scope(session_id, directory, modes, canonical, hud_state, errors, linked)` as a reader builds it, with
    `newest` (what `Scope.newest` finds in `modes`) already known and kept where its first use would keep it.

    Stored attribute by attribute (not through `__dict__`, which would give every scope a dictionary of its
    own: a third more memory per scope than the class's shared layout)."""
    self = _new(Scope)
    _put(self, "session_id", session_id)
    _put(self, "dir", directory)
    _put(self, "modes", modes)
    _put(self, "canonical", canonical)
    _put(self, "hud_state", hud_state)
    _put(self, "errors", errors)
    _put(self, "linked", linked)
    _put(self, "newest", newest)
    return self


_new = object.__new__
_put = object.__setattr__


@dataclass(frozen=True)
class Member:
    """A mode as the authoritative scope sees it, with its health and the reason for it."""

    mode: str
    health: Health
    scope: str | None
    file: ModeFile | None
    entry: CanonicalEntry | None
    reason: str

    def as_json(self, root: Path) -> dict[str, Any]:
        f = self.file
        return {"mode": self.mode, "health": self.health, "scope": self.scope or "root",
                "phase": f.phase if f else None,
                "iteration": f.iteration if f else None, "max_iterations": f.max_iterations if f else None,
                "outcome": f.outcome.value if f else None,
                "path": f.rel_path(root) if f else None, "reason": self.reason}


def member(mode: str, health: Health, scope: str | None, file: ModeFile | None, entry: CanonicalEntry | None,
           reason: str) -> Member:
    """`Member(mode, health, scope, file, entry, reason)` at a third of the cost (the doctor builds members
    for every session; they are dropped once its findings are made)."""
    self = _new(Member)
    self.__dict__.update(mode=mode, health=health, scope=scope, file=file, entry=entry, reason=reason)
    return self


@dataclass(frozen=True)
class Snapshot:
    """Everything read in one pass. Nothing here raises; problems are in `errors`."""

    root: Path
    taken_at: float
    resolution: Resolution
    root_scope: Scope
    sessions: dict[str, Scope]
    members: tuple[Member, ...]
    errors: tuple[FileError, ...]
    # Kept so a refresh costs what changed, not what exists (derived from the fields above, not compared):
    # the newest mode-file write of any scope, the sessions holding a symlink or an error, and the
    # session listing the sessions were built from.
    mode_newest: float | None = field(default=None, compare=False, repr=False)
    linked: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    erring: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    listing: object = field(default=None, compare=False, repr=False)

    @property
    def session_id(self) -> str | None:
        return self.resolution.session_id

    @property
    def authoritative(self) -> Scope:
        sid = self.resolution.session_id
        if sid is None:
            return self.root_scope
        return self.sessions.get(sid) or Scope(sid, self.root_scope.dir / "sessions" / sid)

    def scope(self, session_id: str | None) -> Scope | None:
        return self.root_scope if session_id is None else self.sessions.get(session_id)

    def active_set(self) -> tuple[str, ...]:
        """The authoritative active set the policy decides against (active mode files in scope)."""
        return self.authoritative.active_modes()

    def live_members(self) -> tuple[Member, ...]:
        return tuple(m for m in self.members if m.health == "live")

    def error_for(self, path: Path) -> str | None:
        for err in self.errors:
            if err.path == path:
                return err.reason
        return None
