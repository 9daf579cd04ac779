"""The console's actions end to end through Pilot, asserting the files on disk afterwards."""

from __future__ import annotations

import json

import pytest

from rcs_tui.ui.console.confirm import ConfirmPlan
from rcs_tui.ui.console.doctor import DoctorScreen
from rcs_tui.ui.console.notice import Notice
from tests.conftest import tree_digest
from tests.console_fixtures import NOW, OTHER, SESSION, app, member_row, open_override, select_row, settle
from tests.statefix import canonical, mode, read, state_dir

SIZE = (100, 32)


def text_of(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query("Static"))


async def open_clear(pilot, key: str, press: str = "d") -> None:
    select_row(pilot.app, "scopes-table", key)
    await pilot.press(press)
    await settle(pilot)
    assert isinstance(pilot.app.screen, ConfirmPlan)
    assert pilot.app.focused.id == "cancel"  # a stray enter never clears


async def test_clear_team_from_team_forge_session_keeps_forge(tmp_path):
    a = app(tmp_path)
    root = a.root
    forge = state_dir(root, SESSION) / "forge-state.json"
    forge_bytes = forge.read_bytes()
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        preview = text_of(pilot.app.screen)
        assert "DELETE" in preview and "team-state.json" in preview
        assert f"{SESSION}  forge + team → forge" in preview  # this scope, before → after
        await pilot.press("y")
        await settle(pilot)
    assert not (state_dir(root, SESSION) / "team-state.json").exists()
    assert forge.read_bytes() == forge_bytes
    skills = [e["skill"] for e in read(state_dir(root, SESSION) / "skill-active-state.json")["active_skills"]]
    assert skills == ["forge", "blueprint"]
    assert (state_dir(root, OTHER) / "team-state.json").exists()  # other sessions untouched


async def test_cancel_changes_nothing(tmp_path):
    a = app(tmp_path)
    before = tree_digest(a.root)
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        await pilot.press("enter")  # focus is on Cancel
        await settle(pilot)
    assert tree_digest(a.root) == before


async def test_clear_across_all_sessions(tmp_path):
    a = app(tmp_path)
    root = a.root
    mode(root, "team", None, current_phase="team-exec")
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"), press="C")
        assert "ALL SESSIONS" in text_of(pilot.app.screen)
        await pilot.press("y")
        await settle(pilot)
    assert not list(root.rglob("team-state.json"))
    assert (state_dir(root, SESSION) / "forge-state.json").exists()
    assert [e["skill"] for e in read(state_dir(root, OTHER) / "skill-active-state.json")["active_skills"]] == [
        "ultrawork"]


async def test_confirm_replans_when_a_planned_file_changes(tmp_path):
    a = app(tmp_path)
    cpath = state_dir(a.root, SESSION) / "skill-active-state.json"
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        pilot.app.screen.query_one("#confirm").focus()
        canonical(a.root, ["team"], SESSION, source="hook")  # the runtime rewrote the set meanwhile
        modal = pilot.app.screen
        for _ in range(150):  # the modal's own timer notices (every 0.4 s); generous for a busy machine
            await pilot.pause(0.1)
            if modal.replans:
                break
        assert isinstance(modal, ConfirmPlan) and modal.replans == 1
        shown = text_of(modal)
        assert "Re-planned with fresh data (.rcs/state/sessions/" in shown
        assert "skill-active-state.json changed" in shown
        assert pilot.app.focused.id == "cancel"  # focus goes back to Cancel after a re-plan
        await pilot.press("y")
        await settle(pilot)
    assert not (state_dir(a.root, SESSION) / "team-state.json").exists()
    assert [e["skill"] for e in read(cpath)["active_skills"]] == []  # applied on the fresh bytes


async def test_y_on_a_moved_plan_replans_instead_of_applying(tmp_path):
    a = app(tmp_path)
    team = state_dir(a.root, SESSION) / "team-state.json"
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        team.write_text(json.dumps({"active": True, "current_phase": "team-fix", "source": "hook"}))
        after_write = tree_digest(a.root)
        await pilot.press("y")  # before the modal's own poll noticed: it re-plans, it does not apply
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmPlan) and pilot.app.screen.replans == 1
        assert tree_digest(a.root) == after_write
        await pilot.press("y")
        await settle(pilot)
    assert not team.exists()


