"""A long list of sessions is shown from their active sets, read ahead of the full read of every session.

The list the console shows before the full read is in must be the list the full read gives: the same
sessions, each with the same active set (hostile files included), and the same rows. The one-row scopes
the table keeps between redraws must equal rows built afresh after any change.
"""

from __future__ import annotations

import random

import pytest
from hostile_trees import MODES, hostile_tree
from statefix import canonical, mode, pointer, state_dir, write

from rcs_tui.project.loader import WorldLoader
from rcs_tui.state.reader import read_active_sets, read_snapshot
from rcs_tui.ui.console.scopes import COLLAPSE_OVER, scope_detail, scope_rows


@pytest.mark.parametrize("seed", range(6))
def test_active_sets_read_ahead_are_those_of_a_full_read(tmp_path, seed):
    root = tmp_path / "proj"
    hostile_tree(root, random.Random(seed), 40)
    full = read_snapshot(root, "s-001", environ={})
    assert read_active_sets(root) == {sid: scope.active_modes() for sid, scope in full.sessions.items()}
    assert "s-linked" in full.sessions and "s-out" not in full.sessions


def test_no_read_ahead_where_every_scope_is_listed_in_full(tmp_path):
    for i in range(COLLAPSE_OVER - 1):  # with root: exactly the limit
        mode(tmp_path, "forge", f"s-{i:03d}", current_phase="executing")
    assert read_active_sets(tmp_path, over=COLLAPSE_OVER) is None
    mode(tmp_path, "forge", "s-999", current_phase="executing")
    assert len(read_active_sets(tmp_path, over=COLLAPSE_OVER) or {}) == COLLAPSE_OVER


def shown(rows):
    """What the table shows of each row: its key and every cell's text and style."""
    return [(key, [(c.plain, str(c.style)) for c in cells]) for key, cells in rows]


def big_tree(root, rng: random.Random, sessions: int = COLLAPSE_OVER + 15):
    for i in range(sessions):
        sid = f"s-{i:03d}"
        for name in rng.sample(MODES, rng.randint(0, 3)):
            mode(root, name, sid, current_phase=rng.choice(["executing", "complete", "team-exec"]),
                 active=rng.random() < 0.7)
        canonical(root, ["forge", "team"], sid)
    pointer(root, "s-003")


def test_the_list_read_ahead_shows_the_rows_of_the_full_read(tmp_path):
    big_tree(tmp_path, random.Random(1))
    loader = WorldLoader(tmp_path, session_id="s-003", rp1_db=False, environ={}, list_over=COLLAPSE_OVER)
    first = loader.load(defer=("state", "team", "tasks"))
    assert set(first.snapshot.sessions) == {"s-003"} and first.listed is None
    ahead = loader.load_deferred()
    assert ahead is not None and "state" in ahead.pending and ahead.snapshot is first.snapshot
    assert ahead.listed is not None and len(ahead.listed) == COLLAPSE_OVER + 15
    full = loader.load_deferred()
    assert full is not None and "state" not in full.pending and full.listed is None
    assert len(full.snapshot.sessions) == COLLAPSE_OVER + 15
    # Every session is listed, with the row the full read gives it (the current one in full in both).
    assert shown(scope_rows(ahead, 0.0)) == shown(scope_rows(full, 0.0))
    # Selected, a scope read ahead says what it holds and that its members are still being read.
    detail = scope_detail(ahead, "scope:s-007").plain
    assert detail.startswith("session s-007\nactive: ") and "still being read" in detail
    assert "still being read" not in scope_detail(full, "scope:s-007").plain
    # An expanded scope or a filter waits for the full read; a filter lists read-ahead sessions by id.
    assert "member:s-010:s-010:team" not in [k for k, _ in scope_rows(ahead, 0.0, expanded={"s-010"})]
    filtered = [k for k, _ in scope_rows(ahead, 0.0, needle="s-01")]
    assert filtered == [f"scope:s-01{i}" for i in range(10)]


def test_a_full_reload_reads_ahead_again(tmp_path):
    big_tree(tmp_path, random.Random(2))
    loader = WorldLoader(tmp_path, session_id="s-003", rp1_db=False, environ={}, list_over=COLLAPSE_OVER)
    loader.load(defer=("state",))
    assert loader.load_deferred().listed is not None
    assert loader.load_deferred().listed is None and loader.load_deferred() is None
    loader.load(defer=("state",))
    assert loader.load_deferred().listed is not None  # a new first load, a new head start


