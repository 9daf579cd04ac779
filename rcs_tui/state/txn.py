"""Transactions: the only way rcs-tui writes state.

lock → stage new bytes beside each file (fsynced) → re-read every file and compare with the plan →
write-ahead journal entry (every before-image, fsynced and read back) → per file compare-and-swap →
directory fsyncs → transcript appends → mark the entry done. Any failure after the journal entry rolls
the applied files back from the held before-images and marks the entry aborted; if even that fails the
entry stays pending (shown as interrupted) and the error names the files and says to run the doctor.
Every path is reached through `fsafe.Tree`, so nothing outside `.rcs/state|tasks|logs` is ever touched.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import getpass
import hashlib
import json
import os
import socket
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.times import iso
from rcs_tui.files import fsafe
from rcs_tui.files.fsafe import Refused, Tree
from rcs_tui.files.io import MAX_STATE_BYTES, digest, loads_strict, rel_of
from rcs_tui.state.journal_format import line_problem
from rcs_tui.state.lock import LockBusy, store_lock

JOURNAL_REL = Path(".rcs/logs/rcs-tui-journal.jsonl")
LOCK_REL = Path(".rcs/logs/rcs-tui.lock")
JOURNAL_ROTATE_BYTES = 16 * 1024 * 1024
JOURNAL_KEEP = 3  # rotated generations kept: rcs-tui-journal.1.jsonl … .3.jsonl
STATE_AT = 10  # byte offset of the state value in an entry line: {"state": "pending", …
MARKS = {"pending": b'"pending"', "done": b'"done"   ', "aborted": b'"aborted"'}


class TxnError(Exception):
    """A write was refused or failed; the message is meant for the operator and says what changed.

    `error_kind` (`rcs_tui.core.error_kinds`) is what other processes read; a raise site that knows better
    than its class (nothing by that name, the lock taken) passes `kind`."""

    error_kind = kinds.REFUSED

    def __init__(self, message: str = "", kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.error_kind = kind


class ChangedUnderneath(TxnError):
    """A file differs from the bytes the decision was made on."""

    error_kind = kinds.REFUSED_CHANGED


PLAN_CHANGED = "the files changed since you confirmed; nothing was written; review the new plan"


class PlanChanged(TxnError):
    """The plan made now is not the one the operator confirmed (its fingerprint differs); nothing was written."""

    error_kind = kinds.PLAN_CHANGED


@dataclass(frozen=True)
class FileChange:
    """One file to write or delete, with the digest it must still have (None = must be absent)."""

    path: Path
    action: Literal["write", "delete"]
    content: bytes | None = None
    expect: str | None = None
    why: str = ""
    render: Callable[[], bytes] | None = field(default=None, compare=False, repr=False)

    def data(self) -> bytes | None:
        """The bytes a write puts in place: `content`, else built by `render` on first need. A plan made only
        to be shown (the doctor's list of repairs) never builds them; its description and fingerprint do not
        depend on them."""
        if self.content is None and self.render is not None:
            object.__setattr__(self, "content", self.render())
        return self.content

    def describe(self, root: Path) -> dict[str, Any]:
        return {"path": rel_of(root, self.path), "action": self.action, "why": self.why}


@dataclass(frozen=True)
class Append:
    """A line appended to an append-only log (a task transcript); undo removes exactly that line."""

    path: Path
    line: str
    why: str = ""


@dataclass(frozen=True)
class Plan:
    """What an operation will do. Printed by --dry-run and by the console's confirmation."""

    action: str
    changes: tuple[FileChange, ...] = ()
    appends: tuple[Append, ...] = ()
    summary: dict[str, Any] = field(default_factory=dict)
    # Asked again under the store lock, before anything is journaled: why the plan no longer holds (None: it
    # does). For what no file's digest shows: an undo that another undo recorded meanwhile.
    recheck: Callable[[], str | None] | None = field(default=None, compare=False, repr=False)

    def describe(self, root: Path) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action,
                               "changes": [c.describe(root) for c in self.changes]}
        if self.appends:
            out["appends"] = [{"path": rel_of(root, a.path), "line": a.line, "why": a.why}
                              for a in self.appends]
        out.update(self.summary)
        out["plan_fingerprint"] = self.fingerprint(root)
        return out

    def fingerprint(self, root: Path, rewound: Mapping[Path, tuple[str | None, str | None]] | None = None) -> str:
        """A digest of what an operator confirms: the action, each file's path, action, reason and the
        digest it must still have when written (its before-image), each append's file and reason, and the
        summary (the active set after, the scopes touched…). Planned again from the same files for the
        same request it is the same; the after-images follow from those, differing only in the time and
        actor they record, which is why they are not part of it.

        `rewound`: files that earlier plans of the same confirmed batch wrote (path → (the digest they
        wrote, the digest before the batch)). A file that still holds what the batch wrote counts as the
        bytes the operator saw, so the second repair of one file is recognised as the one confirmed."""
        def expected(c: FileChange) -> str | None:
            wrote, before = (rewound or {}).get(c.path, (None, None))
            return before if rewound and c.path in rewound and c.expect == wrote else c.expect

        body = {"action": self.action,
                "changes": [[rel_of(root, c.path), c.action, expected(c), c.why] for c in self.changes],
                "appends": [[rel_of(root, a.path), a.why] for a in self.appends],
                "summary": self.summary}
        raw = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
        return "sha256:" + hashlib.sha256(raw).hexdigest()[:32]

    def confirm(self, root: Path, expected: str | None) -> None:
        """Refuse (PlanChanged) unless this is the plan whose fingerprint the operator confirmed."""
        if expected is not None and self.fingerprint(root) != expected:
            raise PlanChanged(PLAN_CHANGED)


