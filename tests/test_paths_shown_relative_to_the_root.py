"""Files are named to the operator (and checked by the confined tree) by their path relative to the project
root: the quick text comparison gives exactly what a full path parse gives, for any root and path."""

from __future__ import annotations

import random
from pathlib import Path, PurePosixPath

from rcs_tui.files.io import rel_of

PARTS = ["a", "b", ".rcs", "state", "..", ".", "x y", "é", "#", "a.b", ""]


def _parsed(root: Path, path: Path | str) -> str:
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()


def _random_path(rng: random.Random) -> str:
    text = "/".join(rng.choice(PARTS) for _ in range(rng.randrange(0, 6)))
    return ("/" if rng.random() < 0.8 else "") + text


def test_relative_names_match_a_full_parse_for_random_roots_and_paths():
    rng = random.Random(11)
    for _ in range(20000):
        root = Path(_random_path(rng))
        tail = "/".join(rng.choice(PARTS) for _ in range(rng.randrange(0, 4)))
        path: Path | str = rng.choice([Path(_random_path(rng)), Path(f"{root}/{tail}"), f"{root}/{tail}",
                                       Path(f"{root}{tail}")])
        assert rel_of(root, path) == _parsed(root, path), (root, path)


def test_named_relative_to_the_root_or_left_whole():
    root = Path("/work/p")
    assert rel_of(root, root / ".rcs" / "state" / "x.json") == ".rcs/state/x.json"
    assert rel_of(root, Path("/work/p2/.rcs/x")) == "/work/p2/.rcs/x"  # a sibling with the root as prefix
    assert rel_of(root, root) == "."
    assert rel_of(Path("/"), Path("/a/b")) == "a/b"
    assert rel_of(root, Path("rel/x")) == "rel/x"
    assert rel_of(root, PurePosixPath("/work/p/y").as_posix()) == "y"


def test_a_layout_gives_each_scope_its_directory_however_many_it_has_kept(monkeypatch):
    from rcs_tui.files import layout as layout_mod

    monkeypatch.setattr(layout_mod, "MAX_KEPT_SCOPE_DIRS", 3)
    lay = layout_mod.Layout(Path("/p"))
    for sid in ["a", "b", "c", "d", "a", "e", None]:
        want = Path("/p/.rcs/state") if sid is None else Path("/p/.rcs/state/sessions") / sid
        assert lay.scope_dir(sid) == want and lay.mode_file("m", sid) == want / "m-state.json"
    assert len(lay._scope_dirs) <= 3
