"""After a clear, keep watching the member: a hook or stale copy that rewrites it must be caught loudly.

Pure file checks (no Textual): `ClearWatch.check()` compares the watched files against the bytes they
had right after the clear and reports the first one that makes the mode active again, with who wrote
it when the file says (`source`, `transition_source`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rcs_tui.files.io import file_digest
from rcs_tui.files.layout import Layout
from rcs_tui.state.reader import parse_canonical, read_mode_file

DEFAULT_WATCH_SECONDS = 10.0


@dataclass(frozen=True)
class Resurrection:
    """A cleared member came back: which file, when it was written, and what wrote it (if recorded)."""

    mode: str
    scope: str | None
    path: Path
    written_at: float | None
    writer: str | None
    detail: str

    def message(self, root: Path, cleared_at: float) -> str:
        try:
            where = str(self.path.relative_to(root))
        except ValueError:
            where = str(self.path)
        when = (f"{max(0.0, self.written_at - cleared_at):.1f}s after the clear"
                if self.written_at is not None else "after the clear")
        who = f"written by {self.writer}" if self.writer else "the file does not say what wrote it"
        return f"{self.mode} is active again: {where} {self.detail}, {when}; {who}."


@dataclass
class ClearWatch:
    """Watches one cleared member's mode files (scope and root) and canonical set until `deadline`."""

    root: Path
    mode: str
    scope: str | None
    cleared_at: float
    deadline: float
    baseline: dict[Path, str | None] = field(default_factory=dict)

    @classmethod
    def start(cls, root: Path, mode: str, scope: str | None, now: float,
              seconds: float = DEFAULT_WATCH_SECONDS) -> ClearWatch:
        layout = Layout(root)
        paths = {layout.mode_file(mode, scope), layout.mode_file(mode, None), layout.canonical_file(scope)}
        return cls(root, mode, scope, now, now + seconds, {p: file_digest(p) for p in sorted(paths)})

    def expired(self, now: float) -> bool:
        return now >= self.deadline

    def check(self) -> Resurrection | None:
        """The first watched file that changed since the clear and lists the mode as active again."""
        layout = Layout(self.root)
        for path, before in self.baseline.items():
            if file_digest(path) == before:
                continue
            found = self._active_in(path, layout)
            if found is not None:
                return found
            self.baseline[path] = file_digest(path)  # changed but harmless: compare against this from now on
        return None

    def _active_in(self, path: Path, layout: Layout) -> Resurrection | None:
        try:
            mtime: float | None = path.stat().st_mtime
        except OSError:
            return None
        if path.name == "skill-active-state.json":
            canon = parse_canonical(path, layout.rcs, self.scope)
            if self.mode not in canon.members:
                return None
            data = canon.data or {}
            entry = next((e.raw for e in canon.entries if e.skill == self.mode), {})
            return Resurrection(self.mode, self.scope, path, mtime, _writer(entry) or _writer(data),
                                "lists it in the canonical set again")
        scope = None if path.parent == layout.state else self.scope
        mf = read_mode_file(path, self.mode, scope, layout.rcs)
        if not mf.active:
            return None
        where = "root copy" if scope is None and self.scope is not None else "mode file"
        return Resurrection(self.mode, scope, path, mtime, _writer(mf.data or {}),
                            f"({where}) says active: true, phase {mf.phase or '-'}")


def _writer(data: dict) -> str | None:
    parts = []
    for key in ("source", "transition_source"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            parts.append(f"{key}={value.strip()[:80]}")
    return ", ".join(parts) or None


__all__ = ["ClearWatch", "Resurrection", "DEFAULT_WATCH_SECONDS"]
