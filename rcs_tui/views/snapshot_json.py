"""The stable JSON shape of a Snapshot (used by `rcs-tui snapshot --json` and `hud --once --json`)."""

from __future__ import annotations

from typing import Any

from rcs_tui.files.io import rel_of
from rcs_tui.state.snapshot import ModeFile, Scope, Snapshot
from rcs_tui.views.json_stream import Lazy


def mode_json(f: ModeFile, root) -> dict[str, Any]:
    out = f.outcome
    return {"mode": f.mode, "path": f.rel_path(root), "active": f.active, "phase": f.phase,
            "iteration": f.iteration, "max_iterations": f.max_iterations, "tombstone": f.tombstone,
            "outcome": out.value, "outcome_source": out.source, "error": f.error}


def scope_json(scope: Scope, root) -> dict[str, Any]:
    c = scope.canonical
    return {"scope": scope.session_id or "root",
            "modes": {m: mode_json(f, root) for m, f in sorted(scope.modes.items())},
            "active_modes": list(scope.active_modes()),
            "canonical": None if c is None or not c.exists else
            {"path": rel_of(root, c.path), "members": list(c.members), "legacy": c.legacy,
             "error": c.error, "primary_skill": (c.data or {}).get("skill")}}


def snapshot_json(snap: Snapshot, cache: dict[int, tuple[Scope, dict[str, Any]]] | None = None, *,
                  with_scopes: bool = True, streamed: bool = False) -> dict[str, Any]:
    """The snapshot as JSON. `cache` (kept by a caller that renders the same project again and again) reuses
    the JSON of every Scope object it has already rendered: an incremental re-read keeps unchanged scopes.
    Without `with_scopes` the `scopes` key is left out (a caller that shows a summary makes its own).
    `streamed`: the scopes are a `Lazy` list, each made as `json_stream` writes it (for a document that
    is only written out, never read)."""
    root = snap.root
    if not with_scopes:
        return {"root": str(root), "session": snap.resolution.as_json(), "active_set": list(snap.active_set()),
                "members": [m.as_json(root) for m in snap.members], "errors": [e.as_json(root) for e in snap.errors]}

    def scope_json_cached(scope: Scope) -> dict[str, Any]:
        if cache is None:
            return scope_json(scope, root)
        hit = cache.get(id(scope))
        if hit is not None and hit[0] is scope:
            return hit[1]
        out = scope_json(scope, root)
        cache[id(scope)] = (scope, out)
        return out

    scopes = [snap.root_scope, *(s for _, s in sorted(snap.sessions.items()))]
    if cache is not None:
        live = {id(s) for s in scopes}
        for key in [k for k in cache if k not in live]:
            del cache[key]
    return {
        "root": str(root),
        "session": snap.resolution.as_json(),
        "active_set": list(snap.active_set()),
        "members": [m.as_json(root) for m in snap.members],
        "scopes": Lazy(scopes, scope_json_cached) if streamed else [scope_json_cached(s) for s in scopes],
        "errors": [e.as_json(root) for e in snap.errors],
    }
