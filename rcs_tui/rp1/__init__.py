"""rp1 workflow events (seed 004): a read-only SQLite event source, run projection and live tail.

Entry points: `Rp1Source` (feed, current run, timeline), `Tail` (live events), `discover_machines`.
Nothing here imports Textual or Rich, and nothing here writes the database (`fixtures` is the
only writer, for tests and the demo).
"""

from rcs_tui.rp1.db import DbState, Rp1Db, RunRow, Scope, default_db_path, project_scope
from rcs_tui.rp1.machines import MachineInfo, MachineRegistry, discover_machines
from rcs_tui.rp1.projection import Event, Projection, project
from rcs_tui.rp1.source import Feed, Rp1Source, RunSummary
from rcs_tui.rp1.tail import Tail
from rcs_tui.rp1.timeline import Timeline, build_timeline

__all__ = ["DbState", "Event", "Feed", "MachineInfo", "MachineRegistry", "Projection", "Rp1Db", "Rp1Source",
           "RunRow", "RunSummary", "Scope", "Tail", "Timeline", "build_timeline", "default_db_path",
           "discover_machines", "project", "project_scope"]
