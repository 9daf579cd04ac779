"""The fleet against a real OpenSSH server on 127.0.0.1 (throwaway keys; the remote rcs-tui is this one)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from rcs_tui.fleet.actions import ActionError, CliActions
from rcs_tui.fleet.hub import FleetHub
from rcs_tui.fleet.projects import parse_project
from rcs_tui.fleet.transport import Ssh
from rcs_tui.ui.fleet.app import FleetApp
from rcs_tui.views.snapshot_doc import CONTRACT_VERSION
from tests.sshfix import ALIAS, SshServer, available
from tests.statefix import canonical, mode

REASON = available()
pytestmark = pytest.mark.skipif(REASON is not None and not os.environ.get("CI"), reason=REASON or "")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = SshServer(tmp_path_factory.mktemp("sshd"))
    srv.start()
    yield srv
    srv.stop()


def project_tree(root: Path) -> Path:
    mode(root, "forge", iteration=2, phase="execute")
    canonical(root, ["forge"])
    mode(root, "autopilot", active=False, lifecycle_outcome="askuserQuestion", question="ship it?")
    return root


async def until(predicate, timeout: float = 20.0, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(step)


def test_fleet_once_lists_remote_projects_and_says_why_others_cannot_be_read(server, tmp_path, run_cli):
    good = project_tree(tmp_path / "api")
    (tmp_path / "bare").mkdir()
    res = run_cli("fleet", "--once", "--json", "--ssh-config", str(server.ssh_config),
                  "--project", server.url(good), "--project", server.url(tmp_path / "bare"),
                  "--project", server.url(good) + "?rcs-tui=/opt/none/rcs-tui",
                  "--project", f"ssh://nosuchhost.invalid{good}", timeout=40)
    assert res.code == 0, res.stderr
    rows = {(r["project"], r["name"]): r for r in res.json}
    api = rows[(f"ssh://{ALIAS}{good}", "api")]
    assert api["host"] == ALIAS and api["state"] == "waiting" and api["needs_you"] is True
    assert api["active_set"] == ["forge"] and api["attention"]["waiting"] == ["root/autopilot"]
    assert res.json[0]["name"] == "api"  # waiting sorts first
    bare = next(r for r in res.json if r["name"] == "bare")
    assert bare["error"] == f"no .rcs/ in {tmp_path / 'bare'}"
    missing = rows[(f"ssh://{ALIAS}{good}?rcs-tui=/opt/none/rcs-tui", "api")]
    assert missing["error"].startswith(f"rcs-tui missing on {ALIAS}")
    unreachable = next(r for r in res.json if r["host"] == "nosuchhost.invalid")
    assert unreachable["error"].startswith("unreachable: ")


async def test_follows_a_change_on_the_host(server, tmp_path):
    root = project_tree(tmp_path / "web")
    hub = FleetHub([parse_project(server.url(root))], ssh=Ssh(config_file=str(server.ssh_config)))
    row = next(iter(hub.rows.values()))
    hub.start()
    try:
        await until(lambda: row.doc is not None)
        assert row.doc["active_set"] == ["forge"]
        mode(root, "team", phase="team-exec")
        canonical(root, ["forge", "team"])
        await until(lambda: row.doc["active_set"] == ["forge", "team"])
        assert row.error is None and row.connected
    finally:
        await hub.stop()


def remote_app(server, root: Path) -> FleetApp:
    return FleetApp([parse_project(server.url(root))], ssh=Ssh(config_file=str(server.ssh_config)))


async def open_project_view(app: FleetApp, pilot) -> None:
    """Wait for the remote row's document, then open its project view."""
    from rcs_tui.ui.fleet.project import ProjectScreen

    await until(lambda: all(r.doc is not None for r in app.rows.values()))
    await pilot.pause()
    await pilot.press("i")
    await until(lambda: isinstance(app.screen, ProjectScreen))
    await pilot.pause()


async def test_clear_and_undo_run_on_the_host_from_the_project_view(server, tmp_path):
    root = project_tree(tmp_path / "svc")
    forge_file = root / ".rcs/state/forge-state.json"
    before = forge_file.read_bytes()
    journal = root / ".rcs/logs/rcs-tui-journal.jsonl"
    app = remote_app(server, root)
    async with app.run_test(size=(120, 36)) as pilot:
        await open_project_view(app, pilot)
        from rcs_tui.ui.console.confirm import ConfirmPlan
        from rcs_tui.ui.fleet.project import ProjectScreen

        screen = app.screen
        assert isinstance(screen, ProjectScreen)
        assert screen.current_member() == ("root", "autopilot")  # waiting for the user: listed, not active
        await pilot.press("j")
        assert screen.current_member() == ("root", "forge")
        await pilot.press("d")
        await until(lambda: isinstance(app.screen, ConfirmPlan))
        assert f"Clear forge in root on {ALIAS}" in app.screen.title_text
        await pilot.press("y")
        await until(lambda: not forge_file.exists() and journal.exists())
        entries = [json.loads(line) for line in journal.read_text().splitlines()]
        assert [e.get("action") for e in entries if "action" in e] == ["state clear forge"]
        await until(lambda: "forge" not in (app.rows[screen.key].doc or {}).get("active_set", ["forge"]))
        await pilot.press("u")
        await until(lambda: isinstance(app.screen, ConfirmPlan))
        await pilot.press("y")
        await until(lambda: forge_file.exists())
        assert forge_file.read_bytes() == before
        after = [json.loads(line) for line in journal.read_text().splitlines()]
        assert [e["undoes"] for e in after if "undoes" in e and "action" in e] == [entries[0]["id"]]


