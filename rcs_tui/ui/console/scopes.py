"""Scopes: root and every session, each with its combined active set and every member's health."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from rcs_tui.core.words import plural
from rcs_tui.files.layout import Layout
from rcs_tui.state.reader import compute_members
from rcs_tui.state.session import Resolution
from rcs_tui.state.snapshot import Member, Snapshot
from rcs_tui.ui.column_fit import cell_width, content_widths
from rcs_tui.ui.console.format import age, age_of, plain, rel, short_sid, styled
from rcs_tui.ui.console.needs import POINTER_ITEM, Needs, member_item, why_cell, why_text
from rcs_tui.ui.console.table import Column, DrawnFrom, Row, project, set_columns
from rcs_tui.ui.console.typed_app import console_app
from rcs_tui.ui.linetable import LineTable
from rcs_tui.ui.updates import show_content
from rcs_tui.views.health import HEALTH_GLYPH, HEALTH_STYLE
from rcs_tui.views.world import World

COLLAPSE_OVER = 30  # scopes
# At 80 columns all but `why` fit (the detail line under the table says why the selected row needs you);
# at 60 iter and phase give way too (the detail line still names the phase).
COLUMNS = (Column("scope / mode", 19, 9, grow=9), Column("health", 11, 8), Column("phase", 12, 2, grow=8),
           Column("iter", 5, 1), Column("label", 15, 6, grow=25), Column("age", 5, 3),
           Column("why", 26, 0, grow=30))
LABEL_WIDTH = COLUMNS[4].width


def active_label(names: tuple[str, ...] | list[str], width: int = LABEL_WIDTH) -> str:
    """A scope's active set for its table cell, always whole mode names: `team+forge`, or as many as
    fit and how many more (`team+forge +2`), else how many (`3 modes`)."""
    return _label(tuple(names), width)


@lru_cache(maxsize=4096)
def _label(names: tuple[str, ...], width: int) -> str:
    """`active_label`, once per active set and width: thousands of sessions share a few active sets."""
    if not names:
        return "(none)"
    for k in range(len(names), 0, -1):
        text = "+".join(names[:k]) + (f" +{len(names) - k}" if k < len(names) else "")
        if len(text) <= width:
            return text
    return f"{len(names)} modes" if len(names) > 1 else plain(names[0], width)


@dataclass(frozen=True)
class ScopeView:
    """One scope as the console lists it: its members as the core classifies them."""

    session_id: str | None
    current: bool
    members: tuple[Member, ...]
    active: tuple[str, ...]
    canonical: tuple[str, ...]


def scope_view(snap: Snapshot, sid: str | None, layout: Layout | None = None) -> ScopeView:
    """One scope's view; its members come from the core's classifier, never re-derived here."""
    current = sid == snap.session_id
    if current:
        members = snap.members
    else:
        res = Resolution(sid, "explicit", snap.resolution.pointer)
        members = compute_members(layout or Layout(snap.root), res, snap.root_scope, snap.sessions)
    scope = snap.scope(sid)
    canon = scope.canonical.members if scope and scope.canonical and scope.canonical.usable else ()
    return ScopeView(sid, current, tuple(members), scope.active_modes() if scope else (), canon)


def iter_scope_views(snap: Snapshot) -> Iterator[ScopeView]:
    """Root first, then sessions, each computed only when asked for."""
    layout = Layout(snap.root)
    for sid in [None, *sorted(snap.sessions)]:
        yield scope_view(snap, sid, layout)


def scope_views(snap: Snapshot) -> list[ScopeView]:
    """Root first, then sessions; members come from the core's classifier, never re-derived here."""
    return list(iter_scope_views(snap))


def collapsing(snap: Snapshot, listed: Mapping[str, object] | None = None) -> bool:
    """Past this many scopes the table lists the others as one row each (enter expands one). `listed`: the
    sessions whose active sets were read ahead of the full read (`World.listed`), counted too."""
    return max(len(snap.sessions), len(listed) if listed is not None else 0) + 1 > COLLAPSE_OVER


def session_ids(world: World) -> list[str]:
    """Every session the list shows, in name order: read in full, or only its active set so far."""
    listed = world.listed
    sessions = world.snapshot.sessions
    return sorted(sessions.keys() | listed.keys()) if listed is not None else sorted(sessions)


def read_ahead(world: World, sid: str | None) -> tuple[str, ...] | None:
    """The active set of a session read ahead of the full read (its own scope not read yet), else None.
    The current session is always read in full (the first frame shows it)."""
    listed = world.listed
    if listed is None or sid is None or sid == world.snapshot.session_id:
        return None
    return listed.get(sid)


