"""rp1 workflow events: a read-only SQLite event source, run projection and live tail.

Entry points: `Rp1Source` (feed, current run, timeline), `Tail` (live events), `discover_machines`.
Nothing here imports Textual or Rich, and nothing here writes the database (`fixtures` is the
only writer, for tests and the demo).

The names below load on first use (PEP 562), so importing one submodule (`rcs_tui.rp1.db` on the
`hud --once` path) does not import them all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "DbState": "db", "Rp1Db": "db", "RunRow": "db", "Scope": "db", "default_db_path": "db", "project_scope": "db",
    "MachineInfo": "machines", "MachineRegistry": "machines", "discover_machines": "machines",
    "Event": "projection", "Projection": "projection", "project": "projection",
    "Feed": "source", "Rp1Source": "source", "RunSummary": "source",
    "Tail": "tail",
    "Timeline": "timeline", "build_timeline": "timeline",
}

__all__ = ["DbState", "Event", "Feed", "MachineInfo", "MachineRegistry", "Projection", "Rp1Db", "Rp1Source",
           "RunRow", "RunSummary", "Scope", "Tail", "Timeline", "build_timeline", "default_db_path",
           "discover_machines", "project", "project_scope"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from rcs_tui.rp1.db import DbState, Rp1Db, RunRow, Scope, default_db_path, project_scope
    from rcs_tui.rp1.machines import MachineInfo, MachineRegistry, discover_machines
    from rcs_tui.rp1.projection import Event, Projection, project
    from rcs_tui.rp1.source import Feed, Rp1Source, RunSummary
    from rcs_tui.rp1.tail import Tail
    from rcs_tui.rp1.timeline import Timeline, build_timeline
