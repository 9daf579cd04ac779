"""The operator's action history as the journal records it: which actions are currently undone.

Pure over journal entries (dicts with `id`, and `undoes` or `redoes` naming an earlier entry), in the
order they were written.
"""

from __future__ import annotations

from typing import Any


def undone_ids(entries: list[dict[str, Any]]) -> set[str]:
    """Entries whose effect is currently undone: an undo marks one, a later redo of it unmarks it,
    undoing that redo marks the original again, and undoing the undo itself puts the original back in
    effect (its bytes are on disk again, so it can be undone once more)."""
    undone: set[str] = set()
    redo_of: dict[str, str] = {}
    undo_of: dict[str, str] = {}
    for e in entries:
        if isinstance(e.get("undoes"), str):
            undone.add(e["undoes"])
            undo_of[e["id"]] = e["undoes"]
            if e["undoes"] in redo_of:
                undone.add(redo_of[e["undoes"]])
            if e["undoes"] in undo_of:
                undone.discard(undo_of[e["undoes"]])
        if isinstance(e.get("redoes"), str):
            undone.discard(e["redoes"])
            redo_of[e["id"]] = e["redoes"]
    return undone
