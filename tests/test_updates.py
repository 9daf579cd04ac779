"""A live text widget is handed new content only when what it would draw changed."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import Static

from rcs_tui.ui.updates import content_key, show_content


def test_a_change_of_style_alone_counts_as_a_change():
    """Rich's own equality ignores the base style: a note turning from dim to yellow (a problem) must
    still be drawn again."""
    assert Text("3 of 3", style="dim") == Text("3 of 3", style="yellow")
    assert content_key(Text("3 of 3", style="dim")) != content_key(Text("3 of 3", style="yellow"))
    bold = Text("a b")
    bold.stylize("bold", 0, 1)
    assert content_key(bold) != content_key(Text("a b"))
    assert content_key(Text("x", no_wrap=True)) != content_key(Text("x"))
    assert content_key(Text("x", style="dim")) == content_key(Text("x", style="dim"))


def test_content_that_cannot_be_compared_is_always_drawn():
    from rich.table import Table

    assert content_key(Table()) is None


class Host(App):
    def compose(self) -> ComposeResult:
        yield Static(id="note")


async def test_the_same_content_asks_no_layout_pass_and_new_content_is_shown():
    app = Host()
    async with app.run_test(size=(40, 5)) as pilot:
        note = app.query_one("#note", Static)
        assert show_content(note, Text("3 of 3 runs", style="dim"))
        await pilot.pause()
        layouts: list[bool] = []
        real = note.refresh

        def refresh(*regions, layout: bool = False, **kwargs):
            layouts.append(layout)
            return real(*regions, layout=layout, **kwargs)

        note.refresh = refresh  # type: ignore[method-assign]
        assert not show_content(note, Text("3 of 3 runs", style="dim"))
        assert layouts == []
        assert show_content(note, Text("3 of 3 runs", style="yellow"))
        assert layouts == [True]
        await pilot.pause()
        assert show_content(note, "4 of 4 runs")
        await pilot.pause()
        assert "4 of 4 runs" in str(note.render())


class BarHost(App):
    def compose(self) -> ComposeResult:
        from rcs_tui.ui.console.statusbar import StatusBar

        yield StatusBar(id="status")


async def test_the_status_bar_repaints_only_when_its_line_changes(tmp_path):
    from rcs_tui.project.loader import WorldLoader
    from rcs_tui.ui.console.statusbar import StatusBar
    from tests.console_fixtures import build

    world = WorldLoader(build(tmp_path, rp1=False), rp1_db=False, clock=lambda: 1e9).load()
    app = BarHost()
    async with app.run_test(size=(120, 3)) as pilot:
        bar = app.query_one(StatusBar)
        opts = {"paused": False, "readonly": False, "last_error": None}
        bar.show(world, 1e9, **opts)
        await pilot.pause()
        asked: list[object] = []
        real = bar.refresh

        def refresh(*regions, **kwargs):
            asked.append(regions)
            return real(*regions, **kwargs)

        bar.refresh = refresh  # type: ignore[method-assign]
        bar.show(world, 1e9, **opts)
        assert asked == []
        bar.show(world, 1e9, **{**opts, "paused": True})
        assert asked == [()]
        await pilot.pause()
        assert "PAUSED" in str(bar.render()).upper()
