"""The operator journal (`.rcs/logs/rcs-tui-journal.jsonl`) and undo by before-image."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from rcs_tui.state.io import digest, file_digest
from rcs_tui.state.txn import JOURNAL_REL, FileChange, Plan, TxnError, apply


def read_journal(root: Path) -> list[dict[str, Any]]:
    """All well-formed entries, oldest first; a torn or foreign line is skipped, never fatal.

    Each entry gets `complete`: False for a write-ahead entry whose commit marker never followed
    (the process died while applying it; some of its files may be changed, some not).
    """
    path = root / JOURNAL_REL
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return []
    entries = []
    commits: set[str] = set()
    aborted: set[str] = set()
    for line in raw.splitlines():
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):  # torn, foreign, too deep, over-long integer
            continue
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("commit"), str):
            commits.add(entry["commit"])
        elif isinstance(entry.get("abort"), str):
            aborted.add(entry["abort"])
        elif isinstance(entry.get("id"), str) and isinstance(entry.get("files"), list):
            entries.append(entry)
    entries = [e for e in entries if e["id"] not in aborted]  # refused before any file changed
    for entry in entries:
        entry["complete"] = entry.get("state") != "pending" or entry["id"] in commits
    return entries


def interrupted(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write-ahead entries that never committed and were not rolled back since."""
    done = undone_ids(entries)
    return [e for e in entries if not e["complete"] and e["id"] not in done]


def undone_ids(entries: list[dict[str, Any]]) -> set[str]:
    """Entries whose effect is currently undone: an undo marks one, a later redo of it unmarks it, and
    undoing that redo marks the original again."""
    undone: set[str] = set()
    redo_of: dict[str, str] = {}
    for e in entries:
        if isinstance(e.get("undoes"), str):
            undone.add(e["undoes"])
            if e["undoes"] in redo_of:
                undone.add(redo_of[e["undoes"]])
        if isinstance(e.get("redoes"), str):
            undone.discard(e["redoes"])
            redo_of[e["id"]] = e["redoes"]
    return undone


def blocking_entry(entries: list[dict[str, Any]], entry: dict[str, Any], rel: str) -> dict[str, Any] | None:
    """The newest later entry that changed `rel` and is still in effect: the one to undo first."""
    ids = [e["id"] for e in entries]
    later = entries[ids.index(entry["id"]) + 1:] if entry["id"] in ids else []
    done = undone_ids(entries)
    for e in reversed(later):
        if e["id"] not in done and any(isinstance(f, dict) and f.get("path") == rel for f in e.get("files") or []):
            return e
    return None


def pick_entry(entries: list[dict[str, Any]], entry_id: str | None) -> dict[str, Any]:
    """The chosen entry, or the newest operator action that changed a file, is not an undo and not yet undone.

    An action that changed nothing (clearing a member that was already gone) is skipped: `undo` must not
    spend itself on a no-op while the real change before it stays in place.
    """
    if entry_id:
        for entry in entries:
            if entry["id"] == entry_id:
                return entry
        raise TxnError(f"no journal entry {entry_id!r} in {JOURNAL_REL}")
    done = undone_ids(entries)
    for entry in reversed(entries):
        if "undoes" not in entry and entry["id"] not in done and entry.get("files"):
            return entry
    raise TxnError("nothing to undo: the journal has no undoable entry")


def _before(entry: dict[str, Any], item: dict[str, Any]) -> bytes | None:
    encoded = item.get("before_b64")
    if encoded is None:
        return None
    try:
        return base64.b64decode(encoded, validate=True)
    except (ValueError, TypeError) as exc:
        raise TxnError(f"journal entry {entry['id']} has a damaged before-image for {item.get('path')!r}") from exc


def plan_undo(root: Path, entry: dict[str, Any]) -> Plan:
    """Restore each file's before-image, refusing if any file changed since the entry was applied.

    A file already at its before-image is left alone, which is what rolls back an interrupted entry
    whose process died before changing every file.
    """
    entries = read_journal(root)
    if entry["id"] in undone_ids(entries):
        raise TxnError(f"journal entry {entry['id']} was already undone")
    changes = []
    for item in entry["files"]:
        rel = item.get("path")
        if not isinstance(rel, str) or rel.startswith("/") or ".." in Path(rel).parts:
            raise TxnError(f"journal entry {entry['id']} names an unsafe path {rel!r}")
        path = root / rel
        current = file_digest(path)
        before = _before(entry, item)
        if current == (digest(before) if before is not None else None):
            continue
        if current != item.get("after_sha"):
            blocker = blocking_entry(entries, entry, rel)
            first = (f"; undo {blocker['id']} ({blocker.get('action')}) first, it changed {rel} later"
                     if blocker else " by something outside rcs-tui")
            raise TxnError(f"cannot undo {entry['id']}: {rel} changed since ({entry['action']}){first}; "
                           "nothing was changed")
        if before is None:
            changes.append(FileChange(path, "delete", expect=current, why="restore: did not exist"))
        else:
            changes.append(FileChange(path, "write", before, expect=current, why="restore before-image"))
    return Plan(action=f"undo {entry['action']}", changes=tuple(changes),
                summary={"undoes": entry["id"], "restores": [c.describe(root)["path"] for c in changes]})


def undo(root: Path, entry_id: str | None = None, *, actor: str | None = None,
         dry_run: bool = False) -> dict[str, Any]:
    entry = pick_entry(read_journal(root), entry_id)
    plan = plan_undo(root, entry)
    if dry_run:
        return {"dry_run": True, **plan.describe(root)}
    applied = apply(root, plan, actor=actor, extra={"undoes": entry["id"]})
    return {"undone": entry["id"], "journal_id": applied["id"], "restored": plan.summary["restores"]}


__all__ = ["read_journal", "interrupted", "pick_entry", "plan_undo", "undo"]
