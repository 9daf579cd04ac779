"""Keys an operator reaches for, through Pilot: help and its legend, filters, details, edit, copy, redo."""

from __future__ import annotations

import json
import os
import stat

from rcs_tui.ui.console.confirm import ConfirmPlan
from rcs_tui.ui.console.doctor import DoctorScreen
from rcs_tui.ui.console.entry import EntryScreen
from rcs_tui.ui.console.help import HelpModal
from rcs_tui.ui.console.main import MainScreen
from rcs_tui.ui.console.override import OverrideModal
from tests.conftest import tree_digest
from tests.console_fixtures import SESSION, app, member_row, open_override, select_row, settle
from tests.statefix import mode, read, state_dir

SIZE = (100, 32)


def text_of(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query("Static"))


async def test_help_has_a_legend_for_every_glyph_the_console_draws(tmp_path):
    async with app(tmp_path).run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(pilot.app.screen, HelpModal)
        shown = text_of(pilot.app.screen)
        for glyph in ("◆", "◇", "▸", "●", "◌", "◍", "▲", "♥ alive", "✖ dead", "◌ silent", "waiting (1?)", "↻", "⚠",
                      "TOMBSTONE"):
            assert glyph in shown, glyph
        assert "esc/?/q close" in shown
        await pilot.press("j")
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, MainScreen)


async def test_esc_clears_an_active_filter_and_hides_its_bar(tmp_path):
    async with app(tmp_path).run_test(size=SIZE) as pilot:
        await pilot.press("3", "slash", "l", "o", "g")
        await settle(pilot)
        field = pilot.app.screen.query_one("#tasks-filter")
        table = pilot.app.screen.query_one("#tasks-table")
        assert field.value == "log" and table.row_count == 1
        await pilot.press("enter")  # back to the table, the filter stays
        await pilot.press("escape")
        await settle(pilot)
        assert field.value == "" and not field.has_class("shown") and table.row_count == 2
        assert pilot.app.focused is table


async def test_ctrl_c_quits(tmp_path):
    async with app(tmp_path).run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert not pilot.app.is_running


async def test_doctor_list_moves_with_j_and_k(tmp_path):
    a = app(tmp_path)
    mode(a.root, "ralph", None)  # a second finding: an orphan in root
    async with a.run_test(size=SIZE) as pilot:
        await pilot.press("D")
        await settle(pilot)
        assert isinstance(pilot.app.screen, DoctorScreen)
        table = pilot.app.screen.query_one("#doctor-table")
        assert table.row_count >= 2 and table.cursor == 0
        await pilot.press("j")
        assert table.cursor == 1
        await pilot.press("k")
        assert table.cursor == 0
        assert "j/k move" in text_of(pilot.app.screen)


async def test_enter_in_the_journal_opens_the_entry_then_undo_and_redo_from_it(tmp_path):
    a = app(tmp_path)
    team = state_dir(a.root, SESSION) / "team-state.json"
    before = team.read_bytes()
    async with a.run_test(size=SIZE) as pilot:
        select_row(pilot.app, "scopes-table", member_row("team"))
        await pilot.press("d", "y")
        await settle(pilot)
        assert not team.exists()
        await pilot.press("5")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, EntryScreen)
        shown = text_of(pilot.app.screen)
        assert "state clear team" in shown and "operator@console" in shown
        assert f".rcs/state/sessions/{SESSION}/team-state.json" in shown and "(deleted)" in shown
        assert '-  "current_phase": "team-exec",' in shown  # the before-image, line by line
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmPlan) and pilot.app.focused.id == "cancel"
        await pilot.press("y")
        await settle(pilot)
        assert team.read_bytes() == before
        assert isinstance(pilot.app.screen, MainScreen)
        await pilot.press("U")  # redo the undone clear through the same checked path
        await settle(pilot)
        assert "Redo: redo state clear team" in text_of(pilot.app.screen)
        await pilot.press("y")
        await settle(pilot)
        assert not team.exists()
    actions = [json.loads(x).get("action") for x in (a.root / ".rcs/logs/rcs-tui-journal.jsonl").read_text()
               .splitlines() if '"action"' in x]
    assert actions == ["state clear team", "undo state clear team", "redo state clear team"]


