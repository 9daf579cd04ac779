"""The console at 80 and 60 columns: the status bar and the tables fit, and no word is cut in half (an error
that starts with a long word still shows, whole words or its mark, at every width)."""

from __future__ import annotations

import re

import pytest

from rcs_tui.ui.console.statusbar import clip_words, status_text
from tests.console_fixtures import NOW, app, settle
from tests.statefix import mode

COUNTS = re.compile(r"2 live 1 stale 1 survivor|2● 1◌ 1▲")


def test_clip_words_never_cuts_a_word():
    assert clip_words("rp1 database locked by another writer", 20) == "rp1 database locked…"
    assert clip_words("short", 20) == "short"
    assert clip_words("unbreakable-single-token", 10) == "…"


@pytest.mark.parametrize("width", [78, 58, 40])
@pytest.mark.parametrize("opts", [
    {"paused": False, "readonly": False, "last_error": None, "watching": "native"},
    {"paused": True, "readonly": True, "last_error": None, "watching": "polling"},
    {"paused": False, "readonly": True, "last_error": "rp1 database is locked by another writer, retrying later",
     "watching": "off"},
])
def test_status_fits_and_keeps_every_count(tmp_path, width, opts):
    a = app(tmp_path)
    mode(a.root, "ultrawork", None, started_at="2026-11-25T19:45:00.000Z")  # a root survivor: a third count
    world = a.loader.load()
    full = status_text(world, NOW, **opts).plain
    assert "1 survivor" in full
    text = status_text(world, NOW, width=width, **opts).plain
    assert len(text) <= width, text
    assert COUNTS.search(text), text  # every count, whole
    if opts["readonly"]:
        assert "READ-ONLY" in text or "RO" in text.split()
    if opts["paused"]:
        assert "PAUSED" in text
    if opts["last_error"]:
        shown = text.rsplit(" │ ", 1)[-1].rstrip("…").split()
        assert shown and all(w in opts["last_error"].split() for w in shown), text


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_status_bar_shows_every_count_at_80_and_60_columns(tmp_path, size):
    a = app(tmp_path)
    mode(a.root, "ultrawork", None, started_at="2026-11-25T19:45:00.000Z")
    async with a.run_test(size=size) as pilot:
        await settle(pilot)
        line = str(pilot.app.screen.query_one("#status").render())
        assert COUNTS.search(line), line
        assert len(line) <= size[0] - 2


def test_active_label_keeps_whole_mode_names():
    from rcs_tui.ui.console.scopes import active_label

    assert active_label(["forge", "team"]) == "forge+team"
    assert active_label(["team", "ultrawork"]) == "team+ultrawork"
    assert active_label(["deep-interview", "ultrawork", "team"]) == "3 modes"
    assert active_label([]) == "(none)"


def cells_fit(table) -> list[str]:
    """Every cell's text, after checking it fits its column and the table needs no horizontal scroll."""
    assert table.max_scroll_x == 0, table.labels
    out = []
    for key in table.keys:
        drawn = table.drawn(key)
        assert len(drawn) == len(table.labels), (key, drawn)
        for label, width, text in zip(table.labels, table.widths, drawn, strict=True):
            assert len(text) <= width, (label, text)
            out.append(text)
    return out


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_tables_fit_without_cutting_words(tmp_path, size):
    a = app(tmp_path)
    async with a.run_test(size=size) as pilot:
        await settle(pilot)
        scopes = cells_fit(pilot.app.screen.query_one("#scopes-table"))
        assert "forge+team" in scopes and "team+ultrawork" in scopes
        if size[0] >= 80:
            assert "session.json" in scopes and "current via" in scopes
        for key, table in (("2", "#team-workers"), ("2", "#team-tasks"), ("3", "#tasks-table"),
                           ("4", "#runs-table"), ("5", "#journal-table")):
            await pilot.press(key)
            await settle(pilot)
            cells = cells_fit(pilot.app.screen.query_one(table))
            if table == "#runs-table":
                assert "waiting (1?)" in cells and "deep-research" in cells


async def test_resize_refits_columns_and_keeps_the_cursor(tmp_path):
    from tests.console_fixtures import member_row, select_row

    a = app(tmp_path)
    async with a.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        select_row(pilot.app, "scopes-table", member_row("forge"))
        await pilot.resize_terminal(60, 20)
        await settle(pilot)
        table = pilot.app.screen.query_one("#scopes-table")
        assert table.labels == ["scope / mode", "health", "label", "age"]
        assert pilot.app.screen.query_one("ScopesPane").selected() == member_row("forge")
        cells_fit(table)
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert len(table.labels) == 6
        assert pilot.app.screen.query_one("ScopesPane").selected() == member_row("forge")


@pytest.mark.parametrize("width", [30, 26])
@pytest.mark.parametrize("opts", [
    {"paused": True, "readonly": True, "last_error": None, "watching": "native"},
    {"paused": False, "readonly": True, "last_error": "rp1 database is locked by another writer, retrying later",
     "watching": "native"},
    {"paused": True, "readonly": True, "last_error": "rp1 database is locked", "watching": "off"},
])
def test_a_narrow_pane_drops_session_and_live_mark_before_an_error(tmp_path, width, opts):
    """At 30 columns and less the error, READ-ONLY, PAUSED and every count still show whole; the edge
    never cuts them off."""
    a = app(tmp_path)
    mode(a.root, "ultrawork", None, started_at="2026-11-25T19:45:00.000Z")
    text = status_text(a.loader.load(), NOW, width=width, **opts).plain
    assert len(text) <= width and not text.endswith("…"), text
    assert COUNTS.search(text), text
    assert "RO" in text.split()
    assert ("❚❚" in text) == opts["paused"]
    assert ("✖" in text) == bool(opts["last_error"]), text
    if width == 30 and not opts["paused"]:
        assert "✖ error" in text


LONG_FIRST_WORD = ("/home/operator/work/project/.rcs/state/sessions/rcs-1764106896953-k3j9x2/forge-state.json"
                   " changed underneath; nothing was changed")


@pytest.mark.parametrize("paused", [False, True])
@pytest.mark.parametrize("readonly", [False, True])
def test_an_error_whose_first_word_is_long_still_shows_at_every_width(tmp_path, paused, readonly):
    """An error starting with a long path never shows as a bare "…": at any width the line holds either
    whole words of the error or its mark, and it fits."""
    from rcs_tui.ui.console.statusbar import status_text
    from tests.console_fixtures import NOW, app

    world = app(tmp_path).loader.load()
    for width in range(22, 121):
        text = status_text(world, NOW, width=width, paused=paused, readonly=readonly, last_error=LONG_FIRST_WORD,
                           watching="native").plain
        assert len(text) <= width, (width, text)
        shown = text.rsplit(" │ ", 1)[-1]
        words = shown.rstrip("…").split()
        assert shown.startswith("✖") or (words and words[0] in LONG_FIRST_WORD.split()), (width, text)

