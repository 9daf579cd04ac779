"""The keys a k9s/lazygit/htop user reaches for, through Pilot at 80x24 and 120x36: g/G, `>`/`<` sorting,
enter on a scope header or a worker, a footer that offers only the keys that act, `y` after a dialog, and
ctrl+c quitting every app."""

from __future__ import annotations

from pathlib import Path

import pytest

from rcs_tui.ui.console.confirm import ConfirmPlan
from rcs_tui.ui.console.details import ScopeScreen, WorkerScreen
from rcs_tui.ui.console.main import MainScreen
from rcs_tui.ui.linetable import LineTable, sort_key
from tests.console_fixtures import DEAD_WORKER, OTHER, WAITING_RUN, app, at, member_row, select_row, settle
from tests.statefix import mode
from tests.test_fleet import snapshot_app, until

SIZES = [(80, 24), (120, 36)]


def lines(table: LineTable) -> list[str]:
    """What the table shows on screen, header first."""
    return [table.render_line(y).text.rstrip() for y in range(table.size.height)]


def cursor_line(table: LineTable) -> str:
    return lines(table)[table.cursor - int(table.scroll_offset.y) + 1]


def footer_keys(app) -> set[str]:
    """The keys the footer shows (their binding names)."""
    return {key.key for key in app.screen.query("FooterKey")}


def text_of(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query("Static"))


@pytest.mark.parametrize("size", SIZES)
async def test_g_and_G_go_to_the_first_and_last_row_of_every_console_list(tmp_path, size):
    async with app(tmp_path).run_test(size=size) as pilot:
        for view, table_id in (("1", "#scopes-table"), ("3", "#tasks-table"), ("4", "#runs-table"),
                               ("2", "#team-workers")):
            await pilot.press(view)
            await settle(pilot)
            table = pilot.app.screen.query_one(table_id, LineTable)
            assert table.row_count >= 2, view
            await pilot.press("G")
            assert table.cursor == table.row_count - 1
            assert table.selected is not None and cursor_line(table).split() == " ".join(
                table.drawn(table.selected)).split()  # the last row is on screen, highlighted
            await pilot.press("g")
            assert table.cursor == 0
        mode(pilot.app.root, "ralph", None)  # a second finding for the doctor's list
        await pilot.press("D")
        await settle(pilot)
        table = pilot.app.screen.query_one("#doctor-table", LineTable)
        assert table.row_count >= 2
        await pilot.press("G")
        assert table.cursor == table.row_count - 1
        await pilot.press("g")
        assert table.cursor == 0


@pytest.mark.parametrize("size", SIZES)
async def test_greater_than_sorts_by_the_next_column_and_the_header_marks_it(tmp_path, size):
    async with app(tmp_path).run_test(size=size) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = pilot.app.screen.query_one("#team-tasks", LineTable)
        table.focus()
        await pilot.pause()
        given = list(table.keys)  # by status: in_progress, blocked, completed
        assert given == ["login-flow/2", "login-flow/3", "login-flow/1"]
        await pilot.press("greater_than_sign", "greater_than_sign")  # team, then id
        await pilot.pause()
        assert table.keys == ["login-flow/1", "login-flow/2", "login-flow/3"]
        header = lines(table)[0]
        assert "id ▲" in header and "team ▲" not in header
        assert [line.split()[1] for line in lines(table)[1:4]] == ["1", "2", "3"]
        await pilot.press("less_than_sign", "less_than_sign")  # back past the first column: the given order
        await pilot.pause()
        assert table.keys == given and "▲" not in lines(table)[0]
        assert "greater_than_sign" in footer_keys(pilot.app)


async def test_the_scopes_tree_keeps_its_order_and_offers_no_sort(tmp_path):
    async with app(tmp_path).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = pilot.app.screen.query_one("#scopes-table", LineTable)
        before = list(table.keys)
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert table.keys == before and "▲" not in lines(table)[0]
        assert "greater_than_sign" not in footer_keys(pilot.app)


def test_ages_sort_by_their_seconds_and_numbers_as_numbers():
    assert sorted(["2h", "45s", "3m", "-"], key=sort_key) == ["45s", "3m", "2h", "-"]
    assert sorted(["task-10", "task-9"], key=sort_key) == ["task-9", "task-10"]