def member_key(view: str | None, m: Member) -> str:
    """Row key: the scope listing it, the scope its file lives in (root for survivors), the mode."""
    return f"member:{view or ''}:{m.scope or ''}:{m.mode}"


def split_member_key(key: str | None) -> tuple[str | None, str | None, str] | None:
    if not key or not key.startswith("member:"):
        return None
    _, view, scope, mode = key.split(":", 3)
    return (view or None), (scope or None), mode


def row_scope(key: str) -> str | None:
    """The scope a row belongs to (the one listing it): keeps the cursor there when its row goes."""
    parts = split_member_key(key)
    if parts is not None:
        return parts[0]
    return (key.split(":", 1)[1] or None) if key.startswith("scope:") else key


def row_item(key: str | None) -> str | None:
    """The "needs you" entry a row shows: a member's (`root/forge`), the stale-dead pointer's; else None."""
    if key == "pointer":
        return POINTER_ITEM
    parts = split_member_key(key)
    return None if parts is None else member_item(parts[1], parts[2])


def parse_member_key(key: str | None) -> tuple[str | None, str] | None:
    """(scope the member's file lives in, mode): what a clear acts on."""
    parts = split_member_key(key)
    return None if parts is None else (parts[1], parts[2])


def member_cells(m: Member, now: float, needs: Needs | None = None) -> list[Text]:
    f = m.file
    iteration = "-"
    if f and f.iteration is not None:
        iteration = f"{f.iteration}/{f.max_iterations if f.max_iterations is not None else '?'}"
    label = (f.outcome.display if f else None) or ("running" if f and f.active else "-")
    glyph = HEALTH_GLYPH.get(m.health, "?")
    where = "  " + ("↳root " if m.scope is None and m.health == "root-survivor" else "") + m.mode
    health = Text(f"{glyph} {m.health.replace('root-', '')}", style=HEALTH_STYLE.get(m.health, ""))
    why = why_cell(needs, member_item(m.scope, m.mode)) if needs is not None else Text("")
    if f is not None and f.error is not None:
        # What is on disk cannot be read: say so, and since when (the file's own write time), never older data.
        since = "-" if f.mtime is None else age(max(now - f.mtime, 0.0))
        return [styled(where), health, Text("unreadable", style="bold red"), Text("-"),
                styled(f.error, "red"), Text(since), why]
    return [styled(where), health, styled(f.phase if f and f.phase else "-"), Text(iteration), styled(label),
            Text(age_of(f.data if f else None, now)), why]


# A one-row scope as last built: the Scope it was built from (None: from an active set read ahead), the
# active set and stale-dead mark it shows, and the row.
Kept = tuple[object, tuple[str, ...], bool, Row]


def scope_rows(world: World, now: float, needle: str = "", expanded: Collection[str | None] = (),
               cache: dict[str, Kept] | None = None, how: bool = True,
               fit: tuple[int, int] = (17, LABEL_WIDTH), needs: Needs | None = None) -> list[Row]:
    """Rows of the table. With more than COLLAPSE_OVER scopes (and no filter) only root, the current
    scope and the `expanded` ones list their members; the others are one row each, and their members
    are not even computed (at 1 000 sessions that is 1 000 rows instead of 11 000). A session known
    only by its active set so far (`World.listed`, while the full read is pending) is such a row too,
    whatever else is asked (a filter lists it when its id matches). `cache` keeps those one-row scopes
    between calls: a row is built again only when the active set or the stale-dead mark it shows
    changed (the same Scope object shows the same, so it is not even asked again). `how`:
    the phase column is shown, so the current scope's row says there how it was resolved. `fit`: the
    cells a scope's id and its active set have (whole session ids whenever the column allows). `needs`:
    why each row needs the operator (the `why` column)."""
    snap = world.snapshot
    rows: list[Row] = []
    pointer = snap.resolution.pointer
    if pointer.stale_dead:
        rows.append(("pointer", [Text("⚠ session.json", style="bold yellow"), Text("stale-dead", style="bold yellow"),
                                 styled(short_sid(pointer.session_id, 12)), Text(""), Text(""), Text(""),
                                 why_cell(needs, POINTER_ITEM) if needs is not None else Text("")]))
    collapse = not needle and collapsing(snap, world.listed)
    layout = Layout(snap.root)
    kept: dict[str, Kept] = {}
    for sid in [None, *session_ids(world)]:
        current = sid == snap.session_id
        ahead = read_ahead(world, sid)
        if ahead is not None or (collapse and not current and sid is not None and sid not in expanded):
            assert sid is not None
            if needle and needle not in sid:
                continue
            row = _one_row(snap, sid, ahead, cache, kept, fit)
            rows.append(row)
            continue
        view = scope_view(snap, sid, layout)
        if needle and not any(needle in m.mode for m in view.members) and needle not in (view.session_id or "root"):
            continue
        rows.append(scope_header(snap, sid, current, how=how, fit=fit))
        for m in view.members:
            if needle and needle not in m.mode:
                continue
            rows.append((member_key(view.session_id, m), member_cells(m, now, needs)))
    if cache is not None:
        cache.clear()
        cache.update(kept)
    return rows


