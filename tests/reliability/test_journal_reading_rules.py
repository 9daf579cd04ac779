"""How the journal is read back: which entries count, which lines are skipped and with what warning, which
entry `undo` takes, and what undo restores or refuses (in-process, so mutation testing sees these rules)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from rcs_tui.core import error_kinds as kinds
from rcs_tui.files.fsafe import Tree
from rcs_tui.files.io import digest
from rcs_tui.state import journal
from rcs_tui.state.journal import (
    blocking_entry,
    checked_path,
    find_entry,
    find_interrupted,
    interrupted,
    load,
    naming,
    pick_entry,
    plan_undo,
    read_journal,
    undo,
)
from rcs_tui.state.txn import FileChange, Plan, TxnError, apply

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


def _write(root: Path, lines: list[str | dict], name: str = JOURNAL) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines))
    return path


def _entry(eid: str, **extra: object) -> dict:
    return {"id": eid, "action": "state clear forge", "files": [], "state": "done", **extra}


def _ids(root: Path) -> list[tuple[str, bool, bool]]:
    return [(e["id"], e["complete"], e["undone"]) for e in load(root)[0]]


def test_entries_come_back_oldest_first_with_undone_marked(tmp_path: Path) -> None:
    _write(tmp_path, [_entry("a"), _entry("b"), _entry("c", undoes="a")])
    entries, warnings = load(tmp_path)
    assert [e["id"] for e in entries] == ["a", "b", "c"]
    assert [e["undone"] for e in entries] == [True, False, False]
    assert warnings == []


def test_pending_entries_are_complete_only_once_committed_and_aborted_ones_are_left_out(tmp_path: Path) -> None:
    _write(tmp_path, [_entry("a", state="pending"), _entry("b", state="pending"), {"commit": "b"},
                      _entry("c", state="aborted"), _entry("d", state="pending"), {"abort": "d"},
                      _entry("e"), {"id": "f", "files": []}, {"commit": 5}, {"abort": None}])
    assert _ids(tmp_path) == [("a", False, False), ("b", True, False), ("e", True, False), ("f", True, False)]
    assert load(tmp_path)[1] == [
        '.rcs/logs/rcs-tui-journal.jsonl line 9: "id" is not a string; skipped',
        '.rcs/logs/rcs-tui-journal.jsonl line 10: "id" is not a string; skipped']


def test_a_redo_cancels_the_undo_before_it_and_an_undone_redo_does_not(tmp_path: Path) -> None:
    _write(tmp_path, [_entry("a"), _entry("u", undoes="a"), _entry("r", redoes="a")])
    assert _ids(tmp_path) == [("a", True, False), ("u", True, False), ("r", True, False)]
    _write(tmp_path, [_entry("a"), _entry("u", undoes="a"), _entry("r", redoes="a"), _entry("u2", undoes="r")])
    assert _ids(tmp_path) == [("a", True, True), ("u", True, False), ("r", True, True), ("u2", True, False)]
    _write(tmp_path, [_entry("a"), _entry("u", undoes="a"), _entry("u3", undoes="u")])
    assert _ids(tmp_path) == [("a", True, False), ("u", True, True), ("u3", True, False)]
    _write(tmp_path, [_entry("a"), _entry("u", undoes=7)])
    assert _ids(tmp_path) == [("a", True, False)]


def test_a_redo_cancels_only_the_newest_undo_before_it(tmp_path: Path) -> None:
    """Two undos of one entry, then one redo: the redo cancels the second undo; the first still counts."""
    _write(tmp_path, [_entry("a"), _entry("u1", undoes="a"), _entry("u2", undoes="a"), _entry("r", redoes="a")])
    assert _ids(tmp_path) == [("a", True, True), ("u1", True, False), ("u2", True, False), ("r", True, False)]


def test_an_entry_that_carries_a_commit_or_abort_field_is_an_entry_not_a_marker(tmp_path: Path) -> None:
    """Only a line without an id is a commit or abort marker: an entry with such a field (a foreign writer's)
    is read as an entry, and it neither completes nor aborts the entry it names."""
    _write(tmp_path, [_entry("a", state="pending"), _entry("b", commit="a"), _entry("c", state="pending"),
                      _entry("d", abort="c")])
    assert _ids(tmp_path) == [("a", False, False), ("b", True, False), ("c", False, False), ("d", True, False)]


def test_each_unusable_line_is_named_by_its_number_and_reason(tmp_path: Path) -> None:
    _write(tmp_path, [_entry("a"), "{torn", "", "[1]", "   ", _entry("b", files="x"), _entry("c")])
    entries, warnings = load(tmp_path)
    assert [e["id"] for e in entries] == ["a", "c"]
    assert warnings == [".rcs/logs/rcs-tui-journal.jsonl line 2: not JSON (torn or foreign line); skipped",
                        ".rcs/logs/rcs-tui-journal.jsonl line 4: not a JSON object; skipped",
                        '.rcs/logs/rcs-tui-journal.jsonl line 6: "files" is not a list; skipped']


@pytest.mark.parametrize("block", [16, 7, 40])
def test_an_overlong_line_is_skipped_unread_with_its_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             block: int) -> None:
    monkeypatch.setattr(journal, "BLOCK", block)  # smaller than the longest line, as 1 MiB is to 64 MiB
    monkeypatch.setattr(journal, "MAX_LINE", 100)
    long_entry = _entry("long", action="x" * 80)
    _write(tmp_path, [long_entry, _entry("a"), long_entry, _entry("b"), "y" * 150])
    entries, warnings = load(tmp_path)
    assert [e["id"] for e in entries] == ["a", "b"]
    assert warnings == [f".rcs/logs/rcs-tui-journal.jsonl line {n}: longer than 100 bytes; skipped" for n in (1, 3, 5)]
    _write(tmp_path, ["y" * 100, _entry("a")])
    assert load(tmp_path)[1] == [".rcs/logs/rcs-tui-journal.jsonl line 1: not JSON (torn or foreign line); skipped"]


@pytest.mark.parametrize("block", [1 << 20, 5, 64])
def test_lines_are_read_whole_whatever_the_block_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      block: int) -> None:
    monkeypatch.setattr(journal, "BLOCK", block)
    _write(tmp_path, [_entry(f"e{n}", action="a" * n) for n in range(30)])
    path = tmp_path / JOURNAL
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # the newest line has no newline yet
    assert [e["id"] for e in read_journal(tmp_path)] == [f"e{n}" for n in range(30)]
    assert [e["action"] for e in read_journal(tmp_path)] == ["a" * n for n in range(30)]


def test_a_journal_larger_than_the_read_limit_is_read_from_its_end(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps(_entry(f"e{n}")) for n in range(10)]
    size = len(lines[0]) + 1
    monkeypatch.setattr(journal, "READ_LIMIT", size * 3 + 5)
    _write(tmp_path, [*lines[:6], "{torn", *lines[6:]])
    entries, warnings = load(tmp_path)
    assert [e["id"] for e in entries] == ["e7", "e8", "e9"]
    total = (tmp_path / JOURNAL).stat().st_size
    assert warnings == [f".rcs/logs/rcs-tui-journal.jsonl is {total / 1048576:.0f} MiB, larger than a journal "
                        "grows (0 MiB are read): only its newest entries are shown; older ones cannot be undone "
                        "from here"]
    _write(tmp_path, [*lines[:8], "{torn", lines[8]])
    warnings = load(tmp_path)[1]
    offset = sum(len(x) + 1 for x in lines[:8])
    assert warnings[1:] == [f".rcs/logs/rcs-tui-journal.jsonl at byte {offset}: not JSON (torn or foreign line); "
                            "skipped"]
    with pytest.raises(TxnError) as caught:
        find_entry(tmp_path, "e1")
    assert str(caught.value) == f"no journal entry 'e1' in {JOURNAL} ({warnings[0]})"


def test_rotated_generations_are_read_newest_first(tmp_path: Path) -> None:
    _write(tmp_path, [_entry("old")], ".rcs/logs/rcs-tui-journal.3.jsonl")
    _write(tmp_path, [_entry("mid"), "{torn"], ".rcs/logs/rcs-tui-journal.1.jsonl")
    _write(tmp_path, [_entry("new", undoes="old")])
    entries, warnings = load(tmp_path)
    assert [(e["id"], e["undone"]) for e in entries] == [("old", True), ("mid", False), ("new", False)]
    assert warnings == [".rcs/logs/rcs-tui-journal.1.jsonl line 2: not JSON (torn or foreign line); skipped"]
    assert [e["id"] for e in load(tmp_path, limit=2)[0]] == ["mid", "new"]
    _write(tmp_path, [_entry("older")], ".rcs/logs/rcs-tui-journal.4.jsonl")
    assert "older" not in [e["id"] for e in read_journal(tmp_path)]
    with pytest.raises(TxnError) as caught:
        find_entry(tmp_path, "gone")
    assert str(caught.value) == (f"no journal entry 'gone' in {JOURNAL}; older entries are dropped when the journal "
                                 "rotates (the newest 4 files are kept)")
    assert caught.value.error_kind == kinds.NOT_FOUND


def test_a_journal_that_is_not_a_regular_file_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".rcs/logs").mkdir(parents=True)
    os.mkfifo(tmp_path / JOURNAL)
    _write(tmp_path, [_entry("a")], ".rcs/logs/rcs-tui-journal.1.jsonl")
    entries, warnings = load(tmp_path)
    assert [e["id"] for e in entries] == ["a"]
    assert warnings == [".rcs/logs/rcs-tui-journal.jsonl: is not a regular file; not read"]
    os.unlink(tmp_path / JOURNAL)
    os.symlink("rcs-tui-journal.1.jsonl", tmp_path / JOURNAL)
    entries, warnings = load(tmp_path)
    assert [e["id"] for e in entries] == ["a"]
    assert warnings == [".rcs/logs/rcs-tui-journal.jsonl: is a symlink; not followed"]


def test_a_linked_logs_directory_stops_the_reading(tmp_path: Path) -> None:
    (tmp_path / ".rcs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    _write(tmp_path, [_entry("a")], "elsewhere/rcs-tui-journal.jsonl")
    os.symlink(tmp_path / "elsewhere", tmp_path / ".rcs/logs")
    entries, warnings = load(tmp_path)
    assert entries == []
    assert warnings == [".rcs/logs/rcs-tui-journal.jsonl: .rcs/logs/rcs-tui-journal.jsonl: .rcs/logs is a symlink "
                        "or not a directory; not followed"]
    assert load(tmp_path / "nothing-here") == ([], [])


def test_interrupted_entries_are_the_pending_ones_not_rolled_back(tmp_path: Path) -> None:
    _write(tmp_path, [_entry("a", state="pending"), _entry("b", state="pending"), _entry("c", state="pending"),
                      _entry("rb", undoes="b"), _entry("d")])
    assert [e["id"] for e in interrupted(read_journal(tmp_path))] == ["a", "c"]
    found, warnings = find_interrupted(tmp_path)
    assert [e["id"] for e in found] == ["a", "c"] and warnings == []


def test_undo_takes_the_newest_action_that_changed_a_file(tmp_path: Path) -> None:
    f = [{"path": ".rcs/state/a.json"}]
    app = [{"path": ".rcs/tasks/t/transcript.jsonl", "line": "x"}]
    _write(tmp_path, [_entry("a", files=f), _entry("b", appends=app), _entry("c", files=f), _entry("u", undoes="c",
                                                                                                    files=f),
                      _entry("n")])
    assert find_entry(tmp_path, None)["id"] == "b"
    assert pick_entry(read_journal(tmp_path), None)["id"] == "a"
    assert find_entry(tmp_path, "c")["id"] == "c" and pick_entry(read_journal(tmp_path), "c")["id"] == "c"
    _write(tmp_path, [_entry("n")])
    for call in (lambda: find_entry(tmp_path, None), lambda: pick_entry(read_journal(tmp_path), None)):
        with pytest.raises(TxnError) as caught:
            call()
        assert (str(caught.value), caught.value.error_kind) == (
            "nothing to undo: the journal has no undoable entry", kinds.NOT_FOUND)
    with pytest.raises(TxnError) as caught:
        pick_entry(read_journal(tmp_path), "zz")
    assert (str(caught.value), caught.value.error_kind) == (f"no journal entry 'zz' in {JOURNAL}", kinds.NOT_FOUND)
    with pytest.raises(TxnError) as caught:
        find_entry(tmp_path, "zz")
    assert str(caught.value) == f"no journal entry 'zz' in {JOURNAL}"


def test_a_search_by_id_reads_only_lines_that_can_matter() -> None:
    assert naming("a b") is None and naming("é") is None
    test = naming("20261125T2141-abc")
    assert test is not None
    assert test(b'{"id": "20261125T2141-abc"}') and test(b'{"undoes": "x"}') and test(b'{"redoes": "x"}')
    assert test(b'{"abort": "x"}') and test(b'{"\\u0069d": "x"}')
    assert not test(b'{"id": "other", "files": []}') and not test(b'{"a": "\\\\n"}')


def _project(tmp_path: Path) -> Path:
    (tmp_path / ".rcs/state").mkdir(parents=True)
    return tmp_path


def _apply(root: Path, rel: str, new: bytes | None, action: str = "test") -> dict:
    path = root / rel
    old = path.read_bytes() if path.exists() else None
    change = FileChange(path, "write" if new is not None else "delete", new, digest(old) if old is not None else None,
                        "why")
    return apply(root, Plan(action, (change,)), actor="me")


def test_undo_restores_each_file_and_answers_what_it_did(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".rcs/state/a.json").write_bytes(b'{"v": 1}')
    first = _apply(root, ".rcs/state/a.json", b'{"v": 2}', "first")
    created = _apply(root, ".rcs/state/b.json", b'{"b": 1}', "second")
    dry = undo(root, dry_run=True)
    assert dry["dry_run"] is True and dry["undoes"] == created["id"] and dry["restores"] == [".rcs/state/b.json"]
    assert dry["changes"] == [{"path": ".rcs/state/b.json", "action": "delete", "why": "restore: did not exist"}]
    assert (root / ".rcs/state/b.json").exists()
    out = undo(root, actor="me")
    assert out == {"undone": created["id"], "journal_id": out["journal_id"], "restored": [".rcs/state/b.json"]}
    assert not (root / ".rcs/state/b.json").exists()
    out = undo(root)
    assert out["undone"] == first["id"] and (root / ".rcs/state/a.json").read_bytes() == b'{"v": 1}'
    entries = read_journal(root)
    assert [(e["action"], e.get("undoes")) for e in entries] == [
        ("first", None), ("second", None), ("undo second", created["id"]), ("undo first", first["id"])]
    with pytest.raises(TxnError) as caught:
        plan_undo(root, entries[0])
    assert str(caught.value) == f"journal entry {first['id']} was already undone"
    with pytest.raises(TxnError) as caught:
        plan_undo(root, {**entries[0], "id": "x", "undone": True})
    assert str(caught.value) == "journal entry x was already undone"


def test_undo_of_a_file_changed_since_names_the_later_action(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".rcs/state/a.json").write_bytes(b'{"v": 1}')
    first = _apply(root, ".rcs/state/a.json", b'{"v": 2}', "first")
    later = _apply(root, ".rcs/state/a.json", b'{"v": 3}', "later")
    with pytest.raises(TxnError) as caught:
        undo(root, first["id"])
    assert str(caught.value) == (f"cannot undo {first['id']}: .rcs/state/a.json changed since (first); undo "
                                 f"{later['id']} (later) first, it changed .rcs/state/a.json later; nothing was "
                                 "changed")
    entries = read_journal(root)
    assert blocking_entry(entries, entries[0], ".rcs/state/a.json")["id"] == later["id"]
    assert blocking_entry(entries, entries[1], ".rcs/state/a.json") is None
    assert blocking_entry(entries, {"id": "elsewhere"}, ".rcs/state/a.json") is None
    (root / ".rcs/state/b.json").write_bytes(b"1")
    other = _apply(root, ".rcs/state/b.json", b"2", "other")
    (root / ".rcs/state/b.json").write_bytes(b"by hand")
    with pytest.raises(TxnError) as caught:
        undo(root, other["id"])
    assert str(caught.value) == (f"cannot undo {other['id']}: .rcs/state/b.json changed since (other) by something "
                                 "outside rcs-tui; nothing was changed")
    assert (root / ".rcs/state/b.json").read_bytes() == b"by hand"


def test_undo_of_a_file_already_back_writes_nothing_but_records_it(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".rcs/state/a.json").write_bytes(b'{"v": 1}')
    first = _apply(root, ".rcs/state/a.json", b'{"v": 2}', "first")
    (root / ".rcs/state/a.json").write_bytes(b'{"v": 1}')
    out = undo(root)
    assert out["undone"] == first["id"] and out["restored"] == []
    assert out["message"] == (f"nothing to restore: every file of {first['id']} already holds its before-image "
                              "(reverted outside rcs-tui); it is recorded as undone, no file was written")


def test_a_redo_plan_refuses_a_file_back_at_its_before_image(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".rcs/state/a.json").write_bytes(b"1")
    first = _apply(root, ".rcs/state/a.json", b"2", "first")
    entry = read_journal(root)[0]
    assert [c.why for c in plan_undo(root, entry, exact=True).changes] == ["restore before-image"]
    (root / ".rcs/state/a.json").write_bytes(b"1")
    assert plan_undo(root, entry).changes == ()
    with pytest.raises(TxnError) as caught:
        plan_undo(root, entry, exact=True)
    assert str(caught.value).startswith(f"cannot undo {first['id']}: .rcs/state/a.json changed since (first)")


@pytest.mark.parametrize(("path", "why"), [
    ("/etc/passwd", "is an absolute path; only paths inside .rcs/state, .rcs/tasks, .rcs/logs are allowed"),
    (".rcs/logs/rcs-tui.lock", "is not a state or task file"),
    (".rcs/state/../../x", "contains '..'; only paths inside .rcs/state, .rcs/tasks, .rcs/logs are allowed"),
    (7, "is outside .rcs/state, .rcs/tasks and .rcs/logs"),
])
def test_an_unsafe_path_in_an_entry_is_refused_before_anything(tmp_path: Path, path: object, why: str) -> None:
    root = _project(tmp_path)
    with pytest.raises(TxnError) as caught:
        checked_path(Tree(root), {"id": "e1"}, path)
    shown = path if isinstance(path, str) else repr(path)
    assert str(caught.value) == f"journal entry e1 names an unsafe path {shown!r} ({why}); refused, nothing was changed"


def test_a_linked_state_file_in_an_entry_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path)
    os.symlink("/etc/hostname", root / ".rcs/state/a.json")
    with pytest.raises(TxnError) as caught:
        checked_path(Tree(root), {"id": "e1"}, ".rcs/state/./a.json")
    assert str(caught.value) == ("journal entry e1 names an unsafe path '.rcs/state/./a.json' (is a symlink or not a "
                                 "regular file); refused, nothing was changed")
    assert checked_path(Tree(root), {"id": "e1"}, ".rcs/state/./b.json") == ".rcs/state/b.json"
    long = ".rcs/state/" + "x" * 300
    with pytest.raises(TxnError) as caught:
        checked_path(Tree(root), {"id": "e1"}, long)
    assert str(caught.value) == f"journal entry e1: cannot inspect {long!r} (File name too long); nothing was changed"


def test_a_damaged_before_image_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".rcs/state/a.json").write_bytes(b"2")
    entry = {"id": "e1", "action": "x", "files": [{"path": ".rcs/state/a.json", "before_b64": "!!not base64",
                                                   "after_sha": digest(b"2")}]}
    with pytest.raises(TxnError) as caught:
        plan_undo(root, entry)
    assert str(caught.value) == "journal entry e1 has a damaged before-image for '.rcs/state/a.json'"
    entry["files"][0]["before_b64"] = base64.b64encode(b"1").decode()
    plan = plan_undo(root, entry)
    assert plan.action == "undo x" and plan.changes[0].content == b"1" and plan.changes[0].expect == digest(b"2")


def test_a_state_file_that_cannot_be_read_stops_the_undo(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".rcs/state/a.json").write_bytes(b" " * (8 * 1024 * 1024 + 1))
    entry = {"id": "e1", "files": [{"path": ".rcs/state/a.json", "before_b64": None, "after_sha": None}]}
    with pytest.raises(TxnError) as caught:
        plan_undo(root, entry)
    assert str(caught.value) == ("cannot undo e1: .rcs/state/a.json: too large (8388609 bytes > 8388608); nothing "
                                 "was changed")


def _unappend_plan(root: Path, content: bytes, line: str, size_before: int, created: bool = False) -> Plan:
    rel = ".rcs/tasks/t1/transcript.jsonl"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(content)
    entry = {"id": "e1", "action": "task move", "files": [],
             "appends": [{"path": rel, "line": line, "size_before": size_before, "created": created}]}
    return plan_undo(root, entry)


@pytest.mark.parametrize(("content", "line", "size", "after"), [
    (b"a\nours\nb\n", "ours", 2, b"a\nb\n"),                 # later lines after ours: only ours goes
    (b"a\nours\n", "ours\n", 2, b"a\n"),                     # ours is the last line
    (b"a\nxours\nours\n", "ours", 2, b"a\nxours\n"),         # a line merely ending like ours is kept
    (b"ours\nours\n", "ours", 5, b"ours\n"),                 # ours is the one after size_before
    (b"ours\nours\n", "ours", 0, b"ours\n"),
    (b"a\nours\n", "ours", 1, b"a"),                         # appended after a line without a newline
    (b"a\nb\nours\n", "ours", 1, b"a\nb\n"),
])
def test_undo_of_an_append_removes_exactly_that_line(tmp_path: Path, content: bytes, line: str, size: int,
                                                     after: bytes) -> None:
    plan = _unappend_plan(_project(tmp_path), content, line, size)
    [change] = plan.changes
    assert (change.action, change.content, change.expect, change.why) == (
        "write", after, digest(content), "remove the line the action appended")
    assert plan.summary["restores"] == [".rcs/tasks/t1/transcript.jsonl"]


def test_undo_of_an_append_that_is_gone_changes_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert _unappend_plan(root, b"a\nb\n", "ours", 0).changes == ()
    assert _unappend_plan(root, b"xours\n", "ours", 0).changes == ()


def test_undo_of_the_append_that_created_a_transcript_removes_it(tmp_path: Path) -> None:
    root = _project(tmp_path)
    [change] = _unappend_plan(root, b"ours\n", "ours", 0, created=True).changes
    assert (change.action, change.why) == ("delete", "remove the file the action created")
    [change] = _unappend_plan(root, b"", "ours", 0, created=True).changes
    assert (change.action, change.expect, change.why) == ("delete", digest(b""), "remove the file the action created")
    [change] = _unappend_plan(root, b"ours\n", "ours", 0, created=False).changes
    assert (change.action, change.content) == ("write", b"")
    assert _unappend_plan(root, b"", "ours", 0, created=False).changes == ()


def test_the_blocker_named_is_the_later_action_on_that_file_not_any_later_one(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".rcs/state/a.json").write_bytes(b"1")
    (root / ".rcs/state/b.json").write_bytes(b"1")
    first = _apply(root, ".rcs/state/a.json", b"2", "first")
    later = _apply(root, ".rcs/state/a.json", b"3", "later")
    _apply(root, ".rcs/state/b.json", b"2", "other")
    entries = read_journal(root)
    assert blocking_entry(entries, entries[0], ".rcs/state/a.json")["id"] == later["id"]
    with pytest.raises(TxnError) as caught:
        undo(root, first["id"])
    assert f"undo {later['id']} (later) first" in str(caught.value)


def test_a_before_image_with_stray_characters_is_damaged(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".rcs/state/a.json").write_bytes(b"2")
    entry = {"id": "e1", "files": [{"path": ".rcs/state/a.json", "before_b64": "MQ==!", "after_sha": digest(b"2")}]}
    with pytest.raises(TxnError) as caught:
        plan_undo(root, entry)
    assert str(caught.value) == "journal entry e1 has a damaged before-image for '.rcs/state/a.json'"


def test_an_entry_naming_an_unsafe_file_or_transcript_is_refused_whole(tmp_path: Path) -> None:
    root = _project(tmp_path)
    for entry in ({"id": "e1", "files": [{"path": "../x"}]},
                  {"id": "e1", "files": [], "appends": [{"path": "../x", "line": "l", "size_before": 0}]}):
        with pytest.raises(TxnError) as caught:
            plan_undo(root, entry)
        assert str(caught.value).startswith("journal entry e1 names an unsafe path '../x' (")


def test_a_transcript_that_cannot_be_read_stops_the_undo(tmp_path: Path) -> None:
    root = _project(tmp_path)
    rel = ".rcs/tasks/t1/transcript.jsonl"
    (root / rel).parent.mkdir(parents=True)
    with open(root / rel, "wb") as f:  # past what an undo can restore (a transcript may outgrow a state file)
        f.truncate(32 * 1024 * 1024 + 1)
    entry = {"id": "e1", "files": [], "appends": [{"path": rel, "line": "x", "size_before": 0}]}
    with pytest.raises(TxnError) as caught:
        plan_undo(root, entry)
    assert str(caught.value) == f"cannot undo e1: {rel}: too large (33554433 bytes > 33554432); nothing was changed"


@pytest.mark.parametrize(("content", "line", "size", "after"), [
    (b"a\nours \n", "ours \n", 2, b"a\n"),                    # trailing spaces are part of the line
    (b"a\nlineX\n", "lineX", 2, b"a\n"),
    (b"ours\nmid\nours\n", "ours", 9, b"ours\nmid\n"),        # the one appended after size_before
    (b"a\nours\nb\nours\n", "ours", 2, b"a\nb\nours\n"),      # the first one from there
    (b"a\nxours\nours\nb\nours\n", "ours", 2, b"a\nxours\nb\nours\n"),
    (b"x\n\n", "", 0, b"x\n"),                                # an empty line is found too
    (b"xyz\nours\n", "ours", 3, b"xyz"),                      # the newline our append added goes too
    (b"a\n\nours\n", "ours", 2, b"a\n\n"),                    # a blank line another writer put there stays
    (b"\nours\n", "ours", 0, b"\n"),                            # so does a newline before ours in a file once empty
])
def test_undo_of_an_append_removes_only_our_line(tmp_path: Path, content: bytes, line: str, size: int,
                                                  after: bytes) -> None:
    [change] = _unappend_plan(_project(tmp_path), content, line, size).changes
    assert change.content == after


def test_undo_goes_on_past_a_file_already_back(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".rcs/state/a.txt").write_bytes(b"a1")
    (root / ".rcs/state/b.txt").write_bytes(b"b1")
    apply(root, Plan("two", (FileChange(root / ".rcs/state/a.txt", "write", b"a2", digest(b"a1")),
                             FileChange(root / ".rcs/state/b.txt", "write", b"b2", digest(b"b1")))))
    (root / ".rcs/state/a.txt").write_bytes(b"a1")
    plan = plan_undo(root, read_journal(root)[0])
    assert [(c.path.name, c.content) for c in plan.changes] == [("b.txt", b"b1")]


def test_undo_applies_only_the_plan_confirmed_and_records_who(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / ".rcs/state/a.json").write_bytes(b"1")
    _apply(root, ".rcs/state/a.json", b"2", "first")
    with pytest.raises(TxnError) as caught:
        undo(root, expect_plan="sha256:another")
    assert caught.value.error_kind == kinds.PLAN_CHANGED and (root / ".rcs/state/a.json").read_bytes() == b"2"
    shown = undo(root, dry_run=True)
    out = undo(root, expect_plan=shown["plan_fingerprint"], actor="carol")
    assert (root / ".rcs/state/a.json").read_bytes() == b"1"
    assert read_journal(root)[-1]["id"] == out["journal_id"] and read_journal(root)[-1]["actor"] == "carol"


@pytest.mark.parametrize("block", [7, 33, 1 << 20])
def test_a_line_of_exactly_the_longest_length_is_read_one_byte_more_is_not(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          block: int) -> None:
    monkeypatch.setattr(journal, "BLOCK", block)
    monkeypatch.setattr(journal, "MAX_LINE", 100)

    def sized(eid: str, n: int) -> str:
        text = json.dumps(_entry(eid, action=""))
        return json.dumps(_entry(eid, action="x" * (n - len(text))))

    _write(tmp_path, [sized("first", 101), sized("a", 100), sized("b", 101), sized("c", 100), sized("d", 101)])
    entries, warnings = load(tmp_path)
    assert [e["id"] for e in entries] == ["a", "c"]
    assert warnings == [f".rcs/logs/rcs-tui-journal.jsonl line {n}: longer than 100 bytes; skipped" for n in (1, 3, 5)]
    _write(tmp_path, [sized("first", 100), sized("a", 101)])
    assert [e["id"] for e in load(tmp_path)[0]] == ["first"]


@pytest.mark.parametrize("block", [1, 3, 8, 1 << 20])
def test_skipped_lines_are_numbered_right_across_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        block: int) -> None:
    monkeypatch.setattr(journal, "BLOCK", block)
    _write(tmp_path, ["", "{t1", "", _entry("a"), "[2]", "", "", "{t3", _entry("b"), "{t4"])
    assert load(tmp_path)[1] == [f".rcs/logs/rcs-tui-journal.jsonl line {n}: {why}; skipped" for n, why in (
        (2, "not JSON (torn or foreign line)"), (5, "not a JSON object"), (8, "not JSON (torn or foreign line)"),
        (10, "not JSON (torn or foreign line)"))]


def test_read_journal_keeps_the_newest_entries(tmp_path: Path) -> None:
    _write(tmp_path, [_entry(f"e{n}") for n in range(5)])
    assert [e["id"] for e in read_journal(tmp_path, 2)] == ["e3", "e4"]


def test_a_missing_id_after_one_rotation_says_older_entries_are_dropped(tmp_path: Path) -> None:
    _write(tmp_path, [_entry("old")], ".rcs/logs/rcs-tui-journal.1.jsonl")
    _write(tmp_path, [_entry("new")])
    with pytest.raises(TxnError) as caught:
        find_entry(tmp_path, "gone")
    assert str(caught.value).endswith("; older entries are dropped when the journal rotates (the newest 4 files are "
                                      "kept)")


def test_the_newest_line_of_exactly_the_longest_length_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "BLOCK", 16)
    monkeypatch.setattr(journal, "MAX_LINE", 100)
    text = json.dumps(_entry("z", action=""))
    _write(tmp_path, [json.dumps(_entry("z", action="x" * (100 - len(text))))])
    assert [e["id"] for e in load(tmp_path)[0]] == ["z"]


def test_an_overlong_line_past_the_read_limit_is_named_by_its_byte_offset(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "BLOCK", 16)
    monkeypatch.setattr(journal, "MAX_LINE", 100)
    monkeypatch.setattr(journal, "READ_LIMIT", 400)
    lines = [json.dumps(_entry(f"e{n}")) for n in range(4)]
    _write(tmp_path, [*lines, "y" * 150, lines[0]])
    offset = sum(len(x) + 1 for x in lines)
    assert load(tmp_path)[1][1:] == [
        f".rcs/logs/rcs-tui-journal.jsonl at byte {offset}: longer than 100 bytes; skipped"]
