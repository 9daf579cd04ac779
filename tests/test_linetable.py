"""LineTable: what an update costs (rows drawn), where the cursor goes, what it tells its screen, and that
after any updates every line on screen is the one a fresh paint draws."""

from __future__ import annotations

import random

from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region

from rcs_tui.ui.linetable import LineTable, successor


def rows_of(keys: list[str], mark: dict[str, str] | None = None) -> list[tuple[str, list[Text]]]:
    mark = mark or {}
    return [(k, [Text(k), Text(mark.get(k, "ok"))]) for k in keys]


class Host(App):
    """One table; records the messages it posts."""

    def __init__(self, keys: list[str]) -> None:
        super().__init__()
        self.start = keys
        self.highlighted: list[str | None] = []
        self.selected: list[str] = []

    def compose(self) -> ComposeResult:
        yield LineTable(id="t")

    def on_mount(self) -> None:
        table = self.query_one(LineTable)
        table.set_columns(["name", "state"], [10, 8])
        table.set_rows(rows_of(self.start))
        table.focus()

    def on_line_table_highlighted(self, event: LineTable.Highlighted) -> None:
        self.highlighted.append(event.key)

    def on_line_table_selected(self, event: LineTable.Selected) -> None:
        self.selected.append(event.key)


def screen_lines(app: App) -> list[str]:
    table = app.query_one(LineTable)
    return [table.render_line(y).text.rstrip() for y in range(table.size.height)]


KEYS = [f"r{i:02d}" for i in range(30)]


async def test_a_cell_update_draws_and_repaints_that_row_alone():
    app = Host(KEYS)
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(LineTable)
        before = table.renders
        table.set_rows(rows_of(KEYS, {"r03": "FAILED"}))
        await pilot.pause()
        assert table.renders == before + 1
        assert any(line.split() == ["r03", "FAILED"] for line in screen_lines(app))
        table.set_rows(rows_of(KEYS, {"r03": "FAILED"}))  # the same cells again: nothing drawn
        await pilot.pause()
        assert table.renders == before + 1


def spy_repaints(table: LineTable) -> list[object]:
    """Record what the table asks to repaint: each line (as `(y, 1)`) of the regions it names, or "all"."""
    asked: list[object] = []
    real = table.refresh

    def refresh(*regions, **kwargs):
        asked.extend([(y, 1) for r in regions for y in range(r.y, r.bottom)] or ["all"])
        return real(*regions, **kwargs)

    table.refresh = refresh  # type: ignore[method-assign]
    return asked


async def test_only_the_lines_of_changed_or_moved_rows_are_repainted():
    app = Host(KEYS[:8])
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(LineTable)
        asked = spy_repaints(table)
        table.set_rows(rows_of(KEYS[:8], {"r05": "FAILED"}))
        assert asked == [(6, 1)]  # the header is line 0
        asked.clear()
        swapped = KEYS[:2] + ["r03", "r02"] + KEYS[4:8]
        table.set_rows(rows_of(swapped))
        assert sorted(asked) == [(3, 1), (4, 1), (6, 1)]  # the swapped pair, and r05 back to "ok"
        asked.clear()
        table.set_rows(rows_of(swapped))
        assert asked == []


async def test_a_resort_moves_lines_without_drawing_rows():
    app = Host(KEYS[:8])
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(LineTable)
        before = table.renders
        order = list(reversed(KEYS[:8]))
        table.set_rows(rows_of(order))
        await pilot.pause()
        assert table.renders == before
        assert [line.split()[0] for line in screen_lines(app)[1:9]] == order
        assert table.selected == "r00" and table.cursor == 7  # the cursor followed its row


async def test_highlighted_is_posted_when_the_cursor_moves_and_when_rows_change_under_it():
    app = Host(KEYS[:5])
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        assert app.highlighted == ["r00"]
        await pilot.press("down", "down")
        await pilot.pause()
        assert app.highlighted == ["r00", "r01", "r02"]
        await pilot.press("end")
        await pilot.press("home")
        await pilot.pause()
        assert app.highlighted[-2:] == ["r04", "r00"]
        table = app.query_one(LineTable)
        table.move_cursor(2)
        table.set_rows(rows_of(["r00", "r01", "r03", "r04"]))  # r02 went: its follower is highlighted
        await pilot.pause()
        assert app.highlighted[-1] == "r03" and table.selected == "r03"
        count = len(app.highlighted)
        table.set_rows(rows_of(["r03", "r00", "r01", "r04"]))  # moved, still the same row: no message
        await pilot.pause()
        assert len(app.highlighted) == count
        table.set_rows([])
        await pilot.pause()
        assert app.highlighted[-1] is None