def change(root, rng: random.Random, sessions: list[str]) -> list:
    """One runtime-like change; the paths it touched (as the watcher reports them)."""
    sid = rng.choice(sessions)
    kind = rng.choice(["flip", "phase", "remove", "add-session", "drop-session", "tombstone", "torn"])
    name = rng.choice(MODES)
    path = state_dir(root, sid) / f"{name}-state.json"
    if kind == "flip":
        return [mode(root, name, sid, current_phase="executing", active=rng.random() < 0.5)]
    if kind == "phase":
        return [mode(root, name, sid, current_phase=rng.choice(["complete", "executing", "failed"]))]
    if kind == "remove" and path.is_file():
        path.unlink()
        return [path]
    if kind == "add-session":
        new = f"s-{rng.randint(100, 999)}"
        sessions.append(new)
        return [mode(root, name, new, current_phase="executing"), state_dir(root, new)]
    if kind == "drop-session" and len(sessions) > COLLAPSE_OVER + 2 and sid != "s-003":
        for f in state_dir(root, sid).iterdir():
            f.unlink()
        state_dir(root, sid).rmdir()
        sessions.remove(sid)
        return [state_dir(root, sid)]
    if kind == "tombstone":
        return [mode(root, name, sid, active=False, current_phase="cleared")]
    if kind == "torn":
        return [write(path, '{"active": true, "current_phase": "exec')]
    return []


@pytest.mark.parametrize("seed", range(4))
def test_kept_one_row_scopes_match_a_fresh_build_after_random_changes(tmp_path, seed):
    rng = random.Random(seed)
    big_tree(tmp_path, rng)
    sessions = sorted(p.name for p in state_dir(tmp_path, "x").parent.iterdir())
    loader = WorldLoader(tmp_path, session_id="s-003", rp1_db=False, environ={}, list_over=COLLAPSE_OVER)
    loader.load(defer=("state",))
    cache: dict = {}
    world = loader.load_deferred()  # read ahead: rows kept from the active sets
    scope_rows(world, 0.0, cache=cache)
    world = loader.load_deferred()  # then the full read, and runtime-like changes
    for step in range(40):
        expanded = {rng.choice(sessions)} if step % 7 == 3 else set()
        kept = shown(scope_rows(world, 0.0, expanded=expanded, cache=cache))
        fresh_world = WorldLoader(tmp_path, session_id="s-003", rp1_db=False, environ={}).load()
        assert kept == shown(scope_rows(world, 0.0, expanded=expanded)) == \
            shown(scope_rows(fresh_world, 0.0, expanded=expanded)), f"step {step}"
        world = loader.load(change(tmp_path, rng, sessions) or [state_dir(tmp_path, "s-003")])


def test_the_status_line_says_what_is_still_being_read(tmp_path):
    from rcs_tui.ui.console.statusbar import status_text

    big_tree(tmp_path, random.Random(3))
    loader = WorldLoader(tmp_path, session_id="s-003", rp1_db=False, environ={}, list_over=COLLAPSE_OVER)
    loader.load(defer=("state", "team"))
    ahead = loader.load_deferred()

    def line(world, width):
        return status_text(world, 0.0, paused=False, readonly=False, last_error=None, width=width).plain

    assert "loading team, sessions…" in line(ahead, 200)
    narrow = line(ahead, 60)
    assert len(narrow) <= 60 and ("loading…" in narrow or "⟳" in narrow)
    loader.load_deferred()
    done = loader.load_deferred()
    assert done is not None and not done.pending and "loading" not in line(done, 200)


async def test_the_console_shows_every_session_before_it_reads_them_in_full(tmp_path, monkeypatch):
    """On screen: the row of every session (from the read-ahead) is drawn before the full read starts,
    and the full read leaves those rows as they were."""
    import time

    from rcs_tui.ui.console.app import ConsoleApp

    big_tree(tmp_path, random.Random(4))
    console = ConsoleApp(tmp_path, session_id="s-003", rp1_db=tmp_path / "no-rp1.db", live=True, blink=False,
                         clock=lambda: 0.0)
    at_full_read: list[list[str]] = []
    loader = console.loader
    real = loader.load_deferred

    def load_deferred():
        if loader.world is not None and loader.world.listed is not None and "state" in loader.deferred:
            at_full_read.append(list(console.screen.query_one("#scopes-table").keys))
        return real()

    loader.load_deferred = load_deferred
    from rcs_tui.ui.console.scopes import ScopesPane

    draw = ScopesPane.show

    def slow_show(pane, world, now):  # a long list takes a while to draw: the full read must wait for it
        if world.listed is not None:
            time.sleep(0.3)
        draw(pane, world, now)

    monkeypatch.setattr(ScopesPane, "show", slow_show)
    final = await _run(console)
    sessions = [f"scope:s-{i:03d}" for i in range(COLLAPSE_OVER + 15) if i != 3]
    assert len(at_full_read) == 1 and set(sessions) <= set(at_full_read[0])
    assert [k for k in final if k.startswith("scope:s-") and k != "scope:s-003"] == sessions


async def _run(console) -> list[str]:
    """The scopes table's keys once every deferred section is read and drawn."""
    import asyncio
    import time

    async with console.run_test(size=(120, 40)):
        deadline = time.monotonic() + 15
        while (console.world is None or console.world.pending) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        return list(console.screen.query_one("#scopes-table").keys)
