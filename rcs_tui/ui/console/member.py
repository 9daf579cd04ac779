"""One member in detail: its mode file (pretty, with path), canonical entry, health reason, and
the transitions the policy would allow from the scope's current set."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from rcs_tui.core.modes import TRACKED_MODES
from rcs_tui.core.policy import decide
from rcs_tui.files.layout import Layout
from rcs_tui.state.snapshot import Member, Scope
from rcs_tui.ui.console.footer import FittedFooter
from rcs_tui.ui.console.format import plain, pretty_json, rel
from rcs_tui.ui.console.needs import Needs, member_item, why_text
from rcs_tui.ui.console.scopes import iter_scope_views, scope_view
from rcs_tui.ui.console.statusbar import StatusBar
from rcs_tui.ui.console.typed_app import console_app
from rcs_tui.ui.updates import show_content
from rcs_tui.views.health import HEALTH_STYLE
from rcs_tui.views.world import World

KIND_STYLE = {"noop": "dim", "start": "green", "overlap": "green", "auto-complete": "cyan", "deny": "red"}


def transitions_text(scope: Scope | None) -> Text:
    """For every tracked mode: what `policy.decide` answers against this scope's active set."""
    active = scope.active_modes() if scope else ()
    data = {m: f.data for m, f in (scope.modes.items() if scope else [])}
    out = Text()
    out.append("active set: ", style="bold")
    out.append((" + ".join(active) or "(empty)") + "\n")
    for mode in TRACKED_MODES:
        d = decide(mode, active, data)
        out.append(f"  {mode:<15}", style="bold")
        out.append(f"{d.kind:<14}", style=KIND_STYLE.get(d.kind, ""))
        if d.allowed:
            out.append("→ " + (" + ".join(d.active_after) or "-"), style="dim")
        else:
            out.append(f"clear {d.clear_hint} first", style="dim")
        out.append("\n")
    return out


def member_text(world: World, sid: str | None, mode: str, needs: Needs | None = None) -> tuple[Text, Member | None]:
    """The member's page; `needs`: why it needs you (each verdict in full, reported or inferred,
    acknowledged or not)."""
    snap = world.snapshot
    # Only the scope `sid` can list a member whose file lives there (root: root first, then the others).
    views = iter_scope_views(snap) if sid is None else iter([scope_view(snap, sid)] if sid in snap.sessions else [])
    member = next((m for v in views for m in v.members if m.mode == mode and m.scope == sid), None)
    out = Text()
    where = "root" if sid is None else f"session {sid}"
    out.append(f"{mode}", style="bold")
    out.append(f" in {plain(where)}\n")
    if member is None:
        out.append("No longer a member of this scope (cleared or changed on disk).\n", style="yellow")
        return out, None
    out.append("health ", style="bold")
    out.append(f"{member.health}", style=HEALTH_STYLE.get(member.health, ""))
    out.append(f" — {plain(member.reason)}\n")
    if needs is not None and needs.of(member_item(sid, mode)):
        out.append_text(why_text(needs, member_item(sid, mode), full=True))
        out.append("\n")
    f = member.file
    if f is not None:
        label = f.outcome
        out.append("lifecycle ", style="bold")
        out.append(f"{label.display or 'running'}")
        if label.source:
            out.append(f" (from {label.source})", style="dim")
        out.append("\n")
    out.append("\nmode file ", style="bold")
    out.append(rel(f.path if f else None, snap.root) + "\n", style="underline")
    if f is None:
        out.append("  (no mode file)\n", style="yellow")
    elif f.error:
        out.append(f"  unreadable: {plain(f.error)}\n", style="red")
    else:
        out.append_text(pretty_json(f.data))
        out.append("\n")
    out.append("\ncanonical entry ", style="bold")
    scope = snap.scope(sid)
    canon = scope.canonical if scope else None
    out.append(rel(canon.path if canon and canon.exists else None, snap.root) + "\n", style="underline")
    if member.entry is not None:
        out.append_text(pretty_json(member.entry.raw or {"skill": member.entry.skill}))
        out.append("\n")
    else:
        out.append("  (no canonical entry lists it)\n", style="yellow")
    out.append("\ntransitions the policy allows from here\n", style="bold")
    out.append_text(transitions_text(snap.scope(sid)))
    return out, member


class MemberScreen(Screen):
    """Pushed by enter on a member row; `d` clears it, `a` acknowledges why it needs you, esc goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, sid: str | None, mode: str) -> None:
        super().__init__()
        self.sid = sid
        self.mode = mode

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with VerticalScroll(id="member-scroll"):
            yield Static(id="member-text")
        yield FittedFooter()

    def current_member(self) -> tuple[str | None, str] | None:
        return self.sid, self.mode

    def selection(self) -> tuple[Path | None, str | None]:
        return Layout(console_app(self).root).mode_file(self.mode, self.sid), self.mode

    def show(self, world: World, now: float) -> None:
        text, _ = member_text(world, self.sid, self.mode, console_app(self).needs)
        show_content(self.query_one("#member-text", Static), text)
