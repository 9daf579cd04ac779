"""Transactions: lock → re-check → atomic replace → journal. The only way rcs-tui writes state."""

from __future__ import annotations

import base64
import getpass
import json
import os
import socket
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock, Timeout

from rcs_tui.state.io import append_line, atomic_delete, atomic_write, digest, fsync_dir, keep_mode

JOURNAL_REL = Path(".rcs/logs/rcs-tui-journal.jsonl")
LOCK_REL = Path(".rcs/logs/rcs-tui.lock")
LOCK_TIMEOUT_S = 10.0


class TxnError(Exception):
    """A write was refused; the message is meant for the operator and nothing was changed."""


class ChangedUnderneath(TxnError):
    """A file differs from the bytes the decision was made on."""


@dataclass(frozen=True)
class FileChange:
    """One file to write or delete, with the digest it must still have (None = must be absent)."""

    path: Path
    action: Literal["write", "delete"]
    content: bytes | None = None
    expect: str | None = None
    why: str = ""

    def describe(self, root: Path) -> dict[str, Any]:
        return {"path": _rel(self.path, root), "action": self.action, "why": self.why}


@dataclass(frozen=True)
class Append:
    """A line appended to an append-only log (e.g. a task transcript); not undone by undo."""

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

    def describe(self, root: Path) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action,
                               "changes": [c.describe(root) for c in self.changes]}
        if self.appends:
            out["appends"] = [{"path": _rel(a.path, root), "line": a.line, "why": a.why}
                              for a in self.appends]
        out.update(self.summary)
        return out


def now_iso() -> str:
    """UTC timestamp with milliseconds and `Z`, as the runtime writes them."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def default_actor(via: str = "cli") -> str:
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no passwd entry in some containers
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()} ({via}, pid {os.getpid()})"


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def lock_for(root: Path) -> FileLock:
    path = root / LOCK_REL
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path), timeout=LOCK_TIMEOUT_S)


def _check(root: Path, changes: tuple[FileChange, ...]) -> list[bytes | None]:
    """Read each file once and compare it with the digest the plan was made on; return those bytes.

    The bytes returned are the journal's before-images, so the journal records exactly what was checked.
    """
    befores: list[bytes | None] = []
    for change in changes:
        try:
            before: bytes | None = change.path.read_bytes()
        except FileNotFoundError:
            before = None
        except IsADirectoryError:
            raise ChangedUnderneath(f"{_rel(change.path, root)} is a directory; nothing was changed") from None
        current = digest(before) if before is not None else None
        if current != change.expect:
            state = "appeared" if change.expect is None else ("was removed" if current is None else "changed")
            raise ChangedUnderneath(
                f"{_rel(change.path, root)} {state} underneath since it was read; re-read and try again "
                "(nothing was changed)")
        befores.append(before)
    return befores


def _stage(change: FileChange) -> Path | None:
    """Write a change's new bytes to a fsynced temp file beside it (None: delete, or its dir is new)."""
    if change.action != "write" or not change.path.parent.is_dir():
        return None
    fd, tmp = tempfile.mkstemp(prefix=f".{change.path.name}.", suffix=".tmp", dir=change.path.parent)
    keep_mode(fd, change.path)
    with os.fdopen(fd, "wb") as fh:
        fh.write(change.content or b"")
        fh.flush()
        os.fsync(fh.fileno())
    return Path(tmp)


def apply(root: Path, plan: Plan, *, actor: str | None = None, extra: dict[str, Any] | None = None) -> dict:
    """Apply a plan under the store lock and journal it. Returns the journal entry."""
    staged: list[Path | None] = []
    try:
        with lock_for(root):
            # Slow work (writing and fsyncing the new bytes) happens before the check, so a runtime write
            # can only slip in during the short read-compare-rename step, not during our fsyncs.
            staged = [_stage(change) for change in plan.changes]
            befores = _check(root, plan.changes)
            files = []
            for change, before in zip(plan.changes, befores, strict=True):
                files.append({
                    "path": _rel(change.path, root),
                    "why": change.why,
                    "before_b64": base64.b64encode(before).decode() if before is not None else None,
                    "after_sha": digest(change.content) if change.action == "write" and change.content is not None
                    else None,
                })
            entry = {
                "id": f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:6]}",
                "at": now_iso(),
                "actor": actor or default_actor(),
                "action": plan.action,
                "summary": plan.summary,
                "files": files,
                "appends": [{"path": _rel(a.path, root), "line": a.line} for a in plan.appends],
                "state": "pending",
            }
            if extra:
                entry.update(extra)
            # Write-ahead: the intent (with every before-image) is durable before any file changes, so a
            # process killed mid-way leaves a pending entry that undo and the doctor can roll back.
            journal = root / JOURNAL_REL
            append_line(journal, json.dumps(entry, ensure_ascii=False, sort_keys=True))
            try:
                _check(root, plan.changes)  # again: the journal's fsync must not widen the race window
            except ChangedUnderneath:
                append_line(journal, json.dumps({"abort": entry["id"]}))
                raise
            for i, (change, tmp) in enumerate(zip(plan.changes, staged, strict=True)):
                if tmp is not None:
                    os.replace(tmp, change.path)
                    staged[i] = None
                elif change.action == "write":
                    atomic_write(change.path, change.content or b"")
                else:
                    atomic_delete(change.path)
            for directory in {c.path.parent for c in plan.changes}:
                fsync_dir(directory)
            for app in plan.appends:
                append_line(app.path, app.line)
            append_line(journal, json.dumps({"commit": entry["id"]}))
            entry["state"] = "done"
            return entry
    except Timeout as exc:
        raise TxnError(f"another rcs-tui process holds {LOCK_REL}; try again") from exc
    finally:
        for tmp in staged:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
