"""What needs the operator in the console, and why: the project's verdicts (the same ones `snapshot --json`
and the fleet show, from `project.verdicts`), which rows of the scopes view they belong to, and how a row,
the detail line and a member's page say them ("stale · inferred"), acknowledged or not.

The verdicts are computed off the UI thread whenever a new World arrives (`compute`), with the
acknowledgements the project's history records (re-read only when the history file changed). An entry the operator
acknowledged stays listed, marked so, but n / N pass it by until its state changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.text import Text

from rcs_tui.core.acknowledged import Acknowledged, recorded_acks
from rcs_tui.core.attention import BY_KEY, REPORTED, Verdict
from rcs_tui.core.times import iso
from rcs_tui.ui.console.format import plain
from rcs_tui.views.world import World

POINTER_ITEM = "root/session.json"  # the stale-dead session pointer's entry (the scopes view's `pointer` row)
KIND_STYLE = {"waiting": "bold magenta", "failed": "bold red", "dead": "bold red", "resurrected": "bold red"}


def member_item(scope: str | None, mode: str) -> str:
    """A member's entry name, as verdicts and the history name it: `root/forge`, `<session>/team`."""
    return f"{scope or 'root'}/{mode}"


@dataclass
class Needs:
    """The project's verdicts, by entry, and what the operator acknowledged."""

    verdicts: tuple[Verdict, ...] = ()
    acked: Acknowledged = field(default_factory=Acknowledged)
    by_item: dict[str, list[Verdict]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_item = {}
        for v in self.verdicts:
            self.by_item.setdefault(v.item, []).append(v)

    def of(self, item: str | None) -> list[Verdict]:
        return self.by_item.get(item or "", [])

    def open(self, item: str | None) -> list[Verdict]:
        """The verdicts of `item` not acknowledged in their present state."""
        return [v for v in self.of(item) if not self.acked.covers(v)]

    def acknowledge(self, item: str | None) -> list[Verdict]:
        """Acknowledge every open verdict of `item` here; the ones acknowledged."""
        out = self.open(item)
        for v in out:
            self.acked.add(v)
        return out


def short(v: Verdict) -> str:
    """A verdict in a few words for a table cell: `stale · inferred`, `waiting · reported`."""
    kind = BY_KEY.get(v.kind)
    return f"{kind.noun if kind else v.kind} · {v.source}"


def why_cell(needs: Needs, item: str | None) -> Text:
    """The scopes table's `why` cell: the most urgent verdict in short (and how many more); dim and ticked
    when acknowledged."""
    found = needs.of(item)
    if not found:
        return Text("")
    open_ = needs.open(item)
    first = (open_ or found)[0]
    more = f" +{len(found) - 1}" if len(found) > 1 else ""
    if not open_:
        return Text(f"✓ {short(first)}{more} (acked)", style="dim")
    return Text(f"{short(first)}{more}", style=KIND_STYLE.get(first.kind, "yellow"))


def why_text(needs: Needs, item: str | None, *, full: bool = False) -> Text:
    """Why `item` needs the operator, one line per verdict: kind, source, reason; acknowledged or how to
    acknowledge it. `full` (a member's page): also since when, and what reported and inferred mean."""
    out = Text(no_wrap=False)
    for v in needs.of(item):
        acked = needs.acked.covers(v)
        kind = BY_KEY.get(v.kind)
        out.append("needs you: " if not acked else "acknowledged: ", style="bold" if not acked else "dim")
        out.append(kind.noun if kind else v.kind, style=KIND_STYLE.get(v.kind, "yellow") if not acked else "dim")
        out.append(f" · {v.source}", style="cyan" if v.source == REPORTED else "yellow")
        out.append(f" — {plain(v.reason)}")
        if full:
            if v.since is not None:
                out.append(f"\n    since {iso(v.since)}", style="dim")
            out.append("\n    " + ("the runtime or rp1 said so itself" if v.source == REPORTED else
                                   "rcs-tui concluded it from what it saw on disk"), style="dim")
            out.append("\n    " + ("acknowledged: n / N pass it by until it changes" if acked else
                                   "a acknowledges it: n / N then pass it by until it changes"), style="dim")
        elif acked:
            out.append(" (quiet until it changes)", style="dim")
        out.append("\n")
    out.rstrip()
    return out


def compute(world: World, now: float, root: Path, rp1: Callable[[], Any] | None, rp1_path: Path | None,
            cache: dict[Any, Any], history_seen: object) -> tuple[tuple[Verdict, ...], object, dict[str, float] | None]:
    """The verdicts of `world` (run off the UI thread), the history file's stamp, and the acknowledgements the
    history records, read again only when the file changed since `history_seen` (else None)."""
    from rcs_tui.project.recorder import read_history
    from rcs_tui.project.verdicts import world_verdicts
    from rcs_tui.ui.console.history import history_stamp

    _, verdicts = world_verdicts(world, now, rp1, rp1_path, cache)
    stamp = history_stamp(root)
    recorded = None if stamp == history_seen else recorded_acks(read_history(root))
    return tuple(verdicts), stamp, recorded
