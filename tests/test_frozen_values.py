"""The value classes the status-line commands build (`Frozen`, not dataclasses) behave as the frozen
dataclasses they replace: each is checked against a dataclass twin declared with the fields it had, for
equality, hash, repr, immutability and copying, and the rules callers lean on are spelt out."""

from __future__ import annotations

import copy
import dataclasses
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from rcs_tui.files.io import BytesRead, JsonRead, read_bounded, read_json
from rcs_tui.files.layout import Layout
from rcs_tui.rp1.db import OK, Artifact, DbState, RunRow, Scope
from rcs_tui.rp1.projection import EMPTY, Event, Projection, extend, project
from rcs_tui.rp1.schema import Schema
from rcs_tui.rp1.source import Feed, RunSummary

STAT = os.stat(__file__)
OTHER_STAT = os.stat(os.path.dirname(__file__))
PROMPT = Event(3, "r", "waiting_for_user", "plan", None, {"message": "ok?"}, "t3")
ROW = RunRow("r", "flow", None, "/p", None, None, None, "running", "t0", "t3", 3)
PROJ = Projection("waiting", {"plan": "waiting"}, "plan", (PROMPT,), 3, "t3")

# Each class with the fields the dataclass declared (name, and `dataclasses.field` options) and sample
# argument lists: equal ones, and ones differing in a single field.
TWINS: list[tuple[type, list[tuple[str, dict[str, Any]]], list[tuple[Any, ...]]]] = [
    (DbState, [("code", {}), ("message", {"default": None})],
     [("ok",), ("ok", None), ("busy", "rp1: database busy"), ("busy", "other")]),
    (Scope, [("project_path", {}), ("project_id", {"default": None})], [("/p",), ("/p", "id"), ("/q", None)]),
    (Artifact, [(n, {}) for n in ("path", "step", "type", "doc_id", "storage_root", "subflow", "created_at")],
     [("a.md", "plan", "doc", None, None, False, "t"), ("a.md", "plan", "doc", None, None, True, "t")]),
    (Event, [(n, {}) for n in ("id", "run_id", "type", "step", "unit", "data", "created_at")]
     + [("parent_step_id", {"default": None})],
     [(1, "r", "status_change", "plan", None, {"status": "running"}, "t1"),
      (1, "r", "status_change", "plan", None, {"status": "running"}, "t1", "p"),
      (1, "r", "status_change", "plan", None, {"status": "failed"}, "t1")]),
    (Projection, [("status", {}), ("steps", {"hash": False}), ("current_step", {}),
                  ("pending_prompts", {"default": ()}), ("last_event_id", {"default": 0}),
                  ("last_activity", {"default": None}), ("fold", {"default": EMPTY, "compare": False, "repr": False})],
     [("running", {"plan": "running"}, "plan"),
      ("running", {"plan": "running"}, "plan", (), 0, None, EMPTY._replace(last_id=9)),
      ("running", {"plan": "completed"}, "plan"), ("waiting", {"plan": "waiting"}, "plan", (PROMPT,), 3, "t3")]),
    (Schema, [("tables", {}), ("version", {}), ("event_indexes", {"default_factory": dict})],
     [({"runs": ("id",)}, 17), ({"runs": ("id",)}, 17, {}), ({"runs": ("id",)}, 16, {"i": ("run_id",)})]),
    (RunSummary, [("run", {}), ("projection", {})], [(ROW, PROJ), (ROW._replace(name="n"), PROJ)]),
    (Feed, [("runs", {}), ("total", {}), ("state", {})], [((), 0, OK), ((RunSummary(ROW, PROJ),), 1, OK),
                                                          ((), 0, DbState("busy", "x"))]),
    (BytesRead, [("path", {}), ("exists", {}), ("raw", {"default": None}), ("error", {"default": None}),
                 ("stat", {"default": None, "compare": False, "repr": False}), ("kind", {"default": None}),
                 ("truncated", {"default": False})],
     [(Path("a"), True, b"x"), (Path("a"), True, b"x", None, STAT),
      (Path("a"), True, b"x", None, OTHER_STAT, None, True),
      (Path("a"), False, None, "missing")]),
    (JsonRead, [("path", {}), ("exists", {}), ("raw", {"default": None}), ("data", {"default": None}),
                ("error", {"default": None}), ("stat", {"default": None, "compare": False, "repr": False})],
     [(Path("a"), True, b"{}", {}), (Path("a"), True, b"{}", {}, None, STAT), (Path("a"), True, b"[]", [])]),
    (Layout, [("root", {})], [(Path("/p"),), (Path("/q"),)]),
]