async def test_enter_and_a_click_on_the_highlighted_row_select_it():
    app = Host(KEYS[:5])
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.selected == ["r01"]
        await pilot.click(LineTable, offset=(2, 4))  # header is line 0: line 4 shows r03
        await pilot.pause()
        assert app.query_one(LineTable).selected == "r03" and app.selected == ["r01"]
        await pilot.click(LineTable, offset=(2, 4))
        await pilot.pause()
        assert app.selected == ["r01", "r03"]


async def test_page_keys_move_by_a_screen_and_keep_the_cursor_in_view():
    app = Host(KEYS)
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(LineTable)
        await pilot.press("pagedown")
        await pilot.pause()
        assert table.cursor == table.size.height - 2
        await pilot.press("end")
        await pilot.pause()
        assert table.selected == "r29"
        assert screen_lines(app)[-1].split()[0] == "r29"


async def test_new_columns_keep_rows_and_cursor_and_cut_cells_with_an_ellipsis():
    app = Host(KEYS[:5])
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(LineTable)
        table.move_cursor(3)
        table.set_columns(["name", "state"], [2, 8])
        await pilot.pause()
        assert table.selected == "r03" and table.column_width("name") == 2 and table.column_width("x") is None
        assert table.drawn("r03") == ["r…", "ok"]
        assert screen_lines(app)[4].split() == ["r…", "ok"]


def test_successor_prefers_the_following_row_then_the_previous_within_the_group():
    old = ["a:1", "a:2", "b:1", "b:2"]
    group = lambda k: k.split(":")[0]  # noqa: E731
    assert successor(old, "a:1", {"a:2", "b:1", "b:2"}) == "a:2"
    assert successor(old, "b:2", {"a:1", "a:2", "b:1"}) == "b:1"  # the last one: the one before
    assert successor(old, "a:2", {"a:1", "b:1", "b:2"}) == "b:1"  # without groups: the next
    assert successor(old, "a:2", {"a:1", "b:1", "b:2"}, group) == "a:1"  # its own group first
    assert successor(old, "a:2", {"b:1", "b:2"}, group) == "b:1"  # its group is gone: the next
    assert successor(old, "a:2", set()) is None
    assert successor(old, None, {"a:1"}) is None


# -- the lines repainted are every line whose content changed ------------------------------------------------
def painted(table: LineTable) -> list[str]:
    """The lines as the screen holds them (Textual's line cache: only lines marked dirty were drawn again)."""
    return [s.text for s in table.render_lines(Region(0, 0, table.size.width, table.size.height))]


def drawn_now(table: LineTable) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


async def test_after_any_updates_the_table_shows_what_a_fresh_paint_shows():
    """Re-sorts, rows added, dropped and replaced, cells changed, cursor moves and scrolling in random
    order: after each, every line on screen is the one a full repaint would draw."""
    for seed in range(12):
        rng = random.Random(seed)
        keys = [f"r{i:02d}" for i in range(rng.randint(0, 30))]
        marks: dict[str, str] = {}
        app = Host(keys)
        async with app.run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            table = app.query_one(LineTable)
            for step in range(30):
                op = rng.choice(["move", "mark", "cursor", "add", "drop", "replace", "scroll"])
                if op == "move" and keys:
                    key = keys.pop(rng.randrange(len(keys)))
                    keys.insert(rng.randrange(len(keys) + 1), key)
                elif op == "mark" and keys:
                    marks[rng.choice(keys)] = rng.choice(["ok", "FAILED", "waiting"])
                elif op == "cursor" and keys:
                    table.move_cursor(rng.randrange(len(keys)))
                elif op == "add":
                    keys.insert(rng.randrange(len(keys) + 1), f"n{step}")
                elif op == "drop" and keys:
                    keys.pop(rng.randrange(len(keys)))
                elif op == "replace" and keys:
                    keys[rng.randrange(len(keys))] = f"s{step}"
                elif op == "scroll":
                    table.scroll_to(y=rng.randrange(30), animate=False)
                if op not in ("cursor", "scroll"):
                    table.set_rows(rows_of(keys, marks))
                # twice: the messages and layout an update brings about, then a frame; no idle wait needed
                await pilot.pause(0)
                await pilot.pause(0)
                assert painted(table) == drawn_now(table), (seed, step, op)