async def test_clear_under_a_writer_thread_applies_the_plan_on_screen(tmp_path):
    import threading

    a = app(tmp_path)
    forge = state_dir(a.root, SESSION) / "forge-state.json"
    stop = threading.Event()

    def writer() -> None:  # the runtime: rewrites forge every 100 ms, 5 times
        for i in range(5):
            if stop.wait(0.1):
                return
            mode(a.root, "forge", SESSION, current_phase="executing", iteration=4 + i, source="simulator")

    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("forge"))
        thread = threading.Thread(target=writer)
        thread.start()
        await pilot.pause(0.3)
        thread.join()
        for _ in range(150):
            await pilot.pause(0.1)
            if pilot.app.screen.replans and not pilot.app.screen.moved():
                break
        assert pilot.app.screen.replans >= 1
        await pilot.press("y")
        await settle(pilot)
        stop.set()
    assert not forge.exists()
    entries = [json.loads(line) for line in (a.root / ".rcs/logs/rcs-tui-journal.jsonl").read_text().splitlines()]
    assert [e["action"] for e in entries if "action" in e] == ["state clear forge"]


async def test_refusal_offers_replan_and_repeated_refusals_name_the_writer(tmp_path, monkeypatch):
    a = app(tmp_path)
    team = state_dir(a.root, SESSION) / "team-state.json"
    calls = []

    def write_in_the_race_window(self) -> bool:  # a runtime write lands after the modal's last look
        calls.append(1)
        team.write_text(json.dumps({"active": True, "iteration": len(calls), "source": "simulator"}))
        return False

    monkeypatch.setattr(ConfirmPlan, "follow_files", write_in_the_race_window)
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        after_write = None
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(pilot.app.screen, Notice)
        body = text_of(pilot.app.screen)
        assert "changed underneath since it was read" in body and "r re-plan with fresh data" in body
        assert "Refused" not in body
        after_write = tree_digest(a.root)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmPlan) and pilot.app.focused.id == "cancel"
        await pilot.press("y")
        await settle(pilot)
        body = text_of(pilot.app.screen)
        assert "Refused 2 times" in body and "team-state.json keeps changing" in body
        assert "source=simulator" in body and "pause the runtime" in body and "doctor (D)" in body
    assert {k: v for k, v in tree_digest(a.root).items() if "logs" not in k and "team-state" not in k} == \
        {k: v for k, v in after_write.items() if "logs" not in k and "team-state" not in k}
    assert team.exists()


async def test_denial_leaves_every_file_identical(tmp_path):
    a = app(tmp_path)
    (state_dir(a.root, SESSION) / "skill-active-state.json").write_text("{not json")
    before = tree_digest(a.root)
    async with a.run_test(size=SIZE) as pilot:
        select_row(pilot.app, "scopes-table", member_row("team"))
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(pilot.app.screen, Notice)
        assert "nothing was changed" in text_of(pilot.app.screen)
        await pilot.press("escape")
        assert "skill-active-state.json" in (pilot.app.last_error or "")
    assert tree_digest(a.root) == before


async def test_undo_restores_bytes(tmp_path):
    a = app(tmp_path)
    before = {k: v for k, v in tree_digest(a.root).items() if "logs" not in k}
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        await pilot.press("y")
        await settle(pilot)
        assert {k: v for k, v in tree_digest(a.root).items() if "logs" not in k} != before
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmPlan)
        await pilot.press("y")
        await settle(pilot)
    assert {k: v for k, v in tree_digest(a.root).items() if "logs" not in k} == before


async def test_undo_refused_when_file_changed_since(tmp_path):
    a = app(tmp_path)
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        await pilot.press("y")
        await settle(pilot)
        canonical(a.root, ["forge"], SESSION, source="hook")
        before = tree_digest(a.root)
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(pilot.app.screen, Notice)
        assert "changed since" in text_of(pilot.app.screen)
    assert tree_digest(a.root) == before


async def test_override_writes_state_and_transcript(tmp_path):
    a = app(tmp_path)
    tdir = a.root / ".rcs" / "tasks" / "login-api"
    async with a.run_test(size=SIZE) as pilot:
        await open_override(pilot)
        modal = pilot.app.screen
        phases = [str(o.prompt) for o in modal.query_one("#override-phase").options]
        assert "codegen" not in phases and "test" in phases  # reachable only, never the current phase
        modal.query_one("#override-phase").highlighted = phases.index("test")
        await settle(pilot)
        assert modal.query_one("#apply").disabled  # a reason is required
        modal.query_one("#override-reason").focus()
        await pilot.press(*"flaky ci")
        await settle(pilot)
        assert '"reason": "flaky ci"' in text_of(modal)
        await pilot.click("#apply")
        await settle(pilot)
    state = read(tdir / "state.json")
    assert state["phase"] == "test" and state["ticket"] == "RCS-42"
    last = json.loads((tdir / "transcript.jsonl").read_text().splitlines()[-1])
    assert (last["from"], last["to"], last["kind"], last["reason"], last["actor"]) == \
        ("codegen", "test", "override", "flaky ci", "operator@console")