def now_iso() -> str:
    """UTC timestamp with milliseconds and `Z`, as the runtime writes them."""
    return iso(time.time(), ms=True)


def default_actor(via: str = "cli") -> str:
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no passwd entry in some containers
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()} ({via}, pid {os.getpid()})"


_ERRNO_WORDS = {errno.ENOSPC: "disk full", errno.EFBIG: "file size limit reached", errno.EROFS: "read-only file system",
                errno.EACCES: "permission denied", errno.EPERM: "operation not permitted (immutable file?)",
                errno.EIO: "I/O error", errno.EDQUOT: "disk quota exceeded"}


def explain(exc: OSError) -> str:
    """An OS error in operator words: what failed, on which file, and the errno name."""
    if isinstance(exc, Refused):
        return str(exc)
    name = errno.errorcode.get(exc.errno or 0, "error")
    words = _ERRNO_WORDS.get(exc.errno or 0, exc.strerror or str(exc))
    where = f" on {exc.filename}" if exc.filename else ""
    return f"{words} ({name}){where}"


def strict_json(rel: str, content: bytes) -> None:
    """Refuse to write a `.json` file the runtime could not parse (NaN/Infinity, invalid JSON), or one larger
    than a state file may be read (every later read, clear and undo of it would be refused: a file written
    but lost)."""
    if not rel.endswith(".json"):
        return
    if len(content) > MAX_STATE_BYTES:
        raise TxnError(f"refusing to write {rel}: {len(content):,} bytes, more than the {MAX_STATE_BYTES:,} a state"
                       " file may hold (it could not be read, cleared or undone afterwards); nothing was changed")
    try:
        loads_strict(content)
    except (ValueError, RecursionError) as exc:
        raise TxnError(f"refusing to write {rel}: not strict JSON ({str(exc)[:100]}); nothing was changed") from None


def _journal_line(entry: dict[str, Any]) -> bytes:
    rest = {k: v for k, v in entry.items() if k != "state"}
    body = json.dumps(rest, ensure_ascii=False, sort_keys=True, allow_nan=False)
    return ('{"state": "pending", ' + body[1:] + "\n").encode("utf-8")


def rotate(tree: Tree, limit: int | None = None) -> None:
    """Shift a journal over `limit` bytes to `.1` (and older generations down); the oldest is dropped."""
    st = tree.lstat(str(JOURNAL_REL))
    if st is None or st.st_size < (JOURNAL_ROTATE_BYTES if limit is None else limit):
        return
    with tree.parent(str(JOURNAL_REL)) as (dfd, _name):
        for gen in range(JOURNAL_KEEP, 0, -1):
            src = rotated_name(gen - 1)
            fsafe.rename_within(dfd, src, rotated_name(gen))
        fsafe.fsync_fd(dfd)


def rotated_name(gen: int) -> str:
    """File name of journal generation `gen` (0 = current)."""
    return JOURNAL_REL.name if gen == 0 else f"{JOURNAL_REL.stem}.{gen}{JOURNAL_REL.suffix}"


