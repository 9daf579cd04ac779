"""Find rp1 state machines: skills and agents under plugin roots, with packaged fallbacks.

A workflow's machine lives in `plugins/<base|dev|utils>/skills/<wf>/SKILL.md`; an agent's in
`plugins/<group>/agents/<agent>.md`. The real machines documented for rp1 ship as fallbacks so runs
stay validated even where no plugin tree is installed. A file found on disk wins over a fallback.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from rcs_tui.core.machine import MachineError, StateMachine, machine_from_markdown
from rcs_tui.files.io import read_bounded

PLUGIN_GROUPS = ("base", "dev", "utils")
MAX_MARKDOWN_BYTES = 1024 * 1024


@dataclass(frozen=True)
class MachineInfo:
    """One discovered machine (or the error that kept it from parsing)."""

    name: str
    kind: str  # "skill" | "agent"
    source: str  # file path, or "builtin:<name>.md"
    machine: StateMachine | None
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        m = self.machine
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "states": list(m.bfs_order()) if m else [],
            "initial": list(m.initial) if m else [],
            "terminal": list(m.terminal) if m else [],
            "edges": [[e.source, e.target] for e in m.edges] if m else [],
            "error": self.error,
        }


def default_plugin_roots(project_root: Path | None) -> list[Path]:
    """`$RP1_PLUGIN_ROOTS` (os.pathsep list), else the project root and `~/.rp1`."""
    env = os.environ.get("RP1_PLUGIN_ROOTS")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    roots = [project_root] if project_root else []
    roots.append(Path.home() / ".rp1")
    return roots


def _candidates(root: Path) -> Iterable[tuple[str, str, Path]]:
    plugins = root / "plugins"
    for group in PLUGIN_GROUPS:
        skills = plugins / group / "skills"
        if skills.is_dir():
            for d in sorted(skills.iterdir()):
                if (d / "SKILL.md").is_file():
                    yield d.name, "skill", d / "SKILL.md"
        agents = plugins / group / "agents"
        if agents.is_dir():
            for f in sorted(agents.glob("*.md")):
                yield f.stem, "agent", f


def _parse(name: str, kind: str, source: str, text: str) -> MachineInfo | None:
    try:
        machine = machine_from_markdown(text, name)
    except MachineError as exc:
        return MachineInfo(name, kind, source, None, f"invalid state machine: {exc}")
    if machine is None:
        return None
    return MachineInfo(name, kind, source, machine)


def builtin_machines() -> dict[str, MachineInfo]:
    """The packaged fallback machines."""
    out: dict[str, MachineInfo] = {}
    for entry in sorted(files("rcs_tui.rp1").joinpath("machines").iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".md"):
            continue
        text = entry.read_text(encoding="utf-8")
        name = entry.name[:-3]
        kind = "agent" if "\nkind: agent\n" in text else "skill"
        info = _parse(name, kind, f"builtin:{entry.name}", text)
        if info:
            out[name] = info
    return out


def discover_machines(roots: Iterable[Path] | None = None, *, builtins: bool = True) -> dict[str, MachineInfo]:
    """Every machine by name: earlier roots win over later ones, any file over the fallbacks.

    Files without a `## STATE-MACHINE` section are skipped (their workflows are untracked).
    """
    found: dict[str, MachineInfo] = {}
    for root in roots or ():
        for name, kind, path in _candidates(Path(root)):
            if name in found:
                continue
            got = read_bounded(path, max_bytes=MAX_MARKDOWN_BYTES)
            if got.raw is None:
                if got.exists:
                    why = "file too large" if (got.error or "").startswith("too large") else got.error
                    found[name] = MachineInfo(name, kind, str(path), None, why)
                continue
            text = got.raw.decode("utf-8", "replace")
            info = _parse(name, kind, str(path), text)
            if info:
                found[name] = info
    if builtins:
        for name, info in builtin_machines().items():
            found.setdefault(name, info)
    return found


class MachineRegistry:
    """Name -> machine lookup used by projection and timelines (None = untracked workflow)."""

    def __init__(self, infos: dict[str, MachineInfo]) -> None:
        self.infos = infos

    @classmethod
    def discover(cls, roots: Iterable[Path] | None = None, *, builtins: bool = True) -> MachineRegistry:
        return cls(discover_machines(roots, builtins=builtins))

    def get(self, name: str | None) -> StateMachine | None:
        info = self.infos.get(name or "")
        return info.machine if info else None