def _one_row(snap: Snapshot, sid: str, ahead: tuple[str, ...] | None, cache: dict[str, Kept] | None,
             kept: dict[str, Kept], fit: tuple[int, int]) -> Row:
    """A scope's one row (collapsed), from the cache while what it shows is unchanged."""
    scope = snap.sessions.get(sid) if ahead is None else None
    stale = snap.resolution.pointer.stale_dead and sid == snap.resolution.pointer.session_id
    hit = cache.get(sid) if cache is not None else None
    if hit is not None and scope is not None and hit[0] is scope and hit[2] == stale:
        kept[sid] = hit
        return hit[3]
    active = ahead if ahead is not None else scope.active_modes() if scope is not None else ()
    if hit is not None and hit[1] == active and hit[2] == stale:
        row = hit[3]
    else:
        row = scope_header(snap, sid, False, collapsed=True, fit=fit, active=active)
    kept[sid] = (scope, active, stale, row)
    return row


def scope_header(snap: Snapshot, sid: str | None, current: bool, *, collapsed: bool = False,
                 how: bool = True, fit: tuple[int, int] = (17, LABEL_WIDTH),
                 active: tuple[str, ...] | None = None) -> Row:
    """A scope's own row: name, current/stale-dead, how it was resolved (`current via` in the health
    column, the source in the phase column; just `current` when that column is not shown), its active set
    (`active` when known already, else the scope's)."""
    pointer = snap.resolution.pointer
    if active is None:
        scope = snap.scope(sid)
        active = scope.active_modes() if scope else ()
    marker = "◆" if current else ("▸" if collapsed else "◇")
    stale_ptr = pointer.stale_dead and sid == pointer.session_id
    return (f"scope:{sid or ''}", [
        Text(f"{marker} {short_sid(sid, fit[0])}", style="bold cyan" if current else "bold"),
        Text(("current via" if how else "current") if current else ("stale-dead" if stale_ptr else ""),
             style="bold cyan" if current else "bold yellow"),
        Text(snap.resolution.source if current else "", style="dim"), Text(""),
        Text(active_label(active, fit[1]), style="green" if active else "dim"), Text(""), Text("")])


def scope_detail(world: World, key: str | None, needs: Needs | None = None) -> Text:
    """The line under the table: why a member has its health (and why it needs you, reported or inferred),
    or what a scope holds."""
    snap = world.snapshot
    out = Text(no_wrap=False)
    if key == "pointer":
        p = snap.resolution.pointer
        out.append("session.json ", style="bold")
        out.append(f"points at {plain(p.session_id)}: {plain(p.reason)} — never trusted; ", style="yellow")
        out.append("press D for the doctor")
        _needs_line(out, needs, POINTER_ITEM)
        return out
    parsed = split_member_key(key)
    if parsed:
        sid, scope, mode = parsed
        view = scope_view(snap, sid) if sid is None or sid in snap.sessions else None
        m = next((x for x in (view.members if view else ()) if x.mode == mode and x.scope == scope), None)
        if m is None:
            return out
        out.append(f"{m.mode} ", style="bold")
        out.append(f"{m.health}: ", style=HEALTH_STYLE.get(m.health, ""))
        out.append(plain(m.reason))
        _needs_line(out, needs, member_item(m.scope, m.mode))
        out.append(f"\n{rel(m.file.path if m.file else None, snap.root)}", style="dim")
        return out
    if key and key.startswith("scope:"):
        sid = key.split(":", 1)[1] or None
        ahead = read_ahead(world, sid)
        if ahead is not None:
            out.append(f"session {plain(sid)}", style="bold")
            out.append("\nactive: ")
            out.append(" + ".join(ahead) or "(none)", style="green")
            out.append("   (its members are still being read)", style="dim")
            return out
        if sid is not None and sid not in snap.sessions:
            return out
        view = scope_view(snap, sid)
        out.append("root" if sid is None else f"session {plain(sid)}", style="bold")
        if view.current:
            out.append(f" — current, resolved via {snap.resolution.source}", style="cyan")
        out.append("\nactive: ")
        out.append(" + ".join(view.active) or "(none)", style="green")
        out.append("   canonical: ")
        out.append(", ".join(view.canonical) or "(no usable canonical set)")
        if collapsing(snap, world.listed) and not view.current and sid is not None:
            out.append(f"   ({plural(len(view.members), 'member')}; enter shows or hides them)", style="dim")
    return out