@pytest.mark.parametrize("size", SIZES)
async def test_enter_on_a_scope_header_opens_the_scope(tmp_path, size):
    async with app(tmp_path).run_test(size=size) as pilot:
        await settle(pilot)
        select_row(pilot.app, "scopes-table", f"scope:{OTHER}")
        await pilot.press("enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ScopeScreen)
        shown = text_of(screen)
        assert f"session {OTHER}" in shown and "team + ultrawork" in shown
        assert "transitions the policy allows from here" in shown
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, MainScreen)


@pytest.mark.parametrize("size", SIZES)
async def test_enter_on_a_worker_opens_its_heartbeat_and_files(tmp_path, size):
    async with app(tmp_path).run_test(size=size) as pilot:
        await pilot.press("2")
        await settle(pilot)
        select_row(pilot.app, "team-workers", "login-flow/worker-1")
        await pilot.press("enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, WorkerScreen)
        shown = text_of(screen)
        assert "worker-1 in team login-flow" in shown
        assert "dead: heartbeat says alive: false" in shown
        assert "workers/worker-1/heartbeat.json" in shown


@pytest.mark.parametrize("size", SIZES)
async def test_the_footer_offers_clear_only_where_it_acts_and_override_only_on_tasks(tmp_path, size):
    async with app(tmp_path).run_test(size=size) as pilot:
        await settle(pilot)
        assert "d" in footer_keys(pilot.app) and "o" not in footer_keys(pilot.app)
        for view in ("2", "4", "5"):
            await pilot.press(view)
            await settle(pilot)
            assert not {"d", "o"} & footer_keys(pilot.app), view
        await pilot.press("3")
        await settle(pilot)
        assert "o" in footer_keys(pilot.app) and "d" not in footer_keys(pilot.app)
        await pilot.press("d")  # does nothing here: no dialog opens
        await settle(pilot)
        assert isinstance(pilot.app.screen, MainScreen)
        assert "Clear selected member" not in [c[0] for c in pilot.app.palette_commands()]


async def test_y_presses_right_after_a_confirm_do_not_copy(tmp_path):
    """The `y` presses that confirmed a plan do nothing for AFTER_DIALOG_SECONDS after the dialog closed, on
    the app's own moment clock (driven here, so the bound is checked exactly whatever the machine's load)."""
    from rcs_tui.ui.console.app import AFTER_DIALOG_SECONDS

    copied: list[str] = []
    now = [1000.0]
    a = app(tmp_path, monotonic=lambda: now[0])
    a.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with a.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        select_row(pilot.app, "scopes-table", member_row("forge"))
        await pilot.press("y")  # no dialog closed yet: y copies
        await settle(pilot)
        assert len(copied) == 1
        pilot.app.clear_notifications()
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmPlan)
        await pilot.press("y", "y", "y", "y")
        await settle(pilot)
        assert not isinstance(pilot.app.screen, ConfirmPlan)
        assert len(copied) == 1
        assert not any("copied" in n.message for n in pilot.app._notifications)
        now[0] += AFTER_DIALOG_SECONDS - 0.01  # just before the bound: still nothing
        await pilot.press("y")
        await settle(pilot)
        assert len(copied) == 1
        now[0] = 1000.0 + AFTER_DIALOG_SECONDS  # at the bound, y copies again
        await pilot.press("y")
        await settle(pilot)
        assert len(copied) == 2


async def test_ctrl_c_quits_the_console(tmp_path):
    async with app(tmp_path).run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert not pilot.app.is_running


@pytest.mark.parametrize("size", SIZES)
async def test_ctrl_c_quits_the_fleet_and_g_G_move_in_it(tmp_path, size):
    fleet = snapshot_app(tmp_path)
    async with fleet.run_test(size=size) as pilot:
        table = fleet.screen.query_one("#fleet-table", LineTable)
        await until(lambda: table.row_count == len(fleet.rows))  # drawn just after the first frame
        await pilot.press("G")
        assert table.cursor == table.row_count - 1 > 0
        await pilot.press("g")
        assert table.cursor == 0
        await pilot.press("ctrl+c")
        await until(lambda: not fleet.is_running)


async def test_ctrl_c_quits_the_hud(tmp_path):
    from rcs_tui.ui.hud_app import HudApp
    from tests.console_fixtures import build

    root = build(tmp_path, rp1=False)
    hud = HudApp(Path(root), watch=False, rp1_db=False)
    async with hud.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+c")
        await until(lambda: not hud.is_running)


