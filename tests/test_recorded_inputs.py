"""What an answer was built from: the file layer records every path read, listed or only checked for
existence (with its ancestors up to the top, whose entries decide what exists) and every process checked."""

from __future__ import annotations

import os

from rcs_tui.files import inputs
from rcs_tui.files.inputs import Recorder, process_print, recording, signature


def test_a_signature_says_which_file_and_which_bytes(tmp_path):
    f = tmp_path / "a.json"
    assert signature(str(f)) is None
    f.write_text("{}")
    st = os.stat(f)
    assert signature(str(f)) == [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    assert signature(str(f), ctime=False) == [st.st_ino, st.st_size, st.st_mtime_ns]
    assert signature("\0bad") is None


def test_every_look_is_recorded_with_its_ancestors_only_under_the_prefixes(tmp_path):
    top = tmp_path / ".rcs"
    (top / "state" / "sessions" / "s1").mkdir(parents=True)
    (top / "state" / "x.json").write_text("{}")
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    rec = Recorder((str(top),), str(top))
    with recording(rec):
        assert inputs.exists(top / "state" / "sessions" / "s1" / "forge-state.json") is False
        assert inputs.is_dir(top / "state" / "sessions") is True
        assert inputs.is_file(top / "state" / "x.json") is True
        assert inputs.is_symlink(top / "state" / "x.json") is False
        assert inputs.mtime(top / "state" / "x.json") == os.stat(top / "state" / "x.json").st_mtime
        assert inputs.mtime(top / "state" / "missing.json") is None
        assert inputs.stat(top / "state").st_ino == os.stat(top / "state").st_ino
        assert sorted(inputs.listdir(top / "state")) == ["sessions", "x.json"]
        with inputs.scandir(top / "state" / "sessions") as it:
            assert [e.name for e in it] == ["s1"]
        assert inputs.exists(outside)
    recorded = set(rec.inputs)
    assert {str(top / "state" / "sessions" / "s1" / "forge-state.json"), str(top / "state" / "sessions" / "s1"),
            str(top / "state" / "sessions"), str(top / "state"), str(top), str(top / "state" / "x.json"),
            str(top / "state" / "missing.json")} <= recorded
    assert rec.inputs[str(top / "state" / "sessions" / "s1" / "forge-state.json")] is None  # absent, noted so
    assert rec.inputs[str(top / "state")] == signature(str(top / "state"))
    assert str(outside) not in recorded and str(tmp_path) not in recorded  # nothing above the top
    inputs.exists(top / "state" / "later.json")  # no recorder active: nothing noted
    assert str(top / "state" / "later.json") not in rec.inputs


def test_an_inner_recorder_takes_the_looks_and_the_outer_one_resumes(tmp_path):
    top = str(tmp_path)
    outer, inner = Recorder((top,), top), Recorder((top,), top)
    with recording(outer):
        with recording(inner):
            inputs.note(tmp_path / "a")
        inputs.note(tmp_path / "b")
    assert str(tmp_path / "a") in inner.inputs and str(tmp_path / "a") not in outer.inputs
    assert str(tmp_path / "b") in outer.inputs and str(tmp_path / "b") not in inner.inputs


def test_a_prefix_is_a_directory_not_a_string_start(tmp_path):
    rec = Recorder((str(tmp_path / "p"),), str(tmp_path / "p"))
    with recording(rec):
        inputs.note(tmp_path / "p2" / "x")
        inputs.note(tmp_path / "p" / "x")
    assert str(tmp_path / "p2" / "x") not in rec.inputs and str(tmp_path / "p" / "x") in rec.inputs


def test_processes_are_recorded_with_their_start(tmp_path):
    rec = Recorder((str(tmp_path),), str(tmp_path))
    with recording(rec):
        assert inputs.alive(os.getpid()) is True
        inputs.alive(os.getpid())
    assert rec.pids == {os.getpid(): process_print(os.getpid())}
    assert process_print(os.getpid())[1] is True and process_print(os.getpid())[2] is not None
    assert process_print(2**40) == [2**40, False, None]


def test_each_kind_of_look_records_the_path_it_looked_at(tmp_path):
    top = tmp_path / ".rcs"
    names = ("d-isdir", "d-symlink", "d-file", "d-stat", "d-listdir", "d-scandir")
    for name in names:
        (top / name).mkdir(parents=True)
    rec = Recorder((str(top),), str(top))
    with recording(rec):
        inputs.is_dir(top / "d-isdir" / "x")
        inputs.is_symlink(top / "d-symlink" / "x")
        inputs.is_file(top / "d-file" / "x")
        inputs.stat(top / "d-stat")
        inputs.listdir(top / "d-listdir")
        inputs.scandir(top / "d-scandir").close()
    for looked in ("d-isdir/x", "d-symlink/x", "d-file/x", "d-stat", "d-listdir", "d-scandir"):
        assert str(top / looked) in rec.inputs, looked


def test_a_second_tree_of_the_project_is_recorded_up_to_its_own_top(tmp_path):
    """`.rp1` beside `.rcs`: its paths are recorded up to itself, never the project directory above both."""
    rcs, rp1 = tmp_path / ".rcs", tmp_path / ".rp1"
    rcs.mkdir()
    rp1.mkdir()
    rec = Recorder((str(rcs), str(rp1)), str(rcs))
    with recording(rec):
        inputs.note(rp1 / "x")
    assert set(rec.inputs) == {str(rp1 / "x"), str(rp1)}


def _tree(tmp_path, sessions: int):
    top = tmp_path / ".rcs"
    for i in range(sessions):
        for m in ("forge", "team"):
            (top / "state" / "sessions" / f"s{i}").mkdir(parents=True, exist_ok=True)
            (top / "state" / "sessions" / f"s{i}" / f"{m}-state.json").write_text('{"active": true}')
    rec = Recorder((str(top),), str(top))
    with recording(rec):
        for i in range(sessions):
            for m in ("forge", "team"):
                inputs.note(top / "state" / "sessions" / f"s{i}" / f"{m}-state.json")
            inputs.exists(top / "state" / "sessions" / f"s{i}" / "ultrawork-state.json")
    return top, rec


def test_the_compact_record_sees_what_the_full_one_sees(tmp_path):
    from rcs_tui.files.inputs import compact, unchanged

    top, rec = _tree(tmp_path, 3)
    record = compact(rec.inputs, str(tmp_path))
    assert unchanged(record)
    target = top / "state" / "sessions" / "s1" / "team-state.json"
    before = target.stat()
    with open(target, "r+b") as fh:  # in place, same size, mtime put back: only the ctime moves
        fh.write(b'{"active": false')
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert not unchanged(record)
    record = compact(rec.inputs | {str(target): signature(str(target))}, str(tmp_path))
    assert unchanged(record)
    (top / "state" / "sessions" / "s2" / "ultrawork-state.json").write_text("{}")  # an absent input appears
    assert not unchanged(record)
    os.unlink(top / "state" / "sessions" / "s2" / "ultrawork-state.json")
    os.unlink(top / "state" / "sessions" / "s0" / "forge-state.json")  # a present input goes
    assert not unchanged(record)


def test_the_compact_record_grows_with_directories_not_files(tmp_path):
    import json

    from rcs_tui.files.inputs import compact

    _, rec = _tree(tmp_path, 40)
    record = compact(rec.inputs, str(tmp_path))
    assert ["forge-state.json", "team-state.json"] in record["names"]  # each session's names, said once
    assert len(record["names"]) == 5  # those, the absent ones, the sessions, "sessions", "state"
    assert len(json.dumps(record)) * 4 < len(json.dumps(sorted(rec.inputs.items())))


def test_a_cache_file_too_large_to_be_read_is_never_written(tmp_path, monkeypatch):
    from rcs_tui.files import cache

    path = str(tmp_path / "cache" / "c.json")
    monkeypatch.setattr(cache, "MAX_BYTES", 100)
    assert cache.write_own(path, b"x" * 100) and cache.read_own(path) == b"x" * 100
    assert not cache.write_own(path, b"y" * 101)
    assert cache.read_own(path) == b"x" * 100  # the older file is untouched
    assert not os.path.exists(path + f".{os.getpid()}.tmp")