def _needs_line(out: Text, needs: Needs | None, item: str) -> None:
    if needs is not None and needs.of(item):
        out.append("\n")
        out.append_text(why_text(needs, item))


class ScopesPane(Vertical):
    """The scopes table plus a detail line for the selected row; `/` filters by mode or session."""

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter modes/sessions…", id="scopes-filter", classes="filter")
        table = LineTable(id="scopes-table", sortable=False)
        set_columns(table, COLUMNS, self.app.size.width)
        yield table
        yield Static(id="scopes-detail", classes="detail")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.expanded: set[str | None] = set()
        self._rows: dict[str, Kept] = {}
        self._fit: tuple[int, int] = (17, LABEL_WIDTH)
        self._hint: list[int] | None = None  # the widths the last drawing's rows wanted
        self.drawn = DrawnFrom()

    def show(self, world: World, now: float) -> None:
        needle = self.query_one("#scopes-filter", Input).value.strip()
        needs = console_app(self).needs
        if self.drawn.same(now, world.snapshot, world.listed, needle, frozenset(self.expanded), self.app.size.width,
                           needs):
            return
        table = self.query_one("#scopes-table", LineTable)
        width = self.app.size.width
        # Fitted to the widths the last drawing's rows wanted (the first drawing: as wide as each may grow);
        # when these rows want others, fitted again and, if a scope's id or active set now gets more or
        # fewer cells, built again: no column is cut while another has cells to spare.
        shown = set_columns(table, COLUMNS, width, content=self._hint)
        fit = self._fit_of(table)
        if fit != self._fit:  # cached one-row scopes were cut for other widths
            self._rows.clear()
            self._fit = fit
        rows = scope_rows(world, now, needle, self.expanded, self._rows, how=COLUMNS[2] in shown, fit=fit,
                          needs=needs)
        content = self._content(rows, world)
        if content != self._hint:
            self._hint = content
            refit = set_columns(table, COLUMNS, width, content=content)
            if self._fit_of(table) != fit or (COLUMNS[2] in refit) != (COLUMNS[2] in shown):
                self._fit = fit = self._fit_of(table)
                self._rows.clear()
                rows = scope_rows(world, now, needle, self.expanded, self._rows, how=COLUMNS[2] in refit,
                                  fit=fit, needs=needs)
            shown = refit
        table.set_rows(project(rows, COLUMNS, shown), group=row_scope)
        show_content(self.query_one("#scopes-detail", Static), scope_detail(world, table.selected, needs))

    @staticmethod
    def _fit_of(table: LineTable) -> tuple[int, int]:
        """The cells a scope's id and its active set have in the table as fitted now."""
        return ((table.column_width(COLUMNS[0].label) or COLUMNS[0].width) - 2,
                table.column_width(COLUMNS[4].label) or LABEL_WIDTH)

    def _content(self, rows: list[Row], world: World) -> list[int]:
        """Each column's widest cell, whole: measured on the rows of listed scopes and members; a one-row
        scope (cached, thousands of them at scale) counts by its whole session id and its active set's cell."""
        collapsed = {id(kept[3]) for kept in self._rows.values()}
        content = content_widths([row[1] for row in rows if id(row) not in collapsed], len(COLUMNS))
        longest = max((len(sid) for sid in world.snapshot.sessions), default=0)
        if world.listed is not None:
            longest = max(longest, max((len(sid) for sid in world.listed), default=0))
        content[0] = max(content[0], 2 + longest)
        if collapsed:
            content[1] = max(content[1], len("stale-dead"))
            content[4] = max(content[4], max(cell_width(kept[3][1][4]) for kept in self._rows.values()))
        return content

    def selected(self) -> str | None:
        return self.query_one("#scopes-table", LineTable).selected

    def toggle(self, key: str | None) -> bool:
        """Expand or collapse the scope row `key` (only when the table collapses scopes)."""
        world = getattr(self.app, "world", None)
        if world is None or not key or not key.startswith("scope:") or not collapsing(world.snapshot, world.listed):
            return False
        sid = key.split(":", 1)[1] or None
        if sid is None or sid == world.snapshot.session_id:
            return False
        self.expanded ^= {sid}
        self.show(world, console_app(self).clock())
        return True

    def on_line_table_highlighted(self, event: LineTable.Highlighted) -> None:
        world = getattr(self.app, "world", None)
        if world is not None:
            show_content(self.query_one("#scopes-detail", Static),
                         scope_detail(world, event.key, console_app(self).needs))
        self.screen.refresh_bindings()  # `a` is offered only on a row that needs you
