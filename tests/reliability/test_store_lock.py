"""The store lock holds against its file being removed, replaced or filled with JSON nested too deeply
while it is held: a second writer never gets in, and the refusal names the lock file."""

from __future__ import annotations

import os

import pytest

from rcs_tui.files.fsafe import Tree
from rcs_tui.state.lock import LOCK_REL, LockBusy, store_lock


def test_a_lock_file_removed_while_held_does_not_let_a_second_writer_in(project):
    holder = Tree(project)
    with store_lock(holder, "first", timeout=0):
        (project / LOCK_REL).unlink()  # e.g. a cleanup script
        with pytest.raises(LockBusy, match=r"^another rcs-tui process holds \.rcs/logs/rcs-tui\.lock"):
            with store_lock(Tree(project), "second", timeout=0.2):
                pytest.fail("a second writer got the lock")
    with store_lock(Tree(project), "third", timeout=0):  # released: the next writer gets it
        pass


def test_a_lock_file_replaced_while_held_does_not_let_a_second_writer_in(project, tmp_path):
    with store_lock(Tree(project), "first", timeout=0):
        other = project / ".rcs/logs/other"
        other.write_text("{}")
        os.replace(other, project / LOCK_REL)
        with pytest.raises(LockBusy):
            with store_lock(Tree(project), "second", timeout=0.2):
                pytest.fail("a second writer got the lock")


def test_a_lock_file_nested_too_deeply_only_loses_the_holder_name(project):
    with store_lock(Tree(project), "first", timeout=0):
        (project / LOCK_REL).write_text("[" * 2000 + "]" * 2000)  # under the 4 KiB read, deeper than the parser goes
        with pytest.raises(LockBusy) as err:
            with store_lock(Tree(project), "second", timeout=0.1):
                pass
    assert str(err.value).startswith("another rcs-tui process holds .rcs/logs/rcs-tui.lock; gave up after 0 s")

