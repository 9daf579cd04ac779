"""The records a whole-tree read builds by the ten thousand skip their classes' `__init__`: each must still hold
every field its class declares, with the value the class itself would give (so a field added to a class
and forgotten in its builder fails here, not in a view that reads it later)."""

from __future__ import annotations

import hashlib
from dataclasses import fields
from pathlib import Path

from rcs_tui.state.snapshot import (
    CanonicalEntry,
    CanonicalSet,
    Member,
    ModeFile,
    Scope,
    canonical_entry,
    canonical_set,
    member,
    scope_read,
    well_read,
)


def same_fields(built: object, made: object) -> None:
    assert type(built) is type(made)
    for f in fields(made):  # type: ignore[arg-type]
        assert getattr(built, f.name) == getattr(made, f.name), f.name


def test_each_builder_gives_what_its_class_gives_field_by_field() -> None:
    directory = Path("/p/.rcs/state/sessions/s1")
    data = {"active": True, "current_phase": "executing"}
    raw = b'{"active": true, "current_phase": "executing"}'
    built = well_read("forge", "s1", directory, "forge-state.json", data, hashlib.sha256(raw).digest(), 12.5)
    made = ModeFile("forge", "s1", directory / "forge-state.json", data, None, hashlib.sha256(raw).hexdigest(), 12.5,
                    directory=directory)
    same_fields(built, made)
    assert built == made and built.active and built.path == made.path

    entry = canonical_entry("forge", "executing", "s1", "2026-11-25T21:41:36.953Z", {"skill": "forge"})
    same_fields(entry, CanonicalEntry("forge", "executing", "s1", "2026-11-25T21:41:36.953Z", {"skill": "forge"}))

    cpath = directory / "skill-active-state.json"
    cset = canonical_set(cpath, {"active_skills": []}, "ab" * 32, (entry,), False)
    same_fields(cset, CanonicalSet(cpath, True, {"active_skills": []}, sha="ab" * 32, entries=(entry,), legacy=False))

    scope = scope_read("s1", directory, {"forge": built}, cset, None, (), False, 12.5)
    made_scope = Scope("s1", directory, {"forge": made}, cset, None, (), False)
    same_fields(scope, made_scope)
    assert scope.newest == made_scope.newest == 12.5

    same_fields(member("forge", "live", "s1", built, entry, "why"), Member("forge", "live", "s1", made, entry, "why"))