def screen_text(app) -> list[str]:
    """Every line of the terminal as drawn (modal over its screen)."""
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


@pytest.mark.parametrize("size", [(80, 24), (120, 36), (60, 20)])
async def test_a_confirmation_shows_its_effect_and_warning_first_and_scrolls_from_the_buttons(tmp_path, size):
    async with app(tmp_path).run_test(size=size) as pilot:
        await settle(pilot)
        select_row(pilot.app, "scopes-table", member_row("team"))
        await pilot.press("C")  # clear everywhere: two scopes change, and a warning
        await settle(pilot)
        modal = pilot.app.screen
        assert isinstance(modal, ConfirmPlan)
        shown = "\n".join(screen_text(pilot.app))
        assert "Active set, before → after" in shown
        assert "forge + team → forge" in shown
        assert "team + ultrawork →" in shown
        assert "agents still" in shown  # the warning, right under the effect
        assert shown.index("before → after") < shown.index("agents still")
        assert "j/k/PgUp/PgDn scroll" in shown
        plan = modal.query_one("#plan")
        assert pilot.app.focused.id == "cancel"
        if plan.max_scroll_y:  # too long for this terminal: the keys scroll it while Cancel keeps focus
            await pilot.press("j", "j")
            await pilot.pause()
            assert plan.scroll_y == 2
            await pilot.press("end")
            await pilot.pause()
            assert plan.scroll_y == plan.max_scroll_y
            assert "Entries removed" in "\n".join(screen_text(pilot.app))  # the plan's last part
            await pilot.press("k")
            await pilot.pause()
            assert plan.scroll_y == plan.max_scroll_y - 1
            assert pilot.app.focused.id == "cancel"
        else:
            assert size == (120, 36)


@pytest.mark.parametrize("size", SIZES)
async def test_the_fleet_sorts_by_project_and_its_footer_follows_the_tab(tmp_path, size):
    fleet = snapshot_app(tmp_path)
    async with fleet.run_test(size=size) as pilot:
        table = fleet.screen.query_one("#fleet-table", LineTable)
        await until(lambda: table.row_count == len(fleet.rows))  # drawn just after the first frame
        await pilot.press("greater_than_sign", "greater_than_sign")  # STATE, then PROJECT
        await pilot.pause()
        assert "PROJECT ▲" in lines(table)[0]
        names = [cells[1] for cells in (table.drawn(key) for key in table.keys)]
        assert names == sorted(names, key=str.lower) and len(names) == 7
        assert {"i", "slash", "2"} <= footer_keys(fleet) and "1" not in footer_keys(fleet)
        await pilot.press("2")
        await until(lambda: "1" in footer_keys(fleet))  # the footer is built again for the tab
        keys = footer_keys(fleet)
        assert "1" in keys and not {"i", "slash", "2"} & keys


@pytest.mark.parametrize("size", SIZES)
async def test_n_and_N_walk_every_row_that_needs_you_from_any_view(tmp_path, size):
    console = app(tmp_path)
    mode(console.root, "forge", OTHER)  # an orphan in the other session, beside the stale blueprint
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("3")  # from the tasks view, n goes on to the next view holding one: rp1's waiting run
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert at(console) == ("rp1", WAITING_RUN)
        visited = []
        for _ in range(5):
            await pilot.press("n")
            await settle(pilot)
            visited.append(at(console))
        # wrapping round: the scopes view's rows top down, the team's dead worker, the run, and again
        assert visited == [("scopes", member_row("blueprint")), ("scopes", member_row("forge", OTHER, OTHER)),
                           ("team", DEAD_WORKER), ("rp1", WAITING_RUN), ("scopes", member_row("blueprint"))]
        table = pilot.app.screen.query_one("#scopes-table", LineTable)
        shown = [lines_for(table, k) for v, k in visited if v == "scopes"]
        assert all("live" not in row for row in shown), shown  # only rows that need you
        backwards = []
        for _ in range(4):
            await pilot.press("N")
            await settle(pilot)
            backwards.append(at(console))
        assert backwards == [("rp1", WAITING_RUN), ("team", DEAD_WORKER), ("scopes", member_row("forge", OTHER, OTHER)),
                             ("scopes", member_row("blueprint"))]


def lines_for(table: LineTable, key: str) -> str:
    return " ".join(table.drawn(key))
