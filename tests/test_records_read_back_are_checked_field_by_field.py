"""What rcs-tui reads back from records anyone may edit is checked field by field before any reader uses it:
history lines and the recorder's kept summary (each field for what its readers do with it), a journal
entry's summary, a state file's size before it is written, rp1 rows from no derivation yet (any id goes),
and the processes a read asked about (what a live view asks about again later). In process, so that the
mutation runs judge these rules by it."""

from __future__ import annotations

import subprocess
import threading

import pytest

from rcs_tui.core.changes import MAX_TS, empty, entry_problem, summary_problem
from rcs_tui.files.inputs import alive, noting_processes
from rcs_tui.project.processes import Processes
from rcs_tui.rp1.projection import EMPTY, Event, advance, finish
from rcs_tui.state.journal_format import entry_problem as journal_entry_problem
from rcs_tui.state.txn import TxnError, strict_json

GOOD = {"v": 1, "seq": 3, "ts": 1_764_000_000.5, "kind": "outcome", "subject": "root/forge", "from": None,
        "to": "askuserQuestion", "state": {"phase": "exec", "iteration": 2, "active": True, "outcome": None},
        "id": "h-3", "by": "operator", "actor": "me", "journal_id": "E1", "after_s": 12.5}


def test_well_formed_history_lines_pass():
    assert entry_problem(GOOD) is None
    assert entry_problem({"v": 1, "kind": "baseline", "ts": 0, "members": {"root/forge": {"phase": "x"}},
                          "tasks": 1}) is None
    assert entry_problem({"v": 1, "kind": "x", "ts": MAX_TS}) is None
    assert entry_problem({"v": 1, "kind": "x", "ts": 5, "seq": 0, "state": None, "before": None}) is None
    writer = {"session": "rcs-other", "pid": 42}  # who wrote a member back: a map of plain values
    assert entry_problem({**GOOD, "kind": "came_back", "writer": writer, "state": {"phase": "x", "writer": writer},
                          "cleared_at": 1.5, "clear_id": "h4"}) is None


@pytest.mark.parametrize(("change", "why"), [
    ({"v": 2}, "not a history entry of this version"),
    ({"kind": 3}, "not a history entry of this version"),
    ({"ts": MAX_TS + 1}, '"ts" is not a time'),
    ({"ts": -0.5}, '"ts" is not a time'),
    ({"ts": float("nan")}, '"ts" is not a time'),
    ({"ts": float("inf")}, '"ts" is not a time'),
    ({"ts": True}, '"ts" is not a time'),
    ({"ts": "1764000000"}, '"ts" is not a time'),
    ({"seq": True}, '"seq" is not a whole number'),
    ({"seq": 1.0}, '"seq" is not a whole number'),
    ({"subject": ["root/forge"]}, '"subject" is not text'),
    ({"id": 4}, '"id" is not text'),
    ({"item": {}}, '"item" is not text'),
    ({"by": 1}, '"by" is not text'),
    ({"actor": 1}, '"actor" is not text'),
    ({"journal_id": 1}, '"journal_id" is not text'),
    ({"writer": "rcs-other"}, '"writer" is not an object of plain values'),
    ({"writer": {"pid": []}}, '"writer" is not an object of plain values'),
    ({"cleared_by": 1}, '"cleared_by" is not text'),
    ({"to": ["x"]}, '"to" is not a plain value'),
    ({"from": {"a": 1}}, '"from" is not a plain value'),
    ({"to": float("nan")}, '"to" is not a plain value'),
    ({"after_s": []}, '"after_s" is not a plain value'),
    ({"at": {}}, '"at" is not a plain value'),
    ({"cleared_at": []}, '"cleared_at" is not a plain value'),
    ({"removed": []}, '"removed" is not a plain value'),
    ({"added": {}}, '"added" is not a plain value'),
    ({"state": []}, '"state" is not an object of plain values'),
    ({"state": {"outcome": []}}, '"state" is not an object of plain values'),
    ({"state": {"phase": float("inf")}}, '"state" is not an object of plain values'),
    ({"before": "x"}, '"before" is not an object of plain values'),
    ({"before": {"a": {"b": []}}}, '"before" is not an object of plain values'),
    ({"state": {"writer": {"session": {"deeper": 1}}}}, '"state" is not an object of plain values'),
    ({"members": []}, '"members" is not a map of objects of plain values'),
    ({"members": {"root/forge": "live"}}, '"members" is not a map of objects of plain values'),
    ({"members": {"root/forge": {"outcome": ["x"]}}}, '"members" is not a map of objects of plain values'),
])
def test_each_field_a_reader_uses_is_checked(change, why):
    assert entry_problem({**GOOD, **change}) is not None
    assert entry_problem({**GOOD, **change}).startswith(why)


