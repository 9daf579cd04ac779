"""The small records behind "never the past as the present", pinned in process: where a read's links led
(kept by the status line's cache and by a live view's 2 s check), which journal entries a command applied
(named by an error that comes after them), whose a rewritten file is, and which acknowledgement covers which
verdict."""

from __future__ import annotations

import os

import pytest

from rcs_tui.core.acknowledged import Acknowledged, recorded_acks
from rcs_tui.core.attention import Verdict
from rcs_tui.files import fsafe, inputs
from rcs_tui.files.inputs import Recorder, noting_processes, now_of, recording, resolved_unchanged
from rcs_tui.state import txn
from rcs_tui.state.txn import FileChange, Plan


def test_a_build_and_a_live_view_remember_where_each_link_led(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "a")
    recorder = Recorder((str(tmp_path),), str(tmp_path))
    with recording(recorder), noting_processes() as seen, noting_processes() as inner:
        assert inputs.realpath(link) == str(tmp_path / "a")
        inputs.note_resolved(tmp_path / "other", "/somewhere")
    assert recorder.resolved == {str(link): str(tmp_path / "a"), str(tmp_path / "other"): "/somewhere"}
    assert seen == inner == {str(link): str(tmp_path / "a"), str(tmp_path / "other"): "/somewhere"}
    assert inputs.realpath(link) == str(tmp_path / "a")  # outside any block: nothing more is noted
    assert len(recorder.resolved) == 2
    assert resolved_unchanged([[str(link), str(tmp_path / "a")]])
    link.unlink()
    link.symlink_to(tmp_path / "b")
    assert now_of(str(link)) == str(tmp_path / "b")
    assert not resolved_unchanged([[str(link), str(tmp_path / "a")]])
    assert now_of(os.getpid()) == inputs.process_print(os.getpid())