def twin_of(cls: type, fields: list[tuple[str, dict[str, Any]]]) -> type:
    return dataclasses.make_dataclass(cls.__name__, [(n, Any, dataclasses.field(**o)) for n, o in fields],
                                      frozen=True)


def hash_or_error(value: object) -> int | str:
    try:
        return hash(value)
    except TypeError as exc:
        return f"TypeError: {exc}"


@pytest.mark.parametrize(("cls", "fields", "samples"), TWINS, ids=[t[0].__name__ for t in TWINS])
def test_behaves_as_the_frozen_dataclass_it_replaces(cls, fields, samples):
    twin = twin_of(cls, fields)
    ours = [cls(*args) for args in samples]
    theirs = [twin(*args) for args in samples]
    for a, ta in zip(ours, theirs, strict=True):
        assert repr(a) == repr(ta)
        assert hash_or_error(a) == hash_or_error(ta)  # the same fields hashed, or the same field refused
        for b, tb in zip(ours, theirs, strict=True):
            assert (a == b, a != b) == (ta == tb, ta != tb), (a, b)
        assert a != ta and a != samples[0]  # another type is never equal
        for name, _ in fields:
            with pytest.raises(AttributeError):
                setattr(a, name, None)
            with pytest.raises(AttributeError, match=f"cannot delete field '{name}' of a frozen"):
                delattr(a, name)
        with pytest.raises(AttributeError):
            a.unknown = 1  # type: ignore[attr-defined]
        assert copy.copy(a) == a and copy.deepcopy(a) == a and pickle.loads(pickle.dumps(a)) == a
    keywords = {name: getattr(ours[-1], name) for name, _ in fields}
    assert cls(**keywords) == ours[-1]


def test_a_projection_extended_equals_one_derived_from_every_row():
    """The fold that reached a projection is not part of its value: callers compare an extended one with
    a fresh derivation."""
    rows = [Event(1, "r", "status_change", None, None, {"status": "running"}, "t1"),
            Event(2, "r", "status_change", "plan", None, {"status": "running"}, "t2"),
            Event(3, "r", "status_change", "plan", None, {"status": "completed"}, "t3")]
    extended, fresh = extend(project(rows[:1]), rows[1:]), project(rows)
    assert extended == fresh and extended.fold is not fresh.fold
    assert hash(extended) == hash(fresh)
    assert "fold" not in repr(fresh) and "steps={'plan': 'completed'}" in repr(fresh)


def test_a_read_is_equal_to_the_same_read_taken_again(tmp_path):
    """Two reads of an unchanged file are equal whatever their stat objects (the refresh keeps a scope
    whose files read the same)."""
    path = tmp_path / "s.json"
    path.write_text('{"active": true}')
    first, again = read_json(path), read_json(path)
    assert first.stat is not None and first.stat is not again.stat
    assert first == again
    assert read_bounded(path) == read_bounded(path) and hash(read_bounded(path)) == hash(read_bounded(path))
    path.write_text('{"active": false}')
    assert read_json(path) != first


def test_values_work_as_keys_and_keep_their_own_defaults():
    assert {Scope("/p"): 1}[Scope("/p", None)] == 1
    assert {DbState("ok"): "shown"}[OK] == "shown" and OK.ok and not DbState("busy").ok
    assert {Layout(Path("/p")): 1}[Layout(Path("/p"))] == 1
    first, second = Schema({}, None), Schema({}, None)
    assert first.event_indexes == {} and first.event_indexes is not second.event_indexes