async def test_an_override_records_when_it_was_applied_not_when_its_dialog_opened(tmp_path):
    """The dialog was open for ten minutes: the transcript line carries the moment the phase changed."""
    from rcs_tui.core.times import iso

    now = [NOW]
    a = app(tmp_path, clock=lambda: now[0])
    tdir = a.root / ".rcs" / "tasks" / "login-api"
    async with a.run_test(size=SIZE) as pilot:
        await open_override(pilot)
        modal = pilot.app.screen
        phases = [str(o.prompt) for o in modal.query_one("#override-phase").options]
        modal.query_one("#override-phase").highlighted = phases.index("test")
        modal.query_one("#override-reason").focus()
        await pilot.press(*"flaky ci")
        await settle(pilot)
        assert iso(NOW, ms=True) in text_of(modal)  # the preview shows the time as of now
        now[0] = NOW + 600
        await pilot.click("#apply")
        await settle(pilot)
    last = json.loads((tdir / "transcript.jsonl").read_text().splitlines()[-1])
    assert last["at"] == iso(NOW + 600, ms=True) and last["to"] == "test"


async def test_doctor_fix_repairs_a_resurrecting_root_survivor(tmp_path):
    a = app(tmp_path)
    survivor = mode(a.root, "forge", None, current_phase="executing")
    async with a.run_test(size=SIZE) as pilot:
        await pilot.press("D")
        await settle(pilot)
        doctor = pilot.app.screen
        assert isinstance(doctor, DoctorScreen)
        key = "root-survivor:root:forge"
        assert key in [f.id for f in doctor.findings]
        select_row(pilot.app, "doctor-table", key)
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmPlan)
        await pilot.press("y")
        await settle(pilot)
        assert doctor.last_result["applied"] == [{"id": key, "journal_id": doctor.last_result["applied"][0][
            "journal_id"], "held": True}]
        assert "repaired" in text_of(doctor)
    assert not survivor.exists()
    assert (state_dir(a.root, SESSION) / "forge-state.json").exists()


async def test_resurrection_after_clear_is_reported_loudly(tmp_path):
    a = app(tmp_path)  # watched for the product's own window after the clear
    team = state_dir(a.root, SESSION) / "team-state.json"
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        await pilot.press("y")
        await settle(pilot)
        assert not team.exists()
        team.write_text(json.dumps({"active": True, "current_phase": "team-exec", "source": "keyword-detector",
                                    "transition_source": "native-hook"}))
        for _ in range(300):  # the watch looks every 0.5 s; generous for a busy machine
            await pilot.pause(0.1)
            if isinstance(pilot.app.screen, Notice) and "CAME BACK" in text_of(pilot.app.screen):
                break
        assert isinstance(pilot.app.screen, Notice)
        body = text_of(pilot.app.screen)
        assert "CAME BACK" in body and "team-state.json" in body
        assert "source=keyword-detector" in body and "transition_source=native-hook" in body
        await pilot.press("D")
        await settle(pilot)
        assert isinstance(pilot.app.screen, DoctorScreen)


async def test_whatif_shows_the_decision_and_writes_nothing(tmp_path):
    a = app(tmp_path)
    before = tree_digest(a.root)
    async with a.run_test(size=SIZE) as pilot:
        await pilot.press("w")
        await settle(pilot)
        await pilot.press(*"autopilot")
        await settle(pilot)
        body = text_of(pilot.app.screen)
        assert "DENY" in body and "Cannot activate autopilot" in body
        field = pilot.app.screen.query_one("#whatif-input")
        field.value = "$blueprint $team $forge fix it"
        await settle(pilot)
        body = text_of(pilot.app.screen)
        assert "deferred skills: team, forge" in body
    assert tree_digest(a.root) == before


@pytest.mark.parametrize("key", ["d", "C", "o", "u"])
async def test_readonly_hides_mutating_actions(tmp_path, key):
    a = app(tmp_path, readonly=True)
    before = tree_digest(a.root)
    async with a.run_test(size=SIZE) as pilot:
        select_row(pilot.app, "scopes-table", member_row("team"))
        await pilot.press(key)
        await settle(pilot)
        assert not isinstance(pilot.app.screen, ConfirmPlan | Notice)
        names = [c[2] for c in pilot.app.palette_commands()]
        assert "clear" not in names and "undo" not in names and "doctor" in names
    assert tree_digest(a.root) == before


