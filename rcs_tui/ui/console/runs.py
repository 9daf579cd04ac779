"""The rp1 run feed: this project's runs by latest activity, filtered by status, workflow and text.

The feed is read in a worker (the database may be busy, or the loader reading it): the rows on screen
stay (and keys keep working) until the answer comes; the first read says "loading…". A run waiting for you
(or failed) says so in short in the `why` column when the width allows, and whole on the line under the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from rcs_tui.core.words import plural
from rcs_tui.rp1.source import FEED_FILTERS, Rp1Source, RunSummary
from rcs_tui.ui.console.background import OneAtATime
from rcs_tui.ui.console.format import STATUS_STYLE, age, parse_ts, plain, styled
from rcs_tui.ui.console.needs import Needs, why_cell, why_text
from rcs_tui.ui.console.table import Column, Row, project, set_columns
from rcs_tui.ui.console.typed_app import console_app
from rcs_tui.ui.console.walk import run_item
from rcs_tui.ui.linetable import LineTable
from rcs_tui.ui.updates import show_content

# The run id is what a row is: it shows whole whenever the width allows, else as the shortest prefix that
# tells the listed runs apart (`id_column`), and it is the last column to go. "deep-research" and
# "waiting (1?)" show whole at 80 and 60 columns; at 60 the step and age give way.
# `why` (a run waiting for you or failed, in short) shows when the width allows.
COLUMNS = (Column("run", 8, 10, grow=40, whole=True), Column("workflow", 13, 8), Column("status", 12, 9),
           Column("step", 12, 6, grow=10), Column("name", 14, 7, grow=30), Column("age", 5, 3),
           Column("why", 24, 0, grow=30))
SHORTEST_ID = 8  # a shortened run id keeps at least this much of its start (as short commit hashes do)
FEED_LIMIT = 200


@dataclass(frozen=True)
class RunFilter:
    """Parsed from the filter box: `status:waiting wf:build login` (words are a text search)."""

    status: str | None = None
    workflow: str | None = None
    text: str = ""

    @classmethod
    def parse(cls, raw: str) -> RunFilter:
        status = workflow = None
        words = []
        for word in raw.split():
            key, sep, value = word.partition(":")
            if sep and key in ("status", "s") and value:
                status = value
            elif sep and key in ("wf", "workflow", "w") and value:
                workflow = value
            else:
                words.append(word.lower())
        return cls(status, workflow, " ".join(words))

    def problem(self) -> str | None:
        if self.status and self.status not in FEED_FILTERS:
            return f"unknown status {self.status!r}; use one of {', '.join(FEED_FILTERS)}"
        return None

    def keep(self, s: RunSummary) -> bool:
        if not self.text:
            return True
        hay = " ".join(str(v or "") for v in (s.run.id, s.run.name, s.run.feature_id, s.run.flow,
                                              s.projection.current_step)).lower()
        return all(w in hay for w in self.text.split())


def unique_prefix(ids: list[str], least: int = SHORTEST_ID) -> int:
    """The length of the shortest start (at least `least`) that tells every id of `ids` apart: what a
    shortened id column keeps, so the user can still type it."""
    n = least
    ordered = sorted(ids)
    for a, b in zip(ordered, ordered[1:], strict=False):
        common = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            common += 1
        n = max(n, common + 1)
    return n


def id_column(rows: list[Row]) -> tuple[Column, ...]:
    """COLUMNS with the run column no narrower than the unique prefix of the runs listed (and its `…`)."""
    ids = [key for key, _ in rows]
    longest = max((len(i) for i in ids), default=0)
    least = min(unique_prefix(ids) + 1, longest)  # + 1: the `…` that says the id goes on
    run = COLUMNS[0]
    if least <= run.width:
        return COLUMNS
    return (replace(run, width=least, grow=max(0, run.width + run.grow - least)), *COLUMNS[1:])


def with_why(rows: list[Row], needs: Needs) -> list[Row]:
    """The feed's rows with their `why` cell: the verdict of each run that needs you (the same the scopes view
    and the fleet show), dim and ticked when acknowledged."""
    return [(key, [*cells, why_cell(needs, run_item(key))]) for key, cells in rows]


def run_detail(cells: list[str], key: str | None, needs: Needs) -> Text:
    """The line under the feed: why the selected run needs you, if it does (its reason names the run, its
    workflow and step), else the run whole (id, workflow, status, step)."""
    out = Text(no_wrap=False)
    item = run_item(key) if key else None
    if item is not None and needs.of(item):
        return why_text(needs, item)
    if key is None or not cells:
        return out
    out.append(plain(key), style="bold")
    out.append(f" {plain(cells[1])} ", style="cyan")
    out.append(plain(cells[2]))
    if cells[3] and cells[3] != "-":
        out.append(f" at {plain(cells[3])}")
    return out


def run_rows(source: Rp1Source, flt: RunFilter, now: float,
             cache: dict[str, tuple[tuple[object, ...], Row]] | None = None) -> tuple[list[Row], str | None]:
    """Feed rows, and a status line (database problem, or the counts). Each row holds its whole run id
    (the table shortens it when it must, keeping its start, which is what tells runs apart). `cache` keeps each
    run's row while what it shows is the same, so a busy feed builds (and the table compares) only the
    rows of runs that moved."""
    if flt.problem():
        return [], flt.problem()
    feed = source.feed(status=flt.status, workflow=flt.workflow, limit=FEED_LIMIT)
    if feed.status:
        return [], feed.status
    rows: list[Row] = []
    kept: dict[str, tuple[tuple[object, ...], Row]] = {}
    for s in feed.runs:
        if not flt.keep(s):
            continue
        p = s.projection
        last = parse_ts(p.last_activity)
        status = p.status + (f" ({len(p.pending_prompts)}?)" if p.pending_prompts else "")
        shows = (s.run.flow, status, p.current_step, s.run.name or s.run.feature_id,
                 age(now - last) if last else "-")
        hit = cache.get(s.run.id) if cache is not None else None
        row = hit[1] if hit is not None and hit[0] == shows else (s.run.id, [
            styled(s.run.id), styled(s.run.flow), styled(status, STATUS_STYLE.get(p.status, "")),
            styled(p.current_step or "-"), styled(shows[3] or "-", width=40), Text(shows[4])])
        kept[s.run.id] = (shows, row)
        rows.append(row)
    if cache is not None:
        cache.clear()
        cache.update(kept)
    return rows, f"{len(rows)} of {plural(feed.total, 'run')}"


class RunsPane(Vertical):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.reads = OneAtATime("rp1-feed")
        self._rows: dict[str, tuple[tuple[object, ...], Row]] = {}
        self.answered = False  # a read of the feed has been drawn
        self.pending: str | None = None  # the run n / N went to before the feed holding it was drawn
        self._note = Text()
        self._cells: dict[str, list[str]] = {}  # the drawn rows' whole cells (the table holds the shown ones)

    def compose(self) -> ComposeResult:
        yield Input(placeholder="status:waiting wf:build text…  (/)", id="runs-filter", classes="filter")
        table = LineTable(id="runs-table")
        set_columns(table, COLUMNS, self.app.size.width)
        yield table
        yield Static(id="runs-note", classes="detail")

    def show(self, source: Callable[[], Rp1Source | None], now: float) -> None:
        """Read the feed of `source()` (called in the worker: opening it may read too) and draw it."""
        flt = RunFilter.parse(self.query_one("#runs-filter", Input).value)
        cache = dict(self._rows)  # the worker's own: a replaced read must not touch the one drawn

        def read() -> tuple[list[Row], str | None, dict] | None:
            opened = source()
            if opened is None:
                return None
            return (*run_rows(opened, flt, now, cache), cache)

        if not self.answered:
            show_content(self.query_one("#runs-note", Static), Text("loading…", style="dim"))
        self.reads.run(self, read, self._draw)

    def _draw(self, answer: tuple[list[Row], str | None, dict] | None, _: BaseException | None) -> None:
        self.answered = True
        note = self.query_one("#runs-note", Static)
        table = self.query_one("#runs-table", LineTable)
        if answer is None:
            set_columns(table, COLUMNS, self.app.size.width)
            table.set_rows([])
            self.pending = None
            show_content(note, Text("no rp1 database", style="dim"))
            return
        rows, message, self._rows = answer
        rows = with_why(rows, console_app(self).needs)
        self._cells = {key: [c.plain if isinstance(c, Text) else c for c in cells] for key, cells in rows}
        columns = id_column(rows)
        table.set_rows(project(rows, columns, set_columns(table, columns, self.app.size.width, rows)))
        self._note = Text(plain(message or ""), style="dim" if rows else "yellow")
        if self.pending is not None and not self.reads.queued:
            self._reveal_drawn(self.pending)
        self._detail()

    def _detail(self) -> None:
        """The note under the table: the selected run and why it needs you, then the feed's counts."""
        table = self.query_one("#runs-table", LineTable)
        key = table.selected
        out = run_detail(self._cells.get(key or "", []), key, console_app(self).needs)
        if out.plain:
            out.append("\n")
        out.append_text(self._note)
        show_content(self.query_one("#runs-note", Static), out)

    def reveal(self, run_id: str) -> None:
        """Select run `run_id` (n / N went to it): now when the feed on screen holds it, else once the read
        under way is drawn (the filter emptied first when one is set)."""
        table = self.query_one("#runs-table", LineTable)
        table.focus()
        if run_id in table.keys:
            table.select_key(run_id)
            return
        self.pending = run_id
        self.query_one("#runs-filter", Input).value = ""
        console_app(self).refresh_views()  # read the feed again (after a read under way, if one is)

    def _reveal_drawn(self, run_id: str) -> None:
        self.pending = None
        table = self.query_one("#runs-table", LineTable)
        if run_id in table.keys:
            table.select_key(run_id)
        else:
            self.app.notify(f"run {run_id} needs you but is not among the {FEED_LIMIT} newest runs listed",
                            severity="warning", timeout=4)

    def on_line_table_highlighted(self, event: LineTable.Highlighted) -> None:
        if event.table.id == "runs-table":
            self._detail()
            self.screen.refresh_bindings()  # `a` is offered only on a run that needs you

    def selected(self) -> str | None:
        return self.query_one("#runs-table", LineTable).selected