def write_ahead(tree: Tree, line: bytes) -> int:
    """Append the entry, fsync it and read it back; returns its offset. On failure nothing remains of it."""
    rel = str(JOURNAL_REL)
    try:
        begin, written = tree.append(rel, line)
        start = begin + len(written) - len(line)
        with tree.parent(rel) as (dfd, name):
            fd = fsafe.open_leaf(dfd, name, os.O_RDWR, rel)
            try:
                back = os.pread(fd, len(line), start)
                if back != line:  # cut it off again: left there, it would read as an interrupted action
                    os.ftruncate(fd, begin)
                    os.fsync(fd)
            finally:
                os.close(fd)
    except OSError as exc:
        raise TxnError(f"could not write the journal entry before changing anything: {explain(exc)}; "
                       "nothing was changed") from None
    if back != line:
        raise TxnError(f"the journal entry did not read back as written ({rel}); nothing was changed")
    return start


def _is_entry(found: bytes, line: bytes) -> bool:
    """Are `found` the bytes of the entry written as `line`, in any of its states? (A "done" mark whose sync
    failed is rolled back and marked again: the entry is still ours then.)"""
    end = STATE_AT + len(MARKS["pending"])
    return (len(found) == len(line) and found[:STATE_AT] == line[:STATE_AT] and found[end:] == line[end:]
            and found[STATE_AT:end] in MARKS.values())


def mark(tree: Tree, start: int, state: str, line: bytes) -> None:
    """Overwrite the entry's state in place (same length, no new space needed, so a full disk cannot stop it).

    Only when the bytes at `start` are still this entry as written (`line`, in any state): if another process
    rotated, truncated or replaced the journal meanwhile, whatever now sits at that offset is not ours to
    change, and an OSError says so instead.
    """
    rel = str(JOURNAL_REL)
    with tree.parent(rel) as (dfd, name):
        fd = fsafe.open_leaf(dfd, name, os.O_RDWR, rel)
        try:
            if not _is_entry(os.pread(fd, len(line), start), line):
                raise OSError(errno.ESTALE, "the journal was rotated, truncated or replaced by another process "
                              "while the entry was open", rel)
            if os.pwrite(fd, MARKS[state], start + STATE_AT) != len(MARKS[state]):
                raise OSError(errno.EIO, "short write of the journal state", rel)
            os.fsync(fd)
        finally:
            os.close(fd)


@dataclass
class _Step:
    """One file of a plan while it is applied: where it is, what it held, what we put there."""

    change: FileChange
    rel: str
    before: bytes | None
    dfd: int
    name: str
    tmp: str | None = None
    applied: bool = False


def _read_before(tree: Tree, rel: str) -> bytes | None:
    try:
        return tree.read(rel, fsafe.max_bytes_for(rel))
    except Refused as exc:
        raise ChangedUnderneath(f"{exc}; nothing was changed") from None
    except IsADirectoryError:
        raise ChangedUnderneath(f"{rel} is a directory; nothing was changed") from None


def _changed(rel: str, expect: str | None, found: str | None) -> ChangedUnderneath:
    state = "appeared" if expect is None else ("was removed" if found is None else "changed")
    return ChangedUnderneath(f"{rel} {state} underneath since it was read; re-read and try again "
                             "(nothing was changed)")


def _swap(step: _Step) -> None:
    try:
        _swap_step(step)
    except Refused:
        raise
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, step.rel) from None


def _swap_step(step: _Step) -> None:
    change = step.change
    if change.action == "write":
        assert step.tmp is not None
        tmp, step.tmp = step.tmp, None
        result = fsafe.swap_in(step.dfd, step.name, tmp, change.expect, step.rel)
    elif change.expect is None:
        return  # deleting what is already absent: nothing to do
    else:
        result = fsafe.remove_if(step.dfd, step.name, change.expect, step.rel)
    if not result.applied:
        raise _changed(step.rel, change.expect, result.found)
    step.applied = True


def _undo_step(step: _Step) -> bool:
    """Put a step's before-image back, only over our own bytes. False: the runtime has rewritten it since."""
    ours = digest(step.change.data() or b"") if step.change.action == "write" else None
    if step.before is None:
        return fsafe.remove_if(step.dfd, step.name, ours, step.rel).applied if ours else True
    tmp = fsafe.stage(step.dfd, step.name, step.before, fsafe.mode_of(step.dfd, step.name))
    return fsafe.swap_in(step.dfd, step.name, tmp, ours, step.rel).applied


