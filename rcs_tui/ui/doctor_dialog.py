"""The doctor dialog the console and the fleet share: findings with their proposed repairs; the operator
repairs the selected one (`a`/enter) or all (`A`), each after a confirmation that shows its plan, and the
doctor diagnoses again afterwards to show whether each repair held.

Where the findings come from and where the repairs run is the source's business (`DoctorSource`): the
console's own tree, or a fleet project's rcs-tui (over ssh for a remote one). A repair runs only as the
plan confirmed: its fingerprint goes with it, and a repair planned differently by then writes nothing.
The diagnosis and the repairs run in workers: the dialog says "diagnosing…" / "applying…" meanwhile and
keeps taking keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from rcs_tui.core.words import plural
from rcs_tui.ui.console.background import off_thread
from rcs_tui.ui.console.confirm import ConfirmPlan
from rcs_tui.ui.console.format import plain, styled
from rcs_tui.ui.console.notice import Notice
from rcs_tui.ui.console.table import Column, Row, project, set_columns
from rcs_tui.ui.linetable import LineTable

# Scope and subject grow so session ids and subjects show whole at 120 columns; the detail line says all.
COLUMNS = (Column("sev", 5, 9), Column("kind", 18, 8), Column("scope", 12, 6, grow=14),
           Column("subject", 14, 7, grow=30), Column("repair", 6, 5))
SEVERITY_STYLE = {"error": "bold red", "warn": "yellow", "info": "dim"}


@dataclass(frozen=True)
class Shown:
    """One finding as the dialog lists it."""

    id: str
    kind: str
    severity: str
    scope: str
    subject: str
    message: str
    repair: str | None
    advice: str | None
    repairable: bool


class DoctorSource(Protocol):
    """Where the findings come from and where repairs run. `diagnose` and `fix` block (run in workers)."""

    def diagnose(self) -> list[Shown]: ...

    def preview(self, ids: list[str]) -> tuple[dict[str, Any], list[str]]:
        """The plan of these repairs as a confirmation shows it, and each one's fingerprint."""
        ...

    def fix(self, ids: list[str], expected: list[str] | None) -> tuple[dict[str, Any], list[Shown]]:
        """Apply the repairs of `ids` (only as the plans with `expected` fingerprints, when given): the result
        ({"applied": [{id, journal_id, held}], "failed": [{id, error}]}) and the findings after."""
        ...


def result_text(result: dict[str, Any]) -> Text:
    out = Text()
    for item in result.get("applied") or []:
        out.append("✓ repaired " if item.get("held") else "✖ DID NOT HOLD ",
                   style="bold green" if item.get("held") else "bold red")
        out.append(plain(item.get("id")))
        out.append(f" (journal {plain(item.get('journal_id'))})\n" if item.get("held") else
                   " — something rewrote it; see the finding again below\n", style="dim")
    for item in result.get("failed") or []:
        out.append("✖ refused ", style="bold red")
        out.append(f"{plain(item.get('id'))}: {plain(item.get('error'))}\n")
    return out


class DoctorDialog(ModalScreen[None]):
    """`a`/enter repairs the selected finding, `A` all repairable ones; both ask first. esc closes."""

    ALL_KEYS: tuple[str, ...] = ("A",)  # the keys that repair every repairable finding (a subclass binds more)
    BINDINGS = [Binding("escape", "close", "Close"), Binding("a", "repair", "Repair"),
                Binding("A", "repair_all", "Repair all"), Binding("r", "rediagnose", "Re-check"),
                Binding("j", "move('down')", show=False), Binding("k", "move('up')", show=False)]

    def __init__(self, source: DoctorSource, readonly: bool, title: str = "Doctor") -> None:
        super().__init__()
        self.source = source
        self.readonly = readonly
        self.title_text = title
        self.findings: list[Shown] = []
        self.last_result: dict[str, Any] | None = None
        self.diagnosed = False  # `findings` hold an answer (not only the empty list it starts with)
        self.applying = False  # a repair is being applied in a worker

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog wide"):
            yield Static(Text(self.title_text, style="bold"), id="dialog-title")
            table = LineTable(id="doctor-table")
            set_columns(table, COLUMNS, self._table_width())
            yield table
            yield Static(id="doctor-detail", classes="detail")
            yield Static(id="doctor-result")
            all_keys = "/".join(self.ALL_KEYS)
            yield Static(Text("j/k move · esc close · r re-check" + ("" if self.readonly else
                                                                   f" · a/enter repair · {all_keys} repair all"),
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

    def action_rediagnose(self) -> None:
        """Diagnose again in a worker; the findings on screen stay until the answer."""
        if self.applying:
            return  # the repair re-diagnoses when it is done
        if not self.diagnosed:
            self.query_one("#doctor-detail", Static).update(Text("diagnosing…", style="dim"))
        off_thread(self, self.source.diagnose, self._diagnosed, group="diagnose", errors=(Exception,))

    def _diagnosed(self, findings: list[Shown] | None, error: BaseException | None) -> None:
        if self.applying:
            return  # read before the repair: the repair's own diagnosis comes with its result
        if error is not None or findings is None:
            self.query_one("#doctor-detail", Static).update(Text(f"cannot diagnose: {plain(error)}", style="yellow"))
            return
        self.findings, self.diagnosed = findings, True
        self._draw()

    def _draw(self) -> None:
        rows: list[Row] = [(f.id, [Text(f.severity, style=SEVERITY_STYLE.get(f.severity, "")), styled(f.kind),
                                   styled(f.scope), styled(f.subject),
                                   Text("yes" if f.repairable else "-", style="green" if f.repairable else "dim")])
                           for f in self.findings]
        table = self.query_one("#doctor-table", LineTable)
        table.set_rows(project(rows, COLUMNS, set_columns(table, COLUMNS, self._table_width(), rows)))
        self._detail(table.selected)

    def _selected(self) -> Shown | None:
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
        if f is None or not f.repairable:
            self.notify("this finding has no automatic repair", severity="warning")
            return
        self._confirm([f.id], f"Repair: {plain(f.repair)}", "Repair")

    def action_repair_all(self) -> None:
        if self._still_applying():
            return
        chosen = [f.id for f in self.findings if f.repairable]
        if not chosen:
            self.notify("nothing to repair automatically", severity="warning")
            return
        self._confirm(chosen, f"Repair {plural(len(chosen), 'finding')}", "Repair all")

    def _confirm(self, ids: list[str], title: str, label: str) -> None:
        """The repairs' plan in the confirmation (Cancel focused); confirmed, exactly that plan is applied."""
        try:
            preview, fingerprints = self.source.preview(ids)
        except Exception as exc:  # noqa: BLE001 - a repair that cannot be planned is shown, not raised
            self.app.push_screen(Notice("Repair cannot be planned", str(exc)))
            return
        self.app.push_screen(ConfirmPlan(title, preview, label),
                             lambda ok: self._apply(ids, fingerprints) if ok else None)

    def _apply(self, ids: list[str], expected: list[str] | None) -> None:
        """Repair in a worker (the write waits for the store lock), then diagnose again there."""
        if self._still_applying():
            return
        self.applying = True
        self.app.workers.cancel_group(self, "diagnose")
        self.query_one("#doctor-result", Static).update(Text("applying the repair…", style="bold yellow"))
        off_thread(self, lambda: self.source.fix(ids, expected), self._repaired, group="repair", exclusive=False)

    def _repaired(self, answer: tuple[dict[str, Any], list[Shown]], _: BaseException | None) -> None:
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
