"""The fleet's project view with the console's pickers and previews: the override's phase from a list, the
doctor repairing one finding or all, undo and redo naming what they undo. Driven at 80x24 and 120x36
against a local project (the ssh variants are in test_fleet_ssh.py); snapshots of the three dialogs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Input, OptionList

from rcs_tui.core.task_lifecycle import override_targets
from rcs_tui.fleet.actions import CliActions
from rcs_tui.fleet.projects import expand_projects, parse_project
from rcs_tui.project.feed import SnapshotFeed
from rcs_tui.state.journal import read_journal
from rcs_tui.ui.console.confirm import ConfirmPlan
from rcs_tui.ui.fleet.app import FleetApp
from rcs_tui.ui.fleet.doctor import FleetDoctor
from rcs_tui.ui.fleet.override import TaskOverrideForm
from rcs_tui.ui.fleet.project import ProjectScreen
from tests.conftest import tree_digest
from tests.fixtures_tasks import make_task, transcript
from tests.statefix import canonical, mode
from tests.test_fleet import NOW, until

SIZES = [(80, 24), (120, 36)]


def fleet_over(root: Path) -> FleetApp:
    """A fleet (no watcher) over the one local project at `root`, its document read once."""
    found, _ = expand_projects([str(root)])
    app = FleetApp(found, live=False)
    app.rows[found[0].key].take(SnapshotFeed(root).document(), time.time())
    return app


def screen_text(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query("Static"))


async def open_view(app: FleetApp, pilot) -> ProjectScreen:
    await pilot.pause()
    await pilot.press("i")
    await until(lambda: isinstance(app.screen, ProjectScreen))
    await pilot.pause()
    return app.screen  # type: ignore[return-value]


async def confirmation(app: FleetApp, pilot) -> ConfirmPlan:
    await until(lambda: isinstance(app.screen, ConfirmPlan))
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, ConfirmPlan)
    assert app.focused is screen.query_one("#cancel", Button)  # destructive: Cancel has the focus
    assert "y apply" in screen_text(screen)  # the dialog shows its keys
    return screen


def task_tree(root: Path) -> Path:
    mode(root, "forge", phase="execute")
    canonical(root, ["forge"])
    make_task(root, "t1", phase="codegen")
    make_task(root, "t0", phase="done")
    return root


async def pick(pilot, options: OptionList, wanted: str, choices: list[str]) -> None:
    """Move the list's highlight to `wanted` with the arrow keys, as an operator would."""
    options.focus()
    await pilot.pause()
    while choices[options.highlighted or 0] != wanted:
        await pilot.press("down")


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x36"])
async def test_override_picks_the_phase_from_the_reachable_ones_and_records_the_reason(tmp_path, size):
    root = task_tree(tmp_path / "api")
    state = root / ".rcs/tasks/t1/state.json"
    app = fleet_over(root)
    async with app.run_test(size=size) as pilot:
        await open_view(app, pilot)
        await pilot.press("o")
        await until(lambda: isinstance(app.screen, TaskOverrideForm))
        await pilot.pause()
        form = app.screen
        assert isinstance(form, TaskOverrideForm)
        assert [t for t, _ in form.tasks] == ["t1", "t0"]  # open tasks first
        assert form.targets == override_targets("codegen") and "codegen" not in form.targets
        assert "test" in form.targets
        await pilot.press("enter")  # t1 chosen: on to its phases
        assert app.focused is form.query_one("#override-phase", OptionList)
        await pick(pilot, form.query_one("#override-phase", OptionList), "test", form.targets)
        await pilot.press("enter")  # on to the reason
        assert app.focused is form.query_one("#override-reason", Input)
        assert form.query_one("#apply", Button).disabled  # no reason yet
        assert "reason is required" in screen_text(form)
        await pilot.press(*"flaky")
        await pilot.pause()
        shown = screen_text(form)
        assert "t1: codegen → test" in shown and "esc cancel" in shown
        await pilot.press("enter")  # the project's rcs-tui plans it; the plan is confirmed next
        confirm = await confirmation(app, pilot)
        body = screen_text(confirm)
        assert "Task t1: codegen → test" in body and ".rcs/tasks/t1/state.json" in body
        await pilot.press("y")
        await until(lambda: json.loads(state.read_text())["phase"] == "test")
    line = transcript(root / ".rcs/tasks/t1")[-1]
    assert (line["from"], line["to"], line["reason"]) == ("codegen", "test", "flaky")
    assert read_journal(root)[-1]["action"] == "task override"