async def test_bad_mode_file_shows_a_badge_not_a_crash(tmp_path):
    a = app(tmp_path)
    (state_dir(a.root, SESSION) / "forge-state.json").write_text("\x1b[31m{broken")
    async with a.run_test(size=SIZE) as pilot:
        for key in ("1", "2", "3", "4", "5", "1"):
            await pilot.press(key)
            await settle(pilot)
        status = str(pilot.app.screen.query_one("#status").render())
        assert "unreadable file" in status


async def test_cursor_stays_in_the_scope_after_a_clear(tmp_path):
    a = app(tmp_path)
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        await pilot.press("y")
        await settle(pilot)
        assert pilot.app.screen.query_one("ScopesPane").selected() == member_row("forge")  # the next row
        await open_clear(pilot, member_row("blueprint"))  # the scope's last row: the one before it
        await pilot.press("y")
        await settle(pilot)
        assert pilot.app.screen.query_one("ScopesPane").selected() == member_row("forge")
        await pilot.press("r")
        await settle(pilot)
        assert pilot.app.screen.query_one("ScopesPane").selected() == member_row("forge")


async def test_done_task_says_it_is_terminal_once(tmp_path):
    from tests.fixtures_tasks import make_task

    a = app(tmp_path)
    make_task(a.root, "shipped", "done")
    async with a.run_test(size=(80, 40)) as pilot:
        await pilot.press("3")
        await settle(pilot)
        select_row(pilot.app, "tasks-table", "shipped")
        await pilot.press("enter")
        await settle(pilot)
        body = text_of(pilot.app.screen)
        assert body.count("is terminal") == 1 and "task redo shipped" in body


async def test_journal_state_column_says_done_undone_interrupted(tmp_path):
    a = app(tmp_path)
    journal = a.root / ".rcs" / "logs" / "rcs-tui-journal.jsonl"
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        await pilot.press("y")
        await settle(pilot)
        pilot.app.watches.clear()  # the undo brings team back on purpose
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        clear = json.loads(journal.read_text().splitlines()[0])
        # a write-ahead entry whose commit marker never followed: the process died mid-way
        with journal.open("a") as f:
            f.write(json.dumps({**clear, "id": "j-interrupted", "state": "pending"}) + "\n")
        await pilot.press("5")
        await settle(pilot)
        table = pilot.app.screen.query_one("#journal-table")
        col = table.labels.index("state")
        states = {key: table.drawn(key)[col] for key in table.keys}
    assert states.pop("j-interrupted") == "INTERRUPTED"
    assert states.pop(clear["id"]) == "undone"
    assert list(states.values()) == ["done"]  # the undo itself


async def test_slash_filters_team_and_journal(tmp_path):
    a = app(tmp_path)
    async with a.run_test(size=SIZE) as pilot:
        await open_clear(pilot, member_row("team"))
        await pilot.press("y")
        await settle(pilot)
        await open_clear(pilot, member_row("forge"))
        await pilot.press("y")
        await settle(pilot)
        screen = pilot.app.screen
        await pilot.press("2", "slash", *"worker-2")
        await settle(pilot)
        assert screen.query_one("#team-workers").row_count == 1
        assert screen.query_one("#team-tasks").keys == ["login-flow/2"]  # its owner
        await pilot.press("enter", "5")
        await settle(pilot)
        assert screen.query_one("#journal-table").row_count == 2
        await pilot.press("slash", *"forge-state")  # a file path the entry changed
        await settle(pilot)
        table = screen.query_one("#journal-table")
        assert table.row_count == 1 and "forge" in table.drawn(table.keys[0])[1]


async def palette_names(pilot, query: str) -> list[str]:
    from textual.command import CommandList

    await pilot.press(*query)
    for _ in range(20):  # the palette searches in the background
        await pilot.pause(0.05)
        options = pilot.app.screen.query_one(CommandList).options
        if options:
            break
    return [str(o.prompt).split("\n")[0] for o in options]


@pytest.mark.parametrize("opener", ["ctrl+p", "colon"])
async def test_command_palette_runs_doctor(tmp_path, opener):
    from textual.command import CommandPalette

    a = app(tmp_path)
    async with a.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(opener)
        await settle(pilot)
        assert isinstance(pilot.app.screen, CommandPalette)
        names = await palette_names(pilot, "doctor")
        assert names and names[0].startswith("Doctor"), names
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, DoctorScreen)


async def test_readonly_palette_hides_mutating_commands(tmp_path):
    a = app(tmp_path, readonly=True)
    async with a.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon")
        await settle(pilot)
        for query, hidden in (("clear", "Clear selected"), ("undo", "Undo last"), ("override", "Override task")):
            names = await palette_names(pilot, query)
            assert not any(n.startswith(hidden) for n in names), names
            await pilot.press(*["backspace"] * len(query))
        assert any(n.startswith("Doctor") for n in await palette_names(pilot, "doctor"))