async def test_a_remote_clear_applies_only_the_plan_confirmed(server, tmp_path):
    from rcs_tui.state.txn import PLAN_CHANGED
    from rcs_tui.ui.console.confirm import ConfirmPlan
    from rcs_tui.ui.fleet.project import ProjectScreen

    root = project_tree(tmp_path / "svc")
    forge_file = root / ".rcs/state/forge-state.json"
    app = remote_app(server, root)
    async with app.run_test(size=(120, 36)) as pilot:
        await open_project_view(app, pilot)
        assert isinstance(app.screen, ProjectScreen)
        await pilot.press("j", "d")
        await until(lambda: isinstance(app.screen, ConfirmPlan))
        first = app.screen
        mode(root, "forge", iteration=5, phase="verify")  # written on the host after the dry run
        changed = forge_file.read_bytes()
        await pilot.press("y")
        await until(lambda: isinstance(app.screen, ConfirmPlan) and app.screen is not first)
        await pilot.pause()
        assert PLAN_CHANGED in str(app.screen.query_one("#plan-warning").render())
        assert forge_file.read_bytes() == changed
        assert not (root / ".rcs/logs/rcs-tui-journal.jsonl").exists()


async def test_host_goes_unreachable_then_recovers(tmp_path):
    srv = SshServer(tmp_path / "sshd")
    srv.start()
    root = project_tree(tmp_path / "ops")
    hub = FleetHub([parse_project(srv.url(root))], ssh=Ssh(config_file=str(srv.ssh_config)), max_backoff=0.5,
                   heartbeat=2)
    row = next(iter(hub.rows.values()))
    hub.start()
    try:
        await until(lambda: row.doc is not None)
        srv.stop()
        await until(lambda: row.error is not None and "Connection refused" in row.error, timeout=30)
        assert row.error.startswith("unreachable: ") and row.error_since is not None
        assert row.cells(time.time())["active"].startswith("unreachable since ")
        assert ": ssh: connect to host 127.0.0.1 port " in row.cells(time.time())["active"]
        assert row.rank_name == "error"
        srv.start()
        await until(lambda: row.doc is not None and row.error is None, timeout=30)
        assert row.doc["active_set"] == ["forge"]
    finally:
        await hub.stop()
        srv.stop()


def test_doctor_fix_runs_on_the_host_and_a_refusal_says_why(server, tmp_path):
    root = project_tree(tmp_path / "doc")
    canonical(root, ["forge", "team"])  # team listed with no mode file: a stale member the doctor repairs
    acts = CliActions(parse_project(server.url(root)), Ssh(config_file=str(server.ssh_config)))
    report = acts.doctor()
    assert "stale:root:team" in [f["id"] for f in report["findings"]]
    fixed = acts.doctor(fix=True, only=("stale:root:team",))
    assert [a["id"] for a in fixed["fix"]["applied"]] == ["stale:root:team"]
    journal = (root / ".rcs/logs/rcs-tui-journal.jsonl").read_text()
    assert fixed["fix"]["applied"][0]["journal_id"] in journal
    with pytest.raises(ActionError, match="no .*override-me|override-me"):
        acts.override("override-me", "done", "because")


def fake_remote(path: Path, lines: list[str], then: str = "exit 0") -> str:
    """A stand-in for the remote rcs-tui that prints `lines` and then runs `then`."""
    body = "".join(f"printf '%s\\n' {json.dumps(line)}\n" for line in lines)
    path.write_text(f"#!/bin/sh\n{body}{then}\n")
    path.chmod(0o755)
    return str(path)


