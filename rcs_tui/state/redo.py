"""Undo and redo as operations over the one transaction path.

Redo re-applies an undone entry by rolling back the undo that undid it: the undo entry's before-images
are exactly the undone entry's after-images, so redo is that undo's plan, journaled as a redo. It is
refused, naming the cause, when a file changed since the undo, even when it changed to what the redo would
write (another action did it: redoing would record an action in effect twice).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.history import undone_ids
from rcs_tui.state.journal import entry_about, pick_entry, plan_undo, read_journal
from rcs_tui.state.ops import Operation
from rcs_tui.state.txn import Plan, TxnError


def undo_operation(root: Path, entry_id: str | None = None) -> Operation:
    """Undo of the given (or newest undoable) entry, as an operation the console and CLI apply alike."""
    return undo_entry_operation(root, pick_entry(read_journal(root), entry_id))


def undo_entry_operation(root: Path, entry: dict[str, Any]) -> Operation:
    """Undo of one journal entry (also the doctor's rollback of an interrupted one)."""
    plan = plan_undo(root, entry)
    return Operation(plan, {"undone": entry["id"], "restored": plan.summary["restores"]}, {"undoes": entry["id"]},
                     entry_about(root, entry, plan))


def pick_redo(entries: list[dict[str, Any]], entry_id: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The entry to redo (given, else the most recently undone one) and the undo entry that undid it."""
    undone = undone_ids(entries)
    undos = [e for e in entries if isinstance(e.get("undoes"), str) and e["undoes"] in undone]
    if entry_id is not None:
        if not any(e["id"] == entry_id for e in entries):
            raise TxnError(f"no journal entry {entry_id!r}", kind=kinds.NOT_FOUND)
        if entry_id not in undone:
            raise TxnError(f"journal entry {entry_id} is not undone; there is nothing to redo", kind=kinds.NOT_FOUND)
        undos = [u for u in undos if u["undoes"] == entry_id]
    if not undos:
        raise TxnError("nothing to redo: no journal entry is currently undone", kind=kinds.NOT_FOUND)
    undo_entry = undos[-1]
    target = next((e for e in entries if e["id"] == undo_entry["undoes"]), None)
    if target is None:
        raise TxnError(f"cannot redo {undo_entry['undoes']}: that entry is no longer in the journal (rotated away "
                       f"or older than the entries read); its undo {undo_entry['id']} stays as it is",
                       kind=kinds.NOT_FOUND)
    return target, undo_entry


def _paths(entry: dict[str, Any]) -> set[str]:
    """The files an entry rewrote or appended to."""
    files = {i.get("path") for i in entry.get("files") or [] if isinstance(i, dict)}
    appends = {a.get("path") for a in entry.get("appends") or [] if isinstance(a, dict) and "size_before" in a}
    return {p for p in files | appends if isinstance(p, str)}


def redo_operation(root: Path, entry_id: str | None = None) -> Operation:
    """Redo of the given (or most recently undone) entry: its undo rolled back, or a refusal naming why."""
    entries = read_journal(root)
    target, undo_entry = pick_redo(entries, entry_id)
    unkept = sorted(_paths(target) - _paths(undo_entry))
    if unkept:
        # The undo found these files already as they were before the action (something else had put them
        # back) and wrote nothing there, so the journal holds no copy of what the action wrote to them.
        raise TxnError(f"cannot redo {target['id']}: when it was undone, {unkept[0]} already held what it held "
                       f"before ({target.get('action')}), so what it wrote there was not kept; nothing was changed",
                       kind=kinds.REFUSED)
    try:
        undo_plan = plan_undo(root, undo_entry, exact=True)
    except TxnError as exc:
        reason = str(exc).removeprefix(f"cannot undo {undo_entry['id']}: ")
        raise TxnError(f"cannot redo {target['id']}: {reason}", kind=kinds.kind_of(exc)) from None
    plan = Plan(action=f"redo {target.get('action')}", changes=undo_plan.changes,
                summary={"redoes": target["id"], "restores": undo_plan.summary["restores"]})
    return Operation(plan, {"redone": target["id"], "restored": plan.summary["restores"]}, {"redoes": target["id"]},
                     entry_about(root, target, plan))
