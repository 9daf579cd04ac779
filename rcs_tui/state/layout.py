"""Where things live: project root discovery and the paths of the `.rcs` tree."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


class RootNotFound(Exception):
    """No project root could be determined."""


def find_root(explicit: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> Path:
    """`--root`, else `RCS_ROOT`, else the nearest ancestor of the cwd holding `.rcs/`."""
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_dir():
            raise RootNotFound(f"--root {explicit}: not a directory")
        return path.resolve()
    env = os.environ.get("RCS_ROOT")
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise RootNotFound(f"RCS_ROOT={env}: not a directory")
        return path.resolve()
    start = (cwd or Path.cwd()).resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".rcs").is_dir():
            return candidate
    raise RootNotFound(f"no .rcs/ directory in {start} or any parent; pass --root DIR or set RCS_ROOT")


@dataclass(frozen=True)
class Layout:
    """Paths of one project's `.rcs` tree."""

    root: Path

    @property
    def rcs(self) -> Path:
        return self.root / ".rcs"

    @property
    def state(self) -> Path:
        return self.rcs / "state"

    @property
    def sessions(self) -> Path:
        return self.state / "sessions"

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
        return self.state if session_id is None else self.sessions / session_id

    def mode_file(self, mode: str, session_id: str | None) -> Path:
        return self.scope_dir(session_id) / f"{mode}-state.json"

    def canonical_file(self, session_id: str | None) -> Path:
        return self.scope_dir(session_id) / "skill-active-state.json"
