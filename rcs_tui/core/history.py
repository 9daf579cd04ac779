"""The operator's action history as the journal records it: which actions are in effect and which undone.

Pure over journal entries (dicts with `id`, and `undoes` or `redoes` naming an earlier entry), in the
order they were written. Every undo or redo belongs to the chain of one original action: an undo
reverses the entry it names, a redo re-applies it, so each entry either applies the original's effect or
removes it, and the newest entry of a chain says which holds now. An entry is undone when what it did is
not what holds now: after clear, undo, redo, undo, redo the clear is in effect, and only the two undos
are undone (nothing is left to redo).
"""

from __future__ import annotations

from typing import Any


def undone_ids(entries: list[dict[str, Any]]) -> set[str]:
    """Ids of the entries whose effect does not hold now (see the module's rule)."""
    origin: dict[str, str] = {}  # entry id -> the original action of its chain
    applies: dict[str, bool] = {}  # entry id -> whether it applies the original's effect (or removes it)
    newest: dict[str, str] = {}  # original -> the newest entry of its chain
    for e in entries:
        eid = e["id"]
        undoes, redoes = e.get("undoes"), e.get("redoes")
        if isinstance(undoes, str):
            origin[eid], applies[eid] = origin.get(undoes, undoes), not applies.get(undoes, True)
        elif isinstance(redoes, str):
            origin[eid], applies[eid] = origin.get(redoes, redoes), applies.get(redoes, True)
        else:
            origin[eid], applies[eid] = eid, True
        newest[origin[eid]] = eid
    holds = {o: applies[n] for o, n in newest.items()}
    out = {eid for eid, o in origin.items() if applies[eid] != holds[o]}
    # an original older than the entries read (rotated away) but named by a newer undo
    out |= {o for o, h in holds.items() if o not in applies and not h}
    return out
