"""Where things live: project root discovery and the paths of the `.rcs` tree."""

from __future__ import annotations

import os
from pathlib import Path

from rcs_tui.core.frozen import Frozen, set_field
from rcs_tui.files.host import RootNotFound, find_root_dir

__all__ = ["Layout", "RootNotFound", "find_root"]

MAX_KEPT_SCOPE_DIRS = 100_000  # session directory paths one Layout keeps joined


def find_root(explicit: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> Path:
    """`--root`, else `RCS_ROOT`, else the nearest ancestor of the cwd holding `.rcs/` (see `host.find_root_dir`)."""
    return Path(find_root_dir(explicit, None if cwd is None else str(cwd)))


class Layout(Frozen):
    """Paths of one project's `.rcs` tree.
    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start."""

    __slots__ = ("root", "rcs", "state", "sessions", "_scope_dirs")
    _compared = ("root",)
    root: Path
    rcs: Path
    state: Path
    sessions: Path
    _scope_dirs: dict[str, Path]

    def __init__(self, root: Path) -> None:
        # The three directories every path below starts from are joined once: a whole-tree read or a
        # list of plans asks for them thousands of times, and each join parses the path again.
        set_field(self, "root", root)
        set_field(self, "rcs", root / ".rcs")
        set_field(self, "state", self.rcs / "state")
        set_field(self, "sessions", self.state / "sessions")
        set_field(self, "_scope_dirs", {})

    def __reduce__(self) -> tuple[type[Layout], tuple[Path]]:
        return Layout, (self.root,)

    @property
    def session_pointer(self) -> Path:
        return self.state / "session.json"

    @property
    def team(self) -> Path:
        return self.state / "team"

    @property
    def tasks(self) -> Path:
        return self.rcs / "tasks"

    @property
    def plans(self) -> Path:
        return self.rcs / "plans"

    @property
    def metrics(self) -> Path:
        return self.rcs / "metrics.json"

    @property
    def hud_config(self) -> Path:
        return self.rcs / "hud-config.json"

    @property
    def logs(self) -> Path:
        return self.rcs / "logs"

    @property
    def journal(self) -> Path:
        return self.logs / "rcs-tui-journal.jsonl"

    def scope_dir(self, session_id: str | None) -> Path:
        """The directory of a scope: the state dir for root, `sessions/<id>` for a session."""
        if session_id is None:
            return self.state
        found = self._scope_dirs.get(session_id)
        if found is None:  # kept: the plans of one diagnosis ask for the same session's paths again and again
            if len(self._scope_dirs) >= MAX_KEPT_SCOPE_DIRS:  # a viewer open for weeks sees sessions come and go
                self._scope_dirs.clear()
            found = self._scope_dirs[session_id] = self.sessions / session_id
        return found

    def mode_file(self, mode: str, session_id: str | None) -> Path:
        return self.scope_dir(session_id) / f"{mode}-state.json"

    def canonical_file(self, session_id: str | None) -> Path:
        return self.scope_dir(session_id) / "skill-active-state.json"
