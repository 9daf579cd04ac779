"""One helper counts every noun a message shows: `1 project`, `2 projects`, never `1 projects` or
`project(s)` (in-process, so mutation testing of the core reaches it)."""

from __future__ import annotations

import pytest

from rcs_tui.core.words import plural, plural_of


@pytest.mark.parametrize(("count", "noun", "text"), [
    (0, "project", "0 projects"), (1, "project", "1 project"), (2, "project", "2 projects"),
    (1, "entry", "1 entry"), (3, "entry", "3 entries"), (2, "day", "2 days"), (2, "pass", "2 passes"),
    (1, "dead worker", "1 dead worker"), (4, "dead worker", "4 dead workers"), (-1, "file", "-1 files"),
])
def test_one_helper_counts_every_noun(count, noun, text):
    assert plural(count, noun) == text


def test_irregular_plurals_are_given():
    assert plural(2, "child", "children") == "2 children" and plural(1, "child", "children") == "1 child"
    assert plural_of("y") == "ys" and plural_of("key") == "keys" and plural_of("box") == "boxes"


@pytest.mark.parametrize(("noun", "many"), [
    ("run", "runs"), ("entry", "entries"), ("key", "keys"), ("day", "days"), ("boy", "boys"), ("guy", "guys"),
    ("toy", "toys"), ("y", "ys"), ("bus", "buses"), ("box", "boxes"), ("match", "matches"), ("wish", "wishes"),
    ("bath", "baths"),
])
def test_regular_plurals(noun, many):
    assert plural_of(noun) == many