async def test_e_opens_the_selected_file_in_the_editor_and_reloads(tmp_path, monkeypatch):
    a = app(tmp_path)
    editor = tmp_path / "fake-editor"
    editor.write_text("#!/bin/sh\nsed -i 's/team-exec/team-fix/' \"$1\"\necho \"$1\" > \"$(dirname \"$0\")/edited\"\n")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("VISUAL", f"{editor}")
    team = state_dir(a.root, SESSION) / "team-state.json"
    async with a.run_test(size=SIZE) as pilot:
        select_row(pilot.app, "scopes-table", member_row("team"))
        await pilot.press("e")
        await settle(pilot)
        assert (tmp_path / "edited").read_text().strip() == str(team)
        assert read(team)["current_phase"] == "team-fix"
        cells = pilot.app.screen.query_one("#scopes-table").drawn(member_row("team"))
        assert "team-fix" in cells  # reloaded after the editor returned


async def test_e_is_refused_read_only_and_without_a_selection(tmp_path, monkeypatch):
    monkeypatch.setenv("VISUAL", "/bin/false")
    a = app(tmp_path, readonly=True)
    before = tree_digest(a.root)
    async with a.run_test(size=SIZE) as pilot:
        select_row(pilot.app, "scopes-table", member_row("team"))
        await pilot.press("e")
        await settle(pilot)
    assert tree_digest(a.root) == before


async def test_y_copies_the_selected_path_or_id(tmp_path):
    async with app(tmp_path).run_test(size=SIZE) as pilot:
        select_row(pilot.app, "scopes-table", member_row("team"))
        await pilot.press("y")
        assert pilot.app.clipboard == str(state_dir(pilot.app.root, SESSION) / "team-state.json")
        await pilot.press("4")
        await settle(pilot)
        select_row(pilot.app, "runs-table", "run-0002-review")
        await pilot.press("y")
        assert pilot.app.clipboard == "run-0002-review"


