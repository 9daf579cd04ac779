"""Scope and worker details: what enter on a scope header or a worker row opens.

A scope shows what it holds (active set, canonical record, each member's health) and what the policy
would answer from there; a worker shows its status and heartbeat as the team directory has them, with
the files they come from. Both are read-only screens; esc goes back.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from rcs_tui.files.layout import Layout
from rcs_tui.ui.console.footer import FittedFooter
from rcs_tui.ui.console.format import age, plain, rel
from rcs_tui.ui.console.member import transitions_text
from rcs_tui.ui.console.needs import why_text
from rcs_tui.ui.console.scopes import scope_detail, scope_view
from rcs_tui.ui.console.statusbar import StatusBar
from rcs_tui.ui.console.team import heartbeat
from rcs_tui.ui.console.typed_app import console_app
from rcs_tui.ui.updates import show_content
from rcs_tui.views.health import HEALTH_STYLE
from rcs_tui.views.world import World


def scope_text(world: World, sid: str | None) -> Text:
    """A scope: its summary line, every member with its health and reason, the policy's transitions."""
    snap = world.snapshot
    if sid is not None and sid not in snap.sessions:
        return Text(f"session {plain(sid)} is gone (removed on disk).", style="yellow")
    out = scope_detail(world, f"scope:{sid or ''}")
    out.append("\nfile ", style="bold")
    out.append(rel(Layout(snap.root).canonical_file(sid), snap.root) + "\n", style="underline")
    view = scope_view(snap, sid)
    out.append("\nmembers\n", style="bold")
    if not view.members:
        out.append("  (none)\n", style="dim")
    for m in view.members:
        out.append(f"  {plain(m.mode):<15}", style="bold")
        out.append(f"{m.health:<15}", style=HEALTH_STYLE.get(m.health, ""))
        out.append(plain(m.reason) + "\n", style="dim")
    out.append("\ntransitions the policy allows from here\n", style="bold")
    out.append_text(transitions_text(snap.scope(sid)))
    return out


def worker_text(world: World, key: str, now: float) -> Text:
    """A worker (`team/worker`): state, task, heartbeat condition, pid, and where these come from."""
    team_name, _, name = key.partition("/")
    team = world.teams.get(team_name)
    worker = next((w for w in team.workers if w.name == name), None) if team else None
    out = Text()
    out.append(f"{plain(name)}", style="bold")
    out.append(f" in team {plain(team_name)}\n")
    if team is None or worker is None:
        out.append("No longer listed (its directory is gone).\n", style="yellow")
        return out
    beat = worker.heartbeat_age(now)
    for label, value in (("state", worker.state), ("task", worker.current_task_id or "-"),
                         ("reason", worker.reason or "-"), ("turns", "-" if worker.turn_count is None
                                                            else str(worker.turn_count)),
                         ("last turn", f"{plain(worker.last_turn_at or '-')}"
                                       + (f" ({age(beat)} ago)" if beat is not None else "")),
                         ("pid", "-" if worker.pid is None else f"{worker.pid}" + (
                             " (running)" if worker.pid_running else " (not running)"
                             if worker.pid_running is False else ""))):
        out.append(f"{label:>10}  ", style="bold")
        out.append(plain(value) + "\n")
    out.append(f"{'heartbeat':>10}  ", style="bold")
    out.append_text(heartbeat(worker, now))
    out.append("\n")
    if worker.dead_reason:
        out.append(f"\ndead: {worker.dead_reason}\n", style="bold red")
    wdir = team.dir / "workers" / name
    out.append("\nfiles\n", style="bold")
    for fname in ("status.json", "heartbeat.json"):
        out.append("  " + rel(wdir / fname, world.root) + "\n", style="underline")
    return out


class DetailScreen(Screen):
    """A read-only page of text over the status bar, redrawn as the world changes; esc goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with VerticalScroll(id="detail-scroll"):
            yield Static(id="detail-text")
        yield FittedFooter()

    def text(self, world: World, now: float) -> Text:
        raise NotImplementedError

    def show(self, world: World, now: float) -> None:
        show_content(self.query_one("#detail-text", Static), self.text(world, now))


class ScopeScreen(DetailScreen):
    """Pushed by enter on a scope header."""

    def __init__(self, sid: str | None) -> None:
        super().__init__()
        self.sid = sid

    def selection(self) -> tuple[Path | None, str | None]:
        return Layout(console_app(self).root).canonical_file(self.sid), self.sid or "root"

    def text(self, world: World, now: float) -> Text:
        return scope_text(world, self.sid)


class WorkerScreen(DetailScreen):
    """Pushed by enter on a worker row (`team/worker`)."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def selection(self) -> tuple[Path | None, str | None]:
        return None, self.key

    def needs_item(self) -> str:
        """The worker's "needs you" entry: `a` acknowledges it here too."""
        return self.key

    def text(self, world: World, now: float) -> Text:
        out = worker_text(world, self.key, now)
        needs = console_app(self).needs
        if needs.of(self.key):
            out.append("\n")
            out.append_text(why_text(needs, self.key, full=True))
            out.append("\n")
        return out
