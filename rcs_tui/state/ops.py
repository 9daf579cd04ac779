"""State operations (read, write, clear, list-active, get-status) as plans over the transaction layer.

Each mutating operation first builds a `Plan` from one snapshot read (so `--dry-run` and the console's
confirmation show exactly what `apply` will do); `apply` then re-checks every file's digest under the lock.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core import policy, reconcile
from rcs_tui.core.lifecycle import is_active_doc
from rcs_tui.core.modes import (
    CANONICAL_FILE,
    INFRA_STATE_NAMES,
    NAME_RE,
    TRACKED_MODES,
    check_name,
    is_tracked,
    mode_from_filename,
)
from rcs_tui.core.words import plural
from rcs_tui.files.fsafe import Tree
from rcs_tui.files.io import JsonRead, dump_json, read_json, rel_of
from rcs_tui.files.layout import Layout
from rcs_tui.state.reader import read_scope_alone, read_snapshot
from rcs_tui.state.session import compatibility_scopes, resolve_session
from rcs_tui.state.snapshot import FileError, Scope, Snapshot
from rcs_tui.state.txn import FileChange, Plan, TxnError, apply, now_iso


class PolicyDenied(TxnError):
    """The transition policy denied an activation; nothing was changed."""

    error_kind = kinds.POLICY_DENIED


@dataclass(frozen=True)
class Operation:
    """A plan plus the JSON the command prints once it is applied.

    `extra` is journaled with the entry; `shown` only joins the preview (an undo's entry and file sizes)."""

    plan: Plan
    result: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    shown: dict[str, Any] = field(default_factory=dict)

    def preview(self, root: Path) -> dict[str, Any]:
        return {"dry_run": True, **self.plan.describe(root), **self.shown}

    def run(self, root: Path, actor: str | None = None, expect_plan: str | None = None) -> dict[str, Any]:
        """Apply the plan; a plan that changes nothing is not applied and leaves no journal entry.
        `expect_plan`: the fingerprint of the plan the operator confirmed; any other plan is refused.

        Journal bookkeeping is the exception: rolling back an interrupted action that had not changed any
        file yet changes nothing either, but its entry is what records the action as rolled back.
        """
        self.plan.confirm(root, expect_plan)
        if not self.plan.changes and not self.plan.appends and not self.extra:
            return dict(self.result)
        entry = apply(root, self.plan, actor=actor, extra=self.extra or None)
        return {**self.result, "journal_id": entry["id"]}


def check_mode(mode: object) -> str:
    name = check_name(mode, "mode name")
    if name in INFRA_STATE_NAMES:
        raise TxnError(f"{name!r} is an infrastructure file, not a workflow mode", kind=kinds.BAD_INPUT)
    return name


ROOT_SCOPE = "<root>"


class PlanReads:
    """The files plans read, each read once. Plans made to be shown together (the doctor's list of repairs)
    share one: a thousand repairs of one canonical set parse it once, and no plan lists the session
    directories. A plan about to be applied gets a fresh one, so it sees the files as they are now and reads
    only those it touches."""

    def __init__(self) -> None:
        self._targets: dict[Path, JsonRead] = {}
        self._scopes: dict[str | None, Scope | None] = {}
        self._skills: dict[Path, dict[str, list[Any]]] = {}
        self._shas: dict[Path, str | None] = {}
        self._snapshot: Snapshot | None = None
        self._layout: Layout | None = None
        self._plain: dict[tuple[str, ...], bool] = {}

    def layout(self, root: Path) -> Layout:
        """One `Layout` for the plans sharing these reads (its paths are joined once, not once per plan)."""
        if self._layout is None or (self._layout.root is not root and self._layout.root != root):
            self._layout = Layout(root)
        return self._layout

    def use(self, snapshot: Snapshot) -> None:
        """Take the scopes from `snapshot` (a whole-tree read just made) instead of reading them again."""
        self._snapshot = snapshot

    def target(self, layout: Layout, path: Path) -> JsonRead:
        """`path` read as the apply step reads it again (see `read_target`)."""
        read = self._targets.get(path)
        if read is None:
            read = self._targets[path] = Tree(layout.root).read_json(path)
        return read

    def known(self, layout: Layout, path: Path) -> tuple[dict[str, Any], str | None] | None:
        """A canonical set's parsed document and digest as the diagnosis read them, when that read is what
        the apply step's read would give: the set was read whole and clean, from a scope directory holding no
        symlink and not reached through one, under `.rcs/state` (and `sessions/`) that are themselves plain
        directories. Otherwise None, and the file is read again the way apply reads it. Showing ten
        thousand repairs then costs no second read of ten thousand files; the plan applied is still made
        from the files as they are then."""
        snap = self._snapshot
        if snap is None or path.name != CANONICAL_FILE:
            return None
        parent = os.path.dirname(path)  # compared as text: a doctor shows thousands of these plans
        chain: tuple[str, ...]
        if parent == str(layout.state):
            sid, chain = None, (".rcs", "state")
        elif os.path.dirname(parent) == str(layout.sessions):
            sid, chain = os.path.basename(parent), (".rcs", "state", "sessions")
        else:
            return None
        scope = snap.scope(sid)
        canon = scope.canonical if scope is not None else None
        if scope is None or scope.linked or canon is None or not canon.usable or canon.path != path \
                or not isinstance(canon.data, dict) or not self._plain_chain(layout, chain):
            return None
        return canon.data, canon.sha

    def _plain_chain(self, layout: Layout, chain: tuple[str, ...]) -> bool:
        """Are these directories under the root reached without any symlink (the way apply walks them)?"""
        if chain not in self._plain:
            try:
                with Tree(layout.root).dir(chain):
                    self._plain[chain] = True
            except OSError:
                self._plain[chain] = False
        return self._plain[chain]

    def sha(self, path: Path, read: JsonRead) -> str | None:
        """The digest of `path` as read here (computed once: a large canonical set is hashed once, not once
        per plan)."""
        if path not in self._shas:
            self._shas[path] = read.sha
        return self._shas[path]

    def scope(self, layout: Layout, sid: str | None) -> Scope | None:
        """One scope as the reader sees it (root, or one session directory)."""
        if self._snapshot is not None:
            return self._snapshot.scope(sid)
        if sid not in self._scopes:
            self._scopes[sid] = read_scope_alone(layout, sid)
        return self._scopes[sid]

    def has_session(self, layout: Layout, sid: str) -> bool:
        """Is `sid` a session directory: as the shared read found it when there is one (a plan made to be
        shown), else as it is now (a plan about to be applied is made without one)."""
        if self._snapshot is not None and sid in self._snapshot.sessions:
            return True
        return os.path.isdir(layout.sessions / sid)

    def removed(self, path: Path, doc: dict[str, Any] | None, modes: list[str], sid: str | None) -> list[str]:
        """The entries dropping `modes` from the canonical set at `path` (as read here) removes."""
        index = self._skills.get(path)
        if index is None:
            index = self._skills[path] = reconcile.entries_by_skill(doc)
        return reconcile.removed_skills(doc, modes, sid, index)


def _scope_session(layout: Layout, session_id: str | None) -> str | None:
    """The session a command acts on: `ROOT_SCOPE` forces root, a named session is itself (checked), None
    resolves the current session."""
    if session_id == ROOT_SCOPE:
        return None
    if session_id is not None:
        return check_name(session_id, "session id")
    return resolve_session(layout, session_id).session_id


def _listing(directory: Path) -> list[str]:
    try:
        return sorted(os.listdir(directory))
    except OSError:
        return []


def require_session(layout: Layout, session_id: str, reads: PlanReads | None = None) -> str:
    """An explicitly named session must exist: a typo is an error, never a new directory."""
    check_name(session_id, "session id")
    if not (reads or PlanReads()).has_session(layout, session_id):
        known = [n for n in _listing(layout.sessions) if NAME_RE.fullmatch(n) and os.path.isdir(layout.sessions / n)]
        shown = ", ".join(known[:20]) + (f", … ({len(known)} in all)" if len(known) > 20 else "")
        raise TxnError(f"no session {session_id!r}: {rel_of(layout.root, layout.sessions)}/{session_id}/ does not "
                       f"exist (known sessions: {shown or 'none'}); nothing was changed", kind=kinds.NOT_FOUND)
    return session_id


def _mode_present(layout: Layout, mode: str) -> bool:
    """Is there a `<mode>-state.json`, or a canonical entry naming the mode, in root or any session?"""
    filename = f"{mode}-state.json"
    for sid in (None, *_listing(layout.sessions)):
        if sid is not None and not NAME_RE.fullmatch(sid):
            continue
        if os.path.lexists(layout.scope_dir(sid) / filename):
            return True
        canon = read_json(layout.canonical_file(sid), within=layout.rcs)
        skills = canon.data.get("active_skills") if canon.ok else None
        if isinstance(skills, list) and any(isinstance(e, dict) and e.get("skill") == mode for e in skills):
            return True
        if canon.ok and canon.data.get("skill") == mode:
            return True
    return False


def require_known_mode(layout: Layout, mode: str) -> None:
    """A mode that is neither tracked nor present anywhere in the tree is a typo: name the known modes."""
    if is_tracked(mode) or _mode_present(layout, mode):
        return
    found = {name[: -len("-state.json")] for sid in (None, *_listing(layout.sessions))
             if sid is None or NAME_RE.fullmatch(sid)
             for name in _listing(layout.scope_dir(sid)) if name.endswith("-state.json")}
    known = sorted(set(TRACKED_MODES) | {m for m in found if NAME_RE.fullmatch(m) and m not in INFRA_STATE_NAMES})
    raise TxnError(f"unknown mode {mode!r}: not a tracked mode and no {mode}-state.json or canonical entry "
                   f"anywhere in .rcs/state; known modes: {', '.join(known)}; nothing was changed",
                   kind=kinds.NOT_FOUND)


def _refuse_unread(read: JsonRead, root: Path) -> None:
    """A file the reader refused (FIFO, device, too large, link out of the tree) is never planned on."""
    if read.refused:
        raise TxnError(f"{rel_of(root, read.path)}: {read.error}; refusing to plan a change to a file that "
                       "could not be read (nothing was changed)")


def read_target(layout: Layout, path: Path, reads: PlanReads | None = None) -> JsonRead:
    """A file a plan will change, read the way the apply step reads it again (`Tree.read_json`: no link at
    any step, regular files only, the one size cap), so a file apply would refuse is refused while planning,
    with its reason, instead of surfacing later as "changed underneath"."""
    return (reads or PlanReads()).target(layout, path)


def _current(layout: Layout, path: Path, reads: PlanReads | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """Parsed doc and digest of a file we are about to change; refuses files we cannot read or parse."""
    reads = reads or PlanReads()
    known = reads.known(layout, path)
    if known is not None:
        return known
    read = read_target(layout, path, reads)
    if not read.exists:
        return None, None
    _refuse_unread(read, layout.root)
    if read.error:
        raise TxnError(f"{rel_of(layout.root, path)}: {read.error}; fix or clear it first (nothing was changed)")
    return read.data, reads.sha(path, read)


# ---------------------------------------------------------------- reads

def _read_scope(sid: str | None, resolved: str | None) -> dict[str, Any]:
    """Which scope answered a compatibility read, for the JSON."""
    return {"scope": "root" if sid is None else "session", "session_id": sid,
            "fallback": sid is None and resolved is not None}


def read_mode(root: Path, mode: str, session_id: str | None = None) -> dict[str, Any]:
    """The mode file as stored, from the first compatibility scope holding it (`compatibility_scopes`).

    The file's own fields come back untouched; `_scope` says where it was read (`fallback: true`
    when a session was resolved but root answered). A missing explicit session is not an error here.
    """
    layout = Layout(root)
    mode = check_mode(mode)
    resolved: str | None
    scopes: tuple[str | None, ...]
    if session_id == ROOT_SCOPE:
        resolved, scopes = None, (None,)
    else:
        resolution = resolve_session(layout, session_id)
        resolved, scopes = resolution.session_id, compatibility_scopes(layout, resolution)
    for sid in scopes:
        path = layout.mode_file(mode, sid)
        read = read_json(path, within=layout.rcs)
        if not read.exists:
            continue
        if read.error:
            raise TxnError(f"{rel_of(layout.root, path)}: {read.error}")
        return {**read.data, "_scope": {**_read_scope(sid, resolved), "path": str(path)}}
    return {"exists": False, "mode": mode,
            "_scope": {"searched": [str(layout.mode_file(mode, sid)) for sid in scopes]}}


def plan_drop_entry(root: Path, mode: str, session_id: str | None, reads: PlanReads | None = None) -> Operation:
    """Remove a stale canonical entry only; the (inactive) mode file keeps its record. `reads`: see `PlanReads`."""
    layout = Layout(root) if reads is None else reads.layout(root)
    reads = reads or PlanReads()
    mode = check_mode(mode)
    if session_id not in (None, ROOT_SCOPE):
        require_session(layout, session_id, reads)
    sid = _scope_session(layout, session_id)
    changes: list[FileChange] = []
    removed = _canonical_drop(layout, sid, [mode], now_iso(), changes, reads=reads)
    plan = Plan(f"drop stale canonical entry {mode}", tuple(changes),
                summary={"mode": mode, "scope": sid or "root", "canonical_removed": removed,
                         "active_after": _active_after(layout, sid, changes, reads)})
    return Operation(plan, {"dropped": bool(removed), "mode": mode})


def plan_delete_pointer(root: Path, reads: PlanReads | None = None) -> Operation:
    """Remove a stale-dead `session.json` so nothing resolves to a dead session."""
    layout = Layout(root)
    read = read_target(layout, layout.session_pointer, reads)
    _refuse_unread(read, layout.root)
    changes = (FileChange(layout.session_pointer, "delete", expect=read.sha, why="stale-dead session pointer"),) \
        if read.exists else ()
    return Operation(Plan("remove stale-dead session.json", changes, summary={}), {"removed": read.exists})


UNREAD_REASONS = ("cannot ", "unreadable")  # how the readers word a file they could not open, stat or read


def unread_scopes(snapshot: Snapshot) -> list[FileError]:
    """The read errors that leave the answering scopes (root, the resolved session) unknown: a directory
    that could not be listed or a canonical set that could not be read. An answer built over them would be
    empty, and an empty answer reads as "nothing is active"; a mode file that could not be read is named
    by the answers themselves."""
    layout = Layout(snapshot.root)
    scopes = {None, snapshot.resolution.session_id}
    dirs = {layout.state, layout.sessions} | {layout.scope_dir(s) for s in scopes}
    sets = {layout.canonical_file(s) for s in scopes}
    # a canonical set that is there but damaged is read as the runtime reads it; one that could not be
    # opened or read at all (the reader's words for a failed system call) is unknown
    return [e for e in snapshot.errors
            if e.path in dirs or (e.path in sets and e.reason.startswith(UNREAD_REASONS))]


def list_active(snapshot: Snapshot) -> dict[str, Any]:
    return {"active_modes": list(snapshot.active_set())}


def get_status(snapshot: Snapshot, mode: str | None = None) -> dict[str, Any]:
    """Every mode file (or one) of the compatibility scopes; per mode, the first scope holding it wins.

    Each status says which scope answered it (`scope`, `session_id`, `fallback`).
    """
    layout = Layout(snapshot.root)
    resolved = snapshot.resolution.session_id
    statuses: dict[str, Any] = {}
    for sid in compatibility_scopes(layout, snapshot.resolution):
        scope = snapshot.scope(sid)
        for name, f in sorted(scope.modes.items()) if scope is not None else ():
            if (mode and name != mode) or name in statuses:
                continue
            statuses[name] = {"active": f.active, "phase": f.phase, "path": str(f.path), "data": f.data,
                              **_read_scope(sid, resolved),
                              **({"error": f.error} if f.error else {})}
    return {"statuses": dict(sorted(statuses.items()))}


# ---------------------------------------------------------------- clear

def plan_clear(root: Path, mode: str, session_id: str | None = None, all_sessions: bool = False,
               reads: PlanReads | None = None) -> Operation:
    """Clear one member; only that member leaves the canonical set.

    A named session must exist; a mode nobody knows is an error; a clear with nothing to remove
    is a plan without changes (`cleared: false`), which `run` does not journal. `reads`: see `PlanReads`.
    """
    reads = reads or PlanReads()
    layout = reads.layout(root)
    mode = check_mode(mode)
    if session_id not in (None, ROOT_SCOPE):
        require_session(layout, session_id, reads)
    now = now_iso()
    if all_sessions:
        return _plan_clear_all(layout, mode, now)
    sid = _scope_session(layout, session_id)
    changes: list[FileChange] = []
    path = layout.mode_file(mode, sid)
    root_file = layout.mode_file(mode, None)
    read = read_target(layout, path, reads)
    _refuse_unread(read, layout.root)
    if sid is not None and os.path.lexists(root_file):
        if not _is_tombstone(read):
            doc = reconcile.tombstone(mode, sid, now)
            changes.append(FileChange(path, "write", dump_json(doc), read.sha, "tombstone (root copy exists)"))
    elif read.exists:
        changes.append(FileChange(path, "delete", expect=read.sha, why="mode file deleted"))
    removed = _canonical_drop(layout, sid, [mode], now, changes, reads=reads)
    where = sid or "root"
    if not changes:
        require_known_mode(layout, mode)
        message = f"nothing to clear: {mode} has no mode file and no canonical entry in {where}"
        if sid is not None and os.path.lexists(root_file):
            message = f"nothing to clear: {mode} is already cleared (tombstoned) in {where}"
        plan = Plan(f"state clear {mode}", (), summary={"mode": mode, "scope": where, "canonical_removed": [],
                                                        "message": message})
        return Operation(plan, {"cleared": False, "mode": mode, "path": str(path), "message": message})
    after = _active_after(layout, sid, changes, reads)
    plan = Plan(f"state clear {mode}", tuple(changes),
                summary={"mode": mode, "scope": where, "canonical_removed": removed,
                         "active_after": after, "scopes": scope_changes(layout, changes, reads)})
    return Operation(plan, {"cleared": True, "mode": mode, "path": str(path)})


def _is_tombstone(read: JsonRead) -> bool:
    return reconcile.is_tombstone(read.data if read.ok else None)


def _canonical_drop(layout: Layout, sid: str | None, modes: list[str], now: str,
                    changes: list[FileChange], delete_if_empty: bool = False,
                    reads: PlanReads | None = None) -> list[str]:
    """Plan dropping `modes` from the scope's canonical set. The new bytes are built only when the plan is
    applied: many plans over one large set are shown at the cost of finding each one's entries."""
    reads = reads or PlanReads()
    cpath = layout.canonical_file(sid)
    doc, sha = _current(layout, cpath, reads)
    removed = reads.removed(cpath, doc, modes, sid)
    if not removed:
        return []
    if delete_if_empty:
        new, _ = reconcile.canonical_without(doc, modes, sid, now)
        if new is not None and not reconcile.live_entries(new.get("active_skills", [])):
            changes.append(FileChange(cpath, "delete", expect=sha,
                                      why=f"canonical set emptied ({', '.join(removed)})"))
            return [f"{sid or 'root'}:{m}" for m in removed]

    def render() -> bytes:
        return dump_json(reconcile.canonical_without(doc, modes, sid, now)[0])

    changes.append(FileChange(cpath, "write", None, sha, f"canonical entry removed: {', '.join(removed)}",
                              render=render))
    return [f"{sid or 'root'}:{m}" for m in removed]


def _plan_clear_all(layout: Layout, mode: str, now: str) -> Operation:
    snap = read_snapshot(layout.root)
    changes: list[FileChange] = []
    paths: list[str] = []
    scopes = [None, *sorted(snap.sessions)]
    for sid in scopes:
        path = layout.mode_file(mode, sid)
        read = read_target(layout, path)
        _refuse_unread(read, layout.root)
        if read.exists:
            changes.append(FileChange(path, "delete", expect=read.sha, why="mode file deleted (all sessions)"))
            paths.append(str(path))
    removed: list[str] = []
    for sid in scopes:
        removed += _canonical_drop(layout, sid, [mode], now, changes, delete_if_empty=sid is not None)
    if not changes:
        require_known_mode(layout, mode)
        message = f"nothing to clear: {mode} has no mode file and no canonical entry in root or any session"
        plan = Plan(f"state clear {mode} --all-sessions", (),
                    summary={"mode": mode, "scope": "all_sessions", "canonical_removed": [], "message": message})
        return Operation(plan, {"cleared": False, "mode": mode, "all_sessions": True, "removed": 0, "paths": [],
                                "message": message})
    touched_sessions = sorted({c.path.parent.name for c in changes if c.path.parent.parent == layout.sessions})
    # One sentence for the preview and the result alike: it holds before the clear and after it.
    warning = (f"clearing {mode} in root and {plural(len(touched_sessions), 'session')}: agents still running in those "
               "sessions may write it again")
    plan = Plan(f"state clear {mode} --all-sessions", tuple(changes),
                summary={"mode": mode, "scope": "all_sessions", "canonical_removed": removed,
                         "scopes": scope_changes(layout, changes), "warning": warning})
    return Operation(plan, {"cleared": True, "mode": mode, "all_sessions": True, "removed": len(paths),
                            "paths": paths, "warning": warning})


def scope_changes(layout: Layout, changes: list[FileChange], reads: PlanReads | None = None) -> list[dict[str, Any]]:
    """Every scope the plan touches with its active set before and after, so a preview shows each one
    (an all-sessions clear changes root and each session differently; none of them is "the" set)."""
    touched: list[str | None] = []
    for change in changes:
        sid = change.path.parent.name if change.path.parent.parent == layout.sessions else None
        if sid not in touched:
            touched.append(sid)
    reads = reads or PlanReads()
    out = []
    for sid in sorted(touched, key=lambda s: (s is not None, s or "")):
        scope = reads.scope(layout, sid)
        out.append({"scope": sid or "root", "before": list(scope.active_modes()) if scope else [],
                    "after": _active_after(layout, sid, changes, reads)})
    return out


def _active_after(layout: Layout, sid: str | None, changes: list[FileChange],
                  reads: PlanReads | None = None) -> list[str]:
    """The scope's active modes once `changes` are applied (computed from the planned bytes of its mode
    files; the canonical set does not decide this, so its new bytes are not built here)."""
    scope = (reads or PlanReads()).scope(layout, sid)
    if not any(mode_from_filename(c.path.name) for c in changes):  # no mode file changes: as read
        return sorted(mode for mode, f in (scope.modes if scope else {}).items() if f.active)
    scope_dir = layout.scope_dir(sid)
    pending = {c.path: c for c in changes}
    active = []
    for mode, f in sorted((scope.modes if scope else {}).items()):
        change = pending.get(f.path)
        if change is None:
            if f.active:
                active.append(mode)
        elif change.action == "write":
            if is_active_doc(json.loads(change.data() or b"{}")):
                active.append(mode)
    for path, change in pending.items():
        if change.action == "write" and path.parent == scope_dir and path.name.endswith("-state.json"):
            mode = path.name[: -len("-state.json")]
            if is_tracked(mode) and mode not in active and (scope is None or mode not in scope.modes):
                if is_active_doc(json.loads(change.data() or b"{}")):
                    active.append(mode)
    return sorted(active)


# ---------------------------------------------------------------- write

WRITE_RESERVED = {"mode", "session_id", "all_sessions", "workingDirectory"}


def plan_write(root: Path, mode: str, payload: dict[str, Any], session_id: str | None = None,
               source: str = "rcs-tui") -> Operation:
    """Shallow-merge `payload` into a mode file; an activation goes through the transition policy."""
    layout = Layout(root)
    mode = check_mode(mode)
    if session_id not in (None, ROOT_SCOPE):
        check_name(session_id, "session id")
    sid = _scope_session(layout, session_id)
    now = now_iso()
    path = layout.mode_file(mode, sid)
    doc, sha = _current(layout, path)
    fields = {k: v for k, v in payload.items() if k not in WRITE_RESERVED and k != "state"}
    if isinstance(payload.get("state"), dict):
        fields.update(payload["state"])
    merged = {**(doc or {}), **fields}
    snap = read_snapshot(root, sid, all_sessions=False)
    scope = snap.scope(sid)
    active = scope.active_modes() if scope else ()
    activating = merged.get("active") is True and mode not in active and is_tracked(mode)
    changes: list[FileChange] = []
    result: dict[str, Any] = {"success": True, "mode": mode, "path": str(path)}
    decision = None
    if activating:
        data = {m: f.data for m, f in (scope.modes.items() if scope else [])}
        decision = policy.decide(mode, active, data)
        if not decision.allowed:
            raise PolicyDenied(decision.message)
        for src in decision.sources:
            spath = layout.mode_file(src, sid)
            sdoc, ssha = _current(layout, spath)
            changes.append(FileChange(spath, "write", dump_json(reconcile.audit_complete(sdoc, src, mode, now, source)),
                                      ssha, f"auto-completed ({decision.message})"))
            if sid is not None:
                rpath = layout.mode_file(src, None)
                rdoc, rsha = _current(layout, rpath)
                if rdoc is not None and rdoc.get("active") is True:
                    changes.append(FileChange(rpath, "write",
                                              dump_json(reconcile.audit_complete(rdoc, src, mode, now, source)),
                                              rsha, "stale root copy terminalized so it cannot resurrect"))
                    _canonical_drop(layout, None, [src], now, changes)
        if decision.kind == "auto-complete":
            merged["transition_message"] = decision.message
            result["transition"] = decision.message
    cpath = layout.canonical_file(sid)
    cdoc, csha = _current(layout, cpath)
    phase = merged.get("current_phase") if isinstance(merged.get("current_phase"), str) else None
    if activating and decision is not None:
        new_c = reconcile.canonical_with(cdoc, mode, phase, sid, now, decision.sources, source)
        changes.append(FileChange(cpath, "write", dump_json(new_c), csha, f"canonical set: {decision.kind} {mode}"))
    elif merged.get("active") is False and mode in (snap.authoritative.canonical.members
                                                    if snap.authoritative.canonical else ()):
        rest, _ = reconcile.canonical_without(cdoc, [mode], sid, now)
        if rest is not None:
            changes.append(FileChange(cpath, "write", dump_json(rest), csha, f"canonical entry removed: {mode}"))
    summary: dict[str, Any] = {"mode": mode, "scope": sid or "root",
                               "decision": decision.as_json() if decision else None,
                               "active_after": list(decision.active_after) if decision and decision.allowed
                               else sorted(set(active) - ({mode} if merged.get("active") is False else set()))}
    if doc is not None and merged == doc and not changes:
        # Every given field already holds its value: rewriting the file would only reformat the runtime's
        # bytes and journal an action that changed nothing, so nothing is written and the answer says so.
        summary["message"] = f"nothing to write: {rel_of(layout.root, path)} already holds every given field"
        return Operation(Plan(f"state write {mode}", (), summary=summary),
                         {**result, "changed": False, "message": summary["message"]})
    result["changed"] = True
    changes.append(FileChange(path, "write", dump_json(merged), sha, "merged write"))
    return Operation(Plan(f"state write {mode}", tuple(changes), summary=summary), result)