async def test_override_modal_shows_its_keys_and_speaks_the_console_s_words(tmp_path):
    a = app(tmp_path)
    async with a.run_test(size=SIZE) as pilot:
        await open_override(pilot)
        assert isinstance(pilot.app.screen, OverrideModal)
        shown = text_of(pilot.app.screen)
        assert "enter next field" in shown and "ctrl+s applies" in shown and "esc cancel" in shown
        assert "--reason" not in shown and "type it in the reason field" in shown
        await pilot.press("enter")  # phase chosen → reason field
        await pilot.press(*"hotfix verified")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(pilot.app.screen, MainScreen)
    lines = (a.root / ".rcs/tasks/login-api/transcript.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["reason"] == "hotfix verified"


async def test_demo_banner_says_a_simulator_changes_the_data(tmp_path):
    from rcs_tui.cli.demo_cmd import DEMO_BANNER

    async with app(tmp_path, banner=DEMO_BANNER).run_test(size=SIZE) as pilot:
        assert "a simulator changes this workspace" in text_of(pilot.app.screen)


async def test_hud_has_help_and_a_key_hint_that_fits_40_columns(tmp_path):
    from rcs_tui.ui.hud_app import HudApp
    from rcs_tui.ui.hud_help import KEY_HINT, HudHelp
    from tests.console_fixtures import build

    root = build(tmp_path, rp1=False)
    assert len(KEY_HINT) <= 40
    hud = HudApp(root, watch=False, rp1_db=False)
    async with hud.run_test(size=(40, 8)) as pilot:
        assert hud.query_one("#hud-keys").display and "? help" in str(hud.query_one("#hud-keys").render())
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(hud.screen, HudHelp)
        assert "root survivor" in text_of(hud.screen)
    async with HudApp(root, watch=False, rp1_db=False).run_test(size=(80, 1)) as pilot:
        assert not pilot.app.query_one("#hud-keys").display


def test_editor_command_prefers_visual_and_splits_like_a_shell():
    from rcs_tui.ui.console.editor import editor_command

    assert editor_command({"VISUAL": "code -w", "EDITOR": "nano"}) == ["code", "-w"]
    assert editor_command({"EDITOR": "nano"}) == ["nano"]
    assert os.path.basename((editor_command({}) or ["vi"])[0]) == "vi"


async def test_detail_lines_follow_the_highlighted_row(tmp_path):
    a = app(tmp_path)
    mode(a.root, "ralph", None)  # a second doctor finding: an orphan in root
    async with a.run_test(size=SIZE) as pilot:
        select_row(pilot.app, "scopes-table", member_row("team"))
        await settle(pilot)
        detail = pilot.app.screen.query_one("#scopes-detail")
        assert str(detail.render()).startswith("team live")
        await pilot.press("j")
        await settle(pilot)
        assert str(detail.render()).startswith("forge live")
        await pilot.click("#scopes-table", offset=(2, 1))  # the header is line 0: line 1 is root
        await settle(pilot)
        assert str(detail.render()).startswith("root")
        await pilot.press("D")
        await settle(pilot)
        doctor = pilot.app.screen.query_one("#doctor-detail")
        first = str(doctor.render())
        await pilot.press("j")
        await settle(pilot)
        assert str(doctor.render()) != first and " in " in str(doctor.render()).splitlines()[0]


async def test_a_view_switch_rebuilds_no_rows_of_a_view_whose_data_did_not_change(tmp_path, monkeypatch):
    import rcs_tui.ui.console.scopes as scopes

    built: list[int] = []
    real = scopes.scope_rows
    monkeypatch.setattr(scopes, "scope_rows", lambda *a, **k: built.append(1) or real(*a, **k))
    now = [1_795_000_000.0]
    async with app(tmp_path, clock=lambda: now[0]).run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert built
        built.clear()
        await pilot.press("2", "1")
        await settle(pilot)
        assert built == []  # same World, same second: the rows on screen are still right
        now[0] += 1.0
        await pilot.press("2", "1")
        await settle(pilot)
        assert built == [1]  # a second later its ages are drawn again, once
        mode(pilot.app.root, "team", SESSION, current_phase="team-verify")
        await pilot.press("r")  # a new World: drawn again in the same second
        await settle(pilot)
        assert len(built) == 2
        assert "team-verify" in pilot.app.screen.query_one("#scopes-table").drawn(member_row("team"))


async def test_a_burst_of_updates_is_drawn_once_from_the_latest_world(tmp_path):
    from rcs_tui.ui.watcher import WorldUpdated

    a = app(tmp_path)
    drawn: list[object] = []
    async with a.run_test(size=SIZE) as pilot:
        await settle(pilot)
        real = a.refresh_views
        a.refresh_views = lambda: (drawn.append(a.world), real())[1]  # type: ignore[method-assign]
        worlds = [a.loader.load() for _ in range(5)]
        for world in worlds:  # arriving faster than the console draws
            a.post_message(WorldUpdated(world, frozenset()))
        await settle(pilot)
        assert drawn == [worlds[-1]]


async def test_a_view_key_draws_the_view_once_before_the_next_frame_and_a_click_draws_it_too(tmp_path):
    """A view key draws its view at once (not after the tabs announce the switch: two more trips through
    the message queue) and only once; a view chosen with the mouse is drawn as well."""
    from rcs_tui.ui.console.app import ConsoleApp

    drawn: list[str] = []
    console = app(tmp_path)
    async with console.run_test(size=SIZE) as pilot:
        await settle(pilot)
        real = ConsoleApp.refresh_views

        def spy(self) -> None:
            drawn.append(self.screen.tab)
            real(self)

        console.refresh_views = spy.__get__(console)  # type: ignore[method-assign]
        console.screen.show_tab("tasks")
        assert drawn == ["tasks"]  # drawn in the same call, before any frame
        assert console.screen.query_one("#tasks-table").row_count == 2
        await settle(pilot)
        assert drawn == ["tasks"]  # the tabs' own announcement draws nothing again
        await pilot.click("#--content-tab-team")
        await settle(pilot)
        assert console.screen.tab == "team" and drawn == ["tasks", "team"]


async def test_the_first_frame_holds_the_sessions_and_the_start_is_kept_out_of_full_collections(tmp_path):
    """The scopes view is drawn when its screen mounts (not one frame later), the other views are built
    only after that frame, and what the start built is frozen out of the collector's full passes (one
    of which landed on the first frame) until the console exits."""
    import gc

    from rcs_tui.ui.console.main import MainScreen

    seen: dict[str, object] = {}
    real = MainScreen.on_mount

    def on_mount(self) -> None:
        real(self)
        seen["rows"] = self.query_one("#scopes-table").row_count
        seen["built"] = self.views_built
        seen["frozen"] = gc.get_freeze_count()

    MainScreen.on_mount = on_mount  # type: ignore[method-assign]
    try:
        async with app(tmp_path).run_test(size=SIZE) as pilot:
            await settle(pilot)
            await settle(pilot)
            assert pilot.app.screen.views_built
    finally:
        MainScreen.on_mount = real  # type: ignore[method-assign]
    assert seen["rows"] and seen["built"] is False and seen["frozen"] > 0
    assert gc.get_freeze_count() == 0