async def test_garbage_stalls_hostile_text_and_old_contracts_cost_only_their_row(server, tmp_path):
    good = project_tree(tmp_path / "good")
    hostile = {"version": "1.0", "kind": "snapshot", "has_rcs": True, "active_set": ["\x1b]52;c;QUFB\x07forge"],
               "attention": {"waiting": ["root/\x1b[2Jautopilot"]}, "last_activity": None}
    scripts = {
        "garbage": fake_remote(tmp_path / "garbage.sh", ["<html>not json</html>"], "sleep 30"),
        "stall": fake_remote(tmp_path / "stall.sh", [json.dumps({**hostile, "active_set": ["forge"],
                                                                  "attention": {}})], "sleep 60"),
        "hostile": fake_remote(tmp_path / "hostile.sh", [json.dumps(hostile)],
                               "while :; do echo '{\"kind\": \"heartbeat\"}'; sleep 0.2; done"),
        "old": fake_remote(tmp_path / "old.sh", [json.dumps({"version": "0.9", "kind": "snapshot"})], "sleep 60"),
        "deep": fake_remote(tmp_path / "deep.sh", ["[" * 50_000], "sleep 30"),  # deeper than any parser recurses
    }
    projects = [parse_project(server.url(good))] + [
        parse_project(f"{server.url(tmp_path / name)}?rcs-tui={script}") for name, script in scripts.items()]
    hub = FleetHub(projects, ssh=Ssh(config_file=str(server.ssh_config)), heartbeat=0.5, max_backoff=30)
    rows = {Path(r.project.path).name: r for r in hub.rows.values()}
    hub.start()
    try:
        await until(lambda: rows["good"].doc is not None and rows["garbage"].error is not None
                    and rows["old"].error is not None and rows["hostile"].doc is not None
                    and rows["deep"].error is not None
                    and (rows["stall"].error or "").startswith("stalled"))
        assert rows["garbage"].error.startswith("sent data that is not a snapshot (b'<html>not json")
        assert rows["deep"].error.startswith("sent data that is not a snapshot (b'[[[[")
        assert rows["stall"].error == f"stalled: no data from {ALIAS} for 1.5s"
        assert rows["old"].error.startswith(f"host speaks snapshot contract 0.9, this rcs-tui reads "
                                            f"{CONTRACT_VERSION}: upgrade rcs-tui on the host; shown read-only")
        cells = rows["hostile"].cells(time.time())
        assert cells["active"] == "forge"  # the OSC 52 (clipboard write) sequence is gone
        assert all("\x1b" not in str(v) and "\x07" not in str(v) for v in cells.values())
        assert rows["hostile"].attention["waiting"] == ["root/autopilot"]
        assert rows["good"].error is None and rows["good"].doc["active_set"] == ["forge"]
    finally:
        await hub.stop()


async def test_the_project_view_s_pickers_and_previews_act_on_the_host(server, tmp_path):
    """Over ssh as locally: a phase picked from the list, one finding repaired (only its file changes), an
    undo that names its entry and files and restores them."""
    from textual.widgets import OptionList

    from rcs_tui.state.journal import read_journal
    from rcs_tui.ui.fleet.doctor import FleetDoctor
    from rcs_tui.ui.fleet.override import TaskOverrideForm
    from rcs_tui.ui.fleet.project import ProjectScreen
    from tests.conftest import tree_digest
    from tests.fixtures_tasks import make_task, transcript
    from tests.test_fleet_project_dialogs import confirmation, pick, screen_text

    root = tmp_path / "svc"
    mode(root, "forge", phase="execute")
    canonical(root, ["forge", "team"])
    canonical(root, ["ultrawork"], session="s1")
    make_task(root, "t1", phase="codegen")
    state = root / ".rcs/tasks/t1/state.json"
    app = remote_app(server, root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_project_view(app, pilot)
        view = app.screen
        assert isinstance(view, ProjectScreen)

        await pilot.press("o")
        await until(lambda: isinstance(app.screen, TaskOverrideForm))
        await pilot.pause()
        form = app.screen
        assert isinstance(form, TaskOverrideForm)
        await pilot.press("enter")
        await pick(pilot, form.query_one("#override-phase", OptionList), "review", form.targets)
        await pilot.press("enter", *"remote", "enter")
        confirm = await confirmation(app, pilot)
        assert f"Override task t1 to review on {ALIAS}" in confirm.title_text
        await pilot.press("y")
        await until(lambda: json.loads(state.read_text())["phase"] == "review")
        assert transcript(root / ".rcs/tasks/t1")[-1]["reason"] == "remote"

        await until(lambda: app.screen is view and not view.busy)
        await pilot.press("D")
        await until(lambda: isinstance(app.screen, FleetDoctor) and app.screen.diagnosed)
        doctor = app.screen
        assert [f.id for f in doctor.findings] == ["stale:root:team", "stale:s1:ultrawork"]
        doctor.query_one("#doctor-table").select_key("stale:s1:ultrawork")
        before = tree_digest(root / ".rcs/state")
        await pilot.press("enter")
        await confirmation(app, pilot)
        await pilot.press("y")
        await until(lambda: doctor.last_result is not None and not doctor.applying)
        after = tree_digest(root / ".rcs/state")
        assert {p for p in after if after[p] != before.get(p)} == {"sessions/s1/skill-active-state.json"}
        assert [f.id for f in doctor.findings] == ["stale:root:team"]
        await pilot.press("escape")

        await until(lambda: app.screen is view)
        entry = read_journal(root)[-1]
        session_set = root / ".rcs/state/sessions/s1/skill-active-state.json"
        await pilot.press("u")
        confirm = await confirmation(app, pilot)
        body = screen_text(confirm)
        assert confirm.title_text == f"Undo: undo {entry['action']} on {ALIAS}"
        assert f"Undoes {entry['action']}" in body and entry["at"][:19].replace("T", " ") in body
        assert ".rcs/state/sessions/s1/skill-active-state.json" in body and "now " in body
        await pilot.press("y")
        await until(lambda: tree_digest(root / ".rcs/state") == before)
        assert json.loads(session_set.read_text())["active_skills"][0]["skill"] == "ultrawork"
