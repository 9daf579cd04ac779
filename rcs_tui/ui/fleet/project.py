"""One fleet project: its members by scope, doctor findings, waiting runs, and its actions.

Actions run through the project's own `rcs-tui … --json` (over ssh for a remote one): a dry run first,
shown in the console's confirmation modal (focus on Cancel), then the real run; a refusal is shown as the
console shows one. Everything shown comes from the project's snapshot document and is made inert first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from rcs_tui.core.attention import NEEDS_YOU
from rcs_tui.core.words import plural
from rcs_tui.fleet.actions import ActionError, CliActions, PlanChangedError
from rcs_tui.fleet.rows import Row, inert
from rcs_tui.ui.console.confirm import ConfirmPlan
from rcs_tui.ui.console.format import STATUS_STYLE
from rcs_tui.ui.console.notice import Notice
from rcs_tui.ui.fleet.doctor import FleetDoctor
from rcs_tui.ui.fleet.override import TaskOverrideForm
from rcs_tui.ui.linetable import LineTable, content_widths
from rcs_tui.ui.updates import show_content
from rcs_tui.views.health import HEALTH_STYLE

if TYPE_CHECKING:
    from rcs_tui.ui.fleet.app import FleetApp

MEMBER_COLUMNS = ("SCOPE", "MODE", "STATE", "PHASE")


def member_rows(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(scope, mode, state, phase) for every active or tombstoned mode file, root first."""
    health = {(m.get("scope"), m.get("mode")): m.get("health") for m in doc.get("members") or []
              if isinstance(m, dict)}
    out = []
    for scope in doc.get("scopes") or []:
        if not isinstance(scope, dict):
            continue
        where = inert(scope.get("scope"), 64)
        for mode, f in sorted((scope.get("modes") or {}).items()):
            if not isinstance(f, dict) or not (f.get("active") or f.get("outcome")):
                continue
            state = health.get((where, mode)) or ("active" if f.get("active") else inert(f.get("outcome"), 20))
            out.append((where, inert(mode, 64), inert(state, 20), inert(f.get("phase") or "", 30)))
    return out


class ProjectScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("d", "clear", "Clear"),
        Binding("C", "clear_all", "Clear ALL sessions", show=False),
        Binding("u", "undo", "Undo"),
        Binding("U", "redo", "Redo", show=False),
        Binding("D", "doctor", "Doctor"),
        Binding("o", "override", "Override task"),
        Binding("c", "console", "Console"),
    ]

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.busy = False

    @property
    def fleet(self) -> FleetApp:
        """The app, typed: this screen is only shown by the fleet (Textual types `app` as App[object])."""
        return cast("FleetApp", self.app)

    @property
    def row(self) -> Row:
        return self.fleet.rows[self.key]

    def compose(self) -> ComposeResult:
        yield Static(id="project-head")
        yield LineTable(id="project-members")
        with VerticalScroll(id="project-body-scroll"):  # the reasons and findings: tab, then scroll, on a short screen
            yield Static(id="project-body")
        yield Footer()

    def on_mount(self) -> None:
        self.show()
        self.query_one(LineTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("clear", "clear_all", "undo", "redo", "override"):
            return not (self.fleet.readonly or self.row.readonly_reason)
        return True

    # -- drawing ----------------------------------------------------------------------------
    def show(self) -> None:
        row = self.row
        p = row.project
        head = Text()
        head.append(inert(p.name, 60), style="bold")
        head.append(f"  {inert(p.host_label, 40)}:{inert(p.path, 120)}", style="dim")
        head.append(f"  {row.rank_name}\n", style="magenta" if row.rank == 0 else "")
        if row.error:
            head.append(f"{row.error}\n", style="bold red")
        if row.readonly_reason:
            head.append(f"{row.readonly_reason}\n", style="magenta")
        if row.watch == "poll":
            head.append(f"polled, not watched: {row.watch_reason}\n", style="yellow")
        doc = row.doc or {}
        active = doc.get("active_set") or []
        head.append("active set: ", style="bold")
        head.append(" + ".join(inert(m, 40) for m in active) or "(empty)")
        show_content(self.query_one("#project-head", Static), head)
        rows = [(f"{scope}\0{mode}", [Text(scope), Text(mode, style="bold"),
                                      Text(state, style=HEALTH_STYLE.get(state) or STATUS_STYLE.get(state, "")),
                                      Text(phase)])
                for scope, mode, state, phase in member_rows(doc)]
        table = self.query_one(LineTable)
        table.set_columns(MEMBER_COLUMNS, content_widths(MEMBER_COLUMNS, rows))
        table.set_rows(rows)
        show_content(self.query_one("#project-body", Static), self._body(doc, row))

    def _body(self, doc: dict[str, Any], row: Row) -> Text:
        out = Text()
        for kind in NEEDS_YOU:
            items = row.attention.get(kind.key) or []
            if items:
                out.append(f"{kind.heading}:\n", style="bold magenta" if kind.key == "waiting" else "bold yellow")
                for item in items[:8]:  # each with why, and how sure: the runtime said so, or rcs-tui inferred it
                    verdict = row.verdict(kind.key, item)
                    out.append(f"  {verdict.reason} ")
                    out.append(f"[{verdict.source}]\n", style="dim" if verdict.source == "inferred" else "cyan")
                if len(items) > 8:
                    out.append(f"  +{len(items) - 8} more\n", style="dim")
        for run in ((doc.get("rp1") or {}).get("waiting") or [])[:3]:
            if isinstance(run, dict):
                out.append(f"rp1 {inert(run.get('flow'), 30)} asks: ", style="magenta")
                out.append(inert(run.get("question") or "", 160) + "\n")
        findings = (doc.get("doctor") or {}).get("findings") or []
        if findings:
            out.append(f"doctor: {plural(len(findings), 'finding')} — D to review and repair them\n", style="bold")
            for f in findings[:5]:
                if isinstance(f, dict):
                    out.append(f"  {inert(f.get('id'), 80)}\n", style="dim")
        return out

    def current_member(self) -> tuple[str, str] | None:
        scope, _, mode = (self.query_one(LineTable).selected or "").partition("\0")
        return (scope, mode) if mode else None

    # -- actions ----------------------------------------------------------------------------
    def actions(self) -> CliActions:
        return CliActions(self.row.project, self.fleet.ssh)

    def action_back(self) -> None:
        self.app.pop_screen()
        self.fleet.call_after_refresh(self.fleet.redraw)

    def action_console(self) -> None:
        self.fleet.action_open_console(self.key)

    def _refuse(self, title: str, exc: BaseException) -> None:
        self.app.push_screen(Notice(title, f"{exc}\n\nNothing was changed."))

    async def _call(self, title: str, call) -> tuple[bool, Any]:
        """Run one CLI call off the event loop; a refusal is shown and returns (False, None)."""
        self.busy = True
        try:
            return True, await asyncio.to_thread(call)
        except ActionError as exc:
            self._refuse(f"{title} refused", exc)
            return False, None
        finally:
            self.busy = False

    async def _preview_then_run(self, title: str | Callable[[dict[str, Any]], str], label: str, preview_call,
                                run_call, done, warning: str | None = None,
                                preview: dict[str, Any] | None = None) -> None:
        """Dry run (unless `preview` is one just made) → confirm (Cancel focused) → run exactly the confirmed
        plan: `run_call(fingerprint)` passes the dry run's plan fingerprint, and the project's rcs-tui refuses
        when the files changed in between; then the new plan is shown for confirmation again. `title` may be a
        function of the preview (an undo names the action it undoes)."""
        if self.busy:
            self.notify("an action is still running", severity="warning")
            return
        if preview is None:
            ok, preview = await self._call(title if isinstance(title, str) else "Action", preview_call)
            if not ok:
                return
        fingerprint = preview.get("plan_fingerprint")
        heading = title(preview) if callable(title) else title
        verb = heading.split(":")[0]

        async def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            self.busy = True
            try:
                result = await asyncio.to_thread(run_call, fingerprint)
            except PlanChangedError as exc:
                self.busy = False
                await self._preview_then_run(title, label, preview_call, run_call, done,
                                             warning=f"{exc}. This is the new plan.")
                return
            except ActionError as exc:
                self._refuse(f"{verb} refused", exc)
                return
            finally:
                self.busy = False
            self.notify(done(result), timeout=5)

        where = f" on {self.row.project.host}" if self.row.project.remote else ""
        self.app.push_screen(ConfirmPlan(f"{heading}{where}", preview, label, warning), confirmed)

    async def action_clear(self, everywhere: bool = False) -> None:
        member = self.current_member()
        if member is None:
            self.notify("select a member first", severity="warning")
            return
        scope, mode = member
        acts = self.actions()
        where = "ROOT AND ALL SESSIONS" if everywhere else scope
        await self._preview_then_run(
            f"Clear {mode} in {where}", "Clear",
            lambda: acts.clear(mode, scope, all_sessions=everywhere, dry_run=True),
            lambda fp: acts.clear(mode, scope, all_sessions=everywhere, expect=fp),
            lambda r: f"cleared {mode} ({where}); journal {inert(r.get('journal_id'), 40)}")

    async def action_clear_all(self) -> None:
        await self.action_clear(everywhere=True)

    async def _history(self, verb: str) -> None:
        """Undo (`u`) or redo (`U`) the project's last action: the confirmation names the journal entry (its
        action, when, by whom) and each file now → after, as the console's does."""
        acts = self.actions()
        call = acts.undo if verb == "Undo" else acts.redo
        key = "undoes" if verb == "Undo" else "redoes"
        holder: dict[str, Any] = {}

        def preview() -> dict[str, Any]:
            holder.clear()
            holder.update(call(dry_run=True))
            return holder

        def done(r: dict[str, Any]) -> str:
            target = r.get("undone") or r.get("redone") or holder.get(key)
            restored = ", ".join(inert(p, 80) for p in r.get("restored") or []) or "nothing"
            return f"{'undone' if verb == 'Undo' else 'redone'} {inert(target, 40)}: restored {restored}"

        await self._preview_then_run(
            lambda p: f"{verb}: {inert(p.get('action'), 80)}", verb, preview,
            lambda fp: call(holder.get(key), expect=fp), done)

    async def action_undo(self) -> None:
        await self._history("Undo")

    async def action_redo(self) -> None:
        await self._history("Redo")

    def action_doctor(self) -> None:
        """The project's findings: repair one (`a`/enter) or all (`A`/`D`), each plan confirmed first."""
        where = f" on {self.row.project.host}" if self.row.project.remote else ""
        self.app.push_screen(FleetDoctor(self.actions(), bool(self.fleet.readonly or self.row.readonly_reason),
                                         f"Doctor — {inert(self.row.project.name, 60)}{where}"))

    def action_override(self) -> None:
        """Task and phase picked from lists, a reason; the project's own dry run checks them while the form
        stays open (a refusal keeps what was entered), then the plan is confirmed and applied."""
        if self.busy:
            self.notify("an action is still running", severity="warning")
            return
        acts = self.actions()

        async def chosen(values: tuple[str, str, str, dict[str, Any]] | None) -> None:
            if values is None:
                return
            task, to, reason, preview = values
            await self._preview_then_run(
                f"Override task {task} to {to}", "Override",
                lambda: acts.override(task, to, reason, dry_run=True),
                lambda fp: acts.override(task, to, reason, expect=fp),
                lambda r: f"task {task} is now {to}; journal {inert(r.get('journal_id'), 40)}", preview=preview)

        self.app.push_screen(TaskOverrideForm(self.row.project.name, self.row.doc or {},
                                              lambda task, to, reason: acts.override(task, to, reason, dry_run=True),
                                              doc_now=lambda: self.row.doc or {}),
                             chosen)