def _undo_append(tree: Tree, rel: str, size_before: int, written: bytes) -> None:
    """Cut our line off the end of a transcript again (only if nothing was appended after it)."""
    with tree.parent(rel) as (dfd, name):
        fd = fsafe.open_leaf(dfd, name, os.O_WRONLY, rel)
        try:
            if os.fstat(fd).st_size == size_before + len(written):
                os.ftruncate(fd, size_before)
                os.fsync(fd)
        finally:
            os.close(fd)


def _failure(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return explain(exc)
    return str(exc)


_committed: list[tuple[int, str]] = []  # (number, journal id) of the last few actions this process applied
COMMITTED_KEPT = 16


def commits() -> int:
    """How many actions this process has applied (a command notes it when it starts)."""
    return _committed[-1][0] if _committed else 0


def committed(since: int = 0) -> list[str]:
    """The journal ids of the actions this process applied after the first `since` (the last few): an error
    after one of them (its result could not be printed, a later step failed) must say the change was made
    all the same."""
    return [entry_id for number, entry_id in _committed if number > since]


def apply(root: Path, plan: Plan, *, actor: str | None = None, extra: dict[str, Any] | None = None) -> dict:
    """Apply a plan under the store lock and journal it. Returns the journal entry."""
    entry = _apply(root, plan, actor=actor, extra=extra)
    _committed.append((commits() + 1, entry["id"]))
    del _committed[:-COMMITTED_KEPT]
    return entry


def _apply(root: Path, plan: Plan, *, actor: str | None, extra: dict[str, Any] | None) -> dict:
    tree = Tree(root)
    try:
        rels = [rel_of(root, c.path) for c in plan.changes]
        for rel in rels:
            fsafe.check_rel(rel)
        append_rels = [rel_of(root, a.path) for a in plan.appends]
        for rel in append_rels:
            fsafe.check_rel(rel)
    except Refused as exc:
        raise TxnError(f"refused: {exc}; nothing was changed") from None
    for rel, change in zip(rels, plan.changes, strict=True):
        if change.action == "write":
            strict_json(rel, change.data() or b"")
    try:
        with store_lock(tree, actor or default_actor()), contextlib.ExitStack() as stack:
            return _apply_locked(tree, plan, rels, append_rels, stack, actor, extra)
    except LockBusy as exc:
        raise TxnError(str(exc), kind=kinds.LOCK_BUSY) from None
    except Refused as exc:
        raise TxnError(f"refused: {exc}; nothing was changed") from None
    except OSError as exc:
        raise TxnError(f"could not prepare the change: {explain(exc)}; nothing was changed") from None


def _apply_locked(tree: Tree, plan: Plan, rels: list[str], append_rels: list[str], stack: contextlib.ExitStack,
                  actor: str | None, extra: dict[str, Any] | None) -> dict[str, Any]:
    steps: list[_Step] = []
    if plan.recheck is not None:
        reason = plan.recheck()
        if reason:
            raise TxnError(f"{reason}; nothing was changed")
    try:
        for rel, change in zip(rels, plan.changes, strict=True):
            try:
                # only a new file may make its directory: one expected there whose directory went was removed
                # underneath, and making the directory again would bring back a session or task that is gone
                dfd, name = stack.enter_context(tree.parent(rel, create=change.action == "write"
                                                            and change.expect is None))
            except FileNotFoundError:  # a change in a directory that is gone
                if change.expect is None:
                    continue
                raise _changed(rel, change.expect, None) from None
            step = _Step(change, rel, None, dfd, name)
            steps.append(step)
            if change.action == "write":  # slow work (writing, fsync) before any check
                try:
                    step.tmp = fsafe.stage(dfd, name, change.data() or b"", fsafe.mode_of(dfd, name))
                except OSError as exc:
                    raise OSError(exc.errno, exc.strerror, f"{rel} (staging its new bytes)") from None
        for step in steps:
            step.before = _read_before(tree, step.rel)
            found = digest(step.before) if step.before is not None else None
            if found != step.change.expect:
                raise _changed(step.rel, step.change.expect, found)
        sizes: list[int | None] = []
        for rel, app in zip(append_rels, plan.appends, strict=True):
            st = tree.lstat(rel)
            sizes.append(st.st_size if st is not None else None)
            grown = (st.st_size if st is not None else 0) + len(app.line.encode("utf-8")) + 2
            if grown > fsafe.MAX_APPENDED_BYTES:  # its undo could not read the file back, so never applied
                raise TxnError(f"this action cannot be recorded so that it can be undone: {rel} would be "
                               f"{grown:,} bytes, more than the {fsafe.MAX_APPENDED_BYTES:,} an undo can restore; "
                               "nothing was changed (move the file's older lines elsewhere first)")
        rotate(tree)
        entry = {
            # 48 random bits: with 24, a busy runtime's refusals and retries (hundreds of entries a second)
            # gave two entries one id within a minute, and `undo ID` could then take the wrong one
            "id": f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:12]}",
            "at": now_iso(),
            "actor": actor or default_actor(),
            "action": plan.action,
            "summary": plan.summary,
            "files": [{"path": s.rel, "why": s.change.why,
                       "before_b64": base64.b64encode(s.before).decode() if s.before is not None else None,
                       "after_sha": digest(s.change.data() or b"") if s.change.action == "write" else None}
                      for s in steps],
            "appends": [{"path": rel, "line": a.line, "size_before": size or 0, "created": size is None}
                        for rel, a, size in zip(append_rels, plan.appends, sizes, strict=True)],
        }
        if extra:
            entry.update(extra)
        try:
            line = _journal_line(entry)
        except ValueError as exc:
            raise TxnError(f"the change holds a value JSON cannot carry ({exc}); nothing was changed") from None
        unreadable = line_problem(line)
        if unreadable:
            # What undo could not read back must never be applied: refuse before anything changes.
            raise TxnError(f"this action cannot be recorded so that it can be undone: its journal entry would be "
                           f"{unreadable}; nothing was changed (act on fewer files at a time, e.g. one session "
                           "or scope per command)")
        start = write_ahead(tree, line)
    except BaseException:
        _drop_temps(steps)
        raise
    try:
        _apply_steps(tree, plan, steps, append_rels, entry, start, line)
    finally:
        _drop_temps(steps)
    entry["state"] = "done"
    return entry