def test_a_kept_summary_is_checked_section_by_section():
    assert summary_problem(empty()) is None
    ok = {"at": 5.0, "members": {"root/forge": {"phase": "x", "iteration": 1}}, "workers": {"t/w1": "working"},
          "tasks": {"1": "done"}, "runs": {"r": "running"}, "cleared": {"root/team": {"at": 1.0, "by": None}}}
    assert summary_problem(ok) is None
    assert summary_problem({}) is None  # missing sections are empty ones
    for bad, why in [([], "the summary is not an object"),
                     ({**ok, "at": -1}, "the summary's \"at\" is not a time"),
                     ({**ok, "at": "now"}, "the summary's \"at\" is not a time"),
                     ({**ok, "members": []}, "the summary's members is not a map of objects of plain values"),
                     ({**ok, "members": {"k": {"a": []}}}, "the summary's members is not a map"),
                     ({**ok, "members": {"k": "x"}}, "the summary's members is not a map"),
                     ({**ok, "cleared": {"k": 1}}, "the summary's cleared is not a map"),
                     ({**ok, "workers": {"k": []}}, "the summary's workers is not a map of plain values"),
                     ({**ok, "tasks": []}, "the summary's tasks is not a map of plain values"),
                     ({**ok, "runs": {"r": {"s": 1}}}, "the summary's runs is not a map of plain values")]:
        assert (summary_problem(bad) or "").startswith(why), (bad, summary_problem(bad))


def test_a_journal_entry_names_its_mode_and_scope_with_text():
    base = {"id": "E1", "action": "state clear forge", "files": []}
    assert journal_entry_problem(base) is None
    assert journal_entry_problem({**base, "summary": {"mode": "forge", "scope": "root", "n": [1]}}) is None
    assert journal_entry_problem({**base, "summary": {"mode": None}}) is None
    assert journal_entry_problem({**base, "summary": []}) == '"summary" is not an object'
    assert journal_entry_problem({**base, "summary": {"mode": ["forge"]}}) == "summary.mode is not a string"
    assert journal_entry_problem({**base, "summary": {"scope": {}}}) == "summary.scope is not a string"


def test_a_state_file_larger_than_a_reader_takes_is_not_written():
    from rcs_tui.files.io import MAX_STATE_BYTES

    strict_json("s/forge-state.json", b'"' + b"x" * (MAX_STATE_BYTES - 2) + b'"')  # exactly the most: written
    with pytest.raises(TxnError) as refused:
        strict_json("s/forge-state.json", b'"' + b"x" * (MAX_STATE_BYTES - 1) + b'"')
    assert str(refused.value) == (
        f"refusing to write s/forge-state.json: {MAX_STATE_BYTES + 1:,} bytes, more than the {MAX_STATE_BYTES:,} a"
        " state file may hold (it could not be read, cleared or undone afterwards); nothing was changed")
    strict_json("s/notes.txt", b"x" * (MAX_STATE_BYTES + 1))  # only JSON state files are held to it


def row(eid: int, step: str, status: str) -> Event:
    return Event(eid, "r", "status_change", step, None, {"status": status}, "2026-01-01T00:00:00.000Z", None)


def test_rows_with_ids_of_zero_and_below_fold_from_nothing_but_not_behind_a_fold():
    fold = advance(EMPTY, [row(0, "build", "failed"), row(-7, "plan", "completed")])
    assert fold.last_id == 0 and finish(fold).status == "failed"
    later = advance(fold, [row(5, "build", "completed")])
    assert later.last_id == 5 and finish(later).status == "completed"
    with pytest.raises(ValueError, match="row 0 is not newer than 5"):
        advance(later, [row(0, "x", "running")])
    with pytest.raises(ValueError, match="row -3 is not newer than 0"):
        advance(fold, [row(-3, "x", "running")])
    assert advance(EMPTY, []) is EMPTY


def test_the_processes_a_read_asks_about_are_noted_per_block_and_thread():
    proc = subprocess.Popen(["sleep", "600"])
    try:
        with noting_processes() as outer:
            alive(proc.pid)
            with noting_processes() as inner:
                alive(1)
            seen_elsewhere: list[dict] = []

            def other() -> None:
                with noting_processes() as theirs:
                    alive(proc.pid + 100000)
                seen_elsewhere.append(theirs)

            t = threading.Thread(target=other)
            t.start()
            t.join()
        assert set(outer) == {proc.pid, 1} and set(inner) == {1}
        assert outer[proc.pid][:2] == [proc.pid, True]
        assert set(seen_elsewhere[0]) == {proc.pid + 100000}
        alive(proc.pid)  # outside every block: noted nowhere
        assert set(outer) == {proc.pid, 1}
        answers: list[bool] = []
        fresh = threading.Thread(target=lambda: answers.append(alive(proc.pid)))  # a thread that never noted
        fresh.start()
        fresh.join()
        assert answers == [True]

        parts = Processes()
        with parts.noting("state"):
            alive(proc.pid)
        with parts.noting("team"):
            alive(1)
        assert parts.moved() == set()
        proc.kill()
        proc.wait()
        assert parts.moved() == {"state"}
        with parts.noting("state"):  # read again: what it shows now is what it noted
            alive(proc.pid)
        assert parts.moved() == set()
        proc2 = subprocess.Popen(["sleep", "600"])
        with parts.noting("team"):
            alive(proc2.pid)
        with parts.noting("team"):  # a part read again that asks about nothing any more forgets its processes
            pass
        proc2.kill()
        proc2.wait()
        assert parts.moved() == set()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
