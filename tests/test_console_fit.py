"""The console at 80 and 60 columns: the status bar and the tables fit, and no word is cut in half."""

from __future__ import annotations

import re

import pytest

from rcs_tui.ui.console.statusbar import clip_words, status_text
from tests.console_fixtures import NOW, app
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
        await pilot.pause()
        line = str(pilot.app.screen.query_one("#status").render())
        assert COUNTS.search(line), line
        assert len(line) <= size[0] - 2
