"""Pure document transforms for reconciliation: audit-complete, tombstone, canonical-set sync.

The runtime's order is kept by the caller: decide → complete sources → sync canonical → activate.
Each function returns new dicts and never mutates its inputs.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any


def audit_complete(doc: Mapping[str, Any] | None, source: str, dest: str, now: str,
                   transition_source: str = "rcs-tui") -> dict[str, Any]:
    """A source mode file after an allowlisted handoff, with the runtime's audit fields."""
    out = copy.deepcopy(dict(doc or {}))
    message = f"mode transiting: {source} -> {dest}"
    out.update({
        "active": False,
        "current_phase": "completed",
        "completed_at": now,
        "auto_completed_reason": message,
        "completion_note": f"Auto-completed {source} during allowlisted transition to {dest}.",
        "transition_source": transition_source,
        "transition_target_mode": dest,
        "run_outcome": "finish",
        "lifecycle_outcome": "finished",
    })
    return out


def tombstone(mode: str, session_id: str | None, now: str) -> dict[str, Any]:
    """A session-scope clear marker that hides a root copy of the same mode."""
    doc: dict[str, Any] = {"mode": mode, "active": False, "current_phase": "cleared",
                           "updated_at": now, "completed_at": now}
    if session_id is not None:
        doc["session_id"] = session_id
    return doc


def _entries(doc: Mapping[str, Any]) -> list[Any]:
    skills = doc.get("active_skills")
    return list(skills) if isinstance(skills, list) else []


def _matches(entry: Any, mode: str, session_id: str | None) -> bool:
    if not isinstance(entry, Mapping) or entry.get("skill") != mode:
        return False
    sid = entry.get("session_id")
    return session_id is None or sid in (None, session_id)


def is_tombstone(doc: Any) -> bool:
    """A clear marker written by `tombstone`: inactive, with the phase "cleared"."""
    return isinstance(doc, Mapping) and doc.get("active") is False and doc.get("current_phase") == "cleared"


def live_entries(entries: Iterable[Any]) -> list[Mapping[str, Any]]:
    """The canonical entries still in the active set (not marked inactive, naming a skill)."""
    return _live(entries)


def _live(entries: Iterable[Any]) -> list[Mapping[str, Any]]:
    return [e for e in entries if isinstance(e, Mapping) and e.get("active") is not False
            and isinstance(e.get("skill"), str)]


def _set_phase(doc: dict[str, Any], phase: Any) -> None:
    """The top-level `phase` is the primary skill's: replaced by the new primary's, or dropped if it has none."""
    if isinstance(phase, str) and phase:
        doc["phase"] = phase
    else:
        doc.pop("phase", None)


def canonical_without(doc: Mapping[str, Any] | None, modes: Iterable[str], session_id: str | None,
                      now: str) -> tuple[dict[str, Any] | None, list[str]]:
    """Drop only the entries of `modes` in this scope; others keep their entries and timestamps.

    When the primary `skill` is no longer live it moves to the first remaining live member, with that
    member's phase; an emptied set keeps the file with `active: false`. Returns (new document or None
    when nothing changed, removed skills).
    """
    if doc is None:
        return None, []
    drop = set(modes)
    out = copy.deepcopy(dict(doc))
    removed: list[str] = []
    if "active_skills" not in out:
        if out.get("skill") in drop and out.get("active") is True:
            out["active"] = False
            out["updated_at"] = now
            return out, [out["skill"]]
        return None, []
    kept = []
    for entry in _entries(out):
        if any(_matches(entry, m, session_id) for m in drop):
            removed.append(entry["skill"])
        else:
            kept.append(entry)
    if not removed:
        return None, []
    out["active_skills"] = kept
    live = _live(kept)
    if live:
        out["active"] = True
        if out.get("skill") not in [e["skill"] for e in live]:
            out["skill"] = live[0]["skill"]
            _set_phase(out, live[0].get("phase"))
    else:
        out["active"] = False
    out["updated_at"] = now
    return out, removed


def entries_by_skill(doc: Mapping[str, Any] | None) -> dict[str, list[Mapping[str, Any]]]:
    """The canonical entries naming each skill, in file order (for `removed_skills` over many modes)."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for entry in _entries(doc) if doc is not None else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("skill"), str):
            out.setdefault(entry["skill"], []).append(entry)
    return out


def removed_skills(doc: Mapping[str, Any] | None, modes: Iterable[str], session_id: str | None,
                   index: Mapping[str, list[Mapping[str, Any]]] | None = None) -> list[str]:
    """What `canonical_without` removes (its second value), without building the new document. With `index`
    (`entries_by_skill` of `doc`) one mode costs its own entries, not the whole set's."""
    if doc is None:
        return []
    drop = list(dict.fromkeys(modes))
    if "active_skills" not in doc:
        return [doc["skill"]] if doc.get("skill") in set(drop) and doc.get("active") is True else []
    if index is None or len(drop) != 1:
        return [e["skill"] for e in _entries(doc) if any(_matches(e, m, session_id) for m in drop)]
    return [e["skill"] for e in index.get(drop[0], ()) if _matches(e, drop[0], session_id)]


def canonical_with(doc: Mapping[str, Any] | None, mode: str, phase: str | None, session_id: str | None,
                   now: str, completed: Iterable[str] = (), source: str = "rcs-tui") -> dict[str, Any]:
    """Add `mode` to the set after dropping `completed` sources, so sync never resurrects them."""
    out = copy.deepcopy(dict(doc or {}))
    done = set(completed)
    entries = [e for e in _entries(out) if not (isinstance(e, Mapping) and e.get("skill") in done)]
    if "active_skills" not in out and out.get("active") is True and isinstance(out.get("skill"), str) \
            and out["skill"] not in done and out["skill"] != mode:
        legacy = {"skill": out["skill"], "active": True}
        if isinstance(out.get("phase"), str):
            legacy["phase"] = out["phase"]
        entries.append(legacy)
    if not any(_matches(e, mode, session_id) and e.get("active") is not False for e in entries):
        entry: dict[str, Any] = {"skill": mode, "active": True, "activated_at": now, "updated_at": now}
        if phase:
            entry["phase"] = phase
        if session_id is not None:
            entry["session_id"] = session_id
        entries = [e for e in entries if not _matches(e, mode, session_id)] + [entry]
    out.setdefault("version", 1)
    out.update({"active": True, "skill": mode, "updated_at": now, "source": source, "active_skills": entries})
    out.setdefault("activated_at", now)
    _set_phase(out, phase)
    if session_id is not None:
        out["session_id"] = session_id
    return out
