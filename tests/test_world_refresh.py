"""WorldLoader.load(changed) re-reads only the changed scopes, yet never loses a change: refreshes build
on what was last read from disk, not on the last good picture it keeps showing while a file is bad."""

from __future__ import annotations

from statefix import canonical, mode, state_dir, write

from rcs_tui.state.reader import read_snapshot
from rcs_tui.views.world import WorldLoader


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


def test_change_hidden_behind_a_bad_file_is_not_lost(tmp_path):
    wl = loader(tree(tmp_path))
    wl.load()
    bad = write(state_dir(tmp_path, "s-a") / "forge-state.json", "{not json")
    b_path = mode(tmp_path, "forge", "s-b", current_phase="executing", iteration=7)
    world = wl.load([bad, b_path])  # one batch: s-a broke, s-b changed
    assert any(b.kept_last_good for b in world.badges)
    assert world.snapshot.sessions["s-b"].modes["forge"].iteration == 1  # the last good picture, as before
    c_path = mode(tmp_path, "forge", "s-c", current_phase="executing", iteration=3)
    world = wl.load([c_path])  # s-a is still bad: still the last good picture
    assert any(b.kept_last_good for b in world.badges)
    fixed = mode(tmp_path, "forge", "s-a", current_phase="executing", iteration=4)
    world = wl.load([fixed])
    full = read_snapshot(tmp_path, "s-a", environ={})
    assert not world.badges
    assert world.snapshot.sessions == full.sessions and world.snapshot.members == full.members
    assert world.snapshot.sessions["s-b"].modes["forge"].iteration == 7


def test_a_failed_refresh_makes_the_next_load_a_full_read(tmp_path, monkeypatch):
    import rcs_tui.views.world as world_mod

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