async def test_a_refused_override_keeps_the_task_phase_and_reason_entered(tmp_path):
    root = task_tree(tmp_path / "api")
    app = fleet_over(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_view(app, pilot)
        await pilot.press("o")
        await until(lambda: isinstance(app.screen, TaskOverrideForm))
        await pilot.pause()
        form = app.screen
        assert isinstance(form, TaskOverrideForm)
        await pilot.press("enter")
        await pick(pilot, form.query_one("#override-phase", OptionList), "review", form.targets)
        await pilot.press("enter", *"because")
        make_task(root, "t1", phase="done")  # the task finished meanwhile: nothing is reachable from done
        before = tree_digest(root)
        await pilot.press("enter")
        await until(lambda: not form.checking and "not reachable" in screen_text(form))
        assert app.screen is form  # still open, with everything entered
        assert form.chosen_task() == ("t1", "codegen") and form.phase() == "review"
        assert form.query_one("#override-reason", Input).value == "because"
        assert tree_digest(root) == before
        row = next(iter(app.rows.values()))
        row.take(SnapshotFeed(root).document(), time.time())  # the fleet's document catches up with the files
        await pilot.press("ctrl+s")  # refused again: now the form shows the phase the task is in
        await until(lambda: not form.checking and form.chosen_task() == ("t1", "done"))
        await pilot.pause()
        assert form.targets == [] and form.query_one("#apply", Button).disabled
        text = screen_text(form)
        assert "not reachable" in text and "No phase is reachable from done" in text
        assert form.query_one("#override-reason", Input).value == "because"
        assert tree_digest(root) == before


def two_findings(root: Path) -> Path:
    """A stale member in root's canonical set and another in session s1's: two repairs, two files."""
    mode(root, "forge", phase="execute")
    canonical(root, ["forge", "team"])
    canonical(root, ["ultrawork"], session="s1")
    return root


async def open_doctor(app: FleetApp, pilot) -> FleetDoctor:
    await open_view(app, pilot)
    await pilot.press("D")
    await until(lambda: isinstance(app.screen, FleetDoctor) and app.screen.diagnosed)
    await pilot.pause()
    return app.screen  # type: ignore[return-value]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x36"])
async def test_doctor_repairs_the_one_finding_chosen_and_only_its_file(tmp_path, size):
    root = two_findings(tmp_path / "api")
    root_set = ".rcs/state/skill-active-state.json"
    session_set = ".rcs/state/sessions/s1/skill-active-state.json"
    app = fleet_over(root)
    async with app.run_test(size=size) as pilot:
        doctor = await open_doctor(app, pilot)
        assert [f.id for f in doctor.findings] == ["stale:root:team", "stale:s1:ultrawork"]
        assert "a/enter repair · A/D repair all" in screen_text(doctor)
        before = tree_digest(root / ".rcs/state")
        table = doctor.query_one("#doctor-table")
        table.select_key("stale:root:team")
        await pilot.press("enter")
        confirm = await confirmation(app, pilot)
        body = screen_text(confirm)
        assert "Repair: drop the stale canonical entry" in body and root_set in body and session_set not in body
        assert "Active set after" in body
        await pilot.press("y")
        await until(lambda: doctor.last_result is not None and not doctor.applying)
        after = tree_digest(root / ".rcs/state")
        assert {p for p in after if after[p] != before.get(p)} == {"skill-active-state.json"}
        assert json.loads((root / root_set).read_text())["active_skills"][0]["skill"] == "forge"
        assert [f.id for f in doctor.findings] == ["stale:s1:ultrawork"]
        assert "✓ repaired stale:root:team" in screen_text(doctor)


async def test_a_read_only_fleet_lists_the_findings_and_repairs_nothing(tmp_path):
    root = two_findings(tmp_path / "api")
    found, _ = expand_projects([str(root)])
    app = FleetApp(found, live=False, readonly=True)
    app.rows[found[0].key].take(SnapshotFeed(root).document(), time.time())
    before = tree_digest(root)
    async with app.run_test(size=(80, 24)) as pilot:
        doctor = await open_doctor(app, pilot)
        assert len(doctor.findings) == 2 and "repair" not in screen_text(doctor).split("\n")[-1]
        await pilot.press("enter", "a", "A", "D")
        await pilot.pause(0.2)
        assert app.screen is doctor
    assert tree_digest(root) == before


async def test_doctor_repairs_all_even_two_in_one_file_and_refuses_a_plan_that_moved(tmp_path):
    root = tmp_path / "api"
    mode(root, "forge", phase="execute")
    canonical(root, ["forge", "team", "ultrawork"])  # two repairs of one file, confirmed together
    canonical(root, ["autopilot"], session="s1")
    app = fleet_over(root)
    async with app.run_test(size=(120, 36)) as pilot:
        doctor = await open_doctor(app, pilot)
        assert len(doctor.findings) == 3
        doctor.query_one("#doctor-table").select_key("stale:s1:autopilot")
        await pilot.press("a")
        await confirmation(app, pilot)
        canonical(root, ["autopilot", "team"], session="s1")  # the runtime rewrote it after the preview
        moved = tree_digest(root / ".rcs/state")
        await pilot.press("y")
        await until(lambda: doctor.last_result is not None and not doctor.applying)
        assert "changed since you confirmed" in screen_text(doctor)
        assert tree_digest(root / ".rcs/state") == moved  # nothing was written
        assert not doctor.last_result["applied"]
        doctor.last_result = None
        await pilot.press("D")  # all of them, as planned now
        await confirmation(app, pilot)
        await pilot.press("y")
        await until(lambda: doctor.last_result is not None and not doctor.applying)
        assert sorted(a["id"] for a in doctor.last_result["applied"]) == [
            "stale:root:team", "stale:root:ultrawork", "stale:s1:autopilot", "stale:s1:team"]
        assert doctor.findings == []
    skills = json.loads((root / ".rcs/state/skill-active-state.json").read_text())["active_skills"]
    assert [e["skill"] for e in skills] == ["forge"]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x36"])
async def test_undo_names_the_entry_and_its_files_then_restores_them_and_redo_does_too(tmp_path, size, run_cli):
    root = tmp_path / "api"
    forge = mode(root, "forge", phase="execute")
    canonical(root, ["forge"])
    state_before = tree_digest(root / ".rcs/state")
    forge_bytes = forge.read_bytes()
    assert run_cli("state", "clear", "--mode", "forge", "--in-root", "--root", str(root)).code == 0
    entry = read_journal(root)[-1]
    cleared = tree_digest(root / ".rcs/state")
    app = fleet_over(root)
    async with app.run_test(size=size) as pilot:
        await open_view(app, pilot)
        await pilot.press("u")
        confirm = await confirmation(app, pilot)
        assert confirm.title_text == "Undo: undo state clear forge"
        body = screen_text(confirm)
        assert "Undoes state clear forge" in body
        assert entry["at"][:19].replace("T", " ") in body and entry["id"] in body
        assert ".rcs/state/forge-state.json" in body and ".rcs/state/skill-active-state.json" in body
        assert f"now absent → after {len(forge_bytes)} bytes" in body
        await pilot.press("n")  # cancelled: nothing changes
        await pilot.pause(0.2)
        assert tree_digest(root / ".rcs/state") == cleared
        await pilot.press("u")
        await confirmation(app, pilot)
        await pilot.press("y")
        await until(lambda: forge.exists())
        assert tree_digest(root / ".rcs/state") == state_before and forge.read_bytes() == forge_bytes
        await pilot.press("U")
        confirm = await confirmation(app, pilot)
        assert confirm.title_text == "Redo: redo state clear forge"
        body = screen_text(confirm)
        assert "Redoes state clear forge" in body and f"now {len(forge_bytes)} bytes → after absent" in body
        await pilot.press("y")
        await until(lambda: not forge.exists())
        assert tree_digest(root / ".rcs/state") == cleared


# -- snapshots: the three dialogs at 80x24, over a project shown as a remote one (fixed paths) ---------------


def dialog_app(tmp_path: Path, monkeypatch) -> FleetApp:
    """A fleet whose one project reads as ssh://me@build-box:2222/work/x, its document and the answers of its
    rcs-tui made from a local tree with tasks, two findings and a cleared member (the journal's time fixed)."""
    root = two_findings(tmp_path / "x")
    make_task(root, "t1", phase="codegen")
    make_task(root, "t2", phase="review")
    local = CliActions(parse_project(str(root)))
    report = local.doctor()
    undo = {"dry_run": True, "action": "undo state clear forge",
            "changes": [{"path": ".rcs/state/forge-state.json", "action": "write", "why": "restore before-image"},
                        {"path": ".rcs/state/skill-active-state.json", "action": "write",
                         "why": "restore before-image"}],
            "undoes": "20261125T214136-0a1b2c3d4e5f", "restores": [".rcs/state/forge-state.json",
                                                                  ".rcs/state/skill-active-state.json"],
            "plan_fingerprint": "sha256:0", "entry": {"id": "20261125T214136-0a1b2c3d4e5f",
                                                      "action": "state clear forge", "at": "2026-11-25T21:41:36.953Z",
                                                      "actor": "me@build-box (console, pid 4242)"},
            "file_sizes": [{"path": ".rcs/state/forge-state.json", "now": None, "after": 57},
                           {"path": ".rcs/state/skill-active-state.json", "now": 151, "after": 268}]}

    def doctor(self, **_: Any) -> dict[str, Any]:
        return report

    def undo_call(self, *_: Any, **__: Any) -> dict[str, Any]:
        return undo

    monkeypatch.setattr(CliActions, "doctor", doctor)
    monkeypatch.setattr(CliActions, "undo", undo_call)
    found, _ = expand_projects(["ssh://me@build-box:2222/work/x"])
    app = FleetApp(found, live=False, clock=lambda: NOW)
    app.rows[found[0].key].take(SnapshotFeed(root, clock=lambda: NOW).document(), NOW)
    return app


async def opened(pilot, *keys: str) -> None:
    """Open the project view, press `keys` and let every answer of the project's (stand-in) rcs-tui arrive."""
    await open_view(pilot.app, pilot)
    for key in keys:
        await pilot.press(key)
        await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


class TestDialogSnapshots:
    def test_override_80x24(self, tmp_path, monkeypatch, snap_compare):
        keys = ("o", "enter", "down", "down", "down", "enter", *"flaky")
        assert snap_compare(dialog_app(tmp_path, monkeypatch), terminal_size=(80, 24),
                            run_before=lambda pilot: opened(pilot, *keys))

    def test_doctor_80x24(self, tmp_path, monkeypatch, snap_compare):
        assert snap_compare(dialog_app(tmp_path, monkeypatch), terminal_size=(80, 24),
                            run_before=lambda pilot: opened(pilot, "D"))

    def test_undo_80x24(self, tmp_path, monkeypatch, snap_compare):
        assert snap_compare(dialog_app(tmp_path, monkeypatch), terminal_size=(80, 24),
                            run_before=lambda pilot: opened(pilot, "u"))
