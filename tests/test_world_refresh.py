"""WorldLoader.load(changed) re-reads only the changed scopes, yet never loses a change, and always shows
what is on disk now: a file that turns bad is that file's problem, never a frozen picture of the rest."""

from __future__ import annotations

from statefix import canonical, mode, state_dir, write

from rcs_tui.project.loader import WorldLoader
from rcs_tui.state.reader import read_snapshot


def tree(root):
    for sid in ("s-a", "s-b", "s-c"):
        mode(root, "forge", sid, current_phase="executing", iteration=1)
        canonical(root, ["forge"], sid)
    return root


def loader(root):
    return WorldLoader(root, session_id="s-a", rp1_db=False, environ={})


def test_load_with_changed_paths_reuses_untouched_scopes(tmp_path):
    wl = loader(tree(tmp_path))
    first = wl.load().snapshot
    path = mode(tmp_path, "forge", "s-b", current_phase="executing", iteration=2)
    second = wl.load([path]).snapshot
    assert second.sessions["s-c"] is first.sessions["s-c"]
    assert second.sessions["s-b"].modes["forge"].iteration == 2


def test_a_file_turning_bad_never_freezes_the_other_scopes(tmp_path):
    """s-a's mode file is torn while s-b and then s-c change: both changes show at once, s-a's member shows
    as unreadable with the reason, and the picture equals a fresh read after every batch."""
    wl = loader(tree(tmp_path))
    wl.load()
    bad = write(state_dir(tmp_path, "s-a") / "forge-state.json", "{not json")
    b_path = mode(tmp_path, "forge", "s-b", current_phase="executing", iteration=7)
    world = wl.load([bad, b_path])  # one batch: s-a broke, s-b changed
    assert [(b.path, b.kept_last_good) for b in world.badges] == [(bad, False)]
    assert world.snapshot.sessions["s-b"].modes["forge"].iteration == 7
    broken = world.snapshot.sessions["s-a"].modes["forge"]
    assert broken.error is not None and broken.data is None  # no older bytes shown as if current
    assert [m.health for m in world.snapshot.members] == ["stale"]
    c_path = mode(tmp_path, "forge", "s-c", current_phase="executing", iteration=3)
    world = wl.load([c_path])  # s-a is still bad: s-c's change still shows
    assert world.snapshot.sessions["s-c"].modes["forge"].iteration == 3
    assert world.snapshot.sessions == read_snapshot(tmp_path, "s-a", environ={}).sessions
    fixed = mode(tmp_path, "forge", "s-a", current_phase="executing", iteration=4)
    world = wl.load([fixed])
    full = read_snapshot(tmp_path, "s-a", environ={})
    assert not world.badges
    assert world.snapshot.sessions == full.sessions and world.snapshot.members == full.members
    assert world.snapshot.sessions["s-b"].modes["forge"].iteration == 7


def test_a_failed_refresh_makes_the_next_load_a_full_read(tmp_path, monkeypatch):
    import rcs_tui.project.loader as world_mod

    wl = loader(tree(tmp_path))
    wl.load()

    def boom(*args, **kwargs):
        raise OSError("disk on fire")

    path = mode(tmp_path, "forge", "s-b", current_phase="executing", iteration=5)
    monkeypatch.setattr(world_mod, "refresh_snapshot", boom)
    world = wl.load([path])
    assert any("disk on fire" in b.reason for b in world.badges)
    monkeypatch.undo()
    world = wl.load([tmp_path / ".rcs" / "plans" / "x.md"])  # an unrelated change in the state section
    assert world.snapshot.sessions["s-b"].modes["forge"].iteration == 5


def test_deferred_state_shows_the_current_scope_first_then_everything(tmp_path):
    tree(tmp_path)
    write(state_dir(tmp_path, "s-c") / "team-state.json", "{not json")  # a bad file in another session
    wl = loader(tmp_path)
    first = wl.load(defer=("state", "rp1"))
    assert set(first.snapshot.sessions) == {"s-a"} and not first.badges
    full = read_snapshot(tmp_path, "s-a", environ={})
    assert first.snapshot.members == full.members  # what the current scope shows is complete already
    path = mode(tmp_path, "forge", "s-a", current_phase="executing", iteration=9)
    assert wl.load([path]).snapshot is first.snapshot  # nothing partial is refreshed before the full read
    world = wl.load_deferred()  # state first
    assert world is not None and wl.deferred == {"rp1"}
    assert wl.load_deferred() is not None and wl.load_deferred() is None
    assert world.snapshot.sessions == read_snapshot(tmp_path, "s-a", environ={}).sessions
    assert [b.kept_last_good for b in world.badges] == [False]  # a first full read: nothing "broke"
    later = mode(tmp_path, "forge", "s-b", current_phase="executing", iteration=8)
    assert wl.load([later]).snapshot.sessions["s-c"] is world.snapshot.sessions["s-c"]


def test_scopes_table_collapses_other_scopes_past_the_limit(tmp_path):
    from rcs_tui.ui.console.scopes import COLLAPSE_OVER, scope_rows

    for i in range(COLLAPSE_OVER + 1):
        mode(tmp_path, "forge", f"s-{i:03d}", current_phase="executing")
    world = WorldLoader(tmp_path, session_id="s-005", rp1_db=False, environ={}).load()
    keys = [k for k, _ in scope_rows(world, 0.0)]
    assert "member:s-005:s-005:forge" in keys and "member:s-006:s-006:forge" not in keys
    assert len([k for k in keys if k.startswith("scope:")]) == COLLAPSE_OVER + 2  # root + every session
    cache: dict = {}
    expanded = [k for k, _ in scope_rows(world, 0.0, expanded={"s-006"}, cache=cache)]
    assert "member:s-006:s-006:forge" in expanded
    again = scope_rows(world, 0.0, expanded={"s-006"}, cache=cache)
    assert [k for k, _ in again] == expanded
    filtered = [k for k, _ in scope_rows(world, 0.0, needle="forge")]
    assert "member:s-006:s-006:forge" in filtered  # a filter lists every matching member, as before