def test_an_error_names_only_the_changes_its_own_command_made(tmp_path):
    (tmp_path / ".rcs/state").mkdir(parents=True)
    before = txn.commits()
    assert txn.committed(before) == []
    first = txn.apply(tmp_path, Plan("one", (FileChange(tmp_path / ".rcs/state/a-state.json", "write", b"{}\n"),)))
    assert txn.commits() == before + 1
    second = txn.apply(tmp_path, Plan("two", (FileChange(tmp_path / ".rcs/state/b-state.json", "write", b"{}\n"),)))
    assert txn.committed(before) == [first["id"], second["id"]]
    assert txn.committed(before + 1) == [second["id"]]
    assert txn.committed(txn.commits()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_rewritten_file_keeps_its_own_owner_not_its_directorys(tmp_path):
    """The file's owner, which may differ from its directory's (the runtime running as another user than
    the one who made the project); a new file takes the directory's."""
    state = tmp_path / ".rcs/state"
    state.mkdir(parents=True)
    for p in (tmp_path, tmp_path / ".rcs", state):
        os.chown(p, 1000, 1000)
    old = state / "a-state.json"
    old.write_bytes(b'{"active": true}\n')
    os.chown(old, 1001, 1002)
    txn.apply(tmp_path, Plan("t", (FileChange(old, "write", b'{"active": false}\n',
                                              expect=txn.digest(b'{"active": true}\n')),
                                   FileChange(state / "new-state.json", "write", b"{}\n"))))
    assert (old.stat().st_uid, old.stat().st_gid) == (1001, 1002)
    new = state / "new-state.json"
    assert (new.stat().st_uid, new.stat().st_gid) == (1000, 1000)
    assert fsafe.max_bytes_for(".rcs/tasks/t/transcript.jsonl") == fsafe.MAX_APPENDED_BYTES
    assert fsafe.max_bytes_for(".rcs/state/a-state.json") < fsafe.MAX_APPENDED_BYTES


def _v(kind: str, since: float | None, item: str = "crew/w1") -> Verdict:
    return Verdict(kind, item, "why", "inferred", since)


def test_which_acknowledgement_covers_which_verdict():
    entries = [{"kind": "ack", "item": "crew/w1", "of": "silent", "ts": 100.0},
               {"kind": "ack", "item": "crew/w1", "of": "silent", "ts": 50.0},  # the newest counts
               {"kind": "ack", "item": "root/forge", "ts": 80},  # before kinds were recorded: any kind
               {"kind": "ack", "item": "root/team", "of": "", "ts": 90.0},  # an empty kind is no kind
               {"kind": "ack", "item": "x/bad-time", "ts": "100"},  # not a time: not an acknowledgement
               {"kind": "ack", "item": 7, "ts": 100.0},
               {"kind": "ack", "item": "x/of-a-list", "of": ["silent"], "ts": 100.0},
               {"kind": "came_back", "item": "x/other", "ts": 100.0}]
    recorded = recorded_acks(entries)
    assert recorded == {"silent:crew/w1": 100.0, "root/forge": 80.0, "root/team": 90.0, "x/of-a-list": 100.0}
    acked = Acknowledged(recorded=recorded)
    assert acked.covers(_v("silent", 100.0)) and not acked.covers(_v("silent", 100.5))
    assert not acked.covers(_v("dead", 10.0))
    assert not acked.covers(_v("silent", None))
    assert acked.covers(_v("waiting", 80.0, "root/forge")) and acked.covers(_v("failed", 1.0, "root/forge"))
    assert not acked.covers(_v("waiting", 81.0, "root/forge"))
    assert not acked.covers(_v("waiting", 1.0, "x/bad-time"))


def test_an_acknowledgement_made_here_holds_until_its_entry_changes():
    acked = Acknowledged()
    silent = _v("silent", 100.0)
    acked.add(silent)
    acked.add(_v("waiting", 5.0, "root/forge"))
    assert acked.covers(silent) and not acked.covers(_v("silent", 200.0))
    acked.forget_changed([silent, _v("waiting", 6.0, "root/forge")])
    assert acked.here == {("silent", "crew/w1"): silent.state}



def test_which_read_errors_leave_an_answer_unknown(tmp_path):
    """A directory the answer is built from that could not be listed, or a canonical set that could not be
    opened, leaves it unknown; a damaged canonical set, another session's trouble or a mode file do not."""
    from dataclasses import replace

    from rcs_tui.files.layout import Layout
    from rcs_tui.state.ops import unread_scopes
    from rcs_tui.state.reader import read_snapshot
    from rcs_tui.state.snapshot import FileError
    from tests.statefix import mode, pointer

    mode(tmp_path, "forge", "S1", current_phase="executing")
    pointer(tmp_path, "S1")
    snap = read_snapshot(tmp_path, None, all_sessions=False)
    assert snap.resolution.session_id == "S1" and unread_scopes(snap) == []
    lay = Layout(tmp_path)
    blocking = [FileError(lay.state, "cannot list directory: Permission denied"),
                FileError(lay.sessions, "cannot list directory: Permission denied"),
                FileError(lay.scope_dir("S1"), "cannot list directory: Input/output error"),
                FileError(lay.canonical_file(None), "unreadable: Permission denied"),
                FileError(lay.canonical_file("S1"), "cannot stat: Permission denied")]
    passing = [FileError(lay.canonical_file("S1"), "invalid JSON: Expecting value"),
               FileError(lay.scope_dir("S2"), "cannot list directory: Permission denied"),
               FileError(lay.canonical_file("S2"), "unreadable: Permission denied"),
               FileError(lay.scope_dir("S1") / "forge-state.json", "unreadable: Permission denied")]
    assert unread_scopes(replace(snap, errors=(*blocking, *passing))) == blocking


def test_a_retargeted_link_is_judged_by_where_it_leads_now(tmp_path, monkeypatch):
    """The resolved directory a read is checked against is kept briefly, but never past a change of the
    entry itself (`.rcs` a link pointed elsewhere), and never past its time (a link further up)."""
    from rcs_tui.files import io

    for d in ("one", "two", "three"):
        (tmp_path / d).mkdir()
    link = tmp_path / "rcs"
    link.symlink_to(tmp_path / "one")
    recorder = Recorder((str(tmp_path),), str(tmp_path))
    with recording(recorder):
        assert io.inside(str(tmp_path / "one" / "f"), link)
    assert recorder.resolved == {str(link): str(tmp_path / "one")}  # what the status line's cache checks again
    (tmp_path / "one-more").mkdir()
    assert not io.inside(str(tmp_path / "one-more" / "f"), link)  # a sibling sharing the name's start is outside
    link.unlink()
    link.symlink_to(tmp_path / "two")  # at once: the entry itself changed
    assert io.inside(str(tmp_path / "two" / "f"), link) and not io.inside(str(tmp_path / "one" / "f"), link)
    up = tmp_path / "up"
    up.symlink_to(tmp_path)
    via = up / "rcs"
    assert io.inside(str(tmp_path / "two" / "f"), via)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "rcs").symlink_to(tmp_path / "three")
    up.unlink()
    up.symlink_to(tmp_path / "elsewhere")  # a link further up: `via` itself is another entry now, seen too
    assert io.inside(str(tmp_path / "three" / "f"), via)


def test_a_process_that_applied_nothing_names_nothing(monkeypatch):
    monkeypatch.setattr(txn, "_committed", [])
    assert txn.commits() == 0 and txn.committed() == [] and txn.committed(0) == []
    monkeypatch.setattr(txn, "_committed", [(1, "first")])  # a process's first action is number 1
    assert txn.commits() == 1 and txn.committed() == ["first"]
    monkeypatch.setattr(txn, "_committed", [(3, "a"), (4, "b")])
    assert txn.commits() == 4 and txn.committed() == ["a", "b"] and txn.committed(3) == ["b"]


def test_a_user_who_cannot_give_a_file_away_keeps_writing(tmp_path, monkeypatch):
    """Only root may give a file to another owner: anyone else's write goes on with the file as theirs."""
    from types import SimpleNamespace

    def refused(*_args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "fchown", refused)
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        fsafe.owned_like(fd, SimpleNamespace(st_uid=os.geteuid() + 1, st_gid=os.getegid()))  # type: ignore[arg-type]
    finally:
        os.close(fd)
    (tmp_path / ".rcs/state").mkdir(parents=True)
    txn.apply(tmp_path, Plan("t", (FileChange(tmp_path / ".rcs/state/a-state.json", "write", b"{}\n"),)))
    assert (tmp_path / ".rcs/state/a-state.json").read_bytes() == b"{}\n"
