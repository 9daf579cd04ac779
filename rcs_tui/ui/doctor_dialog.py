"""The doctor: findings with their proposed repairs; a repair runs only after confirmation, through the
core, and the doctor re-diagnoses afterwards to show whether it held.

The diagnosis and the repairs run in workers (they read the rp1 database and take the store lock): the
dialog says "diagnosing…" / "applying…" meanwhile and keeps taking keys."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from rcs_tui.core.words import plural
from rcs_tui.project.doctor import Finding, diagnose, fix
from rcs_tui.ui.console.background import off_thread
from rcs_tui.ui.console.confirm import ConfirmPlan
from rcs_tui.ui.console.format import plain, styled
from rcs_tui.ui.console.table import Column, Row, project, set_columns
from rcs_tui.ui.linetable import LineTable

# Scope and subject grow so session ids and subjects show whole at 120 columns; the detail line says all.
COLUMNS = (Column("sev", 5, 9), Column("kind", 18, 8), Column("scope", 12, 6, grow=14),
           Column("subject", 14, 7, grow=30), Column("repair", 6, 5))
SEVERITY_STYLE = {"error": "bold red", "warn": "yellow", "info": "dim"}


def result_text(result: dict[str, Any]) -> Text:
    out = Text()
    for item in result["applied"]:
        out.append("✓ repaired " if item["held"] else "✖ DID NOT HOLD ", style="bold green" if item["held"] else
                   "bold red")
        out.append(plain(item["id"]))
        out.append(f" (journal {plain(item['journal_id'])})\n" if item["held"] else
                   " — something rewrote it; see the finding again below\n", style="dim")
    for item in result["failed"]:
        out.append("✖ refused ", style="bold red")
        out.append(f"{plain(item['id'])}: {plain(item['error'])}\n")
    return out


class DoctorScreen(ModalScreen[None]):
    """`a`/enter repairs the selected finding, `A` all repairable ones; both ask first. esc closes."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("a", "repair", "Repair"),
                Binding("A", "repair_all", "Repair all"), Binding("r", "rediagnose", "Re-check"),
                Binding("j", "move('down')", show=False), Binding("k", "move('up')", show=False)]

    def __init__(self, root: Path, session_id: str | None, rp1_db: str | None, readonly: bool, actor: str,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self.clock = clock
        self.root = root
        self.session_id = session_id
        self.rp1_db = rp1_db
        self.readonly = readonly
        self.actor = actor
        self.findings: list[Finding] = []
        self.last_result: dict[str, Any] | None = None
        self.diagnosed = False  # `findings` hold an answer (not only the empty list it starts with)
        self.applying = False  # a repair is being applied in a worker

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog wide"):
            yield Static(Text("Doctor", style="bold"), id="dialog-title")
            table = LineTable(id="doctor-table")
            set_columns(table, COLUMNS, self._table_width())
            yield table
            yield Static(id="doctor-detail", classes="detail")
            yield Static(id="doctor-result")
            yield Static(Text("j/k move · esc close · r re-check" + ("" if self.readonly else
                                                                   " · a/enter repair · A repair all"),
                              style="dim"), id="doctor-keys")

    def on_mount(self) -> None:
        self.action_rediagnose()
        self.query_one("#doctor-table", LineTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("repair", "repair_all") and self.readonly:
            return False
        return True

    def action_move(self, direction: str) -> None:
        table = self.query_one("#doctor-table", LineTable)
        table.action_cursor_down() if direction == "down" else table.action_cursor_up()

    def _table_width(self) -> int:
        return self.app.size.width - 4  # the dialog's border and padding

    def on_resize(self) -> None:
        self._draw()  # refit what was found; nothing is read again

    def _diagnose(self) -> list[Finding]:
        return diagnose(self.root, self.session_id, rp1_db=self.rp1_db, now=self.clock())

    def action_rediagnose(self) -> None:
        """Diagnose again in a worker; the findings on screen stay until the answer."""
        if self.applying:
            return  # the repair re-diagnoses when it is done
        if not self.diagnosed:
            self.query_one("#doctor-detail", Static).update(Text("diagnosing…", style="dim"))
        off_thread(self, self._diagnose, self._diagnosed, group="diagnose")

    def _diagnosed(self, findings: list[Finding], _: BaseException | None) -> None:
        if self.applying:
            return  # read before the repair: the repair's own diagnosis comes with its result
        self.findings, self.diagnosed = findings, True
        self._draw()

    def _draw(self) -> None:
        rows: list[Row] = [(f.id, [Text(f.severity, style=SEVERITY_STYLE.get(f.severity, "")), styled(f.kind),
                                   styled(f.scope), styled(f.subject),
                                   Text("yes" if f.plan else "-", style="green" if f.plan else "dim")])
                           for f in self.findings]
        table = self.query_one("#doctor-table", LineTable)
        shown = set_columns(table, COLUMNS, self._table_width())
        table.set_rows(project(rows, COLUMNS, shown))
        self._detail(table.selected)

    def _selected(self) -> Finding | None:
        key = self.query_one("#doctor-table", LineTable).selected
        return next((f for f in self.findings if f.id == key), None)

    def _detail(self, key: str | None) -> None:
        f = next((x for x in self.findings if x.id == key), None)
        out = Text()
        if not self.diagnosed:
            out.append("diagnosing…", style="dim")
        elif not self.findings:
            out.append("No problems found.", style="green")
        elif f is not None:
            out.append(f"{plain(f.kind)} in {plain(f.scope)}: {plain(f.subject)}\n", style="bold")
            out.append(plain(f.message) + "\n")
            out.append("repair: ", style="bold")
            out.append(plain(f.repair) if f.repair else "none automatic" + (f" — {plain(f.advice)}" if f.advice
                       else " — fix it where it comes from (the message says where)"), style="cyan")
        self.query_one("#doctor-detail", Static).update(out)
        if self.last_result is not None:
            self.query_one("#doctor-result", Static).update(result_text(self.last_result))

    def on_line_table_highlighted(self, event: LineTable.Highlighted) -> None:
        self._detail(event.key)

    def on_line_table_selected(self, event: LineTable.Selected) -> None:
        if not self.readonly:
            self.action_repair()

    def _still_applying(self) -> bool:
        if self.applying:
            self.notify("a repair is still being applied; wait for its result", severity="warning", timeout=3)
        return self.applying

    def action_repair(self) -> None:
        if self._still_applying():
            return
        f = self._selected()
        if f is None or f.plan is None:
            self.notify("this finding has no automatic repair", severity="warning")
            return
        try:
            preview = f.plan().preview(self.root)
        except Exception as exc:  # noqa: BLE001 - a repair that cannot be planned is shown, not raised
            self.app.push_screen(_notice("Repair cannot be planned", str(exc)))
            return
        self.app.push_screen(ConfirmPlan(f"Repair: {f.repair}", preview, "Repair"),
                             lambda ok: self._apply([f.id]) if ok else None)

    def action_repair_all(self) -> None:
        if self._still_applying():
            return
        chosen = [f for f in self.findings if f.plan is not None]
        if not chosen:
            self.notify("nothing to repair automatically", severity="warning")
            return
        changes: list[dict[str, Any]] = []
        for f in chosen:
            try:
                changes += f.plan().preview(self.root)["changes"]  # type: ignore[misc]
            except Exception as exc:  # noqa: BLE001
                changes.append({"path": f.id, "action": "write", "why": f"cannot plan: {exc}"})
        self.app.push_screen(ConfirmPlan(f"Repair {plural(len(chosen), 'finding')}", {"changes": changes},
                                         "Repair all"),
                             lambda ok: self._apply([f.id for f in chosen]) if ok else None)

    def _apply(self, ids: list[str]) -> None:
        """Repair in a worker (the write waits for the store lock), then diagnose again there."""
        if self._still_applying():
            return
        self.applying = True
        self.app.workers.cancel_group(self, "diagnose")
        findings = list(self.findings)
        self.query_one("#doctor-result", Static).update(Text("applying the repair…", style="bold yellow"))

        def repair() -> tuple[dict[str, Any], list[Finding]]:
            result = fix(self.root, findings, ids, session_id=self.session_id, actor=self.actor, rp1_db=self.rp1_db)
            return result, self._diagnose()

        off_thread(self, repair, self._repaired, group="repair", exclusive=False)

    def _repaired(self, answer: tuple[dict[str, Any], list[Finding]], _: BaseException | None) -> None:
        self.applying = False
        self.last_result, self.findings = answer
        self.diagnosed = True
        self._draw()
        self.query_one("#doctor-result", Static).update(result_text(self.last_result))
        reload = getattr(self.app, "reload_now", None)
        if reload:
            reload()

    def action_close(self) -> None:
        if self.applying:  # its result (held or not) is what the operator is waiting for
            self.notify("a repair is being applied; its result shows here when it is done", severity="warning",
                        timeout=3)
            return
        self.dismiss(None)


def _notice(title: str, body: str):
    from rcs_tui.ui.console.notice import Notice

    return Notice(title, body)