def _drop_temps(steps: list[_Step]) -> None:
    for step in steps:
        if step.tmp is not None:
            fsafe.discard_temp(step.dfd, step.tmp)
            step.tmp = None


def _apply_steps(tree: Tree, plan: Plan, steps: list[_Step], append_rels: list[str], entry: dict[str, Any],
                 start: int, line: bytes) -> None:
    appended: list[tuple[str, int, bytes]] = []
    try:
        for step in steps:
            _swap(step)
        for step in steps:  # durability of the renames, outside every compare-and-swap window
            fsafe.fsync_fd(step.dfd)
        for rel, app in zip(append_rels, plan.appends, strict=True):
            data = app.line.rstrip("\n").encode("utf-8") + b"\n"
            appended.append((rel, *tree.append(rel, data)))
        mark(tree, start, "done", line)
    except (ChangedUnderneath, OSError) as exc:
        _roll_back(tree, steps, appended, entry, start, line, exc)


def _roll_back(tree: Tree, steps: list[_Step], appended: list[tuple[str, int, bytes]], entry: dict[str, Any],
               start: int, line: bytes, exc: BaseException) -> None:
    failed: list[str] = []
    superseded: list[str] = []
    for rel, size_before, written in reversed(appended):
        try:
            _undo_append(tree, rel, size_before, written)
        except OSError:
            failed.append(rel)
    for step in reversed([s for s in steps if s.applied]):
        try:
            if not _undo_step(step):
                superseded.append(step.rel)
        except OSError:
            failed.append(step.rel)
    reason = _failure(exc)
    if failed:
        raise TxnError(f"{reason}; rolling back failed for {', '.join(failed)}: journal entry {entry['id']} is left "
                       "interrupted. Run `rcs-tui doctor` (then `rcs-tui doctor --fix` to roll it back)") from None
    unmarked = ""
    try:
        mark(tree, start, "aborted", line)
    except OSError as mark_exc:  # the entry may read as pending or done: say which entry, so no one trusts it
        unmarked = (f"; journal entry {entry['id']} could not be marked aborted ({explain(mark_exc)}), so it may "
                    "still read as applied: no file of it holds its change")
    note = ""
    if superseded:
        were, keep = ("was", "keeps") if len(superseded) == 1 else ("were", "keep")
        note = f" ({', '.join(superseded)} {were} rewritten by the runtime meanwhile and {keep} the runtime's bytes)"
    if isinstance(exc, ChangedUnderneath):
        raise ChangedUnderneath(f"{reason}; the files already changed were restored{note}{unmarked}") from None
    raise TxnError(f"{reason}; every file was restored, nothing was changed{note}{unmarked}") from None
